"""Hostile repeats at two sizes: does a parse cost what the output is long, or more?

Opcode counts and the tests' counted scans see the runtime's own work, not what the C
code under it does (`str.count` inside a `JSONDecodeError`, a buffer copied per call shape
tried, a `find` to the end of the output per `{`). This times it: for every grammar, an
output made of one short text repeated, parsed whole and streamed in 16-char deltas, at a
small and a large size (default 64K and 1M characters). Linear work makes the large case
cost the size ratio (16x); quadratic work makes it cost its square (256x). A ratio above
twice the size ratio (`--bound`, default 32x) is flagged `!` and fails the run.

The repeated texts (`patterns`), per grammar:
- `marker`: each marker the grammar declares (`markup_literals`), whole;
- `half`: each proper prefix of each marker (`<tool_ca`);
- `opener`: what the grammar writes before a call's name (hermes `<tool_call>\\n{"name": "`),
  the same without its quote, its JSON object part alone (`{"name": `), with the start of a
  name after it, with a whole name after it, and a call cut inside its value.

    python bench/hostile.py                                  # all grammars, 64K and 1M
    python bench/hostile.py --families hermes mistral --kinds marker opener
    python bench/hostile.py --sizes 4K,64K --modes whole --over   # only the flagged lines
    nice -n 10 python bench/hostile.py --jobs 2 --json bench/out/hostile.json  # the ladder
    python bench/hostile.py --sizes 1M --modes whole --kinds marker opener --top 15 --quiet

One size (`--sizes 1M`) times only that size (the least of `--repeat` runs), no ratio: the
cost of a megabyte of each pattern; `--top N` lists the N slowest rows of each mode at the
end, `--quiet` prints only that and the summary.

Two texts that repeat to the same outputs at both sizes (`>` and `>>`) are measured once
(the row says which pattern it is the same input as). `--jobs N` measures N grammars at a
time in worker processes (CPU time is per process, so the numbers do not change), rows
printed in the same order.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import toolgrammar
from toolgrammar.runtime.dialects import markup_literals
from per_delta import label, parse_size
from streams import load_tools, spec_of

DELTA = 16
WARM_UP = 4096  # characters of the text parsed once, untimed, before a row's runs
KINDS = ("marker", "half", "opener")
MODES = ("whole", "stream")
# the prompt opened nothing: the output is content, where a call may begin anywhere
OPTIONS: dict[str, Any] = {"reasoning_open": False, "block_open": False}
_CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}


def grammars() -> list[str]:
    """One registered name per grammar (aliases parse the same)."""
    seen: set[int] = set()
    names = []
    for family in toolgrammar.families():
        spec = toolgrammar.get_spec(family)
        if id(spec) not in seen:
            seen.add(id(spec))
            names.append(family)
    return names


def patterns(family: str, kinds: tuple[str, ...] = KINDS) -> dict[str, str]:
    """The repeated texts of `family`, by a label that says what each is."""
    out: dict[str, str] = {}  # text -> label: a text two ways is measured once

    def add(label: str, text: str) -> None:
        if text and text not in out:
            out[text] = label

    literals = sorted(markup_literals(spec_of(family)), key=lambda lit: (-len(lit), lit))
    if "marker" in kinds:
        for lit in literals:
            add(f"marker {lit!r}", lit)
    if "half" in kinds:
        for lit in literals:
            for cut in range(1, len(lit)):
                add(f"half {lit[:cut]!r}", lit[:cut])
    if "opener" in kinds:
        for kind, text in openers(family).items():
            add(f"{kind} {text!r}", text)
    return {label: text for text, label in out.items()}


def openers(family: str) -> dict[str, str]:
    """What the grammar writes before a call's name, and texts made from it."""
    call = toolgrammar.render(family, [_CALL])
    head = call[: call.index("get_weather")]
    out = {"opener": head, "opener, no quote": head.rstrip('"')}
    brace = head.find("{")
    if brace > 0:
        out["object opener"] = head[brace:]
        out["object opener, no quote"] = head[brace:].rstrip('"')
    out["opener, name cut"] = head + "get_w"
    out["opener, name"] = head + "get_weather"
    out["call cut in value"] = call[: call.index("Paris") + 2]
    return {kind: text for kind, text in out.items() if text.strip()}


