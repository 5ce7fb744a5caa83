"""The first characters a name pattern's matches may begin with (`first_chars.py`): wrong
only ever towards "may", since a "no" gives the call up at that character."""

from __future__ import annotations

import pytest

from toolgrammar.runtime.first_chars import may_begin
from toolgrammar.runtime.spec import Name, never_a_name


@pytest.mark.parametrize(
    "pattern, never, may",
    [
        (r"(?P<name>python)", "<>{x P", "p"),
        (r"(?P<name>[^\s<]+)", "<", "ax>{"),
        (r"\s*(?P<q>[\"']?)(?P<name>[^\"'\s>]+)(?P=q)\s*", ">", "\"'ab<"),
        (r"(?P<name>[^\[\]{}\s]+)\s*(?:\[CALL_ID\]\s*(?P<id>\S+))?", "[]{}", "a<"),
        (r"(?:functions\.)?(?P<name>[^:\s]+):\d+", ":", "fa"),
        (r"(?P<name>[^\"]*)(?:\"\s+[\w:-]+=\"[^\"]*)*", "", '"a'),  # an empty name: anything
        (r"(?P<name>\d+|x)", "ay", "0x"),
        (r"(?:a|)b", "c", "ab"),
    ],
)
def test_what_a_pattern_may_begin_with(pattern: str, never: str, may: str) -> None:
    assert [c for c in never if may_begin(pattern, c)] == []
    assert [c for c in may if not may_begin(pattern, c)] == []


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?i)python",  # case-insensitive: not read
        r"(?P<q>a)(?P=q)",
        r"(?=.*\btool=\"(?P<name>[^\"]*)\").*",  # a lookahead, then anything
        r"(?(1)a|b)",  # not even valid without a group 1: unsure
    ],
)
def test_what_it_cannot_read_may_begin_with_anything(pattern: str) -> None:
    assert may_begin(pattern, "P") or pattern == r"(?P<q>a)(?P=q)"
    assert may_begin(pattern, "a")


def test_a_first_character_no_match_begins_with_is_no_name() -> None:
    item = Name(until=("\n",), pattern=r"(?P<name>python)")
    assert never_a_name(item, ">python")
    assert not never_a_name(item, "pyth")
