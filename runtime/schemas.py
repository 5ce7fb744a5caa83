"""The request's tool schemas, resolved and indexed (docs/policies.md, 'Schema coercion').

Schemas come from users, so nothing here trusts them: junk, unresolvable or cyclic `$ref`s
and odd `type` values all degrade to "no schema" (the value stays as written) instead of
raising. `$ref`s are resolved up front with `referencing` into a graph of `ResolvedSchema`
nodes (cyclic when the schema is recursive), and the facts the hot path asks for (declared
types, property and item schemas) are cached on those nodes. `coerce.py` types values by them.
"""

from __future__ import annotations

import marshal
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING

from referencing import Registry, Specification
from referencing.jsonschema import DRAFT202012, specification_with

from .limits import MAX_DEPTH
from .schema_check import value_key as _value_key
from .schema_check import warn_about_schema

if TYPE_CHECKING:  # type hints only: referencing does not export its Resolver class
    from referencing._core import Resolver

__all__ = [
    "STRING_ONLY",
    "ResolvedSchema",
    "ToolSchemas",
    "array_view",
    "declared_types",
    "item_schema",
    "json_type_of",
    "object_view",
    "property_schema",
    "resolve",
    "schema_types",
    "streams_as_text",
]

# Type names as users write them -> JSON Schema type (docs/policies.md, 'Schema coercion').
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
TYPE_SPELLINGS = frozenset(_ALIASES)  # every `type` value typing reads
# The order in which declared types are tried on a markup value.
_ORDER: tuple[str, ...] = ("null", "integer", "number", "boolean", "object", "array", "string")
# What `declared_types` gives for a value that can only be a string (kept as text).
STRING_ONLY: tuple[str, ...] = ("string",)
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


class ResolvedSchema(dict):
    """A schema node with its `$ref`s replaced by the nodes they point to.

    A plain dict for readers; the slots cache what the hot path derives from it.
    Shared and cached: callers must not mutate it.
    """

    __slots__ = ("_types", "_obj", "_arr", "_top")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._types: tuple[str, ...] | None = None
        # a tool's root: its top-level property schemas and the typed ones among them
        # (`ToolSchemas`), made once per schema value, not once per request
        self._top: tuple[dict[str, ResolvedSchema], frozenset[str]] | None = None
        self._obj: tuple[dict[str, ResolvedSchema | None], ResolvedSchema | None] | None = None
        self._arr: tuple[list[ResolvedSchema | None], ResolvedSchema | None] | None = None


# --------------------------------------------------------------------------- $ref resolution


class _Compiler:
    """Turns one root schema into a `ResolvedSchema` graph, resolving `$ref`s against that root.

    Nodes are memoised by the identity of the raw dict, so a recursive schema becomes a
    cyclic graph (finite) and a pure `$ref` loop (A -> B -> A) becomes "no schema". A
    subschema more than `MAX_DEPTH` levels below the root (each `$ref` followed counting one)
    is no schema either: values there stay as written (runtime/limits.py).
    """

    __slots__ = ("memo", "spec", "root")

    def __init__(self, spec: Specification, root: dict) -> None:
        self.memo: dict[int, object] = {}
        self.spec = spec
        self.root = root

    def node(self, raw: object, resolver: Resolver, depth: int = 0) -> ResolvedSchema | None:
        if not isinstance(raw, dict) or depth > MAX_DEPTH:
            return None  # boolean schemas and junk carry no type; nor does one too deep
        key = id(raw)
        hit = self.memo.get(key, _MISSING)
        if hit is _IN_PROGRESS:
            return None  # a $ref loop with nothing in it
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        resolver = self._enter(raw, resolver)
        ref = raw.get("$ref")
        if not isinstance(ref, str):
            out = ResolvedSchema()
            self.memo[key] = out  # before filling: recursive schemas point back here
            self._fill(out, raw, resolver, depth)
            return out
        self.memo[key] = _IN_PROGRESS
        try:
            resolved = resolver.lookup(ref)
            target = self.node(resolved.contents, resolved.resolver, depth + 1)
        except Exception:  # unresolvable, remote, junk pointer: no schema
            target = self.node(self._anchor(ref), resolver, depth + 1)
        rest = {k: v for k, v in raw.items() if k != "$ref" and k not in _ANNOTATIONS}
        joined: ResolvedSchema | None
        if not rest:
            joined = target
        else:
            # Keywords beside the $ref also apply: the target joins them as an allOf member,
            # by reference, so a target still being filled (recursion) stays correct.
            joined = ResolvedSchema()
            self._fill(joined, rest, resolver, depth)
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
            if self.spec.id_of(raw):
                return resolver.in_subresource(self.spec.create_resource(raw))
        except Exception:
            pass
        return resolver

    def _fill(self, out: ResolvedSchema, raw: dict, resolver: Resolver, depth: int) -> None:
        """`out` made of `raw`'s keywords, its subschemas `depth + 1` levels deep."""

        def node(sub: object, resolver: Resolver) -> ResolvedSchema | None:
            return self.node(sub, resolver, depth + 1)

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


