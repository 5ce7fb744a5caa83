"""A call's arguments reader is renewed for the next call of the same item rather than made
again (`Engine._end_call` keeps it, `DialectSink._dialect` renews it: `JsonArgsReader.renew`).
It is a shortcut: each call of a stream reads as it does alone in a stream of its own, and
every feed gives the same deltas with the shortcuts on and off, whatever the call before it
left in the reader (a wrapper key read, a member held for typing, a failure, raw text).
Also: a call's first fragment, made with its ASCII tests inline, is still sent escaped."""

from __future__ import annotations

from itertools import permutations

import pytest

import toolgrammar
from support.readers import readers_fed
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set

TOOLS = [function_tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})]

# one call's markup per family, around its arguments text
CALLS = {
    "mistral": "[TOOL_CALLS]get_weather[ARGS]{args}",
    "kimi_k2": (
        "<|tool_call_begin|>functions.get_weather:{n}<|tool_call_argument_begin|>{args}"
        "<|tool_call_end|>"
    ),
    "deepseek_v3": (
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{args}\n```"
        "<｜tool▁call▁end｜>"
    ),
}
SECTIONS = {
    "kimi_k2": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
    "deepseek_v3": ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"),
}

# arguments that leave a reader in different states when their call ends
ARGUMENTS = (
    '{"city": "Paris", "days": 3}',
    '{"arguments": {"city": "Oslo", "days": "2"}}',  # a wrapper: unwrapped, first key only
    '{"days": "4", "city": "Rome"}',  # a typed member held, then coerced
    "{}",
    '{"city": "Lima", "days": 3 x}',  # malformed: it fails
    "not json",  # no object at all
)


def stream(family: str, arguments: tuple[str, ...]) -> str:
    calls = "".join(
        CALLS[family].replace("{args}", args).replace("{n}", str(n))
        for n, args in enumerate(arguments)
    )
    opener, closer = SECTIONS.get(family, ("", ""))
    return opener + calls + closer


def calls_of(family: str, text: str, size: int) -> list[tuple[str, str]]:
    """Each call's (name, arguments) of `text` streamed in `size`-character pieces."""
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential")
    deltas = []
    for at in range(0, len(text), size):
        deltas += parser.feed(text[at : at + size])
    deltas += parser.finish("stop")
    message = toolgrammar.assemble(deltas)
    return [(call.function.name, call.function.arguments) for call in message.tool_calls or []]


@pytest.mark.parametrize("size", (3, 16, 1000))
@pytest.mark.parametrize("family", sorted(CALLS))
def test_each_call_reads_as_it_does_alone(family: str, size: int) -> None:
    for order in permutations(range(len(ARGUMENTS)), 3):
        arguments = tuple(ARGUMENTS[i] for i in order)
        with shortcuts_set(True):
            together = calls_of(family, stream(family, arguments), size)
            alone = [
                call
                for args in arguments
                for call in calls_of(family, stream(family, (args,)), size)
            ]
        with shortcuts_set(False):
            slow = calls_of(family, stream(family, arguments), size)
        assert together == alone == slow, arguments


@pytest.mark.parametrize("family", sorted(CALLS))
def test_the_reader_is_renewed(family: str) -> None:
    """(the comparison above means something: the second call does read with the first's
    reader, and the end of the output lets it go)"""
    text = stream(family, ARGUMENTS[:3])
    with shortcuts_set(True):
        parser = toolgrammar.StreamParser(family, TOOLS)
        engine = parser._engine
        readers = readers_fed(parser, text)
        parser.finish()
        assert len(readers) == 1
        assert engine._spare is None
    with shortcuts_set(False):
        parser = toolgrammar.StreamParser(family, TOOLS)
        parser.feed(text)
        assert parser._engine._spare is None


def test_a_header_id_with_a_lone_surrogate_is_sent_escaped() -> None:
    """A call's first fragment is made with its id and name `sendable` (`deltas._call_part`):
    Kimi's id is its header as written, here with a lone surrogate in it."""
    text = stream("kimi_k2", (ARGUMENTS[0],)).replace("get_weather:0", "get_weather\ud83d:0")
    parser = toolgrammar.StreamParser("kimi_k2", TOOLS)
    for size in (1, 16, len(text)):
        parser = toolgrammar.StreamParser("kimi_k2", TOOLS)
        deltas = [d for at in range(0, len(text), size) for d in parser.feed(text[at : at + size])]
        firsts = [part for d in deltas for part in d.tool_calls if part.id is not None]
        assert [part.id for part in firsts] == ["functions.get_weather\\ud83d:0"]
        assert [part.function.name for part in firsts] == ["get_weather\\ud83d"]


@pytest.mark.parametrize("size", (3, 16, 1000))
def test_raw_arguments_then_an_object_read_as_each_alone(size: int) -> None:
    """Functionary's `<|python_tag|>` reads raw code or an object with one item: a reader
    renewed after raw text reads the next call's object as an object."""
    calls = ("print(1)", '{"code": "x"}', "print(2)", '{"code": "y"}')
    text = "".join(f"<|python_tag|>{args}<|eom_id|>" for args in calls)
    with shortcuts_set(True):
        together = calls_of("functionary_v31", text, size)
        alone = [
            call
            for args in calls
            for call in calls_of("functionary_v31", f"<|python_tag|>{args}<|eom_id|>", size)
        ]
    with shortcuts_set(False):
        slow = calls_of("functionary_v31", text, size)
    assert together == alone == slow
    assert [args for _, args in together] == [
        '{"code": "print(1)"}',
        '{"code": "x"}',
        '{"code": "print(2)"}',
        '{"code": "y"}',
    ]
