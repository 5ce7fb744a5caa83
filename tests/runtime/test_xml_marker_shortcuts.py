"""The per-marker shortcuts of `xml_params` (`_open_at`, `_key_end_at`, `_value_open_at`,
`_own_at`: a `str.startswith` or `str.find` where the state machine searches) are taken only
where the search would find the same marker there. No family's markup has a marker that
begins with OPEN, VALUE_OPEN or the value's closer, or that sits inside one of them, so the
corpus never meets the cases they must refuse; these items do, and read the same with the
shortcuts on and off, streamed in every chunking and whole."""

from __future__ import annotations

import itertools
import json

import pytest

import toolgrammar
from support.readers import SchemalessSink
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime import xml_params
from toolgrammar.runtime.markers import markers
from toolgrammar.runtime.spec import XmlParams

GLM = dict(
    open="<arg_key>", key_end="</arg_key>", value_open="<arg_value>", value_end="</arg_value>"
)
ITEM = XmlParams(**GLM)  # type: ignore[arg-type]
PARAMS = "<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>b</arg_key><arg_value>2</arg_value>"

# stops that defeat one shortcut each: a longer marker beginning with the shortcut's
# literal, or a marker inside it (found where a held start of the literal would be)
STOPS = {
    "begins with OPEN": ("<arg_key>!",),
    "inside OPEN": ("g_k",),
    "begins with VALUE_OPEN": ("<arg_value>!",),
    "inside VALUE_OPEN": ("g_v",),
    "begins with the closer": ("</arg_value>!",),
}
TEXTS = [
    PARAMS,
    "<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>!<arg_key>b</arg_key>",
    "<arg_key>a</arg_key><arg_value>!x</arg_value><arg_key>b</arg_key><arg_value>2</arg_value>",
    "<arg_key>a</arg_key><arg_value>1</arg_value>!<arg_key>b</arg_key><arg_value>2</arg_value>",
    "<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>2",
    "<arg_k",
    "<arg_key>a</arg_key><arg_v",
]


class _TypedSink(SchemalessSink):
    """A sink whose schemas type every value as an integer: values are held whole."""

    def schema_of(self, key: str) -> dict:  # type: ignore[override]
        return {"type": "integer"}


def _read(
    stops: tuple[str, ...], text: str, size: int, item: XmlParams = ITEM, typed: bool = False
) -> tuple[str, int]:
    """The arguments written for `text` fed `size` characters at a time (0: whole), and how
    much of it the reader took (`typed`: every value typed, held whole)."""
    sink = _TypedSink() if typed else SchemalessSink()
    reader = xml_params.XmlParamsReader(item, stops, sink)
    pieces = [text] if size == 0 else [text[i : i + size] for i in range(0, len(text), size)]
    held, taken = "", 0
    for piece in pieces:
        held += piece
        pos = reader.read(held, 0, False)
        taken += pos
        held = held[pos:]
        if reader.done:
            break
    if not reader.done:
        taken += reader.read(held, 0, True)
    reader.close()
    return "".join(sink.out), taken


@pytest.mark.parametrize("case", sorted(STOPS))
def test_a_marker_a_shortcut_cannot_tell_apart_reads_as_the_state_machine_reads_it(
    case: str,
) -> None:
    stops = STOPS[case]
    for text in TEXTS:
        for size in (0, 1, 2, 3, 5, 7, 11):
            with shortcuts_set(True):
                fast = _read(stops, text, size)
            with shortcuts_set(False):
                slow = _read(stops, text, size)
            assert fast == slow, (text, size)


def test_the_shortcuts_refuse_a_literal_another_marker_begins_with_or_sits_in() -> None:
    with shortcuts_set(True):
        assert xml_params._open_at(ITEM, markers(("<arg_key>", "</x>"))) == "<arg_key>"
        assert xml_params._open_at(ITEM, markers(("<arg_key>", "<arg_key>!"))) == ""
        assert xml_params._open_at(ITEM, markers(("<arg_key>", "g_k"))) == ""
        opens = markers(("<arg_value>", "<arg_key>", "</x>"))
        assert xml_params._value_open_at(ITEM, opens) == "<arg_value>"
        assert xml_params._value_open_at(ITEM, markers(("<arg_value>", "<arg_value>!"))) == ""
        ends = xml_params.closers(ITEM)
        assert xml_params._own_at(ITEM, ends, markers(("</arg_value>", "</x>"))) == "</arg_value>"
        assert xml_params._own_at(ITEM, ends, markers(("</arg_value>", "</arg_value>!"))) == ""
        # value ends that begin with different characters: no one character marks them
        assert xml_params._own_at(ITEM, ends, markers(("</arg_value>", "[x]"))) == ""
        # where a CDATA section may open, its opener is one of the markers looked for: a
        # closer it begins with is refused, one that begins with `<` as it does is taken
        cdata = XmlParams(**GLM, cdata=True)  # type: ignore[arg-type]
        ends = xml_params.closers(cdata)
        assert xml_params._own_at(cdata, ends, markers(("</arg_value>", "</x>"))) == "</arg_value>"
        short = XmlParams(**{**GLM, "value_end": "<!"}, cdata=True)  # type: ignore[arg-type]
        ends = xml_params.closers(short)
        assert xml_params._own_at(short, ends, markers(("<!", "</x>"))) == ""
        wide = XmlParams(**{**GLM, "value_end": "[end]"}, cdata=True)  # type: ignore[arg-type]
        ends = xml_params.closers(wide)
        assert xml_params._own_at(wide, ends, markers(("[end]",))) == ""


