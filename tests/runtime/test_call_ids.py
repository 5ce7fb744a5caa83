"""The model's own call id, read by `skip(id=true)` before the call's name (Solar Open's
`<|tool_call:begin|>ID<|tool_call:name|>NAME`): it is the call's id in the first delta of
the call, whole and streamed; `render` writes one and the export accepts it."""

from __future__ import annotations

import pytest

import toolgrammar
from toolgrammar.runtime.render import written_id
from toolgrammar.runtime.spec import Skip
from grammar_text import spec_of

GRAMMAR = (
    "family x\n"
    'call "<c>" skip(until="<n>", max_len=16, id=true) "<n>" name(until="<a>") "<a>" '
    'json_args "</c>"\n'
)
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
SOLAR = (
    "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather"
    '<|tool_call:args|>{"city": "Paris"}<|tool_call:end|><|tool_call:begin|>f6g7h8i9j0'
    '<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Rome"}<|tool_call:end|><|calls|>'
)


def test_the_argument_lowers_onto_the_skip() -> None:
    assert spec_of(GRAMMAR).call[1] == Skip(until=("<n>",), max_len=16, id=True, line=2)


@pytest.mark.parametrize("step", [1, 3, 7, len(SOLAR)])
def test_the_id_read_is_the_calls_id_in_its_first_delta(step: int) -> None:
    parser = toolgrammar.StreamParser("solar_open", ids="sequential")
    firsts = []
    for at in range(0, len(SOLAR), step):
        for delta in parser.feed(SOLAR[at : at + step]):
            for call in delta.to_dict().get("tool_calls", []):
                if "id" in call:
                    firsts.append((call["index"], call["id"], call["function"]["name"]))
    parser.finish("stop")
    assert firsts == [(0, "a1b2c3d4e5", "get_weather"), (1, "f6g7h8i9j0", "get_weather")]


def test_the_whole_output_keeps_the_ids() -> None:
    message = toolgrammar.parse("solar_open", SOLAR, finish_reason="stop")
    assert [c.id for c in message.tool_calls] == ["a1b2c3d4e5", "f6g7h8i9j0"]


def test_an_empty_id_gets_one_of_ours() -> None:
    text = SOLAR.replace("a1b2c3d4e5", "")
    message = toolgrammar.parse("solar_open", text, ids="sequential")
    assert [c.id for c in message.tool_calls][1] == "f6g7h8i9j0"
    assert message.tool_calls[0].id not in ("", "f6g7h8i9j0")


def test_render_writes_the_given_id_or_one_of_its_own() -> None:
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e5"}]
    calls.append({"name": "get_weather", "arguments": {"city": "Rome"}})
    text = toolgrammar.render("solar_open", calls)
    assert "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather" in text
    assert f"<|tool_call:begin|>{written_id(1)}<|tool_call:name|>get_weather" in text
    message = toolgrammar.parse("solar_open", text)
    assert [c.id for c in message.tool_calls] == ["a1b2c3d4e5", written_id(1)]


def test_the_written_id_has_solar_opens_shape() -> None:
    assert all(len(written_id(i)) == 10 and written_id(i).isalnum() for i in (0, 7, 123))


def test_the_export_accepts_the_rendered_id_and_none() -> None:
    from support.export_helpers import accepts  # llguidance: the test extra

    from toolgrammar.export import export_grammar

    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    grammar = export_grammar("solar_open", tools, mode="required")
    rendered = toolgrammar.render("solar_open", [{"name": "f", "arguments": {}}], tools)
    assert f"<|tool_call:begin|>{written_id(0)}<|tool_call:name|>f" in rendered
    assert accepts(grammar, rendered)
    assert accepts(grammar, rendered.replace(written_id(0), ""))  # the parser reads it too
    assert not accepts(grammar, rendered.replace(written_id(0), "an id"))  # not prose
