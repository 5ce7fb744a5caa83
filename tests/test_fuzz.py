"""`toolgrammar fuzz`: every grammar survives a bounded run, and a planted bug is caught,
shrunk and replayed from its seed."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

import toolgrammar
from support.corpus_format import TOOLS
from toolgrammar.check import invariants
from toolgrammar.cli import main
from toolgrammar.check.fuzz import (
    EXCEPTION,
    GENERATORS,
    HF,
    FuzzInput,
    crlf_closers,
    check_input,
    fuzz,
    grammars,
    make_input,
)
from toolgrammar.check.fast_paths import SHORTCUTS, WHOLE_ROUTE
from toolgrammar.check.invariants import shrink
from toolgrammar.runtime import shortcuts, whole_output

sys.path.insert(0, str(Path(__file__).parent / "check_fixtures"))
from broken_runtimes import MUTANTS  # noqa: E402

FAMILIES = grammars()
PLANTED = "\\u"  # the text a planted parser bug raises on: soup writes it often


@pytest.mark.parametrize("family", FAMILIES)
def test_every_grammar_survives_a_bounded_fuzz(family: str) -> None:
    # a CI bound (about 20 inputs a family, a few seconds for all); a deeper run:
    # `toolgrammar fuzz all --inputs 1000000` (docs/fuzzing.md)
    report = fuzz(family, inputs=20, seed=FAMILIES.index(family))
    assert report.total == 20
    assert report.ok, report.summary()


class _RaisingParser(toolgrammar.StreamParser):
    """A parser with a planted bug: it raises once the text fed so far holds PLANTED."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seen = ""

    def feed(self, text: str) -> list[Any]:
        self._seen += text
        if PLANTED in self._seen:
            raise RuntimeError("planted")
        return super().feed(text)


def test_a_planted_exception_is_caught_shrunk_and_replayed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(invariants, "StreamParser", _RaisingParser)
    report = fuzz("hermes", inputs=200, seed=1, shrink_seconds=5)
    assert report.exceptions >= 1 and not report.ok
    finding = next(f for f in report.findings if f.invariant == EXCEPTION)
    assert finding.text == PLANTED  # shrunk to the two characters that raise
    assert "RuntimeError: planted" in finding.detail
    assert f"toolgrammar fuzz hermes --seed {finding.seed} --inputs 1" in str(finding)
    replay = fuzz("hermes", inputs=1, seed=finding.seed, shrink_seconds=5)
    assert [(f.invariant, f.text) for f in replay.findings] == [(EXCEPTION, PLANTED)]


