"""docs/compat.md stays what the grammars and the corpus say about the peers.

Each grammar's `Differs from PEER:` bullets name the corpus cases that pin them, every case
titled `differs from PEER` is named by a bullet, and the doc is regenerated from both
(`scripts/compat_doc.py`). The checker itself is tried on small made-up inputs, so that a
check that stopped finding anything would fail here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _compat_doc() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compat_doc", ROOT / "scripts" / "compat_doc.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


COMPAT = _compat_doc()


def _case(title: str, line: int = 1) -> object:
    """A corpus case the way corpus_cases reads it from a `=== title` line."""
    named = COMPAT.TITLE.match(title)
    peers = named.group(1).replace(" and ", ", ").split(", ") if named else []
    return COMPAT.CorpusCase(title, line, peers)


def _problems(comments: dict[str, str], titles: dict[str, list[str]]) -> list[str]:
    """The checker's findings for made-up grammar comments and corpus titles."""
    grammars = {f: COMPAT.parse_comment(f, text.split("\n")) for f, text in comments.items()}
    corpora = {f: [_case(t) for t in ts] for f, ts in titles.items()}
    return COMPAT.check(grammars, corpora)


GOOD = """Some family.
Differs from vLLM:
- Text after the calls is content (the peer drops it).
  (case: text after the calls)
- Keys are stripped. (cases: keys are stripped; a key with spaces)
Upstream: somewhere."""


def test_every_difference_is_pinned_and_every_differs_case_listed() -> None:
    grammars, corpora = COMPAT.load()
    problems = COMPAT.check(grammars, corpora)
    assert not problems, "\n".join(problems)


def test_compat_doc_is_current() -> None:
    grammars, corpora = COMPAT.load()
    assert (ROOT / "docs" / "compat.md").read_text(encoding="utf-8") == COMPAT.document(
        grammars, corpora
    ), "docs/compat.md is stale: run python scripts/compat_doc.py"


def test_every_family_has_a_section_and_the_shared_policies_are_said_once() -> None:
    text = (ROOT / "docs" / "compat.md").read_text(encoding="utf-8")
    for family in COMPAT.families():
        assert f"\n## {family}\n" in text
    assert text.count("policies.md#whitespace") == 1


def test_the_format_reads_bullets_their_cases_and_where_the_block_ends() -> None:
    grammar = COMPAT.parse_comment("x", GOOD.split("\n"))
    assert not grammar.problems
    bullets = grammar.blocks["vLLM"].bullets
    assert [b.phrases for b in bullets] == [
        ["text after the calls"],
        ["keys are stripped", "a key with spaces"],
    ]
    assert bullets[0].text == "Text after the calls is content (the peer drops it)."
    assert not _problems(
        {"x": GOOD},
        {
            "x": [
                "differs from vLLM: text after the calls is content",
                "keys are stripped",
                "a key with spaces",
            ]
        },
    )


def test_a_difference_without_a_pinning_case_is_reported() -> None:
    no_suffix = "Differs from vLLM:\n- Keys are stripped."
    assert any("names no pinning corpus case" in p for p in _problems({"x": no_suffix}, {"x": []}))
    unknown_title = _problems({"x": GOOD}, {"x": ["keys are stripped", "a key with spaces"]})
    assert any("(case: text after the calls) matches no case" in p for p in unknown_title)


def test_a_differs_case_no_bullet_lists_is_reported() -> None:
    titles = [
        "text after the calls",
        "keys are stripped",
        "a key with spaces",
        "differs from SGLang: keys are stripped",
        "differs from vLLM: names are lower-cased",
        "differs from TGI: anything",
    ]
    problems = _problems({"x": GOOD}, {"x": titles})
    assert any(
        "'differs from vLLM: names are lower-cased' is listed by no bullet" in p for p in problems
    )
    assert any("'Differs from SGLang:' in grammars/x.tg" in p for p in problems)
    assert any("names no known peer" in p for p in problems)
    assert len(problems) == 3


def test_shared_differences_cover_and_may_be_pinned_by_the_sharing_family() -> None:
    parent = "Differs from vLLM:\n- Keys are stripped. (case: keys are stripped)"
    child = "Differs from vLLM: those of parent."
    titles = {"parent": [], "child": ["differs from vLLM: keys are stripped on both sides"]}
    assert not _problems({"parent": parent, "child": child}, titles)
    missing = _problems({"child": "Differs from vLLM: those of nobody."}, {"child": []})
    assert any("'those of nobody': no such grammar" in p for p in missing)


def test_prose_differences_are_reported_until_converted() -> None:
    prose = "Deliberate differences from vLLM: calls stream as they arrive."
    assert any("is prose" in p for p in _problems({"x": prose}, {"x": []}))
    stray = "Differs from vLLM: calls stream."
    assert any("only 'those of FAMILY' may follow" in p for p in _problems({"x": stray}, {"x": []}))
