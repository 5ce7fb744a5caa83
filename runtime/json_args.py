"""The `json_args` dialect: the arguments are one JSON object, streamed as the model's bytes.

With `raw=KEY`, arguments that do not open with `{` are raw text (Functionary's `python`
tool writes its code bare): streamed as the string value of KEY, escaped as JSON, up to the
next marker or the end of the output.

Verbatim arguments keep the model's own bytes. Only a top-level value whose schema
asks for a type other than string is held until complete, then typed and, if typing
changed it, rewritten in place, so coercion never touches streamed text. A first key
that is a lone wrapper around the arguments (`runtime/unwrap.py`) is held the same way
and its object's members are written in its place. The markers
that follow the arguments end them even inside an unterminated string: markers win.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Callable, Final, Iterable, Sequence

from .coerce import coerce_json
from .json_bounded import find_closer, scan_within
from .json_stream import (
    DONE,
    ERROR,
    MAX_DEPTH,
    STREAM,
    UNWRAP,
    WITHHOLD,
    JSON_WS,
    JsonScanner,
    loads_or_none,
    nests_deeper,
    refuse_constant,
    scan_value,
)
from .markers import LEAD_REACH, Markers, markers
from .protocol import Call, DialectRow, Sink, json_object, no_literals, the_call
from . import shortcuts
from .schemas import streams_as_text
from .spec import JsonArgs
from .unwrap import members_text, wrapped_object

# a stretch this short is searched for a `}` at once (`find_closer` memoizes longer ones)
_SHORT: Final = 64
SHORTCUT_KNOWS = frozenset({"raw"})  # the fields `_whole` decides as the scanner does


def _no_schema(key: str) -> None:
    """`json_typing="as_written"`: no member is typed."""
    return None


def _no_keys() -> frozenset[str]:
    return frozenset()


class JsonArgsReader:
    """Streams one JSON arguments object to the sink, as the model wrote it."""

    __slots__ = (
        "emit",
        "_tell_malformed",
        "schema_of",
        "typed_keys",
        "unwraps",
        "done",
        "failed",
        "_scanner",
        "_spare_scanner",
        "_stops",
        "_started",
        "_emitted",
        "_closed",
        "_tried_whole",
        "_whole_first",
        "_first_key",
        "_raw",
        "_raw_open",
        "_held",
        "item",
        "stops",
        "_typed_keys",
    )

    def __init__(self, item: JsonArgs, stops: tuple[str, ...], sink: Sink) -> None:
        self.item = item  # what it was made for: renewed only for the same (`renew`)
        self.stops = stops
        self.emit = sink.emit_args
        # tells the engine the arguments never formed an object (`Sink.malformed_args`)
        self._tell_malformed = getattr(sink, "malformed_args", _nothing)
        self.schema_of = sink.schema_of
        self.typed_keys = sink.typed_keys  # the keys schema_of types
        policies = getattr(sink, "policies", None)
        if policies is not None and policies.json_typing == "as_written":
            self.schema_of = _no_schema  # members are passed on as the model wrote them
            self.typed_keys = _no_keys
        self.unwraps = sink.unwraps
        self._first_key = True  # only the first key may be a wrapper
        self.done = False
        self.failed = False
        self._stops = markers(stops)
        self._started = False
        self._emitted = False
        self._closed = False
        # `_whole` is tried once, unless the shortcut may not read this item
        self._tried_whole = self._whole_first = not shortcuts.takes(item, SHORTCUT_KNOWS)
        self._scanner: JsonScanner | None = None  # made when the fast path cannot read it all
        # the scanner of an object this reader read whole, renewed for the next call's
        # (`JsonScanner.renew`: one a call, made once; it holds this reader's methods)
        self._spare_scanner: JsonScanner | None = None
        self._raw = item.raw  # the key of raw-text arguments ("": none)
        self._raw_open = False  # reading raw text: `{"KEY": "` is out, `"}` is not yet
        # the member held for typing and its schema, looked up once (`_member`, `_typed`)
        self._held: tuple[str, dict | None] | None = None
        # the call's tool's typed keys, asked once per arguments object (`_member`): its
        # members are read once the call's name is known, which no member read changes
        self._typed_keys: frozenset[str] | None = None

    def renew(self) -> None:
        """Back to the state `__init__` leaves it in, for the next call of the same item,
        stops and sink (`DialectSink._dialect`): what it took from them is kept, what it
        read is forgotten, so the next call reads as a new reader would."""
        self._first_key = True
        self.done = self.failed = False
        self._started = self._emitted = self._closed = False
        self._tried_whole = self._whole_first
        self._scanner = None
        self._raw_open = False
        self._held = None
        self._typed_keys = None

    def _out(self, text: str) -> None:
        self._emitted = True
        self.emit(text)

    def _member(self, key: str) -> int:
        first, self._first_key = self._first_key, False
        if first and self.unwraps(key):
            return UNWRAP
        if shortcuts.ON:  # the tool's typed keys (one look-up): every other key streams
            typed = self._typed_keys  # (`Sink.typed_keys`: `streams_as_text`'s answer for
            if typed is None:  # each of the tool's keys, made once per tool)
                typed = self._typed_keys = self.typed_keys()
                scanner = self._scanner  # (the one asking: told once, it asks no more
                if scanner is not None:  # for the keys this streams, `typed_only`)
                    scanner.typed_only = typed
            if key not in typed:
                return STREAM
            # (a typed key: never text; its schema is looked up by `_typed`, only if its
            # value is handed to it: a whole number or literal goes out without, as written)
            return WITHHOLD
        schema = self.schema_of(key)
        if streams_as_text(schema):
            return STREAM
        self._held = (key, schema)
        return WITHHOLD

    def _unwrapped(self, key: str, raw: str) -> str | None:
        """A wrapper's members, typed, in its place; None when its value holds no object
        (it is then the key's value as written)."""
        ok, value = loads_or_none(raw)
        members = wrapped_object(value) if ok else None
        return None if members is None else members_text(members, self.schema_of)

    def _typed(self, key: str, raw: str) -> str | None:
        if shortcuts.ON and raw.lstrip(" \t\n\r")[:1] not in _RETYPABLE_FIRST:
            return raw  # a number, `true`, `false` or `null` (or no JSON): never retyped
        ok, value = loads_or_none(raw)
        if not ok:  # nested deeper than json can read: keep the model's bytes untyped
            return raw
        held = self._held
        typed = coerce_json(
            value, held[1] if held is not None and held[0] == key else self.schema_of(key)
        )
        if typed is value:
            return raw
        lead = raw[: len(raw) - len(raw.lstrip())]  # the model's spacing after the colon
        return lead + json.dumps(typed, ensure_ascii=False)

    def read(self, text: str, pos: int, eof: bool, bound: int = -1) -> int:
        """Consume text[pos:] up to a following marker; return the new position.

        With `bound`, the caller has already found where the arguments' text may end
        (it watches the markers itself): read up to there and no further.
        """
        scanner: JsonScanner | None = self._scanner
        if scanner is None:  # (a later delta of an object being scanned has its scanner,
            if self.failed:  # dropped once the object ends or fails)
                return bound if bound >= 0 else self._skip(text, pos, eof)
            if self.done:  # (a second arguments value replayed into a finished call: ignored)
                return pos
            end = len(text) if bound < 0 else bound
            if not self._started:
                if pos < end and text[pos] in " \t\n\r":  # (`skip_whitespace`'s call only
                    pos = skip_whitespace(text, pos, end)  # when there is some)
                if pos >= end:
                    if eof:
                        self.close()
                    return pos
                if text[pos] != "{":
                    if not self._raw:
                        return self._fail(text, pos, eof)  # not an object: no arguments
                    self._raw_open = True
                    self._started = True
                    # (its head goes out with the first text, in one piece: one emit, not two)
                    return self._read_raw(text, pos, end, eof, bound, _raw_head(self._raw))
                self._started = True
            if self._raw_open:
                return self._read_raw(text, pos, end, eof, bound)
        elif bound >= 0 and not eof:  # (the commonest: an object going on, its owner
            pos = scanner.read(text, pos, bound)  # watching the markers)
            state = scanner.state
            if state == DONE:
                return self._scanned(scanner, pos)
            if state == ERROR:
                return self._bounded_error(bound)
            return pos
        if bound >= 0:
            end, at, stop = bound, -1, bound
        else:  # the next stop, else the tail that may begin one: `Markers.search` and
            end = len(text)  # `Markers.held` without their calls (on every delta)
            stops = self._stops
            lead = stops.lead  # ("": markers of several first characters, searched)
            if lead and end - pos <= LEAD_REACH and text.find(lead, pos) < 0 and shortcuts.ON:
                at, stop = -1, end  # no marker, nor one begun (`Markers.lead`)
            else:
                found = stops.find(text, pos)
                if found is not None:
                    at = stop = found.start()
                else:
                    at = -1
                    low = end - stops.max_prefix
                    tail = stops.find_tail(text, low if low > pos else pos)
                    stop = end if tail is None else tail.start()
        if scanner is None:
            if not self._tried_whole:
                self._tried_whole = True
                # (no `}` before `stop` in a delta's text: not whole yet, `decoded_object`'s
                # first answer, without the calls to it; else `_whole` tries)
                if stop - pos > _SHORT or text.find("}", pos, stop) >= 0:
                    whole_end = self._whole(text, pos, stop)
                    if whole_end >= 0:
                        return whole_end
            scanner = self._spare_scanner
            if scanner is not None:  # (set only by the shortcut below)
                self._spare_scanner = None
                # (the sink's own `emit`, not `_out`: what the scanner sent, `_terminate`
                # tells from the scanner itself, with no call a delta to note it)
                scanner.renew(self.emit, self._member, self._typed, self._unwrapped)
                self._scanner = scanner
            else:
                scanner = self._scanner = JsonScanner(
                    self.emit,
                    on_member=self._member,
                    on_value=self._typed,
                    on_unwrap=self._unwrapped,
                )
                scanner.keeps_scalars = True  # (`_typed`, shortcuts on)
        pos = scanner.read(text, pos, stop)
        if scanner.state == DONE:  # (`done` and `failed`, without the properties' calls)
            return self._scanned(scanner, pos)
        if scanner.state == ERROR:
            if bound >= 0:
                return self._bounded_error(bound)
            return self._fail(text, pos, eof)
        if at >= 0:  # a marker ends the object before it closed: it never formed one
            self._tell_malformed()
            self.close()
            return stop
        if eof:  # a partial marker at the very end is markup, not arguments
            self.close()
            return end
        return pos

    def _scanned(self, scanner: JsonScanner, pos: int) -> int:
        """The object's scanner read it to its end, at `pos`."""
        if shortcuts.ON:  # `close`: a scanner done has sent all, its `{` first, and
            self._scanner = None  # has no tail (its `}` is out): nothing is left to
            self._closed = self.done = True  # send, `{}` in its place neither
            scanner.spare()  # (no cycle through its callbacks)
            self._spare_scanner = scanner  # (its next object's, renewed)
            return pos
        self.close()
        return pos

    def _bounded_error(self, bound: int) -> int:
        """The object's scanner failed before `bound` (where its owner found the arguments'
        text may end): malformed, what was streamed closed, the rest to `bound` markup."""
        self.failed = True
        self._tell_malformed()
        self._terminate()
        return bound

    def _read_raw(
        self, text: str, pos: int, end: int, eof: bool, bound: int, head: str = ""
    ) -> int:
        """Raw-text arguments: escaped into the string as they come, up to the next marker
        (a part of one at the end is held until it tells), or all of it at the end; `head`
        (the arguments' `{"KEY": "`, at their start) goes out before them, and their end
        `"}` after them when they end here, in the same piece."""
        at = -1
        if bound >= 0:
            stop = bound
        else:
            at, _ = self._stops.search(text, pos)
            stop = at if at >= 0 else (end if eof else end - self._stops.held(text, pos))
        if stop > pos:
            head += json.dumps(text[pos:stop], ensure_ascii=False)[1:-1]
        if at >= 0 or (eof and bound < 0):
            self._closed = self.done = True  # (`close`, its `"}` sent with the rest)
            self._out(head + '"}')
        elif head:
            self._out(head)
        return stop

    def _whole(self, text: str, pos: int, stop: int) -> int:
        """The fast path: arguments already whole in `text` are read by the C decoder.

        When the object starting at `pos` is complete before `stop`, is JSON the scanner
        would take the same way (`decoded_object`) and needs no coercion, the scanner would
        release exactly its bytes; they go out at once. Anything else returns -1 and the
        scanner reads it: it stays the one definition of what is released, this only skips
        its character loop.
        """
        found = decoded_object(text, pos, stop)
        if found is None:
            return -1
        value, end = found
        return end if self.take_decoded(text, pos, end, value) else -1

    def take_decoded(self, text: str, pos: int, end: int, value: dict) -> bool:
        """Whole arguments text[pos:end] that a caller has decoded already (to `value`, not
        nested deeper than the scanner reads): sent as they are when they need no typing.
        False, having sent nothing, when they do; then `read` reads them."""
        if not sent_as_written(
            text, pos, end, value, self.unwraps, self.schema_of, self.typed_keys()
        ):
            return False
        self._tried_whole = self._started = True
        self._out(text[pos:end])
        self.close()
        return True

    def _fail(self, text: str, pos: int, eof: bool) -> int:
        """Malformed JSON: what was streamed stays and is closed; the text up to the next
        marker is markup of this broken call."""
        self.failed = True
        self._tell_malformed()
        self._terminate()
        return self._skip(text, pos, eof)

    def _skip(self, text: str, pos: int, eof: bool) -> int:
        pos, self.done = skip_to_stop(self._stops, text, pos, eof)
        return pos

    def _terminate(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._raw_open:
            self.emit('"}')
            return
        scanner = self._scanner
        emitted = self._emitted
        tail = ""
        if scanner is not None:  # it sent text when it began the object (its `{` goes out
            emitted = emitted or scanner.started  # with the read that takes it), before
            tail = scanner.close()  # its `close`, which ends it, begun or not
        self._scanner = None  # (it holds this reader's methods: no cycle left behind)
        if not emitted:
            self.emit("{}")
        elif tail:
            self.emit(tail)

    def close(self) -> None:
        """End the arguments: release what is whole and close what was streamed."""
        self._terminate()
        self.done = True


@lru_cache(maxsize=64)
def _raw_head(key: str) -> str:
    """The start of raw-text arguments: `{"KEY": "` (made once per key, not once per call)."""
    return "{" + json.dumps(key, ensure_ascii=False) + ': "'


def _object(pairs: list[tuple[str, object]]) -> dict:
    """A decoded object; repeated keys are refused, since the scanner types each one."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key is repeated")
    return value


def decoded_object(text: str, pos: int, stop: int) -> tuple[dict, int] | None:
    """The JSON object at `pos` when it is whole before `stop` and JSON the scanner would
    take the same way (no non-finite numbers, no deeper nesting than it reads): (its value,
    its end); None otherwise (then the scanner must read it)."""
    if find_closer(text, "}", pos, stop) < 0:
        return None  # not whole yet (the common case while streaming): no need to try
    try:
        value, end = scan_within(scan_value, text, pos, stop)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end > stop or not isinstance(value, dict):
        return None
    if nests_deeper(text, pos, end, value, MAX_DEPTH):
        return None
    return value, end


def sent_as_written(
    text: str,
    pos: int,
    end: int,
    value: dict,
    unwraps: Callable[[str], bool],
    schema_of: Callable[[str], dict | None],
    typed_keys: frozenset[str],
) -> bool:
    """Whether whole arguments text[pos:end], decoded to `value` (`decoded_object`), are
    released by the scanner exactly as written: no wrapper key first, no typed key written
    twice, no value typing would change. Asks the call's schemas as a sink does
    (`Sink.unwraps`, `Sink.schema_of`; `typed_keys`: what `Sink.typed_keys` returns)."""
    if value and unwraps(next(iter(value))):
        return False  # a wrapper: its members go in its place, as the scanner writes them
    typed = typed_keys.intersection(value) if typed_keys else None
    if not typed:
        return True
    if not _written_once(text, pos, end, typed):
        try:  # the scanner types each member it reads: a typed key written twice is
            scan_within(_scan_object, text, pos, end)  # refused (the decoder keeps the last)
        except (StopIteration, ValueError, RecursionError):
            return False
    for key in typed:
        member = value[key]
        if not isinstance(member, _RETYPABLE):  # typing leaves other JSON values as written
            continue
        schema = schema_of(key)
        if not streams_as_text(schema) and coerce_json(member, schema) is not member:
            return False
    return True


# the decoded values typing may change (`coerce_json`): strings, and containers holding them
_RETYPABLE = (str, dict, list)
# the first characters of their JSON text (any other decodes to a number, a literal or
# nothing, which `_typed` gives back as written)
_RETYPABLE_FIRST = ('"', "{", "[")


def _written_once(text: str, pos: int, end: int, keys: Iterable[str]) -> bool:
    """Whether each of `keys` is surely written at most once in text[pos:end]: with no
    backslash there, every spelling of a key is its plain `"key"`, so a count tells.
    False means "not sure" (an escape, or the key's text seen twice, maybe in a value)."""
    if text.find("\\", pos, end) >= 0:
        return False
    for key in keys:
        if text.count(f'"{key}"', pos, end) > 1:
            return False
    return True


# the strict decoder again, refusing repeated keys (see `_object`)
_scan_object = json.JSONDecoder(object_pairs_hook=_object, parse_constant=refuse_constant).scan_once


def skip_whitespace(text: str, pos: int, end: int) -> int:
    """The position of the first non-whitespace character of text[pos:end] (or `end`)."""
    found = JSON_WS.match(text, pos, end)
    return found.end() if found else pos


def skip_to_stop(stops: Markers, text: str, pos: int, eof: bool) -> tuple[int, bool]:
    """Pass over markup up to the next stop marker: (new position, whether it was reached)."""
    at, _ = stops.search(text, pos)
    if at >= 0:
        return at, True
    if eof:
        return len(text), True
    return len(text) - stops.held(text, pos), False


def render_json_args(_: JsonArgs, calls: Sequence[Call]) -> str:
    return json_object(the_call(calls)[1])


JSON_ARGS = DialectRow(
    JsonArgs,
    "json_args",
    JsonArgsReader,
    render_json_args,
    no_literals,
    shortcut_knows=SHORTCUT_KNOWS,
)


def _nothing() -> None:
    """A sink that does not ask whether arguments were malformed."""
