"""A hot feed whose dialect ends the call's arguments (`Engine._hot_read`): the argument
pieces it sent stay apart from the delta buffer while the engine's loop reads the call's
end and what follows; then they are put first (`DeltaBuffer.put_first`, what `settle`
before the loop would have made of them) or, when the loop wrote nothing, made into the
feed's delta directly (`args_deltas`). It is a shortcut (on with the shortcuts): every feed
gives the same deltas with the shortcuts on and off, wherever the deltas cut a call's end or
the next call's start; `put_first` after any writes is `settle` before them; a loop that
fails keeps what the dialect sent; and the corpus goes through both of its ends."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import all_cases
from support.readers import drawn_cuts, feeds_at
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime import engine as engine_module
from toolgrammar.runtime.deltas import DeltaBuffer
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.modes import CALL, CONTENT, REASONING

# families of several dialects whose calls wait hot in their dialect and end there: JSON
# arguments after a name (kimi_k2, mistral, deepseek_v3, ernie45), a JSON call object
# (hermes, apertus), XML parameters (qwen3_coder), key/value tags (spark25)
FAMILIES = (
    "kimi_k2",
    "mistral",
    "deepseek_v3",
    "ernie45",
    "hermes",
    "apertus",
    "qwen3_coder",
    "spark25",
)
CASES = [case for case in all_cases() if case.family in FAMILIES]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
# two calls of kimi_k2, and where the first one's arguments wait hot in a string value
TWO_CALLS = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "Par'
)
REST = (
    'is"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1'
    '<|tool_call_argument_begin|>{"city": "Lyon"}<|tool_call_end|><|tool_calls_section_end|>'
)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_corpus_in_any_pieces_reads_as_with_the_shortcuts_off(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES))
    cuts = drawn_cuts(data, case.text, 20)
    with shortcuts_set(True):
        fast = feeds_at(case.family, case.tools, case.text, cuts, case.finish, **case.options)
    with shortcuts_set(False):
        slow = feeds_at(case.family, case.tools, case.text, cuts, case.finish, **case.options)
    assert fast == slow, (case.name, cuts)


@pytest.mark.parametrize("size", (1, 3, 16))
def test_every_feed_of_calls_one_after_another_is_the_same(size: int) -> None:
    """Each cut of a call's end and the next call's start, fed whole and in pieces."""
    text = TWO_CALLS + REST
    cuts = list(range(size, len(text), size))
    with shortcuts_set(True):
        fast = feeds_at("kimi_k2", [WEATHER], text, cuts, "stop")
    with shortcuts_set(False):
        slow = feeds_at("kimi_k2", [WEATHER], text, cuts, "stop")
    assert fast == slow


def _hot_kimi() -> Any:
    parser = toolgrammar.StreamParser("kimi_k2", [WEATHER], ids="sequential")
    parser.feed(TWO_CALLS)
    assert parser._engine._hot is not None
    return parser


def _counting(monkeypatch: Any, owner: Any, name: str) -> list[int]:
    """A list that grows by one at every call of `owner.name` (pure Python: a patch does
    not reach the compiled build, whose leg does not run these tests)."""
    seen: list[int] = []
    original = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return seen


def test_a_hot_feed_that_ends_the_call_sends_its_arguments_without_an_entry(
    monkeypatch: Any,
) -> None:
    """The call ends and nothing else is written: one delta of its arguments, made by
    `args_deltas`, the buffer never settled nor its pieces put first."""
    settles = _counting(monkeypatch, DeltaBuffer, "settle")
    puts = _counting(monkeypatch, DeltaBuffer, "put_first")
    made = _counting(monkeypatch, engine_module, "args_deltas")
    with shortcuts_set(True):
        parser = _hot_kimi()
        deltas = parser.feed('is"}<|tool_call_end|>')
    assert [delta.to_dict() for delta in deltas] == [
        {"tool_calls": [{"index": 0, "function": {"arguments": 'is"}'}}]}
    ]
    assert (settles, puts, made) == ([], [], [1])
    buffer = parser._engine._out
    assert buffer.lone is None and not buffer.entries


def test_a_hot_feed_that_ends_the_call_and_begins_the_next_puts_them_first(
    monkeypatch: Any,
) -> None:
    puts = _counting(monkeypatch, DeltaBuffer, "put_first")
    with shortcuts_set(True):
        parser = _hot_kimi()
        deltas = parser.feed(REST[: REST.index("Lyon")])
    assert [delta.to_dict() for delta in deltas] == [
        {
            "tool_calls": [
                {"index": 0, "function": {"arguments": 'is"}'}},
                {
                    "index": 1,
                    "id": "functions.get_weather:1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "'},
                },
            ]
        }
    ]
    assert puts == [1]


def test_a_loop_that_fails_after_a_hot_end_keeps_what_the_dialect_sent(
    monkeypatch: Any,
) -> None:
    """(as `settle` before the loop kept it: the failure is the loop's, not the arguments')"""

    def failing(*args: Any) -> int:
        raise RuntimeError("loop bug")

    with shortcuts_set(True):
        parser = _hot_kimi()
        monkeypatch.setattr(Engine, "_dialect_ended", failing)
        with pytest.raises(RuntimeError, match="loop bug"):
            parser.feed('is"}<|tool_call_end|>')
    buffer = parser._engine._out
    assert buffer.lone is None
    assert [(e.mode, e.index, "".join(e.parts)) for e in buffer.entries] == [(CALL, 0, 'is"}')]


def test_the_corpus_reaches_both_ends_of_the_hot_end(monkeypatch: Any) -> None:
    """(the comparisons above mean something: the corpus's hot ends go through it, and
    some of them write more after the call's end)"""
    puts = _counting(monkeypatch, DeltaBuffer, "put_first")
    ended = 0
    with shortcuts_set(True):
        for case in CASES:
            parser = toolgrammar.StreamParser(case.family, case.tools, **case.options)
            engine = parser._engine
            for at in range(0, len(case.text), 7):
                before = engine._hot
                parser.feed(case.text[at : at + 7])
                if before is not None and before[0].dialect is not None:
                    ended += engine._call is not before[0]
    assert ended > 50 and len(puts) > 10


# what a feed may write after a hot call's arguments, as the engine's loop writes it
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("text"), st.sampled_from([CONTENT, REASONING]), st.sampled_from("ab")),
        st.tuples(st.just("args"), st.integers(0, 2), st.sampled_from(["x", "yz"])),
        st.tuples(st.just("call"), st.integers(0, 2), st.sampled_from(["f", "g"])),
    ),
    max_size=6,
)


def _write(buffer: DeltaBuffer, ops: list[tuple]) -> None:
    for kind, where, text in ops:
        if kind == "text":
            buffer.text(where, text)
        elif kind == "args":
            buffer.args(where, text)
        else:
            buffer.call(where, f"id{where}", text)


@settings(max_examples=500, deadline=None)
@given(
    st.integers(0, 2),
    st.lists(st.sampled_from(["", "p", "q r"]), max_size=4),
    _OPS,
)
def test_put_first_after_the_writes_is_settle_before_them(
    index: int, pieces: list[str], ops: list[tuple]
) -> None:
    settled, put = DeltaBuffer(), DeltaBuffer()
    settled.lone = list(pieces)
    settled.settle(index)
    _write(settled, ops)
    _write(put, ops)
    put.put_first(index, list(pieces))
    assert [(e.mode, e.index, e.call_id, e.name, e.parts) for e in put.entries] == [
        (e.mode, e.index, e.call_id, e.name, e.parts) for e in settled.entries
    ]
    assert [d.to_dict() for d in put.take()] == [d.to_dict() for d in settled.take()]
