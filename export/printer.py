"""The one walk that prints a rule tree; each format is a subclass with its own spellings.

Both formats write sequences, choices, options, repetitions and rule references the same
way, so that walk lives here once. A format (`lark.LarkPrinter`, `gbnf.GbnfPrinter`) says
how a group is bracketed and how the leaves are spelled: literals, rule names, lexical
patterns, free text and JSON values; and how the rules are laid out as a document.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .tree import Alt, Grammar, Json, Lit, Node, Opt, Pat, Ref, Rep, Seq, Text

EMPTY_STRING = '""'  # the empty sequence, in both formats


class Printer(ABC):
    """Prints one grammar. A subclass per format fills in the spellings (the abstract methods)."""

    group_open = "("
    group_close = ")"

    def __init__(self, g: Grammar) -> None:
        self.g = g

    def write(self) -> str:
        rules = [
            (self.rule_name(name), self.expr(node, top=True), self.g.where(name))
            for name, node in self.g.rules.items()
        ]
        return self.document(rules)

    @staticmethod
    def with_sources(rules: list[tuple[str, str, str]], comment: str) -> list[str]:
        """`name SEP expression` lines (`rules`: name, expression with its separator, where
        it came from), each run of rules from one grammar line after a comment naming it."""
        lines, last = [], ""
        for name, expression, where in rules:
            if where != last:
                lines.append(f"{comment} {where or 'made by the exporter'}")
            last = where
            lines.append(f"{name}{expression}")
        return lines

    def expr(self, node: Node, top: bool = False) -> str:
        """`node` as an expression; a choice is bracketed unless it is a whole rule (`top`)."""
        if isinstance(node, Lit):
            return self.literal(node.text)
        if isinstance(node, Ref):
            return self.rule_name(node.name)
        if isinstance(node, Seq):
            return " ".join(self.expr(n) for n in node.items) if node.items else EMPTY_STRING
        if isinstance(node, Alt):
            inner = " | ".join(self.expr(n) for n in node.options)
            return inner if top else self.group(inner)
        if isinstance(node, Opt):
            return self.group(self.expr(node.item, True)) + "?"
        if isinstance(node, Rep):
            return self.group(self.expr(node.item, True)) + ("+" if node.min else "*")
        if isinstance(node, Pat):
            return self.pattern(node)
        if isinstance(node, Text):
            return self.text(node)
        if isinstance(node, Json):
            return self.json(node)
        raise TypeError(node)

    def group(self, inner: str) -> str:
        return f"{self.group_open}{inner}{self.group_close}"

    @abstractmethod
    def literal(self, text: str) -> str: ...

    @abstractmethod
    def rule_name(self, name: str) -> str: ...

    @abstractmethod
    def pattern(self, node: Pat) -> str: ...

    @abstractmethod
    def text(self, node: Text) -> str: ...

    @abstractmethod
    def json(self, node: Json) -> str: ...

    @abstractmethod
    def document(self, rules: list[tuple[str, str, str]]) -> str:
        """The whole text: the grammar's header, `rules` (name, expression, the grammar's
        `file:line` it came from or "") and whatever the spellings added on the way
        (terminals, pattern and text rules)."""
        ...
