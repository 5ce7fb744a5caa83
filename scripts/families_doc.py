"""Write docs/families.md, the family catalogue, from grammars/*.tg and the runtime, and the
counts that follow the family list (README.md's "N grammars, M registered names",
docs/export.md's "all N grammars").

    python scripts/families_doc.py           # rewrite docs/families.md and the counts
    python scripts/families_doc.py --check   # exit 1 when any of them is stale

Everything in the catalogue comes from the grammar files (names, aliases, `extends`, the
argument dialect, the leading comment that is also the generated module's docstring) and
from `toolgrammar.render` (one example output per family), so it cannot drift from them:
`tests/test_docs.py` runs the check.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import toolgrammar

ROOT = Path(__file__).resolve().parent.parent
GRAMMARS = ROOT / "grammars"
OUT = ROOT / "docs" / "families.md"
DIALECTS = (
    "xml_params",
    "xml_elements",
    "keyvalue_args",
    "python_calls",
    "json_args",
    "json_call_array",
    "json_call",
)
DIALECT_TEXT = {
    "xml_params": "key/value parameters in markup, each value raw text typed by the schema",
    "xml_elements": "one element per argument, nestable, leaf text typed by the schema",
    "keyvalue_args": "`{key:value,…}` with bare keys and the family's own string delimiter",
    "python_calls": "Python call syntax `NAME(key=value, …)`, values as Python literals",
    "json_args": "the arguments as one JSON object, the model's own bytes",
    "json_call": "one JSON object that carries the name and the arguments",
    "json_call_array": "a JSON array of call objects",
}
TOOLS = json.loads((ROOT / "tests" / "corpus" / "tools.json").read_text(encoding="utf-8"))
EXAMPLE = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]


def grammar(family: str) -> tuple[list[str], str]:
    """The leading comment's lines (without `# `) and the statements of a grammar file."""
    lines = (GRAMMARS / f"{family}.tg").read_text(encoding="utf-8").split("\n")
    comment: list[str] = []
    for at, line in enumerate(lines):
        if not line.startswith("#"):
            return comment, "\n".join(lines[at:])
        comment.append(line[2:] if line.startswith("# ") else line[1:])
    return comment, ""


def statement(body: str, keyword: str) -> str | None:
    found = re.search(rf"^{keyword}\s+(.+)$", body, re.M)
    return found.group(1).strip() if found else None


def dialect(family: str) -> str:
    _, body = grammar(family)
    for name in DIALECTS:
        if re.search(rf"\b{name}\b", body):
            return name
    parent = statement(body, "extends")
    return dialect(parent) if parent else "?"


