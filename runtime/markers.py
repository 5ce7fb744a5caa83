"""Finding markers in streamed text, and holding back what could still become one.

A stream may split `<tool_call>` anywhere, so a scanner must not release `<tool_ca`
as text until the next delta tells whether it is a marker. `Markers.search` finds the
earliest whole marker; `Markers.held` measures the tail that must wait.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Mapping

from .scan_meter import SEARCHES, forgets, metered


def _no_match(text: str, pos: int = 0) -> None:
    return None


def not_at_end(alternatives: Iterable[str], longest: int) -> str:
    """`(?!(?:A|B|…)\\Z)`: the text from here to its end is none of `alternatives`
    (lookbehinds then literals, each reading at most `longest` characters; "" for none),
    led by a check that no more than that is left: else every alternative is tried at every
    place the regex is tried, an assertion each, which no first character rules out (a
    megabyte of xlam's `[`, whose guard holds one per start of a marker: 0.74 s of search,
    0.14 s with the check). The same matches. (Alternatives that begin with a literal fail
    at their first character: the check costs more than it saves there.)"""
    alternatives = list(alternatives)
    if not alternatives:
        return ""
    return f"(?!(?![\\s\\S]{{{longest + 1}}})(?:{'|'.join(alternatives)})\\Z)"


def _alternative(lit: str, guard: str | None) -> str:
    """The search's alternative for `lit`: itself, where its guard does not match."""
    return re.escape(lit) if guard is None else f"(?!{guard}){re.escape(lit)}"


def _tail_pattern(literals: Iterable[str]) -> str:
    """A regex of the text that is a proper prefix of one of `literals` up to the end: the
    prefixes as a trie, `<(?:\\Z|\\|(?:\\Z|t(?:\\Z|…)))`, each character read once per
    place tried. (One alternative per literal, `<(?:\\|(?:t…)?)?\\Z|<(?:\\|…)?\\Z`, backtracked
    through every nesting of every literal sharing the text's start: 3-7 µs a search for
    Kimi-K2's markers, more than the rest of a delta.) "" when no literal has a prefix."""
    trie: dict = {}
    for lit in literals:
        node = trie
        for char in lit:
            node = node.setdefault(char, {})
    return "|".join(re.escape(c) + _below(n) for c, n in sorted(trie.items()) if n)


def _below(node: dict) -> str:
    """The regex after a proper prefix (`node` of `_tail_pattern`'s trie): it may end here,
    or go on into a longer proper prefix (a child with no children is a whole literal, which
    no longer one begins). (A function of the module: a closure calling itself is a
    reference cycle, left for the collector at every marker set made.)"""
    ways = ["\\Z"] + [re.escape(c) + _below(n) for c, n in sorted(node.items()) if n]
    return f"(?:{'|'.join(ways)})"


# the longest text a reader rules every marker out of with one `str.find` for their `lead`
# (a delta's text); a longer one, such as a whole output read call by call, is searched as
# before (once, where `NextStop` remembers it): the find is bounded by this much per call
LEAD_REACH = 4096


