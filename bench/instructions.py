"""Machine instructions a delta (or a whole parse) costs, counted by valgrind's callgrind:
a count a busy machine does not move (±1% run to run), and, unlike `opcodes.py`'s bytecodes,
one that sees the C work too, so it compares the compiled build with pure Python, and a
build with another, where a wall clock on a loaded machine cannot.

    python bench/instructions.py deepseek_v3:many_calls inkling:many_params:1K
    python bench/instructions.py kimi_k2:many_calls --whole      # one parse() of the text
    TOOLGRAMMAR_PURE_PYTHON=1 python bench/instructions.py ...    # the pure build

Each row runs in a child process under `valgrind --tool=callgrind`, which counts only
inside `sorted()` (`--toggle-collect=builtin_sorted`): the timed streams are run as the key
function of a `sorted` call, so imports, the streams' building and two warm-up runs are not
counted. A stream is `streams.py`'s shape at SIZE (16K by default) in 16-character
deltas; a row is the parser's construction, every feed and `finish`, divided by the
deltas (or, with --whole, one `parse()`). Needs valgrind; about 20-40 s a row.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(spec: str, whole: bool, reps: int) -> None:
    """The measured process: warm up, then `reps` runs inside `sorted` (what is counted)."""
    sys.path.insert(0, str(HERE))
    import streams
    from per_delta import parse_size

    import toolgrammar

    family, shape, size = (spec.split(":") + ["16K"])[:3]
    tools = streams.load_tools()
    text = streams.build_stream(family, shape, parse_size(size)).text
    deltas = [text[i : i + 16] for i in range(0, len(text), 16)]

    def run(_: int) -> int:
        if whole:
            toolgrammar.parse(family, text, tools, ids="sequential")
            return 0
        parser = toolgrammar.StreamParser(family, tools=tools)
        for delta in deltas:
            parser.feed(delta)
        parser.finish()
        return 0

    run(0)
    run(0)
    sorted(range(reps), key=run)
    print(f"{toolgrammar.runtime.build_name()} {len(deltas)}")


def count(spec: str, whole: bool, reps: int) -> tuple[str, float]:
    """(build, instructions a delta or a parse) of one row, in a child under callgrind."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no"]
        command += ["--toggle-collect=builtin_sorted", f"--callgrind-out-file={out}"]
        command += [sys.executable, __file__, "--child", spec, "--reps", str(reps)]
        command += ["--whole"] if whole else []
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        run = subprocess.run(command, capture_output=True, text=True, env=env)
        if run.returncode:
            raise SystemExit(f"{spec}: the child failed\n{run.stderr[-3000:]}")
        build, deltas = run.stdout.split()[-2:]
        summary = next(
            line for line in Path(out).read_text().splitlines() if line.startswith("summary:")
        )
    total = int(summary.split()[1]) / reps
    return build, total if whole else total / int(deltas)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="+", help="FAMILY:SHAPE[:SIZE] (SIZE 16K by default)")
    parser.add_argument("--whole", action="store_true", help="one parse() of the text")
    parser.add_argument("--reps", type=int, default=3, help="counted runs a row (3)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.rows[0], args.whole, args.reps)
        return 0
    if shutil.which("valgrind") is None:
        print("instructions.py needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    unit = "a parse" if args.whole else "a delta"
    for spec in args.rows:
        build, instructions = count(spec, args.whole, args.reps)
        print(f"{spec} ({build}): {instructions:,.0f} instructions {unit}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
