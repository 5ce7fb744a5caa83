"""The whole-value fast paths read exactly what the character loop reads.

`JsonScanner._whole_value` (a value already whole, read by the C decoder) and
`JsonArgsReader._whole` (whole arguments needing no typing, sent as they are) are
shortcuts: fed one character at a time, neither can apply, so every
example below compares the shortcut against the character loop on the same text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.compiled import refuse_unreached
from toolgrammar.runtime import json_args
from toolgrammar.runtime.json_args import JsonArgsReader
from toolgrammar.runtime.markers import NextStop, markers
from toolgrammar.runtime.spec import JsonArgs
from toolgrammar.runtime.json_stream import (
    DELEGATE,
    MAX_DEPTH,
    PAUSED,
    STREAM,
    WITHHOLD,
    JsonScanner,
    whole_members,
)

WS = st.sampled_from(["", "", " ", "\n  ", "\t"])
# the typed keys of SCHEMAS below come up often, with strings that typing changes
KEYS = st.sampled_from(
    ["a", "a", "b", "city", "days", "days", "é", "k\\n", "", "name", "arguments"]
)
TRICKY = st.sampled_from(["42", "true", "[1, 2]", " 7 ", "", "\x01", "</tool_call>", "3.5"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    TRICKY,
    TRICKY,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(st.tuples(KEYS, inner), max_size=3),  # an object, keys may repeat
    ),
    max_leaves=12,
)


@st.composite
def json_text(draw: Any, value: Any) -> str:
    """`value` written as a model might: any spacing, escaped or raw non-ASCII."""
    ascii_only = draw(st.booleans())
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return draw(_object_text(value, ascii_only))
    if isinstance(value, list):
        parts = [draw(json_text(item)) for item in value]
        return "[" + draw(WS) + ("," + draw(WS)).join(parts) + draw(WS) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def _object_text(draw: Any, pairs: list[tuple[str, Any]], ascii_only: bool) -> str:
    members = [
        json.dumps(key, ensure_ascii=ascii_only)
        + draw(WS)
        + ":"
        + draw(WS)
        + draw(json_text(value))
        for key, value in pairs
    ]
    return "{" + draw(WS) + ("," + draw(WS)).join(members) + draw(WS) + "}"


@st.composite
def objects(draw: Any) -> str:
    pairs = draw(st.lists(st.tuples(KEYS, VALUES), max_size=5))
    return draw(_object_text(pairs, draw(st.booleans())))


SCHEMAS = {
    "a": {"type": "integer"},
    "b": {"type": "string"},
    "days": {"type": "number"},
    "city": {"type": "object", "properties": {"a": {"type": "boolean"}}},
}


class ArgsSink:
    """The engine's side of one call's arguments reader: the text it sends, gathered."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def emit_args(self, text: str) -> None:
        self.out.append(text)

    def commit_call(self, name: str, call_id: str | None = None) -> None:
        raise AssertionError("json_args names no calls")

    def schema_of(self, key: str) -> dict | None:
        return SCHEMAS.get(key)

    def typed_keys(self) -> frozenset[str]:
        return frozenset(SCHEMAS)  # every key schema_of knows: none is left unchecked

    def unwraps(self, key: str) -> bool:
        return False

    def next_stop(self, stops: tuple[str, ...]) -> NextStop:
        return NextStop(markers(stops))


def read_args(text: str, chars: bool) -> tuple[str, JsonArgsReader]:
    sink = ArgsSink()
    reader = JsonArgsReader(JsonArgs(), ("</tool_call>",), sink)
    pos = 0
    if chars:  # one character at a time: the fast path never sees a whole object
        for cut in range(1, len(text) + 1):
            pos = reader.read(text[:cut], pos, eof=False)
            if reader.done:
                break
    if not reader.done:
        reader.read(text, pos, eof=True)
    reader.close()
    return "".join(sink.out), reader


@settings(max_examples=300, deadline=None)
@given(objects(), st.sampled_from(["", " ", "</tool_call>", "\n</tool_call>"]))
def test_whole_arguments_read_as_one_character_at_a_time_reads_them(body: str, after: str) -> None:
    text = body + after
    whole, _ = read_args(text, chars=False)
    one_by_one, _ = read_args(text, chars=True)
    assert whole == one_by_one
    json.loads(whole)  # and they are JSON