def _compile(root: object) -> ResolvedSchema | None:
    """The `ResolvedSchema` graph of `root`, itself the resource its `$ref`s resolve against."""
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


# Raw schemas already compiled, by value (`_value_key`), the most recently used last.
_ROOTS: dict[bytes, ResolvedSchema | None] = {}
_ROOTS_LIMIT = 512  # a server rotating more distinct schemas compiles the older ones again


def resolve(schema: object) -> ResolvedSchema | None:
    """`schema` as a graph node: already one, or a raw dict compiled once per value (the
    cache is bounded, least recently used out first); None when it is no usable schema.

    The graph is compiled from a private copy (the value the key holds), so a caller that
    mutates its dict later changes neither the cached graph nor what the old value reads.
    A schema `_value_key` cannot key is compiled every time it is asked for.
    """
    if isinstance(schema, ResolvedSchema):
        return schema
    if not isinstance(schema, dict):
        return None
    return _resolve_keyed(schema, _value_key(schema))


def _resolve_keyed(schema: dict, key: bytes | None) -> ResolvedSchema | None:
    """`resolve` of a raw dict whose `_value_key` the caller already made."""
    if key is None:
        return _compile(schema)
    node = _ROOTS.pop(key, _MISSING)
    if node is _MISSING:
        node = _compile(marshal.loads(key))
        if len(_ROOTS) >= _ROOTS_LIMIT:
            del _ROOTS[next(iter(_ROOTS))]
    _ROOTS[key] = node  # (re)inserted last: the most recently used
    return node  # type: ignore[return-value]


# --------------------------------------------------------------------------- schema facts


def json_type_of(value: object) -> str | None:
    """The JSON type of a decoded value; None for what JSON has no type for."""
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


def _intersect(members: list[set[str]]) -> set[str]:
    """The types every `allOf` member admits (an integer is also a number): `[string|null,
    string]` is string. Empty when they share none (a schema no value meets)."""
    widened = [m | {"integer"} if "number" in m else m for m in members]
    common = set.intersection(*widened)
    if "integer" in common and "number" in common and not all("number" in m for m in members):
        common.discard("number")
    return common


def _collect_types(
    node: ResolvedSchema,
    seen: set[int],
    memo: dict[int, set[str] | None] | None = None,
    depth: int = 0,
) -> set[str] | None:
    """The JSON types a node declares: `type`, else enum/const, else what its structure
    implies (`properties` -> object, `items` -> array) joined with its anyOf/oneOf members,
    else the types its allOf members that declare one all admit (the first one's when
    they share none).

    None means the node declares nothing (any value, kept as written); a union with such a
    member is itself unconstrained. A node met again through a cycle adds nothing (empty set);
    a node met again on another path (a shared `$defs` entry) gives what it gave the first
    time, from `memo`, so the walk stays linear in the schema's size. Members nested more
    than `MAX_DEPTH` combinators deep declare nothing (None), and are not looked into.
    """
    if depth > MAX_DEPTH:
        return None
    memo = {} if memo is None else memo
    key = id(node)
    if key in memo:
        found = memo[key]
        return None if found is None else set(found)
    if key in seen:
        return set()
    seen.add(key)
    found = _node_types(node, seen, memo, depth)
    memo[key] = None if found is None else frozenset(found)  # type: ignore[assignment]
    return found


def _node_types(
    node: ResolvedSchema, seen: set[int], memo: dict[int, set[str] | None], depth: int
) -> set[str] | None:
    """`_collect_types` of one node met for the first time."""
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
        out = {t for t in map(json_type_of, values) if t is not None}
    if not out:
        if any(isinstance(node.get(k), dict) for k in _OBJECT_KEYWORDS):
            out.add("object")
        if any(isinstance(node.get(k), (list, dict)) for k in _ARRAY_KEYWORDS):
            out.add("array")
        union: set[str] | None = set()
        for comb in ("anyOf", "oneOf"):
            members = node.get(comb)
            for member in members if isinstance(members, list) else ():
                found = _collect_types(member, seen, memo, depth + 1)
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
        declaring = [
            found
            for member in (members if isinstance(members, list) else ())
            if (found := _collect_types(member, seen, memo, depth + 1))
        ]
        if declaring:
            out = _intersect(declaring) or declaring[0]
    if not out:
        return None
    if node.get("nullable") is True:
        out.add("null")
    return out


