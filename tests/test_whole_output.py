"""The whole-output route (`runtime/whole_output.py`) reads exactly as the engine: every corpus
case, under the policies it names and under each compat profile and whitespace switch, and
fuzzed outputs of every family (`toolgrammar fuzz`'s generators), parse to the same message
with the route on and off (content, reasoning, every call's id, name and argument bytes,
the finish reason). Outputs of many calls, which the route is for, are read in its
variants too: repeated, with text between the calls, with values typing must change.
"""

from __future__ import annotations

import collections
import copy
import random
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import CORPUS, TOOLS, Case, all_cases
from toolgrammar.check.fast_paths import route_set
from toolgrammar.check.fuzz import make_input
from toolgrammar.runtime import whole_output
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.policies import COMPAT
from toolgrammar.runtime import registry
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import Name, name_of, name_reader
from toolgrammar.runtime.render import RenderError, render_output
from toolgrammar.runtime.schemas import ToolSchemas

CASES = all_cases()
BY_FAMILY: dict[str, list[Case]] = collections.defaultdict(list)
for _case in CASES:
    BY_FAMILY[_case.family].append(_case)
FAMILIES = sorted(path.stem for path in CORPUS.glob("*.txt"))
FUZZ_INPUTS = 150  # per family, from the fuzzer's own seeds
# the families of the bench (bench/vs_sglang.py): their many-call outputs must be read by the
# route, not only agree with the engine (else the agreement would hold vacuously)
ROUTED = ("kimi_k2", "hermes", "deepseek_v3", "deepseek_v31", "mistral", "llama3_json")


route = route_set  # the whole-output route on or off for the block (the fuzzer's own switch)


def both_ways(
    family: str, text: str, tools: Any, finish: str, options: dict[str, Any]
) -> tuple[Any, Any]:
    """The message of `text` parsed with the route on, and with it off (the engine alone);
    an exception is a reading too (the same must come out both ways)."""
    found = []
    for on in (True, False):
        with route(on):
            try:
                message = toolgrammar.parse(
                    family, text, tools, finish, ids="sequential", **options
                )
                found.append(message.model_dump())
            except Exception as error:  # (bad input must not raise: test_bad_input says so)
                found.append(f"{type(error).__name__}: {error}")
    return found[0], found[1]


def variants(text: str) -> list[str]:
    """The text, and texts of more calls made from it: the route reads no call within a few
    markers of the end (`_Route.margin`), so a corpus case alone would rarely reach it."""
    return [
        text,
        text + text,
        text + "\n" + text + "\nand then\n" + text,
        text + " " + text + "\n\n",
        "Before. " + text + text + text + " After.",
    ]


def policy_options(case: Case) -> list[dict[str, Any]]:
    """The case's own options, then each compat profile and the other whitespace switch,
    where the case sets none of them (a case's own setting is what it is about)."""
    found = [dict(case.options)]
    if "compat" not in case.options:
        found += [{**case.options, "compat": stack} for stack in COMPAT]
    if "whitespace" not in case.options:
        found.append({**case.options, "whitespace": "trim"})
    if "unknown_tools" not in case.options:
        found.append({**case.options, "unknown_tools": "drop"})
    return found


@pytest.mark.parametrize("family", sorted(BY_FAMILY))
def test_the_corpus_reads_the_same_with_the_route_off(family: str) -> None:
    for case in BY_FAMILY[family]:
        for options in policy_options(case):
            for finish in {case.finish, "length"}:
                for text in variants(case.text):
                    fast, slow = both_ways(family, text, case.tools, finish, options)
                    assert fast == slow, (
                        f"{case.id} ({family}.txt:{case.line}) with {options}, finish "
                        f"{finish!r}, reads differently on the route: {text!r}"
                    )


@pytest.mark.parametrize("family", FAMILIES)
def test_fuzzed_outputs_read_the_same_with_the_route_off(family: str) -> None:
    for seed in range(FUZZ_INPUTS):
        item = make_input(family, seed)
        for text in (item.text, item.text + item.text):
            fast, slow = both_ways(family, text, item.tools, item.finish, item.options)
            assert fast == slow, (
                f"{family}: fuzz input {seed} ({item.generator}; replay: toolgrammar fuzz "
                f"{family} --seed {seed} --inputs 1) reads differently on the route: {text!r}"
            )


def many_calls(family: str, rng: random.Random, count: int) -> str | None:
    """An output of `count` calls of the corpus tools, in the family's markup, with now and
    then prose, whitespace or reasoning between them and values that typing changes."""
    spec = with_params(get_spec(family))
    pieces = []
    for _ in range(count):
        city = rng.choice(["Paris", "Zürich", 'a "quoted" <city>', "\\u00e9", "3"])
        args: dict[str, Any] = {"city": city}
        if rng.random() < 0.7:
            args["days"] = rng.choice([3, 0, -1, 10**30, 2.5])
        if rng.random() < 0.2:
            args["unit"] = rng.choice(["c", "f", "k"])
        name = rng.choice(["get_weather"] * 6 + ["not_a_tool", "configure"])
        try:
            pieces.append(render_output(spec, [(name, args)]))
        except RenderError:
            return None
    out = ""
    for piece in pieces:
        gap = rng.choice(["", "", "", "\n", " \n ", "\n\nok, next:\n"])
        out += gap + piece
    if rng.random() < 0.3:  # a value typing must change: an integer written as a string
        out = out.replace('"days": 3', '"days": "3"', 1)
    return out + rng.choice(["", "\n", " Done."])


@pytest.mark.parametrize("family", FAMILIES)
def test_outputs_of_many_calls_read_the_same_with_the_route_off(family: str) -> None:
    rng = random.Random(family)
    for round_ in range(12):
        text = many_calls(family, rng, rng.randint(2, 12))
        if text is None:
            break
        for options in ({}, {"compat": rng.choice(COMPAT)}, {"whitespace": "trim"}):
            for tools in (TOOLS, None):
                for finish in ("stop", "length"):
                    fast, slow = both_ways(family, text, tools, finish, options)
                    assert fast == slow, (
                        f"{family}: round {round_} with {options}, tools "
                        f"{'corpus' if tools else 'none'}, finish {finish!r}, reads "
                        f"differently on the route: {text!r}"
                    )


