"""Huge, deep and hostile outputs: no exception, earlier output intact, bounded holding."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

import toolgrammar
from toolgrammar.runtime import scan_meter
from toolgrammar.runtime.json_stream import MAX_DEPTH
from toolgrammar.runtime.scan_meter import ScanMeter
from support.corpus_format import TOOLS
from toolgrammar.check.fuzz import grammars
from toolgrammar.check.invariants import check_text


def _feed_all(family: str, pieces, **options):
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential", **options)
    deltas = []
    for piece in pieces:
        deltas += parser.feed(piece)
    deltas += parser.finish()
    return parser, toolgrammar.assemble(deltas, parser.finish_reason)


def test_ten_megabyte_string_value_streams_and_terminates() -> None:
    value = "x" * (10 * 1024 * 1024)
    head = "<tool_call>\n<function=write_file>\n<parameter=content>\n"
    pieces = [head] + [value[i : i + 65536] for i in range(0, len(value), 65536)]
    parser, message = _feed_all("qwen3_coder", pieces)
    assert json.loads(message.tool_calls[0].function.arguments)["content"] == value
    assert len(parser._engine._state.pending) < 64  # nothing but a possible marker is held


@pytest.mark.parametrize("family", ["hermes", "kimi_k2"])
def test_json_nested_ten_thousand_deep(family: str) -> None:
    deep = "[" * 10000 + "]" * 10000
    body = '{"name": "write_file", "arguments": {"content": "a", "deep": ' + deep + "}}"
    if family == "hermes":
        text = "<tool_call>\n" + body + "\n</tool_call>"
    else:
        text = (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
            '<|tool_call_argument_begin|>{"content": "a", "deep": '
            + deep
            + "}<|tool_call_end|><|tool_calls_section_end|>"
        )
    for pieces in ([text], [text[i : i + 7] for i in range(0, len(text), 7)]):
        _, message = _feed_all(family, pieces)
        args = message.tool_calls[0].function.arguments
        # deeper than MAX_DEPTH is malformed: closed at that depth, so any client can load it
        assert json.loads(args)["content"] == "a"
        assert args.count("[") == args.count("]") == MAX_DEPTH - 1
        assert message.content is None  # the rest of the call is markup, not content


@pytest.mark.parametrize("family", ["hermes", "kimi_k2"])
def test_json_cut_ten_thousand_deep_closes(family: str) -> None:
    if family == "hermes":
        text = '<tool_call>\n{"name": "write_file", "arguments": {"deep": ' + "[" * 10000
    else:
        text = (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
            '<|tool_call_argument_begin|>{"deep": ' + "[" * 10000
        )
    _, message = _feed_all(family, [text])
    args = message.tool_calls[0].function.arguments
    assert args == '{"deep": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert json.loads(args)


@pytest.mark.parametrize("family", toolgrammar.families())
def test_binary_garbage_and_whitespace_floods(family: str) -> None:
    garbage = "".join(chr(c) for c in range(0, 0x3000, 7)) * 20
    pieces = [garbage[i : i + 13] for i in range(0, len(garbage), 13)]
    _, message = _feed_all(family, pieces, reasoning_open=False)
    assert message.content == garbage.strip() and message.tool_calls == []
    _, message = _feed_all(family, pieces, reasoning_open=True)
    assert (message.reasoning or message.content) and message.tool_calls == []
    _, message = _feed_all(family, [" \n\t" * 50000], reasoning_open=False)
    assert message.content is None and message.tool_calls == []


def test_feed_rejects_non_text() -> None:
    parser = toolgrammar.StreamParser("hermes")
    with pytest.raises(TypeError, match="feed\\(\\) takes str"):
        parser.feed(b"bytes")  # type: ignore[arg-type]


def test_feed_after_finish_is_a_clear_error() -> None:
    parser = toolgrammar.StreamParser("hermes")
    parser.finish()
    with pytest.raises(RuntimeError, match="after finish"):
        parser.feed("more")


def test_earlier_output_survives_garbage_after_it() -> None:
    good = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    for junk in (
        "<tool_call><function=<<<",
        "</parameter></function>}}}]]",
        "<tool_call>\n<function=a b>",
    ):
        parser = toolgrammar.StreamParser("qwen3_coder", TOOLS, ids="sequential")
        first = parser.feed(good)
        later = parser.feed(junk) + parser.finish()
        message = toolgrammar.assemble(first + later)
        assert message.tool_calls[0].function.arguments == '{"city": "Paris"}'


@pytest.mark.parametrize("family", ["pythonic", "llama4_pythonic", "olmo3", "lfm2"])
def test_python_call_values_raise_no_warnings(family: str) -> None:
    import warnings

    # `1if` made ast warn on stderr, then parse; so did an invalid escape in a dict (the fuzzer's)
    text = "[get_weather(city=1if 2 else 3, days=1and 2, extra={'s': 'a\\/b'})]"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # `1if` made ast warn on stderr, then parse
        message = toolgrammar.parse(family, text, reasoning_open=False)
    assert [str(w.message) for w in caught] == []
    assert message.content or message.tool_calls


ONE_CALL = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'
MANY_CALLS = {
    "xlam": "[" + ", ".join([ONE_CALL] * 500) + "]",
    "phi4_mini_json": "functools[" + ", ".join([ONE_CALL] * 500) + "]",
    "llama3_json": "<|python_tag|>" + "; ".join([ONE_CALL] * 500),
    "hermes": "".join(f"<tool_call>\n{ONE_CALL}\n</tool_call>\n" for _ in range(500)),
}


@pytest.fixture
def scans() -> Iterator[ScanMeter]:
    """From here on, every scan of the runtime's metered patterns (every marker search, and
    the whole-member and value-token patterns) adds the characters it went through to
    `.chars`. The runtime counts them itself (`runtime/scan_meter.py`), so a compiled build,
    where a patched method would never be called, counts them too; a test that counted
    nothing fails rather than passing on a count of zero."""
    with scan_meter.counting() as meter:
        yield meter
    assert meter.scans, "no scan was counted: the patterns read were made outside the meter"


@pytest.mark.parametrize("family", sorted(MANY_CALLS))
def test_many_calls_in_one_output_are_read_in_linear_work(family: str, scans: ScanMeter) -> None:
    # each call used to search the rest of the output for its stop marker: a whole parse
    # of N calls back to back scanned O(N^2) characters (6.4 s for 256K of xlam calls)
    text = MANY_CALLS[family]
    message = toolgrammar.parse(family, text)
    assert len(message.tool_calls) == 500
    assert scans.chars < 5 * len(
        text
    ), f"{scans.chars} characters searched for a {len(text)}-char output"


def test_many_python_strings_in_one_output_are_read_in_linear_work(scans: ScanMeter) -> None:
    # each string value of a Python call searched the rest of the output for the section's
    # closer and for a backslash: lfm2's whole parse of one 256K call took 1.4 s (quadratic)
    values = ", ".join(f"p{i}='value {i}'" for i in range(2000))
    text = f"<|tool_call_start|>[set_options({values})]<|tool_call_end|>"
    message = toolgrammar.parse("lfm2", text)  # (the backslash search is a marker search too)
    assert len(json.loads(message.tool_calls[0].function.arguments)) == 2000
    assert scans.chars < 5 * len(
        text
    ), f"{scans.chars} characters searched for a {len(text)}-char output"


@pytest.mark.parametrize(
    "family, text, content",
    [
        # (Mistral's opener is a special token: it goes back without itself)
        ("mistral", 'x [TOOL_CALLS][{"]=} 1;_[TOOL_CALLS]"]]', 'x [{"]=} 1;_"]]'),
        ("hermes", '<tool_call>{"]=} 1;_<tool_call>"]]', '<tool_call>{"]=} 1;_<tool_call>"]]'),
    ],
)
def test_a_key_whose_quote_closes_past_the_next_marker_is_no_call(
    family: str, text: str, content: str
) -> None:
    """The whole-object shortcut read an escaped key whose closing quote lay past the call's
    next marker and raised; the object is not whole there, so the text is read as a stream
    reads it (found by `toolgrammar check`)."""
    whole = toolgrammar.parse(family, text)
    parser = toolgrammar.StreamParser(family)
    deltas = [d for ch in text for d in parser.feed(ch)] + parser.finish("stop")
    streamed = toolgrammar.assemble(deltas)
    assert (whole.content, whole.tool_calls) == (content, [])
    assert (streamed.content, streamed.tool_calls) == (content, [])


def _opener_before_name(family: str) -> str:
    """What the family writes before a call's name: a call opener with no name end after it."""
    text = toolgrammar.render(family, [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    return text[: text.index("get_weather")]


OPENED = [f for f in toolgrammar.families() if _opener_before_name(f).strip()]  # not pythonic


@pytest.mark.parametrize("family", OPENED)
def test_repeated_openers_with_no_name_end_are_read_in_linear_work(
    family: str, scans: ScanMeter
) -> None:
    # each opener searched the whole rest of the output for its name's end: gemma4 and
    # mistral took 2-4 s for 100K characters of openers, over 20 s for 300K
    opener = _opener_before_name(family)
    work = []
    for size in (10_000, 40_000):
        text = opener * (size // len(opener))
        scans.chars = 0
        toolgrammar.parse(family, text)
        work.append(scans.chars)
    assert work[1] <= 5 * work[0], f"4x the openers: {work[0]} then {work[1]} characters searched"


def test_a_long_python_keyword_streams_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    # every 16-char delta of a growing keyword re-read the whole keyword from its start:
    # 100K characters took 6 s; no keyword is longer than a name may be, so it is read once
    from toolgrammar.runtime import python_calls

    scanned = [0]
    key = python_calls._KEY

    class Counting:
        def match(self, text: str, pos: int, endpos: int = 2**62):  # type: ignore[no-untyped-def]
            scanned[0] += min(endpos, len(text)) - pos
            return key.match(text, pos, endpos)

    monkeypatch.setattr(python_calls, "_KEY", Counting())
    text = "[get_weather(" + "a" * 40_000 + "=1)]"
    parser, streamed = _feed_all("pythonic", [text[i : i + 16] for i in range(0, len(text), 16)])
    assert scanned[0] < 10 * len(text), f"{scanned[0]} characters matched for {len(text)}"
    assert streamed == toolgrammar.parse("pythonic", text, TOOLS, ids="sequential")


def test_many_distinct_params_keep_the_caches_bounded() -> None:
    # each new params value makes a spec of its own; the compiled tables of every one used
    # to stay in memory for good
    from toolgrammar.runtime import tables

    for n in range(600):
        suffix = f":{n:08x}"
        text = f"<tool_calls{suffix}><tool_call{suffix}>get_weather</tool_call{suffix}>"
        message = toolgrammar.parse(
            "hy_v4", text, TOOLS, params={"suffix": suffix}, reasoning_open=False
        )
        assert [c.function.name for c in message.tool_calls] == ["get_weather"]
        assert len(tables._COMPILED) <= tables._COMPILED_LIMIT
        assert len(tables._BY_ID) <= tables._COMPILED_LIMIT


def test_the_compiled_family_cache_is_keyed_by_value() -> None:
    # a spec filled again with the same params (its own cache let the first go) is an equal
    # spec of its own: its tables are found, not compiled again
    from toolgrammar.runtime import params, tables

    spec = toolgrammar.get_spec("hy_v4")
    first = params.with_params(spec, {"suffix": ":again"})
    params._filled.cache_clear()
    second = params.with_params(spec, {"suffix": ":again"})
    assert first is not second and first == second
    assert tables.compiled(first) is tables.compiled(second)
    assert tables.compiled(params.with_params(spec, {"suffix": ":other"})) is not tables.compiled(
        first
    )


def _stream(family: str, text: str, size: int, tools=TOOLS):  # type: ignore[no-untyped-def]
    parser = toolgrammar.StreamParser(family, tools, ids="sequential")
    deltas = []
    for i in range(0, len(text), size):
        deltas += parser.feed(text[i : i + size])
    deltas += parser.finish()
    return toolgrammar.assemble(deltas, parser.finish_reason)


def _read(message):  # type: ignore[no-untyped-def]
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
    return message.content, message.reasoning, calls


def _with_key(family: str, key: str) -> str:
    """A call whose second parameter has the name `key`, in the family's markup."""
    call = {"name": "get_weather", "arguments": {"city": "Paris", "kkkk": "v"}}
    return toolgrammar.render(family, [call], TOOLS).replace("kkkk", key)


@pytest.mark.parametrize("family", toolgrammar.families())
def test_a_long_parameter_name_reads_the_same_whole_and_streamed(family: str) -> None:
    # a key past the dialect's key limit (256) was kept by the whole parse and dropped by
    # the stream, which decided before the key's end arrived (qwen3_coder, gemma4,
    # deepseek_v32, minimax_m2): now both decide on the same bounded text
    for length in (200, 250, 255, 256, 257, 300, 5000):
        text = _with_key(family, "k" * length)
        whole = _read(toolgrammar.parse(family, text, TOOLS, ids="sequential"))
        for size in (1, 16):
            assert _read(_stream(family, text, size)) == whole, (length, size)
        ((name, arguments),) = whole[2]
        assert name == "get_weather" and json.loads(arguments)["city"] == "Paris"
        # kept whole or not at all (JSON arguments have no key limit; markup keys longer
        # than 256 characters, their shape such as `name="…"` included, are no parameter)
        assert set(json.loads(arguments)) <= {"city", "k" * length}
        if length <= 200:
            assert json.loads(arguments) == {"city": "Paris", "k" * length: "v"}


@pytest.mark.parametrize("family", toolgrammar.families())
def test_a_long_call_name_is_no_name_in_any_dialect(family: str) -> None:
    # JSON dialects took a 1,000,000-character name; a name is at most 256 characters, as
    # `name(max_len=256)` reads one, whole and streamed
    base = toolgrammar.render(family, [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    for length in (256, 257, 1000):
        text = base.replace("get_weather", "n" * length)
        whole = _read(toolgrammar.parse(family, text, ids="sequential"))
        assert _read(_stream(family, text, 16, tools=None)) == whole, length
        assert all(len(name) <= 256 for name, _ in whole[2]), length
    text = base.replace("get_weather", "n" * 1_000_000)
    assert toolgrammar.parse(family, text).tool_calls == []


# -- hostile outputs over every grammar: linear work, parity, nothing lost ----------------

_HUGE = 5_000  # N: each output is parsed whole at N and 4N characters


class _CountingPattern:
    """A compiled pattern that adds the characters each of its scans went through to a
    counter (a match: what it consumed; a search: up to the end of what it found)."""

    def __init__(self, pattern, meter: ScanMeter) -> None:  # type: ignore[no-untyped-def]
        self._pattern, self._meter = pattern, meter
        self.groupindex, self.pattern = pattern.groupindex, pattern.pattern

    def _count(self, found, pos: int, endpos: int):  # type: ignore[no-untyped-def]
        self._meter.add((found.end() if found else endpos) - pos)
        return found

    def match(self, text: str, pos: int = 0, endpos: int = 2**62):  # type: ignore[no-untyped-def]
        found = self._pattern.match(text, pos, endpos)
        return self._count(found, pos, pos + (found is None))

    def fullmatch(self, text: str, pos: int = 0, endpos: int = 2**62):  # type: ignore[no-untyped-def]
        return self._count(self._pattern.fullmatch(text, pos, endpos), pos, min(endpos, len(text)))

    def search(self, text: str, pos: int = 0, endpos: int = 2**62):  # type: ignore[no-untyped-def]
        return self._count(self._pattern.search(text, pos, endpos), pos, min(endpos, len(text)))


def count_all_scans(monkeypatch: pytest.MonkeyPatch, meter: ScanMeter) -> ScanMeter:
    """The meter's count (`scans`), plus the scans of the runtime's module-level regexes,
    each made to count for the test only. These are module globals, which compiled code
    reads through the module's dict as interpreted code does (the meter's own patterns and
    the markers' searches are counted by the runtime itself; a patched function or method
    would not be reached there)."""
    from toolgrammar.runtime import call_head, item_readers, json_stream, keyvalue_args
    from toolgrammar.runtime import output_end, python_calls

    for module, names in (  # the engine's own: its readers' and the end of output's
        (item_readers, ("_WS",)),
        (call_head, ("_PROSE", "BAD_NAME")),
        (output_end, ("_WORDS", "_BARE_NAME")),
        (
            json_stream,
            ("_PLAIN_STRING", "_WHITESPACE", "_KEY_COLON", "_COMMA", "JSON_WS")
            + ("_STRING_REST", "_KEY_END", "_KEY_BEGUN", "_PLAIN_TO_END", "_TOKEN_TO_END"),
        ),
        (keyvalue_args, ("_SPACE",)),
        (python_calls, ("_SPACE", "_NAME", "_KEY")),
    ):
        for name in names:
            monkeypatch.setattr(module, name, _CountingPattern(getattr(module, name), meter))
    for table in ("_WHOLE_STRINGS", "_SIMPLE_RUNS"):
        patterns = getattr(python_calls, table).items()
        monkeypatch.setattr(
            python_calls, table, {q: _CountingPattern(p, meter) for q, p in patterns}
        )
    return meter


def _hostile(family: str) -> dict[str, Any]:
    """Hostile outputs of about n characters, by kind, for the family: each a function of n."""
    from toolgrammar.runtime.dialects import markup_literals

    literals = sorted(markup_literals(toolgrammar.get_spec(family)), key=lambda s: (-len(s), s))
    call = toolgrammar.render(family, [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    opener = call[: call.index("get_weather")] or "["
    key_at = call.index("city")
    partial = "".join(lit[:-1] + "x" for lit in literals if len(lit) > 1) or "<"
    cuts = [lit[: 1 + i % (len(lit) - 1)] for i, lit in enumerate(literals * 9) if len(lit) > 1]
    fragments = [cut for cut in cuts if not any(lit in cut for lit in literals)]  # no marker
    prose = " word ".join(fragments) or "word"
    out: dict[str, Any] = {
        "openers": lambda n: opener * (n // len(opener)),
        "partial markers": lambda n: partial * (n // len(partial) + 1),
        "huge name": lambda n: opener + "n" * n,
        "huge key": lambda n: call[:key_at] + "k" * n + call[key_at:],
        "huge value": lambda n: call.replace("Paris", "P" * n),
        "many calls": lambda n: call * (n // len(call) + 1),
        "marker fragments": lambda n: (prose + " word ") * (n // len(prose) + 1),
    }
    cut = call[: call.index("Paris") + 2]  # a call cut inside its value, then the next
    out["cut calls"] = lambda n: cut * (n // len(cut) + 1)
    named = opener + "get_weather"
    out["names without arguments"] = lambda n: named * (n // len(named) + 1)
    for run in ("[", "{", '"', "\\", '{"a": ', '["', '\\"', "(", "<", "="):
        out["run of " + run] = (lambda run: lambda n: opener + "get_weather" + run * n)(run)
    # in prose: a lookahead opener (`&"["`, `&"{"`) at every character
    for run in ("[", "{", "[ ", "{\n", "[,", ";", "[{", "[a", '{"'):
        out["prose run of " + run] = (lambda run: lambda n: "Text " + run * (n // len(run)))(run)
    out["unclosed string of backslashes"] = lambda n: call[:key_at] + "k='" + "\\" * n
    return out


# the hostile text is the whole output of a prompt that opened no reasoning and no call
# (functionary_v32's prompt ends with `>>>`, after which `Text {` would be a call's name)
_NOTHING_OPEN = {"reasoning_open": False, "block_open": False}


def _kinds() -> list[str]:
    return list(_hostile("hermes"))


@pytest.mark.parametrize("family", toolgrammar.families())
def test_hostile_outputs_are_read_in_linear_work_the_same_streamed(
    family: str, monkeypatch: pytest.MonkeyPatch, scans: ScanMeter
) -> None:
    # repeated openers, partial markers, runs of brackets, quotes and backslashes, huge
    # names, keys and values, thousands of calls, prose of marker fragments: 4x the output
    # is at most ~4x the work (characters scanned by marker searches and the runtime's own
    # regexes), whole and 16-char streaming agree, and no text is lost
    from toolgrammar.runtime.dialects import markup_literals

    hostile = _hostile(family)
    wholes = {}
    scanned = count_all_scans(monkeypatch, scans)
    for kind, make in hostile.items():
        work = []
        for size in (_HUGE, 4 * _HUGE):
            text = make(size)
            scanned.chars = 0
            wholes[kind, size] = toolgrammar.parse(family, text, TOOLS, **_NOTHING_OPEN)
            work.append(scanned.chars)
        assert work[1] <= 5 * work[0] + 1000, f"{kind}: {work[0]} then {work[1]} characters scanned"
    monkeypatch.undo()
    for kind, make in hostile.items():
        text = make(_HUGE)
        parser = toolgrammar.StreamParser(family, TOOLS, **_NOTHING_OPEN)
        deltas = [d for i in range(0, len(text), 16) for d in parser.feed(text[i : i + 16])]
        streamed = toolgrammar.assemble(deltas + parser.finish())
        assert _read(streamed) == _read(wholes[kind, _HUGE]), kind
    wholes = {kind: wholes[kind, 4 * _HUGE] for kind in hostile}
    calls = wholes["many calls"].tool_calls
    assert len(calls) == len(hostile["many calls"](4 * _HUGE)) // len(hostile["many calls"](0))
    assert all(json.loads(c.function.arguments) == {"city": "Paris"} for c in calls)
    ((value_call),) = wholes["huge value"].tool_calls
    assert json.loads(value_call.function.arguments) == {"city": "P" * 4 * _HUGE}
    name = wholes["huge name"]  # no name is that long: the text goes back
    assert "n" * 4 * _HUGE in (name.content or "") + (name.reasoning or "")
    assert name.tool_calls == []
    partial = hostile["partial markers"](4 * _HUGE)
    literals = markup_literals(toolgrammar.get_spec(family))
    if not any(lit in partial for lit in literals if len(lit) > 1):  # (a marker itself)
        assert (wholes["partial markers"].content, wholes["partial markers"].tool_calls) == (
            partial,  # whitespace and all (verbatim)
            [],
        )
    for kind in (kind for kind in hostile if kind.startswith("prose run of ")):
        text = hostile[kind](4 * _HUGE)  # no call opens there: the text comes back as it is
        assert (wholes[kind].content, wholes[kind].tool_calls) == (text, []), kind
    prose = hostile["marker fragments"](4 * _HUGE)
    assert (wholes["marker fragments"].content, wholes["marker fragments"].tool_calls) == (
        prose,
        [],
    )


def _json_name_openings(family: str) -> list[tuple[str, Any]]:
    """Corpus texts of `family` cut right where a JSON call's name begins (after the opening
    quote of its name value, or of the key that is the name), with the case they come from."""
    import re

    from support.corpus_format import all_cases
    from toolgrammar.runtime.spec import JsonCall, JsonCallArray

    spec = toolgrammar.family_spec(family)
    items = [i for s in spec.shapes for i in s.call if isinstance(i, (JsonCall, JsonCallArray))]
    if not items:
        return []
    keys = "|".join(re.escape(k) for item in items for k in item.name)
    pattern = r'\{\s*"' if any(item.name_is_key for item in items) else rf'"(?:{keys})"\s*:\s*"'
    found = []
    for case in all_cases():
        if case.family == family and (at := re.search(pattern, case.text)) is not None:
            found.append((case.text[: at.end()], case))
    return found[:2]


JSON_NAME_GRAMMARS = [g for g in grammars() if _json_name_openings(g)]


def test_the_json_name_grammars_are_found() -> None:
    assert {"hermes", "llama3_json", "mistral", "apertus", "xlam"} <= set(JSON_NAME_GRAMMARS)


@pytest.mark.parametrize("family", JSON_NAME_GRAMMARS)
def test_an_unterminated_json_call_name_is_not_held_whole(family: str) -> None:
    """A call name still open after more text than any name can take (256 characters, each
    as a surrogate pair's escapes at most) names no call, decided there: the text goes
    back as it arrives instead of being held to the end of the output (1 MB of name held
    1 MB twice), and the whole parse agrees with every streaming (docs/policies.md)."""
    for opening, case in _json_name_openings(family):
        text = opening + "a" * 20_000
        parser = toolgrammar.StreamParser(family, case.tools, **case.options)
        released = 0
        for at in range(0, len(text), 1000):
            deltas = parser.feed(text[at : at + 1000])
            released += sum(len(d.content or "") + len(d.reasoning or "") for d in deltas)
        assert released >= 20_000 - 4_000, f"only {released} characters went out"
        for finish in ("stop", "length"):
            message = toolgrammar.parse(family, text, case.tools, finish, **case.options)
            back = (message.content or "") + (message.reasoning or "")  # where it came from
            assert "a" * 19_000 in back  # no call named by it (calls before it stand)
            assert all("aaaa" not in call.function.name for call in message.tool_calls)
        near = opening + "a" * 3_200 + '", "arguments": {}}'  # the bound lies inside
        found = check_text(
            family, near, case.tools, case.options, cuts=[len(near)], splittings="random"
        )
        assert not found, "\n".join(map(str, found[:3]))
