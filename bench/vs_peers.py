"""toolgrammar, vLLM 0.34.0 and SGLang 0.5.23 on the same streams: one command for both peers.

vLLM and SGLang cannot share a Python environment (each pins its own packages; neither is
installed with its GPU dependencies), so each peer runs in its own: this driver builds (or
reuses) each environment with its script, runs `vs_vllm.py` / `vs_sglang.py` there as a
subprocess with the same options, one after the other, and joins the two JSON results. Our
parser is measured in both subprocesses, next to the peer, so every ratio is one of two
numbers taken in one process a few seconds apart; the streams are the same in both (written
from the grammars by `streams.py`, cut at the same token boundaries).

    python bench/vs_peers.py --families qwen3_coder hermes --sizes 1K,16K \\
        --out bench/out/peers --markdown bench/out/peers/joined.md [vs_vllm.py's other options]
    python bench/vs_peers.py --from-json bench/out/peers/vllm.json bench/out/peers/sglang.json \\
        --sizes 1K,16K --markdown bench/out/peers/joined.md

The joined report ends with the rows where ours is behind each peer (`behind_rows`: slower than
a peer whose sweep found its result right, or more than 1.5x slower than one whose did not).
A family runs against each peer that has a parser for its markup (`peer_vllm.PAIRS`,
`peer_sglang.PAIRS`). Each peer's own tables are its subprocess's output (and `--markdown`
there: pass `--peer-markdown DIR`); the joined tables put the peers side by side.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from peer_sglang import PEER as SGLANG
from peer_vllm import PEER as VLLM
from side_by_side import (
    BENCH,
    ROOT,
    FamilyResult,
    Peer,
    Run,
    fmt_parse,
    fmt_ratio,
    fmt_us,
    label,
    md_table,
    parse_size,
    results_from_json,
    text_table,
)

PEERS: dict[str, Peer] = {"vllm": VLLM, "sglang": SGLANG}
# the options passed through to each peer's script as they are
PASSED = (
    "shapes",
    "sizes",
    "repeat",
    "budget",
    "parse_budget",
    "parse_repeat",
    "kill_after",
    "mem_size",
    "ours_build",
)


def environment_python(peer: Peer) -> str:
    """The peer's environment, built or reused by its script, which prints its python."""
    done = subprocess.run(
        ["bash", str(ROOT / peer.env_script)], check=True, capture_output=True, text=True
    )
    return done.stdout.strip().splitlines()[-1]


def peer_command(python: str, key: str, args: argparse.Namespace, families: list[str]) -> list[str]:
    """The peer script's command line: the driver's options, the peer's families."""
    command = [python, str(BENCH / f"vs_{key}.py"), "--families", *families]
    for name in PASSED:
        value = getattr(args, name)
        if value is not None:
            flag = "--" + name.replace("_", "-")
            command += [flag, *value] if isinstance(value, list) else [flag, str(value)]
    if args.no_correctness:
        command.append("--no-correctness")
    command += ["--json", str(Path(args.out) / f"{key}.json")]
    if args.peer_markdown:
        command += ["--markdown", str(Path(args.peer_markdown) / f"vs_{key}.md")]
    return command


def run_peers(args: argparse.Namespace) -> list[Path]:
    """Each peer's script in its own environment, one after the other; their JSON files."""
    written = []
    for key in args.peers:
        peer = PEERS[key]
        families = [f for f in args.families if f in peer.pairs]
        if not families:
            print(f"{peer.title}: none of these families has a parser there", flush=True)
            continue
        print(f"== {peer.title}: {' '.join(families)}", flush=True)
        subprocess.run(peer_command(environment_python(peer), key, args, families), check=True)
        written.append(Path(args.out) / f"{key}.json")
    return written


# --------------------------------------------------------------------------- joined tables


def by_family(run: Run) -> dict[str, FamilyResult]:
    return {r.family: r for r in run.results}


