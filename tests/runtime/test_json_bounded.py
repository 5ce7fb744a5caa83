"""`scan_within(scan, text, pos, end)` answers as `scan(text[pos:end], 0)` does, whatever
window schedule it reads in, and a long string costs about one read of it (the window grows
64-fold once a string opened at its start outlasts it)."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolgrammar.runtime.json_bounded import scan_within
from toolgrammar.runtime.json_stream import _scan_key, scan_value

Scan = Callable[[str, int], Any]


def answer(scan: Scan, text: str, pos: int, end: int, bounded: bool) -> tuple[Any, ...]:
    """What a scan gives: the value and where it ends (in `text`), or the error's kind,
    message and place (relative to `pos`)."""
    try:
        if bounded:
            value, stop = scan_within(scan, text, pos, end)
        else:
            value, stop = scan(text[pos:end], 0)
            stop += pos
    except (ValueError, StopIteration) as error:
        where = getattr(error, "pos", getattr(error, "value", None))
        return (type(error).__name__, getattr(error, "msg", None), where)
    return ("value", value, stop)


def agree(scan: Scan, text: str, pos: int = 0, end: int | None = None) -> None:
    end = len(text) if end is None else end
    assert answer(scan, text, pos, end, True) == answer(scan, text, pos, end, False)


# lengths about each window's edge (256, 256 * 4, 256 * 64, …)
EDGES = [n + d for n in (256, 1024, 4096, 16384) for d in (-18, -17, -2, -1, 0, 1, 2, 16)]
PIECES = ["a", "\\n", '\\"', "\\\\", "\\u00e9", "\\ud83d\\ude00", "é", " "]


@pytest.mark.parametrize("length", EDGES)
@pytest.mark.parametrize("piece", PIECES)
def test_a_long_string_reads_as_one_scan_of_it(length: int, piece: str) -> None:
    body = (piece * (length // len(piece) + 1))[:length]
    while body.endswith("\\") and not body.endswith("\\\\"):  # (no escape cut in two)
        body = body[:-1]
    for text in (f'"{body}"', f'"{body}"}}, "x": 1', f'"{body}', f'"{body}\x01"'):
        agree(scan_value, "xx" + text, 2)
        agree(scan_value, "xx" + text, 2, len(text) - 1)
        agree(_scan_key, text, 1)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES + ['"', "\\", "\x00", "}", "1"]), max_size=12),
    st.integers(200, 5000),
    st.integers(0, 40),
)
def test_strings_broken_anywhere_read_as_one_scan_of_them(
    junk: list[str], length: int, cut: int
) -> None:
    body = "b" * length + "".join(junk)
    for text in (f'"{body}"', '{"k": "' + body + '"}', f'["{body}", 2]'):
        agree(scan_value, text, 0, max(1, len(text) - cut))


@pytest.mark.parametrize("before", ["", '{"path": "big.py", "content": '])
def test_a_long_string_costs_about_one_read_of_it(before: str) -> None:
    """The windows read to take a 16K string whole, alone or as a member opened early in
    the first window: 256, then 64 times that (before, 256, 1K, 4K and 16K: twice the
    string read, the three that failed slower than one that did not)."""
    body = "x\\n" * 5400
    value_text = before + json.dumps(json.loads(f'"{body}"')) + ("}" if before else "")
    text = '{"content": ' + value_text + "}"
    pos = text.index(": ") + 2
    read: list[int] = []

    def counting(window: str, at: int) -> Any:
        read.append(len(window) - at)
        return scan_value(window, at)

    value, stop = scan_within(counting, text, pos, len(text))
    assert value == json.loads(value_text) and stop == len(text) - 1
    assert sum(read) <= 256 + 16384, read


def test_a_string_opened_late_in_the_window_grows_it_fourfold() -> None:
    """A string that opens near the window's end may be short: the next window is 4 times
    the last, not 64 (no 16K copy for a value of 300 characters)."""
    value_text = json.dumps({"a": "y" * 200, "b": "z" * 100})
    text = value_text + " " * 20000
    read: list[int] = []

    def counting(window: str, at: int) -> Any:
        read.append(len(window) - at)
        return scan_value(window, at)

    assert scan_within(counting, text, 0, len(text)) == (json.loads(text), len(value_text))
    assert read == [256, 1024], read
