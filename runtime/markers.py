"""Finding markers in streamed text, and holding back what could still become one.

A stream may split `<tool_call>` anywhere, so a scanner must not release `<tool_ca`
as text until the next delta tells whether it is a marker. `Markers.search` finds the
earliest whole marker; `Markers.held` measures the tail that must wait.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

from .spec import Name, name_of, never_a_name


def _no_match(text: str, pos: int = 0) -> None:
    return None


def _alternative(lit: str, guard: str | None) -> str:
    """The search's alternative for `lit`: itself, where its guard does not match."""
    return re.escape(lit) if guard is None else f"(?!{guard}){re.escape(lit)}"


class Markers:
    """A fixed set of literal markers, searched left-most first, longest first at a tie."""

    __slots__ = (
        "literals",
        "at",
        "_regex",
        "_prefixes",
        "max_prefix",
        "_firsts",
        "_longer",
        "growing",
    )

    def __init__(self, literals: Iterable[str], guards: Mapping[str, str] | None = None) -> None:
        """`guards`: per literal, a regex of text at its place where it is not found (the
        search goes on past it), for a literal no shorter one of the set begins (else
        that one would be found there instead)."""
        unique = sorted({lit for lit in literals if lit}, key=lambda lit: (-len(lit), lit))
        self.literals: tuple[str, ...] = tuple(unique)
        guards = {
            lit: guard
            for lit, guard in (guards or {}).items()
            if lit in unique and not any(lit.startswith(o) and o != lit for o in unique)
        }
        self._regex = (
            re.compile("|".join(_alternative(lit, guards.get(lit)) for lit in unique))
            if unique
            else None
        )
        # `at(text, pos)`: the match of a marker starting at `pos` (longest first), or None;
        # the compiled pattern's own method, for loops that ask at every token
        self.at: Callable[..., re.Match[str] | None] = (
            self._regex.match if self._regex is not None else _no_match
        )
        self._prefixes = frozenset(lit[:k] for lit in unique for k in range(1, len(lit)))
        # the longest text that may still become a marker: a longer rest is not one
        self.max_prefix = max((len(lit) - 1 for lit in unique), default=0)
        self._firsts = tuple(sorted({lit[0] for lit in unique}))
        # markers that another marker begins with: a match of one may still grow into the other
        self._longer = {
            lit: tuple(other for other in unique if len(other) > len(lit) and other.startswith(lit))
            for lit in unique
        }
        # the markers `may_grow` can say yes for: any other is decided once found
        self.growing = frozenset(lit for lit, longer in self._longer.items() if longer)

    def __bool__(self) -> bool:
        return bool(self.literals)

    def search(self, text: str, start: int, end: int | None = None) -> tuple[int, str]:
        """The position and text of the earliest marker in text[start:end], or (-1, "")."""
        if self._regex is None:
            return -1, ""
        found = (
            self._regex.search(text, start) if end is None else self._regex.search(text, start, end)
        )
        if found is None:
            return -1, ""
        return found.start(), found.group()

    def may_grow(self, text: str, at: int, lit: str) -> bool:
        """Whether the marker `lit` found at `at` may still be the start of a longer marker
        once more text arrives (`PREFIX<` of `PREFIX</invoke>`): then it is not decided yet."""
        longer = self._longer.get(lit, ())
        if not longer:
            return False
        # one character past the longest candidate is enough to rule it out; slicing the
        # whole rest would copy the output once per marker found (quadratic in a whole parse)
        rest = text[at : at + max(len(other) for other in longer) + 1]
        return any(other.startswith(rest) for other in longer)

    def held(self, text: str, start: int, end: int | None = None) -> int:
        """How many trailing characters of text[start:end] may still begin a marker."""
        if end is None:
            end = len(text)
        low = max(start, end - self.max_prefix)
        best = end
        for first in self._firsts:  # a held tail starts with a marker's first character
            at = text.find(first, low, best)
            while at >= 0:
                if text[at:end] in self._prefixes:
                    best = at
                    break
                at = text.find(first, at + 1, best)
        return end - best

    def could_start(self, text: str, start: int) -> bool:
        """Whether all of text[start:] is a proper prefix of some marker (more text may
        make it one)."""
        return len(text) - start <= self.max_prefix and text[start:] in self._prefixes


class NextStop:
    """The next stop marker at or after a position, remembered for the text at hand.

    The calls of one array are read one after another from the same text; searching the
    rest of that text for a stop once per call would make a whole-output parse quadratic
    when no stop follows (a bare array of many calls). A search from `start` that found
    the earliest marker at `at` answers every later search from a position up to `at`.
    """

    __slots__ = ("stops", "_text", "_start", "_at")

    def __init__(self, stops: Markers) -> None:
        self.stops = stops
        self._text: str | None = None
        self._start = 0
        self._at = -1

    def find(self, text: str, pos: int) -> int:
        if text is self._text and self._start <= pos and (self._at < 0 or pos <= self._at):
            return self._at
        at, _ = self.stops.search(text, pos)
        self._text, self._start, self._at = text, pos, at
        return at


