"""The key:value dialect: `{key:VALUE,key:VALUE}` with bare keys and custom string delimiters.

Gemma 4 writes `{city:<|"|>Paris<|"|>,days:3}`: keys are bare (or wrapped in the string
delimiter), strings sit between two delimiters with no escaping, `{…}` and `[…]` nest, and
a bare value runs to the next `,`, `}` or `]`. FunctionGemma writes the same with `<escape>`.
A bare run that meets the string delimiter before any key, bracket or marker is a string
whose opening delimiter is missing, at every depth: `{q:a, b<|"|>}` is "a, b" (a `,` therefore
ends an object member's bare value only once what follows it shows a key, a bracket, the
closer or a marker), `{opts:{lang:en<|"|>},q:…}` is `{"opts": {"lang": "en"}, "q": …}`, and
in an array `[x<|"|>,…]` the item is "x".

Every leaf is text; the tool's schema types it (an integer property written `3` or `<|"|>3<|"|>`
is 3; with no schema a leaf between delimiters stays text and a bare leaf is a JSON number,
`true`, `false` or `null` when it reads as one), recursing through `properties` and `items`. A
top-level string value whose schema allows only strings (or that has none) streams as a JSON
string as it arrives, holding back only what could still be the closing delimiter or a
marker; every other value is buffered until complete, then typed and sent whole.
"""

from __future__ import annotations

from functools import lru_cache
import json
from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C
import re
from typing import Any, Sequence

from .batched import MarkupArgs
from .coerce import coerce_bare, coerce_text, json_text
from .in_value import opener_in_value
from .markers import Markers, markers
from .scan_meter import forgets, metered
from .limits import MAX_DEPTH
from .protocol import Call, DialectRow, Pairs, RenderError, Sink, the_call, too_deep_to_write
from . import shortcuts
from .schemas import item_schema, property_schema, streams_as_text
from .spec import KeyValueArgs
from .unwrap import members_text, wrapped_object, write_members
from .unicode import MARKUP_SPACE, strip_space
from .traits import mypyc_attr  # (docs/compiled.md)

OPEN, KEY, VALUE_START, STRING, RAW, AFTER_VALUE, DONE = range(7)
_BETWEEN_TOKENS = frozenset((OPEN, KEY, VALUE_START, AFTER_VALUE))  # a marker may come next
_MAX_KEY = 256
_KEY_SPAN = 2 * _MAX_KEY + 16  # a key, its delimiters and the space around it
_MAX_KEYS = 256  # keys remembered per call; a model inventing names is not remembered
_CLOSERS = {"{": "}", "(": ")"}


_SPACE = re.compile(f"[{MARKUP_SPACE}]*")  # a key written as U+2028 is that key


@lru_cache(maxsize=256)
def _raw_tokens(delim: str, stops: tuple[str, ...]) -> re.Pattern[str]:
    """What ends or nests a bare value: the string delimiter, brackets, `,` and the stops
    (made once per family and call position, not once per call; bounded, as a server
    filling many `params` makes new stops for each)."""
    alts = "".join("|" + re.escape(s) for s in stops)
    return metered(re.compile(re.escape(delim) + r"|[{}\[\](),]" + alts))


def _json_string_body(text: str) -> str:
    return encode_basestring(text)[1:-1]


_SP = f"[{MARKUP_SPACE}]"  # one character of the markup whitespace around keys and values
# what a bare key, the space around it and the separators are made of: the shortcut below
# holds only for markup whose markers start with none of these
_KEY_AND_SEPARATORS = re.compile(r"[\w\-.\s:,{}()\[\]]")


SHORTCUT_KNOWS = frozenset({"string"})  # the fields `_whole_member(s)` decide as the loop does


