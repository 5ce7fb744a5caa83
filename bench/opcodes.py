"""Python opcodes per delta: a cost that a busy, shared machine does not disturb.

Wall-clock timings on these machines move by 2x between runs; the number of bytecode
instructions the interpreter runs for one `StreamParser.feed` does not. This counts them
(`sys.settrace` opcode events) over the second half of each stream of `streams.py` (16-char
deltas, the first half fed untraced so that the count is of a parser deep in its output), and
compares two runs, e.g. before and after a refactor:

    python bench/opcodes.py --families qwen3_coder hermes --size 16K --json after.json
    python bench/opcodes.py --compare before.json after.json

To measure an older checkout on the same streams, write them once with `--streams-out` and
count them there with `--streams-in` (the older checkout's own `streams.py` may differ).

`--runs` counts opcodes per character instead, of prose made of one short text repeated
(`RUNS`: call openers that fail after their first characters, plain prose for scale), parsed
whole and in 16-char deltas:

    python bench/opcodes.py --runs --size 8K --json runs.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any, Callable

import toolgrammar
from per_delta import parse_size
from streams import SHAPES, build_stream, load_tools

DELTA = 16
# prose runs on which a call opener fails after its first characters, where each opener used
# to make a call and drop it: `[` then `{` and no key (xlam), a name no `(` follows (the
# pythonic families), a key no `:` follows (llama3_json); a lone opener and plain prose for
# scale
RUNS = {
    "xlam": ["[{", "[", "x "],
    "pythonic": ["[a", "[", "x "],
    "llama4_pythonic": ["[a"],
    "olmo3": ["[a"],
    "llama3_json": ['{"', "{", "x "],
    "hermes": ["[{", "x "],
}


def count_opcodes(work: Callable[[], Any]) -> int:
    """The bytecode instructions `work()` runs."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


def count_per_delta(family: str, text: str, tools: list[dict[str, Any]]) -> float:
    """Opcodes per delta over the second half of `text` fed in DELTA-char pieces."""
    deltas = [text[i : i + DELTA] for i in range(0, len(text), DELTA)]
    parser = toolgrammar.StreamParser(family, tools=tools)
    half = len(deltas) // 2
    for delta in deltas[:half]:
        parser.feed(delta)

    def rest() -> None:
        for delta in deltas[half:]:
            parser.feed(delta)

    return count_opcodes(rest) / max(1, len(deltas) - half)


def count_run(family: str, run: str, size: int, delta: int) -> float:
    """Opcodes per character of `run` repeated to `size` characters in prose, parsed whole
    (`delta` 0) or fed in `delta`-char pieces, the finish included."""
    text = "Prose " + run * (size // len(run)) + " end."
    pieces = [text] if not delta else [text[i : i + delta] for i in range(0, len(text), delta)]
    parser = toolgrammar.StreamParser(family, reasoning_open=False)

    def parse() -> None:
        for piece in pieces:
            parser.feed(piece)
        parser.finish()

    return count_opcodes(parse) / len(text)


def write_streams(families: list[str], size: int) -> dict[str, Any]:
    """Every shape's stream of each family, but the shapes its markup cannot write (dots
    strips values: no long_string), said on stderr."""
    streams = []
    for family in families:
        for shape in SHAPES:
            try:
                text = build_stream(family, shape, size).text
            except toolgrammar.RenderError as error:
                print(
                    f"{family}/{shape} skipped, its markup cannot write it: {error!s:.100}",
                    file=sys.stderr,
                )
                continue
            streams.append({"family": family, "shape": shape, "text": text})
    return {"tools": load_tools(), "streams": streams}


def compare(before: dict[str, float], after: dict[str, float]) -> str:
    lines = [f"{'stream':30} {'before':>8} {'after':>8} {'ratio':>6}"]
    for key in before:
        if key in after:
            ratio = after[key] / before[key]
            flag = "  !" if ratio > 1.05 else ""
            lines.append(f"{key:30} {before[key]:8.0f} {after[key]:8.0f} {ratio:6.2f}{flag}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", default=["qwen3_coder", "hermes", "kimi_k2"])
    parser.add_argument("--size", default="16K")
    parser.add_argument("--json", type=Path, help="write {family/shape: opcodes per delta}")
    parser.add_argument("--streams-out", type=Path, help="write the streams, count nothing")
    parser.add_argument("--streams-in", type=Path, help="count these streams")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--runs", action="store_true", help="opcodes per character of RUNS")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        print(compare(before, after))
        return 0
    counts = {}
    if args.runs:
        for family, runs in RUNS.items():
            for run in runs:
                for delta in (0, DELTA):
                    key = f"{family}/{run!r}/{'whole' if not delta else delta}"
                    counts[key] = count_run(family, run, parse_size(args.size), delta)
                    print(f"{key:30} {counts[key]:8.1f}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(counts, indent=1), encoding="utf-8")
        return 0
    if args.streams_in:
        data = json.loads(args.streams_in.read_text(encoding="utf-8"))
    else:
        data = write_streams(args.families, parse_size(args.size))
    if args.streams_out:
        args.streams_out.write_text(json.dumps(data), encoding="utf-8")
        return 0
    for stream in data["streams"]:
        key = f"{stream['family']}/{stream['shape']}"
        counts[key] = count_per_delta(stream["family"], stream["text"], data["tools"])
        print(f"{key:30} {counts[key]:8.0f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(counts, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