def joined_speed_rows(
    runs: list[Run], shape: str, sizes: list[int]
) -> tuple[list[str], list[list[str]]]:
    """A row per family for one shape: per peer, our µs per delta and the peer's at each size,
    and the ratio (the peer's / ours, both from that peer's run), then whole-output parse ms."""
    labels = [label(size) for size in sizes]
    both = {run.peer: has_compiled(run) for run in runs}
    header = ["family"]
    for run in runs:
        for lab in labels:
            header += [f"ours {lab}", f"{run.peer} {lab}", "x"]
            header += [f"compiled {lab}", "x compiled"] if both[run.peer] else []
        header.append(f"parse ms ours / {run.peer}")
        header += ["parse ms compiled"] if both[run.peer] else []
    families = list(dict.fromkeys(f for run in runs for f in by_family(run)))
    rows = []
    for family in families:
        row = [family]
        for run in runs:
            stream = next(
                (s for s in by_family(run).get(family, FamilyResult(family, "")).streams
                 if s.shape == shape),
                None,
            )  # fmt: skip
            extra = 2 if both[run.peer] else 0  # the compiled columns
            if stream is None:
                row += ["-"] * ((3 + extra) * len(labels) + 1 + extra // 2)
                continue
            mark = "" if stream.theirs.ok else " ≠"
            compiled = stream.ours_compiled
            for lab in labels:
                if lab not in stream.ours.median_us:  # a size that run did not measure
                    row += ["-"] * (3 + extra)
                    continue
                a, b = stream.ours.median_us.get(lab), stream.theirs.median_us.get(lab)
                row += [
                    fmt_us(a, lab in stream.ours.sampled),
                    fmt_us(b, lab in stream.theirs.sampled) + mark,
                    fmt_ratio(a, b),
                ]
                if extra:
                    c = compiled.median_us.get(lab) if compiled else None
                    sampled = bool(compiled and lab in compiled.sampled)
                    row += [fmt_us(c, sampled), fmt_ratio(c, b)] if compiled else ["-", "-"]
            row.append(f"{fmt_parse(stream.ours)} / {fmt_parse(stream.theirs)}")
            if extra:
                row.append(fmt_parse(compiled) if compiled else "-")
        rows.append(row)
    return header, rows


def joined_correctness_rows(runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    """A row per family: each sweep's result on our side (from the first run that has the
    family: our side reads the same streams in every run) and on each peer's."""
    header = ["family", "unparsable endings ours", *(r.peer for r in runs)]
    header += ["1-token = whole ours", *(r.peer for r in runs)]
    header += ['"42" ours', *(r.peer for r in runs)]
    families = list(dict.fromkeys(f for run in runs for f in by_family(run)))
    rows = []
    for family in families:
        found = [by_family(run).get(family) for run in runs]
        ours = next((r.ours_correct for r in found if r and r.ours_correct), None)
        if ours is None:
            continue
        theirs = [r.theirs_correct.cells() if r and r.theirs_correct else ("-",) * 3 for r in found]
        row = [family]
        for column in range(3):
            row += [ours.cells()[column], *(cells[column] for cells in theirs)]
        rows.append(row)
    return header, rows


def unparsable_totals(runs: list[Run]) -> list[str]:
    """Endings left unparsable over the families each peer has: ours against the peer's."""
    lines = []
    for run in runs:
        pairs = [(r.ours_correct, r.theirs_correct) for r in run.results if r.theirs_correct]
        cuts = sum(o.cuts for o, _ in pairs if o)
        if cuts:
            ours = sum(o.unparsable for o, _ in pairs if o)
            theirs = sum(t.unparsable for _, t in pairs)
            families = f"{len(pairs)} famil{'y' if len(pairs) == 1 else 'ies'}"
            lines.append(
                f"unparsable endings, the {families} {run.peer} has: ours "
                f"{ours}/{cuts}, {run.peer} {theirs}/{cuts}"
            )
    return lines


# the bar: at least as fast as a peer whose result is correct, and no more than 1.5x
# slower than one whose is not
ALLOWED_WHEN_PEER_WRONG = 1.5


def peer_correct(result: FamilyResult) -> bool:
    """The peer's sweep of this family left no ending unparsable, raised nothing, kept parity
    and stayed within its budget."""
    c = result.theirs_correct
    return (
        bool(c)
        and not (c.unparsable or c.crashes or c.over_budget)
        and (c.parity_equal == c.parity_cases)
    )


def has_compiled(run: Run) -> bool:
    """Whether the run has ours on the compiled build too (`--ours-build both`)."""
    return any(s.ours_compiled for r in run.results for s in r.streams)


def behind_rows(
    run: Run, sizes: list[int], compiled: bool = False
) -> tuple[int, list[tuple[float, str, ...]]]:
    """Every row (family, shape, column: µs per delta at each size, and the whole parse) where
    ours (`compiled`: ours on the compiled build) is slower than the peer beyond the bar; and
    how many rows were compared. A row the peer did not finish (past its budget) or got wrong
    (≠) is ours by default."""
    compared, behind = 0, []
    for result in run.results:
        correct = peer_correct(result)
        bar = 1.0 if correct else ALLOWED_WHEN_PEER_WRONG
        for stream in result.streams:
            ours = stream.ours_compiled if compiled else stream.ours
            if ours is None:
                continue
            columns = [
                (label(size), ours.median_us.get(label(size)),
                 stream.theirs.median_us.get(label(size)))
                for size in sizes if label(size) in ours.median_us
            ]  # fmt: skip
            columns.append(("parse", ours.parse_ms, stream.theirs.parse_ms))
            for column, ours, theirs in columns:
                if ours is None:
                    continue
                compared += 1
                right = stream.theirs.ok and not (column == "parse" and stream.theirs.parse_note)
                if theirs is None or not right:
                    continue
                if ours > bar * theirs:
                    behind.append((ours / theirs, result.family, stream.shape, column, ours,
                                   theirs, correct))  # fmt: skip
    return compared, sorted(behind, reverse=True)


def verdict(runs: list[Run], sizes: list[int]) -> list[str]:
    """Per peer, the rows compared and each row still behind, worst first."""
    lines = []
    for run, compiled in [(run, c) for run in runs for c in (False, True)]:
        if compiled and not has_compiled(run):
            continue
        compared, behind = behind_rows(run, sizes, compiled)
        ours = "ours compiled" if compiled else "ours"
        lines.append(
            f"{run.peer}: {ours} at least as fast on {compared - len(behind)} of {compared} rows "
            f"(within {ALLOWED_WHEN_PEER_WRONG}x where {run.peer}'s sweep found its result wrong)"
        )
        for ratio, family, shape, column, ours, theirs, correct in behind:
            unit = "ms" if column == "parse" else "µs"
            lines.append(
                f"  behind {ratio:.2f}x: {family} {shape} {column}: ours {ours:.2f} {unit}, "
                f"{run.peer} {theirs:.2f}" + ("" if correct else f" ({run.peer} wrong)")
            )
    return lines


def joined_report(runs: list[Run], sizes: list[int], markdown: str | None) -> None:
    """Print the peers side by side; write them as Markdown when asked."""
    shapes = list(dict.fromkeys(s.shape for run in runs for r in run.results for s in r.streams))
    titles = ", ".join(run.title for run in runs)
    m = runs[0].machine
    parts = [
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['date']}; {titles}, "
        f"each in its own environment and process with ours beside it. µs per delta (median "
        f"over the 1K chars before each size; `~` sampled past the budget); x = the peer's time "
        f"/ ours in that peer's run; ≠ after a peer's time: it streamed other calls than the "
        f"text holds; after a parse time: that whole-output parse did not find them.\n"
    ]
    for shape in shapes:
        header, rows = joined_speed_rows(runs, shape, sizes)
        print(f"\n{shape}\n{text_table(header, rows)}")
        parts.append(f"**{shape}**\n\n{md_table(header, rows)}\n")
    header, rows = joined_correctness_rows(runs)
    if rows:
        print(f"\ncorrectness\n{text_table(header, rows)}")
        parts.append(f"**correctness**\n\n{md_table(header, rows)}\n")
    totals = unparsable_totals(runs)
    for line in totals:
        print(f"  {line}")
    parts.append("\n".join(f"- {line}" for line in totals) + "\n")
    lines = verdict(runs, sizes)
    print("\n" + "\n".join(lines))
    parts.append("**rows behind**\n\n```\n" + "\n".join(lines) + "\n```\n")
    if markdown:
        Path(markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown).write_text("\n".join(parts), encoding="utf-8")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    every = list(dict.fromkeys([*VLLM.pairs, *SGLANG.pairs]))
    parser.add_argument("--families", nargs="+", default=every)
    parser.add_argument("--peers", nargs="+", default=list(PEERS), choices=list(PEERS))
    parser.add_argument("--shapes", nargs="+")
    parser.add_argument("--sizes", default="1K,16K,64K,256K")
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--budget", type=float)
    parser.add_argument("--parse-budget", type=float)
    parser.add_argument("--parse-repeat", type=int)
    parser.add_argument("--kill-after", type=float)
    parser.add_argument("--mem-size")
    parser.add_argument(
        "--ours-build",
        choices=("pure", "compiled", "both"),
        help="passed to each peer's script: both adds ours on the compiled build as columns "
        "and its own rows behind (docs/compiled.md; TOOLGRAMMAR_COMPILED_DIR names a build)",
    )
    parser.add_argument("--no-correctness", action="store_true")
    parser.add_argument("--out", default="bench/out/peers", help="each peer's JSON goes here")
    parser.add_argument("--peer-markdown", metavar="DIR", help="each peer's own tables here")
    parser.add_argument("--markdown", metavar="PATH", help="the joined tables as Markdown")
    parser.add_argument("--from-json", nargs="+", metavar="PATH", help="join these, run nothing")
    args = parser.parse_args(argv)
    args.families = [f for item in args.families for f in item.split(",") if f]
    unknown = [f for f in args.families if f not in every]
    if unknown:
        parser.error(f"no peer has a parser for {', '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    paths = [Path(p) for p in args.from_json] if args.from_json else run_peers(args)
    runs = [results_from_json(path) for path in paths]
    sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s.strip()})
    joined_report(runs, sizes, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
