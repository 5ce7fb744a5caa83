"""The public API and the CLI as users call them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import toolgrammar
from toolgrammar.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "qwen3_coder.txt"
TOOLS_FILE = ROOT / "examples" / "tools.json"
TOOLS = json.loads(TOOLS_FILE.read_text())


def test_families_lists_names_and_aliases() -> None:
    names = toolgrammar.families()
    assert {"qwen3_coder", "qwen3_xml", "hermes", "qwen3_json", "kimi_k2"} <= set(names)
    assert names == sorted(names)


@pytest.mark.parametrize("alias,family", [("qwen3_xml", "qwen3_coder"), ("qwen3_json", "hermes")])
def test_alias_is_the_same_parser(alias: str, family: str) -> None:
    get = toolgrammar.runtime.registry.get_spec
    assert get(alias) is get(family)


def test_parse_returns_openai_message() -> None:
    message = toolgrammar.parse("qwen3_coder", EXAMPLE.read_text(), TOOLS)
    data = message.to_dict()
    assert data["role"] == "assistant"
    # whitespace="verbatim": the line breaks around the sentence are the model's
    assert data["content"] == "\nLet me check the forecast and save it.\n"
    assert data["reasoning"].startswith("The user wants")
    trimmed = toolgrammar.parse("qwen3_coder", EXAMPLE.read_text(), TOOLS, whitespace="trim")
    assert trimmed.content == "Let me check the forecast and save it."
    # vLLM's Qwen3 parser strips content when there are calls: its profile trims
    as_vllm = toolgrammar.parse("qwen3_coder", EXAMPLE.read_text(), TOOLS, compat="vllm")
    assert as_vllm.content == trimmed.content
    call = data["tool_calls"][0]
    assert call["type"] == "function" and call["id"].startswith("chatcmpl-tool-")
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "days": 3}
    assert message.finish_reason == "tool_calls"


def test_stream_deltas_have_chunk_shape() -> None:
    parser = toolgrammar.StreamParser("hermes", TOOLS)
    deltas = parser.feed('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa')
    first = [d.to_dict() for d in deltas]
    assert first[0]["tool_calls"][0]["index"] == 0
    assert first[0]["tool_calls"][0]["type"] == "function"
    assert first[0]["tool_calls"][0]["function"]["name"] == "get_weather"
    rest = [d.to_dict() for d in parser.feed('ris"}}\n</tool_call>') + parser.finish("length")]
    assert all("id" not in part for d in rest for part in d.get("tool_calls", []))
    assert parser.finish_reason == "length"


def test_reasoning_open_option() -> None:
    message = toolgrammar.parse("qwen3_coder", "still thinking</think>Answer.", reasoning_open=True)
    assert (message.reasoning, message.content) == ("still thinking", "Answer.")


def test_unknown_tools_drop_option() -> None:
    text = '<tool_call>{"name": "nope", "arguments": {}}</tool_call><tool_call>{"name": "get_weather", "arguments": {"city": "x"}}</tool_call>'
    kept = toolgrammar.parse("hermes", text, TOOLS)
    dropped = toolgrammar.parse("hermes", text, TOOLS, unknown_tools="drop")
    assert [c.function.name for c in kept.tool_calls] == ["nope", "get_weather"]
    assert [c.function.name for c in dropped.tool_calls] == ["get_weather"]


def test_bad_options_are_clear_errors() -> None:
    with pytest.raises(toolgrammar.UnknownFamily, match="unknown family 'nope'; known: "):
        toolgrammar.StreamParser("nope")
    with pytest.raises(ValueError, match="unknown_tools must be"):
        toolgrammar.StreamParser("hermes", unknown_tools="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tools"):
        toolgrammar.StreamParser("hermes", tools=[42])  # type: ignore[list-item]


def test_options_of_the_wrong_kind_are_refused_in_one_line() -> None:
    with pytest.raises(TypeError, match="family must be a family name"):
        toolgrammar.StreamParser(["hermes"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reasoning_open must be True, False or None"):
        toolgrammar.StreamParser("hermes", reasoning_open="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="params must be a mapping"):
        toolgrammar.StreamParser("hy_v4", params="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finish reason must be one of stop, length"):
        toolgrammar.parse("hermes", "hi", finish_reason="bogus")


@pytest.mark.parametrize("option", ["block_open", "reasoning_open"])
@pytest.mark.parametrize("value", ["false", "true", 0, 1])
def test_a_flag_is_a_bool_not_a_truthy_value(option: str, value: object) -> None:
    """`block_open="false"` was read as true (a non-empty string): a flag is refused unless
    it is True, False or None, at construction and by `parse` alike."""
    with pytest.raises(TypeError, match=f"{option} must be True, False or None, not {value!r}"):
        toolgrammar.StreamParser("inkling", **{option: value})
    with pytest.raises(TypeError, match=f"{option} must be True, False or None"):
        toolgrammar.parse("inkling", "hi", **{option: value})


def test_trace_is_checked_when_the_parser_is_made() -> None:
    """`trace=5` was accepted and failed at the first feed, deep in the engine."""
    for bad in (5, "stderr", [print]):
        with pytest.raises(TypeError, match="trace must be a callable"):
            toolgrammar.StreamParser("hermes", trace=bad)  # type: ignore[arg-type]
    events: list = []
    toolgrammar.StreamParser("hermes", trace=events.append).feed("hi")
    assert events


def test_assemble_refuses_what_is_not_a_delta_in_one_line() -> None:
    for bad, says in (([1], "not int at index 0"), (5, "not int"), ("hi", "not str")):
        with pytest.raises(TypeError, match=f"assemble\\(\\) takes a list of Delta.*{says}"):
            toolgrammar.assemble(bad)  # type: ignore[arg-type]
    parser = toolgrammar.StreamParser("hermes")
    deltas = parser.feed("hi") + parser.finish()
    assert toolgrammar.assemble(iter(deltas)).content == "hi"  # any iterable of deltas


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "calls, says",
    [
        ([("f", _nested(5000))], "nest too deep"),  # json.dumps' own recursion
        ([("f", "[" * 5000)], "a call is a name and an arguments object"),  # deep JSON text
        ([("f",)], "a call is a name and an arguments object"),  # unpacking errors before
        ([("f", {}, 1)], "a call is a name and an arguments object"),
        (["f"], "a call is a name and an arguments object"),
        ([1], "a call is a name and an arguments object"),  # TypeError before
        (5, "calls must be a list of calls, not int"),
        (None, "calls must be a list of calls, not NoneType"),
        ({"name": "f", "arguments": {}}, "calls must be a list of calls, not dict"),
    ],
)
def test_render_refuses_bad_calls_with_a_render_error(calls: object, says: str) -> None:
    with pytest.raises(toolgrammar.RenderError, match=says):
        toolgrammar.render("hermes", calls)  # type: ignore[arg-type]


@pytest.mark.parametrize("family", ["pythonic", "gemma4", "minimax_m3", "lfm2", "qwen3_coder"])
def test_render_of_arguments_nested_past_the_recursion_limit_is_a_render_error(
    family: str,
) -> None:
    """The dialects' writers walk values recursively: 600 levels raised RecursionError."""
    with pytest.raises(toolgrammar.RenderError):
        toolgrammar.render(family, [("f", _nested(600))])
    with pytest.raises(TypeError, match="content must be a str or None, not int"):
        toolgrammar.render(family, [("f", {})], content=5)  # type: ignore[arg-type]


