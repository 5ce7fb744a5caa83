"""Fixtures for the compiler tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compiler_paths import GRAMMARS


@pytest.fixture
def grammar_copy(tmp_path: Path) -> Path:
    """A private copy of grammars/ (named `grammars`, so sources read grammars/X.tg)."""
    target = tmp_path / "grammars"
    target.mkdir()
    for path in sorted(GRAMMARS.glob("*.tg")):
        shutil.copy(path, target / path.name)
    return target