# (trinity and poolside_v1 `extends` another family: their items name their grammar file)
@pytest.mark.parametrize("family", ROUTED + ("trinity", "poolside_v1", "inkling"))
def test_the_route_reads_the_calls_of_the_bench_families(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Of an output of many whole calls, the engine reads only what ends near the end of the
    output: the route read the rest (so the tests above compared it, not the engine twice)."""
    spec = with_params(get_spec(family))
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 30)
    made = []
    real = Engine._run_call

    def counted(self: Engine, *args: Any) -> int:
        made.append(self._call)
        return real(self, *args)

    monkeypatch.setattr(Engine, "_run_call", counted)
    with route(False):
        slow = toolgrammar.parse(family, text, TOOLS, ids="sequential")
    assert len({id(call) for call in made}) >= 30
    made.clear()
    with route(True):
        fast = toolgrammar.parse(family, text, TOOLS, ids="sequential")
    assert fast == slow and len(fast.tool_calls) == 30
    assert len({id(call) for call in made}) <= 2


def test_a_traced_parse_and_the_switches_leave_the_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """The route is not taken with a trace (every step is the engine's, to be told), nor
    with `TOOLGRAMMAR_NO_WHOLE_ROUTE=1` or `TOOLGRAMMAR_NO_SHORTCUTS=1`."""
    text = render_output(get_spec("kimi_k2"), [("get_weather", {"city": "Paris"})] * 5)
    read: list[int] = []
    real = whole_output._Read.calls

    def counted(self: Any, *args: Any) -> int:
        read.append(1)
        return real(self, *args)

    monkeypatch.setattr(whole_output._Read, "calls", counted)
    plain = toolgrammar.parse("kimi_k2", text, TOOLS, ids="sequential")
    assert read
    read.clear()
    events: list[Any] = []
    traced = toolgrammar.parse("kimi_k2", text, TOOLS, ids="sequential", trace=events.append)
    assert traced == plain and events and not read
    for name, ask in (
        ("TOOLGRAMMAR_NO_WHOLE_ROUTE", "whole_output.ON"),
        ("TOOLGRAMMAR_NO_SHORTCUTS", "shortcuts.ON"),
    ):
        code = f"from toolgrammar.runtime import shortcuts, whole_output; print({ask})"
        for value, expected in (("1", "False"), ("", "True"), ("0", "True")):
            done = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                env={name: value, "PATH": ""},
                check=True,
            )
            assert done.stdout.strip() == expected, (name, value)


def _engine_calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The calls the engine's item loop reads from now on (one entry per step)."""
    made: list[Any] = []
    real = Engine._run_call

    def counted(self: Engine, *args: Any) -> int:
        made.append(self._call)
        return real(self, *args)

    monkeypatch.setattr(Engine, "_run_call", counted)
    return made


def _both_routes(
    monkeypatch: pytest.MonkeyPatch, family: str, text: str
) -> tuple[Any, Any, list[Any]]:
    """`parse` of `text` with the route (fast) and without (slow), and the calls the engine's
    item loop read in the routed parse."""
    made = _engine_calls(monkeypatch)
    with route(False):
        slow = toolgrammar.parse(family, text, TOOLS, ids="sequential")
    made.clear()
    with route(True):
        fast = toolgrammar.parse(family, text, TOOLS, ids="sequential")
    return fast, slow, made


@pytest.mark.parametrize("family", ROUTED + ("qwen3_coder", "minimax_m2", "seed_oss", "xlam"))
def test_a_single_call_ending_the_output_is_the_routes(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call at the very end of the output is read by the route where the engine ends the
    call at its last item (`_Shape.final`): a single-call output takes no engine call, and
    reads as the engine reads it, at `stop` and at `length`."""
    spec = with_params(get_spec(family))
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})])
    made = _engine_calls(monkeypatch)
    for finish in ("stop", "length"):
        with route(False):
            slow = toolgrammar.parse(family, text, TOOLS, finish, ids="sequential")
        assert made
        made.clear()
        with route(True):
            fast = toolgrammar.parse(family, text, TOOLS, finish, ids="sequential")
        assert fast == slow and len(fast.tool_calls) == 1
        assert not made, f"{family}: the engine read the last call"


@pytest.mark.parametrize(
    "family",
    # (deepseek_v4: `json_body`; deepseek_v32 `extends` it: its items name their grammar file)
    ("qwen3_coder", "minimax_m2", "seed_oss", "minicpm5", "deepseek_v4", "deepseek_v32"),
)
def test_xml_params_calls_are_read_one_match_per_parameter(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`xml_params` calls are read by the route's own reading of each parameter
    (`_Read._xml`), not by the dialect's reader, and read as the engine reads them."""
    spec = with_params(get_spec(family))
    calls = [("get_weather", {"city": "Paris", "days": 3})] * 10
    calls += [("get_weather", {"city": 'a "b" & <c>\n', "days": 4, "unit": "c"})] * 10
    text = render_output(spec, calls)
    read: list[int] = []
    real_xml, real_dialect = whole_output._Read._xml, whole_output._Read._dialect

    def xml(self: Any, *args: Any) -> Any:
        found = real_xml(self, *args)
        read.append(found is not None)
        return found

    def dialect(self: Any, *args: Any) -> Any:
        read.append(False)
        return real_dialect(self, *args)

    monkeypatch.setattr(whole_output._Read, "_xml", xml)
    monkeypatch.setattr(whole_output._Read, "_dialect", dialect)
    with route(False):
        slow = toolgrammar.parse(family, text, TOOLS, ids="sequential")
    with route(True):
        fast = toolgrammar.parse(family, text, TOOLS, ids="sequential")
    assert fast == slow and len(fast.tool_calls) == 20
    assert read.count(True) >= 19 and False not in read


@pytest.mark.parametrize("family", ROUTED)
def test_the_same_json_for_another_tool_is_read_again(family: str) -> None:
    """The route reuses what it read of a JSON text the call before held (`_Read.seen`) only
    for the same tool: the same arguments are sent as written to one tool and typed for
    another (`"3"` is an integer for get_weather, a string write_file does not declare)."""
    spec = with_params(get_spec(family))
    args = {"city": "Paris", "days": "3"}
    text = render_output(spec, [("write_file", args), ("get_weather", args)] * 6)
    fast, slow = both_ways(family, text, TOOLS, "stop", {})
    assert fast == slow
    assert '"days": 3' in str(fast) and '"days": "3"' in str(fast)


@pytest.mark.parametrize(
    "family, until",
    [
        ("qwen3_coder", ">"),
        ("kimi_k2", "<|tool_call_argument_begin|>"),
        ("deepseek_v31", "<｜tool▁sep｜>"),
    ],
)
def test_a_name_whose_end_is_past_the_readers_reach_is_the_engines(family: str, until: str) -> None:
    """The route reads a name up to its first end marker wherever that is, and leaves the
    call to the engine where the marker is past the reach of the name reader's search (a
    name padded with spaces strips to a name, but the reader never finds its end)."""
    spec = with_params(get_spec(family))
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 4)
    second = text.find(until, text.find(until) + 1)
    for pad in (10, 300, 600, 1200):
        padded = text[:second] + " " * pad + text[second:]
        fast, slow = both_ways(family, padded, TOOLS, "stop", {})
        assert fast == slow, (family, pad)


@pytest.mark.parametrize(
    "family, section",
    [("deepseek_v4", "<｜DSML｜tool_calls>\n"), ("deepseek_v32", "<｜DSML｜function_calls>\n")],
)
def test_a_json_body_among_parameter_calls_is_the_readers(family: str, section: str) -> None:
    """With `json_body`, a `{` before the first parameter opens the arguments as one JSON
    object: the route reads such a call by the dialect's reader, the calls of parameters
    around it one match per parameter, and all read as the engine reads them."""
    call = (
        '<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">'
        "Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
    )
    body = (
        '<｜DSML｜invoke name="get_weather">\n {"city": "Paris", "days": "3"}\n</｜DSML｜invoke>\n'
    )
    for text in (section + call + body + call * 3, section + (call + body) * 4 + "done"):
        fast, slow = both_ways(family, text, TOOLS, "stop", {})
        assert fast == slow
        assert fast["tool_calls"][1]["function"]["arguments"] == '{"city": "Paris", "days": 3}'


@pytest.mark.parametrize("family", ("kimi_k2", "deepseek_v31", "hermes"))
def test_plain_json_arguments_read_without_decoding_read_as_decoded(family: str) -> None:
    """Arguments of plain members are sent as written without decoding them
    (`whole_output._flat`) only where their value would be: not where a typed key is
    spelled with an escape (`"d\\u0061ys": "3"` is `days`, an integer), nor where the
    first key is a wrapper whose string writes an object (`input` unwraps `{'city': …}`)."""
    spec = with_params(get_spec(family))
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 4)
    plain = '{"city": "Paris", "days": 3}'
    for args, want in (
        ('{"d\\u0061ys": "3", "city": "Paris"}', '{"d\\u0061ys": 3, "city": "Paris"}'),
        ('{"city": "Paris", "d\\u0061ys": "3"}', '{"city": "Paris", "d\\u0061ys": 3}'),
        ("""{"input": "{'city': 'Paris'}"}""", '{"city": "Paris"}'),
        ('{"city": "Paris", "days": "3"}', '{"city": "Paris", "days": 3}'),
    ):
        fast, slow = both_ways(family, text.replace(plain, args), TOOLS, "stop", {})
        assert fast == slow
        assert [call["function"]["arguments"] for call in fast["tool_calls"]] == [want] * 4
    # a tool that types no key: only the first key's escape sends the wrapper to be read
    text = render_output(spec, [("write_file", {"path": "a", "content": "b"})] * 4)
    wrapped = """{"\\u0069nput": "{'path': 'a'}"}"""
    text = text.replace('{"path": "a", "content": "b"}', wrapped)
    fast, slow = both_ways(family, text, TOOLS, "stop", {})
    assert fast == slow
    assert [call["function"]["arguments"] for call in fast["tool_calls"]] == ['{"path": "a"}'] * 4


def test_the_plain_object_pattern_matches_only_what_the_decoder_reads() -> None:
    """What `whole_output._FLAT` matches, the strict decoder decodes to an object ending at
    the same place (random texts of JSON pieces, good and bad)."""
    from toolgrammar.runtime.json_stream import scan_value

    rng = random.Random(31)
    atoms = ['{', '}', '"a"', '"b\\n"', '"\\u00e9"', '"\\x"', ":", ",", " ", "\n", "1", "-0",
             "01", "1.5", "1e5", "1.", "-", "true", "false", "null", "NaN", "[1]", "{}",
             '"\x01"', '"\\ud83d"', "Infinity", '"k"', "1" * 4400]  # fmt: skip
    matched = 0
    for _ in range(30000):
        text = "{" + "".join(rng.choice(atoms) for _ in range(rng.randint(0, 10)))
        found = whole_output._FLAT.match(text, 0)
        if found is None:
            continue
        matched += 1
        value, end = scan_value(text, 0)
        assert type(value) is dict and end == found.end(), text
    assert matched > 500


def test_the_plain_object_read_in_two_matches_ends_where_the_pattern_does() -> None:
    """`whole_output._flat` (the common layout's members first, `_FLAT`'s pattern for the
    rest) ends where `_FLAT.match` ends and asks about the same first key, and fails where
    it fails: random texts of members in that layout and of JSON pieces, good and bad,
    bounded or not."""
    rng = random.Random(37)
    keys = ['"a"', '"b\\n"', '"\\u00e9"', '"\\x"', '"k"', '""', '"a\\"', '"\x01"', "a", '"']
    values = ['"v"', '"x\\"y"', "1", "-0", "01", "1.5", "1e5", "1.", "-", "true", "null", "NaN",
              '"\\"', "{}", "[1]", "1" * 4400, '"\t"', '""']  # fmt: skip
    gaps = [", ", ",", " , ", ",  ", ",\n", ": ", " ", ""]
    ends = ["}", " }", "", ", }", "}x", "\n}"]
    matched = 0
    for _ in range(20000):
        members = []
        for _ in range(rng.randint(0, 8)):
            colon = ": " if rng.random() < 0.8 else rng.choice([":", " : ", ":  ", ""])
            members.append(rng.choice(keys) + colon + rng.choice(values))
        comma = ", " if rng.random() < 0.7 else rng.choice(gaps)
        text = rng.choice(["{", "{ ", "{\n  "]) + comma.join(members) + rng.choice(ends)
        if rng.random() < 0.1:  # (a piece of the layout's own text inside)
            text = text.replace(", ", rng.choice(['", "', ': ", ', "\\, "]), 1)
        stop = len(text) if rng.random() < 0.8 else rng.randint(0, len(text))
        asked: list[str] = []

        def unwraps(key: str) -> bool:
            asked.append(key)
            return False

        end = whole_output._flat(text, 0, stop, (unwraps, None, frozenset()))
        found = whole_output._FLAT.match(text, 0, stop)
        sample = min(whole_output._SAMPLE, stop)
        if text.count("\\", 0, sample) * 4 > text.count('"', 0, sample):
            assert end == -1 and not asked, (text, stop)  # (the decoder's: `_flat`)
            continue
        first = found.group("first") if found else None
        plain = first is not None and "\\" not in first
        assert end == (found.end() if found and (first is None or plain) else -1), (text, stop)
        assert asked == ([first[1:-1]] if plain else []), (text, stop)
        matched += end >= 0
    assert matched > 1000


def test_the_loose_run_is_the_strict_run_where_it_is_clean() -> None:
    """`whole_output._LOOSE_RUN` (strings `"[^"]*+"`) on a run holding no backslash and no
    control character matches what `_FLAT_RUN` matches, the same first key;
    and `_flat` ends where `_FLAT` does whether the loose run or the strict one read the
    members (escapes, escaped quotes, raw control characters, lone surrogates, non-ASCII)."""
    rng = random.Random(41)
    keys = ['"a"', '"k"', '"\\u00e9"', '"a\\""', '"\x01"', '"\ud83d"', '"é"', '"\t"', '""']
    values = ['"v"', '"x\\"y"', '"\\n"', "1", "-0", "01", "1.5e3", "true", "null", '"\x1f"',
              '"\u2028"', '"😀"', '"\\\\"', '""', "{}", '"\x7f"']  # fmt: skip
    read = {"clean": 0, "strict": 0}
    for _ in range(20000):
        members = [rng.choice(keys) + ": " + rng.choice(values) for _ in range(rng.randint(0, 6))]
        text = "{" + ", ".join(members) + rng.choice(["}", ", ", ", }", ""])
        stop = len(text) if rng.random() < 0.8 else rng.randint(0, len(text))
        loose = whole_output._LOOSE_RUN.match(text, 0, stop)
        strict = whole_output._FLAT_RUN.match(text, 0, stop)
        assert (loose is None) == (strict is None), text
        if loose is None:
            continue
        run = text[: loose.end()]
        if "\\" not in run and not any(ord(c) < 0x20 for c in run):
            read["clean"] += 1
            assert loose.end() <= strict.end(), (text, stop)
            if loose.group("first") is not None:
                assert loose.group("first") == strict.group("first"), (text, stop)
            if loose.end() < strict.end():  # (the next member holds what only strict reads)
                rest = text[loose.end() : strict.end()]
                assert "\\" in rest or any(ord(c) < 0x20 for c in rest), (text, stop)
        else:
            read["strict"] += 1
        end = whole_output._flat(text, 0, stop, (lambda key: False, None, frozenset()))
        found = whole_output._FLAT.match(text, 0, stop)
        sample = min(whole_output._SAMPLE, stop)
        if text.count("\\", 0, sample) * 4 > text.count('"', 0, sample):
            assert end == -1
            continue
        first = found.group("first") if found else None
        plain = first is not None and "\\" not in first
        assert end == (found.end() if found and (first is None or plain) else -1), (text, stop)
    assert read["clean"] > 2000 and read["strict"] > 2000, read


@pytest.mark.parametrize("family", ("qwen3_coder", "deepseek_v4"))
def test_parameter_keys_kept_from_output_to_output_are_kept_per_schema(family: str) -> None:
    """What a parameter's key reads as is kept from one parse to the next per tool schema
    (`whole_output._shared_keys`): the same tool name with another schema types anew
    (`days` an integer, then a string, then an integer again)."""
    spec = with_params(get_spec(family))
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": "3"})] * 4)
    weather = next(tool for tool in TOOLS if tool["function"]["name"] == "get_weather")
    as_text = copy.deepcopy(weather)
    as_text["function"]["parameters"]["properties"]["days"] = {"type": "string"}
    for tools, days in (([weather], "3"), ([as_text], '"3"'), ([weather], "3")):
        fast, slow = both_ways(family, text, tools, "stop", {})
        assert fast == slow
        assert [call["function"]["arguments"] for call in fast["tool_calls"]] == [
            f'{{"city": "Paris", "days": {days}}}'
        ] * 4


# headers a `skip` reads or leaves between Inkling's `<|message_model|>` and its
# `<|content_invoke_tool_json|>`: none, a word, words (prose: the block's text), whitespace, a
# word at and past `max_len` (128), another marker in it or right before the `until`
SKIPPED = (
    "",
    "get_weather",
    "a b",
    " ",
    "name\n",
    "\nname",
    "x" * 127,
    "x" * 128,
    "x" * 129,
    "x" * 200,
    "x<|content_text|>",
    "<|content_text|>",
    "<|end_message|>x",
    "x<|message_model|>",
    "<|content_thinking|>why",
    "<|content_invoke_tool_text|>",
    "a<b",
    "|>",
)


@pytest.mark.parametrize("skipped", SKIPPED)
def test_a_skipped_header_reads_as_the_engine_reads_it(skipped: str) -> None:
    """A `skip` before a call's JSON (Inkling's header) is read by the route only where the
    engine reads it as a header (`whole_output._skip`): no whitespace, no marker in it, at
    most `max_len`; any other text there reads as the engine reads it, in the first call,
    a middle one and the last, with and without the prompt's opener."""
    spec = with_params(get_spec("inkling"))
    opener, until = "<|message_model|>", "<|content_invoke_tool_json|>"
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 4)
    assert text.count(opener + until) == 4
    for which in (0, 1, 3):
        at = -1
        for _ in range(which + 1):
            at = text.find(opener + until, at + 1)
        edited = text[: at + len(opener)] + skipped + text[at + len(opener) :]
        for variant in (edited, edited[len(opener) :]):
            for finish in ("stop", "length"):
                fast, slow = both_ways("inkling", variant, TOOLS, finish, {})
                assert fast == slow, (skipped, which, variant)


