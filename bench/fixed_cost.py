"""The fixed cost of a parse and of a stream's start, per family (issue 31).

    python bench/fixed_cost.py                       # µs, warm and cold, bench families
    python bench/fixed_cost.py --opcodes             # bytecode instructions instead
    python bench/fixed_cost.py --families hermes --repeat 1001 --json bench/out/fixed.json

Columns: `parse()` of one `many_calls` call (get_weather, Paris, 3 days), of "hi there" (no
call), of the 1K and 16K many_calls texts; `StreamParser(family, tools)` alone, and with its
first 16-char delta of the one-call text fed. The tools are the bench's (`streams.py`), the
options `side_by_side.Ours`' (`ids="sequential"`, `reasoning_open=False`).

**warm**: median µs of back-to-back runs. **cold**: median µs of runs each after
`gc.collect()`, as `side_by_side.parse_times_ms` times every whole-output parse: a full
collection walks every object, which leaves the CPU caches cold (writing a 32 MB buffer does
the same; a generation 0 or 1 collection does not). Most of a single call's parse is then
cache misses (about 0.2 ms against 0.02 ms warm), on the peers' side too.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import streams  # noqa: E402
import toolgrammar  # noqa: E402

FAMILIES = ["kimi_k2", "hermes", "qwen3_coder", "llama3_json", "mistral", "deepseek_v31"]
OPTIONS: dict[str, Any] = {"ids": "sequential", "reasoning_open": False}
COLUMNS = ["parse 1 call", "parse no call", "parse 1K", "parse 16K", "parser", "parser+delta"]


def works(family: str, tools: list[dict[str, Any]]) -> dict[str, Callable[[], Any]]:
    spec = streams.spec_of(family)
    one = streams.render_calls(spec, streams.many_calls(spec, 1))
    texts = [streams.build_stream(family, "many_calls", size).text for size in (1024, 16384)]

    def parse(text: str) -> Callable[[], Any]:
        return lambda: toolgrammar.parse(family, text, tools, **OPTIONS)

    def parser_and_delta() -> None:
        toolgrammar.StreamParser(family, tools, **OPTIONS).feed(one[:16])

    return dict(
        zip(
            COLUMNS,
            [
                parse(one),
                parse("hi there"),
                parse(texts[0]),
                parse(texts[1]),
                lambda: toolgrammar.StreamParser(family, tools, **OPTIONS),
                parser_and_delta,
            ],
        )
    )


def median_us(work: Callable[[], Any], repeat: int, cold: bool) -> float:
    took = []
    for _ in range(repeat):
        if cold:
            gc.collect()
        gc.disable()
        start = time.perf_counter_ns()
        work()
        took.append(time.perf_counter_ns() - start)
        gc.enable()
    return statistics.median(took) / 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="+", default=FAMILIES)
    parser.add_argument("--repeat", type=int, default=401, help="runs per cell (16K: a tenth)")
    parser.add_argument("--opcodes", action="store_true", help="count opcodes instead")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    tools = streams.load_tools()
    out: dict[str, Any] = {}
    modes = ["opcodes"] if args.opcodes else ["warm", "cold"]
    print("family        mode    " + " ".join(f"{c:>13}" for c in COLUMNS))
    for family in args.families:
        cells = works(family, tools)
        for work in cells.values():
            work()  # (tables compiled, caches filled: a server's steady state)
        for mode in modes:
            row = {}
            for column, work in cells.items():
                if mode == "opcodes":
                    from opcodes import count_opcodes

                    row[column] = float(count_opcodes(work))
                else:
                    repeat = max(args.repeat // 10, 5) if "16K" in column else args.repeat
                    row[column] = median_us(work, repeat, mode == "cold")
            out.setdefault(family, {})[mode] = row
            print(f"{family:13} {mode:7} " + " ".join(f"{v:13.1f}" for v in row.values()))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
