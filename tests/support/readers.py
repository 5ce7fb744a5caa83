"""What the tests of argument readers and shortcuts share: the readers a stream's calls were
read with, the deltas of each feed of a text split at given cuts, a sink to drive a reader
alone, a pattern that counts what it found, and the engine's scans counted."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import toolgrammar
from toolgrammar.runtime.spec import XmlParams


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


def drawn_cuts(data: st.DataObject, text: str, most: int) -> list[int]:
    """Up to `most` distinct cut points inside `text`, sorted (hypothesis draws them)."""
    points = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=most))
    return sorted(set(points))


def feeds_at(
    family: str, tools: Any, text: str, cuts: list[int], finish: str, **options: Any
) -> list[list[dict[str, Any]]]:
    """Each feed's deltas (and finish's) of `text` split at `cuts`."""
    parser = toolgrammar.StreamParser(family, tools, ids="sequential", **options)
    bounds = [0, *sorted(set(cuts)), len(text)]
    out = [
        [delta.to_dict() for delta in parser.feed(text[a:b])]
        for a, b in zip(bounds, bounds[1:])
        if b > a
    ]
    out.append([delta.to_dict() for delta in parser.finish(finish)])
    return out


def counted_scans(monkeypatch: Any) -> list[int]:
    """A list that grows by one at every `Engine._scan` while the test runs (pure Python: a
    patch does not reach the compiled build, whose leg does not run these tests)."""
    from toolgrammar.runtime.engine import Engine

    scans: list[int] = []
    real = Engine._scan

    def counted(self: Engine, *args: Any) -> int:
        scans.append(1)
        return real(self, *args)

    monkeypatch.setattr(Engine, "_scan", counted)
    return scans


class SchemalessSink:
    """What a reader asks of its call: where the arguments text goes, no schemas."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def emit_args(self, text: str) -> None:
        self.out.append(text)

    def schema_of(self, key: str) -> None:
        return None

    def unwraps(self, key: str) -> bool:
        return False


class CountedPattern:
    """A pattern that counts its matches found: a shortcut's tests show it was taken."""

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern
        self.found = 0

    def match(self, text: str, pos: int) -> Any:
        found = self.pattern.match(text, pos)
        self.found += found is not None
        return found


# MiniCPM5's parameters (grammars/minicpm5.tg), for the XML reader driven alone
MINICPM5_PARAMS = XmlParams(
    open='<param name="', key_end='">', value_end="</param>", xml_unescape=True, cdata=True
)
