"""The side-by-side bench's Markdown tables are what its recorded results give.

`docs/vs_vllm.md` and `docs/vs_sglang.md` are written by `bench/vs_vllm.py` and
`bench/vs_sglang.py` with `--from-json` from the raw results under `docs/`; rendering them again
must give the same files (so the shared code of `bench/side_by_side.py` keeps reading every
recorded run, the ones from before it had a second peer included). No peer is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import side_by_side  # noqa: E402
from peer_sglang import PEER as SGLANG  # noqa: E402
from peer_vllm import PEER as VLLM  # noqa: E402
import vs_peers  # noqa: E402

VLLM_RUNS = [
    "run4_23_families.json",
    "run5_17_more_families.json",
    "run6_lfm2_after_linear_strings.json",
    "run7_six_final_code.json",
    "run8_13_families_whole_parse.json",
    "run9_7_families_warm.json",
    "run10_14_families_markup_shortcuts.json",
    "run11_minicpm5_named_entities.json",
]
SGLANG_RUNS = [
    "run1_8_families_busy.json",
    "run2_glm47_busy.json",
    "run3_gemma4_busy.json",
    "run4_pythonic_busy.json",
]
SGLANG_SIZES = "1K,16K,64K"


@pytest.mark.parametrize(
    "peer, doc, runs, sizes",
    [
        (VLLM, "vs_vllm.md", [f"vs_vllm_data/{r}" for r in VLLM_RUNS], None),
        (SGLANG, "vs_sglang.md", [f"vs_sglang_data/{r}" for r in SGLANG_RUNS], SGLANG_SIZES),
    ],
    ids=["vllm", "sglang"],
)
def test_the_tables_are_rendered_from_the_recorded_runs(
    peer: side_by_side.Peer, doc: str, runs: list[str], sizes: str | None, tmp_path: Path
) -> None:
    out = tmp_path / doc
    argv = ["--from-json", *(str(ROOT / "docs" / r) for r in runs), "--markdown", str(out)]
    if sizes:
        argv += ["--sizes", sizes]
    assert side_by_side.main(peer, argv) == 0
    recorded = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    assert recorded == out.read_text(encoding="utf-8")


def test_the_joined_table_is_rendered_from_both_peers_run(tmp_path: Path) -> None:
    """`docs/vs_peers.md` is `bench/vs_peers.py --from-json` of the latest run of both peers
    (README's comparison table comes from it)."""
    out = tmp_path / "vs_peers.md"
    runs = [
        ROOT / "docs" / "vs_peers_data" / "run5_vllm_51_families_s20.json",
        ROOT / "docs" / "vs_peers_data" / "run5_sglang_36_families_s20.json",
    ]
    argv = ["--from-json", *map(str, runs), "--sizes", "1K,16K", "--markdown", str(out)]
    assert vs_peers.main(argv) == 0
    recorded = (ROOT / "docs" / "vs_peers.md").read_text(encoding="utf-8")
    assert recorded == out.read_text(encoding="utf-8")


def _speed(us: float | None, parse_ms: float | None, ok: bool = True, note: str = "") -> Any:
    return side_by_side.Speed({"1K": us}, {}, 1024, parse_ms, None, ok, parse_note=note)


def _family(name: str, rows: list[tuple[Any, Any]], unparsable: int) -> Any:
    """A family's results: ours clean, the peer's sweep leaving `unparsable` endings."""
    streams = [
        side_by_side.StreamResult(name, name, f"shape{i}", 1024, 64, ours, theirs)
        for i, (ours, theirs) in enumerate(rows)
    ]
    ours = side_by_side.Correctness(10, 0, 0, 1, 1, [], "ok")
    theirs = side_by_side.Correctness(10, unparsable, 0, 1, 1, [], "ok")
    return side_by_side.FamilyResult(name, name, streams, ours, theirs)


def test_rows_behind_hold_a_correct_peer_to_1x_and_a_wrong_one_to_1_5x() -> None:
    """The issue's bar, row by row: slower than a peer whose sweep is clean is behind; slower
    than one that leaves endings unparsable is behind past 1.5x; a row the peer did not finish
    or got wrong (≠) is not held against us."""
    clean = _family("clean", [
        (_speed(2.0, 1.0), _speed(2.0, 0.9)),          # equal per delta; parse behind 1.11x
        (_speed(3.0, 1.0), _speed(None, None)),        # the peer past its budget
        (_speed(9.0, 9.0), _speed(1.0, 1.0, ok=False)),  # the peer streamed other calls
        (_speed(1.0, 5.0), _speed(2.0, 1.0, note="missed a call")),  # its parse is wrong
    ], unparsable=0)  # fmt: skip
    wrong = _family("wrong", [
        (_speed(1.4, 1.0), _speed(1.0, 1.0)),  # 1.4x: within the allowance
        (_speed(1.6, 1.0), _speed(1.0, 1.0)),  # 1.6x: behind
    ], unparsable=3)  # fmt: skip
    run = side_by_side.Run({}, "Peer", "1", [clean, wrong])
    compared, behind = vs_peers.behind_rows(run, [1024])
    assert compared == 12
    assert [(family, shape, column) for _, family, shape, column, *_ in behind] == [
        ("wrong", "shape1", "1K"),
        ("clean", "shape0", "parse"),
    ]
    lines = vs_peers.verdict([run], [1024])
    assert lines[0].startswith("Peer: ours at least as fast on 10 of 12 rows")
    assert lines[1] == "  behind 1.60x: wrong shape1 1K: ours 1.60 µs, Peer 1.00 (Peer wrong)"


def test_both_builds_join_into_compiled_columns_and_their_own_rows_behind() -> None:
    """`--ours-build both`: the compiled run's ours lands beside the pure run's, stream by
    stream, in the tables and in a verdict of its own against the pure run's peer times."""
    pure = side_by_side.Run({"ours_build": "pure"}, "Peer", "1", [
        _family("fam", [(_speed(2.0, 1.0), _speed(1.5, 2.0)), (_speed(1.0, 1.0), _speed(3.0, 2.0))],
                unparsable=0),
    ])  # fmt: skip
    compiled = side_by_side.Run({"ours_build": "compiled"}, "Peer", "1", [
        _family("fam", [(_speed(1.2, 0.5), _speed(9.0, 9.0))], unparsable=0),  # shape0 only
    ])  # fmt: skip
    run = side_by_side.with_compiled(pure, compiled)
    first, second = run.results[0].streams
    assert first.ours_compiled is not None and first.ours_compiled.median_us == {"1K": 1.2}
    assert second.ours_compiled is None  # the compiled run had no such stream
    header, rows = side_by_side.shape_rows(run.results, "shape0", [1024], "Peer")
    cells = dict(zip(header, rows[0]))
    assert (cells["ours 1K"], cells["compiled 1K"], cells["x compiled 1K"]) == (
        "2.0",
        "1.2",
        "1.2x",
    )
    assert cells["parse ms compiled"] == "0.5"
    lines = vs_peers.verdict([run], [1024])
    assert lines[0].startswith("Peer: ours at least as fast on 3 of 4 rows")
    assert lines[1] == "  behind 1.33x: fam shape0 1K: ours 2.00 µs, Peer 1.50"
    assert lines[2].startswith("Peer: ours compiled at least as fast on 2 of 2 rows")
    # a run that is not the compiled build's gives no compiled columns
    plain = side_by_side.with_compiled(
        pure, side_by_side.Run({"ours_build": "pure"}, "Peer", "1", [])
    )
    assert all(s.ours_compiled is None for s in plain.results[0].streams)


def test_a_family_per_process_rebuilds_the_command_line_for_one_family() -> None:
    """`--process-per-family`: each child gets the parent's options for one family, without
    the parent's families, outputs or the option itself (a child would spawn children)."""
    argv = ["--families", "kimi_k2", "mistral", "--sizes", "1K,16K", "--process-per-family",
            "--json", "out.json", "--ours-build", "both", "--markdown=t.md"]  # fmt: skip
    rest = side_by_side.strip_options(
        side_by_side.without_families(argv),
        ("--json", "--markdown", "--plot", "--process-per-family"),
    )
    assert rest == ["--sizes", "1K,16K", "--ours-build", "both"]
    assert side_by_side.without_families(["--families=a,b", "--repeat", "2"]) == ["--repeat", "2"]
    # `--ours-build both` keeps the flag for each build's run, and drops only its own options
    assert side_by_side.strip_options(argv, ("--ours-build", "--json")) == [
        "--families", "kimi_k2", "mistral", "--sizes", "1K,16K", "--process-per-family",
        "--markdown=t.md",
    ]  # fmt: skip


def test_the_families_run_apart_join_in_their_order(tmp_path: Path) -> None:
    """The per-family runs' files join into one run, in the order they were measured."""
    paths = []
    for n, family in enumerate(["b_family", "a_family"]):
        run = side_by_side.Run({"ours_build": "compiled"}, "Peer", "1", [
            _family(family, [(_speed(1.0 + n, 1.0), _speed(2.0, 2.0))], unparsable=0),
        ])  # fmt: skip
        path = tmp_path / f"{n}.json"
        side_by_side.write_json(str(path), run, side_by_side.argparse.Namespace(x=1))
        paths.append(str(path))
    joined = side_by_side.joined(paths)
    assert [r.family for r in joined.results] == ["b_family", "a_family"]
    assert joined.results[1].streams[0].ours.median_us == {"1K": 2.0}
    assert joined.machine["ours_build"] == "compiled"
