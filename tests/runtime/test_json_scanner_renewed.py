"""An arguments reader keeps the scanner of an object it read whole and renews it for the
next call's object (`JsonScanner.renew`), and a held member's whole number or literal goes
out at once (`JsonScanner.keeps_scalars`, `_held_value`), and a key cut by a delta is begun
or whole, and ended in one step each (`_KEY_BEGUN`, `_KEY_END`), as is a string value begun
(`_PLAIN_TO_END`) or ended (`_VALUE_END`), and an object is opened with its first key and
closed with its last value (`_object_opens`; `_member`, `_value_closed`), a typed member's
whole number or literal with no side buffer (`_member`): shortcuts, so a stream of calls
cut anywhere gives the same deltas, feed by feed, with the shortcuts on and off, and each
call reads as it does alone."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.compiled import refuse_unreached
from support.readers import feeds_at
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime import json_args, json_call
from toolgrammar.runtime.json_stream import DONE, STREAM, UNWRAP, VALUE, WITHHOLD, JsonScanner

TOOLS = [
    function_tool(
        "f",
        {
            "n": {"type": "integer"},
            "b": {"type": "boolean"},
            "s": {"type": "string"},
            "o": {"type": "object"},
        },
    )
]
# per family: the calls' opener, one call around its arguments, between two calls, closer
CALLS = {
    "mistral": ("", "[TOOL_CALLS]f[ARGS]{args}", "", ""),
    "kimi_k2": (
        "<|tool_calls_section_begin|>",
        "<|tool_call_begin|>functions.f:{n}<|tool_call_argument_begin|>{args}<|tool_call_end|>",
        "",
        "",
    ),
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{args}\n```<｜tool▁call▁end｜>",
        "",
        "",
    ),
    # a call object around them (`json_call`'s outer scanner), its name a member or the key
    "hermes": ("", '<tool_call>\n{"name": "f", "arguments": {args}}\n</tool_call>\n', "", ""),
    "apertus": ("<|tools_prefix|>[", '{"f": {args}}', ", ", "]"),
}
WS = st.sampled_from(["", " ", "\n "])
KEYS = st.sampled_from(['"n"', '"b"', '"s"', '"o"', '"arguments"', '"other"', '"k\\u0065y"'])
VALUES = st.sampled_from(
    ["3", "-1.5e2", "012", "true", "null", "nul", '"4"', '"x"', '"a\\"b"', "{}", '{"n": "5"}']
    + ['{"n": 2, "s": 1}', "[1]", '{"b": "true"}']
    # strings cut anywhere: escapes, control characters, a quote escaped at a cut
    + ['"a\\nb \\"c\\" d\\\\"', '"\\u00e9t\\u00e9 x\\/"', '"tab\there"', '"' + "word " * 9 + '"']
)


@st.composite
def objects(draw: Any) -> str:
    """An arguments object: a few members (a typed one held, a wrapper, nested objects,
    scalars the loop refuses), at times with no closer or a stray character after it."""
    members = [
        draw(KEYS) + draw(WS) + ":" + draw(WS) + draw(VALUES) + draw(WS)
        for _ in range(draw(st.integers(0, 3)))
    ]
    end = draw(st.sampled_from(["}", "}", "}", ",}", "", "} x"]))
    return "{" + draw(WS) + ",".join(members) + end


def stream(family: str, arguments: list[str]) -> str:
    """The calls of `arguments` in `family`'s markup."""
    opener, call, between, closer = CALLS[family]
    calls = (
        call.replace("{args}", args).replace("{n}", str(n)) for n, args in enumerate(arguments)
    )
    return opener + between.join(calls) + closer


def per_feed(family: str, text: str, cuts: list[int], finish: str) -> list[list[dict]]:
    return feeds_at(family, TOOLS, text, cuts, finish)


