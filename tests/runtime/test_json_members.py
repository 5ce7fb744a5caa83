"""A JSON object's members read in one step (`json_stream._MEMBER` after a key,
`_COLON_MEMBER` after a key read piece by piece) and a member's key looked up in its
tool's typed keys (`json_args.JsonArgsReader._member`), and a typed scalar given back as
written (`_typed`): shortcuts, so every feed of an object streamed in pieces cut anywhere
gives the same deltas with the shortcuts on and off."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.compiled import refuse_unreached
from support.readers import feeds_at
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set

TOOLS = [
    function_tool(
        "f",
        {
            "n": {"type": "integer"},
            "b": {"type": "boolean"},
            "s": {"type": "string"},
            "o": {"type": "object"},
            "a": {"type": "array", "items": {"type": "integer"}},
        },
    )
]
WS = st.sampled_from(["", "", " ", "\n  ", "\t"])
KEYS = st.sampled_from(['"n"', '"b"', '"s"', '"o"', '"a"', '"k\\u0065y"', '"other"', '"name"'])
VALUES = st.sampled_from(
    [
        "3",
        "-12.5e3",
        "012",
        "30",
        "true",
        "nul",
        "null",
        "truex",
        '"x"',
        '"4"',
        '"true"',
        '"a\\"b"',
        '"\\u00e9"',
        "{}",
        '{"n": "5"}',
        '["1", 2]',
        "[1]",
        "1]",
        "-",
    ]
)


@st.composite
def objects(draw: Any) -> str:
    """An arguments object: a few members of assorted keys and values, spaced anyhow, at
    times with a comma missing, a trailing comma or no closer."""
    members = []
    for _ in range(draw(st.integers(0, 4))):
        space = [draw(WS) for _ in range(3)]
        members.append(draw(KEYS) + space[0] + ":" + space[1] + draw(VALUES) + space[2])
    sep = draw(st.sampled_from([",", ",", ", ", " ,\n"]))
    body = sep.join(members)
    return "{" + draw(WS) + body + draw(st.sampled_from(["}", "}", ",}", "", "} "]))


def per_feed(family: str, text: str, cuts: list[int], finish: str) -> list[list[dict]]:
    return feeds_at(family, TOOLS, text, cuts, finish)


def both_ways(family: str, text: str, cuts: list[int], finish: str) -> None:
    with shortcuts_set(True):
        fast = per_feed(family, text, cuts, finish)
    with shortcuts_set(False):
        slow = per_feed(family, text, cuts, finish)
    assert fast == slow, (text, cuts)


@settings(max_examples=400, deadline=None)
@given(objects(), st.data(), st.sampled_from(["stop", "length"]))
def test_members_streamed_in_pieces_read_as_the_character_loop(
    body: str, data: st.DataObject, finish: str
) -> None:
    family, text = data.draw(
        st.sampled_from(
            [
                ("mistral", "[TOOL_CALLS]f[ARGS]" + body),
                ("hermes", '<tool_call>\n{"name": "f", "arguments": ' + body + "}\n</tool_call>"),
            ]
        )
    )
    cuts = sorted(
        set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), min_size=1, max_size=4)))
    )
    both_ways(family, text, [cut for cut in cuts if cut < len(text)], finish)


def test_a_bounded_name_after_a_key_cut_in_its_middle() -> None:
    """`{"id": …, "na` then `me": "xxx…"`: the name's key is read piece by piece, so its
    colon, and the name's string whole in the same feed, are `_colon_member`'s; the name is
    longer than a name may be, so the loop reads it to its bound and gives the call up."""
    head = '<tool_call>\n{"id": "c1", "na'
    rest = 'me": "' + "x" * 4000 + '", "arguments": {"n": 3}}\n</tool_call>'
    name_end = len(head) + rest.index('",') + 1  # (the feed after it decides the call)
    for finish in ("stop", "length"):
        both_ways("hermes", head + rest, [len(head)], finish)
        both_ways("hermes", head + rest, [len(head), name_end], finish)
        both_ways("hermes", head + rest, [len(head) + 1, name_end + 3], finish)


def test_typed_members_as_written_or_typed() -> None:
    """A number, literal or null is never retyped; a string where the schema rules it out
    is."""
    parser = toolgrammar.StreamParser("mistral", TOOLS, ids="sequential")
    text = '[TOOL_CALLS]f[ARGS]{"n": 3, "b": true, "a": ["1", 2], "o": null, "s": "4"}'
    deltas = parser.feed(text) + parser.finish("stop")
    arguments = "".join(
        call["function"].get("arguments", "")
        for delta in deltas
        for call in delta.to_dict().get("tool_calls", [])
    )
    assert arguments == '{"n": 3, "b": true, "a": [1, 2], "o": null, "s": "4"}'


WRAPPERS = st.sampled_from(
    [
        '"arguments": {}',
        '"arguments": {"n": "2"}',
        '"arguments": "x"',
        '"input": {"s": 1}',
        '"s": "w"',
    ]
)


@settings(max_examples=300, deadline=None)
@given(objects(), WRAPPERS, st.data(), st.sampled_from(["stop", "length"]))
def test_members_after_a_wrapper_read_as_the_character_loop(
    body: str, wrapper: str, data: st.DataObject, finish: str
) -> None:
    """The reader tells its scanner once which keys it types (`JsonScanner.typed_only`):
    every other key then streams without `on_member`'s call. After a first key that is a
    wrapper (one that writes no member: the next member's comma is dropped), a plain
    first key, typed or streamed keys, in 16-char deltas or cut anywhere, the deltas are
    those of the character loop asking for every key."""
    inner = body[1:].lstrip(" \t\n")
    joined = "{" + wrapper + (", " + inner if inner[:1] not in ("}", ",", "") else inner)
    text = "[TOOL_CALLS]f[ARGS]" + joined
    if data.draw(st.booleans()):
        cuts = list(range(16, len(text), 16))
    else:
        drawn = st.lists(st.integers(1, max(1, len(text) - 1)), min_size=1, max_size=6)
        cuts = [cut for cut in sorted(set(data.draw(drawn))) if cut < len(text)]
    both_ways("mistral", text, cuts, finish)


def test_a_key_told_once_is_not_asked_again(monkeypatch: Any) -> None:
    """With the shortcuts on, the reader's `_member` is asked for the first key only (and
    for no streamed key after it); off, for every key: the shortcut is taken."""
    from toolgrammar.runtime import json_args

    refuse_unreached(json_args.JsonArgsReader, "_member")  # (compiled: bound when compiled)
    asked: list[str] = []
    member = json_args.JsonArgsReader._member

    def counted(self: Any, key: str) -> int:
        asked.append(key)
        return member(self, key)

    monkeypatch.setattr(json_args.JsonArgsReader, "_member", counted)
    text = '[TOOL_CALLS]f[ARGS]{"s": "a", "other": "b", "name": "c", "n": "4"}'
    with shortcuts_set(True):
        fast = per_feed("mistral", text, list(range(5, len(text), 5)), "stop")
    told = list(asked)
    asked.clear()
    with shortcuts_set(False):
        slow = per_feed("mistral", text, list(range(5, len(text), 5)), "stop")
    assert fast == slow
    assert asked == ["s", "other", "name", "n"]
    assert told == ["s", "n"]
