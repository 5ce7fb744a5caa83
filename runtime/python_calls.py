"""The Python-call dialect: `[get_weather(city='Paris', days=3), write_file(path='a')]`.

Each `NAME(key=value, …)` is a call, emitted as soon as its name and `(` are read. Values
are Python literals (strings with Python escapes, numbers, True/False/None and the JSON
spellings true/false/null, lists, tuples and sets as lists, dicts, unary minus). A quote
closes a one-quote string only when `,` `)` `]` `}` (inside a value also `:`), a marker or
the end of output follows it, past whitespace, and for a top-level value a `)` only when the
calls go on after it as calls do; any other quote is a character of the string (templates
write values unescaped: `cmd='echo 'hi' x'`, `command='python3 -c "print('a')"'`). A top-level
string value whose schema allows only strings (or that has none) streams as a JSON string as
its characters arrive, an escape held back until complete; any other value is buffered until
it ends, read as a literal, typed by the schema and sent whole. A value that is not a literal
is kept as its text. Positional arguments have no name: they are read past.

With `list=true` the calls sit in `[…]` separated by commas (pythonic, Llama 4, LFM2); with
`list=false` they follow one another, one per line (OLMo 3), until a marker of the call.
"""

from __future__ import annotations

import ast
import json
from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C
import math
import re
from typing import Any, Sequence

from .batched import Batched
from .coerce import coerce_json, json_text, parse_python
from .limits import MAX_DEPTH, TooDeep
from .markers import LEAD_REACH, markers
from .protocol import Call, DialectRow, Opening, Pairs, RenderError, Sink, no_literals
from .protocol import too_deep_to_write
from . import shortcuts
from .schemas import streams_as_text
from .spec import PythonCalls
from .unwrap import members_text, wrapped_object, write_members

START, CALLS, NAME, ARGS, KEY_AFTER, VALUE, STRING, RAW, DONE = range(9)
_IN_TEXT = frozenset((STRING, RAW))  # the states that read a string's text
_SPACE = re.compile(r"\s*")
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_KEY = re.compile(r"[A-Za-z_]\w*")
_MAX_NAME = 256
# a call's name and its `(` as the NAME state reads them when all of it is here: a name of at
# most _MAX_NAME characters (no name character after it), at most as many spaces or tabs, and
# the `(` (group 2) or the end of the text (the name or its `(` still arriving)
_NAME_OPEN = re.compile(
    r"([A-Za-z_][\w.\-]{0,%d}+)[ \t]{0,%d}+(?:(\()|\Z)" % (_MAX_NAME - 1, _MAX_NAME)
)
_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0",
    "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\n": "",
}  # fmt: skip
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
# the digits of such an escape, read as Python's own parser reads them: ASCII hex, nothing else
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]*")
# the rest of a one-quote string, up to its closing quote, when its escapes are all of
# _SIMPLE_ESCAPES (any other escape, or no closing quote yet: the loop of _string reads it);
# runs of plain characters are taken whole (possessive), so the match is linear and quick
_SIMPLE_CLASS = "[" + re.escape("".join(_SIMPLE_ESCAPES)) + "]"
_SIMPLE_BODY = {q: rf"[^\\{q}]*+(?:\\{_SIMPLE_CLASS}[^\\{q}]*+)*+" for q in "'\""}
_STRING_CLOSES = r"(?=[ \t\n\r]*+(?:[,\]}]|\)[ \t\n\r]*+[,\]]))"  # `)`: as `_after_call` decides
_WHOLE_STRINGS = {q: re.compile(rf"({_SIMPLE_BODY[q]}){q}{_STRING_CLOSES}") for q in "'\""}
# One keyword argument as the loop of `_read` reads it from the ARGS state, taken in one
# match when its text is here (`_params`; the match's region ends before the next marker and
# any tail that may begin one): spaces and commas, a key (`_KEY`, at most _MAX_NAME
# characters) and its `=` (not `==`), then the value when it is a whole one-quote string of
# simple escapes (group 3 or 4, closed as `_WHOLE_STRINGS` closes it: a triple quote's
# third quote is no follower, so it never matches one) or a bare run (group 5:
# no quote, bracket or backslash) that `,` `)` `]` `}` ends, as `_raw` reads it at depth 0.
# Any other value (or none yet) is left to the loop, in the VALUE state at group 2.
# Or the call's `)` (group 6), spaces and commas, and the next call's name and its `(`
# (group 7: as the NAME state reads it, at most _MAX_NAME characters and as many spaces).
_PARAM = re.compile(
    r"\s*+(?:,\s*+)*+(?:([A-Za-z_]\w{0,%d}+)[ \t\n]*+=(?=[^=])()\s*+" % (_MAX_NAME - 1)
    + "(?:'(%s)'%s" % (_SIMPLE_BODY["'"], _STRING_CLOSES)
    + '|"(%s)"%s' % (_SIMPLE_BODY['"'], _STRING_CLOSES)
    + r"|([^,)\]}'\"(\[{\\]*+)(?=[,)\]}]))?"
    + r"|\)()\s*+(?:,\s*+)*+(?:([A-Za-z_][\w.\-]{0,%d}+)[ \t]{0,%d}+\()?)"
    % (_MAX_NAME - 1, _MAX_NAME)
)
_BARE_KEPT = 256  # the bare values a reader keeps typed (`_params`)
_WHOLE_ENOUGH = 8  # unread characters from which `_params` is tried (a speed knob only)
# a string's characters up to its next quote (or next other escape, or lone backslash),
# its escapes all of _SIMPLE_ESCAPES: taken in one match and decoded at once (a run of
# backslashes otherwise goes through the loop of _string two characters at a time)
_SIMPLE_RUNS = {q: re.compile(rf"[^\\{q}]*+(?:\\{_SIMPLE_CLASS}[^\\{q}]*+)*+") for q in "'\""}
# What may follow a one-quote string's closing quote (after whitespace), besides a marker or
# the end of output; a quote followed by anything else is a character of the string (models
# write `cmd='echo 'hi' x'` unescaped, as the templates do not escape): top-level values end
# at `,`, `)` or the list's `]`/`}`, strings inside a value also at `:`. A top-level
# string's quote before `)` closes it only when what follows that `)` goes on as calls go on
# (`_after_call`): `command='python3 -c "print('a')"'` is the whole command, never cut at `a'`.
_AFTER_VALUE = ",)]}"
_AFTER_INNER = ",)]}:"
_WS = " \t\n\r"
_SIMPLE_CHARS = {ch: char for ch, char in _SIMPLE_ESCAPES.items() if ch != "\\"}
# the character after each backslash of a part (no two backslashes meet in one)
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


