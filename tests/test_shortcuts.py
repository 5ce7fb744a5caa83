"""The whole-input shortcuts (`runtime/shortcuts.py`) read exactly as the state machines they
stand in for: the whole corpus streams to the same deltas with every shortcut on and off, in
several chunkings, and so do random outputs made of each shortcut dialect's own markup. An
item that sets a field its shortcut does not know is read without the shortcut."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import CORPUS, Case, all_cases, load
from toolgrammar.check.invariants import run, split_at
from toolgrammar.runtime import json_args, python_calls, scan_meter, shortcuts, tables, xml_params
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.dialects import DIALECTS
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import KeyValueArgs, Lit, XmlParams

CASES = all_cases()
BY_FAMILY: dict[str, list[Case]] = collections.defaultdict(list)
for _case in CASES:
    BY_FAMILY[_case.family].append(_case)
XML_KNOWS = DIALECTS[XmlParams].shortcut_knows or frozenset()
CHUNKS = (0, 1, 5, 23)  # 0: the whole output in one feed


@contextmanager
def shortcuts_off() -> Iterator[None]:
    """Every shortcut off inside the block (the tables made meanwhile are forgotten)."""
    was = shortcuts.ON
    shortcuts.switch(False)
    try:
        yield
    finally:
        shortcuts.switch(was)


def readings(case: Case, text: str | None = None) -> list[Any]:
    """The deltas of `text` (default: the case's output) streamed in each of CHUNKS, and
    its message parsed whole."""
    text = case.text if text is None else text
    found: list[Any] = []
    for size in CHUNKS:
        parser = toolgrammar.StreamParser(case.family, case.tools, ids="sequential", **case.options)
        pieces = [text] if size == 0 else [text[i : i + size] for i in range(0, len(text), size)]
        deltas = [delta for piece in pieces for delta in parser.feed(piece)]
        deltas += parser.finish(case.finish)
        found.append([delta.to_dict() for delta in deltas])
    message = toolgrammar.parse(
        case.family, text, case.tools, case.finish, ids="sequential", **case.options
    )
    found.append(message.to_dict())
    return found


@pytest.mark.parametrize("family", sorted(BY_FAMILY))
def test_the_corpus_reads_the_same_with_shortcuts_off(family: str) -> None:
    cases = BY_FAMILY[family]
    fast = [readings(case) for case in cases]
    with shortcuts_off():
        slow = [readings(case) for case in cases]
    for case, on, off in zip(cases, fast, slow):
        assert on == off, f"{case.id} ({case.family}.txt:{case.line}) reads differently"


def test_the_switch_turns_the_shortcuts_off() -> None:
    """With shortcuts off, no run of literals is compiled and no reader tries a shortcut
    (else the test above would compare the shortcuts with themselves)."""
    spec = get_spec("deepseek_v3")
    assert any(run is not None for run in tables.compiled(spec).runs[0])
    with shortcuts_off():
        assert all(run is None for run in tables.compiled(spec).runs[0])
        assert not shortcuts.takes(XmlParams("<p=", ">", "</p>"), XML_KNOWS)
    assert shortcuts.takes(XmlParams("<p=", ">", "</p>"), XML_KNOWS)


def test_the_environment_turns_the_shortcuts_off() -> None:
    code = "from toolgrammar.runtime import shortcuts; print(shortcuts.ON)"
    for value, expected in (("1", "False"), ("", "True"), ("0", "True")):
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"TOOLGRAMMAR_NO_SHORTCUTS": value, "PATH": ""},
            check=True,
        )
        assert done.stdout.strip() == expected


def test_every_row_lists_fields_of_its_item() -> None:
    """What a row says its shortcut knows are fields of its spec class (a misspelt one would
    make the shortcut decline, or take, what it should not)."""
    with_shortcuts = 0
    for row in DIALECTS.values():
        if row.shortcut_knows is None:
            continue
        with_shortcuts += 1
        names = {field.name for field in fields(row.item_class)}
        assert row.shortcut_knows <= names - {"line"}, row.word
    assert with_shortcuts >= 5


@dataclass(frozen=True, slots=True)
class _XmlParamsWithKnob(XmlParams):
    """An `xml_params` item with a field no shortcut was taught (a new knob)."""

    new_knob: str = ""


@dataclass(frozen=True, slots=True)
class _JsonArgsWithKnob(json_args.JsonArgs):
    new_knob: bool = False


def test_an_unknown_knob_away_from_its_default_takes_the_slow_path() -> None:
    plain = _XmlParamsWithKnob("<p=", ">", "</p>")
    assert shortcuts.takes(plain, XML_KNOWS)  # at its default: the shortcut still reads it
    set_away = _XmlParamsWithKnob("<p=", ">", "</p>", new_knob="x")
    assert not shortcuts.takes(set_away, XML_KNOWS)
    assert shortcuts.unknown_fields(set_away, XML_KNOWS) == ["new_knob"]

    # a reader decides so when it is made: the JSON arguments one never tries `_whole`
    slow = json_args.JsonArgsReader(_JsonArgsWithKnob(new_knob=True), (), _Sink())  # type: ignore[arg-type]
    fast = json_args.JsonArgsReader(_JsonArgsWithKnob(), (), _Sink())  # type: ignore[arg-type]
    assert slow._tried_whole and not fast._tried_whole


class _Sink:
    """A sink no reader here is fed text for (no policies: the readers' defaults)."""

    policies = None

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


# -- random outputs of each shortcut dialect's own markup, in every family that has it


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


def _same_as_the_state_machine(family: str, case: Case, text: str) -> None:
    """Whole (shortcuts on) == whole with shortcuts off == one character at a time."""
    whole = toolgrammar.parse(family, text, case.tools, ids="sequential", **case.options)
    _, streamed = run(family, split_at(text, list(range(1, len(text)))), case.tools, case.options)
    with shortcuts_off():
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


# dialect: its outputs, the corpus case whose tools and options they run with, and how
# many examples per family
RANDOM = {
    "xml_params": (xml_outputs, _xml_case, 60),
    "keyvalue_args": (keyvalue_outputs, _keyvalue_case, 150),
}


@pytest.mark.parametrize(
    "dialect, family",
    [("xml_params", family) for family in XML_FAMILIES]
    + [("keyvalue_args", family) for family in KEYVALUE_FAMILIES],
)
def test_whole_arguments_read_as_the_state_machine_reads_them(dialect: str, family: str) -> None:
    outputs, case_of, examples = RANDOM[dialect]
    case = case_of(family)

    @settings(max_examples=examples, deadline=None)
    @given(outputs(family))
    def check(text: str) -> None:
        _same_as_the_state_machine(family, case, text)

    check()


PIECES = st.sampled_from(
    [
        "a", "é", "x y", "<", "\\n", "\\t", "\\\\", "\\'", '\\"', "\\0", "\\a", "\\v", "\\\n",
        "\\x41", "\\u00e9", "\\U0001F600", "\\ud83d", "\\101", "\\N{BULLET}", "\\q", "\\",
        '"', "'", "\n", "\x01", "<|tool_call_end|>", "<|tool_call_start|>", "]", ")",
    ]
)  # fmt: skip


@st.composite
def python_outputs(draw: st.DrawFn) -> str:
    quote = draw(st.sampled_from(["'", '"', "'''"]))
    body = "".join(draw(st.lists(PIECES, max_size=12)))
    closed = draw(st.booleans())
    tail = draw(st.sampled_from(["", ", n=3", ")"]))
    return (
        "<|tool_call_start|>[f(s="
        + quote
        + body
        + (quote + tail + ")]<|tool_call_end|>" if closed else "")
    )


@settings(max_examples=400, deadline=None)
@given(python_outputs())
def test_a_whole_python_string_reads_as_the_character_loop_reads_it(text: str) -> None:
    _same_as_the_state_machine("lfm2", Case("lfm2", "random", text, {}, tools=None), text)


ARGUMENT_PIECES = st.sampled_from(
    [
        "city", "days", "ratio", "tags", "label", "arguments", "input", "x", "=", "==", " = ",
        ", ", ",", ",,", " ", "\n", "\t", "\r", "\u00a0", "'Paris'", '"Paris"', "'a\\nb'",
        "'it\\'s'", "'q'x'", "''", "'''t'''", "3", "-0.5", " 3 ", "True", "None", "07", "1_0",
        "[1, 'a']", "{'max': 2}", "f'x'", "'", '"', "\\", ")", "]", "}", "(", "[", "x(", "é",
        "<|tool_call_end|>", "<|tool_call_start|>", "<|tool_call", "k" * 257,
    ]
)  # fmt: skip


@st.composite
def keyword_outputs(draw: st.DrawFn) -> str:
    """Calls of mostly well-formed keyword arguments (typed by the corpus tools, one of
    them a wrapper key), with stray pieces between and inside them."""
    name = draw(st.sampled_from(["get_weather", "configure", "write_file", "f"]))
    parts = ["<|tool_call_start|>[", name, "("]
    for _ in range(draw(st.integers(0, 4))):
        key = draw(st.sampled_from(["city", "days", "ratio", "tags", "label", "arguments", "k"]))
        equals = draw(st.sampled_from(["=", "=", "==", " = ", "=\n", "\t=", "\r="]))
        value = draw(
            st.sampled_from(
                ["'Paris'", '"a\\tb"', "'3'", "3", " -0.5 ", "True", "'x'y'", "f(1)", "a\\b", "[1]",
                 "{'a': 1}", "x:y", "7\\", "'a\\x41'", "'''t'''", "''", "'a\\'", "\u00a03", "٣"]
            )
        )  # fmt: skip
        parts += [", " if len(parts) > 3 else "", key, equals, value]
        parts += draw(st.lists(ARGUMENT_PIECES, max_size=2))
    ends = [")]<|tool_call_end|>", ")", ", g(a=1)]", ", g (a=1)", ",\ng\t(a=1)", "x(a=1)"]
    ends += [", g\n(a=1)", ",, get_weather(days='3')", ", g.h-i(a=1)]", ", 1(a=1)", "]"]
    parts += draw(st.lists(st.sampled_from(ends), max_size=3))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(keyword_outputs())
def test_whole_keyword_arguments_read_as_the_loop_reads_them(text: str) -> None:
    """The same deltas in every chunking, and the same message, with shortcuts on and off."""
    case = Case("lfm2", "random", text, {}, tools=load(CORPUS / "lfm2.txt")[0].tools)
    fast = readings(case)
    with shortcuts_off():
        slow = readings(case)
    assert fast == slow


@pytest.mark.parametrize(
    "calls",
    [
        "f(a=1), 1(b=2)", "f(a=1), g\n(b=2)", "f(a=1),, g\t(b='x')", "f(a=1) , g.h-i(b=2)",
        "f(a=1), g" + " " * 256 + "(b=2)", "f(a=1), g" + " " * 257 + "(b=2)",
        "f(a=1), " + "g" * 256 + "(b=2)", "f(a=1), " + "g" * 257 + "(b=2)",
        "f(a=1), g(" + "k" * 256 + "='x')", "f(a=1), g(" + "k" * 257 + "='x')",
        "f(a=1)), g(b=2)", "f(a=1), g(b=2)<|tool_call_end|>(c=3)", "f(a=1), (b=2)",
    ],
)  # fmt: skip
def test_call_boundaries_read_as_the_loop_reads_them(calls: str) -> None:
    """Where `_PARAM` ends one call and starts the next, the same deltas and message as
    the loop of the reader, names and spaces at and past their limits."""
    text = f"<|tool_call_start|>[{calls}]<|tool_call_end|>"
    case = Case("lfm2", "boundary", text, {}, tools=load(CORPUS / "lfm2.txt")[0].tools)
    fast = readings(case)
    with shortcuts_off():
        slow = readings(case)
    assert fast == slow


def test_a_bare_value_is_typed_by_each_calls_own_schema() -> None:
    """The JSON text `_params` keeps per bare value is kept with the schema it was typed
    by: the same text under another key's schema (or none) is typed anew; an empty one is
    no member."""
    text = (
        "<|tool_call_start|>[configure(ratio=٣, label=٣), f(ratio=٣), configure(ratio=٣), "
        "configure(ratio=2, level=2 , level= 2), configure(ratio= , level=2)]<|tool_call_end|>"
    )
    tools = load(CORPUS / "lfm2.txt")[0].tools
    message = toolgrammar.parse("lfm2", text, tools, ids="sequential")
    assert [call.function.arguments for call in message.tool_calls] == [
        '{"ratio": 3, "label": "٣"}',  # (a number read from the digit, as the schema asks)
        '{"ratio": "٣"}',
        '{"ratio": 3}',
        '{"ratio": 2, "level": 2, "level": 2}',
        '{"level": 2}',  # (a key with no value is left out)
    ]
    with shortcuts_off():
        assert toolgrammar.parse("lfm2", text, tools, ids="sequential") == message


def test_a_typed_key_after_a_bare_value_is_still_typed() -> None:
    """After a bare value, the call's other typed keys are still typed: `_params` kept the
    bare value's JSON text in the name of the call's typed keys, so a quoted value of a
    typed key after it went out as a string (`"b": "5"`, with shortcuts off `5`)."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                },
            },
        }
    ]
    text = '[f(a=3, b="5", c="xyz")]'
    message = toolgrammar.parse("pythonic", text, tools, ids="sequential")
    assert message.tool_calls[0].function.arguments == '{"a": 3, "b": 5, "c": "xyz"}'
    with shortcuts_off():
        assert toolgrammar.parse("pythonic", text, tools, ids="sequential") == message


class _CountedParams:
    """`python_calls._PARAM`, counting the keyword arguments it matched."""

    def __init__(self) -> None:
        self.pattern = python_calls._PARAM
        self.read: list[str] = []

    def match(self, text: str, pos: int, end: int):
        found = self.pattern.match(text, pos, end)
        if found is not None:  # a key, or a call's end (and the next call's name)
            self.read.append(found.group(1) or ")" + (found.group(7) or ""))
        return found


def test_the_keyword_arguments_of_a_whole_output_are_matched_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Strings, bare values and values left to the loop, each key matched once, typed by
    its own call's tool; each call's end and the next call's start, in one match."""
    counted = _CountedParams()
    monkeypatch.setattr(python_calls, "_PARAM", counted)
    text = (
        "<|tool_call_start|>[configure(label='a\\'b\\n', ratio='2.5', tags=['x'], "
        "enabled=True, mode=\"7\", nothing=None), get_weather(city='Paris', days=3), "
        "f(days='3'), get_weather(days='3'), f(days='3')]<|tool_call_end|>"
    )
    tools = load(CORPUS / "lfm2.txt")[0].tools
    message = toolgrammar.parse("lfm2", text, tools)
    assert [(call.function.name, call.function.arguments) for call in message.tool_calls] == [
        (
            "configure",
            '{"label": "a\'b\\n", "ratio": 2.5, "tags": ["x"], "enabled": true, "mode": "7", '
            '"nothing": null}',
        ),
        ("get_weather", '{"city": "Paris", "days": 3}'),
        ("f", '{"days": "3"}'),  # (no tool: the key of another tool's integer is text here)
        ("get_weather", '{"days": 3}'),
        ("f", '{"days": "3"}'),
    ]
    assert counted.read == [
        *["label", "ratio", "tags", "enabled", "mode", "nothing", ")get_weather", "city"],
        *["days", ")f", "days", ")get_weather", "days", ")f", "days", ")"],
    ]


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
    with scan_meter.counting():  # (tables made before, kept per setting, are forgotten)
        message = toolgrammar.parse("step3", text, tools, reasoning_open=False)
    assert message.tool_calls[0].function.arguments == (
        '{"city": "Paris", "city": "Paris", "city": "Paris"}'
    )
    assert [pattern.read for pattern in made] == [3]


SKIPPED = [" " * n for n in (0, 1, 255, 256, 257, 300)] + [
    " " * 255 + "\n",
    " " * 256 + "\n",
    " " * 255 + "\n ",  # (a newline passed without a search counts as skipped text)
    " " * 254 + "\n ",
    "\n" + " " * 255,
    "\n" + " " * 256,
]


@pytest.mark.parametrize("skipped", SKIPPED, ids=lambda text: repr(text[-3:]) + str(len(text)))
def test_whitespace_before_the_value_opener_is_skipped_as_far_as_the_loop_skips(
    skipped: str,
) -> None:
    """The state machine looks for VALUE_OPEN at most _MAX_KEY characters past KEY_END (a
    key with no value is no argument); the whole-parameter pattern once took any run of
    whitespace there, so 300 spaces read as a parameter whole and as none streamed. A
    newline before VALUE_OPEN is passed without a search when streamed
    (`_value_open_nl`), and counts as the search's skipped text does."""
    case, prefix = _case("spark25", "<arg_key>")
    text = prefix + "<arg_key>city</arg_key>" + skipped + "<arg_value>Paris</arg_value>"
    whole = toolgrammar.parse("spark25", text, case.tools, **case.options)
    arguments = '{"city": "Paris"}' if len(skipped) <= 256 else "{}"
    assert whole.tool_calls[0].function.arguments == arguments
    _same_as_the_state_machine("spark25", case, text)


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
    _same_as_the_state_machine(family, case, text)


def _texts(text: str) -> list[str]:
    """An output, its prefixes (every fifth character) and the output with whitespace
    sprinkled around its markup (whitespace between a call's items is what runs account
    for differently from content)."""
    prefixes = [text[:cut] for cut in range(0, len(text), 5)]
    sprinkled = [text.replace(a, b) for a, b in (("<", " \n<"), (">", ">\n "), ("}", "}\n"))]
    return [*prefixes, text, *sprinkled]


@pytest.mark.parametrize("family", sorted(BY_FAMILY))
def test_prefixes_and_spacings_of_the_corpus_read_the_same_with_shortcuts_off(
    family: str,
) -> None:
    """Every corpus output's prefixes and whitespace variants (the runs of a call's literals
    and whitespace read differently from content) parse the same with shortcuts off."""
    outputs = [(case, text) for case in BY_FAMILY[family] for text in _texts(case.text)]

    def parse_all() -> list:
        return [
            toolgrammar.parse(family, text, case.tools, ids="sequential", **case.options)
            for case, text in outputs
        ]

    fast = parse_all()
    with shortcuts_off():
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
