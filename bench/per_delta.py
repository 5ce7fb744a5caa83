"""Per-delta cost of `StreamParser.feed` as one model output grows.

What it measures
----------------
For every family and every stream shape, one output text is built up to the
largest size (default 256K chars) in the family's own markup, then fed to a fresh
`StreamParser` in fixed-size deltas (default 16 chars), timing each `feed` with
`time.perf_counter_ns`. The cost "at size N" is the median time of the deltas that end
in the last 1K chars before the N-char mark (64 deltas at 16 chars), so one stream
gives every size bucket. A parser whose work per delta is independent of what came
before shows the same number in every column; one that re-reads what it has already
parsed (seed 004: vLLM's Qwen3 converter re-scanning every closed parameter) shows a
cost that grows with the column.

The shapes (loop, long_string, many_params, many_calls) and their texts are `streams.py`'s,
written from each family's grammar.

Noise control: a warm-up pass, `gc.disable()` during timed loops, and the best (lowest)
of --repeat runs for each bucket. Peak memory is taken in a separate tracemalloc pass
(tracemalloc slows allocation, so it never runs during timings). Every run's streamed
result is checked against the whole-output `parse()` and the arguments the stream was
built from; any mismatch aborts.

How to read the output
----------------------
One table per family; a row per shape. The size columns are the median µs per delta at
that output size; `p99@N` is the 99th percentile over the deltas of the last 16K chars
before the largest mark; `ratio` is last size / first size (about 1.0 means flat, > 1.5
is flagged `!`); `parse ms` is one `parse()` of the whole largest text; `peak MB` is the
tracemalloc peak while streaming it. A cell marked `*` is a median above 20 µs. The
summary line per family gives the worst ratio and the median over all its buckets.

    python bench/per_delta.py [--families ...] [--sizes 1K,4K,16K,64K,256K] [--delta 16]
                              [--repeat 3] [--json out.json] [--profile FAMILY:SHAPE]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from pathlib import Path

import toolgrammar
import toolgrammar.runtime
from streams import SHAPES as SHAPE_BUILDERS
from streams import Stream, build_stream, load_tools

WINDOW = 1024  # chars before a size mark whose deltas make that bucket
P99_WINDOW = 16 * 1024  # chars before the largest mark whose deltas make the p99
FLAG_RATIO = 1.5
FLAG_MEDIAN_US = 20.0
# one family per argument dialect and region kind: XML params (newline-trimmed, pairs with a
# value opener, flagged keys), JSON, JSON carrying the name, nested elements, channel messages,
# key:value, Python calls, JSON arrays of calls
FAMILIES = (
    "qwen3_coder", "hermes", "kimi_k2", "glm45", "deepseek_v4", "minimax_m3", "muse",
    "gemma4", "pythonic", "jamba",
)  # fmt: skip
SHAPES = tuple(SHAPE_BUILDERS)

# --------------------------------------------------------------------------- correctness


class Mismatch(Exception):
    """The streamed result is not the whole-output result, or not what was written."""


def check(stream: Stream, deltas: list[toolgrammar.Delta], finish: str | None, tools: list) -> None:
    streamed = toolgrammar.assemble(deltas, finish)
    whole = toolgrammar.parse(stream.family, stream.text, tools, ids="sequential")
    where = f"{stream.family}/{stream.shape} ({len(stream.text)} chars)"
    if streamed.model_dump() != whole.model_dump():
        raise Mismatch(f"{where}: streamed message differs from parse()")
    if streamed.content or streamed.reasoning:
        raise Mismatch(f"{where}: unexpected content/reasoning {streamed.content!r:.80}")
    got = []
    for call in streamed.tool_calls:
        try:
            args = json.loads(call.function.arguments)
        except ValueError as error:
            raise Mismatch(f"{where}: call {call.id} arguments are not JSON: {error}") from None
        if not isinstance(args, dict):
            raise Mismatch(f"{where}: call {call.id} arguments are not an object")
        got.append((call.function.name, args))
    if got != stream.expected:
        raise Mismatch(
            f"{where}: parsed {len(got)} calls, expected {len(stream.expected)}; "
            f"first difference: {_first_difference(got, stream.expected)}"
        )


def _first_difference(got: list, expected: list) -> str:
    for index, ((name, args), (want_name, want)) in enumerate(zip(got, expected)):
        if name != want_name:
            return f"call {index}: name {name!r}, expected {want_name!r}"
        if args != want:
            keys = [k for k in {**args, **want} if args.get(k, None) != want.get(k, None)]
            key = keys[0] if keys else "?"
            return (
                f"call {index}: {len(keys)} argument(s) differ, first {key!r}: "
                f"got {str(args.get(key, '<missing>'))[:80]!r}, "
                f"expected {str(want.get(key, '<missing>'))[:80]!r}"
            )
    return "the number of calls"


# --------------------------------------------------------------------------- measuring


def chunks_of(text: str, delta: int) -> list[str]:
    return [text[i : i + delta] for i in range(0, len(text), delta)]


def timed_run(
    stream: Stream, tools: list, delta: int
) -> tuple[list[int], list[toolgrammar.Delta], str | None]:
    """Stream the text once; the ns of every feed, the deltas, the finish reason."""
    chunks = chunks_of(stream.text, delta)
    times = [0] * len(chunks)
    out: list[toolgrammar.Delta] = []
    parser = toolgrammar.StreamParser(stream.family, tools, ids="sequential")
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for i, chunk in enumerate(chunks):
            start = clock()
            got = parser.feed(chunk)
            times[i] = clock() - start
            out += got
        out += parser.finish("stop")
    finally:
        gc.enable()
    return times, out, parser.finish_reason


def window(times: list[int], delta: int, first: int, last: int) -> list[int]:
    """The times of the deltas whose end offset lies in (first, last]."""
    lo = max(0, first // delta)  # delta i ends at (i + 1) * delta
    hi = min(len(times), last // delta)
    return times[lo:hi]


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def peak_memory_mb(stream: Stream, tools: list, delta: int) -> float:
    """tracemalloc peak while streaming the text (deltas dropped, as a server sends them)."""
    chunks = chunks_of(stream.text, delta)
    parser = toolgrammar.StreamParser(stream.family, tools, ids="sequential")
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish("stop")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


def parse_ms(stream: Stream, tools: list, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            toolgrammar.parse(stream.family, stream.text, tools, ids="sequential")
            best = min(best, time.perf_counter_ns() - start)
        finally:
            gc.enable()
    return best / 1e6


@dataclass
class ShapeResult:
    family: str
    shape: str
    chars: int
    deltas: int
    median_us: dict[str, float]  # size label -> best-of-runs median µs/delta
    p99_us: float
    ratio: float
    stream_ms: float  # best total feed time of the whole text
    parse_ms: float
    peak_mb: float
    flags: list[str] = field(default_factory=list)


def measure(
    family: str, shape: str, sizes: list[int], delta: int, repeat: int, tools: list
) -> ShapeResult:
    stream = build_stream(family, shape, max(sizes))
    # warm-up: imports, schema compilation, regex caches, branch paths
    warm = Stream(family, shape, stream.text[: min(len(stream.text), 16 * 1024)], [])
    timed_run(warm, tools, delta)

    best_median = {size: float("inf") for size in sizes}
    best_p99 = float("inf")
    best_total = float("inf")
    top = max(sizes)
    for _ in range(repeat):
        times, deltas, finish = timed_run(stream, tools, delta)
        check(stream, deltas, finish, tools)
        for size in sizes:
            best_median[size] = min(
                best_median[size], statistics.median(window(times, delta, size - WINDOW, size))
            )
        best_p99 = min(best_p99, percentile(window(times, delta, top - P99_WINDOW, top), 0.99))
        best_total = min(best_total, sum(times))
        del deltas

    medians = {label(size): best_median[size] / 1e3 for size in sizes}
    first, last = best_median[min(sizes)], best_median[top]
    result = ShapeResult(
        family=family,
        shape=shape,
        chars=len(stream.text),
        deltas=len(chunks_of(stream.text, delta)),
        median_us=medians,
        p99_us=best_p99 / 1e3,
        ratio=last / first if first else float("inf"),
        stream_ms=best_total / 1e6,
        parse_ms=parse_ms(stream, tools, repeat),
        peak_mb=peak_memory_mb(stream, tools, delta),
    )
    if result.ratio > FLAG_RATIO:
        result.flags.append(f"ratio {result.ratio:.2f} > {FLAG_RATIO}")
    slow = [size for size, us in medians.items() if us > FLAG_MEDIAN_US]
    if slow:
        result.flags.append(f"median > {FLAG_MEDIAN_US:g} µs at {', '.join(slow)}")
    return result


def profile(family: str, shape: str, size: int, delta: int, tools: list, top: int = 25) -> str:
    """cProfile of streaming one shape to `size`, the heaviest functions by own time."""
    stream = build_stream(family, shape, size)
    chunks = chunks_of(stream.text, delta)
    parser = toolgrammar.StreamParser(family, tools, ids="sequential")
    profiler = cProfile.Profile()
    profiler.enable()
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish("stop")
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return f"== cProfile {family}/{shape}, {len(stream.text)} chars in {delta}-char deltas\n" + (
        out.getvalue()
    )


# --------------------------------------------------------------------------- reporting


def parse_size(text: str) -> int:
    text = text.strip().upper()
    if text.endswith("K"):
        return int(float(text[:-1]) * 1024)
    if text.endswith("M"):
        return int(float(text[:-1]) * 1024 * 1024)
    return int(text)


def label(size: int) -> str:
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)}M"
    if size % 1024 == 0:
        return f"{size // 1024}K"
    return str(size)


def format_table(family: str, results: list[ShapeResult], sizes: list[int]) -> str:
    labels = [label(size) for size in sizes]
    top = labels[-1]
    header = ["shape", *labels, f"p99@{top}", "ratio", "parse ms", "peak MB"]
    rows = [header]
    for r in results:
        cells = [r.shape]
        for lab in labels:
            us = r.median_us[lab]
            cells.append(f"{us:.1f}{'*' if us > FLAG_MEDIAN_US else ''}")
        cells.append(f"{r.p99_us:.1f}")
        cells.append(f"{r.ratio:.2f}{' !' if r.ratio > FLAG_RATIO else ''}")
        cells.append(f"{r.parse_ms:.1f}")
        cells.append(f"{r.peak_mb:.2f}")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        f"{family}  (µs per delta, median over the last {label(WINDOW)} chars before each size)"
    ]
    for n, row in enumerate(rows):
        first = row[0].ljust(widths[0])
        rest = "  ".join(cell.rjust(width) for cell, width in zip(row[1:], widths[1:]))
        lines.append(f"  {first}  {rest}")
        if n == 0:
            lines.append("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(lines)


def summary_line(family: str, results: list[ShapeResult]) -> str:
    worst = max(results, key=lambda r: r.ratio)
    overall = statistics.median(us for r in results for us in r.median_us.values())
    flags = [f"{r.shape}: {flag}" for r in results for flag in r.flags]
    if overall > FLAG_MEDIAN_US:
        flags.append(f"overall median > {FLAG_MEDIAN_US:g} µs")
    verdict = "FLAGGED: " + "; ".join(flags) if flags else "ok"
    return (
        f"{family}: worst ratio {worst.ratio:.2f} ({worst.shape}), "
        f"overall median {overall:.1f} µs/delta -- {verdict}"
    )


# --------------------------------------------------------------------------- main


def load_average() -> str:
    """The 1-minute load average: above the CPU count, timings are inflated."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Per-delta cost of toolgrammar's StreamParser.feed as an output grows.",
    )
    parser.add_argument(
        "--families", nargs="+", default=list(FAMILIES), help="families (space or comma separated)"
    )
    parser.add_argument(
        "--shapes", nargs="+", default=list(SHAPES), help=f"shapes, of {', '.join(SHAPES)}"
    )
    parser.add_argument("--sizes", default="1K,4K,16K,64K,256K", help="size marks, e.g. 1K,16K,64K")
    parser.add_argument("--delta", type=int, default=16, help="chars per feed (default 16)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per shape; best kept (3)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--build",
        choices=["pure", "compiled"],
        help="require this build of the runtime (TOOLGRAMMAR_PURE_PYTHON=1 runs pure Python"
        " where a compiled build is installed; docs/compiled.md); the header says which ran",
    )
    parser.add_argument(
        "--profile",
        metavar="FAMILY:SHAPE",
        action="append",
        default=[],
        help="only print a cProfile of streaming this shape to the largest size",
    )
    args = parser.parse_args(argv)
    args.families = [f for item in args.families for f in item.split(",") if f]
    args.shapes = [s for item in args.shapes for s in item.split(",") if s]
    args.sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s.strip()})
    unknown = [s for s in args.shapes if s not in SHAPE_BUILDERS]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    known = toolgrammar.families()
    unknown = [f for f in args.families if f not in known]
    if unknown:
        parser.error(f"unknown famil(ies) {', '.join(unknown)}; known: {', '.join(known)}")
    for target in args.profile:
        family, _, shape = target.partition(":")
        if family not in known or shape not in SHAPE_BUILDERS:
            parser.error(f"--profile takes FAMILY:SHAPE, e.g. qwen3_coder:loop, not {target!r}")
    if args.delta < 1 or args.repeat < 1:
        parser.error("--delta and --repeat must be at least 1")
    if args.delta > WINDOW:
        parser.error(f"--delta must be at most {WINDOW} (the window of a size bucket)")
    if not args.sizes or args.sizes[0] < WINDOW:
        parser.error(f"sizes must be at least {label(WINDOW)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    build = toolgrammar.runtime.build_name()
    if args.build and args.build != build:
        print(f"--build {args.build}, but {toolgrammar.runtime.compiled()['why']}", file=sys.stderr)
        return 2
    tools = load_tools()
    if args.profile:
        for target in args.profile:
            family, _, shape = target.partition(":")
            print(profile(family, shape, max(args.sizes), args.delta, tools))
        return 0

    print(
        f"toolgrammar per-delta cost: {args.delta}-char deltas, best of {args.repeat}, "
        f"Python {platform.python_version()}, {build} build, {os.cpu_count()} CPUs, "
        f"load {load_average()}"
    )
    all_results: list[ShapeResult] = []
    summaries = []
    for family in args.families:
        results = []
        for shape in args.shapes:
            try:
                results.append(measure(family, shape, args.sizes, args.delta, args.repeat, tools))
            except Mismatch as error:
                print(f"\nABORT: correctness check failed: {error}", file=sys.stderr)
                return 1
            except toolgrammar.RenderError as error:  # dots strips values: no long_string
                print(f"\n{family}/{shape} skipped, its markup cannot write it: {error!s:.100}")
        if not results:
            continue
        print()
        print(format_table(family, results, args.sizes))
        summaries.append(summary_line(family, results))
        all_results += results
    print()
    print(
        f"summary (load {load_average()}; `*` median > {FLAG_MEDIAN_US:g} µs, `!` ratio > {FLAG_RATIO})"
    )
    for line in summaries:
        print(f"  {line}")

    if args.json:
        payload = {
            "delta": args.delta,
            "repeat": args.repeat,
            "sizes": [label(s) for s in args.sizes],
            "window_chars": WINDOW,
            "p99_window_chars": P99_WINDOW,
            "python": platform.python_version(),
            "build": build,
            "cpus": os.cpu_count(),
            "load_after": load_average(),
            "results": [asdict(r) for r in all_results],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