# a run of commas and spaces, which the ARGS and CALLS states read past a character at a
# time: read at once from a comma where no marker may start in it (before `free` in `_read`),
# the state unchanged (the `_PARAM` match, when tried, fails or succeeds alike from any place
# in the run); else the comma alone. Group 1: a key after it that reaches the end of the text,
# with its spaces and `=` if any, which the ARGS state waits on (as `_KEY` and the loop read
# it: at most _MAX_NAME characters, `key=` may still become `key==`)
_COMMAS = re.compile(r"[\s,]*+(?=([A-Za-z_]\w{0,%d}+[ \t\n]*+=?\Z))?" % (_MAX_NAME - 1))


def _decode_simple(body: str) -> str:
    """A string body whose every backslash starts one of _SIMPLE_ESCAPES, decoded.

    Escaped backslashes are split out first (left to right, as the escapes pair up), so
    each other escape is a backslash and a character that no replacement can make anew.
    Only the escapes a part holds are replaced: one search finds them all, where asking
    for each escape in turn searched a long string once per escape."""
    if "\\" not in body:
        return body
    parts = body.split("\\\\")
    for index, part in enumerate(parts):
        if "\\" in part:
            for ch in set(_ESCAPED.findall(part)):
                char = _SIMPLE_CHARS.get(ch)
                if char is not None:
                    part = part.replace("\\" + ch, char)
            parts[index] = part
    return "\\".join(parts)


SHORTCUT_KNOWS = frozenset({"list"})  # the fields the whole-string match decides as the loop


