"""Machine instructions a delta (or a whole parse) costs, counted by valgrind's callgrind:
a count a busy machine does not move (±1% run to run), and, unlike `opcodes.py`'s bytecodes,
one that sees the C work too, so it compares the compiled build with pure Python, and a
build with another, where a wall clock on a loaded machine cannot.

    python bench/instructions.py deepseek_v3:many_calls inkling:many_params:1K
    python bench/instructions.py kimi_k2:many_calls --whole      # one parse() of the text
    TOOLGRAMMAR_PURE_PYTHON=1 python bench/instructions.py ...    # the pure build

Each row runs in a child process under `valgrind --tool=callgrind`, which counts only
inside `math.fsum()` (`--toggle-collect=math_fsum`): the timed streams are run by the `map`
an `fsum` call sums, so imports, the streams' building and two warm-up runs are not
counted. (Not `sorted()`, as before: callgrind counts inside every call of the toggle
function, and the imports call `sorted` hundreds of times: ~3.7M instructions a process
(kimi_k2's) were counted with the runs, divided among them; and a `sorted` inside a parse
stopped the count while it ran. Nothing imported or run here calls `fsum`.) A stream is
`streams.py`'s shape at SIZE (16K by default) in 16-character
deltas; a row is the parser's construction, every feed and `finish`, divided by the
deltas (or, with --whole, one `parse()`). Needs valgrind; about 20-40 s a row.

`--cold` runs `gc.collect()` before each counted run, outside the counted region (each run
is its own one-element `fsum`): the collection walks every object of the process, as the
whole-parse benches' does (`side_by_side.parse_times_ms`), so the run starts with what it
touches out of the caches. `--cache-sim` has callgrind simulate the caches too (its I1, D1
and last-level model of this machine) and prints the misses a run, first level
(instruction and data reads and writes) and last level: what a cold run pays beyond its
instructions, a count as steady as they are.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(spec: str, whole: bool, reps: int, cold: bool) -> None:
    """The measured process: warm up, then `reps` runs inside `math.fsum` (what is
    counted); `cold`: each run its own `fsum`, after a `gc.collect()` that is not counted."""
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
    if cold:
        for _ in range(reps):
            gc.collect()
            math.fsum(map(run, (0,)))
    else:
        math.fsum(map(run, range(reps)))
    print(f"{toolgrammar.runtime.build_name()} {len(deltas)}")


def count(
    spec: str, whole: bool, reps: int, cold: bool = False, cache: bool = False
) -> tuple[str, float, dict[str, float]]:
    """(build, instructions a delta or a parse, and with `cache` the simulated cache misses
    a run: first-level `L1`, last-level `LL`) of one row, in a child under callgrind."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no"]
        command += ["--cache-sim=yes"] if cache else []
        command += ["--toggle-collect=math_fsum", f"--callgrind-out-file={out}"]
        command += [sys.executable, __file__, "--child", spec, "--reps", str(reps)]
        command += ["--whole"] if whole else []
        command += ["--cold"] if cold else []
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        run = subprocess.run(command, capture_output=True, text=True, env=env)
        if run.returncode:
            raise SystemExit(f"{spec}: the child failed\n{run.stderr[-3000:]}")
        build, deltas = run.stdout.split()[-2:]
        lines = Path(out).read_text().splitlines()
        names = next(line for line in lines if line.startswith("events:")).split()[1:]
        summary = next(line for line in lines if line.startswith("summary:"))
    per = reps if whole else reps * int(deltas)
    events = [int(n) / per for n in summary.split()[1:]]
    misses: dict[str, float] = {}
    if cache:
        got = dict(zip(names, events))  # (callgrind's event names, its `events:` line)
        misses["L1"] = got["I1mr"] + got["D1mr"] + got["D1mw"]
        misses["LL"] = got["ILmr"] + got["DLmr"] + got["DLmw"]
    return build, events[0], misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="+", help="FAMILY:SHAPE[:SIZE] (SIZE 16K by default)")
    parser.add_argument("--whole", action="store_true", help="one parse() of the text")
    parser.add_argument("--reps", type=int, default=3, help="counted runs a row (3)")
    parser.add_argument("--cold", action="store_true", help="gc.collect() before each run")
    parser.add_argument("--cache-sim", action="store_true", help="count simulated cache misses")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.rows[0], args.whole, args.reps, args.cold)
        return 0
    if shutil.which("valgrind") is None:
        print("instructions.py needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    unit = "a parse" if args.whole else "a delta"
    for spec in args.rows:
        build, instructions, misses = count(spec, args.whole, args.reps, args.cold, args.cache_sim)
        line = f"{spec} ({build}{', cold' if args.cold else ''}): {instructions:,.0f} instructions"
        if misses:
            line += f", {misses['L1']:,.0f} L1 and {misses['LL']:,.0f} LL misses"
        print(f"{line} {unit}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
