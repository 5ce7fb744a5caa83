"""mypyc's `trait` (docs/compiled.md), or a no-op where mypy is not installed: the pure-Python
runtime needs none, the compiled build reads it when it compiles. A trait is a mixin a compiled
class may inherit beside its base (the engine's mixins: `Engine` is one compiled class)."""

from __future__ import annotations

from typing import Any

try:
    from mypy_extensions import trait
except ImportError:  # pure Python without mypy installed: a trait is a plain mixin

    def trait(cls: Any) -> Any:
        return cls