def _whole_member_pattern(delim: str, string_ends: Markers) -> re.Pattern[str] | None:
    """One pattern for a member already whole in the text: a bare key, its colon, a string
    between two delimiters or a bare value, then whitespace and what follows (`,` or a
    closer, if there); None when the markup has no such shortcut.

    It decides what the state machine decides on the same text: the key runs to its colon,
    a string to the left-most delimiter or marker (longest first at a tie), a bare value to
    the first separator, and no marker can start where it reads a key, space, separator or
    bare value (a bare value holds no marker's or delimiter's first character).
    """
    literals = string_ends.literals
    if any(_KEY_AND_SEPARATORS.match(lit) for lit in literals):
        return None
    ends = "|".join(re.escape(lit) for lit in literals)  # longest first
    firsts = "".join(sorted({re.escape(lit[0]) for lit in literals}))
    return re.compile(
        rf"{_SP}*+(?P<key>[\w\-.]{{1,{_MAX_KEY}}}+){_SP}{{0,{_MAX_KEY}}}+:{_SP}*+"
        rf"(?:{re.escape(delim)}(?P<string>(?:[^{firsts}]++|(?!{ends}).)*+)(?P<end>{ends})"
        rf"|(?P<bare>[^{firsts}{{}}\[\](),]*+))"
        # `,` ends a bare value only before a key (else the state machine looks further: a
        # string whose opening delimiter is missing, `q:a, b<|"|>`)
        rf"{_SP}*+(?P<next>,(?={_SP}*+(?:[\w\-.]++{_SP}*+:|{re.escape(delim)}))|[}})\]]?)",
        re.DOTALL,
    )


@lru_cache(maxsize=64)
def _whole_member(delim: str, string_ends: Markers) -> re.Pattern[str] | None:
    """`_whole_member_pattern`, made once per family (metered under a test's scan meter)."""
    pattern = _whole_member_pattern(delim, string_ends)
    return None if pattern is None else metered(pattern)


forgets(_whole_member.cache_clear)
forgets(_raw_tokens.cache_clear)