def calls_of(family: str, text: str, size: int) -> list[tuple[str, str]]:
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential")
    deltas = [d for at in range(0, len(text), size) for d in parser.feed(text[at : at + size])]
    message = toolgrammar.assemble(deltas + parser.finish("stop"))
    return [(call.function.name, call.function.arguments) for call in message.tool_calls or []]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(CALLS)),
    st.lists(objects(), min_size=1, max_size=4),
    st.data(),
    st.sampled_from(["stop", "length"]),
)
def test_calls_streamed_in_pieces_read_the_same_with_the_shortcuts_on_and_off(
    family: str, arguments: list[str], data: st.DataObject, finish: str
) -> None:
    text = stream(family, arguments)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(text) - 1), max_size=8))))
    with shortcuts_set(True):
        fast = per_feed(family, text, cuts, finish)
    with shortcuts_set(False):
        slow = per_feed(family, text, cuts, finish)
    assert fast == slow, (text, cuts)


# (in a list, malformed arguments end the list: a call after them is not read as alone)
ALONE = sorted(family for family, (_, _, between, _) in CALLS.items() if not between)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ALONE), st.lists(objects(), min_size=2, max_size=4))
def test_each_call_reads_as_it_does_alone(family: str, arguments: list[str]) -> None:
    for size in (5, 16):
        with shortcuts_set(True):
            together = calls_of(family, stream(family, arguments), size)
            alone = [
                c for args in arguments for c in calls_of(family, stream(family, [args]), size)
            ]
        assert together == alone, (arguments, size)


# the slots a renewed scanner must hold as a new one does (the others are set before they
# are read: a member's key, a key's or token's parts, a string's kind and length)
SET_BEFORE_READ = {"_member_key", "_key_parts", "_token", "_string_is_key", "_value_chars"}


def slots(scanner: JsonScanner) -> dict[str, object]:
    names = [n for n in JsonScanner.__slots__ if n not in SET_BEFORE_READ]
    callbacks = {"emit", "on_member", "on_value", "on_unwrap"}
    return {n: getattr(scanner, n) for n in names if n not in callbacks}


@settings(max_examples=300, deadline=None)
@given(objects(), st.sampled_from([0, 1, 2]))
def test_a_scanner_renewed_after_a_whole_object_is_as_a_new_one(body: str, mode: int) -> None:
    """Whatever the object held (typed members held aside, a wrapper, nesting), a scanner
    that read it to its end is renewed to a new scanner's state."""
    out: list[str] = []

    def on_member(key: str) -> int:
        return (STREAM, WITHHOLD, UNWRAP)[mode if key else 0]

    def made() -> JsonScanner:
        scanner = JsonScanner(out.append, on_member, lambda k, raw: raw, lambda k, raw: "")
        scanner.keeps_scalars = True
        return scanner

    scanner = made()
    scanner.read(body, 0, len(body))
    if scanner.state != DONE:
        return  # (only a scanner that read a whole object is renewed)
    scanner.spare()
    assert (scanner.on_member, scanner.on_value, scanner.on_unwrap) == (None, None, None)
    scanner.renew(out.append, on_member, lambda k, raw: raw, lambda k, raw: "")
    assert scanner.state == VALUE
    assert slots(scanner) == slots(made())


