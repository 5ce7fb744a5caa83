"""The key/value-lines argument dialect: one `key: value` per line (a response template's
`kv-lines` content).

The arguments are lines separated by `line_sep`; a line is `key KV_SEP value`, split at its
first `kv_sep`, key and value stripped. A line with no separator, or no key, is not an
argument and is skipped, as the template's reader skips it. A value whose schema allows only
strings (or that has no schema) streams as a JSON string as its characters arrive, holding
back only trailing whitespace (stripped at the line's end) and what could still begin a
marker; any other value is typed from the schema once its line ends. A first key that is a
lone wrapper around the arguments (`runtime/unwrap.py`) is held whole and its members are
written in its place. A key written twice is written twice (the streamed text stays a
prefix; `json.loads` keeps the last value, as the template's reader does).
"""

from __future__ import annotations

from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C
from typing import Sequence

from .batched import MarkupArgs
from .coerce import coerce_text, json_text
from .markers import markers
from .protocol import Call, DialectRow, RenderError, Sink, render_value_text, the_call
from .schemas import streams_as_text
from .spec import KvLines
from .unwrap import members_text, wrapped_text
from .unicode import strip_space

KEY, SKIP, VALUE, DONE = range(4)

_MAX_KEY = 256  # a longer key is no argument: its line is skipped


