"""Free text that must not contain a marker, in each string syntax the dialects use.

The parser ends a value (or content) at the first marker it knows, whatever the value's
own syntax says ("markers win"). So every text an export allows avoids those markers:
for lark as a regex intersected with the complement of `.*(M1|M2|…).*` (llguidance's `&`
and `~`), for GBNF, which has neither, as right-linear rules walking the product of the
string syntax's automaton and an Aho-Corasick automaton over the markers.
"""

from __future__ import annotations

from dataclasses import dataclass

_CONTROL = frozenset(chr(i) for i in range(0x20))
_HEX = "0123456789abcdefABCDEF"


@dataclass(frozen=True)
class CharSet:
    """A character class: `chars`, or everything but `chars` when `negated`."""

    negated: bool
    chars: frozenset[str]

    def minus(self, other: frozenset[str]) -> "CharSet":
        if self.negated:
            return CharSet(True, self.chars | other)
        return CharSet(False, self.chars - other)

    def has(self, c: str) -> bool:
        return (c not in self.chars) if self.negated else (c in self.chars)

    def empty(self) -> bool:
        return not self.negated and not self.chars


@dataclass(frozen=True)
class Syntax:
    """A string body: a lark regex for one unit of it, and the same as a small automaton
    (state 0 starts; `accepting` states may end the body)."""

    unit: str
    states: tuple[tuple[tuple[CharSet, int], ...], ...]
    accepting: frozenset[int]


def _set(chars: str, negated: bool = False, extra: frozenset[str] = frozenset()) -> CharSet:
    return CharSet(negated, frozenset(chars) | extra)


SYNTAXES: dict[str, Syntax] = {
    # whitespace only (the run before an opener, in the opener's lexeme)
    "space": Syntax(r"[ \t\r\n]", (((_set(" \t\r\n"), 0),),), frozenset({0})),
    # raw markup text: anything
    "raw": Syntax(r"(?s:.)", (((_set("", True), 0),),), frozenset({0})),
    # the inside of a JSON string: plain characters, the short escapes and \\uXXXX
    "json": Syntax(
        r'(?:[^"\\\x00-\x1f]|\\["\\\x{2f}bfnrt]|\\u[0-9a-fA-F]{4})',  # no raw / in lark
        (
            ((_set('"\\', True, _CONTROL), 0), (_set("\\"), 1)),
            ((_set('"\\/bfnrt'), 0), (_set("u"), 2)),
            ((_set(_HEX), 3),),
            ((_set(_HEX), 4),),
            ((_set(_HEX), 5),),
            ((_set(_HEX), 0),),
        ),
        frozenset({0}),
    ),
    # the inside of a Python string in single / double quotes, with the common escapes
    # (no control characters: Python's own literal reader refuses some of them)
    "py1": Syntax(
        r"(?:[^'\\\x00-\x1f]|\\['\"\\nrt])",
        (((_set("'\\", True, _CONTROL), 0), (_set("\\"), 1)), ((_set("'\"\\nrt"), 0),)),
        frozenset({0}),
    ),
    "py2": Syntax(
        r'(?:[^"\\\x00-\x1f]|\\[\'"\\nrt])',
        (((_set('"\\', True, _CONTROL), 0), (_set("\\"), 1)), ((_set("'\"\\nrt"), 0),)),
        frozenset({0}),
    ),
}


def rx_char(c: str) -> str:
    """One character as a regex atom that both llguidance and GBNF's classes read."""
    if c.isalnum() or c == " " or ord(c) > 127:
        return c
    return f"\\x{{{ord(c):02x}}}"


def rx_literal(text: str) -> str:
    return "".join(rx_char(c) for c in text)


class _AhoCorasick:
    """The automaton of 'which suffix of the text so far is a prefix of a marker'; a state
    that completes a marker is dead (the text would hold the marker)."""

    def __init__(self, markers: tuple[str, ...]) -> None:
        self.prefixes = sorted({m[:k] for m in markers for k in range(len(m) + 1)}, key=len)
        self.index = {p: i for i, p in enumerate(self.prefixes)}
        self.markers = tuple(m for m in markers if m)
        self.alphabet = sorted({c for m in self.markers for c in m})
        self.dead = {p for p in self.prefixes if any(p.endswith(m) for m in self.markers)}

    def step(self, state: str, c: str) -> str | None:
        """The next state after `c`, None when the text would now hold a marker."""
        text = state + c
        if any(text.endswith(m) for m in self.markers):
            return None
        for k in range(len(text)):
            if text[k:] in self.index:
                return text[k:]
        return ""


def gbnf_rules(syntax_name: str, avoid: tuple[str, ...], prefix: str) -> tuple[str, dict[str, str]]:
    """GBNF rules for a body of `syntax_name` that never contains a marker of `avoid`:
    the start rule's name and every rule (name -> right-hand side)."""
    syntax = SYNTAXES[syntax_name]
    ac = _AhoCorasick(avoid)
    names: dict[tuple[int, str], str] = {}
    rules: dict[str, str] = {}
    todo = [(0, "")]
    while todo:
        q, s = todo.pop()
        if (q, s) in names and names[q, s] in rules:
            continue
        name = names.setdefault((q, s), f"{prefix}-{len(names)}")
        moves = {c: ac.step(s, c) for c in ac.alphabet}
        special = frozenset(c for c, t in moves.items() if t != "")
        options: list[str] = []
        for charset, q2 in syntax.states[q]:
            for c in sorted(special):
                t = moves[c]
                if t is None or not charset.has(c):
                    continue
                target = names.setdefault((q2, t), f"{prefix}-{len(names)}")
                options.append(f"{gbnf_class(CharSet(False, frozenset(c)))} {target}")
                if target not in rules:
                    todo.append((q2, t))
            rest = charset.minus(special)
            if not rest.empty():
                target = names.setdefault((q2, ""), f"{prefix}-{len(names)}")
                options.append(f"{gbnf_class(rest)} {target}")
                if target not in rules:
                    todo.append((q2, ""))
        if q in syntax.accepting:
            options.append('""')
        rules[name] = " | ".join(options) if options else '""'
    return names[0, ""], rules


def gbnf_class(charset: CharSet) -> str:
    """A GBNF character class."""
    body = "".join(_gbnf_class_char(c) for c in sorted(charset.chars))
    return f"[^{body}]" if charset.negated else f"[{body}]"


def _gbnf_class_char(c: str) -> str:
    if c in "]\\^-[":
        return f"\\x{ord(c):02X}"
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    if c == "\t":
        return "\\t"
    if ord(c) < 0x20 or ord(c) == 0x7F:
        return f"\\x{ord(c):02X}"
    return c


def lark_terminal(syntax_name: str, avoid: tuple[str, ...], nonempty: bool) -> str:
    """The lark (llguidance) expression of a body of `syntax_name` avoiding `avoid`."""
    unit = SYNTAXES[syntax_name].unit
    parts = [f"/{unit}{'+' if nonempty else '*'}/"]
    if avoid:
        alternatives = "|".join(rx_literal(m) for m in sorted(set(avoid)))
        parts.append(f"~/(?s:.*)(?:{alternatives})(?s:.*)/")
    return " & ".join(parts)
