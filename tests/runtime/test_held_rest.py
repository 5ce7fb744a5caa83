"""The scan loop stops where a scan held the rest of its text back as the start of a marker
(`Engine._held_rest`): a scan of that rest would only hold it back again. It is a shortcut:
every feed gives the same deltas with the shortcuts on and off, however the deltas cut the
markers, and it is taken (the scans it saves are counted)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import TOOLS
from support.readers import counted_scans, feeds_at
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.render import render_output
from toolgrammar.runtime.tables import compiled

# JSON, XML and Python-call families, one with reasoning, one whose opener may grow
# (`[TOOL_CALLS]`), one with citation markers that have a tail, one whose calls stand outside
# a section (its closer after them is markup, text once text came: `after_calls`)
FAMILIES = (
    "deepseek_v3",
    "kimi_k2",
    "mistral",
    "qwen3_coder",
    "minicpm5",
    "pythonic",
    "cohere_command4",
    "minimax_m2",
)


def pieces_of(family: str) -> list[str]:
    """Text to build outputs from: a whole call, its markers and their first characters,
    prose and whitespace."""
    spec = get_spec(family)
    call = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})])
    family_tables = compiled(spec)
    markers = sorted(
        {*family_tables.content_markers.literals, *family_tables.section_markers.literals}
    )
    return [call, call[: len(call) // 2], "Hello ", " ", "\n", "<", "[", "x", *markers] + [
        m[: len(m) // 2] for m in markers
    ]


@st.composite
def outputs(draw: Any, family: str) -> tuple[str, list[int]]:
    pieces = pieces_of(family)
    text = "".join(draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=8)))
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=12))
    return text, cuts


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_feed_is_the_same_with_shortcuts_off(family: str, data: Any) -> None:
    text, cuts = data.draw(outputs(family))
    with shortcuts_set(True):
        fast = feeds_at(family, TOOLS, text, cuts, "stop")
    with shortcuts_set(False):
        slow = feeds_at(family, TOOLS, text, cuts, "stop")
    assert fast == slow


@pytest.mark.parametrize("family", ("deepseek_v3", "minicpm5"))
def test_each_split_is_the_same_and_the_rescan_is_saved(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many calls cut at every 16 characters and at every position of one call: the same
    deltas both ways, and fewer scans with the shortcut (it is taken)."""
    spec = get_spec(family)
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 6)
    scans = counted_scans(monkeypatch)
    counts = {}
    for on in (True, False):
        scans.clear()
        with shortcuts_set(on):
            results = [feeds_at(family, TOOLS, text, list(range(0, len(text), 16)), "stop")]
            results += [feeds_at(family, TOOLS, text, [at], "stop") for at in range(len(text) // 6)]
        counts[on] = len(scans)
        if on:
            fast = results
        else:
            assert results == fast
    assert counts[True] < counts[False]


@pytest.mark.parametrize("options", [{}, {"compat": "sglang"}])
def test_text_that_ends_the_calls_block_is_scanned_again(options: dict) -> None:
    """The scan that sent `<` after the calls ended `after_calls`: `</m` no longer begins a
    marker (the closer after the calls is text again), so the loop scans it once more and
    it goes out at once (found by `toolgrammar fuzz`, seed 31, under the compiled build)."""
    text = '<invoke name="1"></invoke><</m'
    out = {}
    for on in (True, False):
        with shortcuts_set(on):
            parser = toolgrammar.StreamParser(
                "minimax_m2", [], ids="sequential", reasoning_open=False, **options
            )
            fed = [d.to_dict() for d in parser.feed(text)]
            out[on] = fed, [d.to_dict() for d in parser.finish()]
    assert out[True] == out[False]
    assert out[True][0][-1] == {"content": "<</m"} and out[True][1] == []


@pytest.mark.parametrize("family", ("kimi_k2", "deepseek_v3", "mistral"))
def test_a_feed_still_inside_the_held_marker_is_held_without_a_scan(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feed that leaves all the text held still only the start of a marker (no marker in
    it) is held at once (`Engine.feed`, `_held_rest` kept from the last feed): the same
    deltas as the scan gives, at every cut of a marker into one-character feeds, and no scan
    of it (the shortcut is taken)."""
    spec = get_spec(family)
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 3)
    scans = counted_scans(monkeypatch)
    counts = {}
    for on in (True, False):
        scans.clear()
        with shortcuts_set(on):
            # a character a feed, then 3 and 7 a feed
            results = [feeds_at(family, TOOLS, text, list(range(len(text))), "stop")]
            results += [
                feeds_at(family, TOOLS, text, list(range(0, len(text), size)), "stop")
                for size in (3, 7)
            ]
        if on:
            fast = results
        else:
            assert results == fast
    # a marker's start, then more of it: the second feed is held with no scan, shortcut on
    marker = max(compiled(spec).content_markers.literals, key=len)
    said = {}
    for on in (True, False):
        with shortcuts_set(on):
            parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential")
            first = [d.to_dict() for d in parser.feed("Hi " + marker[:3])]
            scans.clear()
            assert parser.feed(marker[3:-2]) == []
            counts[on] = len(scans)
            said[on] = first, [d.to_dict() for d in parser.feed(marker[-2:] + "x")]
    assert counts == {True: 0, False: 1}
    assert said[True] == said[False] and said[True][0] != []
