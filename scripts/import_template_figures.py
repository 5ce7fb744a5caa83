"""How far `import-template --chat-template` gets on every fetched chat template.

For each template of both sources (`python scripts/fetch_templates.py` fetches them): the
grammar it writes, whether that grammar passes `check` unedited (the round trip through the
same template included), and, for a template a `grammars/templates.toml` row gives a family,
its markers beside the hand-written grammar's, marker by marker.

Usage: python scripts/import_template_figures.py [TEMPLATES_DIR] [--budget S] [--out OUTPUT_PATH]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from toolgrammar.check.templates import TEMPLATE_CACHE, TEMPLATE_SOURCES, template_table
from toolgrammar.compiler.build import compile_grammar_text
from toolgrammar.import_template import (
    Checked,
    ImportProblem,
    check_imported,
    import_chat_template,
)
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import FamilySpec, Lit, Ws

SKIP_FIELDS = {"line", "file"}


def spec_of(text: str, name: str) -> FamilySpec:
    namespace: dict[str, Any] = {}
    exec(compile(compile_grammar_text(text, f"{name}.tg", None, []), name, "exec"), namespace)
    return namespace["SPEC"]


def markers(spec: FamilySpec) -> dict[str, str]:
    """One family's markers by role: what the comparison lines up."""
    found: dict[str, str] = {}
    if spec.reasoning:
        found["reasoning"] = f"{spec.reasoning[0].opens[0]!r} {spec.reasoning[0].closes[0]!r}"
        if spec.reasoning[0].prompt_opened:
            found["reasoning prompt_opened"] = "True"
    if spec.section:
        found["section"] = f"{spec.section.opens[0]!r} {spec.section.closes[0]!r}"
    if spec.content:
        found["content"] = " ".join(
            repr(c) for c in (*spec.content.opens[:1], *spec.content.closes[:1])
        )
    # the call's literal text, whitespace left out: `"<invoke" ws "name="` and `"<invoke name="`
    # read alike
    literals = [i.text for i in spec.call if isinstance(i, Lit) and not i.peek]
    found["call literals"] = repr("".join("".join(literals).split()))
    for item in spec.call:
        if isinstance(item, (Lit, Ws)):
            continue
        kind = type(item).__name__
        if kind in ("Name", "Skip"):
            found[kind.lower()] = ", ".join(
                f"{f.name}={getattr(item, f.name)!r}"
                for f in fields(item)
                if f.name in ("until", "pattern", "id") and getattr(item, f.name)
            )
        else:
            found["dialect"] = kind
            for f in fields(item):
                value = getattr(item, f.name)
                if f.name not in SKIP_FIELDS and value != f.default and f.name != "implicit_end":
                    found[f"{kind}.{f.name}"] = repr(value)
    return found


def compare(ours: dict[str, str], theirs: dict[str, str]) -> tuple[int, int, list[str]]:
    keys = sorted(set(ours) | set(theirs))
    same = sum(1 for k in keys if ours.get(k) == theirs.get(k))
    diffs = [
        f"{k}: ours {ours.get(k, '-')} / hand {theirs.get(k, '-')}"
        for k in keys
        if ours.get(k) != theirs.get(k)
    ]
    return same, len(keys), diffs


def _checked(text: str, name: str, path: Path, found: Any, budget: float) -> Checked:
    """`check` on the imported grammar; a budget of 0 skips it (the comparison alone)."""
    if budget <= 0:
        return Checked(False, "not checked")
    try:
        return check_imported(
            text, name, path, budget, None, found.mutable, found.as_text, tuple(found.ignore)
        )
    except Exception as error:  # a crash is a figure too, not the end of the run
        return Checked(False, f"{type(error).__name__}: {error}")


