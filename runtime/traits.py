"""mypyc's `trait` and `mypyc_attr` (docs/compiled.md), or no-ops where mypy is not installed:
the pure-Python runtime needs none, the compiled build reads them when it compiles. A trait is a
mixin a compiled class may inherit beside its base (the engine's mixins: `Engine` is one compiled
class); `@mypyc_attr(allow_interpreted_subclasses=True)` lets a Python class subclass a compiled
one (`batched.Batched`, which Python readers subclass beside compiled ones)."""

from __future__ import annotations

from typing import Any

try:
    from mypy_extensions import mypyc_attr, trait
except ImportError:  # pure Python without mypy installed: a trait is a plain mixin

    def trait(cls: Any) -> Any:
        return cls

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:
        return lambda cls: cls