def test_finish_is_said_once_with_a_known_reason() -> None:
    for reason in ("bogus", None, "STOP"):
        parser = toolgrammar.StreamParser("hermes")
        deltas = parser.feed("hi <")  # "<" may open a call: held back
        with pytest.raises(ValueError, match="finish reason must be one of"):
            parser.finish(reason)  # type: ignore[arg-type]
        assert not parser.finished  # a refused reason changes nothing: a right one still works
        deltas += parser.finish("stop")
        assert "".join(d.content or "" for d in deltas) == "hi <"
    assert parser.finished and parser.finish_reason == "stop"
    with pytest.raises(RuntimeError, match=r"finish\(\) was already called"):
        parser.finish("length")
    assert parser.finish_reason == "stop"
    with pytest.raises(RuntimeError, match="after finish"):
        parser.feed("more")


def test_cli_parse_stream(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "parse",
            "qwen3_coder",
            str(EXAMPLE),
            "--tools",
            str(TOOLS_FILE),
            "--stream",
            "--chunk",
            "char",
            "--ids",
            "sequential",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    deltas = [json.loads(line)["delta"] for line in lines[:-1]]
    final = json.loads(lines[-1])
    assert final["finish_reason"] == "tool_calls"
    args = "".join(
        part["function"]["arguments"]
        for d in deltas
        for part in d.get("tool_calls", [])
        if part["index"] == 1
    )
    assert args == final["message"]["tool_calls"][1]["function"]["arguments"]


def test_cli_families(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["families"]) == 0
    out = capsys.readouterr().out
    assert "qwen3_xml  (alias of qwen3_coder)" in out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["parse", "nope", str(EXAMPLE)], "unknown family 'nope'"),
        (["parse", "hermes", "/no/such/file"], "cannot read /no/such/file"),
        (["parse", "hermes", str(EXAMPLE), "--tools", str(EXAMPLE)], "invalid JSON"),
        (["parse", "hermes", str(EXAMPLE), "--stream", "--chunk", "zero"], "--chunk takes"),
    ],
)
def test_cli_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_runs_as_module() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "toolgrammar", "parse", "hermes", "-"],
        input='<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out)["message"]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'


