"""The vLLM plugin against vLLM's own classes (scripts/vllm_env.sh), every family, its corpus.

Run inside the environment `scripts/vllm_env.sh` builds (`scripts/test.sh` does).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as h  # noqa: E402
from support.corpus_format import CORPUS, Case, load, params_in_env  # noqa: E402
import vllm  # noqa: E402
from vllm.reasoning import ReasoningParser, ReasoningParserManager  # noqa: E402
from vllm.tool_parsers import ToolParser, ToolParserManager  # noqa: E402

import toolgrammar  # noqa: E402
import toolgrammar.adapters.vllm as plugin  # noqa: E402
from toolgrammar.runtime.params import with_params  # noqa: E402
from toolgrammar.runtime.policies import resolve as resolve_policies  # noqa: E402
from toolgrammar.runtime.registry import get_spec  # noqa: E402

FAMILIES = sorted(path.stem for path in CORPUS.glob("*.txt"))
CASES = {family: load(CORPUS / f"{family}.txt") for family in FAMILIES}


def expected(case: Case, text: str | None = None, finish: str | None = None) -> h.Result:
    """What the plugin must give in vLLM: the library's parse with the plugin's options (the
    grammar's defaults, vLLM's policy profile). A request without tools never carries calls
    in vLLM.

    vLLM tells a tool parser that the output ended, not why: the plugin ends every output as
    a normal stop (docs/vllm.md), so its text reads as `parse(..., "stop")` reads it, and only
    the finish reason the client sees is the case's own."""
    text = case.text if text is None else text
    finish = case.finish if finish is None else finish
    tools = case.tools or None  # an empty tools array never reaches vLLM (it refuses it)
    message = toolgrammar.parse(
        case.family, text, tools, "stop", params=case.options.get("params"), compat="vllm"
    )
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
    if tools is None:
        calls = []
    reason = "tool_calls" if finish == "stop" and calls else finish
    return h.Result(message.content, message.reasoning, calls, reason)


def same(got: h.Result, want: h.Result) -> bool:
    return (got.content, got.reasoning, got.calls, got.finish_reason) == (
        want.content,
        want.reasoning,
        want.calls,
        want.finish_reason,
    )


def chunkings(family: str, text: str) -> dict[str, list[str]]:
    return {
        "1-char": list(text),
        "token": h.token_deltas(h.tokenizer(family), text),
        "16-char": [text[i : i + 16] for i in range(0, len(text), 16)],
        "whole": [text],
    }


# ---------------------------------------------------------------- registration


def test_every_family_is_registered_in_vllms_managers() -> None:
    ToolParserManager.import_tool_parser("toolgrammar.adapters.vllm")  # as --tool-parser-plugin
    names = toolgrammar.families()
    assert len(names) == 96  # 67 grammars and their aliases
    registered = set(ToolParserManager.list_registered())
    reasoning = set(ReasoningParserManager.list_registered())
    for name in names:
        cls = ToolParserManager.get_tool_parser(plugin.PREFIX + name)
        assert issubclass(cls, ToolParser) and cls.family == name
        assert plugin.PREFIX + name in registered
        rcls = ReasoningParserManager.get_reasoning_parser(plugin.PREFIX + name)
        assert issubclass(rcls, ReasoningParser) and rcls.family == name
        assert plugin.PREFIX + name in reasoning


@pytest.mark.parametrize("name", toolgrammar.families())
def test_every_registered_name_parses_through_vllm(name: str) -> None:
    """Aliases included: vLLM composes its parser (and validates it against the tokenizer)
    for the name, and a corpus case of its grammar streams to the library's result."""
    family = get_spec(name).name
    case = next(
        c for c in CASES[family] if c.tools is not None and not c.options and c.expect["tool_calls"]
    )
    want = expected(case)
    got = h.stream(name, h.token_deltas(h.tokenizer(name), case.text), case.tools, case.finish)
    assert same(got, want) and got.calls


