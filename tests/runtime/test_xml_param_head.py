"""The start of a parameter read by one match (`xml_params._param_head`, `_took_head`): a
delta that holds a parameter's opener, key and the first text of its value, which goes on
past the delta, is read to VALUE by one regex match, from between parameters, from inside
the key or from past it (where the markup has a value opener). It is a shortcut: it must
write what the state machine writes, feed for feed, at every split, and give up where a
value's rules would hold text back (half an entity, a CDATA section, a closer that is
whole, a wrapper first, a line end that is not the value's last)."""

from __future__ import annotations

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
from toolgrammar.runtime.spec import XmlParams

TOOLS = [
    function_tool(
        "get_weather",
        {"city": {"type": "string"}, "days": {"type": "integer"}, "tags": {"type": "array"}},
    )
]

# the target rows' families, and markups with a value opener, a trimmed newline, implicit
# ends and a JSON flag in the key
FAMILIES = (
    "minicpm5",
    "iquest_q1",
    "mimo",
    "spark25",
    "k2_horizon",
    "qwen3_coder",
    "deepseek_v4",
)

# value text: plain runs the head reads, and what it must leave to the steps
VALUE_PIECES = ["Paris", "3", " ", "\n", "\r\n", "&amp;", "&am", "<", "</", "]]>", "<![CDATA["]
VALUE_PIECES += ["x</param", "</arg_value", "</parameter", "<tool_call>", "<function", "[1, 2]"]
KEYS = ["city", "days", "tags", "arguments", " city "]

values = st.lists(st.sampled_from(VALUE_PIECES), max_size=5).map("".join)
params = st.lists(st.tuples(st.sampled_from(KEYS), values), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    family=st.sampled_from(FAMILIES),
    calls=st.lists(params, min_size=1, max_size=3),
    drop=st.booleans(),
)
def test_every_feed_is_the_same_with_shortcuts_off(
    data: Any, family: str, calls: list[list[tuple[str, str]]], drop: bool
) -> None:
    """Calls split into many short deltas (most end inside a key or a value, where the
    head reads the next), the text cut short anywhere: the same deltas, feed for feed."""
    spec = get_spec(family)
    text = render_output(spec, [("get_weather", call) for call in calls])
    if data.draw(st.booleans(), label="cut"):
        text = text[: data.draw(st.integers(1, len(text)), label="cut at")]
    step = data.draw(st.integers(3, 24), label="delta size")
    cuts = list(range(step, len(text), step))
    finish = data.draw(st.sampled_from(["stop", "length"]), label="finish")
    options = {"undeclared_params": "drop"} if drop else {}
    with shortcuts_set(True):
        fast = feeds_at(family, TOOLS, text, cuts, finish, **options)
    with shortcuts_set(False):
        slow = feeds_at(family, TOOLS, text, cuts, finish, **options)
    assert fast == slow


@pytest.mark.parametrize("family", FAMILIES)
def test_every_split_in_three_reads_as_the_state_machine_reads_it(family: str) -> None:
    """Every pair of places deltas may end in a short call (so that one delta holds a
    parameter's start and the value's first text, and the next its rest)."""
    spec = get_spec(family)
    text = render_output(spec, [("get_weather", [("city", "Paris Rome"), ("days", "3")])])
    for a in range(1, len(text)):
        for b in range(a + 1, min(len(text), a + 40)):
            with shortcuts_set(True):
                fast = feeds_at(family, TOOLS, text, [a, b], "stop")
            with shortcuts_set(False):
                slow = feeds_at(family, TOOLS, text, [a, b], "stop")
            assert fast == slow, (family, text, a, b)


GLM = XmlParams(
    open="<arg_key>", key_end="</arg_key>", value_open="<arg_value>", value_end="</arg_value>"
)
QWEN = XmlParams(open="<parameter=", key_end=">", value_end="</parameter>", trim_newline=True)


def _read(item: XmlParams, deltas: list[str], on: bool) -> tuple[list[str], list[int]]:
    """What a reader of `item` sends and returns for each delta (the rest held, as the
    engine holds it), the shortcuts on or off."""
    with shortcuts_set(on), scan_meter.counting():  # (tables made before are forgotten)
        sink = SchemalessSink()
        reader = xml_params.XmlParamsReader(item, ("</function>",), sink)
        held, took = "", []
        for delta in deltas:
            held += delta
            at = reader.read(held, 0, False)
            took.append(at)
            held = held[at:]
        reader.close()
        return sink.out, took


