"""Whole-output parse only: ours with the whole-output route, ours without it (the engine
alone, `TOOLGRAMMAR_NO_WHOLE_ROUTE`'s reading) and a peer's whole-output path, on the same
texts in one run, taking turns (`side_by_side.parse_times_ms`), best of --repeat.

    /work/.../peer_python sglang . bench/whole_parse.py sglang [--families ...] [--shapes ...]
        [--size 16K] [--repeat 15]
    python bench/whole_parse.py none      # ours only, no peer environment needed
    python bench/whole_parse.py none --opcodes   # bytecode instructions, route and engine

`--opcodes` counts the Python bytecode instructions of one parse each way (`opcodes.py`'s
counter: a cost a busy machine does not disturb; C work, the decoder's and the regexes',
is not in it).

The texts are `streams.py`'s shapes at --size; a peer's parse whose calls differ from the
expected ones is marked ≠ (its time is not comparable).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import side_by_side  # noqa: E402
import streams  # noqa: E402
from side_by_side import Ours, Outcome, Side, Tokens, check_streamed, parse_times_ms  # noqa: E402
from toolgrammar import runtime  # noqa: E402
from toolgrammar.runtime import whole_output  # noqa: E402

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
            text = streams.build_stream(family, shape, size).text
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
        choices=["pure", "compiled"],
        help="require this build of the runtime (docs/compiled.md); the header says which ran",
    )
    args = parser.parse_args(argv)
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
    header = ["family", "shape", "calls", "route ms", "engine ms", "engine / route"]
    if peer is not None:
        header += [f"{peer.name} ms", f"{peer.name} / route"]
    rows = []
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
