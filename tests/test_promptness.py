"""Invariant 8: a string value's characters go out in the delta that brings them."""

from __future__ import annotations

import json

import pytest

import toolgrammar
from support.corpus_format import TOOLS

VALUE = 'Line one "quoted" \\ é 中文 😀 a<b and {x}, tab\there\nnext'

HEADS = {
    "qwen3_coder": "<tool_call>\n<function=write_file>\n<parameter=content>\n",
    "hermes": '<tool_call>\n{"name": "write_file", "arguments": {"content": "',
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
    '<|tool_call_argument_begin|>{"content": "',
}
MARKERS = {
    "qwen3_coder": ("</parameter>", "<parameter=", "</function>", "<tool_call>"),
    "hermes": ("</tool_call>", "<tool_call>"),
    "kimi_k2": ("<|tool_call_end|>", "<|tool_call_begin|>", "<|tool_calls_section_end|>"),
}


def _body(family: str) -> str:
    if family == "qwen3_coder":
        return VALUE
    return json.dumps(VALUE, ensure_ascii=False)[1:-1]


def _may_hold(family: str, text: str) -> int:
    """How many trailing characters the parser may legitimately hold back."""
    for size in range(min(len(text), 20), 0, -1):
        if any(marker.startswith(text[-size:]) for marker in MARKERS[family]):
            return size
    if family == "qwen3_coder":
        return 1 if text.endswith("\n") else 0
    # an unfinished escape (a lone backslash, `\u` short of four digits) waits for the rest
    for size in range(0, 6):
        if _decodes(text[: len(text) - size]):
            return size
    raise AssertionError(f"test input is not a JSON string body: {text!r}")


def _decodes(body: str) -> bool:
    try:
        json.loads('"' + body + '"')
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("family", sorted(HEADS))
def test_string_value_streams_char_by_char(family: str) -> None:
    parser = toolgrammar.StreamParser(family, TOOLS)
    sent = "".join(p.function.arguments for d in parser.feed(HEADS[family]) for p in d.tool_calls)
    body = _body(family)
    for i, char in enumerate(body):
        for delta in parser.feed(char):
            sent += "".join(p.function.arguments for p in delta.tool_calls)
        text = body[: i + 1]
        visible = text[: len(text) - _may_hold(family, text)]
        expected = visible if family == "qwen3_coder" else json.loads('"' + visible + '"')
        assert json.loads(sent + '"}')["content"] == expected, (i, char)


@pytest.mark.parametrize("family", sorted(HEADS))
def test_typed_value_waits_until_complete(family: str) -> None:
    parser = toolgrammar.StreamParser(family, TOOLS)
    heads = {
        "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=days>\n12",
        "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"days": "12',
        "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"days": "12',
    }
    deltas = parser.feed(heads[family])
    sent = "".join(p.function.arguments for d in deltas for p in d.tool_calls)
    assert "12" not in sent
    deltas = parser.finish()
    sent += "".join(p.function.arguments for d in deltas for p in d.tool_calls)
    assert json.loads(sent) == {"days": 12}
