"""A lone `arguments`/`input`/`properties` wrapper is unwrapped in every argument dialect.

The corpus pins the peers' cases family by family, whole and streamed at every split; these
pin the conditions themselves (`ToolSchemas.lacks_property`, the first key only) and that
every dialect of the table applies them, streamed one character at a time as whole.
"""

from __future__ import annotations

import json

import pytest

import toolgrammar
from toolgrammar.runtime.schemas import ToolSchemas
from toolgrammar.runtime.unwrap import WRAPPER_KEYS, members_text, wrapped_object

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}
RUN = {
    "type": "function",
    "function": {
        "name": "run",
        "parameters": {"type": "object", "properties": {"input": True}},
    },
}
PING = {"type": "function", "function": {"name": "ping"}}
TOOLS = [WEATHER, RUN, PING]


def test_the_wrapper_words() -> None:
    assert WRAPPER_KEYS == {"arguments", "input", "properties"}


@pytest.mark.parametrize(
    ("tool", "key", "lacks"),
    [
        ("get_weather", "arguments", True),
        ("get_weather", "city", False),
        ("run", "input", False),  # a property whose schema is `true` is still a property
        ("ping", "arguments", False),  # no schema: nothing to compare with
        ("lookup", "arguments", False),  # not a requested tool
    ],
)
def test_lacks_property(tool: str, key: str, lacks: bool) -> None:
    assert ToolSchemas(TOOLS).lacks_property(tool, key) is lacks


def test_no_tools_lack_nothing() -> None:
    assert not ToolSchemas(None).lacks_property("get_weather", "arguments")
    assert not ToolSchemas([]).lacks_property("get_weather", "arguments")


def test_wrapped_object_reads_objects_and_strings_that_write_one() -> None:
    assert wrapped_object({"a": 1}) == {"a": 1}
    assert wrapped_object('{"a": 1}') == {"a": 1}
    assert wrapped_object("{'a': True}") == {"a": True}
    assert wrapped_object("Paris") is None
    assert wrapped_object([1]) is None


def test_members_text_types_each_member_by_its_own_schema() -> None:
    schemas = {"days": {"type": "integer"}}
    assert members_text({"city": "P", "days": "3"}, schemas.get) == '"city": "P", "days": 3'
    assert members_text({}, schemas.get) == ""


# one wrapped call per dialect: (family, text)
WRAPPED = [
    (
        "hermes",
        '<tool_call>\n{"name": "get_weather", "arguments": {"arguments": {"city": "Paris", "days": "3"}}}\n</tool_call>',
    ),
    (
        "kimi_k2",
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"input": {"city": "Paris", "days": 3}}<|tool_call_end|><|tool_calls_section_end|>',
    ),
    (
        "granite",
        '<|tool_call|>[{"name": "get_weather", "arguments": {"properties": "{\\"city\\": \\"Paris\\", \\"days\\": 3}"}}]',
    ),
    (
        "qwen3_coder",
        '<tool_call>\n<function=get_weather>\n<parameter=arguments>\n{"city": "Paris", "days": 3}\n</parameter>\n</function>\n</tool_call>',
    ),
    (
        "minimax_m3",
        ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="get_weather">\n]<]minimax[>[<input>]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[<days>3]<]minimax[>[</days>]<]minimax[>[</input>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>',
    ),
    ("gemma4", '<|tool_call>call:get_weather{arguments:{city:<|"|>Paris<|"|>,days:3}}<tool_call|>'),
    ("pythonic", "[get_weather(properties={'city': 'Paris', 'days': 3})]"),
]


@pytest.mark.parametrize(("family", "text"), WRAPPED, ids=[f for f, _ in WRAPPED])
def test_every_dialect_unwraps_whole_and_streamed(family: str, text: str) -> None:
    whole = toolgrammar.parse(family, text, TOOLS, reasoning_open=False)
    [call] = whole.tool_calls
    assert json.loads(call.function.arguments) == {"city": "Paris", "days": 3}
    parser = toolgrammar.StreamParser(family, tools=TOOLS, reasoning_open=False)
    streamed = ""
    for char in text:
        for delta in parser.feed(char):
            for part in delta.to_dict().get("tool_calls") or ():
                streamed += part.get("function", {}).get("arguments") or ""
    for delta in parser.finish("stop"):
        for part in delta.to_dict().get("tool_calls") or ():
            streamed += part.get("function", {}).get("arguments") or ""
    assert streamed == call.function.arguments


@pytest.mark.parametrize(("family", "text"), WRAPPED, ids=[f for f, _ in WRAPPED])
def test_without_tools_nothing_is_unwrapped(family: str, text: str) -> None:
    [call] = toolgrammar.parse(family, text, None, reasoning_open=False).tool_calls
    assert set(json.loads(call.function.arguments)) & WRAPPER_KEYS
