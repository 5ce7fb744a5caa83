"""Which characters a name pattern's matches may begin with.

A call's name read with a `pattern` is decided on the whole text up to its end marker, and
that text may still be arriving; but its first character is already decisive when no match
of the pattern begins with it (`>>>>` for Functionary's `(?P<name>python)`). Knowing so at
once lets the call go back at its first character, as a bare name does at a character no
name holds, instead of holding up to a whole name's length of text per opener (and lets the
scan pass such openers over: `tables._passes`).

The answer is read from the pattern's parse tree, and errs one way only: a character the
analysis cannot rule out (a backreference, an unknown node, case-insensitive matching) may
begin a match.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .limits import MAX_DEPTH

try:  # Python 3.11+: the parser behind `re`
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older layouts
    _c = _p = None  # type: ignore[assignment]

# the character classes `re` parses to a CATEGORY node, as they are written in a pattern
CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


class _Unknown(Exception):
    """A node the analysis does not read: any character may begin a match."""


def may_begin(pattern: str, char: str) -> bool:
    """Whether some string that begins with `char` may fully match `pattern` (True when
    unsure)."""
    return _may_begin(pattern, char)


@lru_cache(maxsize=4096)
def _may_begin(pattern: str, char: str) -> bool:
    if _p is None:
        return True
    try:
        parsed = _p.parse(pattern)
        if parsed.state.flags & (re.IGNORECASE | re.LOCALE):
            return True
        return _sequence(list(parsed), char)[0]
    except (_Unknown, re.error, RecursionError):
        return True


def _sequence(nodes: list[Any], char: str, depth: int = 0) -> tuple[bool, bool]:
    """(may a match of these nodes in a row begin with `char`, may it be empty); groups
    nested deeper than `MAX_DEPTH` are not read (any character may begin them)."""
    if depth > MAX_DEPTH:
        raise _Unknown("nested too deep")
    for op, av in nodes:
        begins, empty = _node(op, av, char, depth)
        if begins:
            return True, False
        if not empty:
            return False, False
    return False, True


def _node(op: Any, av: Any, char: str, depth: int) -> tuple[bool, bool]:
    name = str(op)
    if name == "LITERAL":
        return chr(av) == char, False
    if name == "NOT_LITERAL":
        return chr(av) != char, False
    if name == "ANY":
        return True, False
    if name == "IN":
        return _in_set(av, char), False
    if name in ("AT", "ASSERT", "ASSERT_NOT"):  # zero width (a lookaround only narrows)
        return False, True
    if name == "SUBPATTERN":
        group, add, remove, inner = av
        if add or remove:
            raise _Unknown(name)
        return _sequence(list(inner), char, depth + 1)
    if name == "ATOMIC_GROUP":  # (it only narrows what the group's own matches are)
        return _sequence(list(av), char, depth + 1)
    if name == "BRANCH":
        results = [_sequence(list(branch), char, depth + 1) for branch in av[1]]
        return any(b for b, _ in results), any(e for _, e in results)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, inner = av
        if high == 0:
            return False, True
        begins, empty = _sequence(list(inner), char, depth + 1)
        return begins, empty or low == 0
    raise _Unknown(name)  # a backreference, a conditional group, …


def _in_set(items: list[Any], char: str) -> bool:
    """Whether `char` is in a parsed character class."""
    negate = False
    found = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            found = found or chr(av) == char
        elif name == "RANGE":
            found = found or av[0] <= ord(char) <= av[1]
        elif name == "CATEGORY":
            regex = CATEGORIES.get(str(av))
            if regex is None:
                raise _Unknown(str(av))
            found = found or re.fullmatch(regex, char) is not None
        else:
            raise _Unknown(name)
    return found != negate
