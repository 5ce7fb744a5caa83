"""The JSON dialects that carry the call's name: one call object, or an array of them.

The object's name and id are read by an outer scanner whose text is markup; its
arguments are handed to a `json_args` reader of the same sink, so they stream as the
model's own bytes and are typed the same way.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Sequence

from .json_args import JsonArgsReader, skip_to_stop, skip_whitespace
from .json_stream import (
    DELEGATE,
    DONE,
    ERROR,
    PAUSED,
    WITHHOLD,
    WHOLE_STRING,
    JsonScanner,
    loads_or_none,
    whole_members,
)
from .markers import LEAD_REACH, markers
from .protocol import (
    Call,
    DialectRow,
    Opening,
    Pairs,
    Sink,
    indent_json,
    json_object,
    no_literals,
    the_call,
)
from . import shortcuts
from .spec import JsonArgs, JsonCall, JsonCallArray

_MAX_NAME = 256  # a call's name is at most this long, as `name(max_len=256)` reads one
# the longest JSON string that can hold such a name: quotes, and each character written as
# a surrogate pair's two escapes (12 characters); a name string still open past this many
# characters names no call, decided there (whole or streamed alike), never held to its end
_NAME_SPAN = 2 + 12 * _MAX_NAME
# the characters of a call object, from its `{`, by which its name must be known (its value
# read to its end): members written before the name (arguments first, an id, anything) are
# held until the name decides the call, so an object that has named none by then is no
# call, decided there (whole or streamed alike), its text given back as it arrives
_BEFORE_NAME = 65_536
_ARGUMENTS = JsonArgs()  # the item of a call object's arguments value
# the longest head a lean read holds while its arguments' key arrives (`_lean_key`): past
# it (whitespace without end), the outer scanner reads on
_LEAN_SPAN = 1024
_Heads = tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]


# the fields `_whole` decides as the outer scanner does; an array's, for its elements
SHORTCUT_KNOWS = frozenset({"name", "arguments", "name_is_key", "id", "require_args"})
# `write_*` fields say how `render` writes, never how text is read
ARRAY_SHORTCUT_KNOWS = frozenset(
    {
        "name",
        "arguments",
        "name_is_key",
        "id",
        "bare",
        "write_indent",
        "write_indent_depth",
        "write_id",
        "write_call_id",
    }
)


class JsonCallReader:
    """`{"name": NAME, "arguments": {...}}`: finds the name, streams the arguments.

    Arguments written before the name (or encoded as a JSON string) are read whole and
    held, then replayed into the arguments reader once the name is known, since the
    name decides how they are typed.
    """

    __slots__ = (
        "item",
        "name",
        "call_id",
        "done",
        "failed",
        "malformed",
        "committed",
        "_sink",
        "_stop_list",
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
        "_tried_whole",
        "_unnamed",
        "_heads",
        "_streamed",
        "_lead",
        "_lean",
        "_keyed",
        "stops",
        "_whole_first",
        "_heads_first",
        "_spare_args",
        "_spare_outer",
        "_relean",
    )

    def __init__(self, item: JsonCall, stops: tuple[str, ...], sink: Sink) -> None:
        self.item = item  # what it was made for: renewed only for the same (`renew`)
        self.stops = stops
        self.name: str | None = None
        self.call_id: str | None = None
        self.done = False
        self.failed = False
        self.malformed = False  # failed on text that is not a call, not for want of text
        self.committed = False  # the call is real: its name (and with require_args, arguments) read
        self._sink = sink
        self._stop_list = stops
        self._stops = markers(stops)
        self._next_stop = sink.next_stop(stops)
        self._outer: JsonScanner | None = None  # made when the fast path cannot read it all
        self._args: JsonArgsReader | None = None
        self._mode = ""  # "", "stream" or "capture": how the current arguments value is read
        # the arguments reader while it streams a named call's object (`_mode` "stream",
        # committed, not skipping, not done), else None: `read`'s one test for its fast path
        self._streamed: JsonArgsReader | None = None
        self._lead = self._stops.lead  # (`Markers.lead`: one `str.find` rules out any stop)
        self._capture: JsonScanner | None = None
        self._captured: list[str] = []
        self._string_args = False
        self._started = False
        self._skipping = False
        self._args_seen = False
        # `_whole` is tried once, unless the shortcut may not read this item (or the name
        # is a key: `_whole` reads no such object)
        declined = not shortcuts.takes(item, SHORTCUT_KNOWS)
        self._tried_whole = declined or item.name_is_key
        self._unnamed = 0  # characters read from the `{` while no name is known
        # the patterns of the object's head (`{"name": "NAME"`), read whole (`_head`) until
        # it is tried; None where the shortcuts may not read this item
        self._heads: _Heads | None = (
            None if declined else _heads(item.name, item.arguments, item.id, item.name_is_key)
        )
        # the object's head as far as it was read without the outer scanner (`_head`): its
        # name member whole, then up to its arguments' value (`{"name": "NAME", "args": `)
        # once `_keyed`; no scanner is made while the rest is the arguments' object and
        # the `}` (`_lean_read`); "" else
        self._lean = ""
        self._keyed = False
        # what `renew` goes back to: the item's, worked out once
        self._whole_first = self._tried_whole
        self._heads_first = self._heads
        # the arguments reader of the call before, renewed for this one's (`_make_args`)
        self._spare_args: JsonArgsReader | None = None
        # the outer scanner of the call before, when it read its object whole, renewed for
        # this one's (`_new_outer`)
        self._spare_outer: JsonScanner | None = None
        # the outer scanner reads a lean head again (`_unlean`) whose key named the call: that
        # key's value is the arguments' again, not a member after the name
        self._relean = False

    def renew(self) -> None:
        """Back to the state `__init__` leaves it in, for the next call of the same item,
        stops and sink (`DialectSink._dialect`): what it took from them is kept, what it
        read is forgotten, so the next call reads as a new reader would. Its arguments
        reader is kept too, renewed when the next call's arguments begin (`_make_args`)."""
        self.name = self.call_id = None
        self.done = self.failed = self.malformed = self.committed = False
        self._outer = None
        if self._args is not None:
            self._spare_args = self._args
            self._args = None
        self._mode = ""
        self._streamed = None
        self._capture = None
        self._captured = []
        self._string_args = self._started = self._skipping = self._args_seen = False
        self._tried_whole = self._whole_first
        self._unnamed = 0
        self._heads = self._heads_first
        self._lean = ""
        self._keyed = False

    def _commit_name(self) -> None:
        """The call is real: its name is known (and, with require_args, its arguments began)."""
        if self.committed or self.name is None:
            return
        if self.item.require_args and not self._args_seen:
            return
        self.committed = True
        self._sink.commit_call(self.name, self.call_id)

    def _member(self, key: str) -> int:
        if self._outer is not None:  # (the fast path `_whole` reads whole objects only)
            naming = key in self.item.name and self.name is None and not self.committed
            self._outer.value_limit = _NAME_SPAN if naming else None
        if self.item.name_is_key:  # `{NAME: {...}}`: the first key names the call
            if self._relean:  # (`_unlean`: the key that named it, read again)
                self._relean = False
                return DELEGATE
            if self.name is None and key.strip() and len(key.strip()) <= _MAX_NAME:
                self.name = key.strip()
                self._args_seen = True
                self._commit_name()
                if self._outer is not None and self.committed:
                    self._outer.key_limit = None  # (the keys after it are no name)
                return DELEGATE
            return WITHHOLD
        if key in self.item.arguments:
            self._args_seen = True
            self._commit_name()
            return DELEGATE
        return WITHHOLD

    def _value(self, key: str, raw: str) -> None:
        if key in self.item.id and self.name is None and self.call_id is None:
            ok, call_id = loads_or_none(raw)
            if ok and isinstance(call_id, (str, int)) and not isinstance(call_id, bool):
                self.call_id = str(call_id)
        if key in self.item.name and self.name is None:
            ok, name = loads_or_none(raw)
            if ok and isinstance(name, str) and name.strip() and len(name.strip()) <= _MAX_NAME:
                self.name = name.strip()
                self._commit_name()
                if self._captured and self._capture is None and self.committed:
                    self._replay()
        return None

    def _make_args(self) -> JsonArgsReader:
        spare = self._spare_args
        if spare is not None:  # (the call before's, this reader renewed: `renew`)
            self._spare_args = None
            spare.renew()
            return spare
        return JsonArgsReader(_ARGUMENTS, self._stop_list, self._sink)

    def _replay(self) -> None:
        """Feed a held arguments value, read whole, into the arguments reader."""
        raw = "".join(self._captured)
        self._captured = []
        if self._string_args:
            ok, decoded = loads_or_none(raw)
            raw = decoded if ok and isinstance(decoded, str) else ""
        if self._args is None:
            self._args = self._make_args()
        self._args.read(raw, 0, eof=True)
        self._args.close()

    def read(self, text: str, pos: int, eof: bool) -> int:
        """Consume text[pos:] up to a following marker; return the new position."""
        streamed = self._streamed
        if streamed is not None and not eof and shortcuts.ON:
            # no stop marker in it, nor one begun: the arguments read it all (`_streaming`,
            # having found nothing); with no lead ("") `find` finds one at `pos`, never -1
            if text.find(self._lead, pos) < 0:
                end = len(text)
                new = streamed.read(text, pos, False, end)
                if new >= end and not streamed.done and not streamed.failed:
                    return new  # (the commonest: the object goes on)
                return self._streamed_on(text, pos, new, end, end)
            new = self._streaming(text, pos)
            if new >= 0:
                return new
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
        if end - pos <= LEAD_REACH and text.find(self._lead, pos) < 0 and shortcuts.ON:
            at, stop = -1, end  # no stop marker, nor one begun (`Markers.lead`)
        else:
            at = self._next_stop.find(text, pos)
            stop = at if at >= 0 else end - self._stops.held(text, pos)
        if not self._tried_whole:
            self._tried_whole = True
            whole_end = self._whole(text, pos, stop)
            if whole_end >= 0:
                return whole_end
        if self.done:
            return pos
        if self._heads is not None and not eof:
            new = self._head(text, pos, stop, end)
            if new < 0:
                return pos  # the head is still arriving: read once it is whole
            pos = new
        unnamed = self.name is None  # not narrowed: `_read_outer` may name it (mypyc checks)
        if unnamed:  # read no further than where the name must be known
            first = pos
            bound = pos + _BEFORE_NAME - self._unnamed
            if bound >= stop:
                pos = self._read_outer(text, pos, stop, end, at, eof)
                if self.name is None:
                    self._unnamed += pos - first
                return pos
            pos = self._read_outer(text, pos, bound, end, -1, False, bounded=True)
            if self.name is None:
                self._unnamed += pos - first
                if self._unnamed >= _BEFORE_NAME and not self.done:
                    self.malformed = True  # no name by then: no call
                    self._end()
                return pos
            if self.done or pos < bound:
                return pos
        return self._read_outer(text, pos, stop, end, at, eof)

    def _head(self, text: str, pos: int, stop: int, end: int) -> int:
        """The fast path for the object's opening in the common shape: `{` and a plain
        name first, read in one step once the name's string is whole, and its arguments'
        key with it when the text has it; the name and the key decided as the outer
        scanner's callbacks decide them (`_value`, `_member`), with no scanner made
        (`_lean`, `_lean_read`); where it stopped. -1 while the text to the end is still
        the start of such a head (it names no call before its string is whole, nor can it
        fail: the text waits in the engine and is read again with the next delta).
        Anything else: `pos`, and the outer scanner reads it all."""
        head, begun, lean, _ = self._heads  # type: ignore[misc]
        found = lean.match(text, pos, stop)
        keyed = found is not None
        if found is None:
            found = head.match(text, pos, stop)
            if found is None:
                if stop == end and begun.fullmatch(text, pos, end) is not None:
                    return -1
                self._heads = None  # tried: the outer scanner reads from here on
                return pos
        self._heads = None
        name = found.group("name")[1:-1].strip()
        if not name:
            return pos  # the outer scanner reads it all
        if not self.item.name_is_key:
            id_key = found.group("id_key")
            if id_key is not None:  # an id first: decided as the outer scanner's `_value` does
                self._value(id_key, found.group("id"))
        self._lean = found.group()
        self.name = name
        if keyed:  # the arguments' key, or the name as the key (`_member` commits there)
            self._keyed = self._args_seen = True
        self._commit_name()
        return found.end()

    def _streaming(self, text: str, pos: int) -> int:
        """`read` while the arguments object of a named call streams and no stop marker is
        in the text: its steps (`_read_outer`'s first turn, `_read_args_value`'s stream
        branch) without the layers; -1, having read nothing, when a marker is there."""
        stops = self._stops
        if stops.find(text, pos) is not None:
            return -1
        end = len(text)
        low = end - stops.max_prefix  # (`Markers.held` without its call)
        tail = stops.find_tail(text, low if low > pos else pos)
        stop = end if tail is None else tail.start()
        if pos >= stop:
            return pos
        args = self._args
        assert args is not None
        return self._streamed_on(text, pos, args.read(text, pos, eof=False, bound=stop), stop, end)

    def _streamed_on(self, text: str, pos: int, new: int, stop: int, end: int) -> int:
        """The rest of `_streaming` once the arguments read text[pos:stop] up to `new`."""
        outer = self._outer
        args = self._args
        assert args is not None
        if args.failed:  # (it told the sink)
            self._skipping = True
            self._streamed = None
            new = self.read(text, new, eof=False)
        elif args.done:
            self._mode = ""
            self._streamed = None
            if outer is not None:  # (`_resume_outer`, without its call)
                outer.resume()
            elif self._lean and new < stop and text[new] == "}":  # (`_lean_read`'s step,
                self._end()  # without its call: the object ends right after its arguments)
                return new + 1
        if new >= stop or self.done:
            return new  # (`_read_outer`'s loop ends: nothing after it applies to a named call)
        # (the outer scanner paused on the arguments; a lean read's while they stream)
        paused = outer.state == PAUSED if outer is not None else not args.done
        if new == pos and not paused:
            return new
        return self._read_outer(text, new, stop, end, -1, False)

    def _read_outer(
        self, text: str, pos: int, stop: int, end: int, at: int, eof: bool, bounded: bool = False
    ) -> int:
        """Read the object up to `stop`: a stop marker at `at` (or none: -1), or the bound
        on the text before the name (`bounded`)."""
        if self._lean:
            return self._lean_read(text, pos, stop, end, at, eof)
        outer = self._outer
        if outer is None:
            outer = self._outer = self._new_outer()
            if self.item.name_is_key and not self.committed:
                outer.key_limit = _NAME_SPAN  # the name is a key: bounded as a name
        while pos < stop and not self.done:
            if outer.state == PAUSED:
                new = self._read_args_value(text, pos, stop)
            else:
                new = outer.read(text, pos, stop)
                if outer.state == DONE:  # (`done` and `failed`, without the properties' calls)
                    self._end()
                    return new
                if outer.state == ERROR:
                    if not self.committed:  # not a call object: it ends right here
                        self.malformed = True
                        self._end()
                        return new
                    self._skipping = True  # malformed: the rest up to a marker is markup
                    self._malformed_args()
                    return self.read(text, new, eof)
            if new == pos and outer.state != PAUSED:
                break
            pos = new
        if not self.done and not bounded and stop < end and self._marker_at_opening(text[stop]):
            self._end()
            self.malformed = True  # no call object, whatever the marker turns out to be
            return stop
        if not self.done and (at >= 0 or eof):
            if at >= 0 and self.committed:  # a marker ends the call object before it closed
                self._malformed_args()
            self._end()
            return stop if at >= 0 else end  # a partial marker at the end is markup
        return pos

    def _lean_read(self, text: str, pos: int, stop: int, end: int, at: int, eof: bool) -> int:
        """`_read_outer` after a head read whole (`_lean`), without the outer scanner, in
        the common shape: whitespace, the arguments' object (streamed as
        `_read_args_value` streams it), whitespace and the object's `}`. Any other turn
        (another member, a string or a marker before the `}`, the end of the output) makes
        the outer scanner (`_unlean`) and `_read_outer` goes on from there."""
        if not self._keyed:  # the arguments' key may still come, maybe cut short
            pos = self._lean_key(text, pos, stop, end, eof)
            if not self._keyed:
                if pos >= 0:
                    return pos
                self._unlean()
                return self._read_outer(text, -pos - 1, stop, end, at, eof)
        while pos < stop:
            args = self._args
            if self._mode:  # the arguments stream (`_read_args_value`)
                assert args is not None
                new = args.read(text, pos, eof=False, bound=stop)
                if args.failed:  # (it told the sink)
                    self._unlean()
                    self._skipping = True
                    self._streamed = None
                    new = self.read(text, new, eof=False)
                    if self.done:  # (as `_read_outer`'s loop ends, its scanner left alone)
                        return new
                    return self._read_outer(text, new, stop, end, at, eof)
                if not args.done:
                    pos = new
                    break
                self._mode = ""
                self._streamed = None
                pos = new
                continue
            pos = skip_whitespace(text, pos, stop)
            if pos >= stop:
                break
            char = text[pos]
            if args is None and char == "{":  # the arguments' object begins
                self._mode = "stream"
                args = self._args = self._streamed = self._make_args()
                args._started = True  # (what its `read` would find first: this `{`)
                continue
            if args is not None and char == "}":  # the object ends after its arguments
                self._end()
                return pos + 1
            break
        if pos >= stop and at < 0 and not eof:
            return pos
        self._unlean()
        return self._read_outer(text, pos, stop, end, at, eof)

    def _lean_key(self, text: str, pos: int, stop: int, end: int, eof: bool) -> int:
        """The rest of a lean head after its name member: a comma and the arguments' key,
        with the head read so far (`_lean`): where it stopped once it is whole (`_keyed`);
        `stop` while the text up to its end may still grow into it (the text read goes
        into `_lean`); else `-pos - 1` (the outer scanner reads from `pos`)."""
        head = self._lean
        full = head + text[pos:stop]
        _, _, lean, begun = self._heads_first  # type: ignore[misc]
        found = lean.match(full)
        if found is not None:  # (the name member is `head`'s and the same again)
            self._lean = found.group()
            self._keyed = self._args_seen = True
            self._commit_name()
            return pos + found.end() - len(head)
        if stop == end and not eof and len(full) <= _LEAN_SPAN and begun.fullmatch(full):
            self._lean = full
            return stop
        return -pos - 1

    def _unlean(self) -> None:
        """The outer scanner a lean read did without (`_lean_read`), made where the read
        stands: the head is read again by it (its callbacks find the call named and
        committed, and decide nothing again), paused on the arguments' value, and past
        that value once the arguments are done."""
        head, self._lean = self._lean, ""
        outer = self._outer = self._new_outer()
        self._relean = self.item.name_is_key
        outer.read(head, 0, len(head))
        self._relean = False
        if self._args is not None and not self._mode:  # (keyed, its arguments done)
            outer.resume()

    def _new_outer(self) -> JsonScanner:
        """The object's outer scanner: the one of the call before, renewed, when that read
        its object whole (`_end`), else a new one."""
        outer = self._spare_outer
        if outer is None:
            return JsonScanner(_discard, on_member=self._member, on_value=self._value)
        self._spare_outer = None
        outer.renew(_discard, self._member, self._value)
        return outer

    def _marker_at_opening(self, first: str) -> bool:
        """Whether a marker, whole or still arriving, begins right after the object's `{`
        (and whitespace) with a `first` character no call object has there (`{<|` of
        llama3's `{<|python_tag|>`): the text is no call either way, as `Opening` promises,
        so the reader fails there at once; a marker cut short at the end of the output
        is then read where the `{` was, as text before a whole one would be."""
        outer = self._outer
        return (
            not self.committed
            and outer is not None
            and outer.opened_only
            and first not in _OPENING.first
            and first not in " \t\n\r"  # (JSON whitespace: a marker may begin with it)
        )

    def _whole(self, text: str, pos: int, stop: int) -> int:
        """The fast path for a call object already whole before `stop`, in the common shape:
        a plain name, then one arguments object. Its members go through `_member` and
        `_value` in order, and the arguments to the reader, exactly as the outer scanner
        would hand them over; only the character loop over the outer object is skipped.
        Any other shape (arguments first, or twice, or as a string; a name as the key)
        returns -1 before anything is called, and the outer scanner reads it.
        """
        item = self.item
        if item.name_is_key:
            return -1
        # (no `rfind("}")` first: over a run of `{"` that no object closes, one per call,
        # it read the rest of the output each time; the members' own reading stops at the
        # first thing that is no whole object)
        found = whole_members(text, pos, stop)
        if found is None:
            return -1
        members, close = found
        args_keys, name_keys = item.arguments, item.name
        named = False
        args_start = -1
        for key, start, end, _ in members:
            if key in args_keys:  # one arguments object, after a usable name
                if not named or args_start >= 0:
                    return -1
                args_start = start
            elif key in name_keys and not named:
                raw = text[start:end]
                if not (WHOLE_STRING.fullmatch(raw) and raw[1:-1].strip()) or len(raw) > _MAX_NAME:
                    return -1  # (the scanner would go on looking for one)
                if end - pos > _BEFORE_NAME:
                    return -1  # (named too late: the scanner gives it up at the bound)
                named = True
        if args_start < 0 or text[args_start] != "{":
            return -1
        for key, start, end, value in members:
            if self._member(key) != DELEGATE:
                self._value(key, text[start:end])
                continue
            self._args = arguments = self._make_args()
            if not arguments.take_decoded(text, start, end, value):  # type: ignore[arg-type]
                arguments.read(text, start, eof=False, bound=stop)
                if not arguments.done:  # cannot happen for a whole object
                    arguments.close()
        self._end()
        return close

    def _read_args_value(self, text: str, pos: int, stop: int) -> int:
        if not self._mode:
            pos = skip_whitespace(text, pos, stop)
            if pos >= stop:
                return pos
            if text[pos] == "{" and self.committed and self._args is None:
                self._mode = "stream"
                args = self._args = self._streamed = self._make_args()
                args._started = True  # (what its `read` would find first: this `{`)
            else:
                self._mode = "capture"
                self._string_args = text[pos] == '"'
                self._captured = []
                self._capture = JsonScanner(self._captured.append)
        if self._mode == "stream":
            assert self._args is not None
            new = self._args.read(text, pos, eof=False, bound=stop)
            if self._args.failed:  # (it told the sink)
                self._skipping = True
                self._streamed = None
                return self.read(text, new, eof=False)
            if self._args.done:
                self._mode = ""
                self._streamed = None
                self._resume_outer()
            return new
        assert self._capture is not None
        new = self._capture.read(text, pos, stop)
        if self._capture.failed:
            self._skipping = True
            self._malformed_args()
            return self.read(text, new, eof=False)
        if self._capture.done:
            self._capture = None
            self._mode = ""
            if self.committed:
                self._replay()
            self._resume_outer()
        return new

    def _malformed_args(self) -> None:
        """The arguments of the call being read never form an object: the engine's
        `malformed_calls` switch decides the call (`runtime/call_outcome.py`)."""
        tell = getattr(self._sink, "malformed_args", None)
        if tell is not None:
            tell()

    def _resume_outer(self) -> None:
        if self._outer is not None:  # (None in a lean read: `_lean_read` goes on itself)
            self._outer.resume()

    def _end(self) -> None:
        """End of the object, of the call, or of input."""
        if self.done:
            return
        self.done = True
        self._streamed = None
        if self.committed:
            outer = self._outer
            if outer is not None and outer.state == DONE and shortcuts.ON:
                outer.spare()  # (no cycle through its callbacks)
                self._spare_outer = outer  # (the next call's, renewed: `_new_outer`)
            self._outer = None
        if self._capture is not None:
            self._captured.append(self._capture.close())
            self._capture = None
        if not self.committed:
            self.failed = True
            # a whole object with a name but no arguments (require_args): not a call
            outer = self._outer
            self.malformed = self.name is not None and outer is not None and outer.done
            self._outer = None  # (it holds this reader's methods: no cycle left behind)
            return
        if self._captured:
            self._replay()
        args = self._args
        if args is None:
            args = self._args = self._make_args()
        if not args.done:  # (one done is closed: `JsonArgsReader.close` would do nothing)
            args.close()

    def close(self) -> None:
        self._end()