def test_tg_hf_reads_the_tokenizers_response_template() -> None:
    """`tg-hf` takes the checkpoint's template from the tokenizer (its init kwargs, as
    tokenizer_config.json gives them) and reads as family beam, whose grammar came from it;
    without a template it is a clear error when vLLM builds it."""
    template = json.loads((Path(__file__).parents[1] / "templates" / "beam.json").read_text())
    tok = copy.copy(h.tokenizer("beam"))
    tok.init_kwargs = {**tok.init_kwargs, "response_template": template}
    cls = ToolParserManager.get_tool_parser(plugin.PREFIX + "hf")
    case = next(
        c for c in CASES["beam"] if c.tools is not None and not c.options and c.expect["tool_calls"]
    )
    req = h.request(case.tools, stream=False)
    got = cls(tok, req.tools).extract_tool_calls(case.text, req)
    want = toolgrammar.parse("beam", case.text, case.tools, compat="vllm")
    assert [(c.function.name, c.function.arguments) for c in got.tool_calls] == [
        (c.function.name, c.function.arguments) for c in want.tool_calls
    ]
    with pytest.raises(ValueError, match="response_template"):
        cls(h.tokenizer("beam"), req.tools)


def test_override_takes_vllms_own_names_and_leaves_wrapped_ones() -> None:
    saved = dict(ToolParserManager.tool_parsers)
    try:
        names = plugin.register(override=True)
        assert "qwen3_coder" in names and "hermes" in names
        assert ToolParserManager.get_tool_parser("qwen3_coder") is plugin.tool_parser_class(
            "qwen3_coder"
        )
        for wrapped in ("kimi_k3", "cohere_command3", "cohere_command4", "beam"):
            assert wrapped not in names
        # a name vLLM does not have is not invented
        assert all(
            n.startswith(plugin.PREFIX) or n in saved or n in ToolParserManager.lazy_parsers
            for n in names
        )
    finally:
        ToolParserManager.tool_parsers.clear()
        ToolParserManager.tool_parsers.update(saved)


# vLLM 0.34.0's new tool-parser names (and a rename), each served by a family of ours
NEW_IN_0_34 = ("granite_toolcall_parser", "musespark", "ripple", "zaya", "zaya_xml")


def test_override_takes_every_vllm_tool_parser_name_that_has_a_family() -> None:
    """Against the running vLLM's own registry: every tool-parser name vLLM registers is a
    family of ours, and the override takes each one over but the names vLLM wraps in parsers
    of its own (`_WRAPPED_BY_VLLM`); on 0.34.0 that includes its new names."""
    saved = dict(ToolParserManager.tool_parsers)
    vllm_names = {n for n in ToolParserManager.list_registered() if not n.startswith(plugin.PREFIX)}
    ours = {*toolgrammar.families(), *toolgrammar.TEMPLATE_FAMILIES}
    try:
        assert sorted(vllm_names - ours) == []  # a vLLM name with no family is new work
        taken = {n for n in plugin.register(override=True) if not n.startswith(plugin.PREFIX)}
        assert taken == vllm_names - plugin._WRAPPED_BY_VLLM
        for name in taken:
            assert ToolParserManager.get_tool_parser(name) is plugin.tool_parser_class(name)
        if tuple(int(p) for p in vllm.__version__.split(".")[:2]) >= (0, 34):
            assert set(NEW_IN_0_34) <= taken
            assert len(taken) == len(vllm_names) - 5 == 57  # beam, hf, kimi_k3, cohere x2
    finally:
        ToolParserManager.tool_parsers.clear()
        ToolParserManager.tool_parsers.update(saved)