def repeated(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def run_once(family: str, text: str, mode: str, tools: list[dict[str, Any]]) -> float:
    """CPU seconds for one whole parse, or one stream of 16-char deltas and its finish (the
    garbage collector off: a collection would land in one run and not another)."""
    gc.disable()
    try:
        start = time.process_time()
        if mode == "whole":
            toolgrammar.parse(family, text, tools, **OPTIONS)
        else:
            parser = toolgrammar.StreamParser(family, tools, **OPTIONS)
            for i in range(0, len(text), DELTA):
                parser.feed(text[i : i + DELTA])
            parser.finish()
        return time.process_time() - start
    finally:
        gc.enable()


def ratio(
    family: str,
    unit: str,
    mode: str,
    sizes: tuple[int, ...],
    tools: list[dict[str, Any]],
    bound: float,
    repeat: int = 3,
) -> tuple[float, float, float]:
    """(small seconds, large seconds, their ratio), each the least of up to `repeat`
    attempts: attempts stop once the ratio is within `bound` (noise only ever adds time, so
    a ratio under it is settled; one over it is measured again, over `SETTLE` of runs)."""
    if len(sizes) == 1:  # one size: its least time, no ratio
        text = repeated(unit, sizes[0])
        run_once(family, repeated(unit, min(sizes[0], WARM_UP)), mode, tools)
        fastest = min(run_once(family, text, mode, tools) for _ in range(repeat))
        return fastest, fastest, 1.0
    small_text, large_text = (repeated(unit, size) for size in sizes)
    # (a first parse compiles the grammar's tables and the regexes the text meets: a short
    # one does, without costing a third of the small runs)
    run_once(family, repeated(unit, min(sizes[0], WARM_UP)), mode, tools)
    small = large = float("inf")
    for attempt in range(repeat):
        settle = SETTLE if attempt else 0.0  # a ratio over the bound is measured longer
        small = min(small, least(family, small_text, mode, tools, 2, settle))
        large = min(large, least(family, large_text, mode, tools, 1, settle))
        if large <= bound * small:
            break
    return small, large, large / small


SETTLE = 0.01
"""CPU seconds of runs a second attempt spends on each size at least: a run of 0.1 ms is one
scheduler tick or cache flush from twice its cost, so once a ratio is over the bound a short
text is run until its runs add up to this (about a hundred runs), a long one once or twice."""


def least(
    family: str, text: str, mode: str, tools: list[dict[str, Any]], runs: int, settle: float
) -> float:
    """The least CPU time of at least `runs` runs, and of as many as fit in `settle`."""
    best = spent = 0.0
    done = 0
    while done < runs or spent < settle:
        took = run_once(family, text, mode, tools)
        best = took if done == 0 else min(best, took)
        spent += took
        done += 1
    return best


def ladder(
    families: list[str],
    kinds: tuple[str, ...],
    modes: tuple[str, ...],
    sizes: tuple[int, int],
    bound: float,
    repeat: int,
    jobs: int = 1,
) -> Iterator[dict[str, Any]]:
    """One row per grammar, pattern and mode; `jobs` grammars at a time."""
    work = [(family, kinds, modes, sizes, bound, repeat) for family in families]
    if jobs <= 1:
        for args in work:
            yield from family_rows(*args)
        return
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for rows in pool.imap(_family_rows, work):
            yield from rows


def _family_rows(args: tuple) -> list[dict[str, Any]]:
    return list(family_rows(*args))


def family_rows(
    family: str,
    kinds: tuple[str, ...],
    modes: tuple[str, ...],
    sizes: tuple[int, int],
    bound: float,
    repeat: int,
) -> Iterator[dict[str, Any]]:
    """The rows of one grammar: each pattern in each mode; a pattern whose texts at both
    sizes are another's (`>` and `>>`) is that one's row again, not measured twice."""
    tools = load_tools()
    measured: dict[tuple[str, str], str] = {}  # (small text, large text) -> the pattern
    for name, unit in patterns(family, kinds).items():
        texts = tuple(repeated(unit, size) for size in sizes)
        same = measured.setdefault(texts, name)
        for mode in modes:
            if same != name:
                continue
            small, large, times = ratio(family, unit, mode, sizes, tools, bound, repeat)
            yield {
                "family": family,
                "pattern": name,
                "mode": mode,
                "small": small,
                "large": large,
                "ratio": times,
            }
        if same != name:
            yield {"family": family, "pattern": name, "same_as": same}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="*", default=None, help="default: every grammar")
    parser.add_argument("--kinds", nargs="*", default=list(KINDS), choices=KINDS)
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    parser.add_argument(
        "--sizes", default="64K,1M", help="the small and the large size, or one size (no ratio)"
    )
    parser.add_argument("--bound", type=float, default=None, help="default: 2x the size ratio")
    parser.add_argument("--repeat", type=int, default=3, help="runs at most, while over bound")
    parser.add_argument("--over", action="store_true", help="print only the flagged rows")
    parser.add_argument("--top", type=int, default=0, help="list the N slowest rows per mode")
    parser.add_argument("--quiet", action="store_true", help="print no row as it is measured")
    parser.add_argument("--json", type=Path, default=None, help="write every row there")
    parser.add_argument("--jobs", type=int, default=1, help="grammars measured at a time")
    args = parser.parse_args(argv)
    sizes = tuple(parse_size(size) for size in args.sizes.split(","))
    small, large = sizes[0], sizes[-1]
    single = len(sizes) == 1
    bound = args.bound if args.bound is not None else 2 * large / small
    if single:
        bound = args.bound if args.bound is not None else float("inf")
    families = args.families or grammars()
    if single:
        print(f"ms per {label(large)} output, the least of {args.repeat} runs", flush=True)
        print(f"{'family':18} {'mode':6} {label(large):>9}  pattern")
    else:
        print(
            f"ms per {label(small)} and {label(large)} output; ratio over {bound:g} is flagged `!`",
            flush=True,
        )
        print(f"{'family':18} {'mode':6} {label(small):>9} {label(large):>9} {'ratio':>7}  pattern")
    rows, over = [], []
    worst: dict[str, dict[str, Any]] = {}
    rows_of = ladder(
        families,
        tuple(args.kinds),
        tuple(args.modes),
        sizes,
        bound,
        args.repeat,
        args.jobs,
    )
    same = 0
    for row in rows_of:
        if "same_as" in row:  # (its texts are another pattern's: measured there)
            same += 1
            if not (args.over or args.quiet):
                print(
                    f"{row['family']:18} {'':6} {'':>9} {'':>9} {'':>7}  {row['pattern']}: "
                    f"the same input as {row['same_as']}",
                    flush=True,
                )
            continue
        rows.append(row)
        flag = "!" if row["ratio"] > bound else " "
        if flag == "!":
            over.append(row)
        top = worst.get(row["mode"])
        if top is None or row["large"] > top["large"]:
            worst[row["mode"]] = row
        if flag == "!" or not (args.over or args.quiet):
            print(_row_line(row, single, flag), flush=True)
    for mode, row in sorted(worst.items()):
        print(
            f"slowest {mode} at {label(large)}: {row['family']} {row['pattern']}: "
            f"{row['large'] * 1e3:.0f} ms"
        )
    for mode in args.modes if args.top else ():
        slowest = sorted(
            (row for row in rows if row["mode"] == mode), key=lambda row: -row["large"]
        )[: args.top]
        print(f"the {len(slowest)} slowest {mode} at {label(large)}:")
        for row in slowest:
            print(_row_line(row, single, " "))
    top = max(rows, key=lambda row: row["ratio"], default=None)
    if top is not None and not single:
        print(f"highest ratio: {top['ratio']:.1f} ({top['family']} {top['mode']} {top['pattern']})")
    print(f"{len(rows)} rows, {len(over)} over the bound ({same} patterns the same input)")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 1 if over else 0


def _row_line(row: dict[str, Any], single: bool, flag: str) -> str:
    if single:
        return f"{row['family']:18} {row['mode']:6} {row['large'] * 1e3:9.1f}  {row['pattern']}"
    return (
        f"{row['family']:18} {row['mode']:6} {row['small'] * 1e3:9.1f} "
        f"{row['large'] * 1e3:9.1f} {row['ratio']:6.1f}{flag}  {row['pattern']}"
    )


if __name__ == "__main__":
    sys.exit(main())
