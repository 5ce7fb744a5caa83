"""Paths the compiler tests share (a plain module: `conftest` is not importable by name
reliably once other test folders grow their own conftest.py)."""

from __future__ import annotations

from pathlib import Path

from toolgrammar.compiler import default_paths

HERE = Path(__file__).parent
GRAMMARS, GENERATED = default_paths()
FAMILIES = tuple(sorted(path.stem for path in GRAMMARS.glob("*.tg")))  # one file per family


def module_of(family: str) -> str:
    """The generated module of a family (`granite-20b-fc` -> `granite_20b_fc`)."""
    return family.replace("-", "_")


MODULES = tuple(sorted(module_of(f) for f in FAMILIES))