def test_override_takes_every_vllm_reasoning_parser_name_that_has_a_family() -> None:
    """vLLM's reasoning-parser names that name a family have the companion `tg-NAME`, and the
    override takes each one over but the names vLLM wraps (`--reasoning-parser glm45` is
    then toolgrammar's, the pair with `--tool-call-parser glm45` one parser)."""
    saved = dict(ReasoningParserManager.reasoning_parsers)
    saved_tools = dict(ToolParserManager.tool_parsers)
    ours = {*toolgrammar.families(), *toolgrammar.TEMPLATE_FAMILIES}
    names = set(ReasoningParserManager.list_registered())
    with_family = {n for n in names if n in ours and not n.startswith(plugin.PREFIX)}
    try:
        for name in with_family:
            assert plugin.PREFIX + name in names
            assert ReasoningParserManager.get_reasoning_parser(plugin.PREFIX + name).family == name
        plugin.register(override=True)
        taken = set(plugin.REASONING_TAKEN)
        assert taken == with_family - plugin._WRAPPED_BY_VLLM
        for name in taken:
            cls = ReasoningParserManager.get_reasoning_parser(name)
            assert cls is plugin.reasoning_parser_class(name)
        if tuple(int(p) for p in vllm.__version__.split(".")[:2]) >= (0, 34):
            assert {"musespark", "ripple", "zaya"} <= taken
            assert len(taken) == 33  # of 44: 5 with no family, 6 wrapped by vLLM
    finally:
        ReasoningParserManager.reasoning_parsers.clear()
        ReasoningParserManager.reasoning_parsers.update(saved)
        ToolParserManager.tool_parsers.clear()
        ToolParserManager.tool_parsers.update(saved_tools)


def test_bad_params_are_clear_errors_at_parser_construction() -> None:
    tok = h.tokenizer("hy_v4")
    for raw, message in (
        ("{not json", "TOOLGRAMMAR_VLLM_PARAMS is not JSON"),
        ('{"hy_v4": {"suffix": 3}}', "must map names to string params"),
        ('{"hy_v4": {"nope": "x"}}', "family 'hy_v4' has no param 'nope'"),
    ):
        os.environ[plugin.PARAMS_ENV] = raw
        try:
            with pytest.raises(Exception, match=message):
                # vLLM builds the parser at server start to validate it: the error shows there
                h.parser_class("hy_v4", True, tok)
        finally:
            del os.environ[plugin.PARAMS_ENV]


def test_unknown_family_is_a_clear_error() -> None:
    with pytest.raises(toolgrammar.UnknownFamily, match="unknown family 'nope'"):
        plugin.tool_parser_class("nope")


# ---------------------------------------------------------------- request adjustment


@pytest.mark.parametrize("family", FAMILIES)
def test_adjust_request_keeps_special_token_markers(family: str) -> None:
    tools = CASES[family][0].tools or []
    for with_specials in (True, False):
        tok = h.tokenizer(family, with_specials)
        cls = h.parser_class(family, True, tok)
        req = h.request(tools, stream=True)
        parser = cls(tok, req.tools, chat_template_kwargs={}, model_config=None)
        req = parser.adjust_request(req)
        if with_specials:
            assert req.skip_special_tokens is False
            assert req.spaces_between_special_tokens is False
            assert req.to_sampling_params(100, {}).skip_special_tokens is False
        else:  # no marker is a special token: the request is left as the client sent it
            assert req.skip_special_tokens is None
            assert req.spaces_between_special_tokens is True


# ---------------------------------------------------------------- the corpus, both paths


@pytest.mark.parametrize("family", FAMILIES)
def test_corpus_streams_through_vllms_chat_stream_processor(family: str) -> None:
    """Every case, 1-char, token, 16-char and whole deltas, reasoning parser paired."""
    failures = []
    for case in CASES[family]:
        want = expected(case)
        if not case.options and case.finish == "stop":  # the corpus says what parse() gives
            ours = toolgrammar.parse(case.family, case.text, case.tools or None)
            calls = [[c.function.name, c.function.arguments] for c in ours.tool_calls]
            assert [ours.content, ours.reasoning, calls if case.tools else []] == [
                case.expect["content"],
                case.expect["reasoning"],
                case.expect["tool_calls"] if case.tools else [],  # ([] never reaches vLLM)
            ], case.name
        for split, deltas in chunkings(family, case.text).items():
            with params_in_env(case, plugin.PARAMS_ENV):
                got = h.stream(family, deltas, case.tools, case.finish)
            if not same(got, want) or len(set(got.ids)) != len(got.calls) or not all(got.ids):
                failures.append((case.name, split, got, want))
    assert failures == []


