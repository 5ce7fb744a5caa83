"""The rule tree in GBNF (llama.cpp's `--grammar-file`, and any stack that takes GBNF).

GBNF has no `%json` and no regex intersection, so JSON values are expanded into rules
(`values.expand_json`) and marker-free text into right-linear rules, one per state of the
text's automaton (`text.marker_free_states`). Literals are written one character per
string: GBNF is matched character by character in llama.cpp anyway, and llguidance's GBNF
front end would otherwise read a literal as one greedy lexeme that competes with the text
around it.
"""

from __future__ import annotations

from .printer import EMPTY_STRING, Printer
from .text import CharSet, marker_free_states
from .tree import PATTERNS, Grammar, Json, Pat, Text
from .values import expand_json

_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_IN_STRING = ('"\\', "")  # (escaped with a backslash, escaped as \xNN) inside "..."
_IN_CLASS = ("", "]\\^-[\x7f")  # the same inside [...]


def write(g: Grammar) -> str:
    return GbnfPrinter(g).write()


class GbnfPrinter(Printer):
    """GBNF spellings: one string per character, `-` in rule names and `root` for the start,
    patterns and free text as rules listed after the grammar's own."""

    group_open = "( "
    group_close = " )"

    def __init__(self, g: Grammar) -> None:
        super().__init__(g)
        self.extra: dict[str, str] = {}  # rules the spellings add: name -> expression
        self.text_rules: dict[tuple[str, tuple[str, ...]], str] = {}  # text -> its start rule

    def write(self) -> str:
        expand_json(self.g)
        return super().write()

    def literal(self, text: str) -> str:
        return " ".join(f'"{_escaped(c, *_IN_STRING)}"' for c in text) if text else EMPTY_STRING

    def rule_name(self, name: str) -> str:
        return "root" if name == self.g.start else name.replace("_", "-")

    def pattern(self, node: Pat) -> str:
        rules = PATTERNS[node.name][1]
        for name, body in rules.items():
            self.extra.setdefault(name, body)
        return next(iter(rules))

    def text(self, node: Text) -> str:
        if node.syntax in HEADER_LEFT_OUT:
            return self.literal(node.end)
        key = (node.syntax, tuple(sorted(set(node.avoid))))
        if key not in self.text_rules:
            prefix = f"text{len(self.text_rules) + 1}"
            for state in marker_free_states(node.syntax, key[1]):
                options = [f"{_class(chars)} {prefix}-{to}" for chars, to in state.moves]
                options += [EMPTY_STRING] if state.accepting else []
                self.extra[f"{prefix}-{state.number}"] = " | ".join(options) or EMPTY_STRING
            self.text_rules[key] = f"{prefix}-0"
        start = self.text_rules[key]
        return f"{start} {self.literal(node.end)}" if node.end else start

    def json(self, node: Json) -> str:
        raise AssertionError("expand_json left a Json node")

    def document(self, rules: list[tuple[str, str]]) -> str:
        lines = [f"# {line}" for line in self.g.header]
        lines += [f"{name} ::= {expression}" for name, expression in rules]
        lines += [f"{name} ::= {expression}" for name, expression in self.extra.items()]
        return "\n".join(lines) + "\n"


# A free header at the very start of the output (a `skip` after the opener the prompt ended
# with) is left out in GBNF: llguidance's GBNF front end cannot tell its characters from the
# free text that may start the output too, and then refuses that text. Lark keeps it.
HEADER_LEFT_OUT = frozenset({"header"})


def _class(charset: CharSet) -> str:
    body = "".join(_escaped(c, *_IN_CLASS) for c in sorted(charset.chars))
    return f"[^{body}]" if charset.negated else f"[{body}]"


def _escaped(c: str, backslashed: str, hexed: str) -> str:
    """`c` inside a GBNF string or class: `\\n`, `\\r`, `\\t`, a backslash before the
    characters `backslashed`, `\\xNN` for the characters `hexed` and other controls."""
    if c in backslashed:
        return "\\" + c
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    if c in hexed or ord(c) < 0x20:
        return f"\\x{ord(c):02X}"
    return c
