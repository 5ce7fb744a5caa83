"""The IR prints back as grammar text that parses to the same IR (pegen's __str__)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from toolgrammar.compiler import ir
from toolgrammar.compiler.frontend import parse_grammar
from toolgrammar.compiler.frontend import leading_comments, parse_grammar

from compiler_paths import FAMILIES, GRAMMARS


def parse_file(family: str) -> ir.Grammar:
    path = GRAMMARS / f"{family}.tg"
    return parse_grammar(path.read_text(encoding="utf-8"), f"grammars/{family}.tg")


@pytest.mark.parametrize("family", FAMILIES)
def test_print_back_round_trip(family: str) -> None:
    grammar = parse_file(family)
    printed = str(grammar)
    again = parse_grammar(printed, "printed.tg")
    assert again.shape() == grammar.shape()
    assert str(again) == printed  # printing is a fixed point
    assert again.doc and again.doc == grammar.doc


POSITIONS = """# a comment line
family qwen3_coder
call
    "<tool_call>"? ws
    "<function=" name(until=">") ">"
    xml_params(open="<parameter=", key_end=">", value_end="</parameter>",
               implicit_end=["<parameter=", "</function>"])
"""


def test_positions_are_kept_on_every_node() -> None:
    grammar = parse_grammar(POSITIONS, "x.tg")
    (call,) = grammar.of(ir.CallStmt)
    assert (call.line, call.column) == (3, 1)
    name = call.items[3]
    assert isinstance(name, ir.Element) and (name.line, name.column) == (5, 18)
    until = name.args[0]
    assert (until.line, until.column, until.value.line, until.value.column) == (5, 23, 5, 29)
    xml = call.items[5]
    implicit = xml.arg("implicit_end")
    assert isinstance(implicit, ir.StrList) and (implicit.line, implicit.column) == (7, 29)
    assert [(s.line, s.column) for s in implicit.items] == [(7, 30), (7, 45)]
    family = grammar.of(ir.FamilyStmt)[0]
    assert (family.name.line, family.name.column) == (2, 8)


def test_nodes_print_as_grammar_text() -> None:
    grammar = parse_file("kimi_k2")
    (call,) = grammar.of(ir.CallStmt)
    assert [str(i) for i in call.items[:3]] == [
        '"<|tool_call_begin|>"',
        "ws",
        r'name(until="<|tool_call_argument_begin|>", '
        r"pattern=/(?:functions\.)?(?P<name>[^:\s]+):\d+/, id=header)",
    ]
    assert str(grammar.of(ir.SectionStmt)[0]).startswith('section ["<|tool_calls_section_begin|>"')
    assert str(ir.Literal(text="<tool_call>", optional=True)) == '"<tool_call>"?'
    assert str(ir.Element(name="json_args")) == "json_args"


def test_element_with_empty_parentheses_is_the_bare_word() -> None:
    a = parse_grammar('family x call "<a>" json_args() "</a>"', "a.tg")
    b = parse_grammar('family x call "<a>" json_args "</a>"', "b.tg")
    assert a.shape() == b.shape()


def test_strings_and_regexes_print_back_exactly() -> None:
    text = (
        'family x call "<\\uFF5CDSML\\uFF5C" "\\t\\"q\\"\\\\" ws '
        'name(until=["\\n", ">"], pattern=/(?P<name>a\\/b)\\d/) json_args'
    )
    grammar = parse_grammar(text, "x.tg")
    (call,) = grammar.of(ir.CallStmt)
    assert call.items[0].text == "<｜DSML｜"
    assert call.items[1].text == '\t"q"\\'
    name = call.items[3]
    assert name.arg("pattern").pattern == r"(?P<name>a/b)\d"
    assert str(call.items[0]) == '"<｜DSML｜"'  # printable unicode stays readable
    assert str(call.items[1]) == r'"\t\"q\"\\"'
    assert str(name) == r'name(until=["\n", ">"], pattern=/(?P<name>a\/b)\d/)'
    assert parse_grammar(str(grammar), "y.tg").shape() == grammar.shape()


def test_leading_comment_block() -> None:
    text = "# First.\n#\n#   indented\n# last\nfamily x\n# not doc\n"
    assert leading_comments(text) == ("First.", "", "  indented", "last")
    assert leading_comments("\nfamily x # no doc\n") == ()


@settings(database=None)
@given(
    st.text(min_size=1, max_size=30).filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s))
)
def test_any_string_round_trips(text: str) -> None:
    literal = ir.quote(text)
    grammar = parse_grammar(f"call {literal}", "x.tg")
    assert grammar.of(ir.CallStmt)[0].items[0].text == text


@settings(database=None)
@given(st.text(alphabet="ab/\\()?<>:.", min_size=1, max_size=20))
def test_any_regex_body_round_trips(pattern: str) -> None:
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        pattern += "\\"  # a dangling backslash cannot be written as a token
    # In a REGEX token `\/` always means `/` (as in lark), so a parsed pattern never holds
    # the pair `\/`; for the regex engine the two spellings are the same anyway.
    pattern = ir.unescape_regex(pattern)
    printed = ir.regex_literal(pattern)
    grammar = parse_grammar(f'call "<a>" name(until=">", pattern={printed})', "x.tg")
    element = grammar.of(ir.CallStmt)[0].items[1]
    assert element.arg("pattern").pattern == pattern
