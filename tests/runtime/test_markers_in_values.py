"""A call opener inside a markup value waits for what follows it (docs/policies.md, "Markers
inside values"): what the tables hand each dialect to decide it, the bound on how long it
waits, and that the decision is the same whole and at every split."""

from __future__ import annotations

import json

import pytest

import toolgrammar
from toolgrammar.invariants import check_text, run, split_at
from toolgrammar.runtime import tables
from toolgrammar.runtime.markers import MAX_OPENER_WAIT, OpenerInValue
from toolgrammar.runtime.registry import get_spec

from corpus_format import TOOLS


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
    "after, ends, at_end",
    [
        ("get_weather<arg_key>city", True, True),  # a name and a key: a new call
        ("get_weather</tool_call>", True, True),  # a name and the closer: a call, no arguments
        (" and more</tool_call>", False, False),  # no name before the closer: text
        (" strings</arg_value>", False, True),  # the value's own closer: text
    ],
)
def test_the_first_marker_after_the_opener_decides(after: str, ends: bool, at_end: bool) -> None:
    decide = OpenerInValue(_stops("glm45"), ("</arg_value>",), ("<arg_key>",))
    text = "<tool_call>" + after
    assert decide.ends_value(text, len("<tool_call>"), eof=False) is ends
    before = text[: text.rindex("<")]  # the deciding marker not there yet
    assert decide.ends_value(before, len("<tool_call>"), eof=False) is None
    # the output ended there: a call began if what follows the opener may be a name
    # (" strings" may; " and more" is none, so the opener was the value's text)
    assert decide.ends_value(before, len("<tool_call>"), eof=True) is at_end


def test_the_wait_is_bounded() -> None:
    """Past MAX_OPENER_WAIT characters with nothing that decides, the opener is text, and a
    call header after that does not change it."""
    decide = OpenerInValue(_stops("glm45"), ("</arg_value>",), ("<arg_key>",))
    start = len("<tool_call>")
    filler = "x" * MAX_OPENER_WAIT
    assert decide.ends_value("<tool_call>" + filler[:-1], start, eof=False) is None
    header = "<arg_key>city</arg_key>"
    assert decide.ends_value("<tool_call>" + filler + header, start, eof=False) is False
    assert decide.ends_value("<tool_call>" + filler[:-1] + "<arg_key>", start, eof=False)
    text = _glm("see <tool_call>" + filler + "<arg_key>city</arg_key><arg_value>Oslo</tool_call>")
    message = toolgrammar.parse("glm45", text, TOOLS, reasoning_open=False)
    [call] = message.tool_calls
    assert json.loads(call.function.arguments)["content"].startswith("see <tool_call>xxx")


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