@st.composite
def typed_objects(draw: Any) -> str:
    """Members the schema types, often with strings that typing changes."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(sorted(SCHEMAS)), TRICKY | VALUES), max_size=4))
    return draw(_object_text(pairs, draw(st.booleans())))


@settings(max_examples=200, deadline=None)
@given(typed_objects())
def test_typed_whole_arguments_read_as_one_character_at_a_time_reads_them(body: str) -> None:
    whole, _ = read_args(body, chars=False)
    assert whole == read_args(body, chars=True)[0]


def scanners_made(monkeypatch: pytest.MonkeyPatch) -> list[JsonScanner]:
    """The scanners the arguments reader makes from here on (it drops its own when done)."""
    refuse_unreached(json_args, "JsonScanner")  # compiled, the reader makes its own
    made: list[JsonScanner] = []

    class Counted(JsonScanner):
        __slots__ = ()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(json_args, "JsonScanner", Counted)
    return made


def test_plain_whole_arguments_skip_the_character_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    made = scanners_made(monkeypatch)
    text = '{"city": {"a": true}, "b": "x y", "days": 3.5, "other": [1, {"k": null}]}</tool_call>'
    out, reader = read_args(text, chars=False)
    assert out == text[: -len("</tool_call>")]
    assert made == []  # the fast path read them


def test_arguments_that_need_typing_go_through_the_scanner_and_are_typed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = scanners_made(monkeypatch)
    out, reader = read_args('{"a": "42", "b": 7}', chars=False)
    assert len(made) == 1
    assert json.loads(out) == {"a": 42, "b": 7}  # (a JSON number stays for a string: kept)


def test_arguments_nested_deeper_than_the_scanner_reads_are_cut_the_same_way() -> None:
    deep = '{"x": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}"
    whole, _ = read_args(deep, chars=False)
    one_by_one, _ = read_args(deep, chars=True)
    assert whole == one_by_one
    assert len(whole) < len(deep)  # closed at the depth limit, not read whole


MODES = {"a": STREAM, "b": WITHHOLD, "city": WITHHOLD, "days": STREAM, "arguments": DELEGATE}


def scan_events(text: str, chars: bool) -> list[Any]:
    """What a scanner with every kind of member handling reports, and what it releases."""
    events: list[Any] = []

    def on_member(key: str) -> int:
        events.append(("member", key))
        return MODES.get(key, WITHHOLD if len(key) % 2 else STREAM)

    def on_value(key: str, raw: str) -> str | None:
        events.append(("value", key, raw.strip()))
        # (like every on_value, it keeps the spacing the value came with: where the
        # spacing after a colon lands, in the key's text or the value's, varies)
        lead = raw[: len(raw) - len(raw.lstrip())]
        return None if key == "city" else lead + "<" + raw.strip() + ">"

    scanner = JsonScanner(lambda piece: events.append(("out", piece)), on_member, on_value)
    inner: JsonScanner | None = None

    def inner_failed() -> bool:
        return inner is not None and inner.failed

    pos, end = 0, 0
    steps = range(1, len(text) + 1) if chars else [len(text)]
    for end in steps:
        while pos < end and not scanner.done and not scanner.failed and not inner_failed():
            if scanner.state == PAUSED:  # this test reads the delegated value itself
                if inner is None:  # (its spacing is skipped, as the consumers do)
                    while pos < end and text[pos] in " \t\n\r":
                        pos += 1
                    if pos >= end:
                        break
                    inner = JsonScanner(lambda piece: events.append(("delegated", piece)))
                pos = inner.read(text, pos, end)
                if inner.failed:
                    break
                if inner.done:
                    inner = None
                    scanner.resume()
                continue
            new = scanner.read(text, pos, end)
            if new == pos and scanner.state != PAUSED:
                break
            pos = new
    # text goes out once per feed, so pieces and their place among the callbacks differ
    # with the feeding; the callbacks, in order, and the text released may not
    calls = [event for event in events if event[0] in ("member", "value")]
    released = "".join(event[1] for event in events if event[0] == "out")
    delegated = "".join(event[1] for event in events if event[0] == "delegated")
    return [calls, released, delegated, scanner.done, scanner.failed, inner_failed(), pos]


@settings(max_examples=300, deadline=None)
@given(objects())
def test_the_scanner_reports_a_whole_object_as_it_reports_it_char_by_char(body: str) -> None:
    assert scan_events(body + " tail", chars=False) == scan_events(body + " tail", chars=True)


@settings(max_examples=300, deadline=None)
@given(objects(), st.integers(0, 10**4), st.sampled_from(list('x1"} ]e-.n\\\x01:,')))
def test_broken_objects_fail_at_the_same_place_either_way(body: str, at: int, junk: str) -> None:
    """A character put anywhere: `12abc`, `tru"e`, `"a\\x"`... are refused where the loop refuses them."""
    at %= len(body) + 1
    text = body[:at] + junk + body[at:]
    assert scan_events(text, chars=False) == scan_events(text, chars=True)


def test_an_object_cut_right_at_its_brace_is_not_whole() -> None:
    """A stop right at the object's `{` (a call opener that begins with it) leaves nothing
    of the object before the stop: not whole, for the scanner to read, never an assertion
    escaping to the caller (an `hf` template opened calls with `{`)."""
    assert whole_members('{"a": 1}', 0, 0) is None
    assert whole_members('{"a": 1}', 0, 1) is None
    assert whole_members('{"a": 1}', 0, 8) == ([("a", 6, 7, 1)], 8)
