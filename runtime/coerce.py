"""Typing argument values from the tools' JSON schemas (FAMILIES.md §0, "Coercion").

Markup dialects write every value as text; verbatim-JSON dialects write JSON whose strings
may stand for other types. Both are typed here, once, for every family.

Schemas come from users, so nothing here trusts them: junk, unresolvable or cyclic `$ref`s
and odd `type` values all degrade to "no schema" (the value stays as written) instead of
raising. `$ref`s are resolved up front with `referencing` into a graph of `_Schema` nodes
(cyclic when the schema is recursive), and the facts the hot path asks for (declared types,
property and item schemas) are cached on those nodes.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from referencing import Registry
from referencing.jsonschema import DRAFT202012, specification_with

if TYPE_CHECKING:  # referencing does not export its Resolver class
    from referencing._core import Resolver

__all__ = ["ToolSchemas", "coerce_json", "coerce_text", "streams_as_text"]

# Type names as users write them -> JSON Schema type (FAMILIES.md §0 aliases).
_ALIASES: dict[str, str] = {
    "null": "null",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "object": "object",
    "dict": "object",
    "array": "array",
    "list": "array",
    "string": "string",
    "str": "string",
    "text": "string",
    "enum": "string",
}
# The order in which declared types are tried on a markup value.
_ORDER: tuple[str, ...] = ("null", "integer", "number", "boolean", "object", "array", "string")
_STRING_ONLY: tuple[str, ...] = ("string",)
# Keywords beside a `$ref` that say nothing about the value's type.
_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
        "$anchor",
        "$defs",
        "definitions",
    }
)
# Subschema lists that union (anyOf/oneOf) or intersect (allOf) their members.
_COMBINATORS: tuple[str, ...] = ("allOf", "anyOf", "oneOf")
# Keywords whose presence implies the type when none is declared.
_OBJECT_KEYWORDS: tuple[str, ...] = ("properties", "additionalProperties")
_ARRAY_KEYWORDS: tuple[str, ...] = ("items", "prefixItems")
# ToolSchemas remembers this many tools: a model may name any number of unknown ones.
_CACHE_LIMIT = 4096

_MISSING = object()
_IN_PROGRESS = object()
_FAIL = object()


class _Schema(dict):
    """A schema node with its `$ref`s replaced by the nodes they point to.

    A plain dict for readers; the slots cache what the hot path derives from it.
    Shared and cached: callers must not mutate it.
    """

    __slots__ = ("_types", "_obj", "_arr")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._types: tuple[str, ...] | None = None
        self._obj: tuple[dict[str, _Schema | None], _Schema | None] | None = None
        self._arr: tuple[list[_Schema | None], _Schema | None] | None = None


# --------------------------------------------------------------------------- $ref resolution


class _Compiler:
    """Turns one root schema into a `_Schema` graph, resolving `$ref`s against that root.

    Nodes are memoised by the identity of the raw dict, so a recursive schema becomes a
    cyclic graph (finite) and a pure `$ref` loop (A -> B -> A) becomes "no schema".
    """

    __slots__ = ("memo", "spec", "root")

    def __init__(self, spec: object, root: dict) -> None:
        self.memo: dict[int, object] = {}
        self.spec = spec
        self.root = root

    def node(self, raw: object, resolver: Resolver) -> _Schema | None:
        if not isinstance(raw, dict):
            return None  # boolean schemas and junk carry no type
        key = id(raw)
        hit = self.memo.get(key, _MISSING)
        if hit is _IN_PROGRESS:
            return None  # a $ref loop with nothing in it
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        resolver = self._enter(raw, resolver)
        ref = raw.get("$ref")
        if not isinstance(ref, str):
            out = _Schema()
            self.memo[key] = out  # before filling: recursive schemas point back here
            self._fill(out, raw, resolver)
            return out
        self.memo[key] = _IN_PROGRESS
        try:
            resolved = resolver.lookup(ref)
            target = self.node(resolved.contents, resolved.resolver)
        except Exception:  # unresolvable, remote, junk pointer: no schema
            target = self.node(self._anchor(ref), resolver)
        rest = {k: v for k, v in raw.items() if k != "$ref" and k not in _ANNOTATIONS}
        joined: _Schema | None
        if not rest:
            joined = target
        else:
            # Keywords beside the $ref also apply: the target joins them as an allOf member,
            # by reference, so a target still being filled (recursion) stays correct.
            joined = _Schema()
            self._fill(joined, rest, resolver)
            if target is not None:
                joined["allOf"] = [target, *joined.get("allOf", ())]
        self.memo[key] = joined
        return joined

    def _anchor(self, ref: str) -> dict | None:
        """`#name` found by hand: referencing crawls the whole document for anchors, and one
        junk subschema anywhere (`"x": 42`) makes that crawl fail."""
        if not ref.startswith("#") or ref.startswith("#/") or len(ref) < 2:
            return None
        name = ref[1:]
        stack: list[object] = [self.root]
        while stack:
            current = stack.pop()
            if isinstance(current, dict):
                if current.get("$anchor") == name or current.get("$dynamicAnchor") == name:
                    return current
                stack.extend(current.values())
            elif isinstance(current, list):
                stack.extend(current)
        return None

    def _enter(self, raw: dict, resolver: Resolver) -> Resolver:
        """A subschema with its own `$id` moves the base URI for the refs inside it."""
        try:
            if self.spec.id_of(raw):  # type: ignore[attr-defined]
                return resolver.in_subresource(self.spec.create_resource(raw))  # type: ignore[attr-defined]
        except Exception:
            pass
        return resolver

    def _fill(self, out: _Schema, raw: dict, resolver: Resolver) -> None:
        node = self.node
        for k, v in raw.items():
            if k == "$ref" or k == "$defs" or k == "definitions":
                continue  # resolved on demand; dropped from the graph
            if k == "properties":
                out[k] = {n: node(s, resolver) for n, s in v.items()} if isinstance(v, dict) else v
            elif k in ("additionalProperties", "additionalItems"):
                out[k] = node(v, resolver) if isinstance(v, dict) else v
            elif k == "items":
                if isinstance(v, dict):
                    out[k] = node(v, resolver)
                elif isinstance(v, list):  # draft-04 tuple form
                    out[k] = [node(s, resolver) for s in v]
                else:
                    out[k] = v
            elif k == "prefixItems":
                out[k] = [node(s, resolver) for s in v] if isinstance(v, list) else v
            elif k in _COMBINATORS:
                if isinstance(v, list):
                    out[k] = [m for m in (node(s, resolver) for s in v) if m is not None]
            else:
                out[k] = v


def _compile(root: object) -> _Schema | None:
    """The `_Schema` graph of `root`, itself the resource its `$ref`s resolve against."""
    if not isinstance(root, dict):
        return None
    try:
        dialect = root.get("$schema")
        spec = (
            specification_with(dialect, default=DRAFT202012)
            if isinstance(dialect, str)
            else DRAFT202012
        )
        resource = spec.create_resource(root)
        try:
            uri = resource.id()
        except Exception:
            uri = None
        uri = uri if isinstance(uri, str) else ""
        resolver = Registry().with_resource(uri, resource).resolver(base_uri=uri)
        return _Compiler(spec, root).node(root, resolver)
    except Exception:  # absurdly deep (RecursionError) or broken: no schema
        return None


_ROOTS: dict[int, tuple[dict, _Schema | None]] = {}


def _root(schema: object) -> _Schema | None:
    """`schema` as a graph node: already one, or a raw dict compiled once (cached by identity).

    The cache holds the raw dict, so its id cannot be reused while cached; a raw dict
    mutated after its first use keeps its first reading.
    """
    if isinstance(schema, _Schema):
        return schema
    if not isinstance(schema, dict):
        return None
    hit = _ROOTS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    node = _compile(schema)
    if len(_ROOTS) >= 512:
        _ROOTS.clear()
    _ROOTS[id(schema)] = (schema, node)
    return node


# --------------------------------------------------------------------------- schema facts


def _json_type(value: object) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return None


def _collect_types(node: _Schema, seen: set[int]) -> set[str] | None:
    """The JSON types a node declares: `type`, else enum/const, else what its structure
    implies (`properties` -> object, `items` -> array) joined with its anyOf/oneOf members,
    else the first allOf member that declares a type.

    None means the node declares nothing (any value, kept as written); a union with such a
    member is itself unconstrained. A node met again through a cycle adds nothing (empty set).
    """
    if id(node) in seen:
        return set()
    seen.add(id(node))
    out: set[str] = set()
    declared = node.get("type")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list):
        for name in declared:
            if isinstance(name, str):
                alias = _ALIASES.get(name.strip().lower())
                if alias:
                    out.add(alias)
    if not out:
        values = list(node["enum"]) if isinstance(node.get("enum"), list) else []
        if "const" in node:
            values.append(node["const"])
        out = {t for t in map(_json_type, values) if t is not None}
    if not out:
        if any(isinstance(node.get(k), dict) for k in _OBJECT_KEYWORDS):
            out.add("object")
        if any(isinstance(node.get(k), (list, dict)) for k in _ARRAY_KEYWORDS):
            out.add("array")
        union: set[str] | None = set()
        for comb in ("anyOf", "oneOf"):
            members = node.get(comb)
            for member in members if isinstance(members, list) else ():
                found = _collect_types(member, seen)
                if found is None or union is None:
                    union = None
                    break
                union |= found
            if union is None:
                break
        if union is None and not out:
            return None
        out |= union or set()
    if not out:
        members = node.get("allOf")
        for member in members if isinstance(members, list) else ():
            found = _collect_types(member, seen)  # naive merge: the first that declares a type
            if found:
                out = found
                break
    if not out:
        return None
    if node.get("nullable") is True:
        out.add("null")
    return out


def _types(node: _Schema) -> tuple[str, ...]:
    """The node's declared types in trial order; () when it declares none (no schema)."""
    types = node._types
    if types is None:
        found = _collect_types(node, set()) or ()
        types = node._types = tuple(t for t in _ORDER if t in found)
    return types