class KeyValueArgsReader(MarkupArgs):
    """Reads `{key:value,…}` up to its closing brace or a following marker."""

    __slots__ = (
        "_stops",
        "_string_ends",
        "_raw_tokens",
        "_closer",
        "_count",
        "_key",
        "_schema",
        "_buffer",
        "_depth",
        "_in_string",
        "_plain",
        "_bare",
        "_whole",
        "_keys",
        "_unwraps",
        "_wrapper",
        "_first",
        "_in_value",
    )

    item: KeyValueArgs

    def __init__(self, item: KeyValueArgs, stops: tuple[str, ...], sink: Sink) -> None:
        super().__init__(item, sink, OPEN)
        self._stops = markers(stops)
        self._string_ends = markers((item.string, *stops))
        self._raw_tokens = _raw_tokens(item.string, stops)
        self._closer = "}"
        self._count = 0
        self._key = ""
        self._schema: dict | None = None
        self._buffer: list[str] = []
        self._depth = 0
        self._in_string = False
        self._plain = True  # the value read so far is bare text: no container, no delimiter
        # inside a container: a member's bare text has begun since the last token (`{k:en`),
        # so the next delimiter closes a string whose opener is missing (`{k:en<|"|>}`)
        self._bare = False
        self._whole = (
            _whole_member(item.string, self._string_ends)
            if shortcuts.takes(item, SHORTCUT_KNOWS)
            else None
        )
        # key: its schema, whether it streams as text, `"key": `
        self._keys: dict[str, tuple[dict | None, bool, str]] = {}
        self._unwraps = sink.unwraps
        self._wrapper = False  # the value being read is a wrapper's (`runtime/unwrap.py`)
        self._first = True  # no key read yet: only the first may be a wrapper
        self._in_value = opener_in_value(stops, (item.string,))

    def _read(self, text: str, pos: int, eof: bool) -> int:
        end = len(text)
        stops = self._stops
        stop_at, near_end = stops.at, end - stops.max_prefix
        stop_firsts = stops.firsts
        while pos < end and not self.done:
            state = self.state
            if state in _BETWEEN_TOKENS:
                pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
                if pos >= end:
                    break
                if stop_at(text, pos):  # a marker of the call: the arguments end here
                    self._finish()
                    return pos
                if (
                    not eof
                    and pos >= near_end
                    and text[pos] in stop_firsts
                    and stops.could_start(text, pos)
                ):
                    return pos  # a marker may be starting: wait
            if state == OPEN:
                if text[pos] not in _CLOSERS:
                    self._finish()  # no argument list: `{}`
                    return pos
                self._closer = _CLOSERS[text[pos]]
                self.state = KEY
                pos += 1
            elif state == KEY:
                if self._whole is not None:
                    read = self._whole_members(text, pos)
                    if read != pos or self.state != KEY:
                        pos = read
                        continue
                read = self._read_key(text, pos, eof)
                if self.state == KEY and read == pos:
                    return pos  # the key is not all here yet
                pos = read  # (a stray `,` was skipped: read on)
            elif state == VALUE_START:
                pos = self._start_value(text, pos, eof)
                if self.state == VALUE_START:
                    return pos
            elif state == STRING:
                pos = self._string(text, pos, eof)
                if self.state == STRING:
                    return pos
            elif state == RAW:
                pos = self._raw(text, pos, eof)
                if self.state == RAW:
                    return pos
            else:  # AFTER_VALUE: `,` or the closer; anything else before them is markup
                ch = text[pos]
                if ch == ",":
                    self.state = KEY
                    pos += 1
                elif ch == self._closer:
                    self._finish()
                    return pos + 1
                else:
                    pos += 1
        if eof and not self.done:
            self._finish()
        return pos

    # -- keys ------------------------------------------------------------------------

    def _read_key(self, text: str, pos: int, eof: bool) -> int:
        if text[pos] == self._closer:
            self._finish()
            return pos + 1
        if text[pos] == ",":
            return pos + 1
        delim = self.item.string
        # a key and the space around it lie within `_KEY_SPAN`: what decides it is read
        # from that much text, whole or streamed
        limit = min(len(text), pos + _KEY_SPAN)
        if text.startswith(delim, pos):
            close = text.find(delim, pos + len(delim), limit)
            colon = text.find(":", close + len(delim), limit) if close >= 0 else -1
        else:
            close, colon = pos, text.find(":", pos, limit)
            bad = self._raw_tokens.search(text, pos, colon if colon >= 0 else limit)
            if bad is not None:  # `}` or a marker before any `:`: not a key
                if bad.group() == self._closer or self._is_stop(text, bad.start()):
                    self._finish()
                    return bad.start() + (1 if bad.group() == self._closer else 0)
        if colon < 0:
            if len(text) - pos >= _KEY_SPAN:
                self._finish()  # no key: the arguments end here
                return pos
            if eof:
                self._finish()  # a key cut short by the end of output: markup
                return len(text)
            return pos
        raw = strip_space(text[pos:colon])  # a key of U+2028 is that key
        if raw.startswith(delim) and raw.endswith(delim) and len(raw) >= 2 * len(delim):
            raw = raw[len(delim) : -len(delim)]
        if len(strip_space(raw)) > _MAX_KEY:  # a key longer than any name: the arguments end
            self._finish()
            return pos
        self._key = strip_space(raw)
        self._schema = self.schema_of(self._key)
        first, self._first = self._first, False
        self._wrapper = first and self._unwraps(self._key)
        self.state = VALUE_START
        return colon + 1

    def _whole_members(self, text: str, pos: int) -> int:
        """Write the members found whole in the text from `pos`, as the state machine would
        write them (one regex match each); return where the state machine goes on."""
        match = self._whole.match  # type: ignore[union-attr]
        delim, closer = self.item.string, self._closer
        pieces = self._pieces
        while True:
            whole = match(text, pos)
            if whole is None:
                return pos
            after = whole["next"]
            ends = after == "," or after == closer
            string = whole["string"]
            if string is not None and whole["end"] != delim:
                return pos  # a marker inside the string: the state machine ends the call
            if self._first and self._unwraps(whole["key"]):
                return pos  # a wrapper: the state machine reads it whole
            self._first = False
            known = self._keys.get(whole["key"])
            if known is None:
                known = self._key_info(whole["key"])
            schema, as_text, prefix = known
            if string is not None and as_text:
                body = encode_basestring(string)
            elif ends:  # a typed value, complete only at `,` or the closer
                if string is not None:
                    body = json_text(coerce_text(string, schema))
                else:
                    body = json_text(coerce_bare(whole["bare"].strip(), schema))
            else:
                return pos
            if self._count:
                pieces.append(", ")
            self._count += 1
            pieces.append(prefix)
            pieces.append(body)
            if after == ",":
                pos = whole.end()
                continue
            if ends:
                self._finish()
                return whole.end()
            self.state = AFTER_VALUE
            return whole.start("next")

    def _key_info(self, key: str) -> tuple[dict | None, bool, str]:
        schema = self.schema_of(key)
        known = (schema, streams_as_text(schema), encode_basestring(key) + ": ")
        if len(self._keys) < _MAX_KEYS:
            self._keys[key] = known
        return known

    def _is_stop(self, text: str, pos: int) -> bool:
        return bool(self._stops.at(text, pos))

    # -- values ----------------------------------------------------------------------

    def _start_value(self, text: str, pos: int, eof: bool) -> int:
        delim = self.item.string
        if text.startswith(delim, pos) and streams_as_text(self._schema) and not self._wrapper:
            self.emit(self._prefix() + '"')
            self.state = STRING
            return pos + len(delim)
        if not eof and len(text) - pos < len(delim) and delim.startswith(text[pos:]):
            return pos  # a delimiter may be starting
        self._buffer = []
        self._depth = 0
        self._in_string = False
        self._plain = True
        self._bare = False
        self.state = RAW
        return pos

    def _string(self, text: str, pos: int, eof: bool) -> int:
        at, lit = self._string_ends.search(text, pos)
        if lit in self._in_value.held:  # a call opener: what follows it decides
            pos, at, lit, waiting = self._in_value.read_text(
                text, pos, eof, (at, lit), self._string_ends.search, self._emit_string
            )
            if waiting:
                return pos
        stop = at if at >= 0 else len(text) - self._string_ends.held(text, pos)
        if stop > pos:
            self.emit(_json_string_body(text[pos:stop]))
        if at < 0:
            if eof:  # the output ends inside the string: it is kept, and closed
                self._finish()
                return len(text)
            return stop
        self.emit('"')
        if lit == self.item.string:
            self.state = AFTER_VALUE
            return at + len(lit)
        self.state = AFTER_VALUE
        self._finish()  # a marker inside an open string: markers win
        return at

    def _emit_string(self, raw: str) -> None:
        """A piece of a streamed string value's text."""
        self.emit(_json_string_body(raw))

    def _raw(self, text: str, pos: int, eof: bool) -> int:
        """Buffer a value up to its end: `,` or the closer at depth 0 (strings skipped)."""
        delim = self.item.string
        while True:
            if self._in_string:
                close = text.find(delim, pos)
                if close < 0:
                    keep = len(text) if eof else max(pos, len(text) - len(delim) + 1)
                    self._buffer.append(text[pos:keep])
                    if eof:
                        self._close_raw()
                        self._finish()
                    return keep
                self._buffer.append(text[pos : close + len(delim)])
                pos = close + len(delim)
                self._in_string = False
                continue
            found = self._raw_tokens.search(text, pos)
            if found is None:
                keep = len(text) if eof else len(text) - self._held_tail(text, pos)
                self._note_bare(text, pos, keep)
                self._buffer.append(text[pos:keep])
                if eof:
                    self._close_raw()
                    self._finish()
                return keep
            token, at = found.group(), found.start()
            if self._plain and self._depth == 0 and token in (delim, ","):
                # a bare run that ends at a delimiter is a string missing its opener
                # (not `close`, an int above: compiled, that name would take no None)
                ends_at = self._missing_opener(text, at, eof) if token == "," else at
                if ends_at is None:  # what follows the comma is still arriving
                    self._buffer.append(text[pos:at])
                    return at
                if ends_at >= 0 and (
                    ends_at > at or ("".join(self._buffer) + text[pos:at]).strip()
                ):
                    self._buffer.append(text[pos:ends_at])
                    self._close_missing_opener()
                    return ends_at + len(delim)
            bare = self._depth > 0 and self._note_bare(text, pos, at)
            self._bare = False
            if token == delim:
                self._plain = False
                self._buffer.append(text[pos : at + len(delim)])
                self._in_string = not bare  # after a member's bare text it closes a string
                pos = at + len(delim)  # whose opener is missing (`_Reader` reads it so)
            elif token in "{[(":
                self._plain = False
                self._depth += 1
                self._buffer.append(text[pos : at + 1])
                pos = at + 1
            elif token in "}])," and self._depth > 0:  # inside a nested value
                if token != ",":
                    self._depth -= 1
                self._buffer.append(text[pos : at + 1])
                pos = at + 1
            elif token in ",}])":  # the end of this top-level value
                self._buffer.append(text[pos:at])
                self._close_raw()
                return at
            else:  # a marker of the call: markers win
                self._buffer.append(text[pos:at])
                self._close_raw()
                self._finish()
                return at

    def _note_bare(self, text: str, pos: int, end: int) -> bool:
        """Whether a member's bare text has begun inside a container, with `text[pos:end]`
        read on since the last token: text after its last `:` (a key's text before it is
        no value)."""
        colon = text.rfind(":", pos, end)
        if colon >= 0:
            self._bare = bool(text[colon + 1 : end].strip())
        elif not self._bare:
            self._bare = bool(text[pos:end].strip())
        return self._bare

    def _missing_opener(self, text: str, comma: int, eof: bool) -> int | None:
        """Where the string delimiter closes a bare value that runs on past `comma`
        (`q:a, b<|"|>`: a string whose opening delimiter is missing), -1 when the comma ends
        the value (a key, a bracket or a marker follows first), None while undecided."""
        delim = self.item.string
        pos, limit = comma + 1, comma + 1 + _MAX_KEY * 16
        while True:
            found = self._raw_tokens.search(text, pos, min(len(text), limit))
            colon = text.find(":", pos, found.start() if found else min(len(text), limit))
            if colon >= 0:
                return -1  # a key follows
            if found is None:
                if eof or len(text) >= limit:
                    return -1
                return None
            if found.group() == ",":
                pos = found.end()
                continue
            if found.group() == delim and text[pos : found.start()].strip():
                return found.start()
            return -1  # a delimited key, a bracket, the closer or a marker

    def _close_missing_opener(self) -> None:
        raw = "".join(self._buffer).lstrip()
        self._buffer = []
        self.emit(self._prefix() + json_text(coerce_text(raw, self._schema)))
        self.state = AFTER_VALUE

    def _held_tail(self, text: str, pos: int) -> int:
        """Trailing characters that may still begin a marker or the string delimiter."""
        held = self._stops.held(text, pos)
        delim = self.item.string
        for k in range(min(len(delim) - 1, len(text) - pos), held, -1):
            if delim.startswith(text[len(text) - k :]):
                return k
        return held

    def _close_raw(self) -> None:
        raw = "".join(self._buffer)
        self._buffer = []
        read = _Reader(raw, self.item.string).value()
        wrapper, self._wrapper = self._wrapper, False
        text = self._members(read) if wrapper else None
        if text is not None:  # the wrapper's members stand in its place
            self._count = write_members(self.emit, text, self._count)
        else:
            self.emit(self._prefix() + json_text(_typed(read, self._schema)))
        self.state = AFTER_VALUE

    def _members(self, read: object) -> str | None:
        """A wrapper's members, typed, to write in its place: of the object it writes, or of
        the JSON or Python dict a string of it holds; None when it holds no object."""
        if isinstance(read, dict):  # leaves as written, typed by their own schemas
            typed = {str(k): _typed(v, self.schema_of(str(k))) for k, v in read.items()}
            return members_text(typed, _no_schema)
        members = wrapped_object(str(read)) if isinstance(read, str) else None
        return None if members is None else members_text(members, self.schema_of)

    def _prefix(self) -> str:
        sep = ", " if self._count else ""
        self._count += 1
        return f"{sep}{encode_basestring(self._key)}: "

    def _finish(self) -> None:
        if self.done:
            return
        if self.state == STRING:
            self.emit('"')
        elif self.state == RAW:
            self._close_raw()
        elif self.state == VALUE_START:
            self.emit(self._prefix() + json_text(_typed("", self._schema)))
        self.state = DONE
        self.done = True
        self.emit("}")

    def close(self) -> None:
        """End of input or of the call: keep an open value, close the object."""
        self._finish()
        self._flush()