_SPACE = r"[ \t\n\r]*+"  # JSON's whitespace (possessive: a prefix never backtracks into it)
_PLAIN = r'[^"\\\x00-\x1f]{0,%d}' % _MAX_NAME  # a string's characters without an escape
# the id value a head reads whole: a plain string or an integer (what `_value` keeps as id)
_ID_VALUE = rf'"{_PLAIN}"|-?(?:0|[1-9][0-9]*+)'
# a head's token: the pattern of the token whole, and of any text it may still grow into
# (the empty text among them), or None where the two are one (whitespace)
_Token = tuple[str, str | None]


def _keys_token(keys: Sequence[str]) -> _Token:
    """A quoted key among `keys`, and its beginnings (the key without its closing quote too)."""
    quoted = [f'"{key}"' for key in keys]  # (as the head reads a key: unescaped)
    begun = sorted({re.escape(q[:n]) for q in quoted for n in range(len(q))}, key=len)
    return "(?:%s)" % "|".join(re.escape(q) for q in quoted), "(?:%s)" % "|".join(begun)


def _begun(*tokens: _Token) -> str:
    """The pattern of any text that the run of `tokens` may still grow into (or that is it
    whole): each token's beginnings, or the token whole and the rest begun."""
    pattern = ""
    for full, begun in reversed(tokens):
        pattern = full + pattern if begun is None else f"(?:{begun}|{full}{pattern})"
    return pattern


