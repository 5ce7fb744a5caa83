"""What importing a module pulls in: every module imports first, with nothing hidden behind a
function-local import, and `import toolgrammar` leaves the export package until it is used;
and the package's import graph, read from its `import` statements: no circle, no upward arrow."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Iterable

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
grammar = toolgrammar.export_grammar("qwen3_coder", TOOLS, format="lark")
assert "toolgrammar.export" in sys.modules
assert grammar.startswith("// toolgrammar export: family qwen3_coder"), grammar[:80]
try:
    toolgrammar.export_grammar("no_such_family", TOOLS)
except toolgrammar.ExportError as error:
    assert "no_such_family" in str(error)
else:
    raise AssertionError("an unknown family exported")
from toolgrammar import ExportError, export_grammar
assert export_grammar is toolgrammar.export_grammar and ExportError is toolgrammar.ExportError
"""

# The old spelling, `toolgrammar.export(...)`, exports one release more with a
# DeprecationWarning, whether the name was reached first as the API's attribute or bound to
# the package by importing one of its modules.
OLD_NAME_WARNS = """
import sys, warnings
import toolgrammar
{first}
TOOLS = [{{"type": "function", "function": {{"name": "f", "parameters": {{"type": "object"}}}}}}]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    old = toolgrammar.export("hermes", TOOLS, "gbnf")
assert old == toolgrammar.export_grammar("hermes", TOOLS, "gbnf"), old[:80]
[warning] = caught
assert warning.category is DeprecationWarning, warning
assert "export_grammar" in str(warning.message) and warning.filename == "<string>", warning
"""
EXPORT_AFTER_SUBMODULE_IMPORT = OLD_NAME_WARNS.format(first="import toolgrammar.export.schema")
EXPORT_BY_ATTRIBUTE = OLD_NAME_WARNS.format(first="")


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_module_imports_first() -> None:
    """No import cycle that only a function-local import or a lucky import order hides."""
    assert int(_run(EVERY_MODULE_FIRST)) > 30  # the walk found the modules, not none


@pytest.mark.parametrize(
    "code", [EXPORT_ON_FIRST_USE, EXPORT_AFTER_SUBMODULE_IMPORT, EXPORT_BY_ATTRIBUTE]
)
def test_export_is_loaded_on_first_use(code: str) -> None:
    _run(code)


# The layers of the installed package, lowest first: a module imports only from its own layer
# or below. The runtime (and the generated data it loads) knows nothing of the compiler, the
# API, the export, the checker or the adapters; the export knows the runtime and the family
# lookup (`toolgrammar.specs`), not the API it serves.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("toolgrammar.runtime", "toolgrammar.generated"),
    ("toolgrammar.compiler",),
    ("toolgrammar.specs",),
    ("toolgrammar.export",),
    ("toolgrammar",),  # the API: toolgrammar/__init__.py
    # import_template renders chat templates as the template check does, and checks its output
    ("toolgrammar.check", "toolgrammar.adapters", "toolgrammar.import_template"),
    ("toolgrammar.cli",),
    ("toolgrammar.__main__",),
)
SUBPACKAGES = ("check", "compiler", "runtime", "generated", "export", "adapters")


def _package_files() -> dict[str, Path]:
    """Every module of the installed package by name, found where Python finds it."""
    found: dict[str, Path] = {}
    for package in ("toolgrammar", *(f"toolgrammar.{p}" for p in SUBPACKAGES)):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations, package
        for path in sorted(Path(spec.submodule_search_locations[0]).glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(name: str, path: Path, modules: Iterable[str]) -> set[str]:
    """The package's modules that `name` imports anywhere in its text (in a function too),
    but under `if TYPE_CHECKING:`; `from P import X` names module P.X when there is one."""
    known = set(modules)
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                pending.extend(child.orelse)
                continue
            pending.append(child)
            if isinstance(child, ast.Import):
                found |= {alias.name for alias in child.names}
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([child.module] if child.module else []))
                for alias in child.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {module for module in found if module in known and module != name}


def _layer(module: str) -> int:
    """The index of the layer `module` belongs to (its longest matching package)."""
    best, depth = -1, -1
    for index, layer in enumerate(LAYERS):
        for package in layer:
            if (module == package or module.startswith(package + ".")) and len(package) > depth:
                best, depth = index, len(package)
    assert best >= 0, f"{module} is in no layer of LAYERS"
    return best


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    files = _package_files()
    return {name: _imports(name, path, files) for name, path in files.items()}


def test_the_walk_sees_the_package(graph: dict[str, set[str]]) -> None:
    """The walk found the modules and their imports (a walk that saw nothing would pass)."""
    assert len(graph) > 60
    assert "toolgrammar.runtime.dialects" in graph["toolgrammar.runtime.tables"]
    assert "toolgrammar.export.build" in graph["toolgrammar.export"]


def test_no_import_circle(graph: dict[str, set[str]]) -> None:
    assert _circles(graph) == []
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_upward_import(graph: dict[str, set[str]]) -> None:
    """No module imports from a layer above its own (LAYERS)."""
    upward = [
        f"{name} -> {other}"
        for name, others in sorted(graph.items())
        for other in sorted(others)
        if _layer(other) > _layer(name)
    ]
    assert upward == []
    assert _layer("toolgrammar.export.build") > _layer("toolgrammar.runtime.spec")
