"""Spellings of XML-like markup: a marker's alternative spellings in `xml_params`, CDATA
sections in values (`cdata=true`) and names read only when requested (`name(requested=…)`).

The corpus pins each family's behaviour; these pin what the runtime holds back while
streaming, which the corpus's split checks only see as a final result."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.runtime import xml_entities, xml_params
from toolgrammar.runtime import spec as rt
from toolgrammar.runtime.xml_params import xml_params_literals

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {"type": "object", "properties": {"content": {"type": "string"}}},
        },
    }
]


def _streamed_arguments(family: str, chunks: list[str]) -> list[str]:
    """The argument text each chunk releases."""
    parser = toolgrammar.StreamParser(family, tools=TOOLS, reasoning_open=False)
    released = []
    for chunk in chunks:
        text = ""
        for delta in parser.feed(chunk):
            for call in delta.to_dict().get("tool_calls") or []:
                text += call.get("function", {}).get("arguments") or ""
        released.append(text)
    return released


def test_cdata_holds_back_only_what_may_close_the_section() -> None:
    opened = '<function name="write_file"><param name="content">'
    released = _streamed_arguments(
        "minicpm5", [opened, "a<![CDATA[x </param> ", "y]", "]", ">z</param></function>"]
    )
    assert released[0] == '{"content": "'
    assert released[1] == "ax </param> "
    assert released[2] == "y"  # `]` may begin `]]>`
    assert released[3] == ""
    assert released[4] == 'z"}'


def test_a_partial_cdata_opener_waits_and_is_value_text_at_the_end() -> None:
    opened = '<function name="write_file"><param name="content">'
    released = _streamed_arguments("minicpm5", [opened, "a<![CD"])
    assert released == ['{"content": "', "a"]  # `<![CD` may open a section: held
    message = toolgrammar.parse("minicpm5", opened + "a<![CD", TOOLS, finish_reason="length")
    assert json.loads(message.tool_calls[0].function.arguments) == {"content": "a<![CD"}


def test_every_spelling_of_a_marker_is_a_literal_of_the_dialect() -> None:
    item = rt.XmlParams(
        open="<p ",
        open_alternatives=("<p\u0120",),
        key_end=">",
        key_end_alternatives=("\n",),
        value_end="</p>",
        value_end_alternatives=("</ p>",),
    )
    assert item.opens == ("<p ", "<p\u0120")
    assert set(xml_params_literals(item)) >= {"<p ", "<p\u0120", ">", "\n", "</p>", "</ p>"}


def test_a_requested_name_waits_only_while_it_may_still_name_a_tool() -> None:
    parser = toolgrammar.StreamParser("step3p5", tools=TOOLS, reasoning_open=False)
    # (verbatim whitespace: the space is content at once, the name-to-be is held)
    assert [d.to_dict() for d in parser.feed("see <functionwr")] == [{"content": "see "}]
    deltas = parser.feed("x")  # `<functionwrx` names no requested tool: prose, at once
    assert "".join(d.to_dict().get("content", "") for d in deltas) == "<functionwrx"


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "&",
                "amp;",
                "lt;",
                "gt;",
                "quot;",
                "apos;",
                "#65;",
                "#x41;",
                "#0;",
                ";",
                "a",
                "&amp;",
                "&lt;",
                "&#",
            ]
        ),
        max_size=12,
    )
)
def test_named_entities_decode_as_one_left_to_right_pass(pieces: list[str]) -> None:
    """`xml_unescape` replaces named entities without the regex when no `&#` is there; it
    must decode exactly as one pass of the entity pattern does (`&amp;lt;` is `&lt;`)."""
    text = "".join(pieces)
    assert xml_params.xml_unescape(text) == xml_entities.ENTITY.sub(xml_entities._entity, text)
