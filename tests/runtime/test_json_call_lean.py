"""A call object read without its outer scanner (`json_call.JsonCallReader._lean_read`): once
`{"name": "NAME"` is whole, the comma, the arguments' key, their object and the `}` are read
by plain steps, and the outer scanner is made (`_unlean`) only at any other turn: another
member, a string or array for arguments, a marker, a stray comma, the end of the output. It
is a shortcut: streamed in pieces cut anywhere, every feed gives the same deltas with the
shortcuts on and off, in plain and array dialects, with and without `require_args`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime import json_call

WS = st.sampled_from(["", "", " ", "\n", " \t "])
NAMES = st.sampled_from(['"get_weather"', '" get_weather "', '""', '"a\\u0062c"', '"x"'])
KEYS = st.sampled_from(
    [
        '"arguments"',
        '"arguments"',
        '"parameters"',
        '"args"',
        '"argu\\u006dents"',
        '"id"',
        '"other"',
        '"argument"',
    ]
)
COMMAS = st.sampled_from([",", ",", ",", "", ",,"])
VALUES = st.sampled_from(
    [
        '{"city": "Paris", "days": 3}',
        "{}",
        '{"a": {"b": [1, {"c": "}"}]}}',
        '{"a": "<tool_call>"}',
        '{"a": "<|end_message|>"}',
        '"{\\"city\\": \\"Paris\\"}"',
        "[1]",
        '{"a": }',
        '{"a": 1',
        "3",
    ]
)
AFTER = st.sampled_from(
    ["}", "}", " }", "\n}", ', "id": "c1"}', "}}", "", ",}", ' "x"}', "}\n</tool_call>"]
)
# per family: the text before a call object (or the array's elements) and after it
FRAMES = {
    "hermes": ("<tool_call>\n", "\n</tool_call>", False),
    "inkling": ("<|content_invoke_tool_json|>", "<|end_message|>", False),
    "llama3_json": ("<|python_tag|>", "", False),  # require_args
    "gigachat3": ("<|function_call|>", "", False),  # require_args
    "firefunction_v2": (" functools[", "]", True),
    "cohere_command3": ("<|START_ACTION|>[", "]<|END_ACTION|>", True),  # tool_name, id
}


@st.composite
def call_objects(draw: Any, name_key: str) -> str:
    """A call object: mostly `{"name": "NAME", "arguments": {...}}`, with every turn the
    lean read must hand to the outer scanner drawn now and then."""
    space = [draw(WS) for _ in range(7)]
    return (
        "{"
        + space[0]
        + name_key
        + space[1]
        + ":"
        + space[2]
        + draw(NAMES)
        + space[3]
        + draw(COMMAS)
        + space[4]
        + draw(KEYS)
        + space[5]
        + ":"
        + space[6]
        + draw(VALUES)
        + draw(WS)
        + draw(AFTER)
    )


def per_feed(family: str, text: str, cuts: list[int], finish: str) -> list[list[dict]]:
    parser = toolgrammar.StreamParser(family, None, ids="sequential")
    bounds = [0, *cuts, len(text)]
    feeds = [parser.feed(text[a:b]) for a, b in zip(bounds, bounds[1:])]
    feeds.append(parser.finish(finish))
    return [[delta.to_dict() for delta in deltas] for deltas in feeds]


def assert_same_both_ways(family: str, text: str, cuts: list[int], finish: str) -> None:
    """The same deltas per feed with the shortcuts on and off."""
    with shortcuts_set(True):
        fast = per_feed(family, text, cuts, finish)
    with shortcuts_set(False):
        slow = per_feed(family, text, cuts, finish)
    assert fast == slow, (text, cuts)


@pytest.mark.parametrize("family", sorted(FRAMES))
@settings(max_examples=150, deadline=None)
@given(data=st.data(), finish=st.sampled_from(["stop", "length"]))
def test_a_call_object_streamed_in_pieces_reads_as_the_character_loop(
    family: str, data: st.DataObject, finish: str
) -> None:
    before, after, array = FRAMES[family]
    name_key = '"tool_name"' if family == "cohere_command3" else '"name"'
    body = data.draw(call_objects(name_key))
    if array and data.draw(st.booleans()):
        body += ", " + data.draw(call_objects(name_key))
    text = before + body + after
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), min_size=1, max_size=4))
    cuts = sorted({cut for cut in cuts if cut < len(text)})
    assert_same_both_ways(family, text, cuts, finish)


def scanners_made(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """A list of the `on_member` callback of every JSON scanner `json_call` makes while the
    test runs (a call object's outer scanner has one)."""
    made: list[object] = []
    scanner = json_call.JsonScanner

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs.get("on_member"))
        return scanner(*args, **kwargs)

    monkeypatch.setattr(json_call, "JsonScanner", counted)
    return made


