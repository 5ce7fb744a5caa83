"""JSON-schema values as rules, in the value syntaxes the dialects write.

One walker, three spellings: JSON (GBNF's stand-in for `%json`, and lark's when strings
must avoid the family's markers), Gemma's key:value objects and Python literals. Strings
avoid the markers that end the arguments; integers, numbers, booleans and null are
written in their literal syntax; objects list their declared properties in schema order,
required ones always present.

Deliberately narrower than JSON Schema: `minimum >= 0` makes integers unsigned, but other
numeric bounds, string lengths and patterns are not enforced; an object without
`properties` is written empty (`{}`), an array without `items` holds any values.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any

from ..runtime.render import render_keyvalue, render_python
from .schema import branches, schema_text
from .tree import EMPTY, Alt, Grammar, Json, Lit, Node, Opt, Pat, Ref, Rep, Seq, Text, alt, seq

WS = Opt(Pat("ws"))
# whitespace that breaks no line: inside a value that a line break would end (kv_lines)
BLANKS = Opt(Pat("blanks"))
_ids = count()


def ordered(g: Grammar, name: str, items: list[tuple[Node, bool]], sep: Node) -> Node:
    """`items` in this order, each present or not (a `True` flag: always), `sep` between the
    present ones: one rule per (position, anything written yet), so the size stays linear.

    Made from the last item back, in a loop (an object may have any number of properties:
    no recursion per item), the rules in the order a walk from the first would make them."""
    tag = next(_ids)
    n = len(items)

    def rule(i: int, first: bool, then: Node, skipped: Node) -> Node:
        """From item `i` on: item `i` and `then`, or (when optional) `skipped`."""
        node, required = items[i]
        take = seq(node if first else seq(sep, node), then)
        body = take if required else alt(take, skipped)
        return g.rule(f"{name}_{i}{'f' if first else ''}", body, key=(tag, i, first))

    later: list[Node] = [EMPTY] * (n + 1)  # from item i on, something already written
    for i in range(n - 1, 0, -1):
        later[i] = rule(i, False, later[i + 1], later[i + 1])
    # from item i on, nothing written yet: made up to the first required item only
    stop = next((i for i, (_, required) in enumerate(items) if required), n)
    start: Node = EMPTY if stop == n else rule(stop, True, later[stop + 1], EMPTY)
    for i in range(stop - 1, -1, -1):
        start = rule(i, True, later[i + 1], start)
    return start


class Values:
    """Rules for values of one syntax (`json`, `keyvalue`, `python`) avoiding `avoid`."""

    def __init__(self, g: Grammar, style: str, avoid: tuple[str, ...], delim: str = '"') -> None:
        self.g, self.style, self.avoid, self.delim = g, style, tuple(sorted(set(avoid))), delim
        # the whitespace between tokens must not write a marker that is whitespace itself
        # (kv_lines' line separator `\n` ends the value: JSON there stays on its line)
        self.ws = BLANKS if any(m and not m.strip() for m in self.avoid) else WS

    def value(self, schema: Any) -> Node:
        text = schema_text(schema) if isinstance(schema, dict) else json.dumps(schema)
        key = ("value", self.style, self.avoid, self.delim, text)
        if key in self.g._names:
            return Ref(self.g._names[key])
        ref = self.g.reserve(f"{self.style}_value", key)
        self.g.define(ref, alt(*(self._branch(b) for b in branches(schema))))
        return ref

    def _branch(self, b: dict[str, Any]) -> Node:
        if "enum" in b:
            return alt(*(self.literal(v) for v in b["enum"]))
        kind = b["type"]
        if kind == "string":
            return self.string()
        if kind == "integer":
            minimum = b.get("minimum")
            unsigned = isinstance(minimum, (int, float)) and minimum >= 0
            return Pat("uint" if unsigned else "int")
        if kind == "number":
            return Pat("number")
        if kind in ("boolean", "null"):
            values = [True, False] if kind == "boolean" else [None]
            return alt(*(self.literal(v) for v in values))
        if kind == "array":
            return self.array(b.get("items", {}), int(b.get("minItems", 0) or 0) > 0)
        return self.object(b)

    def literal(self, value: Any) -> Node:
        """A constant in this syntax (an enum member)."""
        if self.style == "python":
            if isinstance(value, str):  # either quote, as for a key (`name()` below)
                written = render_python(value), json.dumps(value, ensure_ascii=False)
                return alt(*(Lit(w) for w in dict.fromkeys(written)))
            return Lit(render_python(value))
        if self.style == "keyvalue":
            if isinstance(value, str):
                return Lit(f"{self.delim}{value}{self.delim}")
            if isinstance(value, (dict, list)):
                return Lit(render_keyvalue(value, self.delim))
        return Lit(json.dumps(value, ensure_ascii=False))

    def string(self) -> Node:
        if self.style == "keyvalue":
            d = self.delim
            return seq(Lit(d), Text("raw", tuple(sorted({*self.avoid, d})), end=d))
        if self.style == "python":
            return alt(
                seq(Lit("'"), Text("py1", self.avoid, end="'")),
                seq(Lit('"'), Text("py2", self.avoid, end='"')),
            )
        return seq(Lit('"'), Text("json", self.avoid, end='"'))

    def _sep(self) -> Node:
        if self.style == "keyvalue":
            return Lit(",")
        if self.style == "json":  # JSON: whitespace around every structural character
            return seq(self.ws, Lit(","), self.ws)
        return seq(Lit(","), self.ws)

    def array(self, items: Any, nonempty: bool) -> Node:
        one = self.value(items)
        more = seq(one, Rep(seq(self._sep(), one)))
        inner = more if nonempty else Opt(more)
        if self.style == "json":
            return seq(Lit("["), self.ws, inner, self.ws, Lit("]"))
        return seq(Lit("["), inner, Lit("]"))

    def object(self, schema: dict[str, Any]) -> Node:
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return Lit("{}")
        required = set(schema.get("required") or ())
        entries = [(seq(self.key(k), self.value(v)), k in required) for k, v in props.items()]
        body = ordered(self.g, f"{self.style}_props", entries, self._sep())
        if self.style == "json":
            return seq(Lit("{"), self.ws, body, self.ws, Lit("}"))
        return seq(Lit("{"), body, Lit("}"))

    def key(self, name: str) -> Node:
        if self.style == "keyvalue":
            return Lit(f"{name}:")
        if self.style == "python":
            quoted = alt(Lit(render_python(name)), Lit(json.dumps(name, ensure_ascii=False)))
            return seq(quoted, Lit(":"), self.ws)
        return seq(Lit(json.dumps(name, ensure_ascii=False)), self.ws, Lit(":"), self.ws)


def expand_json(g: Grammar, only_in_markup: bool = False) -> None:
    """Replace every `Json` node of `g` by JSON rules (GBNF has no `%json`), or with
    `only_in_markup` those `%json` cannot write (`Json.in_markup`)."""

    def walk(node: Node) -> Node:
        if isinstance(node, Json) and (node.in_markup or not only_in_markup):
            return Values(g, "json", node.avoid).value(json.loads(node.schema_text))
        if isinstance(node, Seq):
            return Seq(tuple(walk(n) for n in node.items))
        if isinstance(node, Alt):
            return Alt(tuple(walk(n) for n in node.options))
        if isinstance(node, Opt):
            return Opt(walk(node.item))
        if isinstance(node, Rep):
            return Rep(walk(node.item), node.min)
        return node

    done: set[str] = set()
    while True:
        todo = [name for name in g.rules if name not in done]
        if not todo:
            return
        for name in todo:
            with g.at(g.lines.get(name, 0)):  # a value's rules come from its rule's line
                g.rules[name] = walk(g.rules[name])
            done.add(name)
