"""What importing a module pulls in: every module imports first, with nothing hidden behind a
function-local import, and `import toolgrammar` leaves the export package until it is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

EVERY_MODULE_FIRST = """
import importlib, importlib.util, pkgutil, sys

PACKAGES = ["toolgrammar", "toolgrammar.check", "toolgrammar.compiler", "toolgrammar.runtime",
            "toolgrammar.export",
            "toolgrammar.adapters"]  # generated/: data modules of one shape, loaded by the registry
SKIP = {"toolgrammar.__main__"}  # runs the command
if importlib.util.find_spec("vllm") is None:
    SKIP.add("toolgrammar.adapters.vllm")  # needs vLLM's environment (tests/vllm)
if importlib.util.find_spec("sglang") is None:  # need SGLang's environment (tests/sglang)
    SKIP.update(f"toolgrammar.adapters.sglang{m}" for m in ("", "_tools", "_reasoning"))

if any(importlib.util.find_spec(m) is None for m in ("lark", "jinja2", "black")):
    PACKAGES.remove("toolgrammar.compiler")  # needs the compiler extra (vLLM's environment)
names = ["toolgrammar.generated"]
for package in PACKAGES:
    path = importlib.import_module(package).__path__
    names += [package] + [f"{package}.{m.name}" for m in pkgutil.iter_modules(path)]
ours = lambda: [m for m in sys.modules if m == "toolgrammar" or m.startswith("toolgrammar.")]
for name in names:
    if name in SKIP:
        continue
    for loaded in ours():  # as in a fresh interpreter: this module is the first one imported
        del sys.modules[loaded]
    importlib.import_module(name)
print(len(names))
"""

EXPORT_ON_FIRST_USE = """
import sys
import toolgrammar
assert "toolgrammar.export" not in sys.modules, "import toolgrammar imported the export package"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
grammar = toolgrammar.export("qwen3_coder", TOOLS, format="lark")
assert "toolgrammar.export" in sys.modules
assert grammar.startswith("// toolgrammar export: family qwen3_coder"), grammar[:80]
try:
    toolgrammar.export("no_such_family", TOOLS)
except toolgrammar.ExportError as error:
    assert "no_such_family" in str(error)
else:
    raise AssertionError("an unknown family exported")
from toolgrammar import ExportError, export
assert export is toolgrammar.export and ExportError is toolgrammar.ExportError
"""

# Importing one of the package's modules first binds `toolgrammar.export` to the package:
# calling it must still export.
EXPORT_AFTER_SUBMODULE_IMPORT = """
import toolgrammar
import toolgrammar.export.schema
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
assert toolgrammar.export("hermes", TOOLS, "gbnf").startswith("# toolgrammar export")
"""


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_module_imports_first() -> None:
    """No import cycle that only a function-local import or a lucky import order hides."""
    assert int(_run(EVERY_MODULE_FIRST)) > 30  # the walk found the modules, not none


@pytest.mark.parametrize("code", [EXPORT_ON_FIRST_USE, EXPORT_AFTER_SUBMODULE_IMPORT])
def test_export_is_loaded_on_first_use(code: str) -> None:
    _run(code)
