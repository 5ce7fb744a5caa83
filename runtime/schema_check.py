"""One clear warning for a tool whose parameters are not a schema typing can read.

The runtime never fails on a bad schema (`schemas.py` reads what it can and leaves the rest
untyped), but a junk `type` silently switches typing off for that value, so the user should
hear about it, naming the tool and the place. A tool is checked when a call to it is first
read, not when the parser is made: a request lists many tools and calls one or two. A cheap
walk over the keywords that decide typing finds the place; only then does `jsonschema` give
its exact message, worked out once per schema (by value) and place. Type spellings
`schemas.py` reads (`int`, `dict`, …) are not flagged, although JSON Schema does not know
them.
"""

from __future__ import annotations

import marshal
import sys
import warnings
from typing import Any

import jsonschema

from .limits import MAX_DEPTH

__all__ = ["ToolSchemaWarning", "is_suspect", "value_key", "warn_about_schema"]

_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_ONES = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
Crumbs = Any  # a node's place: None at the root, else (its key, its parent's crumbs)
# (first flagged path, the schema's value) -> message, bounded: keyed by the schema itself,
# never by the tool's name, as jsonschema's message quotes the schema's values (a second
# request's tool of the same name must not be told the first request's schema)
_FOUND: dict[tuple[str, bytes], str] = {}
_LIMIT = 256  # places remembered, and warnings the caller's module remembers as shown
# (the schema's value, the types read) -> its first flagged path or None, bounded the same
_SUSPECT: dict[tuple[bytes, frozenset[str]], str | None] = {}
_UNSEEN = object()


class ToolSchemaWarning(UserWarning):
    """A tool's `parameters` are not a valid JSON Schema; typing skips what it cannot read."""


def warn_about_schema(tool: str, schema: Any, types: frozenset[str], value: Any = _UNSEEN) -> None:
    """Warn once if the parameters of `tool` have a shape typing cannot read; `types` are
    the `type` values it reads (JSON Schema's and spellings like `int`). `value`: the
    schema's `value_key`, when the caller made it already."""
    if value is _UNSEEN:
        value = value_key(schema)
    path = _suspect_path(schema, types, value)
    if path is None:
        return
    message = None if value is None else _FOUND.get((path, value))
    if message is None:
        message = _explain(schema, path)
        if value is not None:  # a schema marshal refuses is explained every time
            if len(_FOUND) >= _LIMIT:
                _FOUND.clear()
            _FOUND[(path, value)] = message
    if len(message) > 300:  # a pointer into a very deep schema: its two ends say enough
        message = message[:150] + " … " + message[-150:]
    if message:
        warnings.warn(
            f"tool {tool!r}: parameters are not a valid JSON Schema: {message}; "
            "values it describes are not typed by it",
            ToolSchemaWarning,
            stacklevel=2,
        )
        _bound_shown(sys._getframe(1).f_globals)


def is_suspect(schema: Any, types: frozenset[str], value: Any = _UNSEEN) -> bool:
    """Whether `warn_about_schema` would warn about `schema`, asked without warning (`value`:
    its `value_key`, when the caller made it already). A parser must warn at its own first
    call of such a tool, so what it works out of one is not shared (`shared_memos.py`)."""
    if value is _UNSEEN:
        value = value_key(schema)
    return _suspect_path(schema, types, value) is not None


def _suspect_path(schema: Any, types: frozenset[str], value: bytes | None) -> str | None:
    """The first flagged place of `schema` (None: none), found once per schema value."""
    if value is None:  # (marshal refuses it: walked every time)
        return _first_suspect(schema, types)
    # walked once per schema value (a request's tools come back with every request)
    path = _SUSPECT.get((value, types), _UNSEEN)
    if path is _UNSEEN:
        path = _first_suspect(schema, types)
        if len(_SUSPECT) >= _LIMIT:
            _SUSPECT.clear()
        _SUSPECT[value, types] = path
    return path  # type: ignore[return-value]


