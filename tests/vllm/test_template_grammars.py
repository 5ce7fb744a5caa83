"""Our export of a response template against vLLM 0.33's `response_template_grammar.py`
(tests/vllm/template_grammars.py): the table in docs/response_templates.md is the one measured
here, and every rendered output vLLM's grammar refuses is refused for a reason the docs give.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import template_grammars as tg  # noqa: E402

import toolgrammar  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "response_templates.md"


@pytest.fixture(scope="module")
def rows() -> list[tg.Row]:
    return tg.rows()


def test_the_docs_table_is_the_measured_one(rows: list[tg.Row]) -> None:
    text = DOC.read_text(encoding="utf-8")
    header = "| " + " | ".join(tg.HEADER) + " |"
    assert header in text
    start = text.index(header)
    documented = text[start : text.index("\n\n", start) + 1]
    assert documented == tg.table(rows)


def test_our_export_takes_every_render(rows: list[tg.Row]) -> None:
    """Every rendered output is in our export, in both modes, for every template."""
    for row in rows:
        assert row.rendered_ours == tg.SAMPLES, row


def test_vllm_derives_only_xml_inline_and_plain_json_arguments_named_by_the_opener(
    rows: list[tg.Row],
) -> None:
    derived = {(row.name, row.mode) for row in rows if row.derived}
    assert derived == {
        ("vllm_xml", "required"),
        ("vllm_answer", "required"),
        ("vllm_answer", "auto"),
        ("beam", "required"),
        ("beam", "auto"),
        ("xml_inline", "required"),
        ("xml_inline", "auto"),
        ("json_args_strict", "required"),
    }


def _calls(name: str, text: str) -> bool:
    return bool(
        toolgrammar.parse("hf", text, tg.TOOLS, response_template=tg.COMPARED[name]).tool_calls
    )


def _as_vllm_writes(name: str, text: str) -> str:
    """The rendered output as vLLM's grammar spells it: calls back to back (no newline after
    a closer), Beam's call opener with its leading space, an answer inside the answer field's
    markers."""
    fields = tg.COMPARED[name]["fields"]
    if not _calls(name, text):
        answer = fields["content"]
        closer = answer["close"][0] if isinstance(answer["close"], list) else answer["close"]
        return answer["open"] + text + closer
    closers = fields["tool_calls"]["close"]
    for closer in [closers] if isinstance(closers, str) else closers:
        text = text.replace(closer + "\n", closer)
    if name == "beam":
        text = " " + text.replace("assistantto=", "assistant to=")
    return text


DERIVED = [(n, m) for n in tg.COMPARED for m in tg.MODES if tg.theirs(n, m) is not None]


@pytest.mark.parametrize("name, mode", DERIVED)
def test_every_render_vllm_refuses_is_refused_for_a_documented_reason(name: str, mode: str) -> None:
    """Respelled as vLLM's grammar writes it, each render it refused is taken; but an answer
    without calls where the template has no `content` field: vLLM's `auto` then admits calls
    only."""
    xg = tg.XgrammarGrammar(tg.theirs(name, mode))
    has_answer = bool(tg.COMPARED[name]["fields"].get("content", {}).get("open"))
    refused = 0
    for text in tg.rendered(name, mode, random.Random(f"21:{name}:{mode}")):
        if xg.accepts(text):
            continue
        refused += 1
        if not _calls(name, text) and not has_answer:
            assert mode == "auto"
            continue
        assert xg.accepts(_as_vllm_writes(name, text)), (text, xg.rejection(text))
    # (how many it refuses is the table's, pinned by test_the_docs_table_is_the_measured_one:
    # since render writes no whitespace the grammar does not declare, `required` has none)
    assert refused or mode == "required"
