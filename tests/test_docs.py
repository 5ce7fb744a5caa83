"""The repository explains itself: what its files cite is in the repository.

Design notes that lived outside the repository are not cited; every `docs/*.md` path, `#anchor`
and quoted section title cited in a tracked file exists; the family catalogue is current.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# spelled in pieces so that this file does not cite them itself
OUTSIDE = [name + ".md" for name in ("FAMILIES", "DESIGN", "STYLE", "CONSTRAINED")] + [
    "../" + "shared",
    "shared/" + "seeds",
]
CITED = re.compile(r"docs/([\w.-]+\.md)(?:#([\w-]+))?")
CITED_TITLE = re.compile(r"docs/([\w.-]+\.md),? (?:section )?[\"'“]([^\"'”\n]+)[\"'”]")
LINK = re.compile(r"\]\(([\w.-]+\.md)?(?:#([\w-]+))?\)")


def _tracked() -> dict[str, str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    files: dict[str, str] = {}
    for name in filter(None, names):
        path = ROOT / name.decode()
        if path.is_file():
            files[name.decode()] = path.read_bytes().decode("utf-8", errors="replace")
    return files


def _headings(doc: Path) -> list[str]:
    # a code block ends at a fence of its own backticks or more, alone on its line
    fences = r"^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$"
    text = re.sub(fences, "", doc.read_text(encoding="utf-8"), flags=re.M | re.S)
    return [line.lstrip("#").strip() for line in text.split("\n") if re.match(r"#{1,6} ", line)]


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {_anchor(h) for h in _headings(doc)}


def _check(doc_name: str, anchor: str | None, where: str, problems: list[str]) -> None:
    doc = DOCS / doc_name
    if not doc.is_file():
        problems.append(f"{where}: docs/{doc_name} does not exist")
    elif anchor and anchor not in _anchors(doc):
        problems.append(f"{where}: docs/{doc_name} has no #{anchor}")


def test_no_file_cites_notes_outside_the_repository() -> None:
    found = [
        f"{name}: {outside}"
        for name, text in _tracked().items()
        for outside in OUTSIDE
        if outside in text
    ]
    assert not found, "\n".join(found)


def test_every_cited_doc_and_anchor_exists() -> None:
    problems: list[str] = []
    for name, text in _tracked().items():
        for match in CITED.finditer(text):
            _check(match.group(1), match.group(2), name, problems)
        for match in CITED_TITLE.finditer(text):
            doc = DOCS / match.group(1)
            titles = {re.sub(r"^\d+\. ", "", h) for h in _headings(doc)} if doc.is_file() else ()
            if match.group(2) not in titles:
                problems.append(f"{name}: docs/{match.group(1)} has no section {match.group(2)!r}")
        if name.startswith("docs/") and name.endswith(".md"):
            for match in LINK.finditer(text):
                _check(match.group(1) or Path(name).name, match.group(2), name, problems)
    assert not problems, "\n".join(problems)


def test_families_catalogue_is_current() -> None:
    spec = importlib.util.spec_from_file_location(
        "families_doc", ROOT / "scripts" / "families_doc.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (DOCS / "families.md").read_text(
        encoding="utf-8"
    ) == module.catalogue(), "docs/families.md is stale: run python scripts/families_doc.py"


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def test_adding_a_family_begins_with_the_install_its_steps_use() -> None:
    """The steps run pytest and the export proof (llguidance): the install they give must
    bring both (the README's first install brought neither, and `check` then said the export
    was "skipped" in a run that passed)."""
    import tomllib

    section = _readme_section("Adding a family")
    command = "pip install -e '.[compiler,test]'"
    assert command in section.split("1. ")[0], "the authoring install comes before step 1"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    optional = extras["project"]["optional-dependencies"]
    installed = " ".join(optional["compiler"] + optional["test"])
    for package in ("lark", "jinja2", "black", "pytest", "hypothesis", "llguidance"):
        assert package in installed, f"{command} does not install {package}"
    for used in ("python -m pytest", "toolgrammar check", "toolgrammar build"):
        assert used in section


def _grammar_files() -> list[str]:
    return sorted(p.name for p in (ROOT / "grammars").glob("*.tg"))


def test_the_counts_that_follow_the_family_list_are_current() -> None:
    """README's and docs/export.md's figures go stale with every new family: checked here."""
    import toolgrammar

    names = len(toolgrammar.families())
    grammars = len(_grammar_files())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"(\d+) grammars, (\d+) registered names", readme)
    assert found, "README.md states how many grammars and registered names there are"
    assert (int(found[1]), int(found[2])) == (
        grammars,
        names,
    ), f"README.md says {found[0]!r}: there are {grammars} grammars, {names} registered names"
    export = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    stated = re.findall(r"all (\d+) grammars", export)
    assert stated and all(
        int(n) == grammars for n in stated
    ), f"docs/export.md says all {stated} grammars; there are {grammars}"


def test_every_grammar_is_in_the_language_references_family_table() -> None:
    text = (ROOT / "grammars" / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| family (registered names) | grammar file |") :]
    rows = [line for line in table.split("\n") if line.startswith("| ")]
    listed = {f for row in rows for f in re.findall(r"[A-Za-z0-9_.-]+\.tg", row.split("|")[2])}
    missing = [name for name in _grammar_files() if name not in listed]
    assert not missing, f"grammars/README.md's family table lacks a row for {missing}"
