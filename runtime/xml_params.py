"""The key/value-in-markup argument dialect: `<parameter=KEY>VALUE</parameter>` and kin.

Values are text. A value whose schema allows only strings (or that has no schema)
streams as a JSON string as its characters arrive, holding back only what could still
be a closing marker or the markup's newline. Any other value is typed from the schema
once complete and released whole: a typed value is never streamed early, so coercion
can never rewrite bytes a client already holds.

The arguments are written as `json.dumps` would (`{"k": "v", "n": 3}`), each parameter
once, in the order the model wrote them. A repeated name is written again: the streamed
text stays a prefix, and `json.loads` keeps its first position with the last value.
"""

from __future__ import annotations

import json
from typing import Callable

from .coerce import coerce_text, streams_as_text
from .markers import Markers, markers
from .spec import XmlParams

BETWEEN, KEY, VALUE_START, VALUE, DONE = range(5)


def _json_string_body(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class XmlParamsBuilder:
    """Reads parameters until a marker that follows them; writes the arguments JSON."""

    __slots__ = (
        "spec",
        "emit",
        "schema_of",
        "state",
        "done",
        "_between",
        "_value_ends",
        "_count",
        "_key",
        "_schema",
        "_as_text",
        "_typed",
        "_newline_held",
        "_max_key",
    )

    def __init__(
        self,
        spec: XmlParams,
        stops: tuple[str, ...],
        emit: Callable[[str], None],
        schema_of: Callable[[str], dict | None],
    ) -> None:
        self.spec = spec
        self.emit = emit
        self.schema_of = schema_of
        self.state = BETWEEN
        self.done = False
        self._between = markers((spec.param_open, *stops))
        self._value_ends = markers((spec.value_end, *spec.implicit_ends, *stops))
        self._count = 0
        self._key = ""
        self._schema: dict | None = None
        self._as_text = True
        self._typed: list[str] = []
        self._newline_held = False
        self._max_key = 256
        emit("{")

    def feed(self, text: str, pos: int, eof: bool) -> int:
        """Consume what can be decided of text[pos:]; return the new position."""
        end = len(text)
        while pos < end and not self.done:
            state = self.state
            if state == BETWEEN:
                at, lit = self._between.search(text, pos)
                if at < 0:
                    # text between parameters is markup; keep only a possible marker start
                    return end - (0 if eof else self._between.held(text, pos))
                if lit != self.spec.param_open:
                    self._finish()
                    return at
                pos = at + len(lit)
                self.state = KEY
            elif state == KEY:
                at = text.find(self.spec.key_end, pos)
                if at < 0:
                    if end - pos > self._max_key:
                        self.state = BETWEEN  # not a parameter after all: skip it
                        continue
                    return end if eof else pos
                self._open_param(text[pos:at].strip())
                pos = at + len(self.spec.key_end)
                self.state = VALUE_START
            elif state == VALUE_START:
                if self.spec.trim_newline and text[pos] == "\n":
                    pos += 1
                self.state = VALUE
            else:  # VALUE
                pos = self._value(text, pos, eof)
                if self.state == VALUE:
                    return pos
        if eof and not self.done:
            if self.state == VALUE_START:
                self.state = VALUE
            self._finish()
        return pos

    def _open_param(self, key: str) -> None:
        self._key = key
        self._schema = self.schema_of(key)
        self._as_text = streams_as_text(self._schema)
        self._newline_held = False
        if self._as_text:
            self.emit(self._key_prefix() + '"')
        else:
            self._typed = []

    def _key_prefix(self) -> str:
        sep = ", " if self._count else ""
        self._count += 1
        return f"{sep}{json.dumps(self._key, ensure_ascii=False)}: "

    def _value(self, text: str, pos: int, eof: bool) -> int:
        at, lit = self._value_ends.search(text, pos)
        # a possible closing marker waits; at the end of output it is markup, not value
        stop = at if at >= 0 else len(text) - self._value_ends.held(text, pos)
        if stop > pos:
            self._value_text(text[pos:stop], closing=at >= 0 or eof)
        elif at >= 0 or eof:
            self._value_text("", closing=True)
        if at < 0:
            if eof:
                self._close_param()
                return len(text)
            return stop
        self._close_param()
        if lit == self.spec.value_end:
            self.state = BETWEEN
            return at + len(lit)
        if lit in self.spec.implicit_ends:
            self.state = BETWEEN
            return at
        self._finish()  # a marker of the call or the stream: the arguments end here
        return at

    def _value_text(self, chunk: str, closing: bool) -> None:
        """Append value text, holding a trailing newline that may belong to the closer."""
        if self._newline_held:
            chunk = "\n" + chunk
            self._newline_held = False
        if self.spec.trim_newline and chunk.endswith("\n"):
            chunk = chunk[:-1]
            self._newline_held = not closing
        if not chunk:
            return
        if self._as_text:
            self.emit(_json_string_body(chunk))
        else:
            self._typed.append(chunk)

    def _close_param(self) -> None:
        self._newline_held = False
        if self._as_text:
            self.emit('"')
        else:
            value = coerce_text("".join(self._typed), self._schema)
            self._typed = []
            self.emit(self._key_prefix() + json.dumps(value, ensure_ascii=False))
        self.state = BETWEEN

    def _finish(self) -> None:
        if self.state in (VALUE, VALUE_START):
            self._close_param()
        self.state = DONE
        self.done = True
        self.emit("}")

    def close(self) -> None:
        """End of input or of the call: keep an open parameter, close the object."""
        if not self.done:
            if self.state == VALUE_START:
                self.state = VALUE
            self._finish()
