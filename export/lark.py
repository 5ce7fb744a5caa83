"""The rule tree in llguidance's Lark syntax (vLLM's and SGLang's `structural` / grammar
requests with the llguidance backend).

Free text becomes one terminal that runs through the marker ending it: llguidance lexes
greedily, so a text terminal followed by a separate closing literal could never stop.
"""

from __future__ import annotations

import json

from .text import lark_terminal
from .tree import PATTERNS, Alt, Grammar, Json, Lit, Node, Opt, Pat, Ref, Rep, Seq, Text


def write(g: Grammar) -> str:
    terminals: dict[object, str] = {}
    # `%llguidance {}` marks the text as llguidance's Lark (SGLang wants it to tell it from EBNF)
    lines = [f"// {line}" for line in g.header] + ["%llguidance {}", ""]

    def terminal(key: object, name: str, body: str) -> str:
        if key not in terminals:
            terminals[key] = f"{name}_{len(terminals) + 1}"
            lines_terms.append(f"{terminals[key]}: {body}")
        return terminals[key]

    lines_terms: list[str] = []

    def expr(node: Node, top: bool = False) -> str:
        if isinstance(node, Lit):
            return _string(node.text)
        if isinstance(node, Ref):
            return node.name
        if isinstance(node, Seq):
            if not node.items:
                return '""'
            return " ".join(expr(n) for n in node.items)
        if isinstance(node, Alt):
            inner = " | ".join(expr(n) for n in node.options)
            return inner if top else f"({inner})"
        if isinstance(node, Opt):
            return f"({expr(node.item, True)})?"
        if isinstance(node, Rep):
            return f"({expr(node.item, True)}){'+' if node.min else '*'}"
        if isinstance(node, Pat):
            return terminal(("pat", node.name), node.name.upper(), f"/{PATTERNS[node.name][0]}/")
        if isinstance(node, Text):
            body = lark_terminal(node.syntax, node.avoid, node.nonempty and not node.end)
            if node.end:
                body = f"({body}) {_string(node.end)}"
            return terminal(node, "TEXT", body)
        if isinstance(node, Json):
            return f"%json {node.schema_text}"
        raise TypeError(node)

    rules = [f"{name}: {expr(node, True)}" for name, node in g.rules.items()]
    return "\n".join([*lines, *rules, "", *lines_terms, ""])


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