class PythonCallsReader(Batched):
    """Reads Python calls up to the list's end or a following marker."""

    __slots__ = (
        "item",
        "schema_of",
        "done",
        "failed",
        "malformed",
        "calls",
        "_commit",
        "_stops",
        "_lead",
        "_next_stop",
        "_state",
        "_in_call",
        "_count",
        "_unwraps",
        "_wrapper",
        "_first",
        "_key",
        "_schema",
        "_quote",
        "_buffer",
        "_depth",
        "_raw_quote",
        "_positional",
        "_whole_strings",
        "_typed",
        "_typed_keys",
        "_bare",
    )

    def __init__(self, item: PythonCalls, stops: tuple[str, ...], sink: Sink) -> None:
        self.item = item
        self._batch(sink.emit_args)  # the pieces of one read go out joined (and before a commit)
        self.schema_of = sink.schema_of
        self._unwraps = sink.unwraps
        self._wrapper = False  # the value being read is a wrapper's (`runtime/unwrap.py`)
        self._first = True  # no keyword read in this call: only the first may be a wrapper
        self.done = False
        self.failed = False
        self.malformed = False  # failed on text that is not a call, not for want of text
        self.calls = 0
        self._commit = sink.commit_call
        self._stops = markers(stops)
        # the strings of one text share this search (see _string), the calls read one
        # after another from it too (each list of calls is a reader of its own)
        self._next_stop = sink.next_stop(stops)
        self._state = START if item.list else CALLS
        # a string already whole is read in one match (`_string`), unless shortcuts are off
        self._whole_strings = shortcuts.takes(item, SHORTCUT_KNOWS)
        # (`Markers.lead`: one `str.find` rules out any stop; a shortcut, "" when they are off)
        self._lead = self._stops.lead if self._whole_strings else ""
        self._in_call = False
        self._count = 0
        self._key = ""
        self._schema: dict | None = None
        self._quote = ""
        self._buffer: list[str] = []
        self._depth = 0
        self._raw_quote = ""
        self._positional = False
        # the current call's keys whose values are typed, not streamed as text (`_params`)
        self._typed_keys = sink.typed_keys
        self._typed: frozenset[str] | None = None
        self._bare: dict[str, tuple[dict | None, str]] = {}  # text: (schema, JSON text)

    # -- the push interface ----------------------------------------------------------

    def read(self, text: str, pos: int, eof: bool) -> int:
        """Take what can be decided of text[pos:]; return the new position (`Batched.read`).

        A delta inside a one-quote string that is all simple characters and escapes (no
        quote, no other escape, none cut short: `_SIMPLE_RUNS` to its end) and holds no
        marker nor the start of one (no marker's first character, `Markers.lead`, or else
        none found and none held back) is that string's text whole: sent at once, as
        `_string` sends it (no stop, no whole string to match, one run to the end), the
        commonest delta of a long value."""
        if self._state == STRING and not eof and self._whole_strings:
            runs = _SIMPLE_RUNS.get(self._quote)  # (None for a triple quote)
            end = len(text)
            if runs is not None and pos < end and runs.match(text, pos).end() == end:  # type: ignore[union-attr]
                lead = self._lead
                if (lead and text.find(lead, pos) < 0) or (
                    self._next_stop.find(text, pos) < 0 and not self._stops.held(text, pos)
                ):
                    body = text[pos:]
                    if "\\" in body:
                        body = _decode_simple(body)
                    self._send(encode_basestring(body)[1:-1])  # (`_json_string_body`)
                    return end
        pos = self._read(text, pos, eof)
        pieces = self._pieces
        if pieces:  # (`_flush`, inline: once per delta)
            self._send("".join(pieces))
            pieces.clear()
        return pos

    def _read(self, text: str, pos: int, eof: bool) -> int:
        if self.done:
            return pos
        end = len(text)
        # no marker starts before `free`, nor the start of one: no lead character before it
        # (`Markers.lead`, one `str.find`); `clear` when there is none in the rest at all
        lead = self._lead
        if lead and end - pos <= LEAD_REACH:
            free = text.find(lead, pos)
            if free < 0:
                free = end
        else:
            free = pos
        clear = free == end
        if clear and self._state == ARGS and end - pos >= _WHOLE_ENOUGH:
            if not text[pos].isspace():  # the loop's first iteration comes to `_params` here
                moved = self._params(text, pos, eof, True)  # (no space, no marker to check)
                if moved < 0:
                    return -1 - moved
                pos = moved  # (where it failed, the loop tries it again: it fails alike)
        last, stalled = -1, 0
        # (`done` is set only where the loop returns, or by a string or raw value's reader,
        # which then leaves the DONE state: the loop ends there too)
        while pos < end:
            state = self._state
            if pos == last:  # a safety net: states that read nothing end the calls
                stalled += 1
                if stalled > 8:
                    self._end()
                    return pos
            else:
                last, stalled = pos, 0
            if state in _IN_TEXT:
                if state == STRING:
                    pos = self._string(text, pos, eof, clear)
                else:
                    pos = self._raw(text, pos, eof)
                if self._state != ARGS:  # (still in the value, or DONE)
                    return pos
                continue
            ch = text[pos]
            if ch.isspace():  # (`\s`: the characters `str.isspace` names)
                pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
                if pos >= end:
                    break
                ch = text[pos]
            if pos >= free:
                stops = self._stops
                if stops.at(text, pos):
                    self._end()  # a marker of the call: the calls end here
                    return pos
                if (
                    not eof
                    and pos >= end - stops.max_prefix
                    and ch in stops.firsts
                    and stops.could_start(text, pos)
                ):
                    return pos  # a marker may be starting
            # (the states by how often the loop meets them)
            if state == ARGS:
                # the keyword arguments whole here, in one match each (when there is text
                # enough for some: a delta of a few characters is read by the loop at once)
                if self._whole_strings and end - pos >= _WHOLE_ENOUGH:
                    moved = self._params(text, pos, eof, clear)
                    if moved != pos:
                        if moved < 0:  # a key or a name still arriving there: the loop waits
                            return -1 - moved
                        pos = moved
                        continue
                if ch == ")":
                    self._end_call()
                    pos += 1
                elif ch in "]}":  # the call ends without its `)`: the list decides the rest
                    self._end_call()
                elif ch == ",":
                    commas = _COMMAS.match(text, pos)
                    run = commas.end()  # type: ignore[union-attr]
                    if run > free:
                        pos += 1
                    elif clear and not eof and commas.group(1) is not None:  # type: ignore[union-attr]
                        return run  # a key still arriving: as the key's own iteration returns
                    else:
                        pos = run
                else:
                    found = _KEY.match(text, pos, min(end, pos + _MAX_NAME + 1))
                    if found and found.end() - pos > _MAX_NAME:
                        found = None  # no key is that long: a positional value (read once)
                    after = found.end() if found else pos
                    while after < end and text[after] in " \t\n":
                        after += 1
                    if found and after + 1 == end and text[after] == "=" and not eof:
                        return pos  # `key=` may still become `key==`, which is no key
                    if (
                        found
                        and after < end
                        and text[after] == "="
                        and text[after : after + 2] != "=="
                    ):
                        self._key = found.group()
                        self._schema = self.schema_of(self._key)
                        first, self._first = self._first, False
                        self._wrapper = first and self._unwraps(self._key)
                        self._positional = False
                        self._state = VALUE
                        pos = after + 1
                    elif found and after >= end and not eof:
                        return pos  # `key =` may still be arriving
                    else:  # a positional argument: read past it
                        self._positional = True
                        self._state = VALUE
                continue
            if state == CALLS:
                if ch == "]" and self.item.list:
                    self._end()
                    return pos + 1
                if ch == ",":
                    run = _COMMAS.match(text, pos).end()  # type: ignore[union-attr]
                    pos = run if run <= free else pos + 1
                    continue
                self._state = state = NAME  # (read at once: the loop would come back to it)
            if state == NAME:
                # a name of at most _MAX_NAME characters, then at most as many spaces, then
                # `(`: decided on that much text, whole or streamed (`_NAME_OPEN` when all
                # of it is here: the name as this reads it)
                opened = _NAME_OPEN.match(text, pos) if self._whole_strings else None
                if opened is not None:
                    if opened.group(2) is None:  # (as below: the name reaches the end)
                        if not eof:
                            return pos  # the name or its `(` is still arriving
                        self._end()  # a name cut short by the end of output: markup
                        return end
                    self._start_call(opened.group(1))
                    pos = opened.end()
                    continue
                found = _NAME.match(text, pos, min(end, pos + _MAX_NAME + 1))
                name_end = found.end() if found else pos
                after, limit = name_end, min(end, name_end + _MAX_NAME + 1)
                while after < limit and text[after] in " \t":
                    after += 1
                short = name_end - pos <= _MAX_NAME and after - name_end <= _MAX_NAME
                if found and after < end and text[after] == "(" and short:
                    self._start_call(text[pos:name_end])
                    pos = after + 1
                elif found and after >= end and short:
                    if not eof:
                        return pos  # the name or its `(` is still arriving
                    self._end()  # a name cut short by the end of output: markup
                    return end
                else:
                    return self._not_calls(pos)
            elif state == VALUE:
                pos = self._start_value(text, pos, eof)
                state = self._state
                if state == VALUE:
                    return pos
                # (the value's reader at once: the loop would come to it, at the same place)
                if state == STRING:
                    pos = self._string(text, pos, eof, clear)
                else:
                    pos = self._raw(text, pos, eof)
                if self._state != ARGS:  # (still in the value, or DONE)
                    return pos
            elif state == START:
                if ch != "[":
                    return self._not_calls(pos)
                self._state = CALLS
                pos += 1
        if eof and not self.done:
            self._end()
        return pos

    def close(self) -> None:
        """End of input or of the call: close what is open."""
        self._end()
        self._flush()

    # -- calls -----------------------------------------------------------------------

    def _start_call(self, name: str) -> None:
        self.calls += 1
        pieces = self._pieces
        if pieces:  # the call before ends before this one begins (`_flush`, inline)
            self._send("".join(pieces))
            pieces.clear()
        self._commit(name)
        self.emit("{")
        self._in_call = True
        self._count = 0
        self._first = True
        self._typed = None  # (asked by `_params` when it first reads the call's keys)
        self._state = ARGS

    def _end_call(self) -> None:
        if self._in_call:
            self.emit("}")
            self._in_call = False
        self._state = CALLS

    def _params(self, text: str, pos: int, eof: bool, clear: bool) -> int:
        """From the ARGS state at `pos`: the keyword arguments whose text is here, each read
        in one `_PARAM` match as the loop of `_read` reads it (the same pieces, the same
        state after), and the calls' ends and starts between them; where the match stops
        deciding, the loop goes on (in the VALUE state after a key and its `=`, in the
        CALLS state after a `)`, or where this began). No marker starts in the region
        matched, nor any tail that may begin one, so no check of the loop's for a marker can
        fire inside it. `clear`: no marker's first character from `pos` on (`_read`).

        Where the matches end before a key still arriving at the end of the text (past
        commas and spaces), or before a name still arriving after a call's `)`, or inside a
        value begun after its key (read here as the loop's next iteration would read it),
        and `clear` (no check for a marker can fire on the way), the loop would read there
        and wait: this returns `-1 - position`, for `_read` to return that position at
        once. Commas and spaces up to the end are read past."""
        if clear:
            end = len(text)
        else:
            stop = self._next_stop.find(text, pos)
            end = stop if stop >= 0 else len(text) - (0 if eof else self._stops.held(text, pos))
        match, emit, typed = _PARAM.match, self.emit, self._typed
        if typed is None:
            typed = self._typed = self._typed_keys()
        while True:
            found = match(text, pos, end)
            if found is None:
                if clear and not eof:  # (as the ARGS state's `,` and key read it)
                    commas = _COMMAS.match(text, pos)
                    if commas.group(1) is not None:  # type: ignore[union-attr]
                        return -1 - commas.end()  # type: ignore[union-attr]
                    if commas.end() == len(text):  # type: ignore[union-attr]
                        return len(text)  # (commas and spaces to the end: read past)
                return pos
            key, _, single, double, bare, closed, name = found.groups()
            if closed is not None:  # the call's `)`, as the ARGS state reads it
                if self._in_call:  # (`_end_call`, inline: in the CALLS state)
                    emit("}")
                    self._in_call = False
                self._state = CALLS
                if name is None:
                    pos = found.end()
                    if clear and not eof and pos < len(text):  # (as CALLS and NAME read it)
                        opened = _NAME_OPEN.match(text, pos)
                        if opened is not None and opened.group(2) is None:
                            return -1 - pos
                    return pos
                self._start_call(name)  # the next call, as the NAME state reads it
                typed = self._typed = self._typed_keys()
                pos = found.end()
                continue
            self._key = key
            if self._first:  # (only the first key may be a wrapper's)
                self._first = False
                wrapper = self._wrapper = self._unwraps(key)
            else:
                wrapper = self._wrapper = False
            self._positional = False
            body = single if single is not None else double
            # a key outside the call's typed keys streams as text (`streams_as_text` of its
            # schema, as `ToolSchemas.typed_keys` promises): its schema is not asked for
            if body is not None and key not in typed and not wrapper:  # as `_string`
                body = encode_basestring(_decode_simple(body) if "\\" in body else body)
                key = encode_basestring(key)  # (as `_prefix` writes it)
                emit(f", {key}: {body}" if self._count else f"{key}: {body}")
                self._count += 1
                pos = found.end()  # (the state stays ARGS)
                continue
            schema = self._schema = self.schema_of(key)
            if bare is not None and not wrapper:
                # a bare value as `_close_raw` reads it: its JSON text is a function of its
                # text and its schema (the same node: the schemas are shared), kept per reader
                known = self._bare.get(bare)
                if known is None or known[0] is not schema:
                    raw = bare.strip()
                    value = json_text(coerce_json(_literal(raw), schema)) if raw else ""
                    if len(self._bare) >= _BARE_KEPT:
                        self._bare.clear()
                    known = self._bare[bare] = (schema, value)
                value = known[1]
                if value:  # (as `_prefix` writes its key)
                    key = encode_basestring(key)
                    emit(f", {key}: {value}" if self._count else f"{key}: {value}")
                    self._count += 1
                # (the state stays ARGS; the raw reader's buffer, depth and quote are as
                # `_close_raw` leaves them after a bare value: empty, 0, none)
                pos = found.end()
            elif bare is not None:
                self._buffer = [bare]
                self._depth = 0
                self._raw_quote = ""
                self._close_raw()  # (back in the ARGS state)
                pos = found.end()
            else:
                self._state = VALUE
                pos = found.end(2)
                if not clear or pos >= len(text) or text[pos].isspace():
                    return pos
                # the value as the loop's next iteration reads it (no space to skip, no
                # marker to check): started, then read by its own reader
                pos = self._start_value(text, pos, eof)
                state = self._state
                if state == VALUE:
                    return -1 - pos
                if state == STRING:
                    pos = self._string(text, pos, eof, clear)
                else:
                    pos = self._raw(text, pos, eof)
                return pos if self._state == ARGS else -1 - pos

    def _not_calls(self, pos: int) -> int:
        """Text that is not a call: before the first call it means no calls at all."""
        if not self.calls:
            self.failed = self.malformed = True
        self._end()
        return pos

    def _end(self) -> None:
        if self.done:
            return
        if self._state == STRING:
            self.emit('"')
        elif self._state == RAW:
            self._close_raw()
        if self._in_call:
            self.emit("}")
            self._in_call = False
        if not self.calls:
            self.failed = True
        self._state = DONE
        self.done = True

    # -- values ----------------------------------------------------------------------

    def _prefix(self) -> str:
        sep = ", " if self._count else ""
        self._count += 1
        return f"{sep}{encode_basestring(self._key)}: "

    def _start_value(self, text: str, pos: int, eof: bool) -> int:
        ch = text[pos]  # (`_string_start`, inline: `pos` is inside the text)
        quote = (ch * 3 if text.startswith(ch * 3, pos) else ch) if ch in "'\"" else None
        if quote is not None and not eof and len(text) - pos < 3:
            return pos  # `'` or `''` at the end: a triple quote may be starting
        if quote and not self._positional and streams_as_text(self._schema) and not self._wrapper:
            count, self._count = self._count, self._count + 1  # (`_prefix`, inline)
            key = encode_basestring(self._key)
            self.emit(f', {key}: "' if count else f'{key}: "')
            self._quote = quote
            self._state = STRING
            return pos + len(quote)
        self._buffer = []
        self._depth = 0
        self._raw_quote = ""
        self._state = RAW
        return pos

    def _string(self, text: str, pos: int, eof: bool, clear: bool) -> int:
        """Stream a string's characters, decoding escapes, up to its closing quote or a
        marker of the call (markers win: the string and the calls end there). `clear`: no
        marker's first character from `pos` on (`_read`), so no stop and nothing held."""
        quote, out = self._quote, []
        if clear:
            stop_at, end = -1, len(text)
        else:
            stop_at = self._next_stop.find(text, pos)  # (remembered for the text: NextStop)
            # text that may still begin a marker waits, unless the output ends here
            end = (
                stop_at if stop_at >= 0 else len(text) - (0 if eof else self._stops.held(text, pos))
            )
        whole = (
            _WHOLE_STRINGS[quote].match(text, pos, end)
            if len(quote) == 1 and self._whole_strings
            else None
        )
        if whole is not None:  # the rest of the string is here: read at once, as below
            body = _decode_simple(whole.group(1))
            if body:
                self.emit(_json_string_body(body))
            self.emit('"')
            self._state = ARGS
            return whole.end()
        simple = _SIMPLE_RUNS[quote[0]]
        while pos < end:
            at = simple.match(text, pos, end).end()  # type: ignore[union-attr]
            if at > pos:
                out.append(_decode_simple(text[pos:at]))
                pos = at
            if pos >= end:
                break
            if text[pos] == "\\":
                decoded, used = _escape(text, pos, end)
                if used == 0:  # half an escape: wait (at the end of output it is dropped)
                    if eof or stop_at >= 0:
                        pos = end
                    break
                out.append(decoded)
                pos += used
                continue
            closes = (
                True
                if len(quote) > 1
                else self._closes(text, pos + 1, end, eof, _AFTER_VALUE, True)
            )
            if closes is None:
                break  # what follows the quote is still arriving
            if not closes:
                out.append(quote)  # a quote inside the string, followed by more of it
                pos += 1
                continue
            if text.startswith(quote, pos):
                if out:
                    self.emit(_json_string_body("".join(out)))
                self.emit('"')
                self._state = ARGS
                return pos + len(quote)
            if not eof and stop_at < 0 and len(quote) > 1 and quote.startswith(text[pos:end]):
                break  # a triple quote may be closing
            out.append(text[pos])
            pos += 1
        if out:
            self.emit(_json_string_body("".join(out)))
        if stop_at >= 0 and pos >= stop_at:  # a marker inside the open string: it wins
            self.emit('"')
            self._state = ARGS
            self._end()
            return stop_at
        if eof and self._state == STRING:
            self.emit('"')
            self._state = ARGS
            self._end()
            return len(text)
        return pos

    def _closes(
        self, text: str, after: int, end: int, eof: bool, followers: str, top: bool = False
    ) -> bool | None:
        """Whether a one-quote string's quote, ending at `after`, closes it: what follows it
        (past whitespace) is one of `followers`, a marker or the end of output, and for a
        top-level value (`top`) a `)` that ends the call as calls end (`_after_call`); None
        while that is still arriving (`end`: where the text that may be read ends)."""
        while after < end and text[after] in _WS:
            after += 1
        if after < end:
            if top and text[after] == ")":
                return self._after_call(text, after + 1, end, eof)
            return text[after] in followers or bool(self._stops.at(text, after))
        if eof or after < len(text) and self._stops.at(text, after):
            return True  # the end of output, or a marker right after the quote
        return None

    def _after_call(self, text: str, after: int, end: int, eof: bool) -> bool | None:
        """Whether what follows a call's `)` at `after` goes on as calls go on: past
        whitespace, `,` or `]` in a list (the next call, or the list's end), a name in calls
        one per line, a marker or the end of output. A quote inside a string followed by
        `)` and then more of the string (`print('a')"'`) does not end the value there."""
        while after < end and text[after] in _WS:
            after += 1
        if after < end:
            ch = text[after]
            if ch in ",]" or (not self.item.list and (ch.isalpha() or ch == "_")):
                return True
            if self._stops.at(text, after):
                return True
            if self._stops.held(text, after) == len(text) - after:  # a marker may be arriving
                return True if eof else None  # (cut short by the end: `)</function_`)
            return False
        if eof or after < len(text) and self._stops.at(text, after):
            return True
        return None

    def _raw(self, text: str, pos: int, eof: bool) -> int:
        """Buffer a value up to its end: `,` or `)` at depth 0, strings skipped."""
        end = len(text)
        start = pos
        while pos < end:
            ch = text[pos]
            if not eof and pos + 2 >= end and (ch == "\\" or (ch in "'\"" and not self._raw_quote)):
                break  # an escape, or a quote that may be triple, is still arriving
            if self._raw_quote:
                if not eof and end - pos < len(self._raw_quote) + 64:
                    if ch == self._raw_quote[0] and end - pos < len(self._raw_quote):
                        break  # a triple quote may be closing
                    if self._stops.could_start(text, pos):
                        break  # a marker may be starting
                if self._stops.at(text, pos):
                    self._buffer.append(text[start:pos])  # a marker inside a string: it wins
                    self._close_raw()
                    self._end()
                    return pos
                if ch == "\\":
                    pos += 2
                    continue
                if text.startswith(self._raw_quote, pos):
                    if len(self._raw_quote) == 1:
                        closes = self._closes(
                            text, pos + 1, end, eof, _AFTER_INNER, self._depth == 0
                        )
                        if closes is None:
                            break  # what follows the quote is still arriving
                        if not closes:
                            pos += 1  # a quote inside the string
                            continue
                    pos += len(self._raw_quote)
                    self._raw_quote = ""
                    continue
                pos += 1
                continue
            quote = _string_start(text, pos)
            if quote:
                self._raw_quote = quote
                pos += len(quote)
            elif ch in "([{":
                self._depth += 1
                pos += 1
            elif ch in ")]}," and self._depth > 0:  # inside a nested value
                if ch != ",":
                    self._depth -= 1
                pos += 1
            elif ch in ",)]}" or self._stops.at(text, pos):
                self._buffer.append(text[start:pos])
                self._close_raw()
                return pos
            else:
                pos += 1
        keep = min(pos, end)
        if not eof and not self._raw_quote and keep == end:
            keep = max(start, end - self._stops.held(text, start))
        self._buffer.append(text[start:keep])
        if eof:
            self._close_raw()
            self._end()
            return end
        return keep

    def _close_raw(self) -> None:
        raw = "".join(self._buffer).strip()
        self._buffer = []
        self._state = ARGS
        wrapper, self._wrapper = self._wrapper, False
        if self._positional or not raw:
            return
        value = _literal(raw)
        members = wrapped_object(value) if wrapper else None
        if members is not None:  # the wrapper's members stand in its place
            self._count = write_members(
                self.emit, members_text(members, self.schema_of), self._count
            )
            return
        self.emit(self._prefix() + json_text(coerce_json(value, self._schema)))


