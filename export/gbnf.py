"""The rule tree in GBNF (llama.cpp's `--grammar-file`, and any stack that takes GBNF).

GBNF has no `%json` and no regex intersection, so JSON values are expanded into rules
(`values.expand_json`) and marker-free text into right-linear rules (`text.gbnf_rules`).
Literals are written one character per string: GBNF is matched character by character
in llama.cpp anyway, and llguidance's GBNF front end would otherwise read a literal as one
greedy lexeme that competes with the text around it.
"""

from __future__ import annotations

from .text import gbnf_rules
from .tree import PATTERNS, Alt, Grammar, Json, Lit, Node, Opt, Pat, Ref, Rep, Seq, Text
from .values import expand_json


def write(g: Grammar) -> str:
    expand_json(g)
    extra: dict[str, str] = {}
    text_rules: dict[tuple[str, tuple[str, ...]], str] = {}

    def name_of(rule: str) -> str:
        return "root" if rule == g.start else rule.replace("_", "-")

    def expr(node: Node, top: bool = False) -> str:
        if isinstance(node, Lit):
            return " ".join(_char(c) for c in node.text) if node.text else '""'
        if isinstance(node, Ref):
            return name_of(node.name)
        if isinstance(node, Seq):
            return " ".join(expr(n) for n in node.items) if node.items else '""'
        if isinstance(node, Alt):
            inner = " | ".join(expr(n) for n in node.options)
            return inner if top else f"( {inner} )"
        if isinstance(node, Opt):
            return f"( {expr(node.item, True)} )?"
        if isinstance(node, Rep):
            return f"( {expr(node.item, True)} ){'+' if node.min else '*'}"
        if isinstance(node, Pat):
            rules = PATTERNS[node.name][1]
            for name, body in rules.items():
                extra.setdefault(name, body)
            return next(iter(rules))
        if isinstance(node, Text):
            key = (node.syntax, tuple(sorted(set(node.avoid))))
            if key not in text_rules:
                start, rules = gbnf_rules(node.syntax, key[1], f"text{len(text_rules) + 1}")
                text_rules[key] = start
                extra.update(rules)
            body = text_rules[key]
            return f"{body} {expr(Lit(node.end))}" if node.end else body
        if isinstance(node, Json):
            raise AssertionError("expand_json left a Json node")
        raise TypeError(node)

    lines = [f"# {line}" for line in g.header]
    for rule, node in g.rules.items():
        lines.append(f"{name_of(rule)} ::= {expr(node, True)}")
    lines += [f"{name} ::= {body}" for name, body in extra.items()]
    return "\n".join(lines) + "\n"


def _char(c: str) -> str:
    if c == '"':
        return '"\\""'
    if c == "\\":
        return '"\\\\"'
    if c == "\n":
        return '"\\n"'
    if c == "\r":
        return '"\\r"'
    if c == "\t":
        return '"\\t"'
    if ord(c) < 0x20:
        return f'"\\x{ord(c):02X}"'
    return f'"{c}"'
