"""The format-neutral rule tree an export is built as, before a writer spells it.

`build.py` turns a family's `FamilySpec` and a request's tools into a `Grammar` of these
nodes; `lark.py` and `gbnf.py` write it out. Keeping the tree free of any one syntax is
what lets both formats say exactly the same language.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Union


@dataclass(frozen=True)
class Lit:
    """Exactly this text."""

    text: str


@dataclass(frozen=True)
class Seq:
    """These nodes one after another; `Seq(())` is the empty string."""

    items: tuple["Node", ...]


@dataclass(frozen=True)
class Alt:
    """One of these nodes."""

    options: tuple["Node", ...]


@dataclass(frozen=True)
class Opt:
    """The node, or nothing."""

    item: "Node"


@dataclass(frozen=True)
class Rep:
    """The node repeated, at least `min` (0 or 1) times."""

    item: "Node"
    min: int = 0


@dataclass(frozen=True)
class Ref:
    """A named rule of the grammar (shared subtrees, recursion)."""

    name: str


@dataclass(frozen=True)
class Pat:
    """A lexical pattern from a fixed table (`PATTERNS`): whitespace, integers, numbers."""

    name: str


@dataclass(frozen=True)
class Text:
    """Free text in one string syntax (`text.SYNTAXES`) that never contains any of `avoid`,
    followed by `end` (kept in the same lexeme: llguidance's lexemes are greedy, so the text
    must be the one that decides where it stops). `nonempty` wants at least one unit."""

    syntax: str
    avoid: tuple[str, ...]
    end: str = ""
    nonempty: bool = False


@dataclass(frozen=True)
class Json:
    """A JSON value following `schema` (a `$ref`-free schema). Lark can hand it to
    llguidance as `%json`; otherwise `values.expand_json` turns it into rules whose strings
    avoid `avoid`."""

    schema_text: str  # canonical JSON text, so the node stays hashable
    avoid: tuple[str, ...] = ()
    # a value inside markup the parser reads as text up to the first marker (a markup
    # dialect's parameter): `%json` cannot keep the markers out of its strings, and one there
    # would cut the value short, so it is always written as rules
    in_markup: bool = False


Node = Union[Lit, Seq, Alt, Opt, Rep, Ref, Pat, Text, Json]

# name -> (lark regex body, GBNF rules, the first named as the pattern): the only lexical
# classes a grammar needs besides literals and text. The GBNF side repeats with `+` (never by
# right recursion: llguidance's Earley parser holds at most 2000 items in a row, and a
# right-recursive rule adds one per character); `gbnf.py` keeps every rule out of
# llguidance's lexer, so a repeated class is still read a character at a time. Exponents have
# at most two digits: 1e999 would read as infinity.
PATTERNS: dict[str, tuple[str, dict[str, str]]] = {
    "ws": (r"[ \t\r\n]+", {"ws-tok": "[ \\t\\r\\n]+"}),
    "blanks": (r"[ \t]+", {"blanks-tok": "[ \\t]+"}),
    "digits": (r"[0-9]+", {"digits-tok": "[0-9]+"}),
    # the first character of text after the calls (`render content_after_calls=true`): not
    # whitespace, which is the calls' own (a lexeme of text would swallow the run before the
    # next call), nor `<`, where a call's markers begin
    "textstart": (r"[^ \t\r\n<]", {"textstart-tok": "[^ \\t\\r\\n<]"}),
    "header": (r"[A-Za-z0-9_.:\-]{1,64}", {"header-tok": "[A-Za-z0-9_.:\\x2D]{1,64}"}),
    "int": (
        r"-?(?:0|[1-9][0-9]*)",
        {"int-tok": '("-")? uint-tok', "uint-tok": '"0" | [1-9] ([0-9])*'},
    ),
    "uint": (r"(?:0|[1-9][0-9]*)", {"uint-tok": '"0" | [1-9] ([0-9])*'}),
    "number": (
        r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,2})?",
        {
            "number-tok": '("-")? uint-tok ("." [0-9]+)? ([eE] ("+" | "-")? [0-9] ([0-9])?)?',
            "uint-tok": '"0" | [1-9] ([0-9])*',
        },
    ),
}


@dataclass
class Grammar:
    """Named rules; `start` is the whole output. `header` lines become comments, and so does
    the grammar line each rule was made from (`lines`, from `source` at `line` when the rule
    was made: what a report of a rejected output points at)."""

    rules: dict[str, Node] = field(default_factory=dict)
    start: str = "start"
    header: list[str] = field(default_factory=list)
    _names: dict[Any, str] = field(default_factory=dict)
    source: str = ""
    line: int = 0
    lines: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def at(self, line: int) -> Iterator[None]:
        """Rules made inside come from grammar line `line` (0: keep the current one)."""
        before = self.line
        self.line = line or before
        try:
            yield
        finally:
            self.line = before

    def where(self, name: str) -> str:
        """`file:line` of the grammar line rule `name` came from, or "" when unknown."""
        line = self.lines.get(name, 0)
        return f"{self.source}:{line}" if line and self.source else ""

    def rule(self, name: str, node: Node, key: Any = None) -> Ref:
        """Add `node` as a rule named after `name` (made unique) and refer to it; the same
        `key` gives back the rule made the first time."""
        if key is not None and key in self._names:
            return Ref(self._names[key])
        base = "".join(c if c.isascii() and c.isalnum() else "_" for c in name.lower())
        base = base.strip("_") or "r"
        if not base[0].isalpha():
            base = "r_" + base
        unique, n = base, 1
        while unique in self.rules:
            n += 1
            unique = f"{base}_{n}"
        self.rules[unique] = node
        self.lines[unique] = self.line
        if key is not None:
            self._names[key] = unique
        return Ref(unique)

    def reserve(self, name: str, key: Any) -> Ref:
        """A rule name for a node made later (recursion): fill it with `define`."""
        ref = self.rule(name, Seq(()), key)
        return ref

    def define(self, ref: Ref, node: Node) -> None:
        self.rules[ref.name] = node


def seq(*items: Node) -> Node:
    """A sequence with nested sequences and empty parts flattened."""
    flat: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        else:
            flat.append(item)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*options: Node) -> Node:
    unique = tuple(dict.fromkeys(options))
    return unique[0] if len(unique) == 1 else Alt(unique)


EMPTY = Seq(())