# -- Python literals ---------------------------------------------------------------


def _json_string_body(text: str) -> str:
    return encode_basestring(text)[1:-1]


def _string_start(text: str, pos: int) -> str | None:
    """The opening quote of a string literal at `pos` (`'`, `"`, `'''`, `\"\"\"`), if any."""
    ch = text[pos] if pos < len(text) else ""
    if ch not in "'\"":
        return None
    return ch * 3 if text.startswith(ch * 3, pos) else ch


def _escape(text: str, pos: int, end: int | None = None) -> tuple[str, int]:
    """The character an escape at `pos` stands for and its length; (.., 0) if incomplete.

    A surrogate pair (`\\ud83d\\ude00`) is one character; a lone surrogate is its code point,
    which leaves the runtime as its JSON escape (runtime/unicode.py)."""
    end = len(text) if end is None else end
    if pos + 1 >= end:
        return "", 0
    ch = text[pos + 1]
    if ch in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[ch], 2
    width = _HEX_ESCAPES.get(ch)
    if width is None:
        return text[pos : pos + 2], 2  # an unknown escape keeps its backslash, as Python does
    digits = text[pos + 2 : min(pos + 2 + width, end)]
    if not _HEX_DIGITS.fullmatch(digits):  # (`int(…, 16)` also takes ` 4e2`, `4_e2`, `0x12`)
        return text[pos : pos + 2], 2
    if len(digits) < width:
        return "", 0  # the rest of its digits may still be arriving
    code = int(digits, 16)
    if code > 0x10FFFF:
        return text[pos : pos + 2], 2
    if 0xD800 <= code <= 0xDBFF:  # a high surrogate: its low half must follow
        after = pos + 2 + width
        low = text[after : min(after + 2 + width, end)]
        wanted = "\\" + ch
        # (the escape's letter as written, `\U` too; its first digit in either case)
        if len(low) < 2 + width and (wanted + "d")[: len(low)] == (low[:2] + low[2:3].lower()):
            return "", 0  # the low half may still be arriving
        if low.startswith(wanted) and len(low) == 2 + width:
            second = int(low[2:], 16) if _HEX_DIGITS.fullmatch(low[2:]) else -1
            if 0xDC00 <= second <= 0xDFFF:
                return chr(0x10000 + ((code - 0xD800) << 10) + (second - 0xDC00)), 4 + 2 * width
    return chr(code), 2 + width


