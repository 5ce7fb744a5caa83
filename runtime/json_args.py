"""The JSON argument dialects: a verbatim JSON object, and a JSON object carrying the name.

Verbatim arguments keep the model's own bytes. Only a top-level value whose schema
asks for a type other than string is held until complete, then typed and, if typing
changed it, rewritten in place, so coercion never touches streamed text. The markers
that follow the arguments end them even inside an unterminated string: markers win.
"""

from __future__ import annotations

import json
from typing import Callable

from .coerce import coerce_json
from .json_stream import (
    DELEGATE,
    MAX_DEPTH,
    PAUSED,
    STREAM,
    WITHHOLD,
    JSON_WS,
    WHOLE_STRING,
    JsonScanner,
    loads_or_none,
    nests_deeper,
    refuse_constant,
    scan_value,
    whole_members,
)
from .markers import Markers, NextStop, markers
from .schemas import streams_as_text
from .spec import JsonCall, JsonCallArray


class JsonArgsBuilder:
    """Streams one JSON arguments object; `emit` receives the argument text pieces."""

    __slots__ = (
        "emit",
        "schema_of",
        "typed_keys",
        "done",
        "failed",
        "_scanner",
        "_stops",
        "_started",
        "_emitted",
        "_closed",
        "_tried_whole",
    )

    def __init__(
        self,
        stops: tuple[str, ...],
        emit: Callable[[str], None],
        schema_of: Callable[[str], dict | None],
        typed_keys: Callable[[], frozenset[str]] | None = None,
    ) -> None:
        self.emit = emit
        self.schema_of = schema_of
        self.typed_keys = typed_keys  # the keys schema_of types; None: ask for every key
        self.done = False
        self.failed = False
        self._stops = markers(stops)
        self._started = False
        self._emitted = False
        self._closed = False
        self._tried_whole = False
        self._scanner: JsonScanner | None = None  # made when the fast path cannot read it all

    def _out(self, text: str) -> None:
        self._emitted = True
        self.emit(text)

    def _member(self, key: str) -> int:
        schema = self.schema_of(key)
        return STREAM if streams_as_text(schema) else WITHHOLD

    def _typed(self, key: str, raw: str) -> str | None:
        ok, value = loads_or_none(raw)
        if not ok:  # nested deeper than json can read: keep the model's bytes untyped
            return raw
        typed = coerce_json(value, self.schema_of(key))
        if typed is value:
            return raw
        lead = raw[: len(raw) - len(raw.lstrip())]  # the model's spacing after the colon
        return lead + json.dumps(typed, ensure_ascii=False)

    def feed(self, text: str, pos: int, eof: bool, bound: int = -1) -> int:
        """Consume text[pos:] up to a following marker; return the new position.

        With `bound`, the caller has already found where the arguments' text may end
        (it watches the markers itself): read up to there and no further.
        """
        if self.failed:
            return bound if bound >= 0 else self._skip(text, pos, eof)
        if self.done:  # (a second arguments value replayed into a finished call: ignored)
            return pos
        end = len(text) if bound < 0 else bound
        if not self._started:
            pos = skip_whitespace(text, pos, end)
            if pos >= end:
                if eof:
                    self.close()
                return pos
            if text[pos] != "{":
                return self._fail(text, pos, eof)  # not an object: no arguments
            self._started = True
        if bound >= 0:
            at, stop = -1, bound
        else:
            at, _ = self._stops.search(text, pos)
            stop = at if at >= 0 else end - self._stops.held(text, pos)
        if not self._tried_whole:
            self._tried_whole = True
            whole_end = self._whole(text, pos, stop)
            if whole_end >= 0:
                return whole_end
        scanner = self._scanner
        if scanner is None:
            scanner = self._scanner = JsonScanner(
                self._out, on_member=self._member, on_value=self._typed
            )
        pos = scanner.feed(text, pos, stop)
        if scanner.done:
            self.close()
            return pos
        if scanner.failed:
            if bound >= 0:
                self.failed = True
                self._terminate()
                return bound
            return self._fail(text, pos, eof)
        if at >= 0:
            self.close()
            return stop
        if eof:  # a partial marker at the very end is markup, not arguments
            self.close()
            return end
        return pos

    def _whole(self, text: str, pos: int, stop: int) -> int:
        """The fast path: arguments already whole in `text` are read by the C decoder.

        When the object starting at `pos` is complete before `stop`, is JSON the scanner
        would take the same way (no non-finite numbers, no deeper nesting than it reads, no
        typed key written twice) and needs no coercion, the scanner would release exactly
        its bytes; they go out at once. Anything else returns -1 and the scanner reads it: it stays
        the one definition of what is released, this only skips its character loop.
        """
        if text.rfind("}", pos, stop) < 0:
            return -1  # not whole yet (the common case while streaming): no need to try
        try:
            value, end = scan_value(text, pos)
        except (StopIteration, ValueError, RecursionError):
            return -1
        if end > stop or not isinstance(value, dict):
            return -1
        if nests_deeper(text, pos, end, value, MAX_DEPTH):
            return -1
        return end if self.take_decoded(text, pos, end, value) else -1

    def take_decoded(self, text: str, pos: int, end: int, value: dict) -> bool:
        """Whole arguments text[pos:end] that a caller has decoded already (to `value`, not
        nested deeper than the scanner reads): sent as they are when they need no typing.
        False, having sent nothing, when they do; then `feed` reads them."""
        schema_of = self.schema_of
        keys = self.typed_keys() if self.typed_keys is not None else value.keys()
        typed = [key for key in keys if key in value]
        if typed and not _written_once(text, pos, end, typed):
            try:  # the scanner types each member it reads: a typed key written twice
                _scan_object(text, pos)  # is refused here (the decoder keeps the last)
            except (StopIteration, ValueError, RecursionError):
                return False
        for key in typed:
            member = value[key]
            if not isinstance(member, _RETYPABLE):  # typing leaves other JSON values as written
                continue
            schema = schema_of(key)
            if not streams_as_text(schema) and coerce_json(member, schema) is not member:
                return False
        self._tried_whole = self._started = True
        self._out(text[pos:end])
        self.close()
        return True

    def _fail(self, text: str, pos: int, eof: bool) -> int:
        """Malformed JSON: what was streamed stays and is closed; the text up to the next
        marker is markup of this broken call."""
        self.failed = True
        self._terminate()
        return self._skip(text, pos, eof)

    def _skip(self, text: str, pos: int, eof: bool) -> int:
        pos, self.done = skip_to_stop(self._stops, text, pos, eof)
        return pos

    def _terminate(self) -> None:
        if self._closed:
            return
        self._closed = True
        tail = self._scanner.close() if self._scanner is not None else ""
        self._scanner = None  # (it holds this builder's methods: no cycle left behind)
        if not self._emitted:
            self.emit("{}")
        elif tail:
            self.emit(tail)

    def close(self) -> None:
        """End the arguments: release what is whole and close what was streamed."""
        self._terminate()
        self.done = True