def test_a_skipped_header_is_read_by_the_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls whose header holds a word up to `max_len` long are the route's (the test above
    compares the route, not the engine twice)."""
    spec = with_params(get_spec("inkling"))
    opener = "<|message_model|>"
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 12)
    text = text.replace(opener, opener + "x" * 128)
    fast, slow, made = _both_routes(monkeypatch, "inkling", text)
    assert fast == slow and len(fast.tool_calls) == 12
    assert len({id(call) for call in made}) <= 2


_CALL = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'
# arrays of calls as Phi-4-mini writes them, and as a model may get them wrong: the route
# reads an array whole or leaves it to the engine (an element it does not read, no `]`)
ARRAYS = (
    f"[{_CALL}]",
    f"[{_CALL}, {_CALL}, {_CALL}]",
    f"[ {_CALL} ,\n{_CALL}\n]",
    f"[{_CALL},{_CALL}]",
    "[]",
    f"[{_CALL}, ]",
    f"[{_CALL},, {_CALL}]",
    f"[{_CALL} {_CALL}]",
    f"[{_CALL}, {{}}]",
    f"[{{}}, {_CALL}]",
    f"[{_CALL}, null]",
    f"[{_CALL}, {_CALL}",
    f"[{_CALL}, {_CALL}}}]",
    f"[{_CALL}, " + _CALL.replace("get_weather", "no_such_tool") + "]",
    f"[{_CALL}, " + _CALL.replace("3", '"3"') + "]",
    f"[{_CALL}, " + _CALL.replace("get_weather", "write_file") + "]",
    f"[{_CALL}, " + _CALL.replace('"name"', '"id": 7, "name"') + "]",
    f"[{_CALL}, " + _CALL[:-1] + ', "x": 1}]',
    f"[{_CALL}, " + _CALL[:-1] + "]",
    f"[{_CALL}]]",
)


@pytest.mark.parametrize("array", ARRAYS)
def test_an_array_of_calls_reads_as_the_engine_reads_it(array: str) -> None:
    """A `json_call_array` is read by the route element by element as the array reader
    reads it, all its calls or none: each array above, alone, between others, with text
    after it, at `stop` and `length`, with and without the corpus tools, reads as the
    engine reads it."""
    good = f"functools[{_CALL}, {_CALL}]"
    for text in (
        f"functools{array}",
        f"{good}functools{array}{good}",
        f"{good} functools{array} done",
        f"Sure.functools{array}functools{array}",
    ):
        for tools in (TOOLS, None):
            for finish in ("stop", "length"):
                for options in ({}, {"unknown_tools": "drop"}):
                    fast, slow = both_ways("phi4_mini_json", text, tools, finish, options)
                    assert fast == slow, (array, text, finish, options)


def test_arrays_of_calls_are_read_by_the_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrays of whole calls are the route's, each call in turn (the test above compares
    the route, not the engine twice), with ids and names in order."""
    text = "".join(f"functools[{_CALL}, {_CALL}]" for _ in range(5))
    fast, slow, made = _both_routes(monkeypatch, "phi4_mini_json", text)
    assert fast == slow and len(fast.tool_calls) == 10
    assert not made