# (chr, not literals: mypyc compiles no surrogate in a string literal, docs/compiled.md)
_FIRST_SURROGATE, _LAST_SURROGATE = chr(0xD800), chr(0xDFFF)


def _no_surrogates(value: str) -> str:
    """Pairs joined into one character, as JSON reads them; a lone surrogate stays, and
    leaves the runtime as its JSON escape (runtime/unicode.py)."""
    if not any(_FIRST_SURROGATE <= c <= _LAST_SURROGATE for c in value):
        return value
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


_JSON_NAMES = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}


def _requote(raw: str) -> str | None:
    """`raw`, one whole value, with the quotes inside its one-quote strings escaped, by the
    rule the reader uses (a quote closes a string only when `,` `)` `]` `}` `:` or the end
    follows it, past whitespace; outside any bracket only the end, as the value ends there:
    `'x('a')y'` is one string); None when there is none to escape."""
    out: list[str] = []
    pos, start, quote, changed, depth = 0, 0, "", False, 0
    while pos < len(raw):
        ch = raw[pos]
        if quote:
            if ch == "\\":
                pos += 2
                continue
            if raw.startswith(quote, pos):
                if len(quote) == 1:
                    after = pos + 1
                    while after < len(raw) and raw[after] in _WS:
                        after += 1
                    if after < len(raw) and (depth == 0 or raw[after] not in _AFTER_INNER):
                        out.append(raw[start:pos] + "\\")
                        start, pos, changed = pos, pos + 1, True
                        continue
                pos += len(quote)
                quote = ""
                continue
            pos += 1
            continue
        found = _string_start(raw, pos)
        if found:
            quote = found
            pos += len(found)
        else:
            depth += (ch in "([{") - (ch in ")]}" and depth > 0)
            pos += 1
    if not changed:
        return None
    out.append(raw[start:])
    return "".join(out)