@lru_cache(maxsize=64)
def _heads(
    names: tuple[str, ...], arguments: tuple[str, ...], ids: tuple[str, ...], name_is_key: bool
) -> _Heads:
    """A call object's head read whole (`JsonCallReader._head`): `{`, whitespace, an id
    member first maybe (a key of `ids` with a plain string or an integer: group `id_key`,
    `id`), and a member whose key names the call (group `key`; no arguments or id key) and
    whose value is a plain string as long as a name may be (group `name`), and a comma; the
    text that may still grow into one (up to its end); the lean head, those members, a
    comma and an arguments key with its colon and whitespace; and the text that may still
    grow into a lean head once its members are whole (`_lean_key`). Where the name is the
    key (`{NAME: {...}}`), the lean head is `{`, the name's plain key (group `name`) and its
    colon, the text that may grow into it the second pattern, and no other head."""
    space: _Token = (_SPACE, None)
    brace: _Token = (r"\{", "")
    colon: _Token = (":", "")
    comma: _Token = (",", "")
    string: _Token = (f'"{_PLAIN}"', f'(?:"{_PLAIN})?')
    if name_is_key:
        lean = re.compile(rf"\{{{_SPACE}(?P<name>\"{_PLAIN}\"){_SPACE}:{_SPACE}")
        begun = re.compile(_begun(brace, space, string, space, colon))
        return _NEVER, begun, lean, _NEVER
    keys = [key for key in names if key not in arguments and key not in ids]
    id_keys = [key for key in ids if key not in names and key not in arguments]
    if not keys or not arguments:
        return _NEVER, _NEVER, _NEVER, _NEVER
    name_key = _keys_token(keys)
    args_key = _keys_token(arguments)
    name_part = [name_key, space, colon, space, string]
    first = rf'"(?P<key>{"|".join(re.escape(key) for key in keys)})"'
    # (no id: its groups never match, so `_head` reads them alike)
    members = (
        rf'\{{{_SPACE}(?:(?P<id_key>(?!))(?P<id>))?{first}{_SPACE}:{_SPACE}(?P<name>"{_PLAIN}")'
    )
    begun_members = _begun(brace, space, *name_part)
    if id_keys:
        id_key = _keys_token(id_keys)
        id_value: _Token = (f"(?:{_ID_VALUE})", f'(?:"{_PLAIN}|-?(?:0|[1-9][0-9]*+)?)')
        id_part = [id_key, space, colon, space, id_value, space, comma, space]
        either = "|".join(re.escape(key) for key in id_keys)
        members = (
            rf'\{{{_SPACE}(?:"(?P<id_key>{either})"{_SPACE}:{_SPACE}(?P<id>{_ID_VALUE})'
            rf"{_SPACE},{_SPACE})?{first}{_SPACE}:{_SPACE}(?P<name>\"{_PLAIN}\")"
        )
        begun_members = rf"\{{{_SPACE}(?:{_begun(*name_part)}|{_begun(*id_part, *name_part)})"
    head = re.compile(rf"{members}(?:{_SPACE},{_SPACE})?")
    lean = re.compile(rf"{members}{_SPACE},{_SPACE}{args_key[0]}{_SPACE}:{_SPACE}")
    lean_begun = re.compile(members + _begun(space, comma, space, args_key, space, colon))
    return head, re.compile(begun_members), lean, lean_begun


