"""A feed that goes straight to the call waiting in its dialect (`Engine.feed`, hot): what
the dialect sends of the call's arguments is gathered in the delta buffer's `lone` and,
when that is all the feed wrote, made into the feed's delta without an entry
(`deltas.args_deltas`). It is a shortcut: every feed gives the same deltas with the
shortcuts on and off, the buffer is left empty and closed after every feed, and a read that
fails keeps what the dialect sent before it failed."""

from __future__ import annotations

from typing import Any

import pytest

import toolgrammar
from support.corpus_format import all_cases
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.deltas import DeltaBuffer, args_deltas
from toolgrammar.runtime.modes import CALL

# a family of each dialect the hot path meets: xml_params, json_args, json_call (names its
# calls: commits inside a hot read), python_calls (a list of calls), xml_elements, keyvalue_args
FAMILIES = (
    "spark25",
    "qwen3_coder",
    "kimi_k2",
    "hermes",
    "inkling",
    "pythonic",
    "minimax_m3",
    "gemma4",
)
CASES = [case for case in all_cases() if case.family in FAMILIES]
SIZES = (2, 7, 16)


def per_feed(case: Any, size: int, check: bool) -> list[list[dict]]:
    """Each feed's deltas (and finish's) of the case's output in `size`-char pieces; with
    `check`, the buffer is asserted empty and its `lone` closed after every feed."""
    parser = toolgrammar.StreamParser(case.family, case.tools, ids="sequential", **case.options)
    text = case.text
    out: list[list[dict]] = []
    for at in range(0, len(text), size):
        out.append([delta.to_dict() for delta in parser.feed(text[at : at + size])])
        if check:
            buffer = parser._engine._out
            assert buffer.lone is None and not buffer.entries
    out.append([delta.to_dict() for delta in parser.finish(case.finish)])
    return out


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_every_feed_is_the_same_with_shortcuts_off(case: Any, size: int) -> None:
    with shortcuts_set(True):
        fast = per_feed(case, size, check=True)
    with shortcuts_set(False):
        slow = per_feed(case, size, check=False)
    assert fast == slow


def test_the_corpus_reaches_the_hot_path() -> None:
    """(the comparison above means something: the cases do go through it)"""
    hot = 0
    with shortcuts_set(True):
        for case in CASES:
            parser = toolgrammar.StreamParser(case.family, case.tools, **case.options)
            for at in range(0, len(case.text), 2):
                before = parser._engine._hot
                parser.feed(case.text[at : at + 2])
                hot += before is not None
    assert hot > 1000


HOT_TEXTS = {  # a call left waiting in its dialect, inside a string value
    "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
    "spark25": "<tool_call>get_weather\n<arg_key>city</arg_key><arg_value>Par",
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
}


def hot_parser(family: str = "qwen3_coder") -> Any:
    """A parser whose call waits in its dialect, inside a string value."""
    parser = toolgrammar.StreamParser(family, [_weather()], ids="sequential", reasoning_open=False)
    parser.feed(HOT_TEXTS[family])
    assert parser._engine._hot is not None
    return parser


def _weather() -> dict:
    return {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }


@pytest.mark.parametrize("family", sorted(HOT_TEXTS))
def test_a_hot_feed_of_value_text_is_one_fragment(family: str) -> None:
    with shortcuts_set(True):
        parser = hot_parser(family)
        deltas = parser.feed("is and Lyon é")
    assert [delta.to_dict() for delta in deltas] == [
        {"tool_calls": [{"index": 0, "function": {"arguments": "is and Lyon é"}}]}
    ]


def test_a_hot_feed_that_sends_nothing_gives_no_delta() -> None:
    with shortcuts_set(True):
        parser = hot_parser()
        assert parser.feed("\n") == []  # (a newline before a closer may be the value's end)
        assert parser.feed("</") == []


@pytest.mark.parametrize("bad", [b"x", None, 3, ["x"]])
def test_a_hot_parser_refuses_what_is_not_text(bad: Any) -> None:
    with shortcuts_set(True):
        parser = hot_parser()
        with pytest.raises(TypeError, match=r"feed\(\) takes str"):
            parser.feed(bad)
        deltas = parser.feed("is")
    assert [delta.to_dict() for delta in deltas] == [
        {"tool_calls": [{"index": 0, "function": {"arguments": "is"}}]}
    ]


class _Failing:
    """A dialect that sends a piece of arguments, then fails (a bug inside a reader)."""

    done = False

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    def read(self, text: str, pos: int, eof: bool) -> int:
        self.sink.emit_args("sent")
        raise RuntimeError("reader bug")


def test_a_failing_hot_read_keeps_what_was_sent() -> None:
    with shortcuts_set(True):
        parser = hot_parser()
        engine = parser._engine
        call = engine._hot[0]
        call.dialect = _Failing(engine)
        with pytest.raises(RuntimeError, match="reader bug"):
            parser.feed("is")
    buffer = engine._out
    assert buffer.lone is None
    assert [(e.mode, e.index, e.parts) for e in buffer.entries] == [(CALL, call.index, ["sent"])]


def test_settle_writes_the_lone_pieces_as_args() -> None:
    """`settle` is `args` of each piece, empty ones left out as `emit_args` leaves them."""
    settled, direct = DeltaBuffer(), DeltaBuffer()
    settled.lone = ["a", "", "b"]
    settled.settle(3)
    direct.args(3, "a")
    direct.args(3, "b")
    assert settled.lone is None
    assert [d.to_dict() for d in settled.take()] == [d.to_dict() for d in direct.take()]
    assert args_deltas(3, ["", ""]) == []
    assert [d.to_dict() for d in args_deltas(3, ["a", "b"])] == [
        {"tool_calls": [{"index": 3, "function": {"arguments": "ab"}}]}
    ]


def test_a_subclass_that_overrides_feed_keeps_its_own() -> None:
    """A parser's `feed` is its engine's only where its class does not override `feed`."""
    seen: list[str] = []

    class Spy(toolgrammar.StreamParser):
        def feed(self, text: str) -> list[Any]:
            seen.append(text)
            return super().feed(text)

    spy = Spy("qwen3_coder", [_weather()])
    spy.feed("Hi")
    assert seen == ["Hi"]
    with pytest.raises(TypeError, match=r"feed\(\) takes str"):
        spy.feed(b"x")  # type: ignore[arg-type]