_KEYED = '{"get_weather": {"city": "Paris", "days": 3}}'
# elements `{NAME: {…}}` as Apertus writes them, and as a model may get them wrong
KEYED = (
    _KEYED,
    '{ "get_weather" :\n{"city": "Paris", "days": 3} }',
    '{" get_weather ": {"city": "Paris", "days": 3}}',
    '{"": {"city": "Paris"}}',
    '{" ": {"city": "Paris"}}',
    '{"get_\\u0077eather": {"city": "Paris"}}',
    '{"' + "x" * 300 + '": {"city": "Paris"}}',
    '{"get_weather": {"city": "Paris"}, "extra": 1}',
    '{"get_weather": "city=Paris"}',
    '{"get_weather": {"city": "Paris", "days": "3"}}',
    '{"get_weather": {"city": {"nested": [1, {"deep": null}]}}}',
    '{"no_such_tool": {"city": "Paris"}}',
    '{"write_file": {"city": "Paris", "days": 3}}',
    "{}",
    '{"get_weather": {"city": "Paris"}',
)


@pytest.mark.parametrize("element", KEYED)
def test_an_array_of_keyed_calls_reads_as_the_engine_reads_it(element: str) -> None:
    """Apertus' `{NAME: {…}}` elements (`name_is_key`) are read by the route only in that
    plain layout (`whole_output._KEY_CALL`): each element above, second in an array of
    three, in an output of several arrays, reads as the engine reads it."""
    good = f"<|tools_prefix|>[{_KEYED}, {_KEYED}]<|tools_suffix|>"
    array = f"<|tools_prefix|>[{_KEYED}, {element}, {_KEYED}]<|tools_suffix|>"
    for text in (array, f"{good}{array}{good}", f"Sure. {good}\n{array} done", array[:-16]):
        for tools in (TOOLS, None):
            for finish in ("stop", "length"):
                for options in ({}, {"unknown_tools": "drop"}):
                    fast, slow = both_ways("apertus", text, tools, finish, options)
                    assert fast == slow, (element, text, finish, options)


def test_arrays_of_keyed_calls_are_read_by_the_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apertus' arrays of whole calls are the route's (the test above compares the route)."""
    text = "".join(f"<|tools_prefix|>[{_KEYED}, {_KEYED}]<|tools_suffix|>" for _ in range(5))
    fast, slow, made = _both_routes(monkeypatch, "apertus", text)
    assert fast == slow and len(fast.tool_calls) == 10
    assert not made


_ARRAY = f"[{_CALL}, {_CALL}]"
# xLAM's arrays and their optional closer "```", which its opener "```json" begins with:
# the closer there, absent at the output's end, followed by the opener (the next call's:
# not a closer), cut short, a prefix of the opener's rest, text after
FENCED = (
    f"```json\n{_ARRAY}\n```",
    f"```json{_ARRAY}```",
    _ARRAY,
    f"```json{_ARRAY}",
    f"```json{_ARRAY}```json{_ARRAY}```",
    f"```json{_ARRAY}```json{_ARRAY}",
    f"{_ARRAY}```json\n{_ARRAY}",
    f"{_ARRAY}```{_ARRAY}",
    f"```json{_ARRAY}```\nDone.",
    f"{_ARRAY} done",
    f"{_ARRAY}\n",
    f"{_ARRAY}`",
    f"{_ARRAY}``",
    f"{_ARRAY}<",
    f"<tool_call>{_ARRAY}</tool_c",
    f"{_ARRAY}```js",
    f"{_ARRAY}```jsonx",
    f"{_ARRAY}```json",
    f"{_ARRAY}```json\nhello",
    f"<tool_call>{_ARRAY}</tool_call><tool_call>{_ARRAY}",
    f"<tool_call>{_ARRAY}```</tool_call>",
)


@pytest.mark.parametrize("fenced", FENCED)
def test_an_optional_closer_an_opener_begins_with_reads_as_the_engine_reads_it(
    fenced: str,
) -> None:
    """xLAM's optional closer "```" is the start of its opener "```json": the route takes it
    only where the engine does (`whole_output._not_followed`), and a call the output ends
    without it ends there as the engine ends it. Each output above, alone, after text and
    after a call, at `stop` and `length`, with and without the corpus tools, reads as the
    engine reads it."""
    for text in (fenced, f"Sure. {fenced}", f"```json{_ARRAY}```\n{fenced}"):
        for tools in (TOOLS, None):
            for finish in ("stop", "length"):
                for options in ({}, {"unknown_tools": "drop"}):
                    fast, slow = both_ways("xlam", text, tools, finish, options)
                    assert fast == slow, (text, finish, options)


@pytest.mark.parametrize(
    "text",
    (
        "".join(f"```json\n{_ARRAY}\n```\n" for _ in range(5)).rstrip(),
        "".join(f"```json{_ARRAY}" for _ in range(5)),
        "[" + ", ".join([_CALL] * 10) + "]",
        f"```json[{_CALL}]```",
    ),
)
def test_fenced_arrays_of_calls_are_read_by_the_route(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """xLAM's arrays are the route's: fenced, each fence's closer "```" followed by the next
    opener "```json" or not closed at all, and an array that ends the output without its
    optional closer (the test above compares the route, not the engine twice)."""
    fast, slow, made = _both_routes(monkeypatch, "xlam", text)
    assert fast == slow and len(fast.tool_calls) == text.count(_CALL)
    assert not made


# families whose prompt opens the reasoning: calls written in it (`calls_inside`), and calls
# an output opens with before any reasoning text (the Qwen3-Coder and GLM markups)
IN_REASONING = ("cohere_command4", "step3p5", "ling3")


@pytest.mark.parametrize("family", IN_REASONING)
def test_calls_in_open_reasoning_are_read_by_the_route(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the prompt opened the reasoning and an opener opens its call there at once
    (`whole_output._opens_in_reasoning`), the calls are the route's from the first one."""
    spec = with_params(get_spec(family))
    text = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 12)
    fast, slow, made = _both_routes(monkeypatch, family, text)
    assert fast == slow and len(fast.tool_calls) == 12
    assert not made, f"{family}: the engine read a call"


# text before the calls of an output whose prompt opened the reasoning: none, whitespace,
# reasoning text (an opener after it waits for the reasoning to decide), a closed block, a
# block opened again
BEFORE_CALLS = ("", " ", "\n\n", "plan", "plan\n", "plan</think>", "plan</think>\n\n", "<think>")


