"""Shortcuts of `xml_params` the whole-parameter pattern does not cover, each a twin of the
state machine: the rest of a parameter read whole from its key (a delta that ended inside
the key, `_rest_param`), a delta of value text with no `&` sent in place where values decode
entities (`XmlParamsReader.read`), and the steps in line in `read` under `finally` (what they
gather is sent at every return). Each must write what the state machine writes, feed for
feed, at every split: read here with the shortcuts on and off, over texts made of the
pieces where they must refuse (an entity cut in two, a CDATA section, a closer cut or
grown, a call opener inside a value, a wrapper first, a key no schema declares)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.readers import MINICPM5_PARAMS as MINICPM5
from support.readers import CountedPattern, SchemalessSink, feeds_at
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime import scan_meter, xml_params
from toolgrammar.runtime.render import render_output
from toolgrammar.runtime.registry import get_spec

TOOLS = [
    function_tool(
        "get_weather",
        {"city": {"type": "string"}, "days": {"type": "integer"}, "tags": {"type": "array"}},
    )
]

# the families of the target rows, and markups with a value opener, a trimmed newline,
# implicit ends and a JSON flag in the key
FAMILIES = ("minicpm5", "iquest_q1", "mimo", "spark25", "k2_horizon", "qwen3_coder", "deepseek_v4")

# value text made of what the shortcuts must tell apart from plain text
VALUE_PIECES = [
    "Paris",
    "3",
    " ",
    "\n",
    "\r\n",
    "&",
    "&amp;",
    "&lt;",
    "&#60;",
    "&am",
    ";",
    "<",
    "</",
    ">",
    '"',
    "<![CDATA[",
    "]]>",
    "x</param",
    "</arg_value",
    "</parameter",
    "<tool_call>",
    "<function",
    "[1, 2]",
]

KEYS = ["city", "days", "tags", "arguments", "note", " city ", "a&amp;b"]


def _feeds(family: str, text: str, cuts: list[int], finish: str, **options: Any) -> list:
    return feeds_at(family, TOOLS, text, cuts, finish, **options)


values = st.lists(st.sampled_from(VALUE_PIECES), max_size=6).map("".join)
params = st.lists(st.tuples(st.sampled_from(KEYS), values), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    family=st.sampled_from(FAMILIES),
    calls=st.lists(params, min_size=1, max_size=3),
    drop=st.booleans(),
    finish=st.sampled_from(["stop", "length"]),
)
def test_every_feed_is_the_same_with_shortcuts_off(
    data: Any, family: str, calls: list[list[tuple[str, str]]], drop: bool, finish: str
) -> None:
    """Calls of parameters whose values hold entities, CDATA, cut closers and call openers,
    the text cut short anywhere and split anywhere: the same deltas, feed for feed."""
    spec = get_spec(family)
    text = render_output(spec, [("get_weather", call) for call in calls])
    if data.draw(st.booleans(), label="cut"):
        text = text[: data.draw(st.integers(1, len(text)), label="cut at")]
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=16), label="splits")
    options = {"undeclared_params": "drop"} if drop else {}
    with shortcuts_set(True):
        fast = _feeds(family, text, cuts, finish, **options)
    with shortcuts_set(False):
        slow = _feeds(family, text, cuts, finish, **options)
    assert fast == slow


# calls whose every split in two is read both ways below
SPLIT_CALLS = [
    [("city", "Paris &amp; Rome"), ("days", "3")],
    [("arguments", '{"city": "Oslo"}'), ("note", "a&lt;b")],
    [("city", "x</param y&#60;"), ("tags", "[1, 2]")],
    [("city", "<![CDATA[a</param>]]>&amp;"), ("days", "\n4\n")],
    [("city", "a <tool_call> b"), ("days", "2")],
]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_split_in_two_reads_as_the_state_machine_reads_it(family: str) -> None:
    """Every place a delta may end (inside each key among them, where the next delta
    holds the rest of its parameter), the text then whole or cut short."""
    spec = get_spec(family)
    for call in SPLIT_CALLS:
        text = render_output(spec, [("get_weather", call), ("get_weather", call)])
        for cut in range(1, len(text)):
            for options in ({}, {"undeclared_params": "drop"}):
                with shortcuts_set(True):
                    fast = _feeds(family, text, [cut], "stop", **options)
                with shortcuts_set(False):
                    slow = _feeds(family, text, [cut], "stop", **options)
                assert fast == slow, (family, text, cut)


def test_a_delta_that_ended_inside_a_key_is_read_to_its_closer_by_one_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(the comparison above means something: the rest's pattern reads such a delta, and
    its text is the state machine's; a closer cut at the end is left to the steps)"""
    made: list[CountedPattern] = []
    real = xml_params._rest_param

    def counted(*markup: Any) -> CountedPattern:
        made.append(CountedPattern(real(*markup)))
        return made[-1]

    monkeypatch.setattr(xml_params, "_rest_param", counted)
    outs = []
    for on in (True, False):
        with shortcuts_set(on), scan_meter.counting():  # (tables made before are forgotten)
            sink = SchemalessSink()
            reader = xml_params.XmlParamsReader(MINICPM5, ("</function>",), sink)
            assert reader.read('<param name="ci', 0, False) == len('<param name="')
            rest = 'city">Paris &amp; Rome</param><param name="days">3</par'
            assert reader.read(rest, 0, False) == rest.index("</par", 30)
            reader.close()
            outs.append("".join(sink.out))
    assert [pattern.found for pattern in made] == [1]
    assert outs[0] == outs[1] == '{"city": "Paris & Rome", "days": "3"}'


@pytest.mark.parametrize(
    "pieces, value",
    [
        (["Paris", " Rome"], "Paris Rome"),
        (["a\nb", "\n"], "a\nb\n"),
        (["x &amp; y"], "x & y"),
        (["x &am", "p; y"], "x & y"),
        (["x &", "amp; y"], "x & y"),
        (["p; q", "&"], "p; q&"),
        (["a", "&lt;b&gt;", " c"], "a<b> c"),
    ],
)
def test_entity_free_value_text_is_sent_in_place(pieces: list[str], value: str) -> None:
    """A value's delta with no `&` is sent as it came; one with an entity, or after half
    of one held, is decoded first (the two ways agree with the shortcuts off)."""
    outs = []
    for on in (True, False):
        with shortcuts_set(on):
            sink = SchemalessSink()
            reader = xml_params.XmlParamsReader(MINICPM5, ("</function>",), sink)
            reader.read('<param name="city">', 0, False)
            held = ""
            for piece in [*pieces, "</param>"]:
                held += piece
                held = held[reader.read(held, 0, False) :]
            reader.close()
            outs.append(sink.out)
    assert outs[0] == outs[1]
    assert json.loads("".join(outs[0])) == {"city": value}
