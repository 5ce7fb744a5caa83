"""A one-quote Python string closes only at a quote that `,` `)` `]` `}` (inside a value
also `:`), a marker or the end of output follows: templates write values unescaped."""

from __future__ import annotations

import json

import pytest

import toolgrammar
from toolgrammar.check.invariants import run, split_at
from toolgrammar.runtime.python_calls import _literal, _requote

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
    "cmd": {"type": "string"}, "rows": {"type": "array"}, "n": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
}}}}]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("['it's', 'x']", ["it's", "x"]),
        ("{'k': 'a'b'}", {"k": "a'b"}),
        ("'echo 'hi' x'", "echo 'hi' x"),
        ('"say "yes" now"', 'say "yes" now'),
        ("['a', 'b']", ["a", "b"]),
        ("'''it's'''", "it's"),
        ("[it's]", "[it's]"),  # not a literal either way: its text
    ],
)
def test_literal_reads_unescaped_quotes(raw: str, expected: object) -> None:
    assert _literal(raw) == expected


def test_requote_leaves_well_formed_literals_alone() -> None:
    assert _requote("['a', 'b\\'c']") is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("cmd='echo 'hi' x'", {"cmd": "echo 'hi' x"}),
        ("cmd='a' , n='b'", {"cmd": "a", "n": "b"}),
        ("n='it's 3'", {"n": "it's 3"}),
        ("rows=['it's'], cmd='x'", {"rows": ["it's"], "cmd": "x"}),
    ],
)
def test_calls_read_unescaped_quotes_whole_and_streamed(body: str, expected: dict) -> None:
    text = f"[f({body})]"
    whole = toolgrammar.parse("pythonic", text, TOOLS, ids="sequential")
    assert json.loads(whole.tool_calls[0].function.arguments) == expected
    _, streamed = run("pythonic", split_at(text, list(range(1, len(text)))), TOOLS, {})
    assert streamed == whole


def test_a_string_with_simple_escapes_is_decoded() -> None:
    text = "<|tool_call_start|>[f(s='a\\nb\\'c\\\\d\"e', n=3)]<|tool_call_end|>"
    message = toolgrammar.parse("lfm2", text)
    assert json.loads(message.tool_calls[0].function.arguments) == {"s": "a\nb'c\\d\"e", "n": 3}