@pytest.mark.parametrize(
    "family, after, scanners",
    [
        ("deepseek_v3", "", 1),
        ("apertus", "", 1),  # (the lean head reads its call object: its arguments' scanner)
        ("apertus", ', "x": 1', 2),  # (a member after them: its outer scanner and arguments')
    ],
)
def test_one_scanner_reads_every_call_of_a_stream(
    family: str, after: str, scanners: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(the comparisons above mean something: the next call's object is read with the
    scanner of the one before it, an arguments reader's and a call object's outer one)"""
    refuse_unreached(json_args, "JsonScanner")  # compiled, the readers make their own
    refuse_unreached(json_call, "JsonScanner")
    made: list[JsonScanner] = []

    class Counted(JsonScanner):
        __slots__ = ()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(json_args, "JsonScanner", Counted)
    monkeypatch.setattr(json_call, "JsonScanner", Counted)
    text = stream(family, ['{"s": "x", "n": 3}' + after] * 4)
    every_call = 2 if family == "apertus" else 1  # (the outer scanner and the arguments')
    for shortcuts in (True, False):
        made.clear()
        with shortcuts_set(shortcuts):
            calls = calls_of(family, text, 16)
        assert calls == [("f", '{"s": "x", "n": 3}')] * 4
        assert len(made) == (scanners if shortcuts else 4 * every_call)


@pytest.mark.parametrize("family", ["mistral", "kimi_k2", "hermes"])
def test_a_typed_members_whole_scalar_needs_no_side_buffer(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the shortcuts on, a typed member whose number or literal a feed holds whole (the
    object not: a cut before it) goes out as a streamed member's does, with no side buffer
    set up and taken down for it (`_member`: `_held_value` is not reached), and closes its
    object in the same step; the deltas are those of the shortcuts off, feed by feed."""
    refuse_unreached(JsonScanner, "_held_value")  # (compiled: bound when compiled)
    held: list[str] = []
    held_value = JsonScanner._held_value

    def counted(self: JsonScanner, value: str) -> None:
        held.append(value)
        held_value(self, value)

    monkeypatch.setattr(JsonScanner, "_held_value", counted)
    text = stream(family, ['{"s": "ab", "n": 3, "b": true}', '{"s": "ab", "b": false}'])
    cuts = [at + 1 for at in range(len(text)) if text.startswith('ab"', at)]
    with shortcuts_set(True):
        fast = per_feed(family, text, cuts, "stop")
    assert held == []
    with shortcuts_set(False):
        slow = per_feed(family, text, cuts, "stop")
    assert fast == slow
    assert calls_of(family, text, 16) == [
        ("f", '{"s": "ab", "n": 3, "b": true}'),
        ("f", '{"s": "ab", "b": false}'),
    ]


# objects whose rest a read may begin in and end (`_rest_whole`): typed numbers and literals
# (asked of `on_member`, as written), a typed string and object (the loop types them), a
# streamed nested value, escapes, a raw control character (the loop escapes it), a key
# written twice, JSON the loop refuses
RESTS = [
    '{"s": "ab", "n": 3, "b": true}',
    '{"n": -1.5e2 , "s": "x", "b": null}',
    '{"s": "a\\"b\\u00e9", "other": {"n": [1, "2"]}, "n": 4}',
    '{"s": "x", "n": "5"}',
    '{"s": "x", "o": {"a": "1"}, "b": false}',
    '{"s": "tab\there", "n": 1}',
    '{"n": 1, "s": "y", "n": 2}',
    '{"s": "x", "n": 012}',
    '{"k\\u0065y": "v", "n": 7}',
]


@pytest.mark.parametrize("family", sorted(CALLS))
def test_the_rest_of_an_object_read_at_once_reads_as_the_loop_at_every_cut(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream of calls cut once, at every position in turn: the same deltas, feed by feed,
    with the shortcuts on and off, and (the comparison means something) the rest of an
    object is read at once at some cuts and handed back to the loop at others."""
    refuse_unreached(JsonScanner, "_rest_whole")  # (compiled: bound when compiled)
    answers: list[bool] = []
    rest_whole = JsonScanner._rest_whole

    def counted(self: JsonScanner, text: str, pos: int, end: int) -> int:
        new = rest_whole(self, text, pos, end)
        answers.append(new != pos)
        return new

    monkeypatch.setattr(JsonScanner, "_rest_whole", counted)
    text = stream(family, RESTS)
    for cut in range(1, len(text)):
        with shortcuts_set(True):
            fast = per_feed(family, text, [cut], "stop")
        with shortcuts_set(False):
            slow = per_feed(family, text, [cut], "stop")
        assert fast == slow, (text, cut)
    assert True in answers and False in answers