def _object(pairs: list[tuple[str, object]]) -> dict:
    """A decoded object; repeated keys are refused, since the scanner types each one."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key is repeated")
    return value


# the decoded values typing may change (`coerce_json`): strings, and containers holding them
_RETYPABLE = (str, dict, list)


def _written_once(text: str, pos: int, end: int, keys: list[str]) -> bool:
    """Whether each of `keys` is surely written at most once in text[pos:end]: with no
    backslash there, every spelling of a key is its plain `"key"`, so a count tells.
    False means "not sure" (an escape, or the key's text seen twice, maybe in a value)."""
    if text.find("\\", pos, end) >= 0:
        return False
    return all(text.count(f'"{key}"', pos, end) <= 1 for key in keys)


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


class JsonCallBuilder:
    """`{"name": NAME, "arguments": {...}}`: finds the name, streams the arguments.

    Arguments written before the name (or encoded as a JSON string) are read whole and
    held, then replayed into the arguments builder once the name is known, since the
    name decides how they are typed.
    """

    __slots__ = (
        "spec",
        "name",
        "call_id",
        "done",
        "failed",
        "malformed",
        "_commit",
        "_make_args",
        "_outer",
        "_stops",
        "_next_stop",
        "_args",
        "_mode",
        "_capture",
        "_captured",
        "_string_args",
        "_started",
        "_skipping",
        "_args_seen",
        "_committed",
        "_tried_whole",
    )

    def __init__(
        self,
        spec: JsonCall,
        stops: tuple[str, ...],
        commit: Callable[[str, str | None], None],
        make_args: Callable[[], JsonArgsBuilder],
        next_stop: NextStop | None = None,
    ) -> None:
        self.spec = spec
        self.name: str | None = None
        self.call_id: str | None = None
        self.done = False
        self.failed = False
        self.malformed = False  # failed on text that is not a call, not for want of text
        self._commit = commit
        self._make_args = make_args
        self._stops = markers(stops)
        self._next_stop = next_stop or NextStop(self._stops)
        self._outer: JsonScanner | None = None  # made when the fast path cannot read it all
        self._args: JsonArgsBuilder | None = None
        self._mode = ""  # "", "stream" or "capture": how the current arguments value is read
        self._capture: JsonScanner | None = None
        self._captured: list[str] = []
        self._string_args = False
        self._started = False
        self._skipping = False
        self._args_seen = False
        self._committed = False
        self._tried_whole = False

    def _commit_name(self) -> None:
        """The call is real: its name is known (and, with require_args, its arguments began)."""
        if self._committed or self.name is None:
            return
        if self.spec.require_args and not self._args_seen:
            return
        self._committed = True
        self._commit(self.name, self.call_id)

    def _member(self, key: str) -> int:
        if self.spec.name_is_key:  # `{NAME: {...}}`: the first key names the call
            if self.name is None and key.strip():
                self.name = key.strip()
                self._args_seen = True
                self._commit_name()
                return DELEGATE
            return WITHHOLD
        if key in self.spec.args_keys:
            self._args_seen = True
            self._commit_name()
            return DELEGATE
        return WITHHOLD

    def _value(self, key: str, raw: str) -> None:
        if key in self.spec.id_keys and self.name is None and self.call_id is None:
            ok, call_id = loads_or_none(raw)
            if ok and isinstance(call_id, (str, int)) and not isinstance(call_id, bool):
                self.call_id = str(call_id)
        if key in self.spec.name_keys and self.name is None:
            ok, name = loads_or_none(raw)
            if ok and isinstance(name, str) and name.strip():
                self.name = name.strip()
                self._commit_name()
                if self._captured and self._capture is None and self._committed:
                    self._replay()
        return None

    def _replay(self) -> None:
        """Feed a held arguments value, read whole, into the arguments builder."""
        raw = "".join(self._captured)
        self._captured = []
        if self._string_args:
            ok, decoded = loads_or_none(raw)
            raw = decoded if ok and isinstance(decoded, str) else ""
        if self._args is None:
            self._args = self._make_args()
        self._args.feed(raw, 0, eof=True)
        self._args.close()

    def feed(self, text: str, pos: int, eof: bool) -> int:
        """Consume text[pos:] up to a following marker; return the new position."""
        if self._skipping:
            pos, reached = skip_to_stop(self._stops, text, pos, eof)
            if reached:
                self._end()
            return pos
        end = len(text)
        if not self._started:
            pos = skip_whitespace(text, pos, end)
            if pos >= end:
                if eof:
                    self._end()
                return pos
            if text[pos] != "{":
                self.malformed = True
                self._end()
                return pos
            self._started = True
        at = self._next_stop.find(text, pos)
        stop = at if at >= 0 else end - self._stops.held(text, pos)
        if not self._tried_whole:
            self._tried_whole = True
            whole_end = self._whole(text, pos, stop)
            if whole_end >= 0:
                return whole_end
        if self.done:
            return pos
        outer = self._outer
        if outer is None:
            outer = self._outer = JsonScanner(
                _discard, on_member=self._member, on_value=self._value
            )
        while pos < stop and not self.done:
            if outer.state == PAUSED:
                new = self._read_args_value(text, pos, stop)
            else:
                new = outer.feed(text, pos, stop)
                if outer.done:
                    self._end()
                    return new
                if outer.failed:
                    if not self._committed:  # not a call object: it ends right here
                        self.malformed = True
                        self._end()
                        return new
                    self._skipping = True  # malformed: the rest up to a marker is markup
                    return self.feed(text, new, eof)
            if new == pos and outer.state != PAUSED:
                break
            pos = new
        if not self.done and (at >= 0 or eof):
            self._end()
            return stop if at >= 0 else end  # a partial marker at the end is markup
        return pos

    def _whole(self, text: str, pos: int, stop: int) -> int:
        """The fast path for a call object already whole before `stop`, in the common shape:
        a plain name, then one arguments object. Its members go through `_member` and
        `_value` in order, and the arguments to the builder, exactly as the outer scanner
        would hand them over; only the character loop over the outer object is skipped.
        Any other shape (arguments first, or twice, or as a string; a name as the key)
        returns -1 before anything is called, and the outer scanner reads it.
        """
        spec = self.spec
        if spec.name_is_key or text.rfind("}", pos, stop) < 0:
            return -1
        found = whole_members(text, pos, stop)
        if found is None:
            return -1
        members, close = found
        args_keys, name_keys = spec.args_keys, spec.name_keys
        named = False
        args_start = -1
        for key, start, end, _ in members:
            if key in args_keys:  # one arguments object, after a usable name
                if not named or args_start >= 0:
                    return -1
                args_start = start
            elif key in name_keys and not named:
                raw = text[start:end]
                if not (WHOLE_STRING.fullmatch(raw) and raw[1:-1].strip()):
                    return -1  # (the scanner would go on looking for one)
                named = True
        if args_start < 0 or text[args_start] != "{":
            return -1
        for key, start, end, value in members:
            if self._member(key) != DELEGATE:
                self._value(key, text[start:end])
                continue
            self._args = arguments = self._make_args()
            if not arguments.take_decoded(text, start, end, value):  # type: ignore[arg-type]
                arguments.feed(text, start, eof=False, bound=stop)
                if not arguments.done:  # cannot happen for a whole object
                    arguments.close()
        self._end()
        return close

    def _read_args_value(self, text: str, pos: int, stop: int) -> int:
        if not self._mode:
            pos = skip_whitespace(text, pos, stop)
            if pos >= stop:
                return pos
            if text[pos] == "{" and self._committed and self._args is None:
                self._mode = "stream"
                self._args = self._make_args()
            else:
                self._mode = "capture"
                self._string_args = text[pos] == '"'
                self._captured = []
                self._capture = JsonScanner(self._captured.append)
        if self._mode == "stream":
            assert self._args is not None
            new = self._args.feed(text, pos, eof=False, bound=stop)
            if self._args.failed:
                self._skipping = True
                return self.feed(text, new, eof=False)
            if self._args.done:
                self._mode = ""
                self._resume_outer()
            return new
        assert self._capture is not None
        new = self._capture.feed(text, pos, stop)
        if self._capture.failed:
            self._skipping = True
            return self.feed(text, new, eof=False)
        if self._capture.done:
            self._capture = None
            self._mode = ""
            if self._committed:
                self._replay()
            self._resume_outer()
        return new

    def _resume_outer(self) -> None:
        assert self._outer is not None  # (a value is read for it only once it exists)
        self._outer.resume()

    def _end(self) -> None:
        """End of the object, of the call, or of input."""
        if self.done:
            return
        self.done = True
        if self._committed:
            self._outer = None  # (it holds this builder's methods: no cycle left behind)
        if self._capture is not None:
            self._captured.append(self._capture.close())
            self._capture = None
        if not self._committed:
            self.failed = True
            # a whole object with a name but no arguments (require_args): not a call
            outer = self._outer
            self.malformed = self.name is not None and outer is not None and outer.done
            self._outer = None  # (it holds this builder's methods: no cycle left behind)
            return
        if self._captured:
            self._replay()
        if self._args is None:
            self._args = self._make_args()
        self._args.close()

    def close(self) -> None:
        self._end()


def _discard(_: str) -> None:
    """The outer object of a name-carrying call is markup: its text goes nowhere."""


BEFORE, ELEMENTS, ELEMENT, AFTER_ELEMENT = range(4)


class JsonCallArrayBuilder:
    """`[{call}, {call}, …]`: every element is a call, emitted as soon as its name is known.

    The engine's `commit` starts a new call for each element (a new index), so the calls
    of one array stream one after the other. An element that is not a call object ends
    the array: before any call it means the text was not a call array at all (`failed`,
    and the engine gives the text back); after one it is markup up to the next marker.
    """

    __slots__ = (
        "spec",
        "done",
        "failed",
        "malformed",
        "calls",
        "_commit",
        "_make_args",
        "_stops",
        "_stop_list",
        "_next_stop",
        "_state",
        "_element",
        "_skipping",
    )

    def __init__(
        self,
        spec: JsonCallArray,
        stops: tuple[str, ...],
        commit: Callable[[str, str | None], None],
        make_args: Callable[[], JsonArgsBuilder],
        next_stop: NextStop | None = None,
    ) -> None:
        self.spec = spec
        self.done = False
        self.failed = False
        self.malformed = False
        self.calls = 0
        self._commit = commit
        self._make_args = make_args
        self._stop_list = stops
        self._stops = markers(stops)
        self._next_stop = next_stop or NextStop(self._stops)
        self._state = BEFORE
        self._element: JsonCallBuilder | None = None
        self._skipping = False

    def _commit_element(self, name: str, call_id: str | None) -> None:
        self.calls += 1
        self._commit(name, call_id)

    def feed(self, text: str, pos: int, eof: bool) -> int:
        """Consume text[pos:] up to a following marker; return the new position."""
        if self._skipping:
            pos, reached = skip_to_stop(self._stops, text, pos, eof)
            if reached:
                self.done = True
            return pos
        end = len(text)
        while pos < end and not self.done:
            state = self._state
            if state == ELEMENT:
                element = self._element
                assert element is not None
                pos = element.feed(text, pos, eof)
                if not element.done:
                    return pos
                self._element = None
                if element.failed:
                    if not element.malformed and eof and not self.calls:
                        self.failed = self.done = True  # the output ended inside it
                        return pos
                    return self._end_badly(text, pos, eof)
                self._state = AFTER_ELEMENT
                continue
            pos = skip_whitespace(text, pos, end)
            if pos >= end:
                break
            ch = text[pos]
            if state == BEFORE:
                if ch != "[":
                    return self._end_badly(text, pos, eof)
                self._state = ELEMENTS
                pos += 1
            elif ch == "]" and state in (ELEMENTS, AFTER_ELEMENT):
                self.done = True
                return pos + 1
            elif ch == "," and state == AFTER_ELEMENT:
                self._state = ELEMENTS
                pos += 1
            elif ch == "{" and state == ELEMENTS:
                spec = JsonCall(
                    self.spec.name_keys,
                    self.spec.args_keys,
                    self.spec.name_is_key,
                    self.spec.id_keys,
                )
                self._element = JsonCallBuilder(
                    spec, self._stop_list, self._commit_element, self._make_args, self._next_stop
                )
                self._state = ELEMENT
            else:
                return self._end_badly(text, pos, eof)
        if eof and not self.done:
            self.close()
        return pos

    def _end_badly(self, text: str, pos: int, eof: bool) -> int:
        """Not (or no longer) an array of calls."""
        if not self.calls:
            self.failed = self.malformed = True
            self.done = True
            return pos
        self._skipping = True  # the rest up to a marker is markup of the broken array
        return self.feed(text, pos, eof)

    def close(self) -> None:
        if self._element is not None:
            self._element.close()
            self._element = None
        if not self.calls:
            self.failed = True
        self.done = True