@pytest.mark.parametrize("family", IN_REASONING + ("trinity", "qwen3_coder"))
@pytest.mark.parametrize("before", BEFORE_CALLS)
def test_an_opener_in_open_reasoning_reads_as_the_engine_reads_it(family: str, before: str) -> None:
    """Calls after each text above, with reasoning left open or closed after them, the
    prompt opening it or not, at `stop` and `length`, read as the engine reads them."""
    spec = with_params(get_spec(family))
    calls = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 3)
    opener, closer = spec.reasoning[0].opens[0], spec.reasoning[0].closes[0]
    before = before.replace("</think>", closer).replace("<think>", opener)
    for text in (before + calls, before + calls + "done", before + calls + closer + "ok"):
        for opened in (True, False, None):
            for finish in ("stop", "length"):
                options = {} if opened is None else {"reasoning_open": opened}
                fast, slow = both_ways(family, text, TOOLS, finish, options)
                assert fast == slow, (family, text, opened, finish)


_ACTION = '{"tool_call_id": "7", "tool_name": "get_weather", "parameters": {"city": "Paris"}}'
# Cohere's elements, an id first (`whole_output._plain_call`), and as a model may vary them
ACTIONS = (
    _ACTION,
    _ACTION.replace('"7"', '""'),
    _ACTION.replace('"7"', '" 7 "'),
    _ACTION.replace('"7"', '"\\u0037"'),
    _ACTION.replace('"7"', "7"),
    _ACTION.replace('"7"', "-0"),
    _ACTION.replace('"7"', "true"),
    _ACTION.replace('"7"', '"' + "i" * 70_000 + '"'),
    _ACTION.replace('"7"', '"' + "i" * 65_000 + '"'),
    '{"tool_name": "get_weather", "tool_call_id": "7", "parameters": {"city": "Paris"}}',
    '{"tool_call_id": "7", "tool_call_id": "8", "tool_name": "get_weather", "parameters": {}}',
    '{"tool_call_id": "7", "tool_name": "get_weather", "arguments": {"city": "Paris"}}',
    '{"tool_call_id": "7", "tool_name": "get_weather", "parameters": {"days": "3"}}',
    '{"tool_call_id": "7", "tool_name": "get_weather", "parameters": {}, "x": 1}',
)


@pytest.mark.parametrize("element", ACTIONS, ids=range(len(ACTIONS)))
def test_call_objects_with_an_id_first_read_as_the_engine_reads_them(element: str) -> None:
    """Cohere's action elements are read by the route in their plain layout with the id
    first (`whole_output._plain_call`): each element above, between others, reads as the
    engine reads it, with the id it writes."""
    good = _ACTION.replace('"7"', '"5"')
    for family in ("cohere_command3", "cohere_command4"):
        array = f"<|START_ACTION|>[{good}, {element}, {good}]<|END_ACTION|>"
        for text in (array, f"{array}{array}", f"Sure. {array} done"):
            fast, slow = both_ways(family, text, TOOLS, "stop", {})
            assert fast == slow, (family, element[:80], text[:80])
    if element == _ACTION:
        assert [call["id"] for call in fast["tool_calls"]] == ["5", "7", "5"]


# a parameter closer that a longer marker begins (`</parameter>` of `</parameter>>`): it
# may grow, so what follows it decides whether it closes the value
_GROWING = """family growing_closer
call
    "<tool_call>" ws
    "<function=" name(until=">") ">" ws
    xml_params(open="<parameter=", key_end=">", value_end="</parameter>",
               implicit_end=["<parameter=", "</function>", "</parameter>>"])
    ws "</function>" ws "</tool_call>"?
"""


def test_a_parameter_closer_that_may_grow_is_not_read_in_one_step() -> None:
    """The route reads a parameter in one step (`_Xml.plain_ends`) only where its closer
    can end nothing longer: here `</parameter>` may be the start of `</parameter>>`, and
    calls with either read as the engine reads them."""
    from toolgrammar.compiler.build import compile_grammar_text
    from toolgrammar.runtime.registry import registered
    from toolgrammar.runtime.tables import compiled

    namespace: dict[str, Any] = {}
    code = compile_grammar_text(_GROWING, "growing_closer.tg")
    exec(compile(code, "growing_closer.tg", "exec"), namespace)
    spec = namespace["SPEC"]
    xml = whole_output._route(compiled(spec)).shapes["<tool_call>"].xml
    assert xml is not None and "</parameter>" in xml.own - xml.plain_ends
    call = (
        "<tool_call><function=get_weather><parameter=city>{}</parameter>{}</function></tool_call>"
    )
    with registered(spec):
        for close in ("", ">", ">x"):
            for city in ("Paris", "Par</parameter>is", ""):
                text = call.format(city, close) * 6 + call.format("Rome", close)
                fast, slow = both_ways("growing_closer", text, TOOLS, "stop", {})
                assert fast == slow, text
                assert len(fast["tool_calls"]) == 7


def test_xml_elements_calls_are_read_one_match_per_element(monkeypatch: pytest.MonkeyPatch) -> None:
    """MiniMax-M3's `xml_elements` calls are read by the route's own reading of each element
    (`_Read._elements`), not by the dialect's reader, and read as the engine reads them."""
    spec = with_params(get_spec("minimax_m3"))
    calls = [("get_weather", {"city": "Paris", "days": 3})] * 10
    calls += [("get_weather", {"city": 'a "b" & <c>\n', "days": 4, "unit": "c"})] * 10
    text = render_output(spec, calls)
    read: list[bool] = []
    real_elements, real_dialect = whole_output._Read._elements, whole_output._Read._dialect

    def elements(self: Any, *args: Any) -> Any:
        found = real_elements(self, *args)
        read.append(found is not None)
        return found

    def dialect(self: Any, *args: Any) -> Any:
        read.append(False)
        return real_dialect(self, *args)

    monkeypatch.setattr(whole_output._Read, "_elements", elements)
    monkeypatch.setattr(whole_output._Read, "_dialect", dialect)
    made = _engine_calls(monkeypatch)
    with route(False):
        slow = toolgrammar.parse("minimax_m3", text, TOOLS, ids="sequential")
    made.clear()
    with route(True):
        fast = toolgrammar.parse("minimax_m3", text, TOOLS, ids="sequential")
    assert fast == slow and len(fast.tool_calls) == 20
    assert read.count(True) >= 19 and False not in read
    assert not made


_P = "]<]minimax[>["
# MiniMax-M3 argument elements the route reads in one match, and ones the reader must read
# (`whole_output._Elements`): blank, nested or mixed values, odd tags, a closer that is
# another's or a marker's, a wrapper first, prefixes inside values, text between elements
ELEMENTS = (
    f"{_P}<city>Paris{_P}</city>",
    f"{_P}<city>{_P}</city>",
    f"{_P}<city>  {_P}</city>",
    f"{_P}<city> Paris \n{_P}</city>",
    f"{_P}<days>3{_P}</days>",
    f"{_P}<days> 3 {_P}</days>",
    f"{_P}<days>three{_P}</days>",
    f"{_P}<days>{_P}</days>",
    f"{_P}<days>[1, 2]{_P}</days>",
    f"{_P}<city>{_P}<a>1{_P}</a>{_P}</city>",
    f"{_P}<city>x{_P}<a>1{_P}</a>y{_P}</city>",
    f"{_P}<city >Paris{_P}</city >",
    f"{_P}< city>Paris{_P}</ city>",
    f"{_P}</city>Paris{_P}</city>",
    f"{_P}< >Paris{_P}</ >",
    f"{_P}<\u3000city>Paris{_P}</\u3000city>",
    f"{_P}<invoke>Paris{_P}</invoke>",
    f"{_P}<tool_call>Paris{_P}</tool_call>",
    f'{_P}<input>{{"city": "Rome"}}{_P}</input>',
    f"{_P}<arguments>Paris{_P}</arguments>",
    f"{_P}<city>a < b > c ] d ]<]mini{_P}</city>",
    f"{_P}<city>Par]<]minimax[>[is{_P}</city>",
    f"{_P}<city>Par]<]minimax[>[<x>is{_P}</city>",
    f"{_P}<city>Paris{_P}</town>",
    f"{_P}<city>Paris{_P}</city>stray text",
    f"{_P}<city>Paris{_P}</city>{_P}",
    f"{_P}<{'c' * 256}>Paris{_P}</{'c' * 256}>",
    f"{_P}<{'c' * 257}>Paris{_P}</{'c' * 257}>",
    f"{_P}<city>Paris{_P}</city{_P}</city>",
)


