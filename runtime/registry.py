"""Family names (aliases included) to the specs the compiler generated."""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator

from .spec import FamilySpec


class UnknownFamily(KeyError):
    """A family name that no grammar registers."""

    def __str__(self) -> str:
        name = self.args[0]
        return f"unknown family {name!r}; known: {', '.join(families())}"


@lru_cache(maxsize=None)
def _table() -> dict[str, FamilySpec]:
    generated = importlib.import_module("toolgrammar.generated")
    table: dict[str, FamilySpec] = {}
    for module_name in generated.FAMILY_MODULES:
        module = importlib.import_module(f"toolgrammar.generated.{module_name}")
        spec: FamilySpec = module.SPEC
        for name in (spec.name, *spec.aliases):
            table[name] = spec
    return table


def families() -> list[str]:
    """Every registered name, aliases included, sorted."""
    return sorted(_table())


def get_spec(name: str) -> FamilySpec:
    try:
        return _table()[name]
    except KeyError:
        raise UnknownFamily(name) from None


@contextmanager
def registered(spec: FamilySpec) -> Iterator[None]:
    """`spec` (and its aliases) available by name inside the block, replacing any spec of
    the same names, and the table as it was afterwards: how `toolgrammar check` runs a
    grammar file that is not built."""
    table = _table()
    names = (spec.name, *spec.aliases)
    before = {name: table.get(name) for name in names}
    for name in names:
        table[name] = spec
    try:
        yield
    finally:
        for name, old in before.items():
            if old is None:
                table.pop(name, None)
            else:
                table[name] = old
