"""The llama.cpp peer of bench/agreement.py: its pairing, the agreement's handling of the case
options it takes, and (when `scripts/llamacpp_env.sh` has built it) llama.cpp's own reading of
transcribed tests through our harness."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import agreement  # noqa: E402
import peer_llamacpp  # noqa: E402
from support.corpus_format import CORPUS, load  # noqa: E402

import toolgrammar  # noqa: E402


def test_every_paired_template_is_one_templates_toml_pairs_with_the_family() -> None:
    rows = tomllib.loads((ROOT / "grammars" / "templates.toml").read_text(encoding="utf-8"))
    llama_rows = {
        (row["family"], row["file"])
        for row in rows["template"]
        if row.get("source", "llama.cpp") == "llama.cpp"
    }
    for family, template in peer_llamacpp.PAIRS.items():
        assert (family, template) in llama_rows, (family, template)
        assert peer_llamacpp.templates_of(family)[0] == template


def test_a_cut_call_is_compared_by_name_when_its_arguments_are_partial_json() -> None:
    want = [["get_weather", '{"city": "Paris"}']]
    assert agreement.compare_calls([("get_weather", '{"city": "Pa')], want, cut=True) == ""
    assert agreement.compare_calls([("get_weather", '{"city": "Pa')], want) != ""
    # whole JSON is compared, cut or not
    assert agreement.compare_calls([("get_weather", '{"city": "Rome"}')], want, cut=True) != ""
    assert agreement.compare_calls([("get_time", '{"city": "Pa')], want, cut=True) != ""


def test_our_reading_for_the_agreement_takes_the_case_options() -> None:
    case = next(
        c
        for c in load(CORPUS / "deepseek_v31.txt")
        if c.name
        == "upstream llama.cpp test: thinking forced open, the model writes only the closer"
    )
    assert case.options.get("reasoning_open") is True
    ours = agreement.ours_with_compat(case, "llama.cpp")
    assert ours["reasoning"] == "REASONING"
    assert ours["tool_calls"] == [["get_time", '{"city": "Tokyo"}']]


HARNESS = os.environ.get(peer_llamacpp.HARNESS_ENV) or str(
    ROOT / ".cache" / f"llama.cpp-{peer_llamacpp.VERSION}" / "build" / "llamacpp_harness"
)


@pytest.mark.skipif(
    not os.access(HARNESS, os.X_OK), reason="run bash scripts/llamacpp_env.sh to build the peer"
)
def test_llamacpp_reads_its_transcribed_tests_as_we_do() -> None:
    """Qwen3-Coder's transcribed tests: llama.cpp's calls, and its content where no reasoning
    is read, are ours (compat="llama.cpp"), whitespace at the ends aside as its tests compare."""
    modules = peer_llamacpp.load()
    cases = [
        c
        for c in load(CORPUS / "qwen3_coder.txt")
        if c.name.startswith("upstream llama.cpp test: Qwen3-Coder:")
    ]
    assert len(cases) >= 10
    for case in cases:
        options = {k: v for k, v in case.options.items() if k in peer_llamacpp.PEER.options}
        side = peer_llamacpp.PEER.side_for(
            modules,
            "qwen3_coder",
            peer_llamacpp.PEER.request_key("qwen3_coder", case.text, case.tools),
            [case.text],
            **options,
            **({"finish": case.finish} if case.finish != "stop" else {}),
        )
        theirs = side.parse(case.text)
        assert theirs.error is None, (case.name, theirs.error)
        ours = toolgrammar.parse(
            "qwen3_coder", case.text, case.tools, case.finish, compat="llama.cpp"
        )
        assert [(n, json.loads(a)) for n, a in theirs.calls] == [
            (c.function.name, json.loads(c.function.arguments)) for c in ours.tool_calls
        ], case.name
        if not ours.reasoning:
            assert (theirs.content or "").strip() == (ours.content or "").strip(), case.name