@pytest.mark.parametrize("element", ELEMENTS, ids=range(len(ELEMENTS)))
def test_an_element_reads_as_the_engine_reads_it(element: str) -> None:
    """Each element above, first and second in a call among others, in the section and
    after it, at `stop` and `length`, reads as the engine reads it."""
    call = '{p}<invoke name="get_weather">{first}{p}<unit>c{p}</unit>{p}</invoke>\n'
    good = call.format(p=_P, first=f"{_P}<city>Rome{_P}</city>")
    odd = call.format(p=_P, first=element)
    second = odd.replace(f"{_P}<unit>c{_P}</unit>", "").replace(
        '">', f'">{_P}<unit>c{_P}</unit>', 1
    )
    section = f"{_P}<tool_call>\n" + "{}" + f"{_P}</tool_call>"
    for body in (good + odd + good, good * 2 + second + good, odd + odd):
        for text in (section.format(body), section.format(body) + " done"):
            for finish in ("stop", "length"):
                for options in ({}, {"unknown_tools": "drop"}):
                    fast, slow = both_ways("minimax_m3", text, TOOLS, finish, options)
                    assert fast == slow, (element, text, finish, options)


# a marker that ends calls beginning with the `}` a JSON object ends with: the same JSON text
# met again may be cut by it there (`whole_output._stopless`)
_BRACE = """family brace_closer
section "<calls>" "}</calls>"
call
    "<call>" name(until=":") ":" json_args
"""


def test_the_same_json_met_again_is_cut_by_a_marker_that_begins_in_it() -> None:
    """The route reads a JSON text met again without searching for the stop marker after
    it only where no stop can begin inside it: here `}</calls>` begins at its last `}`,
    and the calls read as the engine reads them."""
    from toolgrammar.compiler.build import compile_grammar_text
    from toolgrammar.runtime.registry import registered

    namespace: dict[str, Any] = {}
    exec(
        compile(compile_grammar_text(_BRACE, "brace_closer.tg"), "brace_closer.tg", "exec"),
        namespace,
    )
    call = '<call>get_weather:{"city": "Paris"}'
    with registered(namespace["SPEC"]):
        for text in (
            f"<calls>{call * 5}</calls> done",
            f"<calls>{call * 5}}}</calls> done",
            f"<calls>{call * 3}</calls><calls>{call * 3}</calls>",
        ):
            for finish in ("stop", "length"):
                fast, slow = both_ways("brace_closer", text, TOOLS, finish, {})
                assert fast == slow, text


# headers as models write them, and ones no name reads from: spaces, markup, too long, no
# counter, an empty name
_HEADERS = (
    "functions.get_weather:0",
    "get_weather:12",
    "functions.a.b-c:3",
    "functions.get weather:1",
    "functions.get_weather",
    "functions.:1",
    ":1",
    "",
    "functions.f<x>:1",
    "functions.f{:1",
    "f" * 254 + ":1",
    "f" * 255 + ":1",
    "functions." + "f" * 250 + ":99",
)


def test_a_header_that_is_the_id_reads_as_the_engine_reads_it() -> None:
    """The route reads a name whose header is the call's id (`name_reader`, a header a
    call) as `spec.name_of` reads it for the engine: the same name and id, or none."""
    items = [
        item
        for family in registry.families()
        for shape in get_spec(family).shapes
        for item in shape.call
        if isinstance(item, Name) and item.pattern and item.id
    ]
    assert items  # (kimi_k2's `functions.NAME:IDX`)
    for item in items:
        read = name_reader(item)
        for raw in _HEADERS:
            assert read(raw) == name_of(item, raw), (item.pattern, raw)
    kimi = [item for item in items if "functions" in item.pattern][0]
    assert name_reader(kimi)("functions.get_weather:0") == (
        "get_weather",
        "functions.get_weather:0",
    )


def test_a_header_read_in_line_reads_as_the_engine_reads_it() -> None:
    """The route reads a header that is the call's id in line where its name has a pattern
    (`_Shape.header`, `name_reader`'s reading without a call per call): every header above,
    between calls of good headers, the call's name and id as the engine reads them, or the
    call left to it; the tools named, and none (every name known)."""
    from toolgrammar.runtime.tables import compiled

    shape = whole_output._route(compiled(get_spec("kimi_k2"))).shapes["<|tool_call_begin|>"]
    assert shape.header is not None  # (else the in-line reading is never taken)
    for raw in _HEADERS:
        call = (
            f"<|tool_call_begin|>{raw}<|tool_call_argument_begin|>"
            '{"city": "Paris"}<|tool_call_end|>'
        )
        good = call.replace(raw, "functions.get_weather:7", 1)
        text = f"<|tool_calls_section_begin|>{good}{call}{good}<|tool_calls_section_end|> ok"
        for tools in (TOOLS, None):
            on, off = both_ways("kimi_k2", text, tools, "stop", {})
            assert on == off, raw


@pytest.mark.parametrize("family", ["hermes", "kimi_k2"])
def test_long_arguments_nested_too_deep_read_as_the_engine_reads_them(family: str) -> None:
    """Arguments long enough that the route asks their members, not their text, how deep
    they nest (`_nests`): a long string beside a member nested past the depth limit is
    still too deep, and reads as the engine reads it, as one beside a shallow member does."""
    tools = TOOLS
    long = "x" * 2000
    for depth in (3, 200):
        nested = "[" * depth + "1" + "]" * depth
        arguments = f'{{"content": "{long}", "deep": {nested}}}'
        if family == "hermes":
            text = f'<tool_call>\n{{"name": "write_file", "arguments": {arguments}}}\n</tool_call>'
        else:
            text = (
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
                f"<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"
                "<|tool_calls_section_end|>"
            )
        on, off = both_ways(family, text, tools, "stop", {})
        assert on == off, (family, depth)


_INK = "<|message_model|>"
_INK_CALL = (
    '<|content_invoke_tool_json|>{"name": "get_weather", "args": {"city": "Paris", "days": 3}}'
)
# outputs after a prompt that ended with a call opener (`prompt_opened`): the prompt's call
# written at once, the opener written once more (then a call, reasoning, text, a marker it
# grows into), twice more, or a call after text
PROMPT_OPENED = {
    "inkling": (
        f"{_INK_CALL}<|end_message|>{_INK}{_INK_CALL}<|end_message|>",
        f"{_INK}{_INK_CALL}<|end_message|>",
        f"{_INK}{_INK_CALL}<|end_message|>{_INK}{_INK_CALL}<|end_message|>",
        f"{_INK}{_INK}{_INK_CALL}<|end_message|>",
        f"{_INK}<|content_thinking|>plan<|end_message|>{_INK}{_INK_CALL}<|end_message|>",
        f"{_INK}<|content_text|>hello<|end_message|>{_INK}{_INK_CALL}<|end_message|>",
        f"{_INK}hello {_INK_CALL}<|end_message|>",
        f"{_INK}{_INK_CALL}",
        f"{_INK}{_INK_CALL}<|end_message|> after",
        f"{_INK}",
        f"{_INK}{_INK}",
        f"hello {_INK}{_INK_CALL}<|end_message|>",
    ),
    "functionary_v32": (
        'get_weather\n{"city": "Paris", "days": 3}>>>get_weather\n{"city": "Paris", "days": 3}',
        '>>>get_weather\n{"city": "Paris", "days": 3}',
        '>>>get_weather\n{"city": "Paris", "days": 3}>>>get_weather\n{"city": "Paris"}',
        '>>>>>>get_weather\n{"city": "Paris", "days": 3}',
        '>>>all\nhello>>>get_weather\n{"city": "Paris", "days": 3}',
        'hello>>>get_weather\n{"city": "Paris", "days": 3}',
        ">>>",
    ),
}


@pytest.mark.parametrize(
    "family,text", [(family, text) for family, texts in PROMPT_OPENED.items() for text in texts]
)
def test_outputs_after_a_prompt_opened_call_read_as_the_engine_reads_them(
    family: str, text: str
) -> None:
    """Where the prompt ended with a call opener, the engine reads through the output's first
    opener; where that leaves it clean but for the opener held, the route reads on from it."""
    for finish in ("stop", "length"):
        on, off = both_ways(family, text, TOOLS, finish, {})
        assert on == off, (family, text, finish)


def test_the_prompts_opener_written_once_more_is_the_routes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inkling writes the prompt's `<|message_model|>` once more before its call: that call
    is the route's (the engine gives the prompt's call up and holds the output's opener)."""
    text = f"{_INK}{_INK_CALL}<|end_message|>"
    fast, slow, made = _both_routes(monkeypatch, "inkling", text)
    assert fast == slow and len(fast.tool_calls) == 1
    # (the engine's only call is the prompt's, given up at the second opener: never named)
    assert len({id(call) for call in made}) == 1 and not any(call.committed for call in made)


