"""The opt-in compiled build (scripts/build_compiled.py, docs/compiled.md) is safe to run:
- it agrees with pure Python delta for delta (every corpus case and fuzz inputs, split five
  ways), and whole;
- no test passes vacuously under it: the scan meter counts compiled scans, patched module
  data reaches compiled code, a patch that would not reach it fails its test;
- the known mypyc hazards: no crash on deep input (compiled code has no recursion limit),
  and no `super().__init__(*args, **options)` into or out of a compiled class (mypyc passed
  wrong arguments to a compiled `__init__` with keyword-only parameters, silently).

Tests that need the build skip without it, except in the test command's compiled leg
(TOOLGRAMMAR_REQUIRE_COMPILED=1), where tests/conftest.py fails the run if it is missing.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolgrammar
import toolgrammar.runtime
from support.compiled import BUILD, COMPILED, required, unreached_by_patch
from toolgrammar.runtime import scan_meter

ROOT = Path(__file__).resolve().parent.parent
AGREEMENT = ROOT / "tests" / "support" / "compiled_agreement.py"


def _compiled_modules() -> list[str]:
    """MODULES of scripts/build_compiled.py (read from its source: no build needed)."""
    tree = ast.parse((ROOT / "scripts" / "build_compiled.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MODULES":
            return list(ast.literal_eval(node.value))
    raise AssertionError("scripts/build_compiled.py has no MODULES")


MODULES = _compiled_modules()


@pytest.fixture
def compiled_build() -> None:
    """Skip without the compiled build, or fail in the compiled leg (which requires it)."""
    if BUILD["build"] != "compiled":
        if required():
            pytest.fail(f"the compiled build does not run: {BUILD['why']}")
        pytest.skip(f"no compiled build ({BUILD['why']}): python scripts/build_compiled.py")
    assert BUILD["modules"] == MODULES, "the build is of other modules: rebuild"


def _env(pure: bool) -> dict[str, str]:
    env = {**os.environ}
    env.pop("TOOLGRAMMAR_PURE_PYTHON", None)
    if pure:
        env["TOOLGRAMMAR_PURE_PYTHON"] = "1"
    return env


# ---------------------------------------------------------------- agreement


def test_the_compiled_build_agrees_with_pure_python_delta_for_delta(compiled_build: None) -> None:
    # both sides at once, each in a process of its own (one process runs one build)
    runs = {
        pure: subprocess.Popen(
            [sys.executable, str(AGREEMENT), "--fuzz", "12"],
            env=_env(pure),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for pure in (True, False)
    }
    out = {}
    for pure, process in runs.items():
        stdout, stderr = process.communicate()
        assert process.returncode == 0, stderr[-3000:]
        out[pure] = json.loads(stdout)
    assert out[True]["build"]["build"] == "pure"
    assert out[False]["build"]["build"] == "compiled"
    assert out[False]["build"]["loaded"] == MODULES  # each one ran as an extension module
    pure, compiled = out[True]["results"], out[False]["results"]
    assert len(pure) > 1000 and pure.keys() == compiled.keys()
    differ = [key for key in pure if pure[key] != compiled[key]]
    assert not differ, f"{len(differ)} inputs differ, first: {differ[:5]}"


def test_the_fuzzer_finds_nothing_under_the_compiled_build(compiled_build: None) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "toolgrammar", "fuzz", "all", "--inputs", "3000", "--seed", "31"],
        env=_env(False),
        capture_output=True,
        text=True,
        cwd=ROOT / "tests",  # not the checkout's root, whose toolgrammar/ is no runtime
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "exceptions 0, violations 0," in run.stdout, run.stdout


# ---------------------------------------------------------------- no vacuous tests


def test_the_scan_meter_counts_compiled_scans(compiled_build: None) -> None:
    # each call's arguments its own text: the whole-output route does not search a JSON text
    # it met before for a stop marker again (`whole_output._stopless`)
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris %05d"}}</tool_call>'
    counts = []
    for n in (50, 200):
        with scan_meter.counting() as meter:
            toolgrammar.parse("hermes", "".join("Some prose. " + call % i for i in range(n)))
        counts.append(meter.chars)
    assert "toolgrammar.runtime.markers" in COMPILED  # the searches counted are compiled
    assert counts[0] > 50 * len(call % 0)  # every call's text went through a counted search
    assert 3 * counts[0] < counts[1] < 5 * counts[0]


def test_patched_module_data_reaches_compiled_code(
    compiled_build: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tests/test_bad_input.py counts the scans of compiled modules' regexes by patching them
    from toolgrammar.runtime import json_stream

    searched: list[int] = []

    class Counting:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> object:
            searched.append(pos)
            return self.pattern.match(text, pos, endpos)

    # (a string value's rest is read with `_STRING_REST`)
    monkeypatch.setattr(json_stream, "_STRING_REST", Counting(json_stream._STRING_REST))
    parser = toolgrammar.StreamParser("hermes")
    for piece in ('<tool_call>{"name": "f", "arguments": {"a": "', "x" * 40, '"}}</tool_call>'):
        parser.feed(piece)
    parser.finish()
    assert searched


def test_a_patch_compiled_code_would_not_reach_fails_its_test() -> None:
    from toolgrammar.runtime import json_args, markers

    unreached = [
        unreached_by_patch(json_args, "JsonScanner"),  # a class called from compiled code
        unreached_by_patch(markers.Markers, "search"),  # a compiled class's method
        unreached_by_patch(markers.markers(("<a>",)), "search"),  # and its instances'
    ]
    if BUILD["build"] == "compiled":
        assert all(unreached), unreached
    else:
        assert unreached == [None, None, None]
    assert unreached_by_patch(json_args, "MAX_DEPTH") is None  # data: read through the dict


# ---------------------------------------------------------------- known hazards


def _super_init_with_unpacking(tree: ast.AST) -> list[int]:
    """Lines of `super().__init__(*args)` / `super().__init__(**options)` calls."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__init__"
        and isinstance(node.func.value, ast.Call)
        and getattr(node.func.value.func, "id", "") == "super"
        and (
            any(isinstance(arg, ast.Starred) for arg in node.args)
            or any(keyword.arg is None for keyword in node.keywords)
        )
    ]