class Markers:
    """A fixed set of literal markers, searched left-most first, longest first at a tie."""

    __slots__ = (
        "literals",
        "at",
        "find",
        "find_tail",
        "_regex",
        "prefixes",
        "_tail",
        "max_prefix",
        "_firsts",
        "firsts",
        "lead",
        "find_first",
        "_longer",
        "_grows",
        "growing",
        "passable",
        "_passing",
        "passes",
        "drops",
    )

    def __init__(
        self,
        literals: Iterable[str],
        guards: Mapping[str, str] | None = None,
        passes: Mapping[str, str] | None = None,
        drops: Iterable[str] = (),
    ) -> None:
        """`guards`: per literal, a regex of text at its place where it is not found (the
        search goes on past it), for a literal no shorter one of the set begins (else
        that one would be found there instead). `passes`: per literal, a regex matched
        right after it where the literal, once found, is decided to be text: its lookaheads
        decide, and the scan goes on after the literal and what the regex itself reads (the
        text the call reads before it gives it all back: `pass_over`). `drops`: special
        tokens among them, which go back as nothing: the text passed over is read without
        them (`Engine._scan`)."""
        unique = sorted({lit for lit in literals if lit}, key=lambda lit: (-len(lit), lit))
        self.literals: tuple[str, ...] = tuple(unique)
        guards = {
            lit: guard
            for lit, guard in (guards or {}).items()
            if lit in unique and not any(lit.startswith(o) and o != lit for o in unique)
        }
        regex = (
            re.compile("|".join(_alternative(lit, guards.get(lit)) for lit in unique))
            if unique
            else None
        )
        # the searches count while a test's scan meter runs (`scan_meter.py`); else the
        # pattern itself
        self._regex = None if regex is None else metered(regex, SEARCHES, to="start")
        # `at(text, pos)`: the match of a marker starting at `pos` (longest first), or None;
        # the compiled pattern's own method, for loops that ask at every token
        self.at: Callable[..., re.Match[str] | None] = (
            regex.match if regex is not None else _no_match
        )
        # `find(text, pos)`: the earliest marker from `pos` as a match, or None; `search`
        # without its tuple, the (metered) pattern's own method for readers that search
        # once per delta
        self.find: Callable[[str, int], re.Match[str] | None] = (
            self._regex.search if self._regex is not None else _no_match
        )
        self.prefixes = frozenset(lit[:k] for lit in unique for k in range(1, len(lit)))
        # a tail of the text that is one of `prefixes`, found by one search (`held`)
        tails = _tail_pattern(unique)
        self._tail = re.compile(f"(?:{tails})") if tails else None
        # `find_tail(text, pos)`: where, from `pos` on, the rest of the text is a proper
        # prefix of a marker (a match), or None; `held` without its call, for readers
        # that ask once per delta (from `len(text) - max_prefix` at the earliest, as `held`)
        self.find_tail: Callable[[str, int], re.Match[str] | None] = (
            self._tail.search if self._tail is not None else _no_match
        )
        # the longest text that may still become a marker: a longer rest is not one
        self.max_prefix = max((len(lit) - 1 for lit in unique), default=0)
        self._firsts = tuple(sorted({lit[0] for lit in unique}))
        # the characters a marker begins with: `could_start` is false at any other
        self.firsts = frozenset(self._firsts)
        # the one character every marker begins with ("" when they begin with several, or
        # there is none): text from a position without it holds no marker and no start of
        # one, which one `str.find` tells (a reader's delta, before any regex search)
        self.lead = self._firsts[0] if len(self._firsts) == 1 else ""
        # `find_first(text)`: the first character of the text any marker begins with, or
        # None: a text without one holds no marker and no start of one (`Engine.feed`)
        self.find_first: Callable[[str], re.Match[str] | None] = (
            re.compile(f"[{''.join(re.escape(c) for c in self._firsts)}]").search
            if self._firsts
            else _no_match
        )
        # markers that another marker begins with: a match of one may still grow into the other
        self._longer = {
            lit: tuple(other for other in unique if len(other) > len(lit) and other.startswith(lit))
            for lit in unique
        }
        # the markers `may_grow` can say yes for: any other is decided once found
        self.growing = frozenset(lit for lit, longer in self._longer.items() if longer)
        # per such marker: how far past it to look (one character past the longest marker
        # it begins), and every text from it there that a longer marker still begins with
        self._grows: dict[str, tuple[int, frozenset[str]]] = {
            lit: (
                max(map(len, longer)) + 1,
                frozenset(o[:k] for o in longer for k in range(len(lit), len(o) + 1)),
            )
            for lit, longer in self._longer.items()
            if longer
        }
        passes = {lit: cond for lit, cond in (passes or {}).items() if lit in unique}
        self.passable = frozenset(passes)
        self.drops: tuple[str, ...] = tuple(lit for lit in drops if lit in self.passable)
        # the pattern of what `pass_over` passes at a marker found (one alternative per
        # passable literal, its guards and condition), or None
        self.passes: str | None = None
        self._passing = self._passing_regex(guards, passes) if passes else None

    def _passing_regex(self, guards: Mapping[str, str], passes: Mapping[str, str]) -> re.Pattern:
        """The text up to the next marker the search stops at, in one match: characters no
        marker starts at, and each literal of `passes` followed by its text (then read on
        right after the literal, group `past` marking where). The literal is passed only
        where the search finds it (no longer marker there) and where no longer one may
        still be arriving (`may_grow`): the scan reads the same as stopping at it."""
        assert self._regex is not None
        alternatives = []
        for lit, cond in passes.items():
            longer = self._longer[lit]
            found = "".join(f"(?!{_alternative(o, guards.get(o))})" for o in longer)
            rests = {o[len(lit) : len(lit) + k] for o in longer for k in range(len(o) - len(lit))}
            growing = "|".join(re.escape(rest) for rest in sorted(rests))
            grows = f"(?!(?:{growing})\\Z)" if rests else ""
            alternatives.append(f"{found}{_alternative(lit, guards.get(lit))}{grows}{cond}")
        self.passes = "|".join(alternatives)
        firsts = "".join(re.escape(first) for first in self._firsts)
        return re.compile(
            f"(?:[^{firsts}]++|(?:{'|'.join(alternatives)})(?P<past>)"
            f"|(?!{self._regex.pattern})[{firsts}])*+"
        )

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

    def pass_over(self, text: str, at: int, lit: str, start: int) -> tuple[int, str, int]:
        """From the marker `lit` of `passable` found at `at` (searching from `start`): the next
        marker once every passable one decided text is passed, its text, and where a tail
        held back may begin (after the last literal passed; `start` if none was)."""
        assert self._passing is not None and self._regex is not None
        run = self._passing.match(text, at)
        end = run.end()
        if end == at:
            return at, lit, start
        past = run.end("past")
        held_from = past if past >= 0 else start
        found = self._regex.match(text, end) if end < len(text) else None
        if found is None:
            return -1, "", held_from
        return end, found.group(), held_from

    def may_grow(self, text: str, at: int, lit: str) -> bool:
        """Whether the marker `lit` found at `at` may still be the start of a longer marker
        once more text arrives (`PREFIX<` of `PREFIX</invoke>`): then it is not decided yet."""
        grows = self._grows.get(lit)
        if grows is None:
            return False
        # one character past the longest candidate is enough to rule it out; slicing the
        # whole rest would copy the output once per marker found (quadratic in a whole parse)
        reach, begun = grows
        return text[at : at + reach] in begun

    def undecided(self, text: str, at: int, lit: str, eof: bool) -> bool:
        """Whether the marker `lit` found at `at` is not (yet) that marker: before the end of
        the output, while it may still grow into a longer one (`may_grow`); at the end, when
        the output ends inside a longer one past it (`</a` of `</arg>`, where `</` is a
        marker too): that longer marker cut inside its spelling, markup, as the engine reads
        one outside a call (docs/policies.md, "Unfinished output"). A marker the output ends
        right on is itself at the end."""
        if lit not in self.growing:
            return False
        if eof and at + len(lit) >= len(text):
            return False
        return self.may_grow(text, at, lit)

    def held(self, text: str, start: int, end: int | None = None) -> int:
        """How many trailing characters of text[start:end] may still begin a marker."""
        tail = self._tail
        if tail is None:
            return 0
        if end is None:
            end = len(text)
        low = end - self.max_prefix
        # the leftmost place from which the rest is a proper prefix of a marker: the longest
        found = tail.search(text, low if low > start else start, end)
        return 0 if found is None else end - found.start()

    def could_start(self, text: str, start: int) -> bool:
        """Whether all of text[start:] is a proper prefix of some marker (more text may
        make it one)."""
        return len(text) - start <= self.max_prefix and text[start:] in self.prefixes


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
    readers ask for their stops once each. Bounded, the least recently used out first, so
    that a process serving many `params` values keeps the ones in use (a plain dict that
    stopped adding when full kept the first 4096 for good)."""
    return _cached(frozenset(literals))


forgets(_cached.cache_clear)
forgets(_by_tuple.cache_clear)


def markers(literals: Iterable[str]) -> Markers:
    """A shared `Markers` for this set of literals (they are built once per family)."""
    if type(literals) is tuple:  # a family's stop tuples come back once per call: no set
        return _by_tuple(literals)
    return _cached(frozenset(literals))
