"""Which build the tests run (toolgrammar.runtime.compiled()), and the guard that keeps a test
from passing vacuously under the compiled build by patching what compiled code never reads."""

from __future__ import annotations

import os
import types

import pytest

import toolgrammar.runtime

REQUIRE_COMPILED = "TOOLGRAMMAR_REQUIRE_COMPILED"
"""Set to 1 by the test command's compiled leg: a run without the compiled build fails."""
BUILD = toolgrammar.runtime.compiled()
COMPILED = {f"toolgrammar.runtime.{name}" for name in BUILD["modules"]}


def required() -> bool:
    return os.environ.get(REQUIRE_COMPILED) == "1"


def unreached_by_patch(target: object, name: str) -> str | None:
    """Why patching `target.name` would not reach the compiled build's code, or None.

    mypyc binds calls to compiled functions, classes and methods when it compiles, so a
    function or class replaced in a compiled module, or an attribute of a compiled class or
    of its instances, is not what compiled code calls: a test that counts through such a
    patch would pass counting nothing. A compiled module's data (its regexes, tables,
    constants) is read through the module's dict, patched or not (tests/test_compiled.py
    checks that)."""
    if isinstance(target, types.ModuleType):
        value = getattr(target, name, None)
        if target.__name__ in COMPILED and callable(value):
            return f"{target.__name__}.{name}"
        return None
    owner = target if isinstance(target, type) else type(target)
    if any(klass.__module__ in COMPILED for klass in owner.__mro__):
        return f"{owner.__module__}.{owner.__qualname__}.{name}"
    return None


def refuse_unreached(target: object, name: str) -> None:
    """Fail the test (clearly) if patching `target.name` would not reach compiled code."""
    unreached = unreached_by_patch(target, name)
    if unreached:
        pytest.fail(
            f"this test patches {unreached}, which the compiled build's code does not"
            " reach (mypyc binds its calls when it compiles): it would pass having"
            " counted or changed nothing. Count through runtime/scan_meter.py, or run"
            " the test under pure Python (TOOLGRAMMAR_PURE_PYTHON=1).",
            pytrace=False,
        )