def test_the_common_call_object_makes_no_outer_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    # the lean read is taken: its name, arguments and end read without the outer scanner,
    # the head cut before, inside and after the arguments' key
    made = scanners_made(monkeypatch)
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    for cut in (20, 36, 40, 46):
        made.clear()
        parser = toolgrammar.StreamParser("hermes", None, ids="sequential")
        deltas = parser.feed(text[:cut]) + parser.feed(text[cut:]) + parser.finish()
        calls = [call for delta in deltas for call in delta.to_dict().get("tool_calls", [])]
        assert [call["function"].get("name") for call in calls if "id" in call] == ["get_weather"]
        arguments = "".join(call["function"].get("arguments", "") for call in calls)
        assert arguments == '{"city": "Paris"}', cut
        assert not [m for m in made if m is not None], cut  # (the arguments' scanner has none)


@pytest.mark.parametrize("gap", [json_call._LEAN_SPAN // 2, json_call._LEAN_SPAN * 3])
def test_a_long_gap_before_the_arguments_key_reads_as_the_character_loop(gap: int) -> None:
    # the lean head holds at most `_LEAN_SPAN` characters while the key arrives; past that
    # the outer scanner reads on from the head read so far
    text = '<tool_call>\n{"name": "get_weather",' + " " * gap + '"arguments": {"a": 1}}</tool_call>'
    cuts = list(range(7, len(text), 7))
    with shortcuts_set(True):
        fast = per_feed("hermes", text, cuts, "stop")
    with shortcuts_set(False):
        slow = per_feed("hermes", text, cuts, "stop")
    assert fast == slow


# a stop marker's first character at the end of a feed is held (`Markers.lead`, `read`'s
# one `str.find`): each text cut at every place, shortcuts on against off
CUT_EVERYWHERE = [
    ("hermes", '<tool_call>\n{"name": "x", "arguments": {"a": 1}\n</tool_call>'),
    ("hermes", '<tool_call>\n{"name": "x", "arguments": </tool_call>'),
    ("hermes", '<tool_call>\n{"name": "x", </tool_call>'),
    ("hermes", '<tool_call>\n{"name": "x<", "arguments": {"a": "<"}}\n</tool_call>'),
    ("inkling", '<|content_invoke_tool_json|>{"name": "x", "args": {"a": 1}<|end_message|>'),
    ("inkling", '<|content_invoke_tool_json|>{"name": "x", "args": {}} <|end_message|>'),
]


@pytest.mark.parametrize("family, text", CUT_EVERYWHERE)
def test_a_marker_cut_at_any_place_reads_as_the_character_loop(family: str, text: str) -> None:
    for cut in range(1, len(text)):
        with shortcuts_set(True):
            fast = per_feed(family, text, [cut], "stop")
        with shortcuts_set(False):
            slow = per_feed(family, text, [cut], "stop")
        assert fast == slow, (text[:cut], text[cut:])


ID_VALUES = st.sampled_from(
    ['"0"', '"c1"', "3", "-12", '"a\\u0062"', "1.5", "true", "null", "01", '""']
)
ID_KEYS = st.sampled_from(
    ['"tool_call_id"', '"tool_call_id"', '"tool_call"', '"tool_name"', '"id"']
)
NAME_KEYS = st.sampled_from(
    ['"get_weather"', '" get_weather "', '""', '"a\\u0062c"', '"name"', '"arguments"', '"x"']
)


@st.composite
def id_first_objects(draw: Any) -> str:
    """A call object with an id member before its name (cohere's), mostly plain, any
    turn the lean head must hand to the outer scanner drawn now and then."""
    space = [draw(WS) for _ in range(4)]
    object_ = draw(call_objects('"tool_name"'))
    if draw(st.integers(0, 5)) == 0:
        return object_  # (no id)
    member = draw(ID_KEYS) + space[0] + ":" + space[1] + draw(ID_VALUES) + space[2]
    return "{" + space[3] + member + draw(COMMAS) + object_[1:]


@st.composite
def name_key_objects(draw: Any) -> str:
    """`{NAME: {...}}`, apertus's element, with the turns of `call_objects` after its key."""
    space = [draw(WS) for _ in range(3)]
    name = draw(NAME_KEYS)
    if draw(st.integers(0, 9)) == 0:
        name = '"' + "n" * draw(st.sampled_from([255, 256, 257, 300])) + '"'
    value = draw(VALUES)
    return "{" + space[0] + name + space[1] + ":" + space[2] + value + draw(WS) + draw(AFTER)


# per family: the text before the array's elements, after them, and the elements
HEAD_FRAMES = {
    "cohere_command3": ("<|START_ACTION|>[", "]<|END_ACTION|>", id_first_objects),
    "cohere_command4": ("<|START_ACTION|>[\n    ", "\n]<|END_ACTION|>", id_first_objects),
    "apertus": ("<|tools_prefix|>[", "]<|tools_suffix|>", name_key_objects),
}


@pytest.mark.parametrize("family", sorted(HEAD_FRAMES))
@settings(max_examples=200, deadline=None)
@given(data=st.data(), finish=st.sampled_from(["stop", "length"]))
def test_an_id_first_or_name_key_head_streamed_in_pieces_reads_as_the_character_loop(
    family: str, data: st.DataObject, finish: str
) -> None:
    before, after, objects = HEAD_FRAMES[family]
    body = ", ".join(data.draw(objects()) for _ in range(data.draw(st.integers(1, 3))))
    text = before + body + after
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), min_size=1, max_size=5))
    cuts = sorted({cut for cut in cuts if cut < len(text)})
    assert_same_both_ways(family, text, cuts, finish)