def fenced(lines: list[str]) -> list[str]:
    """A `text` code block holding `lines`, its fence longer than any run of backticks in them,
    so that markup which writes a fence itself (a ```json block) cannot close it early."""
    runs = [len(run) for line in lines for run in re.findall(r"`+", line)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [fence + "text", *lines, fence]


def prose(comment: list[str]) -> list[str]:
    """The leading comment as Markdown: paragraphs, `-` bullets, indented lines as code."""
    out: list[str] = []
    code: list[str] = []
    in_bullet = False
    for line in comment:
        if line.startswith("  ") and not in_bullet:
            code.append(line.rstrip())
            continue
        if code:
            out += ["", *fenced([c[2:] if c.startswith("  ") else c for c in code]), ""]
            code = []
        if not line.strip():
            in_bullet = False
            out.append("")
        elif line.startswith("- "):
            in_bullet = True
            out.append(line.rstrip())
        else:
            out.append(line.rstrip())
    if code:
        out += ["", *fenced([c[2:] if c.startswith("  ") else c for c in code])]
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip().split("\n")


def example(family: str) -> str | None:
    try:
        return toolgrammar.render(family, EXAMPLE, TOOLS, content="Checking.")
    except Exception:  # noqa: BLE001 - a family that cannot write the example shows none
        return None


def catalogue() -> str:
    families = sorted(p.stem for p in GRAMMARS.glob("*.tg"))
    aliases: dict[str, list[str]] = {f: [] for f in families}
    for family in families:
        _, body = grammar(family)
        named = statement(body, "aliases")
        if named:
            aliases[family] = [a.strip() for a in named.split(",")]
    out = [
        "# Families",
        "",
        "<!-- Written by `python scripts/families_doc.py` from grammars/*.tg; do not edit by hand. -->",
        "",
        "Every model family toolgrammar parses: its registered names, its argument dialect, its",
        "grammar file, what the grammar's leading comment says about it (the same text is the",
        "generated module's docstring: the markup, where it comes from upstream and every",
        "deliberate difference from vLLM, SGLang and llama.cpp, gathered in [compat.md](compat.md)),",
        "its grammar statements (every marker: reasoning,",
        "section, ignored tokens, the call), and the text `toolgrammar.render` writes for one call,",
        '`get_weather(city="Paris", days=3)` after the content `Checking.` (tools from',
        "`tests/corpus/tools.json`). A family's golden corpus, `tests/corpus/<family>.txt`,",
        "shows its real shapes, truncations and malformed cases with their expected readings.",
        "",
        "What every family shares (whitespace, unknown tools, ids, finish reasons, schema",
        "coercion, unfinished output) is in [policies.md](policies.md), and what every family",
        "is checked to hold is in [invariants.md](invariants.md). The grammar language is",
        "[`grammars/README.md`](../grammars/README.md).",
        "",
        "## Argument dialects",
        "",
        "A grammar picks one of these for its call's arguments; the runtime implements each once.",
        "",
        "| dialect | arguments written as | families |",
        "| --- | --- | --- |",
    ]
    by_dialect: dict[str, list[str]] = {}
    for family in families:
        by_dialect.setdefault(dialect(family), []).append(family)
    for name in DIALECTS:
        members = ", ".join(f"[{f}](#{f})" for f in by_dialect.get(name, []))
        out.append(f"| `{name}` | {DIALECT_TEXT[name]} | {members} |")
    out += ["", "## Registered names", "", "| name | family |", "| --- | --- |"]
    for name in toolgrammar.families():
        owner = next((f for f in families if name == f or name in aliases[f]), name)
        out.append(f"| `{name}` | [{owner}](#{owner}) |")
    for family in families:
        comment, body = grammar(family)
        parent = statement(body, "extends")
        names = ", ".join(f"`{n}`" for n in [family, *aliases[family]])
        facts = f"Names: {names}. Grammar: [`grammars/{family}.tg`](../grammars/{family}.tg)"
        if parent:
            facts += f", extends [{parent}](#{parent})"
        facts += f". Arguments: `{dialect(family)}`."
        out += ["", f"## {family}", "", facts, "", *prose(comment)]
        out += [
            "",
            "Its grammar, after the comment:",
            "",
            *fenced(body.strip().split("\n")),
        ]
        text = example(family)
        if text is not None:
            out += ["", "Rendered:", "", *fenced(text.split("\n"))]
    return "\n".join(out) + "\n"


def counted(path: Path) -> str:
    """`path`'s text with its family counts made current (README.md, docs/export.md)."""
    grammars = len(list(GRAMMARS.glob("*.tg")))
    names = len(toolgrammar.families())
    text = path.read_text(encoding="utf-8")
    text = re.sub(
        r"\d+ grammars, \d+ registered names",
        f"{grammars} grammars, {names} registered names",
        text,
    )
    return re.sub(r"all \d+ grammars", f"all {grammars} grammars", text)


def main() -> int:
    outputs = {OUT: catalogue()}
    for path in (ROOT / "README.md", ROOT / "docs" / "export.md"):
        outputs[path] = counted(path)
    if "--check" in sys.argv[1:]:
        stale = [str(p) for p, text in outputs.items() if p.read_text(encoding="utf-8") != text]
        if stale:
            print(f"{', '.join(stale)} stale: run python scripts/families_doc.py", file=sys.stderr)
            return 1
        return 0
    for path, text in outputs.items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