# a name read up to its `until` with whitespace padding it past `max_len` (a stripped name
# that fits): the route hands such a header to the engine, which gives it up as it does when
# the header streams in small pieces (`call_head._read_name`)
PADDED_HEADERS = {
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0{}"
        '<|tool_call_argument_begin|>{{"city": "Paris"}}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    ),
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather{}"
        '\n```json\n{{"city": "Paris"}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
}


@pytest.mark.parametrize("family", sorted(PADDED_HEADERS))
def test_a_padded_header_reads_the_same_whole_and_streamed(family: str) -> None:
    for pad in (200, 228, 232, 236, 240, 250, 260):
        text = PADDED_HEADERS[family].format(" " * pad)
        whole = toolgrammar.parse(family, text)
        parser, deltas = toolgrammar.StreamParser(family), []
        for at in range(0, len(text), 7):
            deltas += parser.feed(text[at : at + 7])
        streamed = toolgrammar.assemble(deltas + parser.finish("stop"), "stop")
        calls = [(c.function.name, c.function.arguments) for c in whole.tool_calls or []]
        streamed_calls = [
            (c.function.name, c.function.arguments) for c in streamed.tool_calls or []
        ]
        assert (whole.content, calls) == (streamed.content, streamed_calls), (family, pad)
        if pad in (200, 260):  # a call while the header fits, none once it is too long
            assert bool(calls) == (pad == 200), (family, pad)


def _section_families() -> list[str]:
    """The families whose section markers the route hands to `Engine._marker` itself."""
    found = []
    for family in FAMILIES:
        spec = with_params(get_spec(family))
        if (
            spec.messages is None
            and whole_output._route(Engine(spec, ToolSchemas(None)).family).markup
        ):
            found.append(family)
    return found


SECTION_FAMILIES = _section_families()


def _section_texts(family: str) -> list[str]:
    """Outputs with a section's markers where the route now reads them (right before the
    first call, right after the last, doubled, alone, cut, with text or whitespace at them)."""
    engine = Engine(with_params(get_spec(family)), ToolSchemas(None))
    compiled = engine.family
    markup = whole_output._route(compiled).markup
    opens = sorted(markup & compiled.section_opens) or [""]
    closes = sorted(markup & compiled.section_closes) or [""]
    spec = with_params(get_spec(family))
    try:
        calls = render_output(spec, [("get_weather", {"city": "Paris", "days": 3})] * 3)
    except RenderError:
        return []
    texts = [calls]
    for opener in opens:
        for closer in closes:
            # the rendered calls may already carry the section's markers: each piece read bare
            bare = calls
            for marker in (*compiled.section_opens, *compiled.section_closes):
                bare = bare.replace(marker, "")
            texts += [
                opener + bare + closer,
                opener + opener + bare + closer + closer,
                opener + bare + closer + opener + bare + closer,
                " " + opener + bare + closer + " ",
                "Hi.\n" + opener + "\n" + bare + "\n" + closer + "\nBye.",
                closer + opener + bare + closer,
                opener + closer,
                opener,
                closer,
                opener + bare + closer[:-1],
                opener + bare + closer + closer[:3],
                opener[:-2] + bare + closer,
                bare + closer + bare + closer,
                opener + bare + opener + bare + closer,
                # text held back as a marker's possible start right before a marker
                opener[:3] + opener + bare + closer,
                opener + bare + closer[:3] + closer,
                opener + bare + closer[:3] + closer + bare,
            ]
    return texts


@pytest.mark.parametrize("family", SECTION_FAMILIES)
def test_section_markers_around_the_calls_read_as_the_engine_reads_them(family: str) -> None:
    """The section markers right before, between and after the routed calls (`_markup`):
    read as the engine reads them, doubled, alone, cut at the end, after text or whitespace,
    under each finish reason and compat profile."""
    texts = _section_texts(family)
    assert texts
    for text in texts:
        for options in ({}, {"compat": "vllm"}, {"whitespace": "trim"}, {"section_text": "call"}):
            for finish in ("stop", "length"):
                fast, slow = both_ways(family, text, TOOLS, finish, options)
                assert fast == slow, (family, options, finish, text)


def test_the_section_markers_around_kimis_calls_are_the_routes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kimi K2's section opener and closer around its calls are handed to `Engine._marker` by
    the route: the engine's scan never runs on them (not vacuous: the engine alone scans)."""
    text = render_output(get_spec("kimi_k2"), [("get_weather", {"city": "Paris"})] * 5)
    assert text.startswith("<|tool_calls_section_begin|>")
    assert text.endswith("<|tool_calls_section_end|>")
    scanned: list[int] = []
    real = Engine._scan

    def counted(self: Engine, buf: str, pos: int, eof: bool) -> int:
        scanned.append(pos)
        return real(self, buf, pos, eof)

    monkeypatch.setattr(Engine, "_scan", counted)
    with route(False):
        slow = toolgrammar.parse("kimi_k2", text, TOOLS, ids="sequential")
    assert scanned
    scanned.clear()
    with route(True):
        fast = toolgrammar.parse("kimi_k2", text, TOOLS, ids="sequential")
    assert fast == slow and len(fast.tool_calls) == 5
    assert not scanned


def _fused_heads() -> list[tuple[str, Any, str, Any, Any, Any]]:
    """Every (family, markers searched, opener, whole-head match, search, head match from
    the opener) the route would ask where it fuses the two (`whole_output._fused`)."""
    found_heads = []
    for family in FAMILIES:
        compiled = toolgrammar._new_engine(family, TOOLS)[0].family
        route_of = whole_output._route(compiled)
        if route_of.starts is None:
            continue
        searched = {
            (compiled.quick_section_markers, route_of.in_section),
            (compiled.quick_content_markers, route_of.in_content),
            (compiled.content_markers, route_of.in_content),
            (compiled.after_calls_markers, route_of.in_content),
        }
        for found, allowed in searched:
            if found is None or not allowed:
                continue
            search, heads, _ = whole_output._asked(route_of, found, allowed)
            for lit, (_, head_at, offset, fused) in heads.items():
                if fused is not None:
                    found_heads.append((family, found, lit, fused, search, (head_at, offset)))
    return found_heads


def _written_calls(family: str) -> list[str]:
    """Calls as the family writes them (`render_output`), each from its opener on: the text
    a fused head reads."""
    written = []
    for args in ({"city": "Paris", "days": 3}, {}):
        try:
            written.append(render_output(get_spec(family), [("get_weather", args)]))
        except RenderError:
            pass
    return written


FUSED_HEADS = _fused_heads()


def _searched_head(found: Any, lit: str, search: Any, head: Any, text: str, pos: int) -> Any:
    """The head the route reads at `pos` the long way (`_Read.calls`): the earliest marker
    searched from there, `lit` after whitespace only, not one that may grow, its head."""
    marker = search(text, pos)
    if marker is None or marker.group() != lit:
        return None
    at = marker.start()
    if at > pos and not text[pos:at].isspace():
        return None
    if lit in found.growing and found.may_grow(text, at, lit):
        return None
    head_at, offset = head
    return head_at(text, at + offset)


def test_the_routes_own_call_heads_are_fused() -> None:
    """The families of the bench whose calls open with an opener of their own read each
    call's opener and head in one match (else the agreement below would hold vacuously)."""
    fused_families = {family for family, *_ in FUSED_HEADS}
    assert {"kimi_k2", "hermes", "deepseek_v3", "mistral"} <= fused_families