_NEVER = re.compile(r"(?!)")


def _discard(_: str) -> None:
    """The outer object of a name-carrying call is markup: its text goes nowhere."""


BEFORE, ELEMENTS, ELEMENT, AFTER_ELEMENT = range(4)
# the text between two elements of an array, up to the next one's `{`
_NEXT_ELEMENT = re.compile(r"[ \t\n\r]*+,[ \t\n\r]*+\{")


class JsonCallArrayReader:
    """`[{call}, {call}, …]`: every element is a call, emitted as soon as its name is known.

    Each element commits a call of its own through the sink (a new index), so the calls
    of one array stream one after the other. An element that is not a call object ends
    the array: before any call it means the text was not a call array at all (`failed`,
    and the engine gives the text back); after one it is markup up to the next marker.
    """

    __slots__ = (
        "item",
        "done",
        "failed",
        "malformed",
        "calls",
        "_sink",
        "_stops",
        "_stop_list",
        "_element_spec",
        "_shortcut",
        "_state",
        "_element",
        "_skipping",
        "_bare",
        "_spare_element",
    )

    def __init__(self, item: JsonCallArray, stops: tuple[str, ...], sink: Sink) -> None:
        self.item = item
        self.done = False
        self.failed = False
        self.malformed = False
        self.calls = 0  # elements that were calls
        self._sink = sink
        self._stop_list = stops
        self._stops = markers(stops)
        # every element is a call object of the array's keys, read by a reader of its own
        self._element_spec = JsonCall(
            name=item.name, arguments=item.arguments, name_is_key=item.name_is_key, id=item.id
        )
        self._shortcut = shortcuts.takes(item, ARRAY_SHORTCUT_KNOWS)  # for every element
        self._state = BEFORE
        self._element: JsonCallReader | None = None
        self._skipping = False
        self._bare = False  # the list was written without its brackets
        # the reader of the element before, renewed for the next (`JsonCallReader.renew`)
        self._spare_element: JsonCallReader | None = None

    def read(self, text: str, pos: int, eof: bool) -> int:
        """Consume text[pos:] up to a following marker; return the new position."""
        if self._skipping:
            pos, reached = skip_to_stop(self._stops, text, pos, eof)
            if reached:
                self.done = True
            return pos
        end = len(text)
        element = self._element  # (ELEMENT, the commonest: an element is being read; never
        if element is not None and pos < end:  # done nor skipping then)
            pos = element.read(text, pos, eof)
            if not element.done:
                return pos
            pos = self._element_done(element, text, pos, eof)
            if pos < 0:  # (the array ended or broke there)
                return -pos - 1
        while pos < end and not self.done:
            state = self._state
            if state == ELEMENT:
                element = self._element
                assert element is not None
                pos = element.read(text, pos, eof)
                if not element.done:
                    return pos
                pos = self._element_done(element, text, pos, eof)
                if pos < 0:  # (the array ended or broke there)
                    return -pos - 1
                continue
            if self._bare and state == AFTER_ELEMENT:
                pos = self._after_bare_element(text, pos, eof)
                if self._state != ELEMENTS:
                    return pos
                continue  # `, {`: the next element, in this loop (never a call per element)
            pos = skip_whitespace(text, pos, end)
            if pos >= end:
                break
            ch = text[pos]
            if state == BEFORE:
                if ch == "{" and self.item.bare:  # `{…}, {…}`: the array without its brackets
                    self._bare = True
                    self._state = ELEMENTS
                    continue
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
                self._next_element()
            else:
                return self._end_badly(text, pos, eof)
        if eof and not self.done:
            self.close()
        return pos

    def _element_done(self, element: JsonCallReader, text: str, pos: int, eof: bool) -> int:
        """The element read to its end at `pos`: counted, and the next one begun where `, {`
        follows; where `read` goes on. Where it failed, the array ended (`done`) or broke
        (`_skipping`), and `read` returns at once: `-new - 1` for its position `new`."""
        self._element = None
        self._spare_element = element
        self.calls += element.committed
        if element.failed:
            if not element.malformed and eof and not self.calls:
                self.failed = self.done = True  # the output ended inside it
                return -pos - 1
            return -self._end_badly(text, pos, eof) - 1
        self._state = AFTER_ELEMENT
        if not self._bare and shortcuts.ON:  # `, {`: the next element, in one match
            found = _NEXT_ELEMENT.match(text, pos)
            if found is not None:
                pos = found.end() - 1
                self._next_element()
        return pos

    def _next_element(self) -> None:
        """An element begins at a `{`: its reader, the one before renewed where there is one."""
        element = self._spare_element
        if element is not None and shortcuts.ON:
            self._spare_element = None
            element.renew()
        else:
            element = JsonCallReader(self._element_spec, self._stop_list, self._sink)
        if not self._shortcut:
            element._tried_whole = True  # (the array's item declines it)
            element._heads = None
        element._started = True  # (what its `read` would find first: this `{`)
        self._element = element
        self._state = ELEMENT

    def _after_bare_element(self, text: str, pos: int, eof: bool) -> int:
        """After an element of a bracketless list: `,` and another object go on; anything
        else ends the list at `pos`, and the text from there is the engine's again (content
        after the calls, its whitespace included). Waits while the text does not yet show
        what follows. At `, {` the state is ELEMENTS again and the `{` is where `read` goes on."""
        end = len(text)
        comma = skip_whitespace(text, pos, end)
        if comma < end and text[comma] == ",":
            after = skip_whitespace(text, comma + 1, end)
            if after < end and text[after] == "{":
                self._state = ELEMENTS
                return after
            if after < end:
                self.done = True
                return pos
            if eof:  # a separator the output ends on is markup, as a `,{` cut there is
                self.done = True  # (llama3's `; `: docs/policies.md, "Unfinished output")
                return end
        elif comma < end or eof:
            self.done = True
            return pos
        return pos  # the next object may still come

    def _end_badly(self, text: str, pos: int, eof: bool) -> int:
        """Not (or no longer) an array of calls."""
        if not self.calls:
            self.failed = self.malformed = True
            self.done = True
            return pos
        self._skipping = True  # the rest up to a marker is markup of the broken array
        return self.read(text, pos, eof)

    def close(self) -> None:
        element = self._element
        if element is not None:
            element.close()
            self._element = None
            self.calls += element.committed
        if not self.calls:
            self.failed = True
        self.done = True