def test_build_check_is_clean() -> None:
    assert main(["build", "--check"]) == 0


def test_every_alias_resolves_to_its_family_parser() -> None:
    import toolgrammar.generated as generated

    get = toolgrammar.runtime.registry.get_spec
    assert generated.ALIASES, "the grammars register aliases"
    for alias, family in generated.ALIASES.items():
        assert alias in toolgrammar.families() and get(alias) is get(family)


def test_prompt_opened_grammar_starts_in_reasoning_unless_told() -> None:
    text = "plan</think>Answer."
    assert toolgrammar.parse("step3p5", text).reasoning == "plan"  # the grammar's default
    message = toolgrammar.parse("step3p5", text, reasoning_open=False)
    assert (message.reasoning, message.content) == (None, "planAnswer.")
    # a stray reasoning closer in content is markup
    assert toolgrammar.parse("qwen3_coder", text).content == "planAnswer."


INKLING_CALL = '<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Oslo"}}'


def test_prompt_opened_block_is_read_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inkling's prompt ends with `<|message_model|>`: its first message starts the output,
    unless `block_open=False` (CLI `--no-block-open`); opened reasoning comes first."""
    message = toolgrammar.parse("inkling", INKLING_CALL + "<|end_message|>", TOOLS)
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    message = toolgrammar.parse("inkling", INKLING_CALL, TOOLS, block_open=False)
    assert message.tool_calls == [] and message.content == INKLING_CALL
    message = toolgrammar.parse("inkling", "plan<|end_message|>Hi", reasoning_open=True)
    assert (message.reasoning, message.content) == ("plan", "Hi")
    out = tmp_path / "out.txt"
    out.write_text(INKLING_CALL, encoding="utf-8")
    assert main(["parse", "inkling", str(out), "--no-block-open"]) == 0
    message = json.loads(capsys.readouterr().out.splitlines()[-1])["message"]
    assert message["content"] == INKLING_CALL and not message.get("tool_calls")
    assert main(["parse", "inkling", str(out)]) == 0
    message = json.loads(capsys.readouterr().out.splitlines()[-1])["message"]
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"


HY = "<tool_calls{s}><tool_call{s}>get_weather<arg_key{s}>city</arg_key{s}><arg_value{s}>Oslo</arg_value{s}></tool_call{s}></tool_calls{s}>"


def test_params_fill_the_grammar_markers() -> None:
    suffixed = HY.format(s=":opensource")
    message = toolgrammar.parse("hy_v4", suffixed, TOOLS, params={"suffix": ":opensource"})
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [
        ("get_weather", '{"city": "Oslo"}')
    ]
    # the default suffix is empty: the suffixed spelling is then text, nothing is lost
    message = toolgrammar.parse("hy_v4", suffixed, TOOLS, reasoning_open=False)
    assert message.tool_calls == [] and message.content == suffixed
    assert toolgrammar.parse("hy_v4", HY.format(s=""), TOOLS).tool_calls


def test_unknown_param_is_a_clear_error() -> None:
    with pytest.raises(toolgrammar.UnknownParam, match="'hy_v4' has no param 'sufix'.*suffix"):
        toolgrammar.StreamParser("hy_v4", params={"sufix": ":x"})
    with pytest.raises(toolgrammar.UnknownParam, match="its params: none"):
        toolgrammar.StreamParser("hermes", params={"suffix": ":x"})


def test_cli_param_and_reasoning_switch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.txt"
    out.write_text(HY.format(s=":opensource"), encoding="utf-8")
    assert main(["parse", "hy_v4", str(out), "--param", "suffix=:opensource"]) == 0
    message = json.loads(capsys.readouterr().out.splitlines()[-1])["message"]
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    assert main(["parse", "hy_v4", str(out), "--param", "suffix"]) == 2
    assert "--param takes NAME=VALUE" in capsys.readouterr().err
    assert main(["parse", "hy_v4", str(out), "--param", "nope=1"]) == 2
    assert "has no param 'nope'" in capsys.readouterr().err
    plain = tmp_path / "plain.txt"
    plain.write_text("plan</think>Answer.", encoding="utf-8")
    assert main(["parse", "step3p5", str(plain), "--no-reasoning-open"]) == 0
    message = json.loads(capsys.readouterr().out.splitlines()[-1])["message"]
    assert message["content"] == "planAnswer." and message.get("reasoning") is None


def test_call_ids_from_the_markup() -> None:
    cohere = (
        '<|START_ACTION|>[{"tool_call_id": "7", "tool_name": "get_weather", "parameters": {}}, '
        '{"tool_name": "write_file", "parameters": {}}]<|END_ACTION|>'
    )
    message = toolgrammar.parse("cohere_command3", cohere, TOOLS, ids="sequential")
    assert [c.id for c in message.tool_calls] == ["7", "call_1"]
    mistral = '[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Oslo"}'
    message = toolgrammar.parse("mistral", mistral, TOOLS)
    assert [(c.id, c.function.name) for c in message.tool_calls] == [("abcDEF123", "get_weather")]


def test_second_call_shape_reads_the_same_text() -> None:
    old = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}}]'
    message = toolgrammar.parse("mistral", old, TOOLS)
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [
        ("get_weather", '{"city": "Oslo"}')
    ]
    assert message.content is None


TEMPLATE_FILE = ROOT / "tests" / "templates" / "beam.json"


@pytest.mark.parametrize(
    "argv",
    [[name] for name in toolgrammar.families()]
    + [["hf", "--response-template", str(TEMPLATE_FILE)], ["hy_v4", "--param", "suffix=:x"]],
    ids=lambda argv: argv[0],
)
def test_tables_prints_every_table(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """`toolgrammar tables FAMILY` prints each table of the compiled record, one a line."""
    from dataclasses import fields

    from toolgrammar.runtime.tables import CompiledFamily

    assert main(["tables", *argv]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("compiled tables of ")
    named = [line.partition(":")[0] for line in lines[1:] if not line.startswith(" ")]
    assert named == [f.name for f in fields(CompiledFamily) if f.name != "spec"]
    assert "Markers[" in out and "steps:\n  [0] " in out


def test_tables_are_a_frozen_record(capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import FrozenInstanceError

    from toolgrammar.runtime.tables import compiled

    family = compiled(toolgrammar.runtime.registry.get_spec("qwen3_coder"))
    with pytest.raises(FrozenInstanceError):
        family.openers = {}  # type: ignore[misc]
    assert main(["tables", "no_such_family"]) == 2
    assert "unknown family 'no_such_family'" in capsys.readouterr().err
    assert main(["tables", "hy_v4", "--param", "nope=1"]) == 2


def test_parse_passes_on_every_option_a_stream_parser_takes() -> None:
    """parse() builds the engine without a StreamParser for the options in `_OPTIONS`, and
    hands any other to StreamParser for its error: an option added to one and not to the
    other would be refused by parse() or silently take the slow way."""
    import inspect

    def keywords(function: object) -> set[str]:
        parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
        return {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}

    assert keywords(toolgrammar.StreamParser.__init__) == set(toolgrammar._OPTIONS)
    assert keywords(toolgrammar._new_engine) == set(toolgrammar._OPTIONS)
    message = toolgrammar.parse("hermes", "hi", ids="sequential", whitespace="trim")
    assert message.content == "hi"
    with pytest.raises(TypeError, match="no_such_option"):
        toolgrammar.parse("hermes", "hi", no_such_option=True)
