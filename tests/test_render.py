"""`toolgrammar.render`: calls written in a family's markup parse back to the same calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import TOOLS
from support.render_samples import call_for, carries
from toolgrammar.cli import main
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.render import render_output

FAMILIES = sorted({get_spec(name).name for name in toolgrammar.families()})
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hello\nworld"}},
]


@pytest.mark.parametrize("family", FAMILIES)
def test_canonical_calls_round_trip(family: str) -> None:
    text = toolgrammar.render(family, CALLS, TOOLS, content="Sure.")
    message = toolgrammar.parse(family, text, TOOLS, reasoning_open=False)
    # verbatim whitespace keeps the line break the renderer lays the text out with; trimmed,
    # the text is exactly what was written
    assert message.content is not None and message.content.strip() == "Sure."
    trimmed = toolgrammar.parse(family, text, TOOLS, reasoning_open=False, whitespace="trim")
    assert trimmed.content == "Sure."
    got = [
        {"name": c.function.name, "arguments": json.loads(c.function.arguments)}
        for c in message.tool_calls
    ]
    assert got == CALLS


def _spec_values(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _spec_values(v)]
    if isinstance(value, list):
        return [s for v in value for s in _spec_values(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_calls_round_trip(family: str, data: st.DataObject) -> None:
    spec = with_params(get_spec(family))
    tools = st.sampled_from(TOOLS).flatmap(lambda tool: call_for(tool, spec))
    calls = data.draw(st.lists(tools, min_size=1, max_size=3))
    text = toolgrammar.render(family, calls, TOOLS)  # raises RenderError if it would not
    message = toolgrammar.parse(family, text, TOOLS, reasoning_open=False)
    got = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert got == [tuple(call) for call in calls]
    assert all(carries(spec, s) for _, args in calls for s in _spec_values(args))


def test_a_value_the_markup_cannot_carry_is_a_clear_error() -> None:
    calls = [{"name": "write_file", "arguments": {"content": "a</parameter>b"}}]
    with pytest.raises(toolgrammar.RenderError, match="cannot write call 0"):
        toolgrammar.render("qwen3_coder", calls, TOOLS)
    with pytest.raises(toolgrammar.RenderError, match="a call is a name and an arguments"):
        toolgrammar.render("hermes", [{"name": 3}], TOOLS)
    for value in (float("inf"), float("nan"), {1, 2}):  # 1e999 in JSON reads as inf
        calls = [{"name": "configure", "arguments": {"ratio": value}}]
        with pytest.raises(toolgrammar.RenderError, match="'configure' are not JSON"):
            toolgrammar.render("kimi_k2", calls, TOOLS)


def test_cli_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps(CALLS), encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    assert main(["render", "kimi_k2", str(calls), "--tools", str(tools), "--content", "Hi"]) == 0
    out = capsys.readouterr().out
    # nothing between the content and the section: Kimi K2's template writes nothing there
    assert out.startswith(
        "Hi<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    )
    calls.write_text("not json", encoding="utf-8")
    assert main(["render", "kimi_k2", str(calls)]) == 2
    assert "not JSON" in capsys.readouterr().err


@pytest.mark.parametrize("family", FAMILIES)
def test_arguments_as_pairs_may_repeat_a_key(family: str) -> None:
    """A model looping on one parameter writes it again: every pair is written, in order, and
    the call reads back as JSON does a repeated key (first position, last value)."""
    spec = with_params(get_spec(family))
    pairs = [("path", "a.txt"), ("content", "one"), ("content", "two")]
    text = render_output(spec, [("write_file", pairs)])
    assert text.count("one") == 1 and text.count("two") == 1
    assert text.index("one") < text.index("two")
    message = toolgrammar.parse(family, text, TOOLS, reasoning_open=False)
    [call] = message.tool_calls
    assert json.loads(call.function.arguments) == {"path": "a.txt", "content": "two"}
    as_dict = {"path": "a.txt", "content": "one"}
    assert render_output(spec, [("write_file", list(as_dict.items()))]) == render_output(
        spec, [("write_file", as_dict)]
    )


def test_a_dialect_that_lists_calls_writes_them_in_one_list() -> None:
    text = toolgrammar.render("pythonic", CALLS, TOOLS)
    assert text == (
        "[get_weather(city='Paris', days=3), write_file(path='notes.txt', content='hello\\nworld')]"
    )
    text = toolgrammar.render("jamba", CALLS, TOOLS)
    assert text.count("<tool_calls>") == 1 and text.count('{"name": ') == 2


WEATHER = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
AS_THE_MODEL_WRITES = {
    # ws(write="\n") where the chat template writes a newline
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>"
    ),
    # lazy literals ("…"??) the model does not write
    "llama3_json": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "xlam": '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
}


@pytest.mark.parametrize("family", sorted(AS_THE_MODEL_WRITES))
def test_render_writes_the_spelling_the_grammar_gives(family: str) -> None:
    assert toolgrammar.render(family, WEATHER, TOOLS) == AS_THE_MODEL_WRITES[family]


def test_content_is_written_in_the_familys_own_block() -> None:
    """A grammar's `content` statement spells content as the model writes it (Functionary
    v3.2's `>>>all\\n` block, ended by the next block); the parser reads it back."""
    text = toolgrammar.render("functionary_v32", WEATHER, TOOLS, content="Sure.", after="Done.")
    assert text == '>>>all\nSure.>>>get_weather\n{"city": "Paris"}>>>all\nDone.'
    message = toolgrammar.parse("functionary_v32", text, TOOLS)
    assert message.content == "Sure.Done."
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    # the prompt ends with `>>>`: the model writes the rest of the block
    assert toolgrammar.parse("functionary_v32", text[3:], TOOLS).content == "Sure.Done."
    # bare text where the grammar has no `content` statement
    assert toolgrammar.render("hermes", WEATHER, TOOLS, content="Sure.").startswith("Sure.\n<")