def value_key(schema: Any) -> bytes | None:
    """What `schema` holds now, as bytes that tell apart every two values typing could read
    differently (`1`, `1.0` and `True` included, as `==` does not), or None for a schema
    of objects `marshal` refuses (a dict subclass, a custom object) or nested absurdly deep.

    A key by value, not by `id()`: a caller that changes a schema dict in place after its
    first use gets the new reading. `marshal` is C and about as fast as `repr` is slow
    (a few µs for a tool's parameters, once per tool per request); its bytes read back as
    the same value, so equal keys are equal schemas.
    """
    try:
        return marshal.dumps(schema)
    except (ValueError, RecursionError):
        return None


def _bound_shown(caller: dict[str, Any]) -> None:
    """Keep the `warnings` module's record of what was shown from the caller's module (the
    one `stacklevel=2` names) bounded: it holds every distinct message, and each names its
    tool, so a long-running server meeting ever new tools with bad schemas would grow it
    without end. Cleared when full: a warning may then be shown once more."""
    shown = caller.get("__warningregistry__")
    if isinstance(shown, dict) and len(shown) > _LIMIT:
        shown.clear()


def _first_suspect(schema: Any, types: frozenset[str]) -> str | None:
    """The JSON pointer of the first keyword whose shape typing cannot read, if any. Walked
    with a stack of its own (a schema may nest deeper than Python's recursion limit), each
    node's place kept as a link to its parent's and spelt out only for the one found."""
    stack: list[tuple[Any, Crumbs]] = [(schema, None)]
    while stack:
        node, crumbs = stack.pop()
        if node is None or isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return _pointer(crumbs) or "/"
        found = _bad_keyword(node, types)
        if found is not None:
            return _pointer(crumbs) + "/" + found
        children: list[tuple[Any, Crumbs]] = []
        for key in _SCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                children += [(c, (n, (key, crumbs))) for n, c in node[key].items()]
        for key in _SCHEMA_LISTS:
            if isinstance(node.get(key), list):
                children += [(c, (i, (key, crumbs))) for i, c in enumerate(node[key])]
        children += [(node[key], (key, crumbs)) for key in _SCHEMA_ONES if key in node]
        stack += reversed(children)  # the first child is looked at first
    return None


def _pointer(crumbs: Any) -> str:
    parts: list[str] = []
    while crumbs is not None:
        key, crumbs = crumbs
        parts.append(_escape(key))
    return "".join(f"/{part}" for part in reversed(parts))


def _bad_keyword(node: dict[str, Any], types: frozenset[str]) -> str | None:
    """The first keyword of this one node that has a shape typing cannot read."""
    kind = node.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not kinds or any(
            not isinstance(k, str) or k.strip().lower() not in types for k in kinds
        ):
            return "type"
    for key in _SCHEMA_MAPS:
        if key in node and not isinstance(node[key], dict):
            return key
    for key in _SCHEMA_LISTS:
        if key in node and (not isinstance(node[key], list) or not node[key]):
            return key
    required = node.get("required")
    if required is not None and (
        not isinstance(required, list) or not all(isinstance(r, str) for r in required)
    ):
        return "required"
    if "enum" in node and not isinstance(node["enum"], list):
        return "enum"
    return None


def _escape(name: object) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")


def _explain(schema: Any, path: str) -> str:
    """jsonschema's own words for the error at the flagged place (the schema checked against
    its metaschema); empty when jsonschema finds nothing wrong there (no warning)."""
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        for error in validator(validator.META_SCHEMA).iter_errors(schema):
            for leaf in [error, *_leaves(error)]:
                where = "".join(f"/{_escape(part)}" for part in leaf.absolute_path) or "/"
                if where == path:
                    return f"at {where}: {leaf.message}"
    except RecursionError:  # deeper than jsonschema goes: the walk's word stands
        return f"at {path}: not a shape a schema has there"
    return ""


def _leaves(error: Any, depth: int = 0) -> list[Any]:
    """The sub-errors of an `anyOf`-style error, deepest first; none below `MAX_DEPTH`
    levels of them (runtime/limits.py)."""
    found: list[Any] = []
    if depth >= MAX_DEPTH:
        return found
    for child in error.context or ():
        found += [*_leaves(child, depth + 1), child]
    return found
