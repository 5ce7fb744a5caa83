"""Whether a text may still grow into a full match of a name pattern.

A call's name read with a `pattern` is decided on the whole header, but an output may end
(or be cut at `length`) inside it. Text that no continuation makes a match is no name
however the output would have gone on, and goes back as text at once; text that some
continuation makes one is an unfinished header, dropped at `length` as any unfinished
opener is. Deciding this from the text's shape (spaces, a first character) calls headers
"never a name" that were still on their way to one (MiniCPM5's `>\\n"\\xa0n` of `>\\n"\\xa0n="'`),
so a cut gave back text a longer cut dropped.

The answer comes from the pattern's parse tree (`re._parser`), rewritten as a regex of the
prefixes of its matches: for a sequence `A B C`, `P(A) | A P(B) | A B P(C)`; for a repeat
`X{lo,hi}`, `X{0,hi-1} P(X)`; for one character, that character or nothing. A group may be
kept to characters outside a class (a name holds none of `spec.BAD_NAME`), which makes
each of its characters that class's complement. It errs one way only: what it cannot read
(a lookaround, a conditional group, a backreference to a group wider than one character, a
tree too big or nested too deep) may be followed by anything, and a possessive repeat or an
atomic group is read as its backtracking form (which matches at least as much).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .first_chars import CATEGORIES
from .limits import MAX_DEPTH

try:  # Python 3.11+: the parser behind `re`
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older layouts
    _p = None  # type: ignore[assignment]

ANYTHING = "(?s:.*)"
MAX_REGEX = 40_000  # a rewritten pattern longer than this is not used: anything may grow
_CHARS = ("LITERAL", "NOT_LITERAL", "ANY", "IN")  # the nodes that match one character
_AT = {
    "AT_BEGINNING": "^",
    "AT_BEGINNING_STRING": r"\A",
    "AT_END": "$",
    "AT_END_STRING": r"\Z",
    "AT_BOUNDARY": r"\b",
    "AT_NON_BOUNDARY": r"\B",
}
# inline flag letters a rewritten pattern keeps (VERBOSE only changes how one is written)
_FLAGS = ((re.ASCII, "a"), (re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
_LOCAL_FLAGS = (*_FLAGS, (re.UNICODE, "u"))


class _Unknown(Exception):
    """A node the rewriting does not read: past it, anything may follow."""


def may_grow(pattern: str, text: str, group: str = "", banned: str = "") -> bool:
    """Whether some text that begins with `text` fully matches `pattern` (True when unsure).

    With `group` and `banned` (a regex of one character), that group's match holds no
    character `banned` matches: the text must grow into a match whose group is clean."""
    prefixes = prefix_regex(pattern, group, banned)
    return prefixes is None or prefixes.fullmatch(text) is not None


@lru_cache(maxsize=512)
def prefix_regex(pattern: str, group: str = "", banned: str = "") -> re.Pattern[str] | None:
    """A regex that fully matches every prefix of a full match of `pattern` (and maybe more
    text), or None when there is none to trust: anything may grow into a match."""
    if _p is None:
        return None
    try:
        parsed = _p.parse(pattern)
        kept = parsed.state.groupdict.get(group) if group and banned else None
        writer = _Writer(kept, f"(?:(?!{banned})" if kept else "")
        flags = "".join(letter for flag, letter in _FLAGS if parsed.state.flags & flag)
        body = writer.prefix(list(parsed), 0)
        if len(body) > MAX_REGEX:
            return None
        return re.compile(f"(?{flags}){body}" if flags else body)
    except (_Unknown, re.error, RecursionError, OverflowError):
        return None


@dataclass
class _Writer:
    """Writes the regexes of a parse tree's nodes: whole (`full`) or cut short (`prefix`).

    Every group written whole gets a fresh name (a node may be written in several
    alternatives of one regex), and a backreference names the copy written last."""

    kept: int | None  # the group whose characters must not match `banned`
    clean: str  # `(?:(?!banned)` put before each of that group's characters
    names: dict[int, str] = field(default_factory=dict)
    widths: dict[int, int] = field(default_factory=dict)  # a group's widest match
    count: int = 0
    inside: int = 0  # how many of `kept`'s groups are open (0 or 1)

    def prefix(self, nodes: list[Any], depth: int) -> str:
        """The prefixes of a sequence: `P(A) | A P(B) | A B P(C)`; past a node it cannot
        write whole, anything."""
        if depth > MAX_DEPTH:
            raise _Unknown("nested too deep")
        ways: list[str] = []
        for k, node in enumerate(nodes):
            try:
                head = "".join(self.full(n, depth) for n in nodes[:k])
            except _Unknown:
                head = "".join(self.full(n, depth) for n in nodes[: k - 1])
                ways.append(head + ANYTHING)
                break
            ways.append(head + self.node_prefix(node, depth))
        if not ways:
            return ""
        return ways[0] if len(ways) == 1 else f"(?:{'|'.join(ways)})"

    def node_prefix(self, node: tuple[Any, Any], depth: int) -> str:
        """The prefixes of one node's matches (the empty one among them)."""
        op, av = node
        name = str(op)
        try:
            if name in _CHARS:
                return f"(?:{self.full(node, depth)})?"
            if name == "AT":
                return ""
            if name == "SUBPATTERN":
                group, add, remove, inner = av
                opened = group is not None and group == self.kept
                self.inside += opened
                try:
                    return f"(?{_flags(add, remove)}:{self.prefix(list(inner), depth + 1)})"
                finally:
                    self.inside -= opened
            if name == "ATOMIC_GROUP":
                return f"(?:{self.prefix(list(av), depth + 1)})"
            if name == "BRANCH":
                ways = [self.prefix(list(way), depth + 1) for way in av[1]]
                return f"(?:{'|'.join(ways)})"
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, inner = av
                if high == 0:
                    return ""
                if len(inner) == 1 and str(inner[0][0]) in _CHARS:  # (`[^"]{0,}`, whose
                    return self.full((op, (0, high, inner)), depth)  # prefixes it matches)
                last = self.prefix(list(inner), depth + 1)
                if high == 1:
                    return last
                most = "" if high == _p.MAXREPEAT else str(high - 1)
                whole = self.full(("SUBPATTERN", (None, 0, 0, inner)), depth)
                return f"{whole}{{0,{most}}}{last}"
            if name == "GROUPREF" and self.widths.get(av, 2) <= 1:
                return f"(?:{self.full(node, depth)})?"  # (a proper prefix of it is empty)
        except _Unknown:
            return ANYTHING
        return ANYTHING  # a lookaround, a conditional group, a wide backreference, …

    def full(self, node: tuple[Any, Any], depth: int) -> str:
        """A regex of exactly the node's matches (a possessive or atomic one: at least)."""
        if depth > MAX_DEPTH:
            raise _Unknown("nested too deep")
        op, av = node
        name = str(op)
        if name in _CHARS:
            char = _char(name, av)
            return f"{self.clean}{char})" if self.inside else char
        if name == "AT":
            at = _AT.get(str(av))
            if at is None:
                raise _Unknown(str(av))
            return at
        if name == "SUBPATTERN":
            group, add, remove, inner = av
            opened = group is not None and group == self.kept
            self.inside += opened
            try:
                body = "".join(self.full(n, depth + 1) for n in inner)
            finally:
                self.inside -= opened
            if group is None:
                return f"(?{_flags(add, remove)}:{body})"
            self.count += 1
            self.names[group] = f"g{self.count}"
            low, high = inner.getwidth()
            self.widths[group] = high
            return f"(?P<g{self.count}>{body})"
        if name == "ATOMIC_GROUP":
            return "(?:" + "".join(self.full(n, depth + 1) for n in av) + ")"
        if name == "BRANCH":
            ways = ["".join(self.full(n, depth + 1) for n in way) for way in av[1]]
            return f"(?:{'|'.join(ways)})"
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, inner = av
            most = "" if high == _p.MAXREPEAT else str(high)
            body = "".join(self.full(n, depth + 1) for n in inner)
            return f"(?:{body}){{{low},{most}}}"
        if name == "GROUPREF" and av in self.names:
            return f"(?P={self.names[av]})"
        raise _Unknown(name)  # a lookaround, a conditional group, …


def _char(name: str, av: Any) -> str:
    """One character's node as a regex atom."""
    if name == "LITERAL":
        return re.escape(chr(av))
    if name == "NOT_LITERAL":
        return f"[^{re.escape(chr(av))}]"
    if name == "ANY":
        return "."
    return _char_class(av)


def _char_class(items: list[Any]) -> str:
    """A parsed character class written back."""
    parts: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            parts.insert(0, "^")
        elif name == "LITERAL":
            parts.append(re.escape(chr(av)))
        elif name == "RANGE":
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif name == "CATEGORY" and str(av) in CATEGORIES:
            parts.append(CATEGORIES[str(av)])
        else:
            raise _Unknown(name)
    return f"[{''.join(parts)}]"


def _flags(add: int, remove: int) -> str:
    """A group's inline flags (`i-s`), as `(?…:` takes them."""
    on = "".join(letter for flag, letter in _LOCAL_FLAGS if add & flag)
    off = "".join(letter for flag, letter in _LOCAL_FLAGS if remove & flag)
    return f"{on}-{off}" if off else on
