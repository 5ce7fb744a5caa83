"""A JSON call object names its call within 65,536 characters of its `{` (`json_call.
_BEFORE_NAME`, docs/policies.md "Malformed calls"): what is written before the name is held
until the name decides the call, so it is bounded, and decided on the text alone: the whole
parse and every streaming split agree on where the bound falls."""

from __future__ import annotations

import pytest

import toolgrammar
from toolgrammar.runtime.json_call import _BEFORE_NAME

FAMILIES = [
    ("hermes", "<tool_call>\n", "\n</tool_call> after"),
    ("llama3_json", "", " after"),
    ("mistral", "[TOOL_CALLS][", "]"),
]


def _body(length: int, first: str) -> str:
    """A call object `length` characters long up to the end of its name's value (its
    closing quote), with `first` (arguments, or an id) written before the name."""
    head = '{"%s": "' % first if first == "id" else '{"arguments": {"a": "'
    tail = '"}, "name": "get_weather' if first != "id" else '", "name": "get_weather'
    pad = length - len(head) - len(tail) - 1
    args = ', "arguments": {"city": "Paris"}}' if first == "id" else "}"
    return head + "x" * pad + tail + '"' + args


def _streamed(family: str, text: str, size: int) -> tuple:
    parser = toolgrammar.StreamParser(family, None, ids="sequential")
    deltas = [d for i in range(0, len(text), size) for d in parser.feed(text[i : i + size])]
    message = toolgrammar.assemble(deltas + parser.finish())
    return message.content, message.tool_calls


@pytest.mark.parametrize("family, before, after", FAMILIES)
@pytest.mark.parametrize("first", ["arguments", "id"])
def test_the_name_must_be_known_within_the_bound(
    family: str, before: str, after: str, first: str
) -> None:
    for length, named in (
        (_BEFORE_NAME - 1, True),
        (_BEFORE_NAME, True),
        (_BEFORE_NAME + 1, False),
    ):
        body = _body(length, first)
        assert body.index('"get_weather"') + len('"get_weather"') == length
        text = before + body + after
        whole = toolgrammar.parse(family, text, None, ids="sequential")
        assert [c.function.name for c in whole.tool_calls] == (["get_weather"] if named else [])
        if not named:  # no call: all of its text is content, as written
            assert whole.content is not None and body in whole.content
        for size in (1, 997, 4096, _BEFORE_NAME, _BEFORE_NAME + 3):
            if size == 1 and family != "hermes":
                continue  # (one character at a time: once is enough)
            assert _streamed(family, text, size) == (whole.content, whole.tool_calls), size
