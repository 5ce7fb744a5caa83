"""A run of a call's literals and whitespace that the text ends inside of is read in one
match (`tables._Run.partial`, `Engine._run_call`): the items before the one the text ends at,
and that one waits, as the items read one by one would. It is a shortcut: every feed gives
the same deltas with it and without it (the runs' partial patterns taken away), and with the
shortcuts off, wherever the deltas cut the markup; and it is taken (the item-by-item waits
it saves are counted)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.corpus_format import TOOLS
from support.readers import feeds_at
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.registry import families, get_spec
from toolgrammar.runtime.render import render_output
from toolgrammar.runtime.spec import Lit
from toolgrammar.runtime.tables import compiled


def _runs_of(family: str) -> list[Any]:
    with shortcuts_set(True):
        return [run for runs in compiled(get_spec(family)).runs for run in runs if run]


# every family with a run its partial pattern reads
PARTIAL = sorted({get_spec(f).name for f in families() if any(run.partial for run in _runs_of(f))})
# markups of each kind: fenced JSON, special tokens, XML, keyword lists, Python calls
SOME = [
    f
    for f in ("deepseek_v3", "mistral", "step3p5", "plamo3", "kimi_k2", "qwen3_coder")
    + ("cohere_command4", "apertus", "openai", "minicpm_v", "seed_oss", "functiongemma")
    if f in PARTIAL
]


# per family: the waits read item by item that the partial reads saved
saved: dict[str, int] = {}


class _NoPartials:
    """The general path: the runs read whole or item by item, never partly."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, family: str) -> None:
        self.monkeypatch, self.family = monkeypatch, family

    def __enter__(self) -> None:
        for run in _runs_of(self.family):
            self.monkeypatch.setattr(run, "partial", None)

    def __exit__(self, *exc: object) -> None:
        self.monkeypatch.undo()


def _calls(family: str, count: int) -> str:
    return render_output(get_spec(family), [("get_weather", {"city": "Paris", "days": 3})] * count)


def _cuttings(text: str) -> Iterator[list[int]]:
    """Every character its own delta, and 16-character deltas from every offset."""
    yield list(range(len(text)))
    for offset in range(16):
        yield list(range(offset, len(text), 16))


def _pieces(family: str) -> list[str]:
    """A call, the spellings of its runs' literals and their first halves, whitespace, prose."""
    spec = get_spec(family)
    call = _calls(family, 1)
    texts = sorted({t for item in spec.call if isinstance(item, Lit) for t in item.texts})
    return [call, call[: len(call) // 2], " ", "\n", "\n\n", "x", "get_weather", *texts] + [
        t[: len(t) // 2] for t in texts if len(t) > 1
    ]


@pytest.mark.parametrize("family", PARTIAL)
def test_calls_cut_anywhere_read_the_same_without_the_partial_reads(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three calls cut at every character and every 16 from each offset: the same deltas
    with and without the partial reads, and with the shortcuts off; fewer waits read item by
    item with them."""
    text = _calls(family, 3)
    waits = []
    real = Engine._wait

    def counted(self: Engine, pos: int) -> int:
        waits.append(1)
        return real(self, pos)

    monkeypatch.setattr(Engine, "_wait", counted)
    with shortcuts_set(True):
        fast = [feeds_at(family, TOOLS, text, cuts, "stop") for cuts in _cuttings(text)]
        taken = len(waits)
        with _NoPartials(monkeypatch, family):
            monkeypatch.setattr(Engine, "_wait", counted)
            waits.clear()
            general = [feeds_at(family, TOOLS, text, cuts, "stop") for cuts in _cuttings(text)]
            saved[family] = len(waits) - taken
    with shortcuts_set(False):
        slow = [feeds_at(family, TOOLS, text, cuts, "stop") for cuts in _cuttings(text)]
    assert fast == general
    assert fast == slow
    assert saved[family] >= 0
    if family in SOME:
        assert saved[family] > 0  # the shortcut was taken


@pytest.mark.parametrize("family", SOME)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_markup_pieces_cut_anywhere_read_the_same_without_the_partial_reads(
    family: str, data: Any
) -> None:
    """Calls, their literals whole and begun, whitespace and prose in any order, cut
    anywhere and ended by any reason: the same deltas both ways."""
    pieces = _pieces(family)
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=8)))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=16))
    finish = data.draw(st.sampled_from(["stop", "length"]))
    with shortcuts_set(True):
        fast = feeds_at(family, TOOLS, text, cuts, finish)
        with pytest.MonkeyPatch.context() as monkeypatch:
            with _NoPartials(monkeypatch, family):
                general = feeds_at(family, TOOLS, text, cuts, finish)
    with shortcuts_set(False):
        slow = feeds_at(family, TOOLS, text, cuts, finish)
    assert fast == general == slow
