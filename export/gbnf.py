"""The rule tree in GBNF (llama.cpp's `--grammar-file`, and any stack that takes GBNF).

GBNF has no `%json` and no regex intersection, so JSON values are expanded into rules
(`values.expand_json`) and marker-free text into rules over the states of the text's
automaton (`text.marker_free_states`).

Two things keep llguidance (vLLM's and SGLang's GBNF reader) reading the grammar as llama.cpp
does, a character at a time:
- llguidance's GBNF front end turns every rule made of terminals alone (no reference to a
  recursive rule) into one greedy lexeme: `,p2:true` as one lexeme swallows the `,` of a
  `,p1:` the grammar also allows there. Every such rule gets a reference to `NO_LEXEME`, an
  empty recursive rule, so no rule of ours is a lexeme and literals are written one
  character per string.
- llguidance's Earley parser holds at most 2000 items in a row, and a right-recursive rule
  adds one per character read: text is written as a `*` loop through its automaton's start
  state (llama.cpp refuses left recursion, and both read `*`), so only a run of characters
  that never gets back there (a marker's prefix repeated) recurses.
"""

from __future__ import annotations

from typing import Callable

from .printer import EMPTY_STRING, Printer
from .text import CharSet, State, marker_free_states, straddling
from .tree import PATTERNS, Grammar, Json, Pat, Text
from .values import expand_json

_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_IN_STRING = ('"\\', "")  # (escaped with a backslash, escaped as \xNN) inside "..."
_IN_CLASS = ("", "]\\^-[\x7f")  # the same inside [...]
# an empty rule that is recursive, so llguidance never makes a rule that refers to it a lexeme;
# its other branch starts with a class no character is in (U+10FFFF is written as it is:
# llguidance's reader mangles `\U` escapes), so it only ever matches the empty string
NO_LEXEME = "no-lexeme"
_NO_LEXEME_RULE = f'"" | [^\\x00-\U0010ffff] {NO_LEXEME}'


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
        # (syntax, markers, endings it may not have) -> the text's rule
        self.text_rules: dict[tuple[str, tuple[str, ...], tuple[str, ...]], str] = {}

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
        avoid = tuple(sorted(set(node.avoid)))
        key = (node.syntax, avoid, straddling(avoid, node.end))
        if key not in self.text_rules:
            prefix = f"text{len(self.text_rules) + 1}"
            states = marker_free_states(node.syntax, avoid, node.end)
            self.extra.update(_text_rules(prefix, states))
            self.text_rules[key] = prefix
        start = self.text_rules[key]
        return f"{start} {self.literal(node.end)}" if node.end else start

    def json(self, node: Json) -> str:
        raise AssertionError("expand_json left a Json node")

    def document(self, rules: list[tuple[str, str, str]]) -> str:
        sources = {name: where for name, _, where in rules}
        named = [(name, expression) for name, expression, _ in rules]
        everything = _off_the_lexer([*named, *self.extra.items()])
        lines = [f"# {line}" for line in self.g.header]
        lines += self.with_sources(
            [(n, f" ::= {e}", sources.get(n, "")) for n, e in everything], "#"
        )
        return "\n".join(lines) + "\n"


def _text_rules(prefix: str, states: list[State]) -> dict[str, str]:
    """The rules of a text automaton: `prefix` loops through the start state (a `*` over the
    paths that leave it and come back, `PREFIX-back-N` from state N), then ends, at the start
    state or along a path that never comes back (`PREFIX-end-N` from state N). Only the paths
    that can come back, or end, are written."""
    by_number = {s.number: s for s in states}
    hub = by_number[0]

    def reach(goal: Callable[[State], bool]) -> set[int]:
        """The states (but the start) from which a path avoiding the start reaches `goal`."""
        found = {s.number for s in states if s.number and goal(s)}
        while True:
            more = {
                s.number
                for s in states
                if s.number and s.number not in found and any(t in found for _, t in s.moves)
            }
            if not more:
                return found
            found |= more

    comes_back = reach(lambda s: any(t == 0 for _, t in s.moves))
    ends = reach(lambda s: s.accepting)

    def steps(state: State, kind: str, targets: set[int]) -> list[str]:
        """The moves of `state` other than its loops onto itself, towards `targets`."""
        out = []
        for chars, to in state.moves:
            if to == state.number:
                continue
            if to == 0 and kind == "back":
                out.append(_class(chars))
            elif to in targets:
                out.append(f"{_class(chars)} {prefix}-{kind}-{to}")
        return out

    def written(state: State, options: list[str], loop_moves: list[CharSet]) -> str:
        """A `*` over `loop_moves`, then one of `options` (`""`: nothing)."""
        loop = f"( {' | '.join(_class(c) for c in loop_moves)} )*" if loop_moves else ""
        choice = "" if options == [EMPTY_STRING] else f"( {' | '.join(options)} )"
        return " ".join(part for part in (loop, choice) if part) or EMPTY_STRING

    def own(state: State) -> list[CharSet]:
        return [chars for chars, to in state.moves if to == state.number]

    rules: dict[str, str] = {}
    round_trip = [_class(chars) for chars, to in hub.moves if to == 0]
    round_trip += steps(hub, "back", comes_back)
    finish = ([EMPTY_STRING] if hub.accepting else []) + steps(hub, "end", ends)
    body = f"( {' | '.join(round_trip)} )*" if round_trip else ""
    choice = "" if finish == [EMPTY_STRING] else f"( {' | '.join(finish) or EMPTY_STRING} )"
    rules[prefix] = " ".join(part for part in (body, choice) if part) or EMPTY_STRING
    for state in states:
        if state.number in comes_back:
            options = steps(state, "back", comes_back)
            rules[f"{prefix}-back-{state.number}"] = written(state, options, own(state))
        if state.number in ends:
            options = ([EMPTY_STRING] if state.accepting else []) + steps(state, "end", ends)
            rules[f"{prefix}-end-{state.number}"] = written(state, options, own(state))
    return rules


def _off_the_lexer(rules: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`rules` with `NO_LEXEME` added to every rule llguidance's GBNF front end would make a
    lexeme (as it decides: a rule that refers to no rule but lexemes, `root` aside)."""
    refs = {name: _references(expression) for name, expression in rules}
    lexemes: set[str] = set()
    while True:
        more = {
            name
            for name, _ in rules
            if name != "root" and name not in lexemes and refs[name] <= lexemes
        }
        if not more:
            break
        lexemes |= more
    out = [
        (name, f"( {expression} ) {NO_LEXEME}" if name in lexemes else expression)
        for name, expression in rules
    ]
    return [*out, (NO_LEXEME, _NO_LEXEME_RULE)] if lexemes else out


def _references(expression: str) -> set[str]:
    """The rule names an expression refers to (outside its strings, classes and counts)."""
    found: set[str] = set()
    i = 0
    while i < len(expression):
        c = expression[i]
        if c in '"[{':
            close = {'"': '"', "[": "]", "{": "}"}[c]
            i += 1
            while i < len(expression) and expression[i] != close:
                i += 2 if expression[i] == "\\" else 1
            i += 1
        elif c.isalnum() or c in "-_":
            j = i
            while j < len(expression) and (expression[j].isalnum() or expression[j] in "-_"):
                j += 1
            found.add(expression[i:j])
            i = j
        else:
            i += 1
    return found


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
