"""`json_call_array(bare=true)`, `skip(keep=true)` and the early end of a name that holds JSON,
on small grammars of their own: the constructs, apart from any family's corpus."""

from __future__ import annotations

from typing import Any

import pytest

from toolgrammar.runtime.deltas import assemble, message_of
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.policies import Policies
from toolgrammar.runtime.schemas import ToolSchemas
from toolgrammar.runtime.spec import JsonCallArray, Skip
from grammar_text import spec_of

BARE = """
family bare_test
call "<c>" ws json_call_array(bare=true)
"""

KEEP = """
family keep_test
call "<c>" ws skip(until="[", keep=true) json_call_array()
"""

TWO_BODIES = """
family two_bodies_test
call "<c>" ws name(until=["<k>", "</c>"]) xml_params(open="<k>", key_end="=", value_end=";") "</c>"
call "<c>" ws json_call() ws "</c>"
"""


def read(text: str, output: str, finish: str = "stop") -> dict[str, Any]:
    """The message of `output` read whole, checked equal to the one streamed a character at
    a time (the same engine either way: the two paths must agree)."""
    spec = spec_of(text)
    # these cases pin bodies and kept prose, written with the whitespace trimmed around them
    trim = Policies(whitespace="trim")
    content, reasoning, calls = Engine(spec, ToolSchemas(None), policies=trim).whole(output, finish)
    streamer = Engine(spec, ToolSchemas(None), policies=trim)
    deltas = [d for ch in output for d in streamer.feed(ch)] + streamer.finish(finish)
    whole, got = (
        {
            "content": message.content,
            "calls": [(c.function.name, c.function.arguments) for c in message.tool_calls or []],
        }
        for message in (message_of(content, reasoning, calls, None), assemble(deltas))
    )
    assert got == whole
    return whole


def test_the_new_arguments_lower_to_their_spec_fields() -> None:
    bare = spec_of(BARE).call[-1]
    keep = spec_of(KEEP).call[-2]
    assert isinstance(bare, JsonCallArray) and bare.bare
    assert isinstance(keep, Skip) and keep.keep and keep.until == ("[",)
    assert JsonCallArray().bare is False and Skip(until=("x",)).keep is False


@pytest.mark.parametrize(
    ("output", "content", "calls"),
    [
        ('<c>[{"name": "f", "arguments": {"a": 1}}]', None, [("f", '{"a": 1}')]),
        ('<c>{"name": "f", "arguments": {"a": 1}}', None, [("f", '{"a": 1}')]),
        (
            '<c>{"name": "f", "arguments": {}} , {"name": "g", "arguments": {"b": 2}} after',
            "after",
            [("f", "{}"), ("g", '{"b": 2}')],
        ),
        ('<c>{"name": "f", "arguments": {}}, then', ", then", [("f", "{}")]),
        ('<c>{"name": "f", "arguments": {}}]', "]", [("f", "{}")]),
        ('<c>{"x": 1}', '<c>{"x": 1}', []),
    ],
)
def test_bare_lists(output: str, content: str | None, calls: list[tuple[str, str]]) -> None:
    """Without brackets, objects separated by commas are calls; what does not go on with
    `, {` is the text after them, never lost."""
    assert read(BARE, output) == {"content": content, "calls": calls}


def test_a_bare_list_waits_for_what_follows_a_comma() -> None:
    """`, ` at the end of a chunk may still be followed by `{`: the stream keeps it back."""
    spec = spec_of(BARE)
    engine = Engine(spec, ToolSchemas(None))
    engine.feed('<c>{"name": "f", "arguments": {}}, ')
    assert not any(d.content for d in engine.feed(" "))
    rest = engine.feed('{"name": "g", "arguments": {}}') + engine.finish()
    assert [c.function.name for d in rest for c in d.tool_calls if c.function.name] == ["g"]


@pytest.mark.parametrize(
    ("output", "finish", "content", "calls"),
    [
        ('Hi <c> Sure: [{"name": "f", "arguments": {}}]', "stop", "Hi Sure:", [("f", "{}")]),
        ("<c> no list here", "stop", "<c> no list here", []),
        ("<c> a [1] list", "stop", "<c> a [1] list", []),
        ("<c> cut before any list", "length", "<c> cut before any list", []),
        # cut before the call is known: the prose goes with the unfinished opener at
        # length, and back with it at a normal stop (the stop only adds)
        ('<c> Sure: [{"na', "length", None, []),
        ('<c> Sure: [{"na', "stop", '<c> Sure: [{"na', []),
        ('<c> Sure: <c>[{"name": "f", "arguments": {}}]', "stop", "<c> Sure:", [("f", "{}")]),
    ],
)
def test_kept_prose(
    output: str, finish: str, content: str | None, calls: list[tuple[str, str]]
) -> None:
    """`skip(keep=true)`: the prose is content once the call is known; when no call follows,
    it goes back with the opener; the family's next opener ends it."""
    assert read(KEEP, output, finish) == {"content": content, "calls": calls}


def test_a_json_body_is_the_next_shape_and_streams() -> None:
    """A name that begins with `{` is no name: the JSON shape reads the body at once, so its
    arguments stream before the closer arrives."""
    output = '<c>{"name": "f", "arguments": {"a": 12345678901234567890123}}</c><c>g<k>b=2;</c>'
    assert read(TWO_BODIES, output) == {
        "content": None,
        "calls": [("f", '{"a": 12345678901234567890123}'), ("g", '{"b": "2"}')],
    }
    engine = Engine(spec_of(TWO_BODIES), ToolSchemas(None))
    deltas = engine.feed('<c>{"name": "f", "arguments": {"a": "xy')
    assert "".join(c.function.arguments or "" for d in deltas for c in d.tool_calls) == '{"a": "xy'
