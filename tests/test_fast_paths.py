"""Every grammar's fast paths read as its slow ones (`toolgrammar/check/fast_paths.py`): with
the shortcuts on and off the same deltas per feed and the same message, and parse()'s
whole-output route the same message as the engine, on hostile outputs drawn by hypothesis
(a fuzz input of the family, spans of it cut out or doubled, streamed in drawn chunks).

A CI bound: a few examples per grammar, seconds in all; the deep run is `toolgrammar fuzz`,
which checks the same on every input (docs/fuzzing.md).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from toolgrammar.check.fast_paths import disagreement
from toolgrammar.check.fuzz import grammars, make_input

FAMILIES = grammars()
EXAMPLES = 4  # per grammar


@st.composite
def outputs(draw: st.DrawFn, family: str) -> tuple[object, str, list[int]]:
    """A fuzz input of `family` (its tools, options and finish), its text edited by spans
    cut out or doubled, and split points of the stream."""
    item = make_input(family, draw(st.integers(0, 2**32)))
    text = item.text
    for _ in range(draw(st.integers(0, 2))):
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, min(len(text), a + 80)))
        text = text[:a] + text[b:] if draw(st.booleans()) else text[:b] + text[a:b] + text[b:]
    points = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))))
    return item, text, [p for p in points if p < len(text)]


@pytest.mark.parametrize("family", FAMILIES)
def test_fast_paths_read_as_the_slow_paths(family: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(outputs(family))
    def check(drawn: tuple[object, str, list[int]]) -> None:
        item, text, points = drawn
        found = disagreement(
            family, text, item.tools, item.options, item.finish, [[], points]  # type: ignore[attr-defined]
        )
        assert found is None, str(found)

    check()


def test_the_check_sees_a_fast_path_that_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a reading that depends on the shortcuts' switch is found."""
    from toolgrammar.check import invariants
    from toolgrammar.runtime import shortcuts

    import toolgrammar

    class Planted(toolgrammar.StreamParser):
        def finish(self, reason: str = "stop") -> list:
            deltas = super().finish(reason)
            if shortcuts.ON:
                deltas.append(toolgrammar.Delta(content="!"))
            return deltas

    monkeypatch.setattr(invariants, "StreamParser", Planted)
    item = make_input("hermes", 0)
    found = disagreement("hermes", item.text, item.tools, item.options, item.finish, [[]])
    assert found is not None and found.invariant == "shortcuts"
