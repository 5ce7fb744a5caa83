"""A call opener inside a markup value waits for what follows it (docs/policies.md, "Markers
inside values"): what the tables hand each dialect to decide it, the bound on how long it
waits, and that the decision is the same whole and at every split."""

from __future__ import annotations

import json

import pytest
from grammar_text import read_both, spec_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.check.invariants import check_text, comparable, run, split_at
from toolgrammar.runtime import tables
from toolgrammar.runtime.in_value import MAX_OPENER_WAIT, OpenerInValue
from toolgrammar.runtime.registry import get_spec

from support.corpus_format import TOOLS


def _stops(family: str):
    """The stops of the family's first argument dialect."""
    compiled = tables.compiled(get_spec(family))
    return next(iter(compiled.stops.values()))


def test_the_tables_say_which_stops_open_calls_and_what_a_header_is() -> None:
    glm = _stops("glm45")
    assert glm.openers == {"<tool_call>"}
    assert dict(glm.name_ends).keys() == {"<arg_key>", "</tool_call>"}  # GLM: NAME<arg_key>
    qwen = _stops("qwen3_coder")
    assert qwen.openers == {"<tool_call>"}
    assert qwen.headers == {"<function="}  # the literal right before the name
    assert "</tool_call>" in qwen  # a closer the call writes later ends the arguments too
    minicpm = _stops("minicpm5")
    assert [end for end, _ in minicpm.name_ends] == ['">']  # `<function name="` is the opener


def _glm(value: str) -> str:
    return f"<tool_call>write_file<arg_key>content</arg_key><arg_value>{value}"


@pytest.mark.parametrize(
    "after, ends, before, at_end",
    [
        ("get_weather<arg_key>city", True, None, True),  # a name and a key: a new call
        ("get_weather</tool_call>", True, None, True),  # a name and the closer: no arguments
        # no name before the closer: text, known before the closer comes (no name is
        # " and more", however the output goes on)
        (" and more</tool_call>", False, False, False),
        (" strings</arg_value>", False, None, True),  # the value's own closer: text
    ],
)
def test_the_first_marker_after_the_opener_decides(
    after: str, ends: bool, before: bool | None, at_end: bool
) -> None:
    decide = OpenerInValue(_stops("glm45"), ("</arg_value>",), ("<arg_key>",))
    opener = "<tool_call>"
    text = opener + after
    assert decide.ends_value(text, len(opener), eof=False, opener=opener) is ends
    cut = text[: text.rindex("<")]  # the deciding marker not there yet
    assert decide.ends_value(cut, len(opener), eof=False, opener=opener) is before
    # the output ended there: a call began if what follows the opener may be a name
    # (" strings" may; " and more" is none, so the opener was the value's text)
    assert decide.ends_value(cut, len(opener), eof=True, opener=opener) is at_end


def test_the_wait_is_bounded() -> None:
    """Past MAX_OPENER_WAIT characters with nothing that decides, the opener is text, and a
    call header after that does not change it (Qwen3-Coder's opener may be followed by any
    run of whitespace before `<function=`)."""
    decide = OpenerInValue(_stops("qwen3_coder"), ("</parameter>",), ("<parameter=",))
    opener = "<tool_call>"
    start = len(opener)
    filler = " " * MAX_OPENER_WAIT
    assert decide.ends_value(opener + filler[:-1], start, eof=False, opener=opener) is None
    header = "<function=get_weather>"
    assert decide.ends_value(opener + filler + header, start, eof=False, opener=opener) is False
    assert decide.ends_value(opener + filler[:-1] + header, start, eof=False, opener=opener)