@pytest.mark.parametrize("family", FAMILIES)
def test_corpus_non_streaming_through_vllms_parser(family: str) -> None:
    failures = []
    for case in CASES[family]:
        want = expected(case)
        with params_in_env(case, plugin.PARAMS_ENV):
            got = h.whole(family, case.text, case.tools, case.finish)
        if not same(got, want) or not all(got.ids):
            failures.append((case.name, got, want))
    assert failures == []


def alone_content(case: Case, calls: list[tuple[str, str]]) -> str | None:
    """The library's reasoning and content pieces, joined in output order; whitespace-only
    next to calls is none (vLLM's rule for non-streamed content). The plugin ends every
    output as a normal stop (see `expected`)."""
    parser = toolgrammar.StreamParser(case.family, case.tools, compat="vllm")
    deltas = parser.feed(case.text) + parser.finish("stop")
    text = "".join(p for d in deltas for p in (d.reasoning, d.content) if p)
    return None if not text or (calls and not text.strip()) else text


@pytest.mark.parametrize("family", FAMILIES)
def test_tool_parser_alone_keeps_reasoning_as_content_in_both_paths(family: str) -> None:
    """Without a reasoning parser vLLM has nowhere to put non-streamed reasoning: it is
    content, in output order, the same streamed or not; the calls are the library's."""
    failures = []
    for case in CASES[family]:
        if case.options.get("params"):
            continue  # params are covered by the two tests above
        want = expected(case)
        whole = h.whole(family, case.text, case.tools, case.finish, paired=False)
        if whole.reasoning is not None or (whole.calls, whole.finish_reason) != (
            want.calls,
            want.finish_reason,
        ):
            failures.append((case.name, "whole", whole, want))
        if whole.content != alone_content(case, whole.calls):
            failures.append((case.name, "content", whole, alone_content(case, whole.calls)))
        for split in ("1-char", "16-char"):
            deltas = chunkings(family, case.text)[split]
            got = h.stream(family, deltas, case.tools, case.finish, paired=False)
            if got.calls and (got.content or "").strip() == "":
                # vLLM's own rule, non-streaming only: whitespace-only content next to
                # calls is no content (here: the whitespace a prompt-opened block held)
                got.content = None
            if not same(got, whole):
                failures.append((case.name, split, got, whole))
    assert failures == []