def call_object(
    item: JsonCall | JsonCallArray,
    name: str,
    pairs: Pairs,
    call_id: str | None = None,
    last_id: str | None = None,
) -> str:
    """One call as the JSON object the item reads: `{NAME: {…}}` or name and arguments keys
    (after the `id` key holding `call_id`, or before it holding `last_id`, when given)."""
    args = json_object(pairs)
    if item.name_is_key:
        return f"{{{json.dumps(name, ensure_ascii=False)}: {args}}}"
    name_key, args_key = (json.dumps(key) for key in (item.name[0], item.arguments[0]))
    head = tail = ""
    if call_id is not None and item.id:
        head = f"{json.dumps(item.id[0])}: {json.dumps(call_id, ensure_ascii=False)}, "
    if last_id is not None and item.id:
        tail = f", {json.dumps(item.id[0])}: {json.dumps(last_id, ensure_ascii=False)}"
    body = f"{name_key}: {json.dumps(name, ensure_ascii=False)}, {args_key}: {args}"
    return f"{{{head}{body}{tail}}}"


def render_json_call(item: JsonCall, calls: Sequence[Call]) -> str:
    return call_object(item, *the_call(calls))


def render_json_call_array(
    item: JsonCallArray, calls: Sequence[Call], ids: Sequence[str] = ()
) -> str:
    """Every call of the output in one array, as a model writes them, in the item's layout
    (`write_indent`, `write_indent_depth`, `write_id`, `write_call_id` with `ids`)."""
    objects = [
        call_object(
            item,
            name,
            pairs,
            str(index) if item.write_id else None,
            ids[index] if item.write_call_id and index < len(ids) else None,
        )
        for index, (name, pairs) in enumerate(calls)
    ]
    text = "[" + ", ".join(objects) + "]"
    if item.write_indent:
        text = indent_json(text, item.write_indent, item.write_indent_depth)
    return text