@pytest.mark.parametrize("family", sorted({family for family, *_ in FUSED_HEADS}))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_fused_head_reads_as_the_search_and_the_head_match(
    family: str, data: st.DataObject
) -> None:
    """`whole_output._fused`: one match where the route searched for the next marker and
    matched the call's head from it, and the same answer: where either reads a head, both
    do, to the same end with the same groups (texts of the family's markers, its opener,
    whitespace of every kind, name-like text, a JSON start)."""
    ours = [entry for entry in FUSED_HEADS if entry[0] == family]
    _, found, lit, fused, search, head = data.draw(st.sampled_from(ours))
    pieces = [
        lit, lit, *found.literals, " ", "\n", "\t", "\u3000", "\x85", "\x1c", "a", "get_weather",
        "functions.f:1", ":", "{", '{"a": 1}', "<", ">", "|", "[", "]", '"', "name", "x" * 600,
        "{x", "[x", '{"', "{}", "[{",
        *(marker[:cut] for marker in found.literals for cut in (1, len(marker) // 2)),
    ]  # fmt: skip
    # the family's own calls from the opener on, whole or cut, as pieces too
    for call in _written_calls(family):
        at = call.find(lit)
        rest = call[at + len(lit) :] if at >= 0 else call
        pieces += [rest, rest, rest[: len(rest) // 2], rest.replace("get_weather", "")]
    spaces = [" ", "\n", "\t", "\u3000", "\x85", "\x1c", "\r\n"]
    before = data.draw(st.lists(st.sampled_from(pieces), max_size=4))
    gap = data.draw(st.lists(st.sampled_from(spaces), max_size=3))
    opener = data.draw(st.one_of(st.just(lit), st.sampled_from(pieces)))
    after = data.draw(st.lists(st.sampled_from(pieces), max_size=10))
    text = "".join(before + gap + [opener] + after)
    # from where a call left off (before the gap), or anywhere
    pos = len("".join(before))
    if data.draw(st.booleans()):
        pos = data.draw(st.integers(0, len(text)))
    quick = fused(text, pos)
    slow = _searched_head(found, lit, search, head, text, pos)
    assert (quick is None) == (slow is None), (family, lit, text, pos)
    if quick is not None:
        assert quick.end() == slow.end(), (family, lit, text, pos)
        assert quick.groupdict() == slow.groupdict(), (family, lit, text, pos)


def _tail_texts() -> list[tuple[str, str, Any]]:
    """Per family and routed opener whose call's tail is read in one test
    (`_Shape.tail_text`): (family, tail text, shape)."""
    from toolgrammar.runtime.tables import compiled

    found = []
    for family in registry.families():
        route_of = whole_output._route(compiled(get_spec(family)))
        for shape in route_of.shapes.values():
            if isinstance(shape.tail_text, str):  # (else `()`: its pattern alone)
                found.append((family, shape.tail_text, shape))
    return found


TAIL_TEXTS = _tail_texts()


def test_call_tails_read_in_one_test_are_the_bench_families() -> None:
    """Kimi K2's closer and Mistral's empty tail are read without their pattern (else the
    agreement below would hold vacuously)."""
    tails = {(family, tail) for family, tail, _ in TAIL_TEXTS}
    assert ("kimi_k2", "<|tool_call_end|>") in tails
    assert ("mistral", "") in tails


@pytest.mark.parametrize("family", sorted({family for family, *_ in TAIL_TEXTS}))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_tail_read_in_one_test_reads_as_its_pattern(family: str, data: st.DataObject) -> None:
    """`whole_output._tail_text`: where the text goes on with the tail's literal right at
    the arguments' end (for an empty tail: the character before it no whitespace), the
    tail's pattern matches there, to the end of the literal, its last literal (where it has
    one) there too; the route takes that answer without the match (texts of the family's
    markers and closers, whitespace of every kind, JSON ends, cut markers)."""
    ours = [entry for entry in TAIL_TEXTS if entry[0] == family]
    _, tail_text, shape = data.draw(st.sampled_from(ours))
    markers = [lit for lit in compiled_literals(family)]
    pieces = [
        tail_text, tail_text, *markers, " ", "\n", "\t", "\u3000", "\x85", "\x1c", "}", "]",
        "a", '"', "x" * 40, *(m[:cut] for m in [*markers, tail_text] for cut in (1, len(m) // 2)),
    ]  # fmt: skip
    pieces = [piece for piece in pieces if piece]  # (the arguments end past the call's start)
    before = data.draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=4))
    after = data.draw(st.lists(st.sampled_from(pieces), max_size=6))
    text = "".join(before + after)
    end = len("".join(before))
    if tail_text:
        quick = text.startswith(tail_text, end)
    else:
        quick = not text[end - 1].isspace()
    slow = shape.tail.match(text, end)
    if quick:
        assert slow is not None, (family, text, end)
        assert slow.end() == end + len(tail_text), (family, text, end)
        if shape.final == 2:
            assert slow.start("last") == end, (family, text, end)
    elif tail_text == "":
        assert slow is None, (family, text, end)  # (an empty tail's pattern is the test)


def compiled_literals(family: str) -> list[str]:
    """Every marker literal of a family (openers, stops, section markers)."""
    from toolgrammar.runtime.tables import compiled

    table = compiled(get_spec(family))
    found = set(table.openers)
    for stops in table.stops.values():
        found.update(stops)
    found |= set(table.section_opens) | set(table.section_closes)
    return sorted(found)


# call objects' arguments as elements write them again, cut, grown, typed otherwise, with a
# stop marker or a closer in them (`_Read._call_object`'s arguments read again)
_OBJECT_ARGUMENTS = (
    '{"city": "Paris", "days": 3}',
    '{"city": "Paris"}',
    '{"city": "Paris", "days": 3, "x": 1}',
    '{"days": "3"}',
    '{"city": "Paris<|END_ACTION|>"}',
    '{"city": "Paris<|tools_suffix|>"}',
    '{"city": "Paris"}}',
    '{"city": "Paris"',
    "{}",
)
_OBJECT_NAMES = ("get_weather", "write_file", "no_such_tool")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_call_objects_whose_arguments_come_again_read_as_the_engine_reads_them(
    data: st.DataObject,
) -> None:
    """Arrays of call objects whose arguments come again for the same tool, under another
    id or none (Cohere's numbered actions, Apertus' keyed calls), each element's arguments
    drawn from those above, with more after them or not: the route reads them as the
    engine does (`_Read.object_arguments`: arguments read again only where they were sent
    as written, for the same tool, and end before the stop)."""
    family = data.draw(st.sampled_from(("cohere_command4", "cohere_command3", "apertus")))
    count = data.draw(st.integers(1, 6))
    elements = []
    for number in range(count):
        name = data.draw(st.sampled_from(_OBJECT_NAMES))
        arguments = data.draw(st.sampled_from(_OBJECT_ARGUMENTS))
        more = data.draw(st.sampled_from(("", ', "x": 1', " ")))
        if family == "apertus":
            elements.append(f'{{"{name}": {arguments}{more}}}')
        else:
            elements.append(
                f'{{"tool_call_id": "{number}", "tool_name": "{name}", '
                f'"parameters": {arguments}{more}}}'
            )
    if family == "apertus":
        array = "<|tools_prefix|>[" + ", ".join(elements) + "]<|tools_suffix|>"
    else:
        array = "<|START_ACTION|>[" + ",\n    ".join(elements) + "]<|END_ACTION|>"
    for text in (array, array + array, f"Sure. {array} done"):
        for tools in (TOOLS, None):
            fast, slow = both_ways(family, text, tools, "stop", {})
            assert fast == slow, (family, text)


def test_call_objects_whose_arguments_come_again_are_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cohere's numbered calls of the same arguments decode them once (else the agreement
    above would hold without the route reading any again), and read as the engine does."""
    element = '{{"tool_call_id": "{}", "tool_name": "get_weather", "parameters": {{"city": "P"}}}}'
    array = ", ".join(element.format(number) for number in range(8))
    text = f"<|START_ACTION|>[{array}]<|END_ACTION|>"
    decoded = []
    real = whole_output._decoded
    monkeypatch.setattr(
        whole_output, "_decoded", lambda *args: decoded.append(args[1]) or real(*args)
    )
    fast, slow = both_ways("cohere_command4", text, TOOLS, "stop", {})
    assert fast == slow and len(fast["tool_calls"]) == 8
    assert [call["id"] for call in fast["tool_calls"]] == [str(n) for n in range(8)]
    assert len(decoded) == 1


@pytest.mark.parametrize("family", ("cohere_command4", "apertus"))
def test_arguments_sent_as_written_for_one_tool_are_typed_for_another(family: str) -> None:
    """The same arguments after a call of another tool are read again for that tool: typed
    there (`get_weather`'s `days` is an integer), not taken as the last call's."""
    if family == "apertus":
        call = '{{"{}": {{"days": "3"}}}}'
        array = "<|tools_prefix|>[{}]<|tools_suffix|>"
    else:
        call = '{{"tool_call_id": "1", "tool_name": "{}", "parameters": {{"days": "3"}}}}'
        array = "<|START_ACTION|>[{}]<|END_ACTION|>"
    calls = ", ".join(call.format(name) for name in ("write_file", "get_weather", "write_file"))
    fast, slow = both_ways(family, array.format(calls), TOOLS, "stop", {})
    assert fast == slow
    assert [call["function"]["arguments"] for call in fast["tool_calls"]] == [
        '{"days": "3"}',
        '{"days": 3}',
        '{"days": "3"}',
    ]
