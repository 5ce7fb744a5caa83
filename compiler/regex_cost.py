"""Whether a regex the runtime matches against model output can backtrack without bound.

Python's `re` backtracks: `(a+)+!` on thirty `a`s tries 2^30 ways before it fails, and a
name or key pattern is matched against text the model wrote (up to 256 characters per name
or key, once per call or parameter). Two readings, one per source of patterns:

- `exponential`: the constructs whose cost doubles per character (a repeated group that can
  match one text in several ways: nested quantifiers, a repeat of what may be empty, a
  repeat of overlapping alternatives). A group whose every iteration starts with a character
  nothing else in it can match (`(?:\\.\\w+)*`, `(?:"\\s+[\\w:-]+="[^"]*)*`) splits one
  way only and is fine. Hand-written grammars (`compiler/validate.py`) are held to this.
- `linear`: what a response template, read at run time from a checkpoint, may use in a
  `name` or `key` group: at most one unbounded quantifier, no quantified group holding a
  quantifier or an alternation, no backreference, lookaround or conditional. Such a
  pattern is matched in time linear in the text (`docs/response_templates.md`).
"""

from __future__ import annotations

import re
from typing import Any

from re import _parser as sre  # type: ignore[attr-defined]  # (the stdlib's own reader)

from toolgrammar.runtime.first_chars import CATEGORIES

_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_LOOKS = (sre.ASSERT, sre.ASSERT_NOT)
_UNBOUNDED = sre.MAXREPEAT
_CHARS = (sre.IN, sre.ANY, sre.NOT_LITERAL, sre.LITERAL)


def _parse(pattern: str) -> Any:
    return sre.parse(pattern)


def linear_risk(pattern: str) -> str | None:
    """Why `pattern` is not linear by the response-template rule, or None."""
    found = _walk_linear(_parse(pattern), in_repeat=False)
    if found:
        return found
    unbounded = sum(
        1 for op, av in _nodes(_parse(pattern)) if op in _REPEATS and av[1] == _UNBOUNDED
    )
    if unbounded > 1:
        return "more than one unbounded quantifier (write one class: `[\\w.\\-]+`)"
    return None


def _walk_linear(items: Any, in_repeat: bool) -> str | None:
    for op, av in items:
        if op == sre.GROUPREF or op == sre.GROUPREF_EXISTS:
            return "a backreference or a conditional"
        if op in _LOOKS:
            return "a lookaround"
        if op in _REPEATS:
            if in_repeat:
                return "a quantifier inside a quantified group"
            body = av[2]
            if not _single(body):
                found = _walk_linear(body, in_repeat=True)
                if found:
                    return found
        elif op == sre.BRANCH:
            if in_repeat:
                return "an alternation inside a quantified group"
            for branch in av[1]:
                found = _walk_linear(branch, in_repeat)
                if found:
                    return found
        elif op == sre.SUBPATTERN:
            found = _walk_linear(av[-1], in_repeat)
            if found:
                return found
        elif op == sre.ATOMIC_GROUP:
            found = _walk_linear(av, in_repeat)
            if found:
                return found
    return None


def exponential_risk(pattern: str) -> str | None:
    """Why `pattern` may backtrack exponentially, or None."""
    return _walk_exponential(_parse(pattern))


def _walk_exponential(items: Any) -> str | None:
    for op, av in items:
        if op in _REPEATS and op != sre.POSSESSIVE_REPEAT:
            body = av[2]
            if av[1] > 1 and not _single(body):
                if _nullable(body):
                    return "a repeated group that may match the empty text"
                if _ambiguous(body):
                    return "nested quantifiers (a repeated group that splits a text several ways)"
            found = _walk_exponential(body)
            if found:
                return found
        elif op == sre.BRANCH:
            for branch in av[1]:
                found = _walk_exponential(branch)
                if found:
                    return found
        elif op == sre.SUBPATTERN:
            found = _walk_exponential(av[-1])
            if found:
                return found
        elif op in _LOOKS:
            found = _walk_exponential(av[1])
            if found:
                return found
        elif op == sre.ATOMIC_GROUP:
            continue  # no backtracking into an atomic group
    return None


def _single(body: Any) -> bool:
    """Whether a repeat's body is one character (a literal, a class, `.`)."""
    items = list(body)
    while len(items) == 1 and items[0][0] == sre.SUBPATTERN:
        items = list(items[0][1][-1])
    return len(items) == 1 and items[0][0] in _CHARS


def _nullable(items: Any) -> bool:
    for op, av in items:
        if op in _REPEATS:
            if av[0] > 0 and not _nullable(av[2]):
                return False
        elif op == sre.BRANCH:
            if not any(_nullable(b) for b in av[1]):
                return False
        elif op == sre.SUBPATTERN:
            if not _nullable(av[-1]):
                return False
        elif op in (sre.AT, *_LOOKS):
            continue
        else:
            return False
    return True


def _ambiguous(body: Any) -> bool:
    """Whether a repeated body holds a repeat or an alternation that could take the
    character every iteration starts with (then one text splits into iterations several
    ways). A body that starts with a literal character none of its repeats or branches
    can match splits one way."""
    items = list(body)
    while items and items[0][0] == sre.SUBPATTERN:
        items = list(items[0][1][-1]) + items[1:]
    inner = [(op, av) for op, av in _nodes(items) if op in _REPEATS or op == sre.BRANCH]
    if not inner:
        return False
    if not items or items[0][0] != sre.LITERAL:
        return True
    first = chr(items[0][1])
    for op, av in inner:
        if op == sre.BRANCH:
            return True
        for kind, value in _nodes(av[2]):
            if kind == sre.BRANCH or (kind in _CHARS and _matches(kind, value, first)):
                return True
    return False


def _matches(op: Any, av: Any, char: str) -> bool:
    """Whether the single-character node (op, av) matches `char`."""
    if op == sre.ANY:
        return char != "\n"
    if op == sre.LITERAL:
        return chr(av) == char
    if op == sre.NOT_LITERAL:
        return chr(av) != char
    negate = False
    hit = False
    for kind, value in av:
        if kind == sre.NEGATE:
            negate = True
        elif kind == sre.LITERAL:
            hit |= chr(value) == char
        elif kind == sre.RANGE:
            hit |= value[0] <= ord(char) <= value[1]
        elif kind == sre.CATEGORY:
            hit |= _category(value, char)
        else:  # anything else: assume it may match
            hit = True
    return hit != negate


def _category(value: Any, char: str) -> bool:
    klass = CATEGORIES.get(str(value))
    return True if klass is None else re.fullmatch(klass, char) is not None


def _nodes(items: Any):
    """Every node below `items`, depth first."""
    for op, av in items:
        yield op, av
        if op in _REPEATS:
            yield from _nodes(av[2])
        elif op == sre.BRANCH:
            for branch in av[1]:
                yield from _nodes(branch)
        elif op == sre.SUBPATTERN:
            yield from _nodes(av[-1])
        elif op in _LOOKS:
            yield from _nodes(av[1])
        elif op == sre.ATOMIC_GROUP:
            yield from _nodes(av)