_ZERO_PADDED = re.compile(r"[+-]?0+[0-9][0-9_]*")  # an integer written with leading zeros


# a decimal integer or float as Python and JSON both write it: `int`/`float` read it as the
# compiler does (no `_`, no exponent, digits few enough for any int limit)
_PLAIN_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]{0,17})(\.[0-9]{1,17})?")


def _literal(raw: str, repair: bool = True) -> object:
    """A Python (or JSON-spelled) literal as a JSON value; the text itself if it is not one.

    A literal whose one-quote strings hold unescaped quotes is read with them escaped; one
    nested deeper than `MAX_DEPTH - 1` levels (inside the arguments) is no literal: its text
    (runtime/limits.py). A plain number or a literal name (`3`, `-0.5`, `True`, `null`: most
    values written bare) is read without compiling it (`ast.parse`: microseconds a value)."""
    number = _PLAIN_NUMBER.fullmatch(raw)
    if number is not None:
        return int(raw) if number.group(1) is None else float(raw)
    if raw in _JSON_NAMES:
        return _JSON_NAMES[raw]
    try:
        tree = parse_python(raw)
        return _convert(tree.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # TooDeep is a ValueError
        if _ZERO_PADDED.fullmatch(raw):  # `day=07`: Python 3 has no such literal, the model
            return int(raw.replace("_", ""))  # meant the number (SGLang's LFM2 reads 7)
        if repair and ("'" in raw or '"' in raw):
            fixed = _requote(raw)
            if fixed is not None:
                value = _literal(fixed, repair=False)
                if value is not fixed:
                    return value
        return raw


def _convert(node: ast.AST, depth: int = 2) -> object:
    """The JSON value of a literal's node, a container of which is `depth` levels deep (an
    argument's value is 2: the arguments object is 1); one deeper than `MAX_DEPTH` raises
    `TooDeep`, so that a literal goes no deeper than JSON arguments do."""
    if isinstance(node, ast.Constant) and isinstance(
        node.value, (str, int, float, bool, type(None))
    ):
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise ValueError("not a JSON number")
        return _no_surrogates(node.value) if isinstance(node.value, str) else node.value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        # an f-string with no placeholder (`f'hello'`) is that string
        return _no_surrogates("".join(str(v.value) for v in node.values))  # type: ignore[attr-defined]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        negative = False
        while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            negative ^= isinstance(node.op, ast.USub)  # signs read in a loop: `- - -1` any long
            node = node.operand
        value = _convert(node, depth)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("sign on a non-number")
        return -value if negative else value
    if depth > MAX_DEPTH and isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        raise TooDeep("a literal nested deeper than MAX_DEPTH")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_convert(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise ValueError("** in a literal")
            name = _convert(key, depth + 1)
            out[name if isinstance(name, str) else json.dumps(name)] = _convert(value, depth + 1)
        return out
    raise ValueError(f"not a literal: {type(node).__name__}")


def render_python(value: Any, depth: int = 2) -> str:
    """`value` as a Python literal; a container `depth` levels deep (an argument's value is
    2) deeper than `MAX_DEPTH` is a `RenderError`, as the reader reads no deeper."""
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        raise RenderError(too_deep_to_write())
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{k!r}: {render_python(v, depth + 1)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(render_python(v, depth + 1) for v in value) + "]"
    return repr(value)


def render_python_call(name: str, pairs: Pairs, write_json: bool = False) -> str:
    def value_text(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False) if write_json else render_python(value)

    return f"{name}(" + ", ".join(f"{key}={value_text(value)}" for key, value in pairs) + ")"


def render_python_calls(item: PythonCalls, calls: Sequence[Call]) -> str:
    """Every call of the output: in one list, or one per line; values as Python literals,
    or as JSON with `write_json` (the template's `tojson`)."""
    texts = [render_python_call(name, pairs, item.write_json) for name, pairs in calls]
    return f"[{', '.join(texts)}]" if item.list else "\n".join(texts)


# a name no `(` follows (`[a[`), as the reader's NAME state decides it: a name of at most
# _MAX_NAME characters, spaces or tabs, then anything else (a longer name or run included)
_NO_CALL_NAME = rf"[A-Za-z_][\w.\-]{{0,{_MAX_NAME - 1}}}+[ \t]{{0,{_MAX_NAME}}}+(?=[^(])"


def python_calls_opening(item: PythonCalls) -> Opening:
    """A list's `[` (with `list=true`), spaces and commas, then a name's first letter (or
    the `]` of an empty list) and its `(`: `[1, 2]` or `[[` is no call list from its second
    character, `[a[` from its third (the reader reads no further than the name's start);
    a list's text begins with `[` (`begins`): `<|tool_call_start|><|tool_call_start|>`
    is passed over at once."""
    if item.list:
        return Opening("[", r"\s,", r"A-Za-z_\]", _NO_CALL_NAME, begins=r"\[")
    return Opening("", r"\s,", "A-Za-z_", _NO_CALL_NAME)


PYTHON_CALLS = DialectRow(
    PythonCalls,
    "python_calls",
    PythonCallsReader,
    render_python_calls,
    no_literals,
    names_calls=True,
    lists_calls=True,
    opening=python_calls_opening,
    shortcut_knows=SHORTCUT_KNOWS,
)