@lru_cache(maxsize=1024)
def _cached(literals: frozenset[str]) -> Markers:
    return Markers(literals)


# a family's stop tuples, by value: many tuples (orders, params) may name one set
BY_TUPLE_LIMIT = 4096


@lru_cache(maxsize=BY_TUPLE_LIMIT)
def _by_tuple(literals: tuple[str, ...]) -> Markers:
    """The `Markers` of a tuple of literals, without making a set on every call: a call's
    builders ask for their stops once each. Bounded, the least recently used out first, so
    that a process serving many `params` values keeps the ones in use (a plain dict that
    stopped adding when full kept the first 4096 for good)."""
    return _cached(frozenset(literals))


def markers(literals: Iterable[str]) -> Markers:
    """A shared `Markers` for this set of literals (they are built once per family)."""
    if type(literals) is tuple:  # a family's stop tuples come back once per call: no set
        return _by_tuple(literals)
    return _cached(frozenset(literals))


# how far past a call opener met inside a value the text is searched for what decides it
# (docs/policies.md, "Markers inside values"): a new call's header and first key come well
# within it; with none of them there, the opener was the value's text
MAX_OPENER_WAIT = 1024


class OpenerInValue:
    """Decides a call opener met inside a markup value (raw text ended by markers): the
    model wrote it as text, or began a new call without closing the value.

    The opener is `held` and the first marker after it decides. One of `new_call` (the
    literal before a call's name, a parameter's key opener, another call opener) says a
    call began: the value ends before the opener. A marker that ends a call's name
    (`name_ends`) says so when the text before it is a name. Any other (a closer: the
    value's own, the call's, the section's) says the opener was text of the value. Nothing
    within MAX_OPENER_WAIT characters: text; the end of the output first: a call began,
    unless the text after the opener is already no name or ends in a cut-off marker that
    can only be one of the others.
    (A closer of the call or the section met inside a value ends it at once, as the peers'
    parsers end it.)

    So a value never holds more than MAX_OPENER_WAIT characters plus a marker waiting to be
    decided, and the decision depends on the text alone, never on how it was split.
    """

    __slots__ = ("held", "new_call", "name_ends", "deciders")

    def __init__(self, stops: Sequence[str], own: Iterable[str], new_call: Iterable[str] = ()):
        """`stops` as the engine gives them to a dialect (`protocol.Stops`), `own` the
        markers that close the value itself, `new_call` the dialect's key opener."""
        self.held = frozenset(getattr(stops, "openers", ()))
        self.new_call = frozenset(
            lit for lit in (*self.held, *new_call, *getattr(stops, "headers", ())) if lit
        )
        self.name_ends: dict[str, Name] = {
            end: name for end, name in getattr(stops, "name_ends", ()) if end not in self.new_call
        }
        self.deciders = markers((*self.new_call, *self.name_ends, *own, *stops))

    def ends_value(self, text: str, start: int, eof: bool) -> bool | None:
        """Whether the held opener that ends at `start` begins a call (and so ends the
        value); None while the text does not tell yet."""
        deciders = self.deciders
        limit = start + MAX_OPENER_WAIT  # a decider must start before it
        at, lit = deciders.search(text, start, limit + deciders.max_prefix)
        if 0 <= at < limit:
            if not eof and self._may_start_earlier(text, start, at, lit):
                return None
            if lit in self.new_call:
                return True
            name = self.name_ends.get(lit)
            return name is not None and bool(name_of(name, text[start:at].strip())[0])
        if len(text) >= limit + deciders.max_prefix:
            return False
        if not eof:
            return None
        # the end of the output first: a call began, unless what follows the opener is no
        # name however the output had gone on (as its name's end would then have said), or
        # ends in a marker cut short that can only be one that says the opener was text
        cut = deciders.held(text, start)
        if cut and not any(
            lit.startswith(text[len(text) - cut :])
            and (lit in self.new_call or lit in self.name_ends)
            for lit in deciders.literals
        ):
            return False
        raw = text[start : len(text) - cut].strip()
        return not any(never_a_name(name, raw) for name in self.name_ends.values())

    def _may_start_earlier(self, text: str, start: int, at: int, lit: str) -> bool:
        """Whether more text may still turn a marker found at `at` into another: a longer
        one there (`PREFIX<` of `PREFIX</`), or one beginning before it in a tail that is
        not complete yet (MiniMax-M3's name end `>` inside `]<]minimax[>` of a cut-off
        `]<]minimax[>[</content>`). Either way the whole text would decide by the other."""
        deciders = self.deciders
        if deciders.may_grow(text, at, lit):
            return True
        return len(text) - deciders.held(text, start) < at