def test_no_unpacked_super_init_into_or_out_of_a_compiled_class() -> None:
    # mypyc miscompiled `super().__init__(a, b, **options)` into a compiled `__init__` with
    # keyword-only parameters (the arguments arrived wrong; StreamParser(trace=...) broke)
    sources = {
        path: path.read_text()
        for folder in ("runtime", "toolgrammar", "adapters", "export")
        for path in sorted((ROOT / folder).rglob("*.py"))
    }
    compiled_classes = set()
    for name in MODULES:
        tree = ast.parse(sources[ROOT / "runtime" / f"{name}.py"])
        lines = _super_init_with_unpacking(tree)
        assert not lines, f"runtime/{name}.py (compiled) lines {lines}"
        compiled_classes |= {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    assert "JsonScanner" in compiled_classes and "Markers" in compiled_classes
    for path, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            bases = (
                {getattr(base, "id", getattr(base, "attr", "")) for base in node.bases}
                if (isinstance(node, ast.ClassDef))
                else set()
            )
            if bases & compiled_classes:
                lines = _super_init_with_unpacking(node)
                assert not lines, f"{path} class {node.name} (of a compiled class) lines {lines}"


def test_the_check_finds_the_pattern() -> None:
    bad = "class A(B):\n    def __init__(self, a, **options):\n        super().__init__(a, **options)\n"
    assert _super_init_with_unpacking(ast.parse(bad)) == [3]
    good = "class A(B):\n    def __init__(self, a, *, trace=None):\n        super().__init__(a, trace=trace)\n"
    assert _super_init_with_unpacking(ast.parse(good)) == []


@pytest.mark.parametrize("family", ["hermes", "kimi_k2", "qwen3_coder", "jamba", "pythonic"])
def test_stream_parser_trace_under_the_compiled_build(compiled_build: None, family: str) -> None:
    call = toolgrammar.render(family, [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    text = "Hi. " + call * 2
    runs = []
    for trace in (None, []):
        parser = toolgrammar.StreamParser(
            family, ids="sequential", trace=None if trace is None else trace.append
        )
        deltas = [d.to_dict() for i in range(0, len(text), 7) for d in parser.feed(text[i : i + 7])]
        deltas += [d.to_dict() for d in parser.finish()]
        runs.append((deltas, trace))
    assert runs[0][0] == runs[1][0]
    assert runs[1][1], "no trace event"
    names = [c["function"].get("name") for d in runs[0][0] for c in d.get("tool_calls", [])]
    assert names.count("get_weather") == 2


def test_the_engine_is_one_native_class_under_the_compiled_build(compiled_build: None) -> None:
    # the engine's mixins are mypyc traits (runtime/traits.py), so `Engine` compiles as a
    # native class (attributes in C slots, methods called directly); with Python mixins it
    # compiled as a plain Python class and ran no faster (docs/compiled.md)
    from toolgrammar.runtime import engine

    parser = toolgrammar.StreamParser("hermes")
    made = parser._engine
    assert type(made) is engine.Engine
    assert not hasattr(made, "__dict__"), "Engine compiled as a Python class"
    # the traced engine is an Engine told to pass over no opener (not a subclass: a compiled
    # class is one Python code may not subclass)
    traced = toolgrammar.StreamParser("hermes", trace=lambda event: None)._engine
    assert type(traced) is engine.Engine and traced._quick is False and made._quick is True


def test_the_repeat_mark_reads_the_engine_records_flag_by_flag() -> None:
    # `repeats._mark` compares the engine's state by value. `EngineState` and `CallRecord`
    # are compiled (session 15): a native class has no `__slots__`, and read as one object
    # the state would compare equal to itself whatever its flags (a repeat taken where the
    # flags differ). Runs in both legs: under the build it reads the native records.
    from toolgrammar.runtime import repeats

    parser = toolgrammar.StreamParser("hermes")
    engine = parser._engine
    before = repeats._mark(engine)
    engine._state.in_section = not engine._state.in_section
    after = repeats._mark(engine)
    assert before != after, "a flag of EngineState changed and the mark did not"
    engine._state.in_section = not engine._state.in_section
    assert repeats._mark(engine) == before
    state = dict(before[0])["_state"]
    assert isinstance(state, tuple) and len(state) == len(repeats._slots(engine._state)) > 10


DEEP = 100_000


def test_deep_input_is_no_crash_under_the_compiled_build(compiled_build: None) -> None:
    # in a process of its own: compiled code has no recursion limit, a crash would be a signal
    script = (
        "import toolgrammar\n"
        f"deep = '[' * {DEEP} + ']' * {DEEP}\n"
        "for family, text in [\n"
        '    (\'hermes\', \'<tool_call>{"name": "f", "arguments": {"a": \' + deep + \'}}</tool_call>\'),\n'
        "    ('kimi_k2', '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        "<|tool_call_argument_begin|>{\"a\": ' + deep + '}<|tool_call_end|>'),\n"
        '    (\'jamba\', \'<tool_calls>[{"name": "f", "arguments": {"a": \' + deep + \'}}]</tool_calls>\'),\n'
        "]:\n"
        "    whole = toolgrammar.parse(family, text)\n"
        "    parser = toolgrammar.StreamParser(family)\n"
        "    for i in range(0, len(text), 4096):\n"
        "        parser.feed(text[i : i + 4096])\n"
        "    parser.finish()\n"
        "print('ok')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        env=_env(False),
        capture_output=True,
        text=True,
        cwd=ROOT / "tests",
    )
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-3000:]}"
    assert run.stdout.strip() == "ok"


def _undeclared_slots(trees: dict[str, ast.Module]) -> list[str]:
    """`Class.slot` of every slot of a class of `trees` that neither the class (nor a base
    in `trees`) annotates nor any of their methods assigns to `self.slot`: mypyc makes a
    native class's attributes of those two only, so compiled such a slot is no attribute
    at all (whole_output's `_Xml`, filled in by a classmethod, raised AttributeError)."""
    classes = {
        node.name: node
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }

    def declared(cls: ast.ClassDef) -> set[str]:
        names = set()
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if getattr(node.value, "id", "") == "self":
                    names.add(node.attr)
        for base in cls.bases:
            if getattr(base, "id", "") in classes:
                names |= declared(classes[base.id])  # type: ignore[attr-defined]
        return names

    missing = []
    for cls in classes.values():
        for node in cls.body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__slots__":
                have = declared(cls)
                missing += [
                    f"{cls.name}.{n}" for n in ast.literal_eval(node.value) if n not in have
                ]
    return missing


def test_every_slot_of_a_compiled_class_is_declared() -> None:
    trees = {name: ast.parse((ROOT / "runtime" / f"{name}.py").read_text()) for name in MODULES}
    assert not _undeclared_slots(trees)


def test_the_slot_check_finds_the_pattern() -> None:
    bad = (
        "class A:\n    __slots__ = ('a', 'b')\n    b: int\n"
        "    @classmethod\n    def of(cls):\n        made = cls()\n        made.a = 1\n"
    )
    assert _undeclared_slots({"m": ast.parse(bad)}) == ["A.a"]
    good = bad.replace("made = cls()", "made = cls()\n        self.a = 0")
    assert _undeclared_slots({"m": ast.parse(good)}) == []


def _closed_bases(sources: dict[str, str], compiled: list[str]) -> list[str]:
    """`module.Class(Base)` of every class of a Python (not compiled) module in `sources`
    whose base it imports from a compiled module that does not let Python subclass it
    (`@mypyc_attr(allow_interpreted_subclasses=True)`): compiled, the subclass is made
    and its first instance raises "interpreted classes cannot inherit from compiled"."""
    open_classes: dict[str, set[str]] = {}
    for name in compiled:
        tree = ast.parse(sources[name])
        open_classes[name] = {
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            and any(
                isinstance(d, ast.Call)
                and any(
                    k.arg == "allow_interpreted_subclasses" and getattr(k.value, "value", 0)
                    for k in d.keywords
                )
                for d in node.decorator_list
            )
        }
    found = []
    for module, source in sources.items():
        if module in compiled:
            continue
        tree = ast.parse(source)
        imported = {
            alias.asname or alias.name: node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in compiled
            for alias in node.names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    origin = imported.get(getattr(base, "id", ""))
                    if origin is not None and base.id not in open_classes[origin]:  # type: ignore[attr-defined]
                        found.append(f"{module}.{node.name}({base.id})")  # type: ignore[attr-defined]
    return found


def test_no_python_class_subclasses_a_closed_compiled_one() -> None:
    sources = {path.stem: path.read_text() for path in (ROOT / "runtime").glob("*.py")}
    assert not _closed_bases(sources, MODULES)


def test_the_subclass_check_finds_the_pattern() -> None:
    compiled = {"deltas": "class DeltaBuffer:\n    pass\n"}
    python = {"trace": "from .deltas import DeltaBuffer\nclass T(DeltaBuffer):\n    pass\n"}
    assert _closed_bases({**compiled, **python}, ["deltas"]) == ["trace.T(DeltaBuffer)"]
    opened = "@mypyc_attr(allow_interpreted_subclasses=True)\n" + compiled["deltas"]
    assert _closed_bases({"deltas": opened, **python}, ["deltas"]) == []


# ---------------------------------------------------------------- the fallback


def _info(directory: Path) -> str:
    env = _env(False)
    env["TOOLGRAMMAR_COMPILED_DIR"] = str(directory)
    run = subprocess.run(
        [sys.executable, "-m", "toolgrammar", "info"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT / "tests",
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_a_build_of_other_sources_or_for_another_interpreter_is_not_used(tmp_path: Path) -> None:
    import importlib.machinery

    assert "runtime: pure (pure Python: no compiled build)" in _info(tmp_path)
    manifest = {
        "modules": MODULES,
        "sources": "0" * 64,  # built before an edit
        "cache_tag": sys.implementation.cache_tag,
        "ext_suffix": importlib.machinery.EXTENSION_SUFFIXES[0],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert "runtime: pure (pure Python: the compiled build is stale" in _info(tmp_path)
    manifest["sources"] = toolgrammar.runtime.sources_digest()
    manifest["cache_tag"] = "cpython-0"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert "is for another interpreter" in _info(tmp_path)
    manifest["cache_tag"] = sys.implementation.cache_tag  # but no extension module in it
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert "runtime: pure (pure Python: the compiled build does not import" in _info(tmp_path)
