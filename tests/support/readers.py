"""The argument readers a stream's calls were read with (tests of readers renewed per call)."""

from __future__ import annotations

from typing import Any


def readers_fed(parser: Any, text: str) -> list[object]:
    """Feed `text` one character at a time; the distinct readers the calls had, in order."""
    engine = parser._engine
    readers: list[object] = []
    for char in text:
        parser.feed(char)
        call = engine._call
        if call is not None and call.dialect is not None and call.dialect not in readers:
            readers.append(call.dialect)
    return readers
