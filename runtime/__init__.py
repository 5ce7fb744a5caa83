"""The runtime every generated parser shares: scanning, dialects, coercion, registry.

An opt-in compiled build (`python scripts/build_compiled.py`, docs/compiled.md) puts mypyc
extension modules of the hot modules in `_compiled/` beside this file. They are used when
they were built from exactly these sources for this interpreter; otherwise, or when
`TOOLGRAMMAR_PURE_PYTHON=1`, the .py modules run. `compiled()` says which.
"""

from __future__ import annotations

import hashlib as _hashlib
import importlib as _importlib
import json as _json
import os as _os
import sys as _sys
from importlib.machinery import EXTENSION_SUFFIXES as _EXT

PURE_ENV = "TOOLGRAMMAR_PURE_PYTHON"
"""Set to 1 to run the .py modules even where a compiled build is present."""
DIR_ENV = "TOOLGRAMMAR_COMPILED_DIR"
"""A compiled build's directory other than `_compiled/` (the test command's compiled leg)."""
SHARED_LIB = "_native__mypyc"
"""The compiled build's shared library (mypyc group "toolgrammar.runtime._native")."""

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def sources_digest(directory: str = _HERE) -> str:
    """sha256 over every runtime source file (name and bytes): what a build was made from."""
    digest = _hashlib.sha256()
    for name in sorted(_os.listdir(directory)):
        if name.endswith(".py"):
            with open(_os.path.join(directory, name), "rb") as source:
                digest.update(name.encode() + b"\0" + source.read() + b"\0")
    return digest.hexdigest()


def _load_compiled() -> tuple[str | None, tuple[str, ...], str]:
    """(directory, modules, why): the compiled build put first on this package's path, or why
    not (no build, forced pure, built from other sources or for another interpreter)."""
    if _os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None, (), f"pure Python: {PURE_ENV} is set"
    directory = _os.environ.get(DIR_ENV) or _os.path.join(_HERE, "_compiled")
    try:
        with open(_os.path.join(directory, "manifest.json"), encoding="utf-8") as file:
            manifest = _json.load(file)
    except (OSError, ValueError):
        return None, (), "pure Python: no compiled build"
    if (
        manifest.get("cache_tag") != _sys.implementation.cache_tag
        or manifest.get("ext_suffix") not in _EXT
    ):
        return None, (), "pure Python: the compiled build is for another interpreter"
    if manifest.get("sources") != sources_digest():
        return None, (), "pure Python: the compiled build is stale (runtime sources changed)"
    __path__.insert(0, directory)
    try:
        _importlib.import_module(f"{__name__}.{SHARED_LIB}")
    except ImportError as error:
        __path__.remove(directory)
        return None, (), f"pure Python: the compiled build does not import ({error})"
    return directory, tuple(manifest["modules"]), "built from the sources on disk"


_DIRECTORY, _MODULES, _WHY = _load_compiled()


def compiled() -> dict[str, object]:
    """Which build runs: {"build": "compiled" or "pure", "why": a sentence, "modules": the
    compiled modules (those imported so far are checked to be extension modules),
    "directory": where they come from}."""
    loaded = [
        name
        for name in _MODULES
        if f"{__name__}.{name}" in _sys.modules
        and not str(getattr(_sys.modules[f"{__name__}.{name}"], "__file__", "")).endswith(".py")
    ]
    return {
        "build": "compiled" if _DIRECTORY else "pure",
        "why": _WHY,
        "modules": list(_MODULES),
        "loaded": loaded,
        "directory": _DIRECTORY,
    }


def build_name() -> str:
    """ "compiled" or "pure": a bench's header."""
    return "compiled" if _DIRECTORY else "pure"