def _admits(node: _Schema, json_type: str) -> bool:
    types = _types(node)
    return not types or json_type in types


def _walk_members(node: _Schema, json_type: str, visit: Callable[[_Schema], None]) -> None:
    """Visit `node`, then its combinator members (depth first) that admit `json_type`."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        visit(current)
        members = []
        for comb in _COMBINATORS:
            listed = current.get(comb)
            if isinstance(listed, list):
                members += [m for m in listed if isinstance(m, _Schema) and _admits(m, json_type)]
        stack.extend(reversed(members))


def _object_view(node: _Schema) -> tuple[dict[str, _Schema | None], _Schema | None]:
    """Property schemas merged over the node and its members (first wins), and the extra-key schema."""
    view = node._obj
    if view is None:
        props: dict[str, _Schema | None] = {}
        extra: list[_Schema] = []

        def visit(current: _Schema) -> None:
            own = current.get("properties")
            if isinstance(own, dict):
                for name, sub in own.items():
                    props.setdefault(name, sub)
            more = current.get("additionalProperties")
            if not extra and isinstance(more, _Schema):
                extra.append(more)

        _walk_members(node, "object", visit)
        view = node._obj = (props, extra[0] if extra else None)
    return view


def _array_view(node: _Schema) -> tuple[list[_Schema | None], _Schema | None]:
    """Positional item schemas (prefixItems / draft-04 tuple items) and the schema of the rest."""
    view = node._arr
    if view is None:
        prefix: list[list[_Schema | None]] = []
        rest: list[_Schema] = []

        def visit(current: _Schema) -> None:
            items = current.get("items")
            positional = current.get("prefixItems")
            if not prefix:
                if isinstance(positional, list):
                    prefix.append(positional)
                elif isinstance(items, list):
                    prefix.append(items)
            if not rest:
                if isinstance(items, _Schema):
                    rest.append(items)
                elif isinstance(items, list) and isinstance(
                    current.get("additionalItems"), _Schema
                ):
                    rest.append(current["additionalItems"])

        _walk_members(node, "array", visit)
        view = node._arr = (prefix[0] if prefix else [], rest[0] if rest else None)
    return view


# --------------------------------------------------------------------------- text values


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _no_constant(text: str) -> object:
    raise ValueError(f"{text} is not JSON")


# Built once: json.loads with hooks would build a decoder per call.
_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)


def _loads(text: str) -> object:
    """Strict JSON: NaN, Infinity and overflowing floats are not numbers a client can read."""
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError, TypeError):
        return _FAIL


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


def _type_text(text: str, node: _Schema, types: tuple[str, ...]) -> object:
    parsed: object = _MISSING
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
            if parsed is _MISSING:
                parsed = _loads(text.strip())
            if isinstance(parsed, dict if t == "object" else list):
                return _type_json(parsed, node)
        else:  # string always fits
            return text
    if parsed is _MISSING:
        parsed = _loads(text)
    return text if parsed is _FAIL else parsed


def _type_json(value: object, node: _Schema) -> object:
    json_type = _json_type(value)
    if json_type is None:
        return value
    types = _types(node)
    if not types:
        return value  # nothing declared: kept as written, as streams_as_text promises
    if json_type == "string":
        if "string" in types:
            return value
        typed = _type_text(value, node, types)  # type: ignore[arg-type]
        return value if type(typed) is str and typed == value else typed
    if isinstance(value, dict):
        if "object" not in types:
            return value
        props, extra = _object_view(node)
        changed: dict[str, object] | None = None
        for name, item in value.items():
            sub = props.get(name, _MISSING)
            if sub is _MISSING:
                sub = extra
            if sub is None:
                continue
            typed = _type_json(item, sub)  # type: ignore[arg-type]
            if typed is not item:
                if changed is None:
                    changed = dict(value)
                changed[name] = typed
        return value if changed is None else changed
    if isinstance(value, list):
        if "array" not in types:
            return value
        prefix, rest = _array_view(node)
        out: list[object] | None = None
        for index, item in enumerate(value):
            sub = prefix[index] if index < len(prefix) else rest
            if sub is None:
                continue
            typed = _type_json(item, sub)
            if typed is not item:
                if out is None:
                    out = list(value)
                out[index] = typed
        return value if out is None else out
    return value


# --------------------------------------------------------------------------- public API


class ToolSchemas:
    """The request's tools, indexed for argument typing."""

    __slots__ = ("_given", "_params", "_roots", "_props", "_typed")

    def __init__(self, tools: list[dict] | None) -> None:
        self._given = tools is not None
        self._params: dict[str, object] = {}
        self._roots: dict[str, _Schema | None] = {}
        self._props: dict[str, dict[str, _Schema]] = {}
        self._typed: dict[str, frozenset[str]] = {}
        if tools is None:
            return
        if not isinstance(tools, (list, tuple)):
            raise ValueError(f"tools must be a list, not {type(tools).__name__}")
        for index, entry in enumerate(tools):
            function = self._function(index, entry)
            name = function.get("name")
            if not isinstance(name, str) or not name:
                raise ValueError(f"tools[{index}] has no function name")
            self._params.setdefault(name, function.get("parameters"))  # first definition wins

    @staticmethod
    def _function(index: int, entry: object) -> dict:
        """The function dict of one entry: OpenAI-wrapped, untyped, bare, or `{type: T, T: {...}}`."""
        if not isinstance(entry, dict):
            raise ValueError(f"tools[{index}] is not an object (got {type(entry).__name__})")
        if "function" in entry:
            function = entry["function"]
            if not isinstance(function, dict):
                raise ValueError(f"tools[{index}].function is not an object")
            return function
        kind = entry.get("type")
        if "name" not in entry and isinstance(kind, str) and isinstance(entry.get(kind), dict):
            return entry[kind]  # e.g. {"type": "custom", "custom": {"name": ...}}
        return entry

    @property
    def given(self) -> bool:
        """Whether the request passed a tools list (even an empty one)."""
        return self._given

    def known(self, name: str) -> bool:
        """Whether a call to `name` is to a requested tool; anything goes when none were given."""
        try:
            return not self._given or name in self._params
        except TypeError:  # unhashable junk
            return False

    def param_schema(self, tool: str, key: str) -> dict | None:
        """The resolved schema of top-level property `key` of `tool`, or None when there is none.

        Shared and cached (the hot path asks once per parameter): do not mutate it.
        """
        try:
            props = self._props[tool]
        except KeyError:
            props = self._properties(tool)
        except TypeError:  # unhashable junk
            return None
        try:
            return props.get(key)
        except TypeError:
            return None

    def _properties(self, tool: str) -> dict[str, _Schema]:
        """The top-level property schemas of `tool`, merged over its combinators (cached)."""
        props: dict[str, _Schema] = {}
        root = self._root(tool)
        if root is not None:
            try:
                props = {
                    key: sub
                    for key, sub in _object_view(root)[0].items()
                    if isinstance(sub, _Schema)
                }
            except Exception:  # RecursionError on an absurd schema: no schema
                props = {}
        if len(self._props) < _CACHE_LIMIT:  # a model inventing tool names is not remembered
            self._props[tool] = props
        return props

    def typed_keys(self, tool: str) -> frozenset[str]:
        """The top-level properties of `tool` that are typed rather than kept as text.

        Every other key has no schema or a string-only one (`param_schema` reads only
        `properties`), so a whole arguments object needs typing only where these appear.
        """
        try:
            return self._typed[tool]
        except KeyError:
            pass
        except TypeError:
            return frozenset()
        props = self._props.get(tool)
        if props is None:
            props = self._properties(tool)
        keys = frozenset(key for key, sub in props.items() if not streams_as_text(sub))
        self._typed[tool] = keys
        return keys

    def _root(self, tool: str) -> _Schema | None:
        try:
            return self._roots[tool]
        except KeyError:
            pass
        except TypeError:
            return None
        root = _root(self._params.get(tool))  # shared while the same dict is passed again
        self._roots[tool] = root
        return root


