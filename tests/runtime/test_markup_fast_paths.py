"""The markup shortcuts read in one regex match what a state machine reads step by step:
a parameter (`xml_params`) or member (`keyvalue_args`) already whole in the text, and a
call's consecutive literals and whitespace (the engine's runs). Each must read exactly as
the step-by-step reading does, whole or one character at a time, whatever the markers,
whitespace, entities, separators and keys around them, in every family that has them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.check.invariants import run, split_at
from toolgrammar.runtime import tables, xml_params
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import KeyValueArgs, Lit, XmlParams

from corpus_format import CORPUS, load


def _families(dialect: type) -> list[str]:
    return sorted(
        path.stem
        for path in CORPUS.glob("*.txt")
        if any(isinstance(item, dialect) for item in get_spec(path.stem).call)
    )


XML_FAMILIES = _families(XmlParams)
KEYVALUE_FAMILIES = _families(KeyValueArgs)
WORDS = ["city", "days", "unit", "tags", "level", " city ", "x", "3", " 4 ", "true", "[1, 2]"]
TEXT = ["\n", " ", " \n ", "\t", "a<b", "&amp;", "&am", "&#x41;", "&lt;", "é", '"', "\\"]


def _markup(family: str, dialect: type) -> tuple:
    """The family's argument markup (grammar params at their defaults) and the call's
    literals after it."""
    call = with_params(get_spec(family)).call
    at = next(i for i, item in enumerate(call) if isinstance(item, dialect))
    after = [text for item in call[at + 1 :] if isinstance(item, Lit) for text in item.texts]
    return call[at], after


def _case(family: str, start: str, before: str = ""):
    """A corpus case with a call that has arguments: its text up to the first `start`
    (and back to the last `before` ahead of it, included)."""
    for case in load(CORPUS / f"{family}.txt"):
        at = case.text.find(start)
        if at > 0 and case.expect["tool_calls"]:
            if before:
                at = case.text.rfind(before, 0, at) + len(before)
            return case, case.text[:at]
    raise AssertionError(f"{family}: no corpus case with arguments")


def _same_as_the_state_machine(family: str, case, text: str, patched: str) -> None:
    """Whole (shortcut) == whole with the shortcut off == one character at a time."""
    whole = toolgrammar.parse(family, text, case.tools, ids="sequential", **case.options)
    _, streamed = run(family, split_at(text, list(range(1, len(text)))), case.tools, case.options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(patched, lambda *markup: None)
        slow = toolgrammar.parse(family, text, case.tools, ids="sequential", **case.options)
    assert whole == slow
    assert whole == streamed
    for call in whole.tool_calls:
        assert isinstance(json.loads(call.function.arguments), dict)


@st.composite
def xml_outputs(draw: st.DrawFn, family: str) -> str:
    params, after = _markup(family, XmlParams)
    _, prefix = _case(family, params.open)
    markup = [*params.opens, *params.key_ends, *params.value_ends, *params.implicit_end]
    if params.value_open:
        markup.append(params.value_open)
    if params.cdata:  # whole sections, and their markers alone
        markup += ["<![CDATA[a</x>]]>", xml_params.CDATA_OPEN, xml_params.CDATA_CLOSE]
    pieces = st.sampled_from(markup + after + WORDS + TEXT)
    # mostly well-formed parameters, with stray pieces between and inside them
    parts = [prefix]
    for _ in range(draw(st.integers(0, 4))):
        parts += draw(st.lists(pieces, max_size=2))
        parts += [
            draw(st.sampled_from(params.opens)),
            draw(st.sampled_from(WORDS)),
            draw(st.sampled_from(params.key_ends)),
        ]
        if params.value_open:
            parts += draw(st.sampled_from([[], ["\n"], [" "]])) + [params.value_open]
        parts += draw(st.lists(pieces, max_size=4))
        end = draw(st.sampled_from(params.value_ends))
        parts += draw(st.sampled_from([[end], [end, "\n"], []]))
    parts += draw(st.lists(st.sampled_from(after), max_size=len(after)))
    return "".join(parts)


@st.composite
def keyvalue_outputs(draw: st.DrawFn, family: str) -> str:
    args, after = _markup(family, KeyValueArgs)
    _, prefix = _case(family, args.string, before="{")
    delim = args.string
    separators = [",", ":", "}", ")", "]", "{", "[", " ", "\n", ", "]
    values = ["Paris", "3", " 4 ", "true", "a b", "x,y", "", "é", "<", "{a:1}", "[1,2]"]
    pieces = st.sampled_from([delim, *after, *separators, *values])
    # mostly well-formed members, with stray pieces between and inside them
    parts = [prefix]
    for _ in range(draw(st.integers(0, 4))):
        parts += [
            draw(st.sampled_from(WORDS[:6] + ["a-b", "k.v"])),
            draw(st.sampled_from([":", " : "])),
        ]
        if draw(st.booleans()):
            parts += [delim, draw(st.sampled_from(values))]
            parts += draw(st.lists(pieces, max_size=2)) + [delim]
        else:
            parts.append(draw(st.sampled_from(values)))
        parts += draw(st.lists(pieces, max_size=2))
        parts.append(draw(st.sampled_from([",", ", ", "}", ")", ""])))
    parts += draw(st.lists(st.sampled_from(after), max_size=len(after)))
    return "".join(parts)


def _xml_case(family: str):
    return _case(family, _markup(family, XmlParams)[0].open)[0]


def _keyvalue_case(family: str):
    return _case(family, _markup(family, KeyValueArgs)[0].string, before="{")[0]


# dialect: its outputs, the corpus case whose tools and options they run with, the shortcut
# (its pattern maker, switched off for the slow reading) and how many examples per family
SHORTCUTS = {
    "xml_params": (xml_outputs, _xml_case, "toolgrammar.runtime.xml_params._whole_param", 60),
    "keyvalue_args": (
        keyvalue_outputs,
        _keyvalue_case,
        "toolgrammar.runtime.keyvalue_args._whole_member",
        150,
    ),
}


@pytest.mark.parametrize(
    "dialect, family",
    [("xml_params", family) for family in XML_FAMILIES]
    + [("keyvalue_args", family) for family in KEYVALUE_FAMILIES],
)
def test_whole_arguments_read_as_the_state_machine_reads_them(dialect: str, family: str) -> None:
    outputs, case_of, shortcut, examples = SHORTCUTS[dialect]
    case = case_of(family)

    @settings(max_examples=examples, deadline=None)
    @given(outputs(family))
    def check(text: str) -> None:
        _same_as_the_state_machine(family, case, text, shortcut)

    check()


class _Counted:
    """A compiled pattern that counts the parameters it reads whole."""

    def __init__(self, pattern) -> None:
        self.pattern = pattern
        self.read = 0

    def match(self, text: str, pos: int):
        found = self.pattern.match(text, pos)
        self.read += found is not None
        return found


def test_the_fast_path_reads_the_loop_of_a_whole_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """The repeated-parameter call of seed 004, whole: every parameter by the regex."""
    made: list[_Counted] = []
    real = xml_params._whole_param

    def counted(*markup):
        made.append(_Counted(real(*markup)))
        return made[-1]

    monkeypatch.setattr(xml_params, "_whole_param", counted)
    body = '<steptml:parameter name="city">Paris</steptml:parameter>\n' * 3
    text = (
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        f'<steptml:invoke name="get_weather">\n{body}</steptml:invoke><｜tool_call_end｜>'
    )
    tools = load(CORPUS / "step3.txt")[0].tools
    message = toolgrammar.parse("step3", text, tools, reasoning_open=False)
    assert message.tool_calls[0].function.arguments == (
        '{"city": "Paris", "city": "Paris", "city": "Paris"}'
    )
    assert [pattern.read for pattern in made] == [3]


@pytest.mark.parametrize("family", KEYVALUE_FAMILIES)
def test_stray_commas_between_members_lose_nothing(family: str) -> None:
    """`{city:Paris,,,city:Paris,`: the whole parse used to stop reading at the stray
    commas (it took a skipped `,` for a key not yet all there) and lost the second member,
    which one character at a time kept."""
    args, _ = _markup(family, KeyValueArgs)
    case, prefix = _case(family, args.string, before="{")
    text = prefix + "city:Paris,,,city:Paris,"
    whole = toolgrammar.parse(family, text, case.tools, **case.options)
    assert whole.tool_calls[0].function.arguments == '{"city": "Paris", "city": "Paris"}'
    _same_as_the_state_machine(
        family, case, text, "toolgrammar.runtime.keyvalue_args._whole_member"
    )


def _texts(text: str) -> list[str]:
    """An output, its prefixes (every fifth character) and the output with whitespace
    sprinkled around its markup (whitespace between a call's items is what runs account
    for differently from content)."""
    prefixes = [text[:cut] for cut in range(0, len(text), 5)]
    sprinkled = [text.replace(a, b) for a, b in (("<", " \n<"), (">", ">\n "), ("}", "}\n"))]
    return [*prefixes, text, *sprinkled]


@pytest.mark.parametrize("family", sorted(path.stem for path in CORPUS.glob("*.txt")))
def test_runs_of_markup_read_as_the_call_loop_reads_them(family: str) -> None:
    """A call's consecutive literals and whitespace are read by one regex match (`_Run`);
    every corpus output, its prefixes and whitespace variants, must parse the same with
    that shortcut off."""
    outputs = [
        (case, text) for case in load(CORPUS / f"{family}.txt") for text in _texts(case.text)
    ]

    def parse_all() -> list:
        return [
            toolgrammar.parse(family, text, case.tools, ids="sequential", **case.options)
            for case, text in outputs
        ]

    fast = parse_all()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tables, "_COMPILED", {})
        patch.setattr(tables, "_BY_ID", {})
        patch.setattr(tables, "_runs", lambda call, openers: (None,) * len(call))
        slow = parse_all()
    assert fast == slow


def test_runs_cover_the_markup_between_a_calls_name_and_arguments() -> None:
    """deepseek_v3 writes `<｜tool▁call▁begin｜>` ws `function`? ws `<｜tool▁sep｜>` ws NAME
    ws "```json"? ws ARGS ws CLOSER: three runs, none crossing the name or the arguments."""
    call = get_spec("deepseek_v3").call
    runs = tables.compiled(get_spec("deepseek_v3")).runs[0]
    starts = {index: run.next for index, run in enumerate(runs) if run is not None}
    name = next(i for i, item in enumerate(call) if type(item).__name__ == "Name")
    assert starts[0] == name
    assert starts[name + 1] == name + 4  # ws "```json"? ws
    assert starts[len(call) - 2] == len(call)  # ws and the closer's three spellings


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
    assert xml_params.xml_unescape(text) == xml_params._ENTITY.sub(xml_params._entity, text)