def declared_types(node: ResolvedSchema) -> tuple[str, ...]:
    """The node's declared types in trial order; () when it declares none (no schema).

    Cached on the node. May raise RecursionError on an absurd schema, as may the views
    below: callers guard their whole typing once; `schema_types` is the guarded form.
    """
    types = node._types
    if types is None:
        found = _collect_types(node, set()) or ()
        types = node._types = tuple(t for t in _ORDER if t in found)
    return types


def _admits(node: ResolvedSchema, json_type: str) -> bool:
    types = declared_types(node)
    return not types or json_type in types


def _walk_members(
    node: ResolvedSchema, json_type: str, visit: Callable[[ResolvedSchema], None]
) -> None:
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
                members += [
                    m for m in listed if isinstance(m, ResolvedSchema) and _admits(m, json_type)
                ]
        stack.extend(reversed(members))


def object_view(
    node: ResolvedSchema,
) -> tuple[dict[str, ResolvedSchema | None], ResolvedSchema | None]:
    """Property schemas merged over the node and its members (first wins), and the schema of
    any other key; cached on the node."""
    view = node._obj
    if view is None:
        props: dict[str, ResolvedSchema | None] = {}
        extra: list[ResolvedSchema] = []

        def visit(current: ResolvedSchema) -> None:
            own = current.get("properties")
            if isinstance(own, dict):
                for name, sub in own.items():
                    props.setdefault(name, sub)
            more = current.get("additionalProperties")
            if not extra and isinstance(more, ResolvedSchema):
                extra.append(more)

        _walk_members(node, "object", visit)
        view = node._obj = (props, extra[0] if extra else None)
    return view


def array_view(node: ResolvedSchema) -> tuple[list[ResolvedSchema | None], ResolvedSchema | None]:
    """Positional item schemas (prefixItems / draft-04 tuple items) and the schema of the rest;
    cached on the node."""
    view = node._arr
    if view is None:
        prefix: list[list[ResolvedSchema | None]] = []
        rest: list[ResolvedSchema] = []

        def visit(current: ResolvedSchema) -> None:
            items = current.get("items")
            positional = current.get("prefixItems")
            if not prefix:
                if isinstance(positional, list):
                    prefix.append(positional)
                elif isinstance(items, list):
                    prefix.append(items)
            if not rest:
                if isinstance(items, ResolvedSchema):
                    rest.append(items)
                elif isinstance(items, list) and isinstance(
                    current.get("additionalItems"), ResolvedSchema
                ):
                    rest.append(current["additionalItems"])

        _walk_members(node, "array", visit)
        view = node._arr = (prefix[0] if prefix else [], rest[0] if rest else None)
    return view


# --------------------------------------------------------------------------- any schema, guarded


def streams_as_text(schema: dict | None) -> bool:
    """Whether a markup value for `schema` is kept as raw text, so it can stream as it comes.

    True when only strings are possible (or nothing is declared); False when the value is
    typed only once complete.
    """
    node = resolve(schema)
    if node is None:
        return True
    try:
        types = declared_types(node)
    except Exception:  # RecursionError: treated as no schema, as coerce_text does
        return True
    return not types or types == STRING_ONLY


def schema_types(schema: dict | None) -> tuple[str, ...]:
    """The JSON types `schema` declares, in trial order; () when it declares none."""
    node = resolve(schema)
    if node is None:
        return ()
    try:
        return declared_types(node)
    except Exception:  # RecursionError on an absurd schema: no schema
        return ()


def property_schema(schema: dict | None, key: str) -> dict | None:
    """The schema of property `key` of an object `schema` (or its extra-key schema)."""
    node = resolve(schema)
    if node is None:
        return None
    try:
        props, extra = object_view(node)
    except Exception:
        return None
    found = props.get(key, extra)
    return found if isinstance(found, ResolvedSchema) else None


def item_schema(schema: dict | None, index: int) -> dict | None:
    """The schema of item `index` of an array `schema`."""
    node = resolve(schema)
    if node is None:
        return None
    try:
        prefix, rest = array_view(node)
    except Exception:
        return None
    found = prefix[index] if index < len(prefix) else rest
    return found if isinstance(found, ResolvedSchema) else None


# --------------------------------------------------------------------------- the tools


