"""Paths the compiler tests share (a plain module: `conftest` is not importable by name
reliably once other test folders grow their own conftest.py)."""

from __future__ import annotations

from pathlib import Path

from toolgrammar.compiler import default_paths

HERE = Path(__file__).parent
GRAMMARS, GENERATED = default_paths()
FAMILIES = ("hermes", "kimi_k2", "qwen3_coder")
