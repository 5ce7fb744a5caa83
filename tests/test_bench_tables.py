"""The side-by-side bench's Markdown tables are what its recorded results give.

`docs/vs_vllm.md` and `docs/vs_sglang.md` are written by `bench/vs_vllm.py` and
`bench/vs_sglang.py` with `--from-json` from the raw results under `docs/`; rendering them again
must give the same files (so the shared code of `bench/side_by_side.py` keeps reading every
recorded run, the ones from before it had a second peer included). No peer is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
    """`docs/vs_peers.md` is `bench/vs_peers.py --from-json` of the run that measured both
    peers in one invocation (README's comparison table comes from it)."""
    out = tmp_path / "vs_peers.md"
    runs = [
        ROOT / "docs" / "vs_peers_data" / f"run1_{peer}_8_families_busy.json"
        for peer in ("vllm", "sglang")
    ]
    argv = ["--from-json", *map(str, runs), "--sizes", "1K,16K,64K", "--markdown", str(out)]
    assert vs_peers.main(argv) == 0
    recorded = (ROOT / "docs" / "vs_peers.md").read_text(encoding="utf-8")
    assert recorded == out.read_text(encoding="utf-8")
