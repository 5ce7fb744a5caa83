"""Every golden corpus case parses to its expectation, whole and as a stream."""

from __future__ import annotations

import collections

import pytest

import toolgrammar
from support.corpus_format import (
    CORPUS,
    MIN_CASES,
    Case,
    all_cases,
    render_expect,
    rewrite,
    updating,
)
from toolgrammar.check.invariants import run, split_at

CASES = all_cases()
UPDATE = updating()


def test_corpus_is_not_empty() -> None:
    families = {case.family for case in CASES}
    assert {"qwen3_coder", "hermes", "kimi_k2"} <= families
    counts = collections.Counter(case.family for case in CASES)
    few = {family: n for family, n in sorted(counts.items()) if n < MIN_CASES}
    assert (
        not few
    ), f"every family's corpus needs {MIN_CASES} cases or more; these have fewer: {few}"


def test_corpus_names_are_registered_families() -> None:
    assert {case.family for case in CASES} <= set(toolgrammar.families())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_whole_output(case: Case) -> None:
    message = toolgrammar.parse(
        case.family, case.text, case.tools, case.finish, ids="sequential", **case.options
    )
    got = render_expect(message)
    if UPDATE:
        _updates.setdefault(case.family, {})[case.name] = got
        return
    assert got == case.expect


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_one_char_stream_matches(case: Case) -> None:
    _, message = run(
        case.family,
        split_at(case.text, list(range(1, len(case.text)))),
        case.tools,
        case.options,
        case.finish,
    )
    assert render_expect(message) == case.expect or UPDATE


_updates: dict[str, dict[str, dict]] = {}


def teardown_module() -> None:
    for family, results in _updates.items():
        rewrite(CORPUS / f"{family}.txt", results)