def _why(out: str) -> str:
    """The first findings of a failed check: a template finding, a failed invariant, or a
    build error."""
    lines = [line.strip() for line in out.splitlines()]
    picked = [line for line in lines if line.startswith("[") or line.endswith("FAILED")]
    picked = picked or [line for line in lines if "error" in line or "FAILED" in line]
    return "; ".join((picked or lines[:1])[:2])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("templates", nargs="?", default=str(TEMPLATE_CACHE))
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--out")
    parser.add_argument("--grammars", help="also write each grammar here, as TEMPLATE.tg")
    args = parser.parse_args(argv)
    root = Path(args.templates)
    families: dict[tuple[str, str], list[str]] = {}
    known: dict[tuple[str, str], set[str]] = {}
    for row in template_table():
        where = (row.get("source", "llama.cpp"), row["file"])
        families.setdefault(where, []).append(row["family"])
        known.setdefault(where, set()).update(row.get("known", []))
    lines = [
        "| source | template | import | check | hand-written family | markers equal | differences |",
        "|---|---|---|---|---|---|---|",
    ]
    totals = {"templates": 0, "imported": 0, "passed": 0, "passed with known": 0}
    compared = {"templates": 0, "equal": 0, "markers": 0, "all equal": 0}
    roles: dict[str, int] = {}
    for source, folder in TEMPLATE_SOURCES.items():
        for path in sorted((root / folder).glob("*.jinja")):
            totals["templates"] += 1
            name = "imported"
            try:
                text, found = import_chat_template(
                    path.read_text(encoding="utf-8"), name, path.name
                )
            except ImportProblem as problem:
                lines.append(f"| {source} | {path.name} | no: {str(problem)[:90]} | | | | |")
                print(path.name, "no", problem, file=sys.stderr)
                continue
            totals["imported"] += 1
            if args.grammars:
                Path(args.grammars).mkdir(parents=True, exist_ok=True)
                (Path(args.grammars) / f"{path.stem}.tg").write_text(text, encoding="utf-8")
            checked = _checked(text, name, path, found, args.budget)
            ok, out = checked.ok, checked.report
            # the template's own limits, which the hand-written grammar's row lists as known
            allowed = known.get((source, path.name), set())
            with_known = checked.invariants_ok and set(checked.template_findings) <= allowed
            totals["passed"] += ok
            totals["passed with known"] += with_known
            why = "" if ok else _why(out)
            if not ok and with_known:
                why = "only the findings the family's row lists as the template's own: " + why
            hand = families.get((source, path.name), [])
            cells = ["", "", ""]
            if hand:
                family = get_spec(hand[0]).name
                try:
                    same, total, diffs = compare(
                        markers(spec_of(text, name)), markers(get_spec(family))
                    )
                    cells = [family, f"{same}/{total}", "; ".join(diffs)[:400].replace("|", "\\|")]
                    compared["templates"] += 1
                    compared["equal"] += same
                    compared["markers"] += total
                    compared["all equal"] += same == total
                    for diff in diffs:
                        role = diff.split(":", 1)[0]
                        roles[role] = roles.get(role, 0) + 1
                except Exception as error:
                    cells = [family, "", f"{type(error).__name__}"]
            status = "pass" if ok else f"fail: {why[:240]}".replace("|", "\\|")
            lines.append(f"| {source} | {path.name} | yes | {status} | {' | '.join(cells)} |")
            print(path.name, status, file=sys.stderr)
    head = (
        f"{totals['passed']} of {totals['templates']} fetched templates give a grammar that "
        f"passes `check` unedited ({totals['imported']} imported; check budget {args.budget} s); "
        f"{totals['passed with known']} when the findings the hand-written grammar's row lists "
        "as the template's own are allowed it too.\n\n"
        f"Beside the hand-written grammar of its family ({compared['templates']} templates): "
        f"{compared['equal']} of {compared['markers']} markers equal; every marker equal for "
        f"{compared['all equal']} templates. Differences by marker: "
        + ", ".join(f"{role} {n}" for role, n in sorted(roles.items(), key=lambda r: -r[1]))
        + ".\n"
    )
    report = head + "\n" + "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
