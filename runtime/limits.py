"""How deep anything nested is walked: one limit for the runtime, render and export.

Every function of the runtime, `render` and the export that walks a nested thing by calling
itself (a JSON or Python value, a markup value's elements, a tool's schema, a grammar's
spec) counts the levels it has gone down and stops at `MAX_DEPTH`, instead of trusting
Python's recursion limit: a RecursionError is no answer a server can give, and compiled code
(mypyc) has no recursion limit at all, so unbounded recursion there crashes the process. What
each walker does at the limit is the policy of docs/policies.md, "Values nested too deep":
nothing of the model's text is lost, and the parse stays the same whole or streamed.
"""

from __future__ import annotations

__all__ = ["MAX_DEPTH", "TooDeep", "deeper_than"]

MAX_DEPTH = 128
"""The deepest nesting read, written or walked, counting the outermost container as 1 (an
arguments object holding a list holding a number is 2 deep).

Past it (docs/policies.md, "Values nested too deep"):
- JSON arguments nested deeper are malformed: closed at this depth, the rest markup
  (`json_stream.JsonScanner`), whole or streamed alike.
- A markup value (or a value written in key:value or Python syntax) nested deeper is not read
  as a container: it stays the text the model wrote.
- A call list's Python literal nested deeper is no literal: the value is its text.
- `xml_elements` tags nested deeper are text of the element around them.
- Typing by schema (`coerce_json`) stops there: deeper members stay as written.
- A tool schema nested deeper is no schema below the limit (values there stay as written);
  its anyOf/oneOf/allOf members nested deeper declare nothing.
- `render` refuses arguments nested deeper (`RenderError`): the parser reads no deeper, so
  no rendering of them could read back the same.
- `export_grammar` refuses a tool whose schema (its `$ref`s inlined) describes values deeper
  (`ExportError`).

Clients' own JSON parsers agree on about this much: Python's json gives up near 1000 levels,
serde_json's default is 128.
"""


class TooDeep(ValueError):
    """A walk went past `MAX_DEPTH` (raised and caught inside a walker; never escapes the API
    as such: each caller turns it into its documented result)."""


def deeper_than(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether containers (dicts, lists, tuples) nest more than `limit` levels deep in
    `value`, found level by level with no recursion (so any depth is safe to ask about)."""
    level = [value]
    for _ in range(limit):
        level = [
            child
            for node in level
            if isinstance(node, (dict, list, tuple))
            for child in (node.values() if isinstance(node, dict) else node)
        ]
        if not level:
            return False
    return any(isinstance(node, (dict, list, tuple)) for node in level)
