"""README.md's "Adding a family" steps, run as written on a throwaway family in a copy of the
repository: the commands come from the README itself, so a step that stops working (or a
check the steps do not satisfy) fails here, not for the next author.

The copy is made importable as `toolgrammar` ahead of this checkout's editable install by
links in its `toolgrammar/` folder to its package folders (as an editable install of the copy
would map them); the install step itself is left out (the extras are this environment's).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.corpus_format import MIN_CASES, load

ROOT = Path(__file__).resolve().parent.parent
FAMILY = "authoring_demo"
# package name -> folder of the repository (pyproject.toml's package-dir)
PACKAGES = ("compiler", "runtime", "generated", "grammars", "adapters", "export")

GRAMMAR = f"""# A throwaway family for tests/test_authoring_steps.py: one JSON object per `<act>` tag.
#   <act>{{"tool": "get_weather", "args": {{"city": "Paris"}}}}</act>
family {FAMILY}

reasoning "<think>" "</think>"

call
    "<act>" ws json_call(name="tool", arguments=["args"]) ws "</act>"
"""


def _section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Adding a family")
    return readme[start : readme.index("\n## ", start + 1)]


def _commands(section: str) -> list[str]:
    """The shell commands of steps 2-5, in order, for FAMILY (code spans that run something)."""
    spans = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", section, flags=re.S)]
    runs = [
        span
        for span in spans
        if span.startswith(("toolgrammar build", "toolgrammar check", "python ", "TOOLGRAMMAR_"))
        and "--chat-template" not in span
        and "fetch_templates" not in span
    ]
    return [run.replace("<family>", FAMILY) for run in runs]


def _copy_repository(to: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = to / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _link_packages(copy: Path) -> None:
    """Put the copy's package folders inside its `toolgrammar/` (as links): then `toolgrammar`
    found from the copy (its folder is the current one of every step) has its own
    `toolgrammar.runtime`, … there, not this checkout's, which the editable install maps."""
    for name in PACKAGES:
        (copy / "toolgrammar" / name).symlink_to(copy / name)


def _corpus() -> str:
    """MIN_CASES cases, each expectation left empty (step 3)."""
    cities = ["Paris", "Lima", "Oslo", "Rome", "Cairo", "Quito", "Hanoi", "Dakar"]
    cases = []
    for n in range(MIN_CASES):
        city = cities[n % len(cities)]
        call = (
            f'<act>{{"tool": "get_weather", "args": {{"city": "{city}", "days": {n + 1}}}}}</act>'
        )
        text = [call, f"Checking {city}.\n{call}", f"<think>plan {n}</think>{call}"][n % 3]
        cases.append(f"=== case {n}: {city}\n{text}\n--- expect\n")
    return f"# {FAMILY}: written by tests/test_authoring_steps.py\n\n" + "\n".join(cases)


def test_readme_authoring_steps_work_as_written(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    _copy_repository(copy)
    _link_packages(copy)
    env = {**os.environ, "PYTHONPATH": str(copy)}
    env.pop("TOOLGRAMMAR_UPDATE_CORPUS", None)
    # the copy is what Python imports (not this checkout)
    where = subprocess.run(
        [sys.executable, "-c", "import toolgrammar.runtime as r; print(r.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).resolve().is_relative_to(copy.resolve()), where

    # step 1: the grammar; step 3's corpus with empty expectations; step 4's no-template row;
    # step 5's row of the family table
    (copy / "grammars" / f"{FAMILY}.tg").write_text(GRAMMAR, encoding="utf-8")
    (copy / "tests" / "corpus" / f"{FAMILY}.txt").write_text(_corpus(), encoding="utf-8")
    with (copy / "grammars" / "templates.toml").open("a", encoding="utf-8") as toml:
        toml.write(f'\n[[no_template]]\nfamily = "{FAMILY}"\nwhy = "a throwaway test family"\n')
    readme = copy / "grammars" / "README.md"
    table = readme.read_text(encoding="utf-8")
    header = "| family (registered names) | grammar file | constructs beyond literals, `ws`, `name(until)` |\n| --- | --- | --- |\n"
    assert header in table
    readme.write_text(
        table.replace(header, header + f"| {FAMILY} | {FAMILY}.tg | `json_call` |\n"),
        encoding="utf-8",
    )

    commands = _commands(_section())
    assert [c.split()[0:2] for c in commands][:1] == [["toolgrammar", "build"]], commands
    assert any("TOOLGRAMMAR_UPDATE_CORPUS=1" in c for c in commands), commands
    assert any(c.startswith("toolgrammar check") for c in commands), commands
    assert any("families_doc.py" in c for c in commands), commands
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command], cwd=copy, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    # the steps did what they say: a module built, expectations filled, the docs current
    assert (copy / "generated" / f"{FAMILY}.py").exists()
    cases = load(copy / "tests" / "corpus" / f"{FAMILY}.txt")
    assert len(cases) == MIN_CASES
    for n, case in enumerate(cases):
        calls = case.expect["tool_calls"]
        assert [name for name, _ in calls] == ["get_weather"], case.name
        assert json.loads(calls[0][1])["days"] == n + 1, case.name
    assert cases[2].expect["reasoning"] == "plan 2"
    assert f"## {FAMILY}" in (copy / "docs" / "families.md").read_text(encoding="utf-8")
    # the whole of test_docs (counts, catalogue, family table) holds after the steps
    docs = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_docs.py"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    assert docs.returncode == 0, docs.stdout[-3000:]
