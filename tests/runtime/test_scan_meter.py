"""The linear-work tests' scan meter: nothing while it is off, every metered scan while on."""

from __future__ import annotations

import re

import pytest

import toolgrammar
from toolgrammar.runtime import scan_meter
from toolgrammar.runtime.markers import markers


def test_off_the_patterns_are_the_compiled_ones_themselves() -> None:
    pattern = re.compile("a+")
    assert scan_meter.metered(pattern) is pattern  # a scan costs nothing more
    assert type(markers(("<tool_call>",))._regex) is re.Pattern  # type: ignore[attr-defined]


def test_on_marker_searches_count_up_to_the_marker_and_whole_texts_when_none() -> None:
    with scan_meter.counting() as meter:
        found = markers(("<b>",))
        assert found.search("xxxx<b>", 0) == (4, "<b>")
        assert (meter.chars, meter.scans) == (4, 1)
        assert found.search("yyy", 1) == (-1, "")
        assert (meter.chars, meter.scans) == (6, 2)
    assert type(markers(("<b>",))._regex) is re.Pattern  # made again, uncounted, after it


def test_a_parse_under_the_meter_counts_and_reads_the_same() -> None:
    text = "Hi <tool_call>\n" + '{"name": "f", "arguments": {"a": 1}}\n</tool_call>' * 3
    plain = toolgrammar.parse("hermes", text, ids="sequential")
    with scan_meter.counting() as meter:
        counted = toolgrammar.parse("hermes", text, ids="sequential")
    assert counted == plain
    assert 0 < meter.chars <= 2 * len(text)
    with scan_meter.counting():
        with pytest.raises(RuntimeError, match="already running"):
            with scan_meter.counting():
                pass