@pytest.mark.parametrize(
    "family, text",
    [
        (
            "cohere_command4",
            '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", '
            '"parameters": {"city": "Paris"}},\n    {"tool_call_id": 7, "tool_name": '
            '"get_weather", "parameters": {"city": "Paris"}}\n]<|END_ACTION|>',
        ),
        (
            "apertus",
            '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, '
            '{"get_weather": {"city": "Paris"}}]<|tools_suffix|>',
        ),
    ],
)
def test_an_id_first_or_name_key_call_makes_no_outer_scanner(
    monkeypatch: pytest.MonkeyPatch, family: str, text: str
) -> None:
    # the lean head is taken for the id before the name and for the name as the key: every
    # cut of the text, no scanner with the call object's callbacks is made
    made = scanners_made(monkeypatch)
    for cut in range(1, len(text), 3):
        made.clear()
        parser = toolgrammar.StreamParser(family, None, ids="sequential")
        deltas = parser.feed(text[:cut]) + parser.feed(text[cut:]) + parser.finish()
        calls = [call for delta in deltas for call in delta.to_dict().get("tool_calls", [])]
        named = [call["function"].get("name") for call in calls if "id" in call]
        assert named == ["get_weather", "get_weather"], cut
        arguments = "".join(call["function"].get("arguments", "") for call in calls)
        assert arguments == '{"city": "Paris"}' * 2, cut
        assert not [m for m in made if m is not None], cut  # (the arguments' scanner has none)