def test_request_options_are_vllms_to_apply() -> None:
    """include_reasoning=false hides reasoning, tool_choice=none drops the calls (their markup
    is still not content), parallel_tool_calls=false keeps the first call: in both paths."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    case = Case(
        "qwen3_coder",
        "README example",
        (examples / "qwen3_coder.txt").read_text(encoding="utf-8"),
        {},
        tools=json.loads((examples / "tools.json").read_text(encoding="utf-8")),
    )
    want = expected(case)
    assert want.reasoning and want.content and len(want.calls) == 2
    deltas = chunkings("qwen3_coder", case.text)["16-char"]
    for run in (h.stream, h.whole):
        text, tools, finish = (deltas if run is h.stream else case.text), case.tools, case.finish
        got = run("qwen3_coder", text, tools, finish, include_reasoning=False)
        assert (got.reasoning, got.content, got.calls) == (None, want.content, want.calls)
        got = run("qwen3_coder", text, tools, finish, tool_choice="none")
        assert (got.reasoning, got.content, got.calls) == (want.reasoning, want.content, [])
        assert got.finish_reason == "stop"
        got = run("qwen3_coder", text, tools, finish, parallel_tool_calls=False)
        assert got.calls == want.calls[:1] and got.finish_reason == "tool_calls"


# ---------------------------------------------------------------- cuts


def _open_string_cut(family: str) -> tuple[Case, int, str, str]:
    """A corpus call with a string value written verbatim in the text, and a cut in the
    middle of that value (the library's parse of the prefix says the cut is inside it)."""
    for case in CASES[family]:
        if case.tools is None or case.options:
            continue
        for _, arguments in case.expect["tool_calls"]:
            args = json.loads(arguments)
            for key, value in args.items() if isinstance(args, dict) else ():
                if not (isinstance(value, str) and len(value) >= 4):
                    continue
                start = case.text.find(value)
                while start >= 0:
                    cut = start + len(value) // 2
                    message = toolgrammar.parse(  # the cut is inside the value: a kept call says so
                        family,
                        case.text[:cut],
                        case.tools,
                        "length",
                        compat="vllm",
                        partial_calls="keep",
                    )
                    for call in message.tool_calls:
                        kept = json.loads(call.function.arguments).get(key)
                        if (
                            isinstance(kept, str)
                            and kept
                            and kept != value
                            and value.startswith(kept)
                        ):
                            return case, cut, key, value
                    start = case.text.find(value, start + 1)
    raise AssertionError(f"{family}: no corpus call with a verbatim string value")


@pytest.mark.parametrize("family", FAMILIES)
def test_length_cut_inside_an_open_string_value(family: str) -> None:
    case, cut, key, value = _open_string_cut(family)
    text = case.text[:cut]
    want = expected(case, text, "length")
    # the vLLM profile keeps a cut call (its streaming path), but for the families whose
    # whole-output parser drops it or gives it back as text (`partial_calls`, docs/compat.md)
    keeps = resolve_policies("vllm", family, {}, get_spec(family).name).partial_calls == "keep"
    for split, deltas in chunkings(family, text).items():
        got = h.stream(family, deltas, case.tools, "length")
        assert same(got, want), split
        assert got.finish_reason == "length"
        args = [json.loads(a) for _, a in got.calls]
        if not keeps:  # no call keeps the cut value
            cut_values = [a.get(key) for a in args]
            assert not any(
                isinstance(v, str) and v and v != value and value.startswith(v) for v in cut_values
            ), (split, got.calls)
            continue
        assert all(isinstance(a, dict) for a in args)
        kept = [a[key] for a in args if key in a]
        assert kept and any(
            isinstance(v, str) and v and value.startswith(v) and v != value for v in kept
        ), (split, got.calls)
        # the arguments were still open until vLLM's last step flushed the parser
        assert not all(_loads_object(a) for a in got.before_finish), (split, got.before_finish)
    got = h.whole(family, text, case.tools, "length")
    assert same(got, want) and got.finish_reason == "length"


def _loads_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _sweep_case(family: str) -> Case:
    """The family's shortest complete corpus call: a case ending normally whose call holds
    a string value written verbatim in the text, and which the vLLM profile reads as a call
    (a cut one is not, where the profile drops or gives back a cut call: `partial_calls`)."""

    def verbatim_string(case: Case) -> bool:
        for _, arguments in case.expect["tool_calls"]:
            args = json.loads(arguments)
            for value in args.values() if isinstance(args, dict) else ():
                if isinstance(value, str) and len(value) >= 3 and value in case.text:
                    return True
        return False

    return min(
        (
            c
            for c in CASES[family]
            if c.tools is not None
            and not c.options
            and c.finish == "stop"
            and verbatim_string(c)
            and toolgrammar.parse(family, c.text, c.tools, c.finish, compat="vllm").tool_calls
        ),
        key=lambda c: len(c.text),
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_end_of_stream_at_every_character_of_a_call(family: str) -> None:
    """The stream ends (length) after every character of a call, in 5-character deltas;
    the final step is vLLM's only flush. Count cuts whose accumulated arguments do not
    json.loads to an object, and cuts that differ from the library's parse of the same
    prefix: both 0."""
    case = _sweep_case(family)
    bad_json: list[tuple[int, str]] = []
    mismatched: list[int] = []
    cuts = with_calls = 0
    for end in range(1, len(case.text) + 1):
        text = case.text[:end]
        got = h.stream(
            family, [text[i : i + 5] for i in range(0, len(text), 5)], case.tools, "length"
        )
        cuts += 1
        with_calls += bool(got.calls)
        for _, arguments in got.calls:
            try:
                ok = isinstance(json.loads(arguments), dict)
            except ValueError:
                ok = False
            if not ok:
                bad_json.append((end, arguments))
        if not same(got, expected(case, text, "length")):
            mismatched.append(end)
    assert cuts == len(case.text) and with_calls > 0
    assert bad_json == []
    assert mismatched == []


def test_readme_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    """examples/vllm_plugin.py, as README runs it: whole, then cut inside a string value."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "examples" / "vllm_plugin.py"
    spec = importlib.util.spec_from_file_location("vllm_plugin_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    monkeypatch.setattr(sys, "argv", ["vllm_plugin.py"])
    example.main()
    out = capsys.readouterr().out
    assert "finish_reason: tool_calls" in out
    assert "call 1 arguments, accumulated: {'path': 'notes.txt', 'content': 'Forecast:" in out
    monkeypatch.setattr(sys, "argv", ["vllm_plugin.py", "--cut", "360"])
    example.main()
    out = capsys.readouterr().out
    assert "finish_reason: length" in out
    assert (
        "call 1 arguments, accumulated: {'path': 'notes.txt', 'content': 'Forecast: \"su'}" in out
    )


# ---------------------------------------------------------------- the reasoning parser alone

# families with a reasoning block that the override can serve (`_WRAPPED_BY_VLLM` aside)
REASONING_FAMILIES = [
    f for f in FAMILIES if get_spec(f).reasoning and f not in plugin._WRAPPED_BY_VLLM
]


def _reasoning_case(family: str) -> Case | None:
    """The family's first case that reads reasoning, with no option vLLM cannot give."""
    return next((c for c in CASES[family] if c.expect.get("reasoning") and not c.options), None)


@pytest.mark.parametrize("family", REASONING_FAMILIES)
def test_reasoning_parser_alone_takes_reasoning_out_and_hands_the_rest_on(family: str) -> None:
    """`--reasoning-parser NAME` with no tool parser: the family's reasoning comes back as
    reasoning (what the library reads), every other character as content, as written, the
    same in both paths and at every delta size; with toolgrammar's tool parser of the same
    family it is the pair (the tests above)."""
    case = _reasoning_case(family)
    if case is None:
        pytest.skip("no corpus case of this family reads reasoning without options")
    names = (None, plugin.PREFIX + family)
    want = toolgrammar.parse(family, case.text, compat="vllm")
    got = h.whole(family, case.text, case.tools, case.finish, names=names)
    assert got.calls == []
    assert got.reasoning is not None and want.reasoning is not None
    assert want.reasoning.startswith(got.reasoning)  # the first block, or every one
    content = got.content or ""
    assert case.text.endswith(content)
    assert got.reasoning.strip() not in content
    for how, deltas in chunkings(family, case.text).items():
        streamed = h.stream(family, deltas, case.tools, case.finish, names=names)
        assert (streamed.reasoning, streamed.content, streamed.calls) == (
            got.reasoning,
            got.content,
            [],
        ), how


@pytest.mark.parametrize("family", REASONING_FAMILIES)
def test_reasoning_parser_alone_after_a_prompt_that_closed_reasoning(family: str) -> None:
    """A prompt whose last reasoning marker is a closer (thinking turned off) leaves no
    reasoning to the output: all of it is content, in both paths."""
    case = _reasoning_case(family)
    if case is None:
        pytest.skip("no corpus case of this family reads reasoning without options")
    block = with_params(get_spec(family)).reasoning[0]
    tok = h.tokenizer(family)
    prompt = h.token_ids(tok, "x" + block.opens[0] + "y" + block.closes[0])
    names = (None, plugin.PREFIX + family)
    got = h.whole(family, case.text, case.tools, case.finish, names=names, prompt=prompt)
    assert (got.reasoning, got.content) == (None, case.text)
    streamed = h.stream(
        family, h.token_deltas(tok, case.text), case.tools, case.finish, names=names, prompt=prompt
    )
    assert (streamed.reasoning, streamed.content) == (None, case.text)


def test_reasoning_parser_hands_the_rest_to_another_familys_tool_parser() -> None:
    """`--reasoning-parser deepseek_v3 --tool-call-parser hermes`-like pairs: reasoning of
    one family, calls of another; the tool parser reads the text after the reasoning."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]  # fmt: skip
    family = next(
        f for f in REASONING_FAMILIES
        if "</think>" in get_spec(f).reasoning[0].closes and f != "hermes"
        and get_spec(f).name != get_spec("hermes").name
    )  # fmt: skip
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    opener = get_spec(family).reasoning[0].opens[0]
    text = f"{opener}It is in France.</think>\n\nChecking.{call}"
    names = ("tg-hermes", plugin.PREFIX + family)
    want = ("It is in France.", [("get_weather", '{"city": "Paris"}')])
    got = h.whole(family, text, tools, "stop", names=names)
    assert (got.reasoning, got.calls) == want
    assert (got.content or "").strip() == "Checking."
    for how, deltas in chunkings(family, text).items():
        streamed = h.stream(family, deltas, tools, "stop", names=names)
        assert (streamed.reasoning, streamed.calls) == want, how
        assert (streamed.content or "").strip() == "Checking.", how


@pytest.mark.parametrize("family", REASONING_FAMILIES)
def test_vllms_own_names_make_the_pair_under_the_override(family: str) -> None:
    """With the override, `--reasoning-parser F --tool-call-parser F` (vLLM's names) is the
    pair `tg-F` makes: one parser reads reasoning, content and calls."""
    case = _reasoning_case(family)
    if case is None or family not in ReasoningParserManager.list_registered():
        pytest.skip("not a vLLM reasoning-parser name, or no case")
    saved = dict(ReasoningParserManager.reasoning_parsers)
    saved_tools = dict(ToolParserManager.tool_parsers)
    try:
        plugin.register(override=True)
        tool = family if family in ToolParserManager.tool_parsers else plugin.PREFIX + family
        got = h.stream(
            family, h.token_deltas(h.tokenizer(family), case.text), case.tools, case.finish,
            names=(tool, family),
        )  # fmt: skip
    finally:
        ReasoningParserManager.reasoning_parsers.clear()
        ReasoningParserManager.reasoning_parsers.update(saved)
        ToolParserManager.tool_parsers.clear()
        ToolParserManager.tool_parsers.update(saved_tools)
    assert same(got, expected(case))


def test_a_reasoning_parser_built_alone_never_pairs_with_a_later_tool_parser() -> None:
    """vLLM may build a reasoning parser alone (structured outputs, a server without a tool
    parser); a tool parser built after it, by another unified parser, is not its pair."""
    tok = h.tokenizer("hermes")
    alone = h.parser_class("hermes", False, tok, names=(None, "tg-hermes"))
    alone(tok, None, chat_template_kwargs={}, model_config=None)
    tool_only = h.parser_class("hermes", False, tok)
    parser = tool_only(tok, None, chat_template_kwargs={}, model_config=None)
    assert not parser.tool_parser._reports_reasoning
    pair = h.parser_class("hermes", True, tok)(
        tok, None, chat_template_kwargs={}, model_config=None
    )
    assert pair.tool_parser._reports_reasoning and pair.reasoning_parser._paired


def test_structured_outputs_start_after_the_reasoning_closer() -> None:
    """vLLM's engine builds the reasoning parser alone and asks, at each decode step, whether
    reasoning has ended: after the family's closer, not before; the prompt's own last marker
    counts (a closed one: reasoning is over before the output starts)."""
    tok = h.tokenizer("hermes")
    reasoner = ReasoningParserManager.get_reasoning_parser("tg-hermes")(tok)
    ids = h.token_ids(tok, "<|im_start|>assistant\n<think>\nplan")
    assert not reasoner.is_reasoning_end(ids)
    assert not reasoner.is_reasoning_end_streaming(ids, ids[-1:])
    more = h.token_ids(tok, "</think>\n\n{")
    assert reasoner.is_reasoning_end_streaming(ids + more, more)
    assert reasoner.is_reasoning_end(h.token_ids(tok, "<think>\n\n</think>\n\n"))
