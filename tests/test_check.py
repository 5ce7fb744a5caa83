"""`toolgrammar check`: every grammar passes, and broken grammars are caught with a repro."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolgrammar
from toolgrammar.check import check
from toolgrammar.cli import main
from toolgrammar.runtime.registry import get_spec

FAMILIES = sorted({get_spec(name).name for name in toolgrammar.families()})
BROKEN = sorted((Path(__file__).parent / "check_fixtures").glob("*.tg"))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_grammar_passes_its_own_check(family: str) -> None:
    # a bounded budget in CI; `toolgrammar check FAMILY --budget 60` runs deeper
    report = check(family, budget=0.3, seed=FAMILIES.index(family))
    assert report.samples >= 1 and report.cuts >= 1
    assert report.ok, report.summary()


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_grammars_are_caught_with_a_reproduction(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(path), "--budget", "3", "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "round trip" in out and "FAILED" in out
    assert "  text  = " in out and "replay: --seed 1 (sample " in out


def test_cli_check_reports_every_invariant(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "hermes", "--budget", "0.5"]) == 0
    out = capsys.readouterr().out
    for name in ("round trip", "prefix", "termination", "parity", "bad input"):
        assert f"  {name}" in out
    assert main(["check", "no_such_family"]) == 2
    assert "unknown family" in capsys.readouterr().err


def test_same_seed_same_samples() -> None:
    first = check("kimi_k2", budget=0.0, seed=5)
    second = check("kimi_k2", budget=0.0, seed=5)
    assert (first.samples, first.cuts) == (second.samples, second.cuts) == (1, first.cuts)
