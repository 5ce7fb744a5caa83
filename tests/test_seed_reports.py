"""The five field reports (docs/invariants.md#field-reports), each pinned for every family
it concerns."""

from __future__ import annotations

import json

import pytest

import toolgrammar
from support.corpus_format import TOOLS
from toolgrammar.check.invariants import run, split_at

QWEN_CALL = (
    "<tool_call>\n<function=write_file>\n<parameter=path>\nREADME.md\n</parameter>\n"
    "<parameter=content>\n# Title\n\nbody text that stops mid-sen"
)


def _stream(family: str, text: str, size: int = 1, finish: str = "stop", **options):
    points = list(range(size, len(text), size))
    return run(family, split_at(text, points), TOOLS, options, finish)


@pytest.mark.parametrize("size", [1, 3, 16])
def test_seed000_truncated_value_still_terminates(size: int) -> None:
    """EOS inside an open string value: the streamed arguments are closed, not left open."""
    per_feed, message = _stream("qwen3_coder", QWEN_CALL, size, finish="length")
    args = json.loads(message.tool_calls[0].function.arguments)
    assert args == {"path": "README.md", "content": "# Title\n\nbody text that stops mid-sen"}
    assert message.finish_reason == "length"


@pytest.mark.parametrize(
    "family,text",
    [
        (
            "hermes",
            '<tool_call>\n{"name": "configure", "arguments": {"label": "a", "level": "42", "ratio": "0.5", "enabled": "true", "label": "b"}}\n</tool_call>',
        ),
        (
            "kimi_k2",
            '<|tool_calls_section_begin|><|tool_call_begin|>functions.configure:0<|tool_call_argument_begin|>{"label":"a","level":"42","enabled":"true","label":"b"}<|tool_call_end|><|tool_calls_section_end|>',
        ),
        (
            "qwen3_coder",
            "<tool_call>\n<function=configure>\n<parameter=label>\na\n</parameter>\n<parameter=level>\n42\n</parameter>\n<parameter=enabled>\ntrue\n</parameter>\n<parameter=label>\nb\n</parameter>\n</function>\n</tool_call>",
        ),
    ],
)
def test_seed001_coerced_middle_field_never_streamed_early(family: str, text: str) -> None:
    """A schema-typed middle value is typed, and no streamed byte is ever rewritten."""
    sent = ""
    from toolgrammar import StreamParser

    parser = StreamParser(family, TOOLS, ids="sequential")
    for char in text:
        for delta in parser.feed(char):
            for part in delta.tool_calls:
                sent += part.function.arguments
        assert '"42' not in sent and '"true' not in sent
    for delta in parser.finish():
        for part in delta.tool_calls:
            sent += part.function.arguments
    final = toolgrammar.parse(family, text, TOOLS).tool_calls[0].function.arguments
    assert sent == final
    value = json.loads(final)
    assert value["level"] == 42 and value["enabled"] is True and value["label"] == "b"


@pytest.mark.parametrize(
    "family,text",
    [
        ("qwen3_coder", "Checking the weather. <tool_call>\n<function"),
        ("hermes", 'Checking the weather. <tool_call>\n{"na'),
        (
            "kimi_k2",
            "Checking the weather. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_we",
        ),
        ("qwen3_coder", "Checking the weather. <tool_ca"),
    ],
)
def test_seed002_unfinished_opener_dropped_text_kept(family: str, text: str) -> None:
    # at `length` (the output was cut); a normal stop gives back what is no call (below)
    for size in (1, 4, len(text)):
        _, message = _stream(family, text, size, finish="length")
        # (verbatim whitespace: the space the model wrote before the opener is its text)
        assert message.content == "Checking the weather. "
        assert message.tool_calls == []
        assert message.finish_reason == "length"


@pytest.mark.parametrize(
    "family,text,content",
    [
        # a marker cut inside its spelling is markup at any finish reason
        ("qwen3_coder", "Checking the weather. <tool_call>\n<function", "Checking the weather. "),
        ("qwen3_coder", "Checking the weather. <tool_ca", "Checking the weather. "),
        # nothing was cut at a normal stop: text that is no call goes back (was dropped)
        (
            "hermes",
            'Checking the weather. <tool_call>\n{"na',
            'Checking the weather. <tool_call>\n{"na',
        ),
        # ... except the family's special tokens that opened no call: their payload goes back
        # without them (docs/policies.md, "Malformed calls")
        (
            "kimi_k2",
            "Checking the weather. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_we",
            "Checking the weather. functions.get_we",
        ),
    ],
)
def test_seed002_at_a_normal_stop_only_cut_markers_are_dropped(
    family: str, text: str, content: str
) -> None:
    for size in (1, 4, len(text)):
        _, message = _stream(family, text, size, finish="stop")
        assert message.content == content
        assert message.tool_calls == []
        assert message.finish_reason == "stop"


SEVERAL = {
    "qwen3_coder": "".join(
        f"<tool_call>\n<function=get_weather>\n<parameter=city>\n{c}\n</parameter>\n</function>\n</tool_call>\n"
        for c in ("Paris", "Rome", "Oslo")
    ),
    "hermes": "".join(
        f'<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "{c}"}}}}\n</tool_call>\n'
        for c in ("Paris", "Rome", "Oslo")
    ),
    "kimi_k2": "<|tool_calls_section_begin|>"
    + "".join(
        f'<|tool_call_begin|>functions.get_weather:{i}<|tool_call_argument_begin|>{{"city": "{c}"}}<|tool_call_end|>'
        for i, c in enumerate(("Paris", "Rome", "Oslo"))
    )
    + "<|tool_calls_section_end|>",
}


@pytest.mark.parametrize("family", sorted(SEVERAL))
def test_seed003_every_call_completed_by_one_delta_is_emitted(family: str) -> None:
    text = SEVERAL[family]
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential")
    deltas = parser.feed(text)  # one delta carries all three calls
    indexes = {part.index for d in deltas for part in d.tool_calls}
    assert indexes == {0, 1, 2}
    names = [part.function.name for d in deltas for part in d.tool_calls if part.function.name]
    assert names == ["get_weather"] * 3
    streamed: dict[int, str] = {}
    for d in deltas:
        for part in d.tool_calls:
            streamed[part.index] = streamed.get(part.index, "") + part.function.arguments
    assert [json.loads(streamed[i])["city"] for i in range(3)] == ["Paris", "Rome", "Oslo"]
    assert parser.finish() == []


def test_seed004_repeated_parameters_parse_once_each() -> None:
    """A model looping on two parameters: every repetition is kept, each parsed once."""
    loop = "<parameter=old_string>\ntotal = 0\n</parameter>\n<parameter=new_string>\ntotal = 1\n</parameter>\n"
    text = "<tool_call>\n<function=Edit>\n" + loop * 200 + "</function>\n</tool_call>"
    per_feed, message = _stream("qwen3_coder", text, 16)
    args = message.tool_calls[0].function.arguments
    assert args.count('"old_string": "total = 0"') == 200
    assert json.loads(args) == {"old_string": "total = 0", "new_string": "total = 1"}
