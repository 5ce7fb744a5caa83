"""Free text that must not contain a marker, in each string syntax the dialects use.

The parser ends a value (or content) at the first marker it knows, whatever the value's
own syntax says ("markers win"). So every text an export allows avoids those markers.
Each string syntax is given twice: as a regex of one unit (lark intersects it with the
complement of the markers, `lark.text_expression`) and as a small automaton, whose product
with an Aho-Corasick automaton over the markers (`marker_free_states`) GBNF, which has no
intersection, writes as right-linear rules.
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
    limit: int = 0  # at most this many units (0: any number); the automaton counts them


_HEADER_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-"
_HEADER_LIMIT = 64


def _counted(chars: str, limit: int) -> tuple[tuple[tuple[CharSet, int], ...], ...]:
    """The automaton of at most `limit` characters of `chars`: state i has read i."""
    step = _set(chars)
    return tuple(((step, i + 1),) if i < limit else () for i in range(limit + 1))


def _set(chars: str, negated: bool = False, extra: frozenset[str] = frozenset()) -> CharSet:
    return CharSet(negated, frozenset(chars) | extra)


def _python_string(quote: str) -> Syntax:
    """The inside of a Python string quoted by `quote`: plain characters, the short escapes,
    `\\xHH`, `\\uHHHH` and `\\UHHHHHHHH` up to `\\U0010ffff` (a larger code point is not a
    Python literal: the parser would read the whole value as text)."""
    pattern = (
        f"(?:[^{quote}\\\\\\x00-\\x1f]|\\\\['\"\\\\nrt]"
        r"|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\U(?:000[0-9a-fA-F]{5}|0010[0-9a-fA-F]{4}))"
    )
    # 0 plain text, 1 after a backslash, 2-3 \x's digits, 4-7 \u's, 8-16 \U's: two zeros,
    # then 0 and five digits or 1, 0 and four digits
    states: list[tuple[tuple[CharSet, int], ...]] = [
        ((_set(quote + "\\", True, _CONTROL), 0), (_set("\\"), 1)),
        ((_set("'\"\\nrt"), 0), (_set("x"), 2), (_set("u"), 4), (_set("U"), 8)),
    ]
    for first, width in ((2, 2), (4, 4)):  # a run of `width` hex digits, back to plain text
        states += [((_set(_HEX), first + k + 1 if k + 1 < width else 0),) for k in range(width)]
    states += [
        ((_set("0"), 9),),  # 8: \U
        ((_set("0"), 10),),  # 9: \U0
        ((_set("0"), 11), (_set("1"), 16)),  # 10: \U00
        ((_set(_HEX), 12),),  # 11: \U000, then five digits
        ((_set(_HEX), 13),),
        ((_set(_HEX), 14),),
        ((_set(_HEX), 15),),
        ((_set(_HEX), 0),),
        ((_set("0"), 12),),  # 16: \U001, then 0 and four digits (from state 12)
    ]
    return Syntax(pattern, tuple(states), frozenset({0}))


SYNTAXES: dict[str, Syntax] = {
    # whitespace only (the run before an opener, in the opener's lexeme)
    "space": Syntax(r"[ \t\r\n]", (((_set(" \t\r\n"), 0),),), frozenset({0})),
    # raw markup text: anything
    "raw": Syntax(r"(?s:.)", (((_set("", True), 0),),), frozenset({0})),
    # a free name header (the markup a `skip` reads, Inkling's tool name): a name-like word
    "header": Syntax(
        r"[A-Za-z0-9_.:\-]",
        _counted(_HEADER_CHARS, _HEADER_LIMIT),
        frozenset(range(_HEADER_LIMIT + 1)),
        _HEADER_LIMIT,
    ),
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
    # the inside of a Python string in single / double quotes, with the escapes Python's repr
    # writes (the renderer's: `\\u2028` for a character repr does not print as it is)
    # (no control characters: Python's own literal reader refuses some of them)
    "py1": _python_string("'"),
    "py2": _python_string('"'),
}


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


@dataclass(frozen=True)
class State:
    """One state of a marker-free text automaton: its moves (a character class and the
    number of the state it leads to), and whether the text may end here."""

    number: int
    moves: tuple[tuple[CharSet, int], ...]
    accepting: bool


def straddling(avoid: tuple[str, ...], end: str) -> tuple[str, ...]:
    """The endings a body followed by `end` must not have: a marker's first part whose rest
    `end` begins with (`<call name=` before the `"` that closes a JSON string makes the
    marker `<call name="`, which the parser would find there)."""
    found = {
        marker[:k]
        for marker in avoid
        for k in range(1, len(marker))
        if end and end.startswith(marker[k:])
    }
    return tuple(sorted(found))


def marker_free_states(syntax_name: str, avoid: tuple[str, ...], end: str = "") -> list[State]:
    """The automaton of a body of `syntax_name` that never contains a marker of `avoid`, and
    does not end in one of `straddling(avoid, end)`: the product of the syntax's automaton
    and the markers' Aho-Corasick automaton, state 0 starting. States are numbered as they
    are reached and listed as they are built."""
    syntax = SYNTAXES[syntax_name]
    ac = _AhoCorasick(avoid)
    bad_ends = straddling(avoid, end)
    numbers: dict[tuple[int, str], int] = {}  # (syntax state, marker prefix) -> number
    built: set[int] = set()
    states: list[State] = []
    todo = [(0, "")]
    while todo:
        q, s = todo.pop()
        if (q, s) in numbers and numbers[q, s] in built:
            continue
        number = numbers.setdefault((q, s), len(numbers))
        after = {c: ac.step(s, c) for c in ac.alphabet}
        special = frozenset(c for c, t in after.items() if t != "")
        moves: list[tuple[CharSet, int]] = []

        def move(chars: CharSet, target: tuple[int, str]) -> None:
            to = numbers.setdefault(target, len(numbers))
            moves.append((chars, to))
            if to not in built:
                todo.append(target)

        for charset, q2 in syntax.states[q]:
            for c in sorted(special):
                t = after[c]
                if t is not None and charset.has(c):
                    move(CharSet(False, frozenset(c)), (q2, t))
            rest = charset.minus(special)
            if not rest.empty():
                move(rest, (q2, ""))
        built.add(number)
        ends_well = not any(s.endswith(p) for p in bad_ends)  # `s`: the longest such suffix
        states.append(State(number, tuple(moves), q in syntax.accepting and ends_well))
    return states
