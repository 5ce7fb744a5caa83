"""What makes a fresh parser's 1K bucket cost more than its 16K one, per stream.

The side-by-side harness (`side_by_side.timed`) gives a size mark the median µs of the
deltas in the 1K chars before it. A fresh parser's first 1K holds its first call, and a
stream of one call written again and again is periodic: its deltas cost a few distinct
amounts (a call's name delta several times its parameter's), so the median sits on one of
those levels, and a window with a few more costly deltas in it moves it up a level. This
tells the three parts apart, timing ours exactly as `timed` does (the stream's first 2K
fed untimed to a throw-away parser after a `gc.collect()`, then a fresh parser timed delta
by delta, best of `--repeat` per delta; the same chunks at token boundaries):

- `first call`: mean µs per delta of the first call's deltas against the 16K bucket's mean
  (the work a parser does once: tables and memos made at its first call of a tool);
- `by level`: per delta text seen in both buckets (one level of the period), the 1K
  bucket's median over the 16K bucket's: how much slower the same delta is early on;
- `median`: the 1K and 16K medians and their ratio (the harness's cells), and the 1K median
  with the first call's deltas left out, which says how much of the ratio is the
  bucket's make-up rather than any delta being slower.

    python bench/first_deltas.py minicpm5:many_calls iquest_q1:many_calls [--repeat 7]

Wall clock on a shared machine: compare rows of one run only.
"""

from __future__ import annotations

import argparse
import bisect
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import side_by_side as sbs  # noqa: E402
import streams  # noqa: E402

import toolgrammar  # noqa: E402

TOP = 16 * 1024


def timed_deltas(family: str, chunks: list[sbs.Chunk], repeat: int) -> list[float]:
    """µs per delta of a fresh parser, best of `repeat`, timed as `side_by_side.timed` does."""
    tools = streams.load_tools()
    ends = [c.end for c in chunks]
    warm = chunks[: bisect.bisect_right(ends, sbs.WARM_CHARS)]
    now = time.perf_counter_ns
    best: list[int] | None = None
    for _ in range(repeat):
        clock = [0] * len(chunks)
        gc.collect()
        gc.disable()
        try:
            for run, timing in ((warm, False), (chunks, True)):
                parser = toolgrammar.StreamParser(
                    family, tools, ids="sequential", reasoning_open=False
                )
                for i, chunk in enumerate(run):
                    start = now()
                    parser.feed(chunk.text)
                    if timing:
                        clock[i] = now() - start
        finally:
            gc.enable()
        best = clock if best is None else [min(a, b) for a, b in zip(best, clock)]
    assert best is not None
    return [ns / 1e3 for ns in best]


def first_call_end(chunks: list[sbs.Chunk], text: str) -> int:
    """The number of deltas up to the one that ends the stream's first call: where the
    stream's opening text is next written (its first 12 characters), or the first 64."""
    again = text.find(text[:12], 12)
    return bisect.bisect_left([c.end for c in chunks], again) if again > 0 else 64


def row(family: str, shape: str, repeat: int) -> str:
    stream = streams.build_stream(family, shape, TOP)
    tok = sbs.Tokens(sbs.special_tokens(family), [stream.text])
    chunks = sbs.chunks_of(tok.tokens(stream.text), sbs.DELTA_CHARS)
    us = timed_deltas(family, chunks, repeat)
    ends = [c.end for c in chunks]
    one_k = range(0, bisect.bisect_right(ends, 1024))
    top = range(bisect.bisect_right(ends, TOP - 1024), bisect.bisect_right(ends, TOP))
    first = first_call_end(chunks, stream.text)
    levels = []
    for text in {chunks[i].text for i in one_k} & {chunks[i].text for i in top}:
        early = [us[i] for i in one_k if i >= first and chunks[i].text == text]
        late = [us[i] for i in top if chunks[i].text == text]
        if early and late:
            levels.append(statistics.median(early) / statistics.median(late))
    m1 = statistics.median(us[i] for i in one_k)
    m16 = statistics.median(us[i] for i in top)
    rest = [us[i] for i in one_k if i >= first] or [m1]
    return (
        f"{family}:{shape:12} first call {statistics.mean(us[:first]):5.2f} vs later "
        f"{statistics.mean(us[i] for i in top):5.2f} us/delta ({first} deltas) | by level "
        f"{statistics.median(levels) if levels else float('nan'):4.2f}x | median 1K {m1:5.2f} "
        f"16K {m16:5.2f} ratio {m1 / m16:4.2f}; 1K without the first call "
        f"{statistics.median(rest):5.2f} ({statistics.median(rest) / m16:4.2f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="+", help="FAMILY:SHAPE")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs, best kept (7)")
    args = parser.parse_args(argv)
    for spec in args.rows:
        family, shape = spec.split(":")
        print(row(family, shape, args.repeat), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
