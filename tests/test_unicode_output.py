"""Every string the parser hands out encodes as UTF-8 (docs/policies.md, "Lone surrogates"),
for every grammar: lone surrogate escapes written into names, keys and values of each
family's corpus cases, streamed whole, one character at a time and in random chunks.

A JSON or Python string decodes `\\ud83d` with no low half to a code point UTF-8 cannot
carry; a server that encodes the chunk (`json.dumps(..., ensure_ascii=False).encode()`)
then fails. The `utf-8` invariant of `check_text` catches it.
"""

from __future__ import annotations

import json

import pytest

import toolgrammar
from support.corpus_format import TOOLS, Case, all_cases
from toolgrammar.check.fuzz import grammars
from toolgrammar.check.invariants import UTF8, check_text

ESCAPES = ["\\ud83d", "\\ude00", "\\ud83d\\ude00", "\\ude00\\ud83d", "\\uDBFF"]
BY_FAMILY: dict[str, list[Case]] = {}
for _case in all_cases():
    BY_FAMILY.setdefault(_case.family, []).append(_case)


def with_escapes(text: str, count: int = 6) -> list[str]:
    """`text` with a surrogate escape put right after a quote, `=` or `>` (where names,
    keys and values begin), at up to `count` such places spread over the text."""
    starts = [i + 1 for i, ch in enumerate(text) if ch in "\"'=>"]
    step = max(1, len(starts) // count)
    return [
        text[:at] + ESCAPES[k % len(ESCAPES)] + text[at:]
        for k, at in enumerate(starts[::step][:count])
    ]


@pytest.mark.parametrize("family", grammars())
def test_lone_surrogate_escapes_leave_as_utf8(family: str) -> None:
    cases = BY_FAMILY.get(family, [])[:4]
    assert cases, f"{family} has no corpus case"
    for case in cases:
        for text in with_escapes(case.text):
            found = check_text(
                family, text, case.tools, case.options, finish=case.finish, cuts=[len(text)]
            )
            assert not found, "\n".join(map(str, found[:3]))


def test_the_invariant_sees_a_surrogate() -> None:
    """A message that holds an unpaired surrogate is a `utf-8` violation (the check can fail)."""
    from toolgrammar.check import invariants
    from toolgrammar.runtime.deltas import Message

    bad = Message.model_validate({"content": "a\ud83d", "tool_calls": []})
    assert invariants._unsendable([], bad) is not None
    assert UTF8 == "utf-8"


@pytest.mark.parametrize(
    "family, text, name, arguments",
    [
        (  # JSON-name family: the name keeps the escape's six characters
            "hermes",
            '<tool_call>{"name": "f\\ud83d", "arguments": {"k\\udc00": "\\ud83d"}}</tool_call>',
            "f\\ud83d",
            '{"k\\udc00": "\\ud83d"}',
        ),
        (  # markup family: a typed value's lone surrogate is its JSON escape
            "glm45",
            '<tool_call>configure<arg_key>tags</arg_key><arg_value>["\\ud83d"]</arg_value>'
            "</tool_call>",
            "configure",
            '{"tags": ["\\ud83d"]}',
        ),
        (  # a raw surrogate code point in the text itself (a caller's bad str) too
            "qwen3_coder",
            "hi \ud83d<tool_call>\n<function=f\udc00>\n<parameter=a>\nx\ud83d\n</parameter>\n"
            "</function>\n</tool_call>",
            "f\\udc00",
            '{"a": "x\\ud83d"}',
        ),
    ],
)
def test_what_a_lone_surrogate_becomes(family: str, text: str, name: str, arguments: str) -> None:
    message = toolgrammar.parse(family, text, TOOLS)
    json.dumps(message.to_dict(), ensure_ascii=False).encode("utf-8")
    [call] = message.tool_calls
    assert (call.function.name, call.function.arguments) == (name, arguments)
    parser = toolgrammar.StreamParser(family, TOOLS)
    deltas = [d for ch in text for d in parser.feed(ch)] + parser.finish("stop")
    for delta in deltas:
        json.dumps(delta.to_dict(), ensure_ascii=False).encode("utf-8")
    assert toolgrammar.assemble(deltas).tool_calls[0].function.arguments == arguments


@pytest.mark.parametrize("family", grammars())
@pytest.mark.parametrize("space", ["\u2028", "\u3000", "\x85", "\u2029 \u2028"])
def test_a_key_of_unicode_space_is_that_key(family: str, space: str) -> None:
    """U+2028, U+3000 and NEL are not the whitespace a template writes around a key
    (`runtime/unicode.MARKUP_SPACE`): a key written as one of them is that key, never the
    empty key `""` that stripping them would make of it (whole and streamed alike)."""
    for case in BY_FAMILY.get(family, []):
        if "city" not in case.text:
            continue
        text = case.text.replace("city", space)
        message = toolgrammar.parse(family, text, case.tools, case.finish, **case.options)
        for call in message.tool_calls:
            assert "" not in json.loads(call.function.arguments), (text, call)
        found = check_text(
            family, text, case.tools, case.options, finish=case.finish, cuts=[len(text)]
        )
        assert not found, "\n".join(map(str, found[:3]))
        return
