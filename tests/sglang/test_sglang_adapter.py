"""The SGLang adapter against SGLang 0.5.23's own classes, for every family, on its corpus.

Run inside the environment `scripts/sglang_env.sh` builds (`scripts/test.sh` does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as h  # noqa: E402
from support.corpus_format import CORPUS, Case, load, params_in_env  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402

import toolgrammar  # noqa: E402
import toolgrammar.adapters.sglang as adapter  # noqa: E402
from toolgrammar.runtime.registry import get_spec  # noqa: E402

FAMILIES = sorted(path.stem for path in CORPUS.glob("*.txt"))
CASES = {family: load(CORPUS / f"{family}.txt") for family in FAMILIES}
# 1-char deltas for a bounded sample: the first cases of every family
ONE_CHAR_SAMPLE = 10


def expected(case: Case, *, paired: bool, text: str | None = None) -> h.Result:
    """What SGLang must give: the library's result with the adapter's options (the grammar's
    defaults, SGLang's policy profile). Without tools SGLang runs no tool parser: no calls, and the text stays content
    unless the companion reasoning detector takes the family's reasoning and markup out."""
    text = case.text if text is None else text
    params = case.options.get("params")
    message = toolgrammar.parse(case.family, text, case.tools, params=params, compat="sglang")
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
    if paired:
        # SGLang gives its reasoning parser no tools: the reasoning is what a parse without
        # tools splits off (it differs only where a name item needs the request's tools,
        # step3p5's `<functionNAME>`: docs/sglang.md, "Not covered")
        reasoning = toolgrammar.parse(
            case.family, text, None, params=params, compat="sglang"
        ).reasoning
        return h.Result(message.content, reasoning, calls if case.tools else [])
    if not case.tools:
        return h.Result(text or None, None, [])
    # the tool detector alone returns reasoning as content, in output order
    parser = toolgrammar.StreamParser(case.family, case.tools, params=params, compat="sglang")
    deltas = parser.feed(text) + parser.finish("stop")
    content = "".join((d.reasoning or "") + (d.content or "") for d in deltas)
    if message.reasoning is None:
        assert (content or None) == message.content
    return h.Result(content or None, None, calls)


def a_case_with_calls(family: str) -> Case:
    """The family's first plain case whose calls are all to requested tools (SGLang's profile
    drops a call to any other: docs/compat.md)."""

    def requested(case: Case) -> bool:
        names = {tool["function"]["name"] for tool in case.tools or ()}
        return all(name in names for name, _ in case.expect["tool_calls"])

    return next(
        c
        for c in CASES[family]
        if c.tools and not c.options and c.expect["tool_calls"] and requested(c)
    )


def chunkings(text: str, one_char: bool) -> dict[str, list[str]]:
    splits = {"16-char": [text[i : i + 16] for i in range(0, len(text), 16)], "whole": [text]}
    if one_char:
        splits["1-char"] = list(text)
    return splits


# ---------------------------------------------------------------- registration


def test_every_name_is_registered_in_sglangs_parser_tables() -> None:
    names = toolgrammar.families()
    assert len(names) == 96  # 67 grammars and their aliases
    # and hf, whose markup is the tokenizer's response template (tests/sglang/test_sglang_hf.py)
    assert adapter.REGISTERED == [adapter.PREFIX + n for n in (*names, "hf")]
    for name in names:
        cls = FunctionCallParser.ToolCallParserEnum[adapter.PREFIX + name]
        assert issubclass(cls, adapter.ToolgrammarDetector) and cls.family == name
        rcls = ReasoningParser.DetectorMap[(adapter.PREFIX + name).lower()]
        assert issubclass(rcls, adapter.ToolgrammarReasoningDetector) and rcls.family == name
        # SGLang builds them from the name, as its serving layer does
        parser = FunctionCallParser(
            h.sglang_tools(CASES[get_spec(name).name][0].tools), cls_name(name)
        )
        assert isinstance(parser.detector, cls)
        assert isinstance(ReasoningParser(cls_name(name)).detector, rcls)


def cls_name(name: str) -> str:
    return adapter.PREFIX + name


def test_server_arguments_accept_the_names() -> None:
    """`--tool-call-parser` and `--reasoning-parser` choices are read from the tables."""
    from sglang.srt import server_args

    assert "tg-qwen3_coder" in server_args._tool_call_parser_choices()
    assert "tg-qwen3_coder" in server_args._reasoning_parser_choices()


def test_override_takes_sglangs_own_names_but_the_ones_it_reaches_into() -> None:
    saved = dict(FunctionCallParser.ToolCallParserEnum)
    try:
        names = adapter.register(override=True)
        assert "qwen3_coder" in names and "hermes" in names and "kimi_k2" in names
        table = FunctionCallParser.ToolCallParserEnum
        assert table["qwen3_coder"] is adapter.tool_detector_class("qwen3_coder")
        assert "kimi_k3" not in names and table["kimi_k3"] is saved["kimi_k3"]
        assert "beam" not in names and table["beam"] is saved["beam"]
        # a name SGLang does not have is not invented
        assert all(n.startswith(adapter.PREFIX) or n in saved for n in names)
        # registering again changes nothing
        assert adapter.register(override=True) == names
    finally:
        FunctionCallParser.ToolCallParserEnum.clear()
        FunctionCallParser.ToolCallParserEnum.update(saved)


def test_bad_params_are_clear_errors_when_sglang_builds_the_detector() -> None:
    tools = h.sglang_tools(CASES["hy_v4"][0].tools)
    for raw, message in (
        ("{not json", "TOOLGRAMMAR_SGLANG_PARAMS is not JSON"),
        ('{"hy_v4": {"suffix": 3}}', "must map names to string params"),
        ('{"hy_v4": {"nope": "x"}}', "family 'hy_v4' has no param 'nope'"),
    ):
        os.environ[adapter.PARAMS_ENV] = raw
        try:
            with pytest.raises(Exception, match=message):
                FunctionCallParser(tools, "tg-hy_v4")
        finally:
            del os.environ[adapter.PARAMS_ENV]


def test_unknown_family_is_a_clear_error() -> None:
    with pytest.raises(toolgrammar.UnknownFamily, match="unknown family 'nope'"):
        adapter.tool_detector_class("nope")


def test_launcher_registers_then_hands_its_arguments_to_sglangs_launcher() -> None:
    seen: dict[str, Any] = {}

    def run(module: str, **kwargs: Any) -> None:
        seen.update(module=module, argv=list(sys.argv), kwargs=kwargs)
        seen["registered"] = "tg-qwen3_coder" in FunctionCallParser.ToolCallParserEnum

    saved = list(sys.argv)
    os.environ["SGLANG_PLUGINS"] = "other"
    try:
        args = ["--model-path", "m", "--tool-call-parser", "tg-qwen3_coder", "--port", "1"]
        adapter.main(args, run=run)
        # SGLang's other processes load the plugin even under an allow-list
        assert os.environ["SGLANG_PLUGINS"] == "other,toolgrammar"
    finally:
        sys.argv = saved
        del os.environ["SGLANG_PLUGINS"]
    assert seen == {
        "module": "sglang.launch_server",
        "argv": ["sglang.launch_server", *args],
        "kwargs": {"run_name": "__main__", "alter_sys": True},
        "registered": True,
    }


def test_launcher_module_runs_sglangs_argument_parser_with_the_names() -> None:
    """`python -m toolgrammar.adapters.sglang ...` under a plugin allow-list that leaves
    toolgrammar out: SGLang's own argument parser (no server starts) knows the tg- names and
    reads the arguments it was handed; SGLang's own launcher alone does not know them."""
    env = {**os.environ, "SGLANG_PLUGINS": "none"}
    launcher = [sys.executable, "-m", "toolgrammar.adapters.sglang"]
    args = ["--model-path", "/nonexistent", "--reasoning-parser", "tg-qwen3_coder"]
    bad = subprocess.run(
        [*launcher, *args, "--tool-call-parser", "tg-nope"], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 2, bad.stderr[-2000:]
    assert "invalid choice: 'tg-nope'" in bad.stderr and "'tg-qwen3_coder'" in bad.stderr
    plain = [sys.executable, "-m", "sglang.launch_server", *args, "--tool-call-parser", "x"]
    alone = subprocess.run(plain, capture_output=True, text=True, env=env)
    # SGLang's own launcher, plugins off: the names are unknown
    assert alone.returncode == 2 and "invalid choice: 'tg-qwen3_coder'" in alone.stderr


def test_sglangs_plugin_loader_registers_the_names_in_a_fresh_process() -> None:
    """What SGLang's scheduler and other processes do first: load the general plugins."""
    check = (
        "from sglang.srt.plugins import load_plugins\n"
        "load_plugins()\n"
        "from sglang.srt.function_call.function_call_parser import FunctionCallParser as F\n"
        "from sglang.srt.parser.reasoning_parser import ReasoningParser as R\n"
        "assert 'tg-qwen3_coder' in F.ToolCallParserEnum\n"
        "assert 'tg-qwen3_coder' in R.DetectorMap\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_importing_toolgrammar_imports_no_sglang() -> None:
    check = (
        "import sys, toolgrammar, toolgrammar.adapters\n"
        "toolgrammar.parse('hermes', 'hi', [])\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'sglang'], 'sglang imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


# ---------------------------------------------------------------- the corpus, both paths


@pytest.mark.parametrize("paired", [False, True], ids=["tool-parser", "paired"])
@pytest.mark.parametrize("family", FAMILIES)
def test_corpus_streams_through_sglangs_parsers(family: str, paired: bool) -> None:
    """Every case at 16-char and whole deltas, the first cases also at 1-char deltas."""
    failures = []
    for n, case in enumerate(CASES[family]):
        want = expected(case, paired=paired)
        for split, deltas in chunkings(case.text, n < ONE_CHAR_SAMPLE).items():
            with params_in_env(case, adapter.PARAMS_ENV):
                got = h.stream(h.registered_name(family), deltas, case.tools, paired=paired)
            if not h.same(got, want):
                failures.append((case.name, split, got, want))
    assert failures == []


@pytest.mark.parametrize("paired", [False, True], ids=["tool-parser", "paired"])
@pytest.mark.parametrize("family", FAMILIES)
def test_corpus_non_streaming_through_sglangs_parsers(family: str, paired: bool) -> None:
    failures = []
    for case in CASES[family]:
        want = expected(case, paired=paired)
        with params_in_env(case, adapter.PARAMS_ENV):
            got = h.whole(h.registered_name(family), case.text, case.tools, paired=paired)
        if not h.same(got, want):
            failures.append((case.name, got, want))
    assert failures == []


@pytest.mark.parametrize("name", toolgrammar.families())
def test_every_registered_name_streams_a_call(name: str) -> None:
    """Aliases included: SGLang builds the detector for the name and a call streams."""
    family = get_spec(name).name
    case = a_case_with_calls(family)
    want = expected(case, paired=False)
    got = h.stream(
        h.registered_name(name), chunkings(case.text, False)["16-char"], case.tools, paired=False
    )
    assert h.same(got, want) and got.calls


# ---------------------------------------------------------------- end of stream


@pytest.mark.parametrize("family", FAMILIES)
def test_a_call_cut_anywhere_ends_with_arguments_that_load(family: str) -> None:
    """A call cut after every character (max_tokens): after SGLang's end-of-stream steps the
    client's arguments are JSON, equal to the library's, and SGLang sent nothing of its own."""
    case = a_case_with_calls(family)

    def want(text: str) -> Any:
        return expected(case, paired=False, text=text)

    assert h.cut_failures(h.registered_name(family), case.text, case.tools, want) == []


# ---------------------------------------------------------------- pairing


@pytest.mark.parametrize("family", FAMILIES)
def test_reasoning_held_until_it_ends_gives_the_same_message(family: str) -> None:
    """A request with `stream_reasoning: false`: the reasoning comes at once, nothing changes."""
    failures = []
    for case in CASES[family]:
        if case.expect["reasoning"] is None or case.options:
            continue
        want = expected(case, paired=True)
        deltas = chunkings(case.text, False)["16-char"]
        got = h.stream(
            h.registered_name(family), deltas, case.tools, paired=True, stream_reasoning=False
        )
        if not h.same(got, want):
            failures.append((case.name, got, want))
    assert failures == []


def test_forced_reasoning_means_the_prompt_opened_it() -> None:
    """SGLang's force_reasoning (template or request turned thinking on): the output starts
    inside the reasoning block, for the reasoning and the tool detector alike."""
    tools = CASES["hermes"][0].tools
    text = 'plan</think>Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    calls = [("get_weather", '{"city": "Oslo"}')]
    want = h.Result("Sure.", "plan", calls)
    name = h.registered_name("hermes")
    assert h.same(
        h.stream(name, [text[:7], text[7:]], tools, paired=True, force_reasoning=True), want
    )
    assert h.same(h.whole(name, text, tools, paired=True, force_reasoning=True), want)


def test_a_pairing_reaches_only_the_next_tool_detector_that_reads_in_its_own_task() -> None:
    """SGLang serves requests as asyncio tasks. A reasoning detector's announcement pairs the
    next tool detector of its task to read text, built before it (Responses endpoint) or after
    it (chat endpoint); never a detector of another task, nor one that reads nothing (built
    to ask for a constraint), nor one after it is spent."""
    import asyncio

    tools = h.sglang_tools(CASES["hermes"][0].tools)
    name = h.registered_name("hermes")
    text = "<think>plan</think>Sure."

    def read(parser: FunctionCallParser) -> str:
        normal, _ = parser.parse_stream_chunk(text)
        return normal + parser.parse_stream_end()[0]

    async def announce() -> None:
        ReasoningParser(name, tool_call_parser_active=True)

    async def requests() -> list[str]:
        await asyncio.create_task(announce())  # another request's reasoning parser
        other = read(FunctionCallParser(tools, name))
        constraint_only = FunctionCallParser(tools, name)  # reads nothing
        ReasoningParser(name, tool_call_parser_active=True)
        chat = read(FunctionCallParser(tools, name))
        spent = read(FunctionCallParser(tools, name))
        responses = FunctionCallParser(tools, name)
        ReasoningParser(name, tool_call_parser_active=True)
        responses_read = read(responses)
        ReasoningParser(name, tool_call_parser_active=False)  # no tool parser follows
        after_inactive = read(FunctionCallParser(tools, name))
        del constraint_only
        return [other, chat, spent, responses_read, after_inactive]

    alone, paired = "planSure.", "Sure."
    assert asyncio.run(requests()) == [alone, paired, alone, paired, alone]
