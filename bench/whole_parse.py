"""Whole-output parse only: ours with the whole-output route, ours without it (the engine
alone, `TOOLGRAMMAR_NO_WHOLE_ROUTE`'s reading) and a peer's whole-output path, on the same
texts in one run, taking turns (`side_by_side.parse_times_ms`), best of --repeat.

    /work/.../peer_python sglang . bench/whole_parse.py sglang [--families ...] [--shapes ...]
        [--size 16K] [--repeat 15]
    python bench/whole_parse.py none      # ours only, no peer environment needed
    python bench/whole_parse.py none --opcodes   # bytecode instructions, route and engine
    python bench/whole_parse.py none --build both   # the pure and the compiled build side by side

`--build both` runs this command twice, pure then compiled, one process each (a process
runs one build, docs/compiled.md), and prints their rows joined: the route and the engine
in each build, and the peer's time of the pure run.

`--opcodes` counts the Python bytecode instructions of one parse each way (`opcodes.py`'s
counter: a cost a busy machine does not disturb; C work, the decoder's and the regexes',
is not in it).

The texts are `streams.py`'s shapes at --size; a peer's parse whose calls differ from the
expected ones is marked ≠ (its time is not comparable).

The timed parses run with the cyclic GC off (`parse_times_ms`), as every side's are; the
`gc µs` column is what the collections a parse sets off cost with it on (an untimed pass,
the mean over 200 parses, so that a rare full collection counts for its share;
`gc.callbacks`): a parse that keeps what it returns (the
message's models) allocates past gen 0's threshold, collections that find no garbage.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import side_by_side  # noqa: E402
import streams  # noqa: E402
from side_by_side import Ours, Outcome, Side, Tokens, check_streamed, parse_times_ms  # noqa: E402
from toolgrammar import runtime  # noqa: E402
from toolgrammar.runtime import whole_output  # noqa: E402

GC_PARSES = 200  # parses the gc pass spreads a rare full collection over (its mean)
FAMILIES = ["kimi_k2", "hermes", "qwen3_coder", "deepseek_v31", "mistral", "llama3_json"]


class Engine(Ours):
    """Ours with the whole-output route off: the engine reads every call."""

    label = "engine"

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        def parse() -> Outcome:
            whole_output.switch(False)
            try:
                return self.parse(text)
            finally:
                whole_output.switch(True)

        return parse


def gc_us(parse: Callable[[], Any], repeat: int) -> float:
    """Mean µs a parse spends in the cyclic GC's collections, GC on (what a server pays)."""
    spent = [0.0]
    started = [0.0]

    def clock(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - started[0]

    gc.collect()
    gc.callbacks.append(clock)
    try:
        for _ in range(repeat):
            parse()
    finally:
        gc.callbacks.remove(clock)
    return spent[0] / repeat * 1e6


def both_builds(argv: list[str]) -> int:
    """`--build both`: this command once per build, one process each, the rows joined."""
    from side_by_side import strip_options

    rest = strip_options(argv, ("--build", "--json"))
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for build in ("pure", "compiled"):
            path = os.path.join(scratch, f"{build}.json")
            env = dict(os.environ)
            if build == "pure":
                env[runtime.PURE_ENV] = "1"
            else:
                env.pop(runtime.PURE_ENV, None)
            command = [sys.executable, sys.argv[0], *rest, "--build", build, "--json", path]
            print(f"--build both: the {build} run", flush=True)
            if subprocess.run(command, env=env).returncode:
                return 1
            runs[build] = json.loads(Path(path).read_text())
    compiled = {(r["family"], r["shape"]): r for r in runs["compiled"]}
    header = ["family", "shape", "calls", "route ms pure", "route ms compiled", "pure / compiled"]
    header += ["engine ms pure", "engine ms compiled", "gc µs pure", "gc µs compiled"]
    peer = next((r["peer"] for r in runs["pure"] if r.get("peer")), None)
    if peer:
        header += [f"{peer} ms", f"{peer} / best route"]
    rows = []
    for p in runs["pure"]:
        c = compiled[(p["family"], p["shape"])]
        row = [p["family"], p["shape"], str(p["calls"]), f"{p['route_ms']:.2f}"]
        row += [f"{c['route_ms']:.2f}", f"{p['route_ms'] / c['route_ms']:.2f}x"]
        row += [f"{p['engine_ms']:.2f}", f"{c['engine_ms']:.2f}"]
        row += [f"{p['gc_us']:.0f}", f"{c['gc_us']:.0f}"]
        if peer:
            ms, mark = p.get("peer_ms"), " ≠" if p.get("peer_differs") else ""
            best = min(p["route_ms"], c["route_ms"])
            row += [f"{ms:.2f}{mark}", f"{ms / best:.2f}x{mark}"] if ms else ["-", "-"]
        rows.append(row)
    print()
    print(side_by_side.md_table(header, rows))
    return 0


def peer_of(name: str) -> Any:
    if name == "none":
        return None
    if name == "sglang":
        from peer_sglang import PEER
    else:
        from peer_vllm import PEER
    return PEER


def opcodes(args: argparse.Namespace) -> int:
    """Bytecode instructions of one whole parse, with the route and without it."""
    from opcodes import count_opcodes

    import toolgrammar

    tools = streams.load_tools()
    size = side_by_side.parse_size(args.size)
    header = ["family", "shape", "calls", "route", "engine", "per call route", "per call engine"]
    rows = []
    for family in args.families:
        for shape in args.shapes:
            try:
                text = streams.build_stream(family, shape, size).text
            except toolgrammar.RenderError as error:  # (dots strips values: no long_string)
                print(f"{family} {shape}: skipped, {str(error)[:80]}", file=sys.stderr)
                continue
            counts = []
            for on in (True, False):
                whole_output.switch(on)

                def parse() -> Any:
                    return toolgrammar.parse(family, text, tools, ids="sequential")

                parse()  # (caches warm)
                counts.append(count_opcodes(parse))
            whole_output.switch(True)
            calls = max(1, len(parse().tool_calls))
            row = [family, shape, str(calls), *map(str, counts)]
            row += [f"{counts[0] / calls:.0f}", f"{counts[1] / calls:.0f}"]
            rows.append(row)
            print(" | ".join(row), flush=True)
    print()
    print(side_by_side.md_table(header, rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=["sglang", "vllm", "none"])
    parser.add_argument("--families", nargs="+", default=FAMILIES)
    parser.add_argument("--shapes", nargs="+", default=list(streams.SHAPES))
    parser.add_argument("--size", default="16K")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--opcodes", action="store_true", help="count opcodes, ours only")
    parser.add_argument(
        "--build",
        choices=["pure", "compiled", "both"],
        help="require this build of the runtime (docs/compiled.md; the header says which ran),"
        " or both: one run each, one process each, joined",
    )
    parser.add_argument("--json", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.build == "both":
        return both_builds(sys.argv[1:] if argv is None else argv)
    build = runtime.build_name()
    if args.build and args.build != build:
        print(f"--build {args.build}, but {runtime.compiled()['why']}", file=sys.stderr)
        return 2
    print(f"toolgrammar whole parse: {build} build of the runtime")
    if args.opcodes:
        return opcodes(args)
    size = side_by_side.parse_size(args.size)
    peer = peer_of(args.peer)
    modules = peer.load() if peer is not None else None
    tools = streams.load_tools()
    header = ["family", "shape", "calls", "route ms", "engine ms", "engine / route", "gc µs"]
    if peer is not None:
        header += [f"{peer.name} ms", f"{peer.name} / route"]
    rows = []
    found_rows: list[dict[str, Any]] = []
    for family in args.families:
        if peer is not None and family not in peer.pairs:
            continue
        texts = {shape: streams.build_stream(family, shape, size) for shape in args.shapes}
        sides: list[Side] = [Ours(family, tools), Engine(family, tools)]
        if peer is not None:
            key = peer.request_key(family, "", tools)
            sides.append(peer.side_for(modules, family, key, [s.text for s in texts.values()]))
        for shape, stream in texts.items():
            found = parse_times_ms(sides, stream.text, args.repeat, 60.0)
            ms = [t for t, _ in found]
            notes = [check_streamed(o, stream.expected) if o else "budget" for _, o in found]
            assert not notes[0] and not notes[1], (family, shape, notes)
            row = [family, shape, str(len(stream.expected)), f"{ms[0]:.2f}", f"{ms[1]:.2f}"]
            row.append(f"{ms[1] / ms[0]:.1f}x")
            gc_cost = gc_us(sides[0].parser_of(stream.text), max(args.repeat, GC_PARSES))
            row.append(f"{gc_cost:.0f}")
            found_rows.append(
                {
                    "family": family,
                    "shape": shape,
                    "calls": len(stream.expected),
                    "route_ms": ms[0],
                    "engine_ms": ms[1],
                    "gc_us": gc_cost,
                    "peer": peer.name if peer is not None else None,
                    "peer_ms": ms[2] if peer is not None else None,
                    "peer_differs": bool(notes[2]) if peer is not None else False,
                }
            )
            if peer is not None:
                mark = " ≠" if notes[2] else ""
                row += [
                    f"{ms[2]:.2f}{mark}" if ms[2] else "-",
                    f"{ms[2] / ms[0]:.2f}x{mark}" if ms[2] else "-",
                ]
            rows.append(row)
            print(" | ".join(row), flush=True)
    print()
    print(side_by_side.md_table(header, rows))
    if args.json:
        Path(args.json).write_text(json.dumps(found_rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