# -- reading a complete value ------------------------------------------------------


@mypyc_attr(native_class=False)  # (a str subclass: a plain Python class when compiled)
class _Text(str):
    """A leaf of the value: text between string delimiters, which the schema types."""


@mypyc_attr(native_class=False)
class _Bare(str):
    """A leaf written bare: typed by the schema, else read as a JSON literal if it is one."""


@lru_cache(maxsize=32)
def _bare_ends(delim: str) -> re.Pattern[str]:
    """What ends a member's bare text: `,`, a closer or the string delimiter."""
    return re.compile(rf"[,}}\]]|{re.escape(delim)}")


class _Reader:
    """A complete key:value value as nested dicts, lists and text leaves (never raises)."""

    def __init__(self, text: str, delim: str) -> None:
        self.text, self.delim, self.pos = text, delim, 0

    def _ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in MARKUP_SPACE:
            self.pos += 1

    def value(self, depth: int = 0, member: bool = False) -> object:
        """The value at `pos`; `member`: an object's member, whose bare text a `,` ends only
        once a key follows (the string delimiter first: a string missing its opener)."""
        self._ws()
        text, delim = self.text, self.delim
        if text.startswith(delim, self.pos):
            close = text.find(delim, self.pos + len(delim))
            end = close if close >= 0 else len(text)
            leaf = text[self.pos + len(delim) : end]
            self.pos = end + len(delim) if close >= 0 else len(text)
            return _Text(leaf)
        # a container `depth` deep in an argument's value is `depth + 2` levels deep in the
        # arguments: deeper than `MAX_DEPTH`, it is bare text (runtime/limits.py)
        if self.pos < len(text) and text[self.pos] in "{[" and depth < MAX_DEPTH - 1:
            return self._container(depth)
        start = self.pos
        if depth == 0:  # a top-level value is one whole (the reader found its end)
            while self.pos < len(text) and text[self.pos] not in ",}]":
                self.pos += 1
            return _Bare(text[start : self.pos].strip())
        ends = _bare_ends(delim)
        while True:
            found = ends.search(text, self.pos)
            if found is None:
                self.pos = len(text)
                return _Bare(text[start:].strip())
            at = found.start()
            if found.group() == delim:  # bare text the delimiter ends: its opener is missing
                self.pos = at + len(delim)
                return _Text(text[start:at])
            if found.group() == "," and member and self._string_runs_on(at):
                self.pos = at + 1
                continue
            self.pos = at
            return _Bare(text[start:at].strip())

    def _string_runs_on(self, comma: int) -> bool:
        """Whether a member's bare text runs on past `comma` to a delimiter that closes it
        (`{q:a, b<|"|>}` is "a, b"): text, then the delimiter, before any key, bracket or
        closer, within as much as the top-level reader looks (`_missing_opener`)."""
        text, delim = self.text, self.delim
        ends = _bare_ends(delim)
        pos, limit = comma + 1, min(len(self.text), comma + 1 + _MAX_KEY * 16)
        while True:
            found = ends.search(text, pos, limit)
            stop = found.start() if found else limit
            if text.find(":", pos, stop) >= 0 or found is None:
                return False
            if found.group() == ",":
                pos = found.end()
                continue
            return found.group() == delim and bool(text[pos:stop].strip())

    def _container(self, depth: int) -> object:
        text = self.text
        is_object = text[self.pos] == "{"
        closer = "}" if is_object else "]"
        self.pos += 1
        members: dict[str, object] = {}
        items: list[object] = []
        while True:
            self._ws()
            if self.pos >= len(text):
                break
            if text[self.pos] == closer:
                self.pos += 1
                break
            if text[self.pos] == ",":
                self.pos += 1
                continue
            if text[self.pos] in "}])":  # the other container's closer: stray, read past
                self.pos += 1
                continue
            if is_object:
                colon = text.find(":", self.pos)
                if colon < 0:
                    break
                key = strip_space(text[self.pos : colon])
                if (
                    key.startswith(self.delim)
                    and key.endswith(self.delim)
                    and len(key) >= 2 * len(self.delim)
                ):
                    key = key[len(self.delim) : -len(self.delim)]
                self.pos = colon + 1
                members[key] = self.value(depth + 1, member=True)
            else:
                items.append(self.value(depth + 1))
        return members if is_object else items