def test_text_a_call_cannot_go_on_with_decides_at_once() -> None:
    """What follows an opener must be able to go on as its call (the grammar's items after
    it, up to the name): else the opener is the value's text at once, as it would be once
    the output went on, and at the end of the output too."""
    qwen = OpenerInValue(_stops("qwen3_coder"), ("</parameter>",), ("<parameter=",))
    opener = "<tool_call>"
    start = len(opener)
    for eof in (False, True):
        # `<tool_call>` goes on with whitespace and `<function=`, never with `n`
        assert qwen.ends_value(opener + "n", start, eof=eof, opener=opener) is False
        assert qwen.ends_value(opener + "\n<func", start, eof=eof, opener=opener) is (
            None if not eof else True
        )
    # GLM's opener is followed by the name: more than a name's length of text is none
    glm = OpenerInValue(_stops("glm45"), ("</arg_value>",), ("<arg_key>",))
    long_name = opener + "x" * 300
    assert glm.ends_value(long_name, start, eof=False, opener=opener) is False
    assert glm.ends_value(long_name + "<arg_key>", start, eof=False, opener=opener) is False
    text = _glm(
        "see <tool_call>" + "x" * 300 + "<arg_key>city</arg_key><arg_value>Oslo</tool_call>"
    )
    message = toolgrammar.parse("glm45", text, TOOLS, reasoning_open=False)
    [call] = message.tool_calls
    assert json.loads(call.function.arguments)["content"].startswith("see <tool_call>xxx")
    # Gemma 4's opener goes on with `call:` or `:` after whitespace
    gemma = OpenerInValue(_stops("gemma4"), ('<|"|>',))
    opener = "<|tool_call>"
    start = len(opener)
    assert gemma.ends_value(opener + "t", start, eof=True, opener=opener) is False
    assert gemma.ends_value(opener + " ca", start, eof=True, opener=opener) is True


@pytest.mark.parametrize(
    "value",
    [
        "see <tool_call> and more</arg_value></tool_call>",
        "see <tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>",
        "see <tool_call>" + "y" * (MAX_OPENER_WAIT + 5) + "<arg_key>a</arg_key></tool_call>",
    ],
)
def test_whole_and_every_split_agree(value: str) -> None:
    text = _glm(value)
    options = {"reasoning_open": False}
    assert check_text("glm45", text, TOOLS, options, cuts=[len(text)]) == []
    whole = toolgrammar.parse("glm45", text, TOOLS, ids="sequential", reasoning_open=False)
    _, streamed = run("glm45", split_at(text, list(range(1, len(text)))), TOOLS, options)
    assert [c.function.arguments for c in streamed.tool_calls] == [
        c.function.arguments for c in whole.tool_calls
    ]


# -- xml_elements (MiniMax-M3): the rule at every depth ---------------------------------

NS = "]<]minimax[>["


def test_a_marker_inside_a_marker_not_complete_yet_does_not_decide() -> None:
    """MiniMax-M3's name end `>` is inside its prefix: `]<]minimax[>` cut off after the
    opener is not the `>` ending a name until the text says which marker it begins; a key
    opener `]<]minimax[>[<` may still become the value's closer `]<]minimax[>[</`."""
    decide = OpenerInValue(_stops("minimax_m3"), (NS + "</",), (NS + "<",))
    opener = NS + "<invoke name="
    start = len(opener)
    cut = opener + " then the name" + NS[:-1]  # `]<]minimax[>` with no `[` yet
    assert decide.ends_value(cut, start, eof=False, opener=opener) is None
    assert decide.ends_value(cut + "[</content>", start, eof=False, opener=opener) is False
    assert decide.ends_value(cut + "[<b>", start, eof=False, opener=opener) is True  # a key
    assert decide.ends_value(cut, start, eof=True, opener=opener) is False  # `>` after no name
    assert decide.ends_value(opener + '"get_weather">', start, eof=False, opener=opener) is True
    assert decide.ends_value(opener + NS + "<", start, eof=False, opener=opener) is None


DEPTH_TWO = (
    'family x\nsection "<calls>" "</calls>"\n'
    'call "<invoke name=\\"" name(until="\\">") "\\">" ws xml_elements(max_depth=2) ws "</invoke>"\n'
)


