"""Runtime bugs injected on purpose, one per class of bug the field ships.

The grammar language cannot say these bugs: holding back a partial closer, typing a value
only once it is complete and keeping an open parameter are the runtime's job, done once
for every family. So the fixtures that prove `toolgrammar check` catches them break the
runtime itself, for the duration of a `with` block, and the checker runs an unchanged
grammar on top. Each mutant copies the shape of a real parser bug (the field reports of
docs/invariants.md#field-reports, and vLLM behaviours that docs/families.md records).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import pytest

from toolgrammar.runtime import markers as markers_module
from toolgrammar.runtime import scan_meter, shared_memos
from toolgrammar.runtime import xml_params
from toolgrammar.runtime.xml_params import XmlParamsReader


@contextmanager
def closer_not_recognised_across_a_split(mp: pytest.MonkeyPatch) -> Iterator[None]:
    """A scanner that never holds back a partial marker: `</para` + `meter>` is value text.

    Broken everywhere the runtime holds a marker's start back: `Markers.held`, the tail
    pattern readers search in line (`Markers.find_tail`, made from `_tail_pattern`), and
    the proper prefixes an XML value's text is looked up among (`xml_params._value_marks`).
    Tables made before the block hold the whole patterns, and those made in it the broken
    ones: both are forgotten (`scan_meter.forgets`), and the block undoes its patches."""
    mp.setattr(markers_module.Markers, "held", lambda self, text, start, end=None: 0)
    mp.setattr(markers_module, "_tail_pattern", lambda literals: "")
    value_marks = xml_params._value_marks

    def no_prefixes(item: Any, value_ends: Any) -> tuple[Any, frozenset[str], int]:
        lits, _, reach = value_marks(item, value_ends)
        return lits, frozenset(), reach

    mp.setattr(xml_params, "_value_marks", no_prefixes)
    _forget_tables()
    try:
        yield
    finally:
        mp.undo()
        _forget_tables()


def _forget_tables() -> None:
    """Empty every cache of tables made from the markers (what `scan_meter.counting` empties)."""
    for clear in scan_meter._FORGET:
        clear()


@contextmanager
def value_leaks_a_partial_closing_tag(mp: pytest.MonkeyPatch) -> Iterator[None]:
    """At the end of output, the held-back tail (`</param`) is written into the value."""
    original: Callable = XmlParamsReader._value

    def leaky(self: XmlParamsReader, text: str, pos: int, eof: bool) -> int:
        if eof and self._value_ends.search(text, pos)[0] < 0:
            self._value_text(text[pos:], closing=True)
            self._close_param()
            return len(text)
        return original(self, text, pos, eof)

    mp.setattr(XmlParamsReader, "_value", leaky)
    yield


@contextmanager
def coerced_value_streamed_early(mp: pytest.MonkeyPatch) -> Iterator[None]:
    """Every value streamed as a string before its schema type is applied: `"12"`, not 12.

    What a key reads as (`streams_as_text` among it) is kept per tool by the parsers of the
    process (`shared_memos.py`): keys read before the block, and in it, are forgotten."""
    mp.setattr(xml_params, "streams_as_text", lambda schema: True)
    shared_memos.forget()
    try:
        yield
    finally:
        mp.undo()
        shared_memos.forget()


@contextmanager
def dropped_trailing_parameter(mp: pytest.MonkeyPatch) -> Iterator[None]:
    """A typed parameter still open at the end of output is dropped (a closer-requiring regex)."""
    original: Callable = XmlParamsReader._value

    def dropping(self: XmlParamsReader, text: str, pos: int, eof: bool) -> int:
        if eof and not self._as_text and self._value_ends.search(text, pos)[0] < 0:
            self._typed, self._pend = [], ""  # never closed: never written
            self.state = xml_params.BETWEEN
            return len(text)
        return original(self, text, pos, eof)

    mp.setattr(XmlParamsReader, "_value", dropping)
    yield


# each mutant, and the invariant the checker must report for it
MUTANTS = {
    "closer_not_recognised_across_a_split": (closer_not_recognised_across_a_split, "parity"),
    "value_leaks_a_partial_closing_tag": (value_leaks_a_partial_closing_tag, "kept"),
    "coerced_value_streamed_early": (coerced_value_streamed_early, "coercion"),
    "dropped_trailing_parameter": (dropped_trailing_parameter, "kept"),
}
