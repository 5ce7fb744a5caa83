"""Grammar params: `${NAME}` inside a grammar's strings, filled in when a parser is made.

Some markups vary per checkpoint (Hunyuan writes `<tool_call:opensource>`, the suffix read
from the tokenizer). The grammar declares `param suffix = ""` and writes
`"<tool_call${suffix}>"`; a parser built with `params={"suffix": ":opensource"}` gets a
spec whose strings say exactly that. Specs are filled once per set of values and cached.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any, Mapping

from .limits import MAX_DEPTH
from .spec import FamilySpec

_KEEP = frozenset(
    {"name", "aliases", "source", "source_sha256", "params", "pattern", "key_pattern"}
)


class UnknownParam(ValueError):
    """A param value for a name the family's grammar does not declare."""


def with_params(spec: FamilySpec, values: Mapping[str, str] | None = None) -> FamilySpec:
    """`spec` with every `${NAME}` replaced by its value (or the grammar's default)."""
    if values is None and not spec.params:  # (most grammars declare none: a parser per request)
        return spec
    values = dict(values or {})
    declared = dict(spec.params)
    for name, value in values.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise UnknownParam(f"family {spec.name!r} has no param {name!r} (its params: {known})")
        if not isinstance(value, str):
            raise TypeError(f"param {name!r} takes a string, not {type(value).__name__}")
    if not declared:
        return spec
    filled = tuple(sorted({**declared, **values}.items()))
    return _filled(spec, filled)


@lru_cache(maxsize=64)
def _filled(spec: FamilySpec, filled: tuple[tuple[str, str], ...]) -> FamilySpec:
    table = {f"${{{name}}}": value for name, value in filled}
    result = _fill(spec, table)
    assert isinstance(result, FamilySpec)
    return result


def _fill(value: Any, table: dict[str, str], depth: int = 0) -> Any:
    """`value` (a spec, or a part of one) with its strings filled; a spec is a few levels
    deep, and one nested past `MAX_DEPTH` is refused (ValueError), never recursed into."""
    if depth > MAX_DEPTH:
        raise ValueError("a family spec nested deeper than MAX_DEPTH")
    if isinstance(value, str):
        for ref, text in table.items():
            value = value.replace(ref, text)
        return value
    if isinstance(value, tuple):
        return tuple(_fill(v, table, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _fill(getattr(value, f.name), table, depth + 1)
            for f in dataclasses.fields(value)
            if f.name not in _KEEP
        }
        return dataclasses.replace(value, **changes)
    return value
