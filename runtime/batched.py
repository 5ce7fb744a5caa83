"""Argument text pieces gathered during one read and sent joined; the markup dialects' set-up.

A markup dialect writes its JSON in many small pieces (`{`, `"key": "`, the value, `"`);
the engine files every piece of one read under the same call and joins them anyway, so
each piece sent on its own would only cost a call through the engine. A dialect that
names calls itself must flush before it commits the next one (its pieces belong to the
call before).
"""

from __future__ import annotations

from typing import Any, Callable

from .protocol import Sink
from .traits import mypyc_attr  # (Python readers subclass these, compiled: docs/compiled.md)


@mypyc_attr(allow_interpreted_subclasses=True)
class Batched:
    """Base of a reader with a `_read`: `emit` gathers, `read` sends what one `_read`
    gathered as one piece."""

    __slots__ = ("emit", "_send", "_pieces")
    emit: Callable[[str], None]
    _send: Callable[[str], None]
    _pieces: list[str]

    def _read(self, text: str, pos: int, eof: bool) -> int:
        raise NotImplementedError

    def read(self, text: str, pos: int, eof: bool) -> int:
        """Take what can be decided of text[pos:]; return the new position."""
        pos = self._read(text, pos, eof)
        pieces = self._pieces
        if pieces:  # (`_flush`, inline: once per delta)
            self._send("".join(pieces))
            pieces.clear()
        return pos

    def _batch(self, emit: Callable[[str], None]) -> None:
        self._send = emit
        self._pieces = []
        self.emit = self._pieces.append

    def _flush(self) -> None:
        if self._pieces:
            self._send("".join(self._pieces))
            self._pieces.clear()


@mypyc_attr(allow_interpreted_subclasses=True)
class MarkupArgs(Batched):
    """The set-up the markup dialects (`xml_params`, `xml_elements`, `keyvalue_args`) share:
    they write the arguments JSON themselves, its `{` at once, typing each value by its
    key's schema, in a state machine that starts in `state`."""

    __slots__ = ("item", "schema_of", "state", "done")

    def __init__(self, item: Any, sink: Sink, state: int) -> None:
        self.item = item
        self._batch(sink.emit_args)  # the pieces of one read go out joined
        self.schema_of = sink.schema_of
        self.state = state
        self.done = False
        sink.emit_args("{")
