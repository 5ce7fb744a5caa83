"""A delta of prose after prose is sent without a scan (`Engine._prose`, read by `feed`): when
the last scan sent all its text as content (or reasoning) and would search the same markers
next, a delta holding none of their first characters is sent as the scan would send it. It is a
shortcut: every feed gives the same deltas with the shortcuts on and off, in every grammar,
however the deltas cut prose, whitespace, markers and calls; and it is taken (the scans it
saves are counted)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import TOOLS
from support.readers import counted_scans, feeds_at
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.check.fuzz import grammars
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.render import render_output
from toolgrammar.runtime.tables import compiled

FAMILIES = grammars()
PROSE = ["Hello there", " ", "  ", "\n", "\n\n", "\t", "word. ", "x", "(", "{", "]"]


def pieces_of(family: str) -> list[str]:
    """Prose, whitespace, a whole call and half of one, every marker the family's content,
    sections and reasoning search and half of each."""
    spec = get_spec(family)
    call = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})])
    tables = compiled(spec)
    markers = sorted(
        {
            *tables.content_markers.literals,
            *tables.section_markers.literals,
            *tables.reasoning_closers.literals,
        }
    )
    return [*PROSE, call, call[: len(call) // 2], *markers, *(m[: len(m) // 2] for m in markers)]


@st.composite
def outputs(draw: Any, family: str) -> tuple[str, list[int]]:
    pieces = pieces_of(family)
    # mostly prose, so that prose follows prose across many cuts
    prose = st.sampled_from(PROSE)
    text = "".join(
        draw(st.lists(st.one_of(prose, prose, st.sampled_from(pieces)), min_size=1, max_size=12))
    )
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=16))
    return text, cuts


@pytest.mark.parametrize("family", FAMILIES)
def test_every_feed_is_the_same_with_shortcuts_off(family: str) -> None:
    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def run(data: Any) -> None:
        text, cuts = data.draw(outputs(family))
        # (reasoning open: the prose is reasoning until a closer, an opener in it considered)
        options = {"reasoning_open": data.draw(st.booleans())}
        with shortcuts_set(True):
            fast = feeds_at(family, TOOLS, text, cuts, "stop", **options)
        with shortcuts_set(False):
            slow = feeds_at(family, TOOLS, text, cuts, "stop", **options)
        assert fast == slow

    run()


@pytest.mark.parametrize(
    "family, options",
    [
        ("kimi_k2", {}),
        ("hermes", {}),
        ("minimax_m2", {"reasoning_open": True}),  # prose in reasoning, then considered
        ("deepseek_v31", {"reasoning_open": True}),
        (
            "minimax_m2",
            {"compat": "sglang", "reasoning_open": False},
        ),  # after the calls: text ends `after_calls`
        ("pythonic", {}),
    ],
)
def test_prose_after_prose_is_not_scanned_and_reads_the_same(
    family: str, options: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prose, a call, prose again, in 16-character deltas: the same deltas both ways, and
    with the shortcut the prose deltas after the first of a run skip the scan."""
    spec = get_spec(family)
    call = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})])
    prose = "Some plain words without markup, about the weather today. " * 4
    text = prose + call + prose
    scans = counted_scans(monkeypatch)
    counts, results = {}, {}
    for on in (True, False):
        scans.clear()
        with shortcuts_set(on):
            results[on] = feeds_at(
                family, TOOLS, text, list(range(0, len(text), 16)), "stop", **options
            )
        counts[on] = len(scans)
    assert results[True] == results[False]
    assert counts[True] <= counts[False] - len(prose) // 16  # most prose deltas skipped
