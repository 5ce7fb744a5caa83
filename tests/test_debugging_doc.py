"""docs/debugging.md's examples are true: every shell example on the page (a fenced block
whose first line is `$ COMMAND`, continued by lines ending in `\\`) is run from the
repository's root and prints exactly the lines the page shows under it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "debugging.md"


def examples(text: str) -> list[tuple[str, str]]:
    """(command, expected output) of each `$` block of a Markdown page."""
    found = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S):
        if not block.startswith("$ "):
            continue
        lines = block.splitlines(keepends=True)
        command = [lines[0][2:]]
        while command[-1].rstrip("\n").endswith("\\"):
            command.append(lines[len(command)])
        found.append(("".join(command), "".join(lines[len(command) :])))
    return found


def test_the_page_has_examples() -> None:
    assert len(examples(DOC.read_text(encoding="utf-8"))) >= 2


@pytest.mark.parametrize("command, expected", examples(DOC.read_text(encoding="utf-8")))
def test_each_shell_example_prints_what_the_page_shows(command: str, expected: str) -> None:
    env = dict(os.environ)
    # the `toolgrammar` command of the Python running the tests first
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
