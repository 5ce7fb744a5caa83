"""The rule tree in llguidance's Lark syntax (vLLM's and SGLang's `structural` / grammar
requests with the llguidance backend).

Free text becomes one terminal that runs through the marker ending it: llguidance lexes
greedily, so a text terminal followed by a separate closing literal could never stop.
The text avoids its markers by regex intersection with the complement of `.*(M1|M2|…).*`
(llguidance's `&` and `~`).
"""

from __future__ import annotations

import json

from .printer import Printer
from .text import SYNTAXES, straddling
from .tree import PATTERNS, Grammar, Json, Pat, Text


def write(g: Grammar) -> str:
    return LarkPrinter(g).write()


class LarkPrinter(Printer):
    """Lark spellings: JSON string literals, rule names as they are, patterns and free text
    as numbered terminals listed after the rules, JSON values as `%json`."""

    def __init__(self, g: Grammar) -> None:
        super().__init__(g)
        self.terminals: dict[object, str] = {}  # what a terminal stands for -> its name
        self.terminal_lines: list[str] = []

    def literal(self, text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    def rule_name(self, name: str) -> str:
        return name

    def pattern(self, node: Pat) -> str:
        return self._terminal(("pat", node.name), node.name.upper(), f"/{PATTERNS[node.name][0]}/")

    def text(self, node: Text) -> str:
        body = text_expression(node.syntax, node.avoid, node.nonempty and not node.end, node.end)
        if node.end:
            body = f"({body}) {self.literal(node.end)}"
        return self._terminal(node, "TEXT", body)

    def json(self, node: Json) -> str:
        return f"%json {node.schema_text}"

    def document(self, rules: list[tuple[str, str, str]]) -> str:
        # `%llguidance {}` marks the text as llguidance's Lark (SGLang wants it to tell it
        # from EBNF)
        header = [f"// {line}" for line in self.g.header] + ["%llguidance {}", ""]
        lines = self.with_sources([(n, f": {e}", w) for n, e, w in rules], "//")
        return "\n".join([*header, *lines, "", *self.terminal_lines, ""])

    def _terminal(self, key: object, name: str, body: str) -> str:
        if key not in self.terminals:
            self.terminals[key] = f"{name}_{len(self.terminals) + 1}"
            self.terminal_lines.append(f"{self.terminals[key]}: {body}")
        return self.terminals[key]


def text_expression(syntax_name: str, avoid: tuple[str, ...], nonempty: bool, end: str = "") -> str:
    """The lark (llguidance) expression of a body of `syntax_name` avoiding `avoid`, followed
    by `end` (so not ending in a marker's first part that `end` would complete)."""
    syntax = SYNTAXES[syntax_name]
    if syntax.limit:
        repeat = f"{{{1 if nonempty else 0},{syntax.limit}}}"
    else:
        repeat = "+" if nonempty else "*"
    parts = [f"/{syntax.unit}{repeat}/"]
    if avoid:
        alternatives = "|".join(_regex_literal(m) for m in sorted(set(avoid)))
        parts.append(f"~/(?s:.*)(?:{alternatives})(?s:.*)/")
    bad_ends = straddling(tuple(avoid), end)
    if bad_ends:
        parts.append(f"~/(?s:.*)(?:{'|'.join(_regex_literal(p) for p in bad_ends)})/")
    return " & ".join(parts)


def _regex_literal(text: str) -> str:
    """`text` as a regex that matches it: letters, digits, spaces and non-ASCII as they are,
    every other character as a `\\x{..}` escape."""
    return "".join(
        c if c.isalnum() or c == " " or ord(c) > 127 else f"\\x{{{ord(c):02x}}}" for c in text
    )
