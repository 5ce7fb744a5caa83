"""A call object's head read whole (`json_call.JsonCallReader._head`): `{"name": "NAME"` is
read in one match once the name's string is whole, and held while it is still arriving. It
is a shortcut: streamed in two pieces cut anywhere, every feed gives the same deltas with
the shortcuts on and off, so the hold never delays a call's name (nor its failure) past
the feed in which the character loop reads it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.check.fast_paths import shortcuts_set

WS = st.sampled_from(["", "", " ", "\n", " \t"])
NAMES = st.sampled_from(["get_weather", " get_weather ", "", "  ", "a\\u0062c", "x" * 300, "é"])
KEYS = st.sampled_from(['"name"', '"name"', '"nam\\u0065"', '"id"', '"arguments"', '"na"'])
VALUES = st.sampled_from(['{"city": "Paris"}', "{}", '"s"', "3", '{"days": 3', "[1]"])
AFTER = st.sampled_from(["}", "}\n</tool_call>", "</tool_call>", "", ', "id": "c1"}'])


@st.composite
def call_objects(draw: Any) -> str:
    """A hermes call body: mostly the common head, sometimes another first key, a blank,
    long or escaped name, a missing colon or quote."""
    space = [draw(WS) for _ in range(6)]
    key = draw(KEYS)
    name = (
        '"' + draw(NAMES) + '"' if draw(st.integers(0, 5)) else draw(st.sampled_from(["5", '"x']))
    )
    colon = ":" if draw(st.integers(0, 7)) else ""
    args = '"arguments"' + space[3] + ":" + space[4] + draw(VALUES)
    return (
        "{" + space[0] + key + space[1] + colon + space[2] + name + space[5] + "," + " " + args
    ) + draw(AFTER)


def per_feed(text: str, cuts: list[int], finish: str) -> list[list[dict]]:
    parser = toolgrammar.StreamParser("hermes", None, ids="sequential")
    bounds = [0, *cuts, len(text)]
    feeds = [parser.feed(text[a:b]) for a, b in zip(bounds, bounds[1:])]
    feeds.append(parser.finish(finish))
    return [[delta.to_dict() for delta in deltas] for deltas in feeds]


@settings(max_examples=300, deadline=None)
@given(call_objects(), st.data(), st.sampled_from(["stop", "length"]))
def test_a_head_streamed_in_pieces_reads_as_the_character_loop(
    body: str, data: st.DataObject, finish: str
) -> None:
    text = "<tool_call>\n" + body
    cuts = sorted(
        set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), min_size=1, max_size=3)))
    )
    cuts = [cut for cut in cuts if cut < len(text)]
    with shortcuts_set(True):
        fast = per_feed(text, cuts, finish)
    with shortcuts_set(False):
        slow = per_feed(text, cuts, finish)
    assert fast == slow, (text, cuts)


def test_the_head_is_held_while_it_arrives_and_read_once_whole() -> None:
    parser = toolgrammar.StreamParser("hermes", None, ids="sequential")
    assert parser.feed('<tool_call>\n{"name": "get_we') == []
    deltas = parser.feed('ather", "arguments": {"city": "Pa')
    assert [d.to_dict() for d in deltas] == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Pa'},
                }
            ]
        }
    ]