TWO = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Oslo"}},
]


def test_render_writes_between_the_parts_only_what_the_grammar_says() -> None:
    # hermes: `render between="\n" after_content="\n" after_reasoning="\n\n"
    # in_reasoning=["\n", "\n"]`, what the Qwen templates write
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "%s"}}\n</tool_call>'
    text = toolgrammar.render("hermes", TWO, TOOLS, content="Sure.", reasoning="Hm.")
    assert text == "<think>\nHm.\n</think>\n\nSure.\n" + call % "Paris" + "\n" + call % "Oslo"
    # kimi_k2 has no `render` statement: nothing between the content, the section and its calls
    text = toolgrammar.render("kimi_k2", TWO, TOOLS, content="Sure.", after="Done.")
    assert text.startswith("Sure.<|tool_calls_section_begin|><|tool_call_begin|>")
    assert "<|tool_call_end|><|tool_call_begin|>" in text
    assert text.endswith("<|tool_calls_section_end|>Done.")
    # deepseek_v4: before_calls replaces what follows the reasoning when the calls come next
    spec = toolgrammar.family_spec("deepseek_v4")
    assert render_output(spec, [("get_weather", {"city": "Paris"})], reasoning="Hm.").startswith(
        "<think>Hm.</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke"
    )
    assert render_output(spec, [], content="Hi.", reasoning="Hm.") == "<think>Hm.</think>Hi."


def test_the_render_statement_is_checked(tmp_path: Path) -> None:
    from toolgrammar.compiler.build import compile_grammar_text
    from toolgrammar.compiler.errors import CompileErrors

    bad = (
        'family x\nrender between="," in_section=["\\n"] after_call="\\n" in_reasoning=["", ""]\n'
        'call "<a>" json_args\n'
    )
    with pytest.raises(CompileErrors) as caught:
        compile_grammar_text(bad, "x.tg")
    said = str(caught.value)
    assert '`render` writes whitespace only, not ","' in said
    assert "`in_section` of `render` takes a list of two strings" in said
    assert "unknown argument `after_call` of `render`" in said and "after_calls" in said
    assert "`render in_reasoning=…` needs a `reasoning` statement" in said
    # an `ignore`d marker is markup the model writes after its reasoning (Solar Open's header)
    fine = (
        'family x\nreasoning "<r>" "</r>"\nignore "<h>"\nrender after_reasoning="\\n<h>"\n'
        'call "<a>" json_call\n'
    )
    compile_grammar_text(fine, "x.tg")
    with pytest.raises(CompileErrors, match='not "<i>"'):
        compile_grammar_text(fine.replace('"\\n<h>"', '"<i>"'), "x.tg")