@pytest.mark.parametrize(
    ("value", "calls"),
    [
        # beyond max_depth `<c>` is text of `<b>`: the opener in it is text all the same
        (
            "<a><b><c>see <invoke name= x</c></b></a></invoke>",
            [("f", '{"a": {"b": "<c>see <invoke name= x</c>"}}')],
        ),
        # a call header: the value ends before it at any depth, the next call is read
        (
            '<a><b><c>see <invoke name="g"><k>1</k></invoke>',
            [("f", '{"a": {"b": "<c>see "}}'), ("g", '{"k": "1"}')],
        ),
        # the call's closer ends the open value at any depth
        ("<a><b>1</invoke>", [("f", '{"a": {"b": "1"}}')]),
    ],
)
def test_nested_elements_follow_the_rule_at_every_depth(value: str, calls: list) -> None:
    text = '<calls><invoke name="f">' + value + "</calls>"
    assert read_both(spec_of(DEPTH_TWO), text, None, "stop") == (None, None, calls)


def test_xml_elements_wait_is_bounded() -> None:
    """An invoke opener with nothing deciding it within MAX_OPENER_WAIT characters is text,
    in a nested value too; whole and split agree."""
    filler = "z" * (MAX_OPENER_WAIT + 5)
    text = (
        f'{NS}<tool_call>\n{NS}<invoke name="configure">{NS}<limits>{NS}<invoke name={filler}'
        f"{NS}<max>1{NS}</max>{NS}</limits>{NS}</invoke>\n{NS}</tool_call>"
    )
    assert check_text("minimax_m3", text, TOOLS, {}, cuts=[len(text)]) == []
    [call] = toolgrammar.parse("minimax_m3", text, TOOLS).tool_calls
    limits = json.loads(call.function.arguments)["limits"]
    assert limits["max"] == 1 and limits["$text"].startswith(NS + "<invoke name=zzz")


# fragments a value may hold: the family's markers whole and in pieces, a name, its end
FRAGMENTS = [
    "a",
    " b",
    "\n",
    NS,
    NS[:5],
    ">",
    '"',
    NS + "<",
    NS + "</",
    NS + "<invoke name=",
    NS + '<invoke name="get_weather">',
    '"get_weather">',
    NS + "</invoke>",
    NS + "</tool_call>",
    NS + "<max>",
    NS + "</max>",
    NS + "<item>",
    NS + "</item>",
    NS + "</content>",
    NS + "</limits>",
]
# where the value is: a streamed string, a nested object, one level deeper, an array item
PLACES = [
    ('<invoke name="write_file">' + NS + "<content>", NS + "</content>"),
    ('<invoke name="configure">' + NS + "<limits>", NS + "</limits>"),
    (
        '<invoke name="configure">' + NS + "<limits>" + NS + "<max>",
        NS + "</max>" + NS + "</limits>",
    ),
    ('<invoke name="configure">' + NS + "<tags>" + NS + "<item>", NS + "</item>" + NS + "</tags>"),
]
ENDINGS = ["", NS + "</invoke>", NS + "</invoke>\n" + NS + "</tool_call>"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    place=st.sampled_from(PLACES),
    fragments=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6),
    closed=st.booleans(),
    ending=st.sampled_from(ENDINGS),
    finish=st.sampled_from(["stop", "length"]),
)
def test_xml_elements_values_holding_marker_fragments_read_alike_at_every_split(
    place: tuple[str, str], fragments: list[str], closed: bool, ending: str, finish: str
) -> None:
    """Whole, char by char, and in two pieces at every point, a MiniMax-M3 value holding
    pieces of the family's markup reads the same (and the stream only adds)."""
    head, own_closer = place
    text = f"{NS}<tool_call>\n{NS}{head}{''.join(fragments)}{own_closer if closed else ''}{ending}"
    assert check_text("minimax_m3", text, TOOLS, {}, cuts=[len(text)], finish=finish) == []
    whole = comparable(run("minimax_m3", [text], TOOLS, {}, finish)[1])
    for point in range(1, len(text)):
        pieces = [text[:point], text[point:]]
        assert comparable(run("minimax_m3", pieces, TOOLS, {}, finish)[1]) == whole, point