# JSON's whitespace, as the scanners skip it (`json_args.skip_whitespace`)
_JSON_SPACE = r" \t\n\r"


_OPENING = Opening("{", _JSON_SPACE, '"}', begins="{")


def json_call_opening(item: JsonCall) -> Opening:
    """`{`, whitespace, then a key's quote (or the `}` of an empty object)."""
    return _OPENING


def json_call_array_opening(item: JsonCallArray) -> Opening:
    """`[`, whitespace, then an element's `{` (or the `]` of an empty array), and that
    element's own opening: `[{[` is no call array from its third character. A bare list
    (`bare=true`) that starts with `{` has no `[` and is not this text."""
    element = f"{re.escape(_OPENING.lead)}[{_OPENING.space}]*+(?=[^{_OPENING.first}])"
    return Opening(
        "[",
        _JSON_SPACE,
        r"{\]",
        element,
        re.escape(_OPENING.lead) + _OPENING.space,
        begins=r"\[{" if item.bare else r"\[",
    )


JSON_CALL = DialectRow(
    JsonCall,
    "json_call",
    JsonCallReader,
    render_json_call,
    no_literals,
    names_calls=True,
    opening=json_call_opening,
    shortcut_knows=SHORTCUT_KNOWS,
)
JSON_CALL_ARRAY = DialectRow(
    JsonCallArray,
    "json_call_array",
    JsonCallArrayReader,
    render_json_call_array,
    no_literals,
    names_calls=True,
    lists_calls=True,
    takes_ids=True,
    opening=json_call_array_opening,
    shortcut_knows=ARRAY_SHORTCUT_KNOWS,
)
