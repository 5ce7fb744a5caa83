"""Build the opt-in compiled runtime: the hot modules of runtime/ compiled with mypyc.

    pip install -e '.[compiled]'          # mypy (mypyc) at the pinned version, and a C compiler
    python scripts/build_compiled.py      # build (cached) and install into runtime/_compiled/
    python scripts/build_compiled.py --no-install   # build only; print the build's directory
    python scripts/build_compiled.py --remove       # back to pure Python

The build is cached in .cache/mypyc-KEY/, KEY a hash of every runtime source, this script
and the mypy version: a rerun with nothing changed only copies. runtime/__init__.py uses a
build only if it was made from the sources on disk for this interpreter (else pure Python);
TOOLGRAMMAR_PURE_PYTHON=1 forces pure Python. docs/compiled.md says why and what is checked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ["TOOLGRAMMAR_PURE_PYTHON"] = "1"  # runtime/ imported below only for its digest
sys.path.insert(0, str(ROOT))
RUNTIME = ROOT / "runtime"
INSTALLED = RUNTIME / "_compiled"
GROUP = "toolgrammar.runtime._native"  # shared library toolgrammar.runtime._native__mypyc

# The hot modules by profile (bench/per_delta.py --profile FAMILY:SHAPE over the shapes of
# hermes, kimi_k2, qwen3_coder, pythonic, gemma4, jamba): the engine's per-delta loop and the
# readers and scanners it calls. Everything else stays Python (and is imported by these as
# Python). A module listed here must avoid the patterns docs/compiled.md lists
# (tests/test_compiled.py checks them).
MODULES = (
    "json_stream",
    "json_args",
    "json_call",
    "json_bounded",
    "markers",
    "tables",
    "engine",
    "call_head",
    "item_readers",
    "dialect_sink",
    "output_end",
    "call_outcome",
    # the argument readers: the XML ones and their base (session 14), and the Python ones that
    # subclass it (left Python, they ran slower compiled than pure: every attribute they read
    # of a compiled object is a descriptor call, docs/compiled.md)
    "batched",
    "xml_params",
    "xml_elements",
    "keyvalue_args",
    "kv_lines",
    "python_calls",
    # the deltas a feed hands out (their pydantic `Message` is in message.py, Python), and the
    # whole-output route of parse()
    "deltas",
    "whole_output",
    # the engine's records, read and written by the compiled engine on every delta (Python,
    # each read of one of their slots was a generic attribute look-up: session 15), and
    # the `sendable` check every call's id, name and arguments pass
    "call_record",
    "state",
    "unicode",
)

# mypy's checks that the runtime's code does not satisfy in places it is sound at run time
# (mixins typed `self: Engine`, Optional narrowed by the code's own logic). mypyc compiles
# with the types as declared; the agreement test (tests/test_compiled.py) is what says the
# compiled build behaves exactly like the Python one.
MYPY_FLAGS = (
    # code mypy thinks unreachable is where its narrowing is stale (an attribute narrowed
    # before a call that changes it): compiled, such a read raises TypeError, so it is an error
    "--warn-unreachable",
    "--ignore-missing-imports",
    "--follow-imports=silent",
    "--disable-error-code=misc",
    "--disable-error-code=union-attr",
    "--disable-error-code=attr-defined",
    "--disable-error-code=arg-type",
    "--disable-error-code=assignment",
    "--disable-error-code=index",  # (an Optional indexed where the code's logic rules None out)
)


MODULES_ENV = "TOOLGRAMMAR_COMPILE_MODULES"
"""Comma-separated modules to compile instead of MODULES: to measure what a module is worth
(the tests and the test command build MODULES)."""


def modules() -> tuple[str, ...]:
    """MODULES, or the list TOOLGRAMMAR_COMPILE_MODULES names (an experiment)."""
    chosen = os.environ.get(MODULES_ENV, "")
    return tuple(name.strip() for name in chosen.split(",") if name.strip()) or MODULES


def mypy_version() -> str:
    try:
        from mypy.version import __version__
    except ImportError:
        sys.exit("build_compiled: mypy is not installed: pip install -e '.[compiled]'")
    return __version__


def build_key() -> str:
    from runtime import sources_digest  # the digest runtime/__init__.py checks at import

    digest = hashlib.sha256()
    for part in (
        sources_digest(str(RUNTIME)),
        mypy_version(),
        sys.implementation.cache_tag,
        EXTENSION_SUFFIXES[0],
        Path(__file__).read_text(),
        os.environ.get("MYPYC_OPT_LEVEL", ""),
        ",".join(modules()),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:16]


def build(out: Path, jobs: int, verbose: bool) -> None:
    """Compile MODULES into out/lib/ (extension modules and manifest.json only)."""
    stage = out / "stage"
    shutil.rmtree(out, ignore_errors=True)
    package = stage / "toolgrammar" / "runtime"
    package.mkdir(parents=True)
    (stage / "toolgrammar" / "__init__.py").write_text("")  # the real one imports the world
    for source in RUNTIME.glob("*.py"):
        shutil.copyfile(source, package / source.name)
    setup = stage / "setup_mypyc.py"
    setup.write_text(
        "from setuptools import setup\n"
        "from mypyc.build import mypycify\n"
        f"paths = {[f'toolgrammar/runtime/{name}.py' for name in modules()]!r}\n"
        f"ext = mypycify({list(MYPY_FLAGS)!r} + paths,"
        f" opt_level={os.environ.get('MYPYC_OPT_LEVEL', '3')!r}, multi_file=True,"
        f" group_name={GROUP!r})\n"
        # mypyc writes a dotted group's headers under build/toolgrammar/runtime/ but includes
        # them by their bare name from each module's own C file (multi_file)
        "for e in ext: e.include_dirs.append('build/toolgrammar/runtime')\n"
        "setup(name='toolgrammar_compiled', ext_modules=ext)\n"
    )
    command = [sys.executable, setup.name, "build_ext", "--inplace", f"--parallel={jobs}"]
    result = subprocess.run(
        command, cwd=stage, capture_output=not verbose, text=True, env={**os.environ}
    )
    if result.returncode:
        if not verbose:
            sys.stderr.write(result.stdout[-20000:] + result.stderr[-20000:])
        sys.exit(f"build_compiled: mypyc failed (exit {result.returncode})")
    lib = out / "lib"
    lib.mkdir()
    suffix = EXTENSION_SUFFIXES[0]
    for built in package.glob(f"*{suffix}"):
        shutil.copyfile(built, lib / built.name)
    missing = [name for name in modules() if not (lib / f"{name}{suffix}").exists()]
    if missing or not (lib / f"_native__mypyc{suffix}").exists():
        sys.exit(f"build_compiled: no extension module built for {missing or 'the shared lib'}")
    from runtime import sources_digest

    (lib / "manifest.json").write_text(
        json.dumps(
            {
                "modules": list(modules()),
                "sources": sources_digest(str(RUNTIME)),
                "mypy": mypy_version(),
                "cache_tag": sys.implementation.cache_tag,
                "ext_suffix": suffix,
                "platform": sysconfig.get_platform(),
            },
            indent=1,
        )
    )
    shutil.rmtree(stage, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-install", action="store_true", help="build (cached) only")
    parser.add_argument("--remove", action="store_true", help="remove runtime/_compiled/")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.remove:
        shutil.rmtree(INSTALLED, ignore_errors=True)
        print("removed", INSTALLED)
        return
    out = ROOT / ".cache" / f"mypyc-{build_key()}"
    lib = out / "lib"
    if not (lib / "manifest.json").exists():
        started = time.monotonic()
        print(f"build_compiled: compiling {len(modules())} modules into {out}", file=sys.stderr)
        build(out, args.jobs, args.verbose)
        print(f"build_compiled: built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    if args.no_install:
        print(lib)
        return
    shutil.rmtree(INSTALLED, ignore_errors=True)
    shutil.copytree(lib, INSTALLED)
    print(INSTALLED)


if __name__ == "__main__":
    main()
