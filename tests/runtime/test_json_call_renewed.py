"""A call object's reader (`JsonCallReader`) is renewed for the next call of the same item
rather than made again: the engine keeps it when its call ends (`Engine._end_call`,
`DialectSink._dialect`), a list of calls keeps the element before for the next element
(`JsonCallArrayReader`), and each keeps its arguments reader for the next call's
arguments (`_make_args`, `JsonArgsReader.renew`). It is a shortcut: every feed gives the
same deltas with the shortcuts on and off, wherever the deltas cut, whatever the call or
element before left in the readers (a name read late, arguments held before the name or
written as a string, an id, a wrapper, a member held for typing, a failure), and each call
reads as it does alone."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set

TOOLS = [function_tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})]

# call objects that leave the readers in different states when they end ({N}: the name key,
# {A}: the arguments key)
OBJECTS = (
    '{{"{N}": "get_weather", "{A}": {{"city": "Paris", "days": 3}}}}',
    '{{"{A}": {{"city": "Oslo", "days": "2"}}, "{N}": "get_weather"}}',  # arguments first
    '{{"{N}": "get_weather", "{A}": "{{\\"city\\": \\"Rome\\"}}"}}',  # arguments as a string
    '{{"{N}": "get_weather", "{A}": {{"arguments": {{"city": "Lima"}}}}}}',  # a wrapper
    '{{"{N}": "get_weather", "{A}": {{"days": "4", "city": "Kyiv"}}}}',  # a member typed
    '{{"{N}": "get_weather"}}',  # no arguments
    '{{"{N}": "get_weather", "{A}": {{"city": "Bern", "days": 3 x}}}}',  # malformed
    '{{"{A}": {{"city": "Riga"}}}}',  # no name
    '{{"{N}"  :  "get_weather" ,"{A}":{{ }} }}',
)

# one call per object, each in its markup
SINGLE = {
    "hermes": ("<tool_call>\n", "\n</tool_call>\n", "name", "arguments"),
    "ernie45": ("<tool_call>\n", "\n</tool_call>", "name", "arguments"),
    "llama3_json": ("", "; ", "name", "parameters"),  # require_args: arguments make the call
    "inkling": ("<|message_model|><|content_invoke_tool_json|>", "<|end_message|>", "name", "args"),
}
# every object an element of one list
LISTED = {
    "xlam": ("[", ", ", "]", "name", "arguments"),
    "cohere_command4": (
        "<|START_ACTION|>[\n    ",
        ",\n    ",
        "\n]<|END_ACTION|>",
        "tool_name",
        "parameters",
    ),
}


def stream(family: str, objects: list[str]) -> str:
    if family in SINGLE:
        before, after, name, args = SINGLE[family]
        filled = [o.replace("{N}", name).replace("{A}", args).format() for o in objects]
        return "".join(before + text + after for text in filled)
    opener, between, closer, name, args = LISTED[family]
    filled = [o.replace("{N}", name).replace("{A}", args).format() for o in objects]
    return opener + between.join(filled) + closer


def feeds(family: str, text: str, cuts: list[int]) -> list[list[Any]]:
    """Each feed's deltas (and finish's) of `text` cut at `cuts`."""
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential", reasoning_open=False)
    out = []
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        out.append(parser.feed(text[start:end]))
    out.append(parser.finish("stop"))
    return out


def per_feed(family: str, text: str, cuts: list[int]) -> list[list[dict]]:
    return [[delta.to_dict() for delta in feed] for feed in feeds(family, text, cuts)]


def calls_of(family: str, objects: list[str], size: int) -> list[tuple[str, str]]:
    """Each call's (name, arguments) of the objects' stream in `size`-character pieces."""
    text = stream(family, objects)
    deltas = [delta for feed in feeds(family, text, _cuts(text, size)) for delta in feed]
    message = toolgrammar.assemble(deltas)
    return [(call.function.name, call.function.arguments) for call in message.tool_calls or []]


FAMILIES = sorted([*SINGLE, *LISTED])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_renewed_readers_read_as_new_ones(data: st.DataObject) -> None:
    family = data.draw(st.sampled_from(FAMILIES))
    objects = data.draw(st.lists(st.sampled_from(OBJECTS), min_size=2, max_size=5))
    text = stream(family, objects)
    points = data.draw(st.lists(st.integers(1, len(text) - 1), max_size=16))
    cuts = sorted(set(points))
    with shortcuts_set(True):
        fast = per_feed(family, text, cuts)
    with shortcuts_set(False):
        slow = per_feed(family, text, cuts)
    assert fast == slow, (family, text, cuts)


def test_each_call_reads_as_it_does_alone() -> None:
    """(with the shortcuts on: the readers renewed from call to call; in the families whose
    calls have a closer: without one, a malformed call's rest is its markup)"""
    with shortcuts_set(True):
        for family in ("hermes", "ernie45", "inkling"):
            for size in (3, 16, 1000):
                together = calls_of(family, list(OBJECTS), size)
                alone = [call for obj in OBJECTS for call in calls_of(family, [obj], size)]
                assert together == alone, (family, size)
                assert len(together) >= 6


def _cuts(text: str, size: int) -> list[int]:
    return list(range(size, len(text), size))


def test_the_readers_are_renewed() -> None:
    """(the comparisons above mean something: the next call's readers are the ones before)"""
    with shortcuts_set(True):
        parser = toolgrammar.StreamParser("hermes", TOOLS, reasoning_open=False)
        engine: Any = parser._engine
        parser.feed(stream("hermes", [OBJECTS[0]]))
        spare = engine._spare
        assert spare is not None and spare._args is not None
        inner = spare._args
        parser.feed(stream("hermes", [OBJECTS[0]])[:-20])
        assert engine._call.dialect is spare and spare._args is inner

        listed = toolgrammar.StreamParser("xlam", TOOLS, reasoning_open=False)
        text = stream("xlam", [OBJECTS[0], OBJECTS[0]])
        listed.feed(text[: text.index("}}, ") + 3])
        array = listed._engine._call.dialect
        first = array._spare_element
        assert first is not None
        listed.feed(text[text.index("}}, ") + 3 : -5])
        assert array._element is first
