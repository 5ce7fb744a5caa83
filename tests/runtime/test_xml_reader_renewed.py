"""An `xml_params` call's reader is renewed for the next call of the same item rather than
made again (`Engine._end_call` keeps it, `DialectSink._dialect` renews it:
`XmlParamsReader.renew`). It is a shortcut: each call of a stream reads as it does alone in
a stream of its own, and every feed gives the same deltas with the shortcuts on and off,
at every split, whatever the call before left in the reader (a wrapper unwrapped, a typed
value held, a key dropped, a value cut by the next call, a CDATA section, a JSON body)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.readers import feeds_at, readers_fed
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.render import render_output
from toolgrammar.runtime.registry import get_spec

TOOLS = [
    function_tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
    function_tool("set_options", {"tags": {"type": "array"}, "on": {"type": "boolean"}}),
]

# families of the reader's kinds of markup: a value opener (iquest_q1, spark25), a key
# pattern with CDATA and entities (minicpm5), implicit ends (mimo), a trimmed newline
# (qwen3_coder), a JSON body and a key's JSON flag (deepseek_v4), stripped values (dots)
FAMILIES = ("iquest_q1", "spark25", "minicpm5", "mimo", "qwen3_coder", "deepseek_v4", "dots")

# calls that leave a reader in different states when they end
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("get_weather", {"arguments": {"city": "Oslo", "days": 2}}),  # a wrapper: unwrapped
    ("get_weather", {"days": 4, "city": "Rome"}),  # a typed value first
    ("get_weather", {}),
    ("get_weather", {"city": "a<b & c\nd", "days": "x"}),  # entities, a newline, untypable
    ("set_options", {"tags": ["a", 1], "on": True, "extra": "k"}),  # an undeclared key
    ("set_options", {"on": False, "days": "5"}),  # another tool's key: never its schema
]

OPTIONS: tuple[dict[str, Any], ...] = ({}, {"undeclared_params": "drop"})


def _text(family: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The calls as the family writes them (not read back: a wrapper reads as its members,
    an untypable value as its text)."""
    return render_output(get_spec(family), list(calls))


def _feeds(family: str, text: str, cuts: list[int], finish: str, **options: Any) -> list:
    return feeds_at(family, TOOLS, text, cuts, finish, **options)


def _calls(family: str, text: str, size: int, **options: Any) -> list[tuple[str, Any]]:
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential", **options)
    deltas = [d for at in range(0, len(text), size) for d in parser.feed(text[at : at + size])]
    message = toolgrammar.assemble(deltas + parser.finish("stop"))
    return [(c.function.name, c.function.arguments) for c in message.tool_calls or []]


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    family=st.sampled_from(FAMILIES),
    picks=st.lists(st.integers(0, len(CALLS) - 1), min_size=2, max_size=4),
    options=st.sampled_from(OPTIONS),
    finish=st.sampled_from(["stop", "length"]),
)
def test_every_feed_is_the_same_with_shortcuts_off(
    data: Any, family: str, picks: list[int], options: dict[str, Any], finish: str
) -> None:
    """Calls one after another, some cut short where the next begins (a value, a key or a
    marker left open), the text split anywhere: the same deltas, feed for feed."""
    parts = []
    for pick in picks:
        part = _text(family, [CALLS[pick]])
        if data.draw(st.booleans(), label="cut"):
            part = part[: data.draw(st.integers(1, len(part) - 1), label="cut at")]
        parts.append(part)
    text = "".join(parts)
    cuts = data.draw(st.lists(st.integers(1, len(text) - 1), max_size=12), label="splits")
    with shortcuts_set(True):
        fast = _feeds(family, text, cuts, finish, **options)
    with shortcuts_set(False):
        slow = _feeds(family, text, cuts, finish, **options)
    assert fast == slow


@pytest.mark.parametrize("size", (1, 16, 1000))
@pytest.mark.parametrize("family", FAMILIES)
def test_each_call_reads_as_it_does_alone(family: str, size: int) -> None:
    for options in OPTIONS:
        with shortcuts_set(True):
            together = _calls(family, _text(family, CALLS), size, **options)
            alone = [
                call
                for pair in CALLS
                for call in _calls(family, _text(family, [pair]), size, **options)
            ]
        with shortcuts_set(False):
            slow = _calls(family, _text(family, CALLS), size, **options)
        assert together == alone == slow
        assert len(together) == len(CALLS)
    # (what the calls read as: the wrapper unwrapped, the untypable value kept as text)
    assert json.loads(together[1][1]) == {"city": "Oslo", "days": 2}
    assert json.loads(together[4][1])["days"] == "x"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_reader_is_renewed(family: str) -> None:
    """(the comparisons above mean something: the later calls do read with the first's
    reader, and the end of the output lets it go)"""
    text = _text(family, CALLS[:4])
    with shortcuts_set(True):
        parser = toolgrammar.StreamParser(family, TOOLS)
        engine = parser._engine
        readers = readers_fed(parser, text)
        parser.finish()
        assert len(readers) == 1
        assert type(readers[0]).__name__ == "XmlParamsReader"
        assert engine._spare is None
    with shortcuts_set(False):
        parser = toolgrammar.StreamParser(family, TOOLS)
        readers = readers_fed(parser, text)
        assert len(readers) >= 3  # (a call with no parameter may start and end in one feed)
