"""A Python-call string already whole in the text is read at once (one regex match and one
pass over its escapes); it must read exactly as the character loop reads it, one
character at a time, whatever its escapes, quotes and the markers around it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.check.invariants import run, split_at

PIECES = st.sampled_from(
    [
        "a", "é", "x y", "<", "\\n", "\\t", "\\\\", "\\'", '\\"', "\\0", "\\a", "\\v", "\\\n",
        "\\x41", "\\u00e9", "\\U0001F600", "\\ud83d", "\\101", "\\N{BULLET}", "\\q", "\\",
        '"', "'", "\n", "\x01", "<|tool_call_end|>", "<|tool_call_start|>", "]", ")",
    ]
)  # fmt: skip


@st.composite
def outputs(draw: st.DrawFn) -> str:
    quote = draw(st.sampled_from(["'", '"', "'''"]))
    body = "".join(draw(st.lists(PIECES, max_size=12)))
    closed = draw(st.booleans())
    tail = draw(st.sampled_from(["", ", n=3", ")"]))
    return (
        "<|tool_call_start|>[f(s="
        + quote
        + body
        + (quote + tail + ")]<|tool_call_end|>" if closed else "")
    )


@settings(max_examples=400, deadline=None)
@given(outputs())
def test_a_whole_python_string_reads_as_one_character_at_a_time_reads_it(text: str) -> None:
    whole = toolgrammar.parse("lfm2", text, None, ids="sequential")
    _, streamed = run("lfm2", split_at(text, list(range(1, len(text)))), None, {})
    assert whole == streamed
    for call in whole.tool_calls:
        json.loads(call.function.arguments)


def test_a_string_with_simple_escapes_is_decoded() -> None:
    text = "<|tool_call_start|>[f(s='a\\nb\\'c\\\\d\"e', n=3)]<|tool_call_end|>"
    message = toolgrammar.parse("lfm2", text)
    assert json.loads(message.tool_calls[0].function.arguments) == {"s": "a\nb'c\\d\"e", "n": 3}
