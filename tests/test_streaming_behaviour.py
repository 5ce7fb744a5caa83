"""Streaming details the golden corpus cannot show: ids, what is held back, dropped calls."""

from __future__ import annotations

import toolgrammar
from support.corpus_format import TOOLS

KIMI_TWO = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "A"}<|tool_call_end|>'
    "<|tool_call_begin|>get_weather:5"
    '<|tool_call_argument_begin|>{"city": "B"}<|tool_call_end|><|tool_calls_section_end|>'
)


def _stream(family: str, pieces: list[str], **options):
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential", **options)
    feeds = [parser.feed(piece) for piece in pieces]
    feeds.append(parser.finish("stop"))
    return feeds, toolgrammar.assemble([d for f in feeds for d in f], parser.finish_reason)


def test_kimi_ids_are_the_headers_in_both_paths() -> None:
    whole = toolgrammar.parse("kimi_k2", KIMI_TWO, TOOLS)
    _, streamed = _stream("kimi_k2", list(KIMI_TWO))
    for message in (whole, streamed):
        assert [c.id for c in message.tool_calls] == ["functions.get_weather:0", "get_weather:5"]


def test_sequential_ids_for_families_without_markup_ids() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "write_file", "arguments": {}}</tool_call>'
    )
    message = toolgrammar.parse("hermes", text, TOOLS, ids="sequential")
    assert [c.id for c in message.tool_calls] == ["call_0", "call_1"]


PIECES = ["Sure.  \n", "\n", "<tool_", "call>\n<function=get_weather>\n</function>"]


def test_whitespace_before_an_opener_is_never_streamed_when_trimmed() -> None:
    feeds, message = _stream("qwen3_coder", PIECES, whitespace="trim")
    content = "".join(d.content or "" for f in feeds for d in f)
    assert content == "Sure."
    assert message.content == "Sure."


def test_verbatim_whitespace_before_an_opener_streams_at_once() -> None:
    feeds, message = _stream("qwen3_coder", PIECES)
    assert [d.content for d in feeds[0]] == ["Sure.  \n"]  # nothing held back for it
    assert message.content == "Sure.  \n\n"


def test_whitespace_between_words_is_released_when_content_follows() -> None:
    feeds, message = _stream("qwen3_coder", ["a  ", "\n", "b"], whitespace="trim")
    assert [d.content for d in feeds[0]] == ["a"]
    assert message.content == "a  \nb"
    feeds, message = _stream("qwen3_coder", ["a  ", "\n", "b"])  # verbatim: at once
    assert [d.content for d in feeds[0]] == ["a  "]
    assert message.content == "a  \nb"


def test_qwen3_value_newline_before_the_closer_is_held_not_sent() -> None:
    head = "<tool_call>\n<function=write_file>\n<parameter=content>\nhello\n"
    feeds, message = _stream("qwen3_coder", [head, "</parameter>\n</function>\n</tool_call>"])
    first = "".join(p.function.arguments for d in feeds[0] for p in d.tool_calls)
    assert first.endswith("hello")
    assert message.tool_calls[0].function.arguments == '{"content": "hello"}'


def test_dropped_unknown_call_sends_nothing_and_does_not_take_an_index() -> None:
    text = (
        "<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</function>\n"
        "</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    feeds, message = _stream("qwen3_coder", list(text), unknown_tools="drop")
    parts = [p for f in feeds for d in f for p in d.tool_calls]
    assert {p.index for p in parts} == {0}
    assert all(p.function.name in (None, "get_weather") for p in parts)
    assert message.finish_reason == "tool_calls"


def test_typed_value_given_as_json_string_is_sent_once_coerced() -> None:
    head = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "4'
    feeds, message = _stream("hermes", [head, '2", "unit": "c"}}\n</tool_call>'])
    sent = [p.function.arguments for f in feeds for d in f for p in d.tool_calls]
    assert not any('"4' in s for s in sent)
    assert message.tool_calls[0].function.arguments == '{"city": "Paris", "days": 42, "unit": "c"}'


def test_reasoning_closed_by_a_call_opener_streams_as_reasoning() -> None:
    text = "<think>plan it\n<tool_call>\n<function=get_weather>\n</function>\n</tool_call>"
    feeds, message = _stream("qwen3_coder", list(text))
    assert message.reasoning == "plan it\n"
    assert message.content is None
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
