"""A meter of the characters the runtime's scans go through: the linear-work tests' hook.

The tests that prove a parse does linear work count the characters scanned. Patching a
method (`Markers.search`) to count would not reach compiled code (mypyc binds calls early),
so such a test would pass having counted nothing. Instead the scans that matter are made
through patterns this module hands out: `metered(pattern)` is the pattern itself while no
meter runs (checked once, when the pattern is made: a scan costs nothing more), and a
counting stand-in while `counting()` runs. `counting()` makes every cache of such patterns
forget what it holds (each cache registers with `forgets`), so that everything made from
then on counts, and again at its end, so that nothing made while counting outlives it.

    with scan_meter.counting() as meter:
        toolgrammar.parse(family, text)
    assert meter.chars < 5 * len(text)
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

__all__ = ["ScanMeter", "counting", "forgets", "metered"]


class ScanMeter:
    """Characters scanned (`chars`) and scans made (`scans`) while it runs."""

    __slots__ = ("chars", "scans")

    def __init__(self) -> None:
        self.chars = 0
        self.scans = 0

    def add(self, chars: int) -> None:
        self.chars += max(chars, 1)  # a scan that stops at once still looked at its start
        self.scans += 1


class _Metered:
    """A compiled pattern whose scans add to a meter: `search` and `match` the characters from
    where they start to where their match ends (the whole range searched when none is
    found), as the scan went through them. `only` names the methods counted (a marker set
    counts its searches; its `match` at a known position is a lookup, not a scan)."""

    __slots__ = ("_pattern", "_meter", "_only", "_to", "pattern", "groupindex", "groups", "flags")

    def __init__(
        self, pattern: re.Pattern[str], meter: ScanMeter, only: frozenset[str], to: str
    ) -> None:
        self._pattern, self._meter, self._only, self._to = pattern, meter, only, to
        self.pattern, self.groupindex = pattern.pattern, pattern.groupindex
        self.groups, self.flags = pattern.groups, pattern.flags

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        found = self._pattern.search(text, pos, endpos)
        if "search" in self._only:
            if found is None:
                self._meter.add(min(endpos, len(text)) - pos)
            else:  # to the match's end, or for a marker search to where the marker is
                self._meter.add((found.start() if self._to == "start" else found.end()) - pos)
        return found

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        found = self._pattern.match(text, pos, endpos)
        if "match" in self._only:
            self._meter.add((found.end() if found else pos + 1) - pos)
        return found

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        found = self._pattern.fullmatch(text, pos, endpos)
        if "match" in self._only:
            self._meter.add(min(endpos, len(text)) - pos)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


_meter: ScanMeter | None = None  # read when a metered pattern is made, never per scan
_FORGET: list[Callable[[], None]] = []
_ALL = frozenset({"search", "match"})


SEARCHES = frozenset({"search"})


def metered(
    pattern: re.Pattern[str], only: frozenset[str] = _ALL, to: str = "end"
) -> re.Pattern[str]:
    """`pattern` itself, or while `counting()` runs a stand-in whose scans (those `only`
    names) count; a found `search` counts `to` the match's "end" or "start"."""
    if _meter is None:
        return pattern
    return _Metered(pattern, _meter, only, to)  # type: ignore[return-value]


def forgets(clear: Callable[[], None]) -> Callable[[], None]:
    """Register `clear`, which empties a cache holding metered patterns (or what holds them)."""
    _FORGET.append(clear)
    return clear


@contextmanager
def counting() -> Iterator[ScanMeter]:
    """A meter that counts every metered scan made inside the block (not nested)."""
    global _meter
    if _meter is not None:
        raise RuntimeError("scan_meter.counting() is already running")
    meter = ScanMeter()
    _meter = meter
    for clear in _FORGET:
        clear()
    try:
        yield meter
    finally:
        _meter = None
        for clear in _FORGET:
            clear()
