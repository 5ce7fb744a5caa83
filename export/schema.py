"""The request's tools, checked and made self-contained for export.

An export embeds each tool's parameter schema (whole for JSON dialects, per parameter for
markup ones), so every `$ref` is inlined first; a recursive `$ref` cannot be inlined and is
refused with a clear message rather than exported wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..runtime.limits import MAX_DEPTH, TooDeep

_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")


class ExportError(ValueError):
    """Input an export cannot honour: unknown family, tool or mode, a bad tools list."""


@dataclass(frozen=True)
class Tool:
    name: str
    parameters: dict[str, Any]  # `$ref`-free object schema

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> tuple[str, ...]:
        req = self.parameters.get("required")
        return tuple(r for r in req if r in self.properties) if isinstance(req, list) else ()


def load_tools(tools: Any) -> list[Tool]:
    """OpenAI tools (`[{"type": "function", "function": {...}}]`, or bare function objects)
    as `Tool`s, with a clear `ExportError` for anything else."""
    if not isinstance(tools, list) or not tools:
        raise ExportError("tools must be a non-empty JSON list of tools")
    out: list[Tool] = []
    for i, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ExportError(f"tool {i} has no function name: {json.dumps(tool)[:120]}")
        name = function["name"]
        if not name or any(c.isspace() or c in "<>{}[]\"'" for c in name):
            raise ExportError(f"tool {i}: {name!r} cannot be written as a function name")
        params = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict):
            raise ExportError(f"tool {name!r}: parameters must be a JSON schema object")
        try:
            inlined = _inline(params, params, ())
        except TooDeep:
            raise ExportError(
                f"tool {name!r}: too deeply nested schema (its $refs inlined: values deeper "
                f"than the {MAX_DEPTH} levels the parser reads, or {SCHEMA_DEPTH} levels of "
                "schema)"
            ) from None
        out.append(Tool(name, inlined))
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise ExportError(f"tool names repeat: {names}")
    return out


# How deep a tool's schema document may nest, `$ref`s inlined (each one followed counting a
# level too): a value level takes at most two (`properties`, then the property's schema).
# Every walk of the export (branches, values, elements, the printers, `json.dumps` of a
# schema) goes no deeper than the schema does.
SCHEMA_DEPTH = 2 * MAX_DEPTH
# Keywords whose schema describes a value one level down, and those holding such schemas.
_ONE_DOWN = frozenset(
    {"items", "additionalItems", "contains", "additionalProperties", "unevaluatedItems"}
) | frozenset({"unevaluatedProperties"})
_EACH_DOWN = frozenset({"properties", "patternProperties", "prefixItems"})


def _inline(
    node: Any, root: dict[str, Any], seen: tuple[str, ...], depth: int = 0, level: int = 1
) -> Any:
    """`node` with its `$ref`s inlined; `TooDeep` past `SCHEMA_DEPTH` levels of the document,
    or for a schema of a value more than `MAX_DEPTH` levels deep (`level`: the parameters
    object is 1), which the parser would not read."""
    if isinstance(node, (list, dict)) and (depth >= SCHEMA_DEPTH or level > MAX_DEPTH):
        raise TooDeep("schema nested too deep")
    if isinstance(node, list):
        return [_inline(n, root, seen, depth + 1, level) for n in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if ref in seen:
            raise ExportError(f"recursive $ref {ref!r} cannot be exported (inline it)")
        target = _resolve(ref, root)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        merged = {**target, **rest}
        return _inline(merged, root, seen + (ref,), depth + 1, level)
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k in ("$defs", "definitions"):
            continue
        if k in _EACH_DOWN and isinstance(v, (dict, list)) and depth + 1 < SCHEMA_DEPTH:
            members = v.items() if isinstance(v, dict) else enumerate(v)
            inlined = {n: _inline(sub, root, seen, depth + 2, level + 1) for n, sub in members}
            out[k] = inlined if isinstance(v, dict) else list(inlined.values())
        else:
            out[k] = _inline(v, root, seen, depth + 1, level + (k in _ONE_DOWN))
    return out


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise ExportError(f"only local $ref ('#/...') can be exported, not {ref!r}")
    node: Any = root
    for part in ref[1:].lstrip("/").split("/") if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ExportError(f"$ref {ref!r} points nowhere")
        node = node[part]
    if not isinstance(node, dict):
        raise ExportError(f"$ref {ref!r} is not a schema")
    return node


def branches(schema: Any) -> list[dict[str, Any]]:
    """A schema as a list of single-type alternatives (anyOf/oneOf and type lists spread,
    `enum`/`const` kept as they are); an empty schema is every type."""
    if not isinstance(schema, dict):
        return [{"type": t} for t in _TYPES]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            base = {k: v for k, v in schema.items() if k != key}
            return [b for sub in schema[key] for b in branches({**base, **sub})]
    if "const" in schema:
        return [{"enum": [schema["const"]]}]
    if isinstance(schema.get("enum"), list):
        return [{"enum": schema["enum"]}]
    kind = schema.get("type")
    if isinstance(kind, list):
        return [{**schema, "type": t} for t in kind if t in _TYPES]
    if kind in _TYPES:
        return [schema]
    if "properties" in schema:
        return [{**schema, "type": "object"}]
    if "items" in schema:
        return [{**schema, "type": "array"}]
    return [{"type": t} for t in _TYPES]


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=False, ensure_ascii=False, separators=(",", ":"))