def streams_as_text(schema: dict | None) -> bool:
    """Whether a markup value for `schema` is kept as raw text, so it can stream as it comes.

    True when only strings are possible (or nothing is declared); False when the value is
    typed only once complete.
    """
    node = _root(schema)
    if node is None:
        return True
    try:
        types = _types(node)
    except Exception:  # RecursionError: treated as no schema, as coerce_text does
        return True
    return not types or types == _STRING_ONLY


def coerce_text(text: str, schema: dict | None) -> object:
    """A markup value (raw text) typed by `schema`, trying only the declared types in §0 order.

    Falls back to JSON when no declared type fits, then to the text itself; never raises.
    """
    if not isinstance(text, str):
        return text
    node = _root(schema)
    if node is None:
        return text
    try:
        types = _types(node)
        if not types or types == _STRING_ONLY:
            return text
        return _type_text(text, node, types)
    except Exception:  # RecursionError on deep JSON, or a hostile schema
        return text


def schema_types(schema: dict | None) -> tuple[str, ...]:
    """The JSON types `schema` declares, in trial order; () when it declares none."""
    node = _root(schema)
    if node is None:
        return ()
    try:
        return _types(node)
    except Exception:  # RecursionError on an absurd schema: no schema
        return ()


def property_schema(schema: dict | None, key: str) -> dict | None:
    """The schema of property `key` of an object `schema` (or its extra-key schema)."""
    node = _root(schema)
    if node is None:
        return None
    try:
        props, extra = _object_view(node)
    except Exception:
        return None
    found = props.get(key, extra)
    return found if isinstance(found, _Schema) else None


def item_schema(schema: dict | None, index: int) -> dict | None:
    """The schema of item `index` of an array `schema`."""
    node = _root(schema)
    if node is None:
        return None
    try:
        prefix, rest = _array_view(node)
    except Exception:
        return None
    found = prefix[index] if index < len(prefix) else rest
    return found if isinstance(found, _Schema) else None


def decode_json_or_text(text: str) -> object:
    """A markup value flagged as JSON: its JSON value when it parses, else the text."""
    value = _loads(text.strip())
    return text if value is _FAIL else value


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
    node = _root(schema)
    if node is None:
        return value
    try:
        return _type_json(value, node)
    except Exception:  # RecursionError on deep JSON, or a hostile schema
        return value