@pytest.mark.parametrize("mutant", ["closer_not_recognised_across_a_split"])
def test_a_broken_runtime_is_caught_with_a_short_reproduction(
    mutant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a scanner that never holds back a partial marker: streamed text differs from whole
    breaks, invariant = MUTANTS[mutant]
    with breaks(monkeypatch):
        report = fuzz("qwen3_coder", inputs=150, seed=1, shrink_seconds=5)
    monkeypatch.undo()
    assert report.violations >= 1, report.summary()
    finding = next(f for f in report.findings if f.invariant == invariant)
    assert len(finding.text) < 100 and finding.split, str(finding)
    assert "split    = " in str(finding) and "replay: toolgrammar fuzz qwen3_coder" in str(finding)
    assert fuzz("qwen3_coder", inputs=1, seed=finding.seed).ok  # whole again


@pytest.mark.parametrize("family", ["step3p5", "hermes", "qwen3_coder"])
def test_some_inputs_carry_a_catalogue_of_tools(family: str) -> None:
    # issue 28: a name still arriving was checked against every tool, per character; the
    # fuzzer gives some inputs hundreds to thousands of tools, the sample's among them
    items = [make_input(family, seed) for seed in range(300)]
    huge = [item for item in items if item.tools is not None and len(item.tools) >= 200]
    assert huge
    for item in huge[:3]:
        assert fuzz(family, inputs=1, seed=item.seed).ok


def test_same_seed_same_inputs() -> None:
    first = [make_input("kimi_k2", seed) for seed in range(30)]
    assert first == [make_input("kimi_k2", seed) for seed in range(30)]
    one, two = fuzz("kimi_k2", inputs=40, seed=9), fuzz("kimi_k2", inputs=40, seed=9)
    assert one.by_generator == two.by_generator and one.total == two.total == 40
    assert {item.generator for item in first} == set(GENERATORS)


def test_all_shares_the_inputs_between_the_grammars() -> None:
    """`all` is every grammar and `hf`, whose inputs are hostile response templates."""
    report = fuzz("all", inputs=2 * (len(FAMILIES) + 1), seed=3)
    assert set(report.inputs) == {*FAMILIES, HF}
    assert set(report.inputs.values()) == {2}


def test_a_budget_ends_the_run() -> None:
    started = time.monotonic()
    report = fuzz("hermes", budget=0.3, seed=4)
    assert report.total >= 1 and time.monotonic() - started < 10


def test_shrink_moves_the_cut_with_the_text() -> None:
    # a "nothing lost" finding compares the text before the cut with the whole output:
    # both sides shrink, and the cut follows what is removed before it
    def fails(text: str, cut: int) -> bool:
        return "ab" in text[:cut] and "z" in text[cut:]

    assert shrink(fails, "xxabyyy|yyzzz", 7, time.monotonic() + 5) == ("abz", 2)


# the fuzzer's findings, shrunk, after their fixes: each reads as the invariants say now
FIXED = [
    ("longcat", '<longcat_tool_call>{"name":"r","":""}}</longcat_tool_call>', "stop", {}, 42),
    ("muse", "to=e", "stop", {"reasoning_open": True}, 3),
    ("kimi_k2", '<|tool_call_section_begin|><|tool_call_begin|>u "', "stop", {}, 49),
    (
        "deepseek_v4",
        '<｜DSML｜invoke name="e"><｜DSML｜parameter><｜DSML｜invoke name=", h">',
        "stop",
        {"reasoning_open": False},
        63,
    ),
    ("mimo", "<function=e><parameter=><tool_call></parameter>", "length", {}, 42),
    ("mistral", "[TOOL_CALLS]a\u2028[TOOL_CALLS]u", "stop", {}, 25),
    ("pythonic", "[_(p==", "length", {}, 6),
    ("inkling", ">\r<|content_invoke_tool_json|>", "length", {"reasoning_open": False}, 30),
    (
        "kimi_k3",
        '<|open|>tools<|sep|><|open|>calll tool=""',
        "length",
        {"reasoning_open": False},
        39,
    ),
    (
        "minimax_m3",
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="0">]<]minimax[>[<p1>]<]minimax[>[<'
        + "i" * 257
        + ">]<]minimax[>[</p1>]<",
        "length",
        {"reasoning_open": False},
        999,
    ),
    # a `{` then a marker cut at the end: the marker is no call object's next character
    ("llama3_json", "{<|", "stop", {}, 3),
    ("llama3_json", "x { <|python_ta", "length", {}, 15),
    # a cut `\u` escape, then what no hex digit is: `int(…, 16)` had read ` 4e2` whole
    ("pythonic", "[w(h='\\u\x0b4e2", "length", {}, 14),
    ("olmo3", '<function_calls>e(h="\\u\u2029de0', "length", {}, 29),
    ("llama4_pythonic", "<|python_start|>[f(p='\\u\u3000028')]", "stop", {}, 31),
    # a call opener in a value followed by what its call cannot go on with, at the end
    ("qwen3_coder", "<function=w><parameter=><tool_call>n</", "length", {}, 36),
    ("minicpm_v", "<function=0><parameter=><tool_call>n</", "length", {}, 36),
    ("gemma4", '<|tool_call>call:w{:<|"|><|tool_call>t<|"', "length", {}, 38),
    (
        "functiongemma",
        "<start_function_call>call:w{:<escape><start_function_call>s<e",
        "length",
        {},
        59,
    ),
    (
        "step3",
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="r"><steptml:parameter name=""><｜tool_call_begin｜>t<｜tool_call_e',
        "length",
        {"reasoning_open": False},
        131,
    ),
    (
        "step3",
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="g"><steptml:parameter name=""><｜tool_call_begin｜>function<<e',
        "stop",
        {"reasoning_open": False},
        140,
    ),
    (
        "minicpm5",
        '<functionname="r"><paramname=""><functionname="' + "w" * 258 + "</",
        "length",
        {"reasoning_open": False},
        304,
    ),
    # a header pattern's next attribute begun at the end (`" d` of `" d="1"`), cut at length
    ("minicpm5", '<functionname="" d="1', "length", {"reasoning_open": False}, 18),
    # a header no text that begins with it fits (its name `>\n` holds `>`), cut at length:
    # shapes alone (spaces, a whole match) called the cut `…n="` no name and `…n="'` one
    ("minicpm5", '<functionname=">\n"\xa0n="\'', "length", {"compat": "sglang"}, 22),
    ("minicpm5", '<functionname="get_weather" d="1"', "length", {"compat": "sglang"}, 29),
    # a header's last word that may begin a marker, at length: `> >` then `:` (U+2029 was
    # the space); the header is unfinished whether or not the word grows into the marker
    ("functionary_v32", ">\u2029>:", "length", {}, 3),
    # a header of 253 characters and 6 of whitespace before its `{`: streamed, it was given
    # up past `max_len` + `until` before the `{` came; read whole, its stripped name fitted
    (
        "functionary_v32",
        "a" * 236 + "rspecial_function\r\r\n\r\r\n{",
        "stop",
        {"malformed_calls": "drop", "compat": "sglang"},
        260,
    ),
    ("mistral", "[TOOL_CALLS]get_weather\n[TOOL_CALLS]", "length", {}, 28),
    ("gigachat3", "function call<", "length", {}, 10),
    ("openai", "to=functions.t json<", "length", {}, 16),
    ("mistral", "[TOOL_CALLS]j[{", "stop", {}, 15),
    ("mistral", '[TOOL_CALLS]g [CALL_ID]"', "length", {}, 23),
    ("mistral", "[TOOL_CALLS]h : 8[]", "stop", {"reasoning_open": False}, 17),
    ("mistral", '[TOOL_CALLS]{"name":"r","":{"":""}},{', "stop", {}, 36),
    # an opener in reasoning met at the end of a delta: held, then the text after it says
    # its call gives it back (its pass, not only its guard), as the whole output's scan does
    ("nemotron_nano_v2", ":<TOOLCALL>k", "length", {}, 12),
    ("ernie45", "\x00<tool_call>s", "length", {"reasoning_open": True}, 13),
    # partial_calls="text" gives a call cut at length back as its markup, which the whole
    # output reads as a call: nothing is lost (docs/policies.md), the checker knows the policy
    (
        "glm45",
        "Hi\n<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
        "stop",
        {"partial_calls": "text", "reasoning_open": False},
        34,
    ),
    (
        "qwen3_coder",
        "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
        "stop",
        {"partial_calls": "text", "whitespace": "trim"},
        38,
    ),
    # a call opener held in reasoning that gives itself back: the whole output's pass (and a
    # call made there) read the newline after it with it, so `\n</think>` was not found
    # there, while a stream that held the opener read on right after it and found it
    ("ripple", "a<tool_call>\n</think>b", "stop", {"reasoning_open": True}, 22),
    ("ripple", "\n</thi\n<tool_call>\n<", "stop", {"reasoning_open": True}, 22),
    # every policy (issue 26): the fuzzer reads each input under a drawn compat value and
    # switches. An element prefix at the very end that may grow into the value's closer is
    # a marker cut short, not the key opener that says a call began (the default policy)
    (
        "minimax_m3",
        ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="write_file">\n]<]minimax[>[<content>'
        "write ]<]minimax[>[<invoke name= then the name]<]minimax[>[</content>\n]<]minimax[>[</invoke>"
        "\n]<]minimax[>[</tool_call>",
        "stop",
        {},
        147,
    ),
    # a call given back as text that the output ends in ends as content does: the start of
    # a marker at its end is markup cut short (gigachat3's malformed_calls="text" in
    # compat="sglang"; MiniMax-M3's partial_calls="text", inside the section)
    (
        "gigachat3",
        '<|function_call|>{"name": "get_weather", "arguments": {"city": "Rome", days: 2}} then '
        '<|function_call|>{"name": "get_weather", "arguments": {"city": "Oslo"}}',
        "stop",
        {"compat": "sglang"},
        87,
    ),
    (
        "minimax_m3",
        ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="write_file">\n]<]minimax[>[<content>'
        'see ]<]minimax[>[<invoke name="get_weather">\n]<]minimax[>[<city>Oslo]<]minimax[>[</city>'
        "\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
        "length",
        {"compat": "sglang"},
        108,
    ),
    # malformed_calls="text": cut before the arguments go wrong, the call is a partial one,
    # kept; the whole output gives it back (the checker knows that policy's effect)
    (
        "hermes",
        '<tool_call>\n{"name": "get_weather", "arguments": oops}</tool_call>',
        "stop",
        {"malformed_calls": "text"},
        36,
    ),
    # a call given back as text (`unknown_tools`, `partial_calls`, `malformed_calls` "text"),
    # cut at `length` in stray text after its name before the marker it awaits: the tail went
    # back as written, markers of the content (a reasoning opener, an ignored or end token, a
    # message header) and all; at a normal stop those are markup. Now the tail ends at the
    # first such marker, undecided (`Engine._undecided_from`), and the checker knows it
    (
        "trinity",
        '<tool_call>{"name":"r","":""}<think>',
        "stop",
        {
            "reasoning_open": True,
            "unknown_tools": "text",
            "partial_calls": "drop",
            "required_params": "check",
        },
        36,
    ),
    ("hermes", '<tool_call>{"name":"r","":""}zz<|im_end|>y', "stop", {"unknown_tools": "text"}, 41),
    (
        "muse",
        '<atem:invoke name="t"><|eom|>',
        "stop",
        {
            "compat": "sglang",
            "whitespace": "trim",
            "unknown_tools": "text",
            "malformed_calls": "text",
            "untyped_values": "json",
        },
        29,
    ),
    (
        "openai",
        "to=functions.2<|channel|>to=t<",
        "stop",
        {
            "partial_calls": "text",
            "text_after_calls": "drop",
            "required_params": "check",
            "section_text": "call",
        },
        30,
    ),
    (
        "openai",
        "to=functions.2<|channel|>to=|<|call|>",
        "stop",
        {
            "partial_calls": "text",
            "text_after_calls": "drop",
            "required_params": "check",
            "section_text": "call",
        },
        29,
    ),
    # partial_calls="text" with prose a `skip(keep=true)` read: the list cut in its first call
    # goes back from its opener, the prose inside it as written; the keep reading has the
    # prose as content before the call (the checker wanted that content first)
    (
        "mistral",
        '[TOOL_CALLS]u[{"name":"get_weather",""]',
        "stop",
        {"unknown_tools": "text", "partial_calls": "text"},
        38,
    ),
    # a Python `\U` escape of a high surrogate, then `\U` with no digits: int("", 16) raised
    ("llama4_pythonic", "[e(z='\\U0000d83d\\U", "stop", {"malformed_calls": "text"}, 19),
    # required_params="check" in a list of calls: a held call settled as dropped when the
    # next name is read left the next call marked dropped, its arguments not kept (`""`)
    (
        "phi4_mini_json",
        'functools[{"name":"get_weather","":{"":"","":3}},{"name":"w"',
        "length",
        {"required_params": "check", "malformed_calls": "text", "whitespace": "trim"},
        60,
    ),
    (
        "cohere_command3",
        '<|START_ACTION|>[{"":{"":""},"tool_name":"get_weather","":""},{"tool_name":"e","":{"":""}},'
        '{"":2,"tool_name":"_"',
        "stop",
        {
            "compat": "llama.cpp",
            "partial_calls": "drop",
            "malformed_calls": "text",
            "required_params": "check",
        },
        120,
    ),
    # a section opener written again before the section's first call goes back with that
    # call when it is given back as text (MiniMax-M3 under compat=sglang, 5cdd413), and the
    # whitespace between the two once: with verbatim whitespace it was given back twice
    # (MiniMax-M2, DeepSeek-V4's tolerated opener, partial_calls="text")
    (
        "minimax_m3",
        ']<]minimax[>[<tool_call>\n]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="get_weather">'
        "]<]minimax[>[</invoke>",
        "length",
        {"compat": "sglang"},
        108,
    ),
    (
        "minimax_m2",
        '<minimax:tool_call>\n<minimax:tool_call><invoke name="r"></invoke>',
        "length",
        {"compat": "llama.cpp", "partial_calls": "text", "required_params": "check"},
        63,
    ),
    (
        "deepseek_v4",
        '<｜DSML｜toolcalls>\n<｜DSML｜toolcalls><｜DSML｜invoke name="r"></｜DSML｜invoke>',
        "stop",
        {"reasoning_open": False, "compat": "llama.cpp", "partial_calls": "text"},
        58,
    ),
    # a call given back as text that the output ends in, in content after calls: a section
    # closer cut short at its end is markup there, as the whole closer after calls is
    (
        "minimax_m2",
        '<invoke name="n"></minimax:tool_call>',
        "stop",
        {"unknown_tools": "text", "reasoning_open": False, "compat": "sglang"},
        34,
    ),
    # a marker found in a call's arguments that the output ends inside a longer one of
    # (`</a` of the value's `</arg>`, where the call's closer is `</`): that longer marker
    # cut short, markup, as outside a call; read as the closer then `a` as content, the call
    # was still cut (partial_calls="text" gave all of it back, content the whole output
    # does not start with). A response template with hostile edits (family `hf`)
    (
        "hf",
        '<invoke name="get_weather_2"><arg name=""></a<',
        "stop",
        {
            "response_template": {
                "start_anchor": "<start_of_turn>model\n",
                "fields": {
                    "thinking": {"open": "<reasoning>", "close": "</reasoning>"},
                    "tool_calls": {
                        "open_pattern": r"<invoke name=\"(?P<name>[^\"]+)\">",
                        "close": "</",
                        "content": "xml-inline",
                        "content_args": {
                            "tag_pattern": r"<arg name=\"(?P<key>[^\"]+)\">\n(?P<value>.*?)\n</arg>"
                        },
                        "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
                    },
                },
            },
            "compat": "sglang",
            "unknown_tools": "drop",
            "partial_calls": "text",
            "malformed_calls": "text",
        },
        45,
    ),
    # an opener held in reasoning with more whitespace after it than its pattern's window:
    # the whole output's pass read past the window (kept at length), the stream did not
    (
        "cohere_command3",
        "a<|START_ACTION|>" + " " * 70 + "x",
        "length",
        {"reasoning_open": True},
        88,
    ),
    # the fast-path check's first finding (seed 3131): an array element that is no object
    # (`k` where its `{` belongs) was read by the whole-output route as a call, whose members
    # `whole_members` reads from after the `{` it takes to be there; the engine: content
    (
        "firefunction_v2",
        'functools[k"name":".","arguments":{"":[""],"":null,"":true}}]',
        "stop",
        {"reasoning_open": False},
        61,
    ),
]


def test_nothing_lost_under_partial_calls_text_allows_only_the_cut_call_given_back() -> None:
    # partial_calls="text" gives the call cut at `length` back as its markup; the check lets
    # that through and nothing else: content lost before it, markup that is not the text's
    # end, or the call given back when the default reading has it not, are still findings
    text = (
        "Hi\n<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    )
    options = {"reasoning_open": False}
    final = toolgrammar.parse("glm45", text, None, **options)
    prefix = text[:34]
    cut = toolgrammar.parse("glm45", prefix, None, "length", partial_calls="text", **options)
    kept = toolgrammar.parse("glm45", prefix, None, "length", **options)
    openers = ("<tool_call>",)
    assert cut.content == prefix and kept.tool_calls and not cut.tool_calls
    assert invariants._given_back(prefix, cut, kept, final, "x", openers) is None
    for content in ("\n<tool_call>get_weather<arg_key>", "Hi\n<tool_call>get_weather<arg_"):
        wrong = cut.model_copy(update={"content": content})
        assert invariants._given_back(prefix, wrong, kept, final, "x", openers)
    no_call = kept.model_copy(update={"tool_calls": []})
    assert invariants._given_back(prefix, cut, no_call, final, "x", openers)
    assert (
        invariants.check_text(
            "glm45", text, None, {"partial_calls": "text", **options}, cuts=[34], lost=True
        )
        == []
    )


def test_nothing_lost_under_malformed_calls_allows_only_the_cut_call_dropped() -> None:
    # malformed_calls="drop"/"text": the cut (before the arguments go wrong) has the call the
    # whole output drops; the check lets that through and nothing else
    text = '<tool_call>\n{"name": "get_weather", "arguments": oops}</tool_call>'
    options = {"malformed_calls": "drop"}
    cut = toolgrammar.parse("hermes", text[:36], None, "length", **options)
    final = toolgrammar.parse("hermes", text, None, **options)
    keep = toolgrammar.parse("hermes", text, None)
    assert cut.tool_calls and not final.tool_calls and keep.tool_calls
    problem = invariants._lost(cut, final)
    assert (
        problem
        and invariants._dropped_as_malformed(cut, final, keep, invariants._lost, problem) is None
    )
    # content lost, or no call the 'keep' reading has and this one lacks: still findings
    wrong = cut.model_copy(update={"content": "Lost text."})
    assert invariants._dropped_as_malformed(wrong, final, keep, invariants._lost, "x")
    assert invariants._dropped_as_malformed(cut, final, final, invariants._lost, "x")
    assert invariants.check_text("hermes", text, None, options, cuts=[36], lost=True) == []


def test_inputs_draw_every_compat_value_and_every_value_of_every_switch() -> None:
    from toolgrammar.runtime.policies import COMPAT, SWITCHES

    items = [make_input("hermes", seed) for seed in range(400)]
    assert {item.options.get("compat") for item in items} == {None, *COMPAT}
    for name, values in SWITCHES.items():
        assert {item.options[name] for item in items if name in item.options} == set(values)
    # a corpus case's own policies stay; the text is drawn as before, apart from them
    report = fuzz("hermes", inputs=60, seed=3)
    assert sum(report.by_policy.values()) == 60 and len(report.by_policy) > 4


def test_a_finding_says_the_policies_it_was_read_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(invariants, "StreamParser", _RaisingParser)
    report = fuzz("hermes", inputs=200, seed=1, shrink_seconds=2)
    finding = next(f for f in report.findings if f.invariant == EXCEPTION)
    assert finding.policies and f"policies = {finding.policies}" in str(finding)
    assert "policies: " in report.summary()


@pytest.mark.parametrize("family, text, finish, options, cut", FIXED, ids=[f[0] for f in FIXED])
def test_fixed_findings_stay_fixed(
    family: str, text: str, finish: str, options: dict[str, Any], cut: int
) -> None:
    for seed in (1, 2):  # 1: streamed one character at a time, 2: in random chunks
        cut = min(cut, len(text))
        item = FuzzInput(family, text, None, options, finish, "soup", seed, cut)
        for tools in (None, TOOLS):
            item.tools = tools
            assert check_input(item, text, cut) is None


def test_jobs_split_the_families_and_check_the_same_inputs() -> None:
    """`jobs` processes draw what one process draws: each family the same number of inputs
    (the first `inputs % families` one more) from its own stream of the seed."""
    names = ["hermes", "mistral", "qwen3_coder", "pythonic", "kimi_k2"]
    one = fuzz(names, inputs=23, seed=4)
    split = fuzz(names, inputs=23, seed=4, jobs=2)
    assert split.inputs == one.inputs == {n: 5 if k < 3 else 4 for k, n in enumerate(names)}
    assert split.by_generator == one.by_generator
    assert (split.exceptions, split.violations) == (one.exceptions, one.violations) == (0, 0)


def test_cli_fuzz(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "hermes", "--inputs", "5", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "fuzz: 5 inputs over 1 families" in out and "exceptions 0, violations 0" in out
    assert main(["fuzz", "no_such_family"]) == 2
    assert "unknown family" in capsys.readouterr().err
    assert main(["fuzz", "hermes", "--inputs", "0"]) == 2
    assert main(["fuzz", "hermes", "--jobs", "0"]) == 2


def test_hostile_templates_are_refused_in_one_line_or_read_with_every_invariant() -> None:
    """Family `hf`: each input's template has hostile edits (one-character and whitespace
    markers, openers that begin JSON, backtracking name and key groups, a marker inside
    another, CRLF); the compiler refuses it cleanly or its parser keeps the invariants."""
    report = fuzz(HF, inputs=120, seed=5)
    assert report.total == 120 and report.ok, report.summary()
    assert 0 < report.refused < 120  # both paths taken
    assert main(["fuzz", "hf", "--inputs", "3", "--seed", "1"]) == 0


def test_a_refusal_that_is_not_one_clean_line_is_a_finding(monkeypatch) -> None:
    """What the template fuzzer catches: a refusal other than a one-line
    `ResponseTemplateError` (here every refusal, made to look unclean) is an exception."""
    from toolgrammar.check import fuzz as fuzz_module

    monkeypatch.setattr(fuzz_module, "clean_refusal", lambda error: False)
    report = fuzz(HF, inputs=20, seed=5, shrink_seconds=2)
    assert report.exceptions > 0 and not report.ok
    assert "ResponseTemplateError" in report.findings[0].detail


def test_crlf_closers_write_every_line_end_around_and_in_closers() -> None:
    """The `crlf` generator: CRLF, a lone CR and mixed line ends before and after markers,
    and closers drifted to a line end in each (`</parameter\r\n`, issue 28's leak)."""
    import random

    literals = sorted({"</parameter>", "</parameter\n", "<parameter=", "</function>"})
    text = "<function=f><parameter=a>\nc\n</parameter>\n</function>"
    outs = [crlf_closers(text, literals, random.Random(seed)) for seed in range(200)]
    for wanted in ("</parameter\r\n", "</parameter\r", "\r\n</parameter>", "</parameter>\r"):
        assert any(wanted in out for out in outs), wanted
    assert fuzz("qwen3_coder", inputs=30, seed=6).by_generator["crlf"] > 0


class _ShortcutBug(toolgrammar.StreamParser):
    """A planted fast-path bug: with the shortcuts on, every `e` of content streams as `E`.
    Every reading with them on agrees with every other, so no invariant sees it."""

    def feed(self, text: str) -> list[Any]:
        deltas = super().feed(text)
        if shortcuts.ON:
            for delta in deltas:
                if delta.content:
                    delta.content = delta.content.replace("e", "E")
        return deltas


def test_a_shortcut_that_disagrees_with_its_state_machine_is_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(invariants, "StreamParser", _ShortcutBug)
    report = fuzz("hermes", inputs=60, seed=2, shrink_seconds=5)
    assert report.violations >= 1, report.summary()
    finding = next(f for f in report.findings if f.invariant == SHORTCUTS)
    assert finding.text == "e", str(finding)  # shrunk to the one character read otherwise
    assert "shortcuts on and off disagree" in finding.detail
    monkeypatch.undo()
    assert fuzz("hermes", inputs=1, seed=finding.seed).ok


def test_a_whole_output_route_that_disagrees_with_the_engine_is_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    route = whole_output.whole

    def planted(engine: Any, text: str, reason: str) -> Any:
        content, reasoning, calls = route(engine, text, reason)
        if whole_output.ON:
            content = [piece.replace("e", "E") for piece in content]
        return content, reasoning, calls

    monkeypatch.setattr(whole_output, "whole", planted)
    report = fuzz("hermes", inputs=60, seed=2, shrink_seconds=5)
    finding = next(f for f in report.findings if f.invariant == WHOLE_ROUTE)
    assert finding.text == "e", str(finding)
    assert "by the whole-output route" in finding.detail


def test_the_fast_path_check_reads_each_input_with_both_settings() -> None:
    """Both settings are read (else the check would compare a setting with itself), and
    the switches are back where they were after it."""
    seen: set[tuple[bool, bool]] = set()

    class Spy(toolgrammar.StreamParser):
        def feed(self, text: str) -> list[Any]:
            seen.add((shortcuts.ON, whole_output.ON))
            return super().feed(text)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(invariants, "StreamParser", Spy)
        item = make_input("hermes", 1)
        assert check_input(item, item.text, item.cut) is None
    assert {on for on, _ in seen} == {True, False}
    assert shortcuts.ON and whole_output.ON
