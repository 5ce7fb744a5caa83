"""A block the prompt opened (`prompt_opened` on a call, section or messages statement): the
output is read as if it followed the marker the prompt ended with, and that marker, being the
prompt's, is never given back as text. Whole and char-by-char streams must agree."""

from __future__ import annotations

from typing import Any

import pytest
from grammar_text import read_both, spec_of

CALL = 'family x\ncall prompt_opened "<tool_call>" ws json_call ws "</tool_call>"\n'
SECTION = 'family x\nsection "<calls>" "</calls>" prompt_opened\ncall "<c>" json_call "</c>"\n'
MESSAGES = (
    'family x\nmessages "to=" /[a-z]+/ "<m>" ["<e>"] prompt_opened\n'
    'route "self" reasoning\nroute "user" content\ncall "<c>" json_call "</c>"\n'
)
PING = '{"name": "ping", "arguments": {"n": 1}}'


def read(grammar: str, text: str, reason: str = "stop", **options: Any) -> tuple:
    """(content, reasoning, calls) of `text` fed whole; a char-by-char stream must agree."""
    return read_both(spec_of(grammar), text, None, reason, **options)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PING + "</tool_call>", (None, None, [("ping", '{"n": 1}')])),
        ("<tool_call>" + PING + "</tool_call>", (None, None, [("ping", '{"n": 1}')])),
        ("Hi there", ("Hi there", None, [])),
        ("", (None, None, [])),
    ],
)
def test_a_call_the_prompt_opened(text: str, expected: tuple) -> None:
    assert read(CALL, text) == expected


def test_block_open_false_reads_from_the_top() -> None:
    text = PING + "</tool_call>"
    assert read(CALL, text, block_open=False) == (text, None, [])


def test_a_reasoning_block_the_prompt_opened_comes_first() -> None:
    grammar = CALL + 'reasoning "<think>" "</think>"\n'
    got = read(grammar, "plan</think>" + PING, reasoning_open=True)
    assert got == (PING, "plan", [])


def test_a_section_the_prompt_opened() -> None:
    text = '<c>{"name": "ping", "arguments": {}}</c></calls>After.'
    assert read(SECTION, text) == ("After.", None, [("ping", "{}")])
    assert read(SECTION, "Hello") == ("Hello", None, [])  # no call: its opener is not given back


def test_messages_whose_header_the_prompt_opened() -> None:
    assert read(MESSAGES, "self<m>plan<e>to=user<m>Hi<e>") == ("Hi", "plan", [])
    assert read(MESSAGES, "set x to 5") == ("set x to 5", None, [])  # the prompt's `to=` stays out
