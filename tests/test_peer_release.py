"""scripts/peer_release.py, without the network: names read from a release's source, renames
found by registration, changed files listed, and each peer's tested release read from the
project's own scripts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _routine():
    spec = importlib.util.spec_from_file_location(
        "peer_release", ROOT / "scripts" / "peer_release.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


pr = _routine()

VLLM_TOOLS = """
_TOOL_PARSERS_TO_REGISTER = {
    "hermes": ("hermes_tool_parser", "Hermes2ProToolParser"),
    "%s": ("muse_tool_parser", "MuseToolParser"),
    %s
}
"""


def _vllm_release(root: Path, muse_name: str, extra: str = "") -> Path:
    folder = root / "vllm" / "tool_parsers"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(VLLM_TOOLS % (muse_name, extra), encoding="utf-8")
    return root


def test_vllm_names_new_removed_and_renamed(tmp_path: Path) -> None:
    read = pr.PEERS["vllm"].tools
    old = read(_vllm_release(tmp_path / "old", "musespark1x", '"gone": ("gone_parser", "Gone"),'))
    new = read(_vllm_release(tmp_path / "new", "musespark", '"zaya": ("zaya_parser", "Zaya"),'))
    assert old["hermes"] == "hermes_tool_parser.Hermes2ProToolParser"
    changes = pr.name_changes(old, new)
    assert changes.new == ["zaya"]
    assert changes.removed == ["gone"]
    assert changes.renamed == [("musespark1x", "musespark")]
    assert changes.lines("tool parsers")[0] == "tool parsers: 3, 1 new, 1 removed, 1 renamed"


def test_sglang_names_from_its_class_tables(tmp_path: Path) -> None:
    folder = tmp_path / "sglang" / "srt" / "function_call"
    folder.mkdir(parents=True)
    (folder / "function_call_parser.py").write_text(
        "class FunctionCallParser:\n"
        "    ToolCallParserEnum: Dict[str, Type[X]] = {\n"
        '        "qwen": Qwen25Detector,\n'
        '        "qwen25": Qwen25Detector,\n'
        "    }\n",
        encoding="utf-8",
    )
    names = pr.PEERS["sglang"].tools(tmp_path)
    assert names == {"qwen": "Qwen25Detector", "qwen25": "Qwen25Detector"}


def test_a_release_without_its_table_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "vllm" / "tool_parsers"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("PARSERS = {}\n", encoding="utf-8")
    with pytest.raises(pr.ReleaseError, match="_TOOL_PARSERS_TO_REGISTER"):
        pr.PEERS["vllm"].tools(tmp_path)


def test_changed_files_are_listed_with_their_lines(tmp_path: Path) -> None:
    for side, files in (
        ("old", {"a.py": "x\ny\n", "gone.py": "g\n", "same.py": "s\n"}),
        ("new", {"a.py": "x\nz\nw\n", "added.py": "1\n2\n", "same.py": "s\n"}),
    ):
        folder = tmp_path / side / "tests"
        folder.mkdir(parents=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    lines = pr.file_changes(tmp_path / "old", tmp_path / "new", ("tests",))
    assert lines == [
        "  ~ tests/a.py (+2 -1)",
        "  + tests/added.py (2 lines)",
        "  - tests/gone.py",
    ]


def test_each_peer_knows_its_tested_release_and_override_exceptions() -> None:
    versions = {key: peer.tested() for key, peer in pr.PEERS.items()}
    assert all(v[0].isdigit() and "." in v for v in versions.values()), versions
    assert "kimi_k3" in pr.PEERS["vllm"].override()  # read from adapters/vllm.py unimported
    assert "beam" in pr.PEERS["sglang"].override()


def test_ours_against_a_peers_names() -> None:
    lines = pr.ours_against(pr.PEERS["vllm"], ["hermes", "kimi_k3", "no_such_parser"])
    assert lines[0] == "ours: 1 of 3 names taken over by the override"
    assert lines[1].endswith(": kimi_k3")
    assert lines[2].endswith(": no_such_parser")
    lines = pr.ours_against(pr.PEERS["vllm"], ["glm45", "qwen3"], "reasoning-parser ")
    assert lines[0] == "ours: 1 of 2 reasoning-parser names taken over by the override"
    assert pr.PEERS["vllm"].reasoning_override and not pr.PEERS["sglang"].reasoning_override
