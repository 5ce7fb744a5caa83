"""Typing argument values by their parameter's schema (docs/policies.md, 'Schema coercion').

Markup dialects write every value as text; verbatim-JSON dialects write JSON whose strings
may stand for other types. Both are typed here, once, for every family, by the facts
`schemas.py` derives from the resolved schema. Nothing here raises: a value that cannot be
typed stays as written.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C

from .limits import MAX_DEPTH, deeper_than
from .schemas import (
    STRING_ONLY,
    ResolvedSchema,
    array_view,
    declared_types,
    json_type_of,
    object_view,
    resolve,
    schema_types,
)

__all__ = [
    "coerce_bare",
    "coerce_flagged_json",
    "coerce_json",
    "coerce_text",
    "decode_json_or_text",
    "json_text",
]

_MISSING = object()  # not parsed yet; no such property
_NOT_JSON = object()  # what `_decode_strict_json` gives for text that is not strict JSON


# --------------------------------------------------------------------------- reading text


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _no_constant(text: str) -> object:
    raise ValueError(f"{text} is not JSON")


# Built once: json.loads with hooks would build a decoder per call.
_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)


def _decode_strict_json(text: str) -> object:
    """The JSON value of `text`, or `_NOT_JSON`.

    Strict: NaN, Infinity and overflowing floats are not numbers a client can read.
    """
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError, TypeError):
        return _NOT_JSON


_MAX_LITERAL = 100_000  # longer text is not read as a Python literal (ast is not linear-cheap)


# a number run into a letter (`1if`, `1.else`; `1e5`, `0x1f` too, which do not warn):
# the tokenizer warns at a keyword right after a number (any letter is taken here)
_MAY_WARN = re.compile(r"[0-9]\.?(?:[^\W0-9]|[^\x00-\x7f])")


def parse_python(text: str) -> ast.Expression:
    """`text` parsed as one Python expression, quietly: `1abc` and an invalid escape such as
    `'\\/'` make the compiler warn (SyntaxWarning, or DeprecationWarning before Python
    3.12) on stderr before it reads or refuses them; a parser's input must not. Only a
    backslash or a number run into a letter can warn: text with neither (most values)
    is parsed without the filters, which cost more than the parse of a short value."""
    if "\\" not in text and _MAY_WARN.search(text) is None:
        return ast.parse(text, mode="eval")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text, mode="eval")


def _from_python(node: ast.AST, depth: int = 0) -> object:
    """A Python literal's value when it is made of JSON's values only (string keys, finite
    numbers), else `_NOT_JSON`. A walk of our own: `ast.literal_eval` leaves reference
    cycles (nested closures) behind on every call. Nodes nested past `MAX_DEPTH` (signs
    included) make no literal (runtime/limits.py)."""
    if depth > MAX_DEPTH:
        return _NOT_JSON
    kind = type(node)
    if kind is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float and math.isfinite(value):
            return value
        return _NOT_JSON
    if kind is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):  # type: ignore[attr-defined]
        value = _from_python(node.operand, depth + 1)  # type: ignore[attr-defined]
        if type(value) in (int, float):
            return -value if type(node.op) is ast.USub else value  # type: ignore[attr-defined,operator]
        return _NOT_JSON
    if kind is ast.List or kind is ast.Tuple:
        items = []
        for element in node.elts:  # type: ignore[attr-defined]
            value = _from_python(element, depth + 1)
            if value is _NOT_JSON:
                return _NOT_JSON
            items.append(value)
        return items
    if kind is ast.Dict:
        members: dict[str, object] = {}
        for key, element in zip(node.keys, node.values):  # type: ignore[attr-defined]
            if type(key) is not ast.Constant or type(key.value) is not str:
                return _NOT_JSON
            value = _from_python(element, depth + 1)
            if value is _NOT_JSON:
                return _NOT_JSON
            members[key.value] = value
        return members
    return _NOT_JSON


def _decode_container(text: str, room: int = MAX_DEPTH - 1) -> object:
    """An object or array the model wrote as strict JSON, as over-escaped JSON (`[{\\"a\\": 1}]`,
    a JSON string's body) or as a Python literal (`{'k': True}`, `('a', 'b')`), nesting at
    most `room` levels; else `_NOT_JSON` (deeper, it stays text: runtime/limits.py)."""
    parsed = _fits(_decode_strict_json(text), text, room)
    if isinstance(parsed, (dict, list)):
        return parsed
    if text[:1] not in "{[(":
        return _NOT_JSON
    if '\\"' in text:  # the body of a JSON string: decode it once more
        inner = _decode_strict_json('"' + text + '"')
        if isinstance(inner, str):
            parsed = _fits(_decode_strict_json(inner), inner, room)
            if isinstance(parsed, (dict, list)):
                return parsed
    if len(text) <= _MAX_LITERAL:
        try:
            tree = parse_python(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return _NOT_JSON
        parsed = _fits(_from_python(tree.body), text, room)
        if isinstance(parsed, (dict, list)):
            return parsed
    return _NOT_JSON


def _fits(value: object, text: str, room: int) -> object:
    """`value`, decoded from `text`, unless it nests deeper than `room` levels (then
    `_NOT_JSON`); counting the text's brackets settles most values without a walk."""
    if not isinstance(value, (dict, list)) or text.count("{") + text.count("[") <= room:
        return value
    return _NOT_JSON if deeper_than(value, room) else value


def _as_int(text: str) -> int | None:
    try:
        return int(text)  # whitespace, sign and '_' pass; "3.0", "1e3", "true" do not
    except (ValueError, TypeError):
        return None


def _as_number(text: str) -> int | float | None:
    value = _as_int(text)
    if value is not None:
        return value
    try:
        number = float(text)
    except (ValueError, TypeError):
        return None
    return number if math.isfinite(number) else None


# --------------------------------------------------------------------------- typing


def _type_text(
    text: str, node: ResolvedSchema, types: tuple[str, ...], quoted: bool = False, depth: int = 0
) -> object:
    """`text` as the first of `types` it reads as; else its JSON value (a JSON string's
    content typed once more), else itself. `depth`: the containers around the value inside
    the arguments, so that a container read from the text keeps the arguments within
    `MAX_DEPTH` (a deeper one stays text)."""
    container: object = _MISSING
    for t in types:
        if t == "null":
            if text.strip().lower() == "null":
                return None
        elif t == "integer":
            value = _as_int(text)
            if value is not None:
                return value
        elif t == "number":
            number = _as_number(text)
            if number is not None:
                return number
        elif t == "boolean":
            word = text.strip().lower()
            if word in ("true", "1"):
                return True
            if word in ("false", "0"):
                return False
        elif t == "object" or t == "array":
            if container is _MISSING:
                container = _decode_container(text.strip(), MAX_DEPTH - 1 - depth)
            if isinstance(container, dict if t == "object" else list):
                return _type_json(container, node, depth)
        else:  # string always fits
            return text
    parsed = _fits(_decode_strict_json(text), text, MAX_DEPTH - 1 - depth)
    if type(parsed) is str and not quoted:
        # a quoted value (`"7"` for a number): the schema decides what the quotes hold
        typed = _type_text(parsed, node, types, True, depth)  # type: ignore[arg-type]
        return parsed if type(typed) is str else typed
    return text if parsed is _NOT_JSON else parsed


def _type_json(value: object, node: ResolvedSchema, depth: int = 0) -> object:
    """`value` with its strings typed where `node` rules string out; itself when unchanged.
    `depth`: the containers around it; at `MAX_DEPTH` typing stops (deeper members stay as
    written: runtime/limits.py)."""
    json_type = json_type_of(value)
    if json_type is None:
        return value
    types = declared_types(node)
    if not types:
        return value  # nothing declared: kept as written, as streams_as_text promises
    if json_type == "string":
        if "string" in types:
            return value
        # a JSON string is the model's own value: its quotes are not read again
        typed = _type_text(value, node, types, True, depth)  # type: ignore[arg-type]
        return value if type(typed) is str and typed == value else typed
    if isinstance(value, dict):
        if "object" not in types or depth >= MAX_DEPTH:  # (checked where a walk goes down)
            return value
        props, extra = object_view(node)
        changed: dict[str, object] | None = None
        for name, item in value.items():
            sub = props.get(name, _MISSING)
            if sub is _MISSING:
                sub = extra
            if sub is None:
                continue
            typed = _type_json(item, sub, depth + 1)  # type: ignore[arg-type]
            if typed is not item:
                if changed is None:
                    changed = dict(value)
                changed[name] = typed
        return value if changed is None else changed
    if isinstance(value, list):
        if "array" not in types or depth >= MAX_DEPTH:
            return value
        prefix, rest = array_view(node)
        out: list[object] | None = None
        for index, item in enumerate(value):
            sub = prefix[index] if index < len(prefix) else rest
            if sub is None:
                continue
            typed = _type_json(item, sub, depth + 1)
            if typed is not item:
                if out is None:
                    out = list(value)
                out[index] = typed
        return value if out is None else out
    return value


# --------------------------------------------------------------------------- public API


def coerce_text(text: str, schema: dict | None, depth: int = 0) -> object:
    """A markup value (raw text) typed by `schema`, trying only the declared types, in the
    order of docs/policies.md, 'Schema coercion'.

    Falls back to JSON when no declared type fits, then to the text itself; never raises.
    `depth`: the containers around the value inside the arguments (an argument's own value
    is 0): a container read from the text keeps the arguments within `MAX_DEPTH` levels,
    or the value stays text (runtime/limits.py).
    """
    if not isinstance(text, str):
        return text
    node = resolve(schema)
    if node is None:
        return text
    try:
        types = declared_types(node)
        if not types or types == STRING_ONLY:
            return text
        return _type_text(text, node, types, False, depth)
    except Exception:  # a hostile schema (every walk here stops at MAX_DEPTH)
        return text


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORDS = {"true": True, "false": False, "null": None}


def coerce_bare(text: str, schema: dict | None, depth: int = 0) -> object:
    """A value written bare, outside any string delimiter (Gemma's `count:3`): typed by the
    schema like any markup value; with no declared type, a JSON number, `true`, `false` or
    `null` when it reads as one (a bare value in such syntax is not a string), else the text."""
    if not isinstance(text, str):
        return text
    node = resolve(schema)
    try:
        if node is not None and declared_types(node):
            return coerce_text(text, schema, depth)
    except Exception:
        return text
    word = text.strip()
    if word in _WORDS:
        return _WORDS[word]
    if _NUMBER.fullmatch(word):
        value = _decode_strict_json(word)
        if value is not _NOT_JSON:
            return value
    return text


def coerce_flagged_json(text: str, schema: dict | None) -> object:
    """A markup value flagged as JSON (DSML's `string="false"`): its JSON value, else its
    text, typed as a JSON value. A `null` where the schema declares types that do not admit
    null is the text as written: the flag was wrong (`null` for a string is "null")."""
    value = decode_json_or_text(text)
    if value is None:
        types = schema_types(schema)
        if types and "null" not in types:
            return coerce_text(text, schema)
    return coerce_json(value, schema)


def decode_object(text: str) -> dict | None:
    """The object a markup value writes, as strict JSON, over-escaped JSON or a Python dict
    literal (the readings of an object value above); None when it writes none."""
    value = _decode_container(text.strip())
    return value if isinstance(value, dict) else None


def decode_json_or_text(text: str) -> object:
    """A markup value flagged as JSON: its JSON value when it parses (and nests at most
    `MAX_DEPTH - 1` levels, inside the arguments), else the text."""
    value = _fits(_decode_strict_json(text.strip()), text, MAX_DEPTH - 1)
    return text if value is _NOT_JSON else value


def json_text(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False)`; the commonest typed values, strings and
    integers, skip the encoder's Python layers (the same C function, the same `repr`)."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)  # type: ignore[arg-type]
    if kind is int:
        return int.__repr__(value)  # type: ignore[arg-type]
    return json.dumps(value, ensure_ascii=False)


def coerce_json(value: object, schema: dict | None) -> object:
    """A JSON value the model wrote, with strings typed where the schema rules string out.

    Returns `value` itself when nothing changed (containers are copied only along a changed
    path), so callers can keep the model's own bytes; never raises.
    """
    node = resolve(schema)
    if node is None:
        return value
    try:
        return _type_json(value, node)
    except Exception:  # a hostile schema (every walk here stops at MAX_DEPTH)
        return value
