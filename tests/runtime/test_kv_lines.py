"""kv_lines: `key: value` lines (a response template's `kv-lines`), read and streamed."""

from __future__ import annotations

from grammar_text import read_both, spec_of
from toolgrammar.runtime.deltas import sequential_call_id
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.schemas import ToolSchemas

GRAMMAR = """family kv
call "<call name=\\"" name(until="\\">") "\\">" ws kv_lines(line_sep="\\n", kv_sep=":") ws "</call>"
"""
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
            },
        },
    }
]
SPEC = spec_of(GRAMMAR)


def test_lines_are_split_at_the_first_separator_and_stripped() -> None:
    text = '<call name="f">\n s :  a: b  \nn: 4\n</call>'
    assert read_both(SPEC, text, TOOLS, "stop") == (None, None, [("f", '{"s": "a: b", "n": 4}')])


def test_a_line_without_a_separator_or_a_key_is_skipped() -> None:
    text = '<call name="f">\njust words\n: orphan\n\ns: x</call>'
    assert read_both(SPEC, text, TOOLS, "stop") == (None, None, [("f", '{"s": "x"}')])


def test_a_repeated_key_is_written_again() -> None:
    text = '<call name="f">s: a\ns: b</call>'
    assert read_both(SPEC, text, TOOLS, "stop")[2] == [("f", '{"s": "a", "s": "b"}')]


def test_a_value_of_the_wrong_type_stays_text() -> None:
    text = '<call name="f">n: many</call>'
    assert read_both(SPEC, text, TOOLS, "stop")[2] == [("f", '{"n": "many"}')]


def test_a_string_value_streams_as_it_arrives_and_a_typed_one_at_its_line_end() -> None:
    engine = Engine(SPEC, ToolSchemas(TOOLS), call_id=sequential_call_id)
    sent = []
    for piece in ['<call name="f">s: hel', "lo  ", "wor", "ld\nn: 1", "2", "\n"]:
        sent.append(
            "".join(
                d.tool_calls[0].function.arguments or "" for d in engine.feed(piece) if d.tool_calls
            )
        )
    assert sent == ['{"s": "hel', "lo", "  wor", 'ld"', "", ', "n": 12']


def test_a_cut_keeps_the_open_value_without_a_partial_closer() -> None:
    text = '<call name="f">s: abc</ca'
    assert read_both(SPEC, text, TOOLS, "length")[2] == [("f", '{"s": "abc"}')]
