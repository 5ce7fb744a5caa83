"""A parser leaves no reference cycles behind: what it made is freed when it is dropped.

A server parses many outputs at once; objects caught in cycles wait for the garbage
collector (a pause that grows with what is alive), and with the collector off they are
never freed. Each golden corpus case is parsed whole and streamed in 7-char deltas with
the collector off; whatever the collector then finds unreachable is a cycle we made.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import toolgrammar
from toolgrammar.runtime import schemas
from support.corpus_format import Case, all_cases

CASES = all_cases()


@pytest.fixture
def collector_off() -> Iterator[None]:
    # the schema cache holds earlier tests' recursive schemas, whose resolved graphs are
    # cyclic by design; were it to fill up and clear during this test, their cycles (not
    # this test's) would be found: start from an empty cache
    schemas._ROOTS.clear()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def parse_and_stream(case: Case) -> None:
    toolgrammar.parse(case.family, case.text, case.tools, case.finish, **case.options)
    parser = toolgrammar.StreamParser(case.family, case.tools, **case.options)
    for start in range(0, len(case.text), 7):
        parser.feed(case.text[start : start + 7])
    parser.finish(case.finish)


@pytest.mark.parametrize("family", sorted({case.family for case in CASES}))
def test_parsing_a_familys_corpus_leaves_no_cycles(family: str, collector_off: None) -> None:
    for case in CASES:
        if case.family == family:
            parse_and_stream(case)
    assert gc.collect() == 0


def test_the_check_finds_a_cycle(collector_off: None) -> None:
    node: list[object] = []
    node.append(node)
    del node
    assert gc.collect() >= 1  # (the cycle, and whatever else pytest left unreachable)
