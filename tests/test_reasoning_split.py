"""The reasoning-parser slot without a stack (`adapters/reasoning_split.py`): every family with
a reasoning block, its corpus' reasoning cases, whole and streamed one character at a time."""

from __future__ import annotations

import pytest

import toolgrammar
from toolgrammar.adapters.reasoning_split import ReasoningSplit, last_reasoning_marker
from toolgrammar.runtime.registry import get_spec
from support.corpus_format import CORPUS, Case, load

FAMILIES = sorted(p.stem for p in CORPUS.glob("*.txt") if get_spec(p.stem).reasoning)


def _case(family: str) -> Case | None:
    cases = load(CORPUS / f"{family}.txt")
    return next((c for c in cases if c.expect.get("reasoning") and not c.options), None)


def _split(family: str, pieces: list[str], **options: object) -> tuple[str, str]:
    split = ReasoningSplit(family, policies={"compat": "vllm"}, **options)  # type: ignore[arg-type]
    reasoning, rest = [], []
    for piece in pieces:
        r, t = split.feed(piece)
        reasoning.append(r)
        rest.append(t)
    r, t = split.finish()
    assert split.ended
    return "".join(reasoning) + r, "".join(rest) + t


@pytest.mark.parametrize("family", FAMILIES)
def test_reasoning_out_the_rest_as_written(family: str) -> None:
    case = _case(family)
    if case is None:
        pytest.skip("no reasoning case without options")
    want = toolgrammar.parse(family, case.text, compat="vllm").reasoning or ""
    reasoning, rest = _split(family, [case.text])
    assert reasoning and want.startswith(reasoning)
    assert case.text.endswith(rest) and reasoning.strip() not in rest
    assert _split(family, list(case.text)) == (reasoning, rest)


def test_text_that_opens_no_reasoning_is_handed_on_whole_and_blank_text_waits() -> None:
    split = ReasoningSplit("hermes")
    assert split.feed("\n") == ("", "")  # blank: a reasoning block may still open
    assert not split.ended
    assert split.feed("Hi <tool_call>") == ("", "\nHi <tool_call>")
    assert split.ended and split.feed("x") == ("", "x")


def test_a_family_without_reasoning_hands_everything_on() -> None:
    family = next(f for f in toolgrammar.families() if not get_spec(f).reasoning)
    split = ReasoningSplit(family)
    assert split.ended and split.feed("<think>a</think>b") == ("", "<think>a</think>b")


def test_the_prompts_last_reasoning_marker() -> None:
    spec = get_spec("hermes")
    assert last_reasoning_marker(spec, "…<think>\nx</think>\n") == "close"
    assert last_reasoning_marker(spec, "…</think>\n<|im_start|>assistant\n<think>\n") == "open"
    assert last_reasoning_marker(spec, "no markers") is None