class KvLinesReader(MarkupArgs):
    """Reads `key: value` lines until a marker that follows them; writes the arguments JSON."""

    __slots__ = (
        "_key_marks",
        "_line_ends",
        "_count",
        "_key",
        "_schema",
        "_as_text",
        "_wrapper",
        "_first",
        "_started",
        "_pend",
        "_typed",
        "_unwraps",
    )

    item: KvLines

    def __init__(self, item: KvLines, stops: tuple[str, ...], sink: Sink) -> None:
        super().__init__(item, sink, KEY)
        self._key_marks = markers((item.kv_sep, item.line_sep, *stops))
        self._line_ends = markers((item.line_sep, *stops))
        self._unwraps = sink.unwraps
        self._count = 0
        self._key = ""
        self._schema: dict | None = None
        self._as_text = True
        self._wrapper = False
        self._first = True  # only the first argument may be a wrapper
        self._started = False  # the value's leading whitespace is behind us
        self._pend = ""  # trailing whitespace of the value, dropped if the line ends here
        self._typed: list[str] = []

    def _read(self, text: str, pos: int, eof: bool) -> int:
        while pos < len(text) and not self.done:
            if self.state == KEY:
                pos, going = self._read_key(text, pos, eof)
            elif self.state == SKIP:
                pos, going = self._skip_line(text, pos, eof)
            else:
                pos, going = self._read_value(text, pos, eof)
            if not going:
                return pos  # the rest waits for more text
        if eof and not self.done:
            self._finish()
        return pos

    def _read_key(self, text: str, pos: int, eof: bool) -> tuple[int, bool]:
        """A line's key, up to its separator; a line without one is skipped."""
        at, lit = self._key_marks.search(text, pos)
        if at >= 0 and self._key_marks.undecided(text, at, lit, eof):
            if not eof:
                return pos, False
            at = -1  # the output ends inside a longer marker: markup
        if at < 0:
            if eof:
                self._finish()
                return len(text), True
            if len(text) - pos > _MAX_KEY:
                self.state = SKIP
                return pos, True
            return pos, False
        item = self.item
        if lit == item.kv_sep:
            key = strip_space(text[pos:at])
            if not key or at - pos > _MAX_KEY:
                self.state = SKIP
                return at + len(lit), True
            self._open(key)
            return at + len(lit), True
        if lit == item.line_sep:
            return at + len(lit), True  # a line with no separator is not an argument
        self._finish()  # a marker of the call or the stream: the arguments end here
        return at, True

    def _skip_line(self, text: str, pos: int, eof: bool) -> tuple[int, bool]:
        """The rest of a line that is no argument."""
        at, lit = self._line_ends.search(text, pos)
        if at >= 0 and self._line_ends.undecided(text, at, lit, eof):
            if not eof:
                return at, False
            at = -1  # the output ends inside a longer marker: markup
        if at < 0:  # the line goes on (what may begin a marker waits)
            return len(text) - (0 if eof else self._line_ends.held(text, pos)), eof
        if lit == self.item.line_sep:
            self.state = KEY
            return at + len(lit), True
        self._finish()
        return at, True

    def _open(self, key: str) -> None:
        """A key is read: its value starts."""
        self._key = key
        self._schema = self.schema_of(key)
        self._wrapper = self._first and self._unwraps(key)
        self._first = False
        self._as_text = (
            self._schema is None or streams_as_text(self._schema)
        ) and not self._wrapper
        self._started = False
        self._pend = ""
        self._typed = []
        self.state = VALUE
        if self._as_text:
            self.emit(self._key_prefix() + '"')

    def _key_prefix(self) -> str:
        sep = ", " if self._count else ""
        self._count += 1
        return sep + encode_basestring(self._key) + ": "

    def _read_value(self, text: str, pos: int, eof: bool) -> tuple[int, bool]:
        """Value text up to the end of its line or a marker that ends the arguments."""
        at, lit = self._line_ends.search(text, pos)
        if at >= 0 and self._line_ends.undecided(text, at, lit, eof):
            at = -1  # may still grow (or, at the end, is a longer marker cut short)
        if at < 0:  # what may begin a marker waits; at the end of output it is markup
            stop = len(text) - self._line_ends.held(text, pos)
            self._value_text(text[pos:stop])
            if eof:
                self._finish()
                return len(text), True
            return stop, False
        self._value_text(text[pos:at])
        self._close_value()
        if lit == self.item.line_sep:
            self.state = KEY
            return at + len(lit), True
        self._finish()
        return at, True

    def _value_text(self, chunk: str) -> None:
        """Append value text: leading whitespace dropped, trailing whitespace held back."""
        if not self._started:
            chunk = chunk.lstrip()
            if not chunk:
                return
            self._started = True
        raw = self._pend + chunk
        ready = raw.rstrip()
        self._pend = raw[len(ready) :]
        if not ready:
            return
        if self._as_text:
            self.emit(encode_basestring(ready)[1:-1])
        else:
            self._typed.append(ready)

    def _close_value(self) -> None:
        """The value's line ended: its trailing whitespace is dropped, a typed value written."""
        self._pend = ""
        if self._as_text:
            self.emit('"')
        else:
            text = "".join(self._typed)
            members = wrapped_text(text, False) if self._wrapper else None
            if members is not None:
                written = members_text(members, self.schema_of)
                if written:
                    self.emit((", " if self._count else "") + written)
                    self._count += 1
            elif self._wrapper and (self._schema is None or streams_as_text(self._schema)):
                self.emit(self._key_prefix() + encode_basestring(text))
            else:
                self.emit(self._key_prefix() + json_text(coerce_text(text, self._schema)))
        self._typed = []
        self.state = KEY

    def _finish(self) -> None:
        if self.state == VALUE:
            self._close_value()
        self.state = DONE
        self.done = True
        self.emit("}")

    def close(self) -> None:
        """End of input or of the call: keep an open value, close the object."""
        if not self.done:
            self._finish()
        self._flush()


def render_kv_lines(item: KvLines, calls: Sequence[Call]) -> str:
    """`key: value` lines; a value that the reading would change cannot be written."""
    lines = []
    space = "" if item.kv_sep[-1:].isspace() else " "
    for key, value in the_call(calls)[1]:
        text = render_value_text(value)
        if not key or key != key.strip() or item.kv_sep in key or item.line_sep in key:
            raise RenderError(f"kv_lines cannot write the key {key!r}")
        if item.line_sep in text or text != text.strip():
            raise RenderError(f"kv_lines cannot write the value {value!r} on one stripped line")
        lines.append(f"{key}{item.kv_sep}{space if text else ''}{text}")
    return item.line_sep.join(lines)


def kv_lines_literals(item: KvLines) -> tuple[str, ...]:
    """The line separator: no value holds it (a key ends at the first `kv_sep`, so values
    may hold that)."""
    return (item.line_sep,)


KV_LINES = DialectRow(KvLines, "kv_lines", KvLinesReader, render_kv_lines, kv_lines_literals)