class ToolSchemas:
    """The request's tools, indexed for argument typing."""

    __slots__ = ("_given", "_params", "_roots", "_props", "_typed", "_sorted")

    def __init__(self, tools: list[dict] | None) -> None:
        self._given = tools is not None
        self._params: dict[str, object] = {}
        self._roots: dict[str, ResolvedSchema | None] = {}
        self._props: dict[str, dict[str, ResolvedSchema]] = {}
        self._typed: dict[str, frozenset[str]] = {}
        self._sorted: list[str] | None = None  # the names in order, made on first use
        if tools is None:
            return
        if not isinstance(tools, (list, tuple)):
            raise ValueError(f"tools must be a list, not {type(tools).__name__}")
        params = self._params
        for index, entry in enumerate(tools):
            # the common shape first, `{"type": "function", "function": {"name": …}}`, read
            # as `_function` reads it; any other shape, and every error, is `_function`'s
            function = entry.get("function") if type(entry) is dict else None
            if type(function) is not dict:
                function = self._function(index, entry)
            name = function.get("name")
            if type(name) is not str or not name:
                if not isinstance(name, str) or not name:
                    raise ValueError(f"tools[{index}] has no function name")
            if name not in params:  # first definition wins
                params[name] = function.get("parameters")

    @staticmethod
    def _function(index: int, entry: object) -> dict:
        """One entry's function dict: OpenAI-wrapped, untyped, bare, or `{type: T, T: {...}}`."""
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

    def has_tools(self) -> bool:
        """Whether the request named at least one tool."""
        return bool(self._params)

    def requested(self, name: str) -> bool:
        """Whether the request lists a tool called `name` (never when no tools were given)."""
        try:
            return self._given and name in self._params
        except TypeError:  # unhashable junk
            return False

    def may_be_requested(self, text: str) -> bool:
        """Whether `text` is the start of the name of a tool the request lists.

        Asked at every character of a name still arriving: a bisection in the sorted names
        (the names that start with `text` follow it there), not a pass over every tool."""
        if not self._given:
            return False
        names = self._sorted
        if names is None:
            names = self._sorted = sorted(self._params)
        at = bisect_left(names, text)
        return at < len(names) and names[at].startswith(text)

    def params_of(self, tool: str) -> object:
        """The `parameters` `tool` was given with, as given (None for a tool not requested)."""
        return self._params.get(tool)

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

    def _properties(self, tool: str) -> dict[str, ResolvedSchema]:
        """The top-level property schemas of `tool`, merged over its combinators (cached)."""
        props = _top_of(self._root(tool))[0]
        if len(self._props) < _CACHE_LIMIT:  # a model inventing tool names is not remembered
            self._props[tool] = props
        return props

    def lacks_property(self, tool: str, key: str) -> bool:
        """Whether `tool` is a requested tool whose schema has properties, none called `key`
        (a schema-less tool, or one with such a property, lacks nothing)."""
        try:
            props = self._props.get(tool)
            if props is None:
                props = self._properties(tool)
        except TypeError:  # unhashable junk
            return False
        raw = self._params.get(tool)
        declared = raw.get("properties") if isinstance(raw, dict) else None
        if isinstance(declared, dict) and key in declared:
            return False  # (a property whose schema is not an object still is one)
        return bool(props) and key not in props

    def required(self, tool: str) -> tuple[str, ...]:
        """The top-level properties `tool`'s schema lists as `required` (none for a tool not
        requested, a schema-less one, or a `required` that is not a list of names)."""
        try:
            raw = self._params.get(tool)
        except TypeError:  # unhashable junk
            return ()
        names = raw.get("required") if isinstance(raw, dict) else None
        if not isinstance(names, list):
            return ()
        return tuple(n for n in names if isinstance(n, str))

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
        keys = _top_of(self._root(tool))[1]
        if len(self._typed) < _CACHE_LIMIT:
            self._typed[tool] = keys
        return keys

    def _root(self, tool: str) -> ResolvedSchema | None:
        try:
            return self._roots[tool]
        except KeyError:
            pass
        except TypeError:
            return None
        schema = self._params.get(tool)
        # one key by value for both: the check and the compiled graph are each made once per
        # schema value, shared by every request passing a schema of this value
        key = _value_key(schema)
        warn_about_schema(tool, schema, TYPE_SPELLINGS, key)  # when a call to it is first read
        root = (
            schema
            if isinstance(schema, ResolvedSchema)
            else _resolve_keyed(schema, key) if isinstance(schema, dict) else None
        )
        if len(self._roots) < _CACHE_LIMIT:
            self._roots[tool] = root
        return root


_NO_TOP: tuple[dict[str, ResolvedSchema], frozenset[str]] = ({}, frozenset())


def _top_of(root: ResolvedSchema | None) -> tuple[dict[str, ResolvedSchema], frozenset[str]]:
    """A tool root's top-level property schemas, merged over its combinators, and the keys
    among them that are typed rather than kept as text; cached on the root (shared by every
    request passing a schema of its value: do not mutate them)."""
    if root is None:
        return _NO_TOP
    top = root._top
    if top is None:
        try:
            props = {
                key: sub
                for key, sub in object_view(root)[0].items()
                if isinstance(sub, ResolvedSchema)
            }
        except Exception:  # RecursionError on an absurd schema: no schema
            props = {}
        typed = frozenset(key for key, sub in props.items() if not streams_as_text(sub))
        top = root._top = (props, typed)
    return top
