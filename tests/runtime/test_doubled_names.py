"""`name(doubled=SEP)`: a name written twice around SEP is the requested tool it doubles.

The corpus pins the Muse cases whole and streamed; these pin the rule itself on a minimal
grammar's spec, and that `render` writes the name the caller gave.
"""

from __future__ import annotations

import pytest

import toolgrammar
from toolgrammar.runtime.spec import Name
from toolgrammar.runtime.registry import get_spec


def _tools(*names: str) -> list[dict]:
    return [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in names
    ]


def _name(written: str, tools: list[dict] | None) -> str:
    text = (
        f' to={written}<|message|><atem:invoke name="{written}">'
        '<atem:parameter name="q">x</atem:parameter></atem:invoke><|eom|>'
    )
    [call] = toolgrammar.parse("muse", text, tools).tool_calls
    return call.function.name


def test_muse_grammar_asks_for_it() -> None:
    names = [
        item for shape in get_spec("muse").shapes for item in shape.call if isinstance(item, Name)
    ]
    assert [n.doubled for n in names] == ["."]


@pytest.mark.parametrize(
    ("written", "tools", "read"),
    [
        ("ping.ping", ["ping"], "ping"),  # only the short name is requested
        ("ping.ping", ["ping", "ping.ping"], "ping.ping"),  # the doubled name is a tool itself
        ("ping.ping", None, "ping.ping"),  # no tools: nothing to match against
        ("ping.ping", [], "ping.ping"),
        ("ping.pong", ["ping", "pong"], "ping.pong"),  # halves differ
        ("ns.ping", ["ping"], "ns.ping"),  # never matched by its last segment
        ("ping.ping.ping", ["ping"], "ping.ping.ping"),
    ],
)
def test_doubled_name_collapses_only_to_a_requested_tool(
    written: str, tools: list[str] | None, read: str
) -> None:
    assert _name(written, None if tools is None else _tools(*tools)) == read


def test_a_collapsed_name_is_known_to_unknown_tools_drop() -> None:
    text = ' to=ping.ping<|message|><atem:invoke name="ping.ping"></atem:invoke><|eom|>'
    message = toolgrammar.parse("muse", text, _tools("ping"), unknown_tools="drop")
    assert [c.function.name for c in message.tool_calls] == ["ping"]


def test_render_writes_the_name_as_given() -> None:
    calls = [{"name": "ping", "arguments": {"q": "x"}}]
    text = toolgrammar.render("muse", calls, _tools("ping"))
    assert 'name="ping"' in text and "ping.ping" not in text