@pytest.mark.parametrize(
    "item, deltas, heads",
    [
        # from between parameters, the value's text then a closer's start held
        (MINICPM5, ['<param name="city">Paris</pa', 'ram><param name="days">3</p', "aram>"], 2),
        # from inside a key
        (MINICPM5, ["<param na", 'me="city">Paris', " Rome</param>"], 1),
        # past the key, where the value's opener is looked for
        (GLM, ["<arg_key>city</arg_key><ar", "g_value>Paris</arg_v", "alue>"], 1),
        (GLM, ["<arg_key>city</arg_key>", "<arg_value>Paris</arg_v", "alue>"], 1),
        # from between parameters and inside a key, past a value opener
        (GLM, ["<arg_key>city</arg_key><arg_value>Pa", "ris</arg_value><arg_k"], 1),
        (GLM, ["<arg_key>ci", "ty</arg_key><arg_value>Pa", "ris</arg_value>"], 1),
        # text before the value's opener: the steps read it
        (GLM, ["<arg_key>city</arg_key>", "x<arg_value>Paris", "</arg_value>"], 0),
        # a trimmed newline before the value is the markup's
        (QWEN, ["<parameter=city>\nParis", " Rome\n</parameter>"], 1),
        # an entity or a CDATA section in the value: the steps read it
        # a line end after the value's text: held as the markup's may be
        (QWEN, ["<parameter=city>\nParis\n", "</parameter>"], 1),
        (QWEN, ["<parameter=city>\nParis\r\n</para", "meter>"], 1),
        (QWEN, ["<parameter=city>\nParis\r", "\n</parameter>"], 1),
        (QWEN, ["<parameter=city>\nParis\n\n", "</parameter>"], 0),
        (QWEN, ["<parameter=city>\nParis\nRome", "</parameter>"], 0),
        (MINICPM5, ['<param name="city">a &amp; b', "</param>"], 0),
        (MINICPM5, ['<param name="city">a <![CDATA[<]]>', "</param>"], 0),
        # a value's `<` that begins no marker: the steps read it
        (MINICPM5, ['<param name="city">a <b> c', "</param>"], 0),
        # the whole parameter: the whole-parameter pattern's, not the head's
        (MINICPM5, ['<param name="city">Paris</param>'], 0),
    ],
)
def test_a_parameter_start_is_read_by_one_match_as_the_steps_read_it(
    monkeypatch: pytest.MonkeyPatch, item: XmlParams, deltas: list[str], heads: int
) -> None:
    """(the comparisons above mean something: the head reads these deltas where it should,
    refuses where it should, and what is sent and held is the state machine's)"""
    made: list[CountedPattern] = []
    real = xml_params._param_head

    def counted(*markup: Any) -> CountedPattern | None:
        pattern = real(*markup)
        if pattern is None:
            return None
        made.append(CountedPattern(pattern))
        return made[-1]

    monkeypatch.setattr(xml_params, "_param_head", counted)
    took: list[int] = []
    real_took = xml_params.XmlParamsReader._took_head

    def counted_took(self: Any, text: str, head: Any, key: Any) -> int:
        took.append(real_took(self, text, head, key))
        return took[-1]

    monkeypatch.setattr(xml_params.XmlParamsReader, "_took_head", counted_took)
    fast = _read(item, deltas, True)
    # (the heads were made: from between parameters, in a key, and past the key where the
    # markup has a value opener)
    assert len(made) == (3 if item.value_open else 2)
    assert len(took) - took.count(0) == heads
    took.clear()
    slow = _read(item, deltas, False)
    assert not took
    assert "".join(fast[0]) == "".join(slow[0])
    assert fast == slow


def test_a_wrapper_first_is_left_to_the_steps() -> None:
    """A first parameter that wraps the arguments waits whole: the head reads its key and
    gives up, and the steps hold it (the members are written in its place)."""

    class WrappingSink(SchemalessSink):
        def unwraps(self, key: str) -> bool:
            return key == "arguments"

    outs = []
    for on in (True, False):
        with shortcuts_set(on), scan_meter.counting():
            sink = WrappingSink()
            reader = xml_params.XmlParamsReader(MINICPM5, ("</function>",), sink)
            held = ""
            for delta in ['<param name="arguments">{"city": ', '"Oslo"}</par', "am>"]:
                held += delta
                held = held[reader.read(held, 0, False) :]
            reader.close()
            outs.append("".join(sink.out))
    assert outs[0] == outs[1] == '{"city": "Oslo"}'