def test_a_parameter_written_whole_is_the_same_in_every_chunking() -> None:
    with shortcuts_set(True):
        assert {_read((), PARAMS, size)[0] for size in (0, 1, 2, 3, 5, 16)} == {
            '{"a": "1", "b": "2"}'
        }


WEATHER = [function_tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})]


@pytest.mark.parametrize("family", ["spark25", "qwen3_coder"])
def test_an_undeclared_parameter_is_dropped_where_a_value_closes_in_line(family: str) -> None:
    """`undeclared_params="drop"`: a key the schema does not declare is read and written
    nowhere, typed or text, where a value's tail is closed in line (`_close_value`, markup
    with no entities: the corpus's drop cases are MiniCPM5's, whose values decode them)."""
    if family == "spark25":
        params = "<arg_key>{}</arg_key><arg_value>{}</arg_value>"
        text = "<tool_call>get_weather" + "".join(
            params.format(k, v) for k, v in (("note", "x"), ("city", "Paris"), ("n", "7"))
        )
        text += params.format("days", "3") + "</tool_call>"
    else:
        param = "<parameter={}>\n{}\n</parameter>\n"
        text = "<tool_call>\n<function=get_weather>\n" + "".join(
            param.format(k, v) for k, v in (("note", "x"), ("city", "Paris"), ("n", "7"))
        )
        text += param.format("days", "3") + "</function>\n</tool_call>"
    expected = {"city": "Paris", "days": 3}
    whole = toolgrammar.parse(family, text, WEATHER, undeclared_params="drop")
    assert json.loads(whole.tool_calls[0].function.arguments) == expected
    parser = toolgrammar.StreamParser(family, tools=WEATHER, undeclared_params="drop")
    streamed = ""
    for char in text:
        for delta in parser.feed(char):
            for call in delta.to_dict().get("tool_calls") or []:
                streamed += call.get("function", {}).get("arguments") or ""
    for delta in parser.finish("stop"):
        for call in delta.to_dict().get("tool_calls") or []:
            streamed += call.get("function", {}).get("arguments") or ""
    assert json.loads(streamed) == expected


# values that hold the markers' first character `<` where no marker begins, where one may
# still begin at the end of a piece, and whole markers after it; read with and without the
# value shortcuts (`_value_marks`, `XmlParamsReader.read`), by items whose value rules
# (strip, trim_newline, entities, CDATA sections) hold tails of their own
VALUE_ITEMS = {
    "plain": ITEM,
    "trim_newline": XmlParams(**GLM, trim_newline=True),  # type: ignore[arg-type]
    "strip": XmlParams(**GLM, strip=True),  # type: ignore[arg-type]
    "xml_unescape": XmlParams(**GLM, xml_unescape=True),  # type: ignore[arg-type]
    "cdata": XmlParams(**GLM, cdata=True, xml_unescape=True),  # type: ignore[arg-type]
}
VALUES = [
    "a<b <c> x<<y </arg_valu </arg_ <arg_ke <",
    "if a < b and c <d:\n    print('<going>')\n",
    "<<<<</arg_value",
    "x &amp; <y &lt; </arg_value_",
    "  padded <  \n",
    "<",
    "</tool_call",
    "a <![CDATA[ x </arg_value> ]]> b <![CDA",
    "<![CDATA[<",
]


@pytest.mark.parametrize("case", sorted(VALUE_ITEMS))
def test_a_value_holding_the_markers_first_character_reads_as_the_state_machine_reads_it(
    case: str,
) -> None:
    item = VALUE_ITEMS[case]
    stops = ("</tool_call>", "<tool_call>")
    for value in VALUES:
        for after in ("</arg_value>", "</tool_call>", "<arg_key>b</arg_key><arg_value>2", ""):
            text = f"<arg_key>a</arg_key><arg_value>{value}{after}"
            for size, typed in itertools.product((0, 1, 2, 3, 5, 7, 11, 16), (False, True)):
                with shortcuts_set(True):
                    fast = _read(stops, text, size, item, typed)
                with shortcuts_set(False):
                    slow = _read(stops, text, size, item, typed)
                assert fast == slow, (case, text, size, typed)
