"""The standard library's C JSON decoder, at a cost bounded by what it reads.

A failed `scan_once` or `scanstring` raises `JSONDecodeError`, whose constructor counts
the newlines from the start of the text it was given to report a line and column. Given
the whole output, that is the length of the output before the value: an output of
repeated call openers fails once per opener, and the parse goes quadratic (hermes: 11 s
for 530K characters of `<tool_call>\\n{"name": "`). Here the decoder is given a window
that starts at the value and grows until the answer cannot depend on the text past it.
"""

from __future__ import annotations

from json import JSONDecodeError
from typing import Callable, TypeVar

T = TypeVar("T")
Scan = Callable[[str, int], tuple[T, int]]

_FIRST_WINDOW = 256
_GROWTH = 4
# how much faster the window grows once a string that opened in its first quarter outlasted
# it: that string is long, and a failed read of one costs about twice what a whole one does
# (a 16K string was read in windows of 256, 1K, 4K and 16K, twice one read of it; now 256
# then 16K). The decoder must read past the window anyway, so the copy of the next one stays
# within 64 times what is read.
_STRING_GROWTH = 64
# the farthest before the window's end an error caused by the cut is reported: a number
# (`1.` of `1.5`), a literal (`tru`, `-Infinit`), a `\u` escape with its digits
_CUT_REACH = 16


def scan_within(scan: Scan[T], text: str, pos: int, end: int) -> tuple[T, int]:
    """`scan(text, pos)` as if the text ended at `end`: the value and where it ends (in
    `text`), or the decoder's exception. Costs what the decoder reads, times a constant."""
    size = _FIRST_WINDOW
    while pos + size < end:
        try:
            value, stop = scan(text[pos : pos + size], 0)
        except (ValueError, StopIteration) as error:
            if not _cut_by_window(error, size):
                raise
            if _long_open_string(error, size):
                size *= _STRING_GROWTH
                continue
        else:
            if stop < size:  # it ended inside the window: more text cannot change it
                return value, pos + stop
        size *= _GROWTH
    if pos == 0 and end == len(text):
        return scan(text, 0)
    value, stop = scan(text[pos:end], 0)
    return value, pos + stop


def _cut_by_window(error: Exception, size: int) -> bool:
    """Whether a failure in a window of `size` characters may be the window's cut rather
    than the text's: reported near its end, or a string still open there."""
    if isinstance(error, StopIteration):  # no value at a position (nested: the cut itself)
        return not isinstance(error.value, int) or error.value >= size - _CUT_REACH
    if isinstance(error, JSONDecodeError):
        return error.pos >= size - _CUT_REACH or error.msg.startswith("Unterminated")
    return False  # a hook refused a value the window holds whole (NaN, a repeated key)


def _long_open_string(error: Exception, size: int) -> bool:
    """Whether a window of `size` failed on a string still open at its end that opened in
    its first quarter (a key read from just after its quote reports -1)."""
    return (
        isinstance(error, JSONDecodeError)
        and error.pos <= size // 4
        and error.msg.startswith("Unterminated string")
    )


class _Found:
    """The first `char` at or after `start` in `text` is at `at` (-1: none)."""

    __slots__ = ("text", "start", "at")

    def __init__(self, text: str, start: int, at: int) -> None:
        self.text, self.start, self.at = text, start, at


_LAST: dict[str, _Found] = {}
# a stretch this short is searched directly: bounded work per question, cheaper than the memo
_SHORT = 64


def find_closer(text: str, char: str, start: int, end: int) -> int:
    """`text.find(char, start, end)`, remembered per character for the text at hand.

    A scanner asks this at every `{`, `[` and `"` it meets; over `{"name": ` repeated, no
    `}` follows any of them and each search went to the end of the output. One search
    from `start` that found `at` answers every later one from a position up to `at`, in
    this scanner or the next one made on the same text. (A cache: the last text searched
    stays referenced until another is; a stale answer is impossible, the text is compared
    by identity.)
    """
    if end - start <= _SHORT:  # (a delta's text: searched at once, no memo made of it)
        return text.find(char, start, end)
    found = _LAST.get(char)
    if found is None or found.text is not text or not found.start <= start <= _up_to(found):
        found = _Found(text, start, text.find(char, start))
        _LAST[char] = found
    return found.at if 0 <= found.at < end else -1


def _up_to(found: _Found) -> int:
    return len(found.text) if found.at < 0 else found.at
