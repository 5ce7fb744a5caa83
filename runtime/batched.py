"""Argument text pieces gathered during one feed and sent joined.

A markup dialect writes its JSON in many small pieces (`{`, `"key": "`, the value, `"`);
the engine files every piece of one feed under the same call and joins them anyway, so
each piece sent on its own would only cost a call through the engine. A dialect that
names calls itself must flush before it commits the next one (its pieces belong to the
call before).
"""

from __future__ import annotations

from typing import Callable


class Batched:
    """Mixin for a builder with `emit`, `_send` and `_pieces` slots and a `_feed`: `emit`
    gathers, `feed` sends what one `_feed` gathered as one piece."""

    __slots__ = ()
    emit: Callable[[str], None]
    _send: Callable[[str], None]
    _pieces: list[str]

    def _feed(self, text: str, pos: int, eof: bool) -> int:
        raise NotImplementedError

    def feed(self, text: str, pos: int, eof: bool) -> int:
        """Consume what can be decided of text[pos:]; return the new position."""
        pos = self._feed(text, pos, eof)
        self._flush()
        return pos

    def _batch(self, emit: Callable[[str], None]) -> None:
        self._send = emit
        self._pieces = []
        self.emit = self._pieces.append

    def _flush(self) -> None:
        if self._pieces:
            self._send("".join(self._pieces))
            self._pieces.clear()
