"""The markup readers keep what a key reads as per tool, from call to call of one parser
(`DialectSink.tool_memo`), and the typed values they wrote per key: a key of one tool must
never be read by another tool's schema, nor a value written as another value's JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolgrammar
from toolgrammar.runtime.deltas import assemble

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"x": {"type": kind}}},
        },
    }
    for name, kind in (("count", "integer"), ("label", "string"), ("flag", "boolean"))
]

# (tool, value text) per call, one parser: the same key typed by three schemas, in turns
CALLS = [
    ("count", "3"),
    ("label", "3"),
    ("count", "4"),
    ("flag", "true"),
    ("label", "true"),
    ("count", "3"),
    ("flag", "false"),
]
EXPECTED = [
    ("count", {"x": 3}),
    ("label", {"x": "3"}),
    ("count", {"x": 4}),
    ("flag", {"x": True}),
    ("label", {"x": "true"}),
    ("count", {"x": 3}),
    ("flag", {"x": False}),
]


def _output(family: str) -> str:
    """The calls as the family writes several calls in one output (value texts as given)."""
    return toolgrammar.render(family, [(name, {"x": value}) for name, value in CALLS])


def _streamed(family: str, output: str, size: int) -> list[tuple[str, Any]]:
    parser = toolgrammar.StreamParser(family, tools=TOOLS)
    deltas = [d for i in range(0, len(output), size) for d in parser.feed(output[i : i + size])]
    message = assemble(deltas + parser.finish())
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


@pytest.mark.parametrize("family", ["spark25", "qwen3_coder", "minicpm5", "minimax_m3"])
@pytest.mark.parametrize("size", [1, 16, 10_000])
def test_a_key_reads_by_its_own_tool_in_every_call(family: str, size: int) -> None:
    assert _streamed(family, _output(family), size) == EXPECTED


def test_a_call_read_whole_reads_each_of_its_keys_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that repeats its keys (a model looping on two parameters), read whole in one
    piece: each key is read once and found in the tool's memo after, as the state machine
    finds it; reading it again per parameter made such a parse several times slower."""
    from toolgrammar.runtime.schemas import ToolSchemas
    from toolgrammar.runtime.shared_memos import forget

    forget()  # (else a parse of these tools earlier in the process read them)
    asked: list[str] = []
    param_schema = ToolSchemas.param_schema

    def counted(self: ToolSchemas, tool: str, key: str) -> Any:
        asked.append(key)
        return param_schema(self, tool, key)

    monkeypatch.setattr(ToolSchemas, "param_schema", counted)
    params = "".join(
        f'<atem:parameter name="{key}">{index}</atem:parameter>'
        for index in range(20)
        for key in ("old", "new")
    )
    output = (
        ' to=edit<|message|><atem:function_calls><atem:invoke name="edit">\n'
        f"{params}\n</atem:invoke>\n</atem:function_calls><|eom|>"
    )
    tools = [{"type": "function", "function": {"name": "edit", "parameters": {"type": "object"}}}]
    message = toolgrammar.parse("muse", output, tools)
    assert [c.function.name for c in message.tool_calls] == ["edit"]
    assert json.loads(message.tool_calls[0].function.arguments) == {"old": "19", "new": "19"}
    assert sorted(asked) == ["new", "old"]