def _no_schema(_: str) -> None:
    """Members already typed: nothing more to type them by."""
    return None


def _typed(value: object, schema: dict | None, depth: int = 0) -> object:
    """Leaves typed by the schema, through `properties` and `items` (a value `_Reader`
    read: no deeper than `MAX_DEPTH`)."""
    if isinstance(value, dict):
        return {k: _typed(v, property_schema(schema, k), depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v, item_schema(schema, i), depth + 1) for i, v in enumerate(value)]
    if isinstance(value, _Bare):
        return coerce_bare(str(value), schema, depth)
    return coerce_text(str(value), schema, depth)


def render_keyvalue(value: Any, delim: str, depth: int = 2) -> str:
    """`value` in key:value syntax; a container `depth` levels deep (an argument's value is
    2) deeper than `MAX_DEPTH` is a `RenderError`, as the reader reads no deeper."""
    if isinstance(value, str):
        return f"{delim}{value}{delim}"
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        raise RenderError(too_deep_to_write())
    if isinstance(value, dict):
        return render_keyvalue_object(list(value.items()), delim, depth)
    if isinstance(value, list):
        return "[" + ",".join(render_keyvalue(v, delim, depth + 1) for v in value) + "]"
    return json.dumps(value)


def render_keyvalue_object(pairs: Pairs, delim: str, depth: int = 1) -> str:
    """`{key:value,…}`, each pair written even when its key repeats (the object `depth`
    levels deep: the arguments are 1)."""
    return "{" + ",".join(f"{k}:{render_keyvalue(v, delim, depth + 1)}" for k, v in pairs) + "}"


def render_keyvalue_args(item: KeyValueArgs, calls: Sequence[Call]) -> str:
    return render_keyvalue_object(the_call(calls)[1], item.string)


KEYVALUE_ARGS = DialectRow(
    KeyValueArgs,
    "keyvalue_args",
    KeyValueArgsReader,
    render_keyvalue_args,
    lambda item: (item.string,),
    shortcut_knows=SHORTCUT_KNOWS,
)
