"""Call openers passed over where the call would only give its text back (`Opening`,
`tables._gives_back`): the scan must read every output exactly as it reads it with that
shortcut off, whole and streamed, whatever surrounds the openers."""

from __future__ import annotations

import random

import pytest

import toolgrammar
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.dialects import markup_literals
from toolgrammar.runtime.tables import compiled

from support.corpus_format import TOOLS


def _quick_families() -> list[str]:
    """Every family (registered name, no alias) with an opener the scan may pass over."""
    found = []
    for name in toolgrammar.families():
        spec = get_spec(name)
        family = compiled(spec)
        quick = family.quick_content_markers is not family.content_markers
        if name == spec.name and (
            quick or family.quick_section_markers is not family.section_markers
        ):
            found.append(name)
    return found


QUICK = _quick_families()


def test_the_families_that_need_it_pass_over_openers() -> None:
    # a lookahead opener (`&"["`, `&"{"`) before a naming dialect, and a literal opener
    # whose call reads such a dialect next
    assert {"pythonic", "llama4_pythonic", "llama3_json", "xlam", "hermes"} <= set(QUICK)
    assert "mistral" in QUICK  # (a special token opener, passed over too)


def _pieces(family: str) -> list[str]:
    """What the outputs are made of: the family's markers and their first characters,
    brackets, separators, spaces, words, a whole call."""
    literals = sorted(markup_literals(get_spec(family)))
    call = toolgrammar.render(family, [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    return [
        *literals,
        *{lit[0] for lit in literals},
        *"[]{}(),;:\"' \n\t\f",
        "get_weather",
        "get_weather(",
        '"name": ',
        "x",
        "[{",  # an element with no key (json_call_array's `Opening.then`)
        "[a",  # a name no `(` follows (python_calls')
        "a ",
        call,
    ]


def _read(family: str, text: str, size: int) -> tuple:
    """The whole parse and the stream in `size`-character deltas, as comparable values."""
    whole = toolgrammar.parse(family, text, TOOLS, ids="sequential", reasoning_open=False)
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential", reasoning_open=False)
    deltas = [d for i in range(0, len(text), size) for d in parser.feed(text[i : i + size])]
    streamed = toolgrammar.assemble(deltas + parser.finish())
    return whole, streamed


@pytest.mark.parametrize("family", QUICK)
def test_passing_over_openers_reads_as_making_their_calls(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pieces = _pieces(family)
    rng = random.Random(family)
    texts = ["".join(rng.choices(pieces, k=rng.randint(1, 24))) for _ in range(300)]
    quick = [_read(family, text, 1 + n % 5) for n, text in enumerate(texts)]
    monkeypatch.setattr(Engine, "_quick", False)
    slow = [_read(family, text, 1 + n % 5) for n, text in enumerate(texts)]
    for text, fast_read, slow_read in zip(texts, quick, slow):
        assert fast_read == slow_read, text


def _read_reasoning(family: str, text: str, size: int, finish: str) -> tuple:
    """`_read` inside reasoning the prompt opened, ended by `finish`."""
    options = {"ids": "sequential", "reasoning_open": True}
    whole = toolgrammar.parse(family, text, TOOLS, finish, **options)
    parser = toolgrammar.StreamParser(family, TOOLS, **options)
    deltas = [d for i in range(0, len(text), size) for d in parser.feed(text[i : i + size])]
    deltas += parser.finish(finish)
    return whole, toolgrammar.assemble(deltas, parser.finish_reason)


@pytest.mark.parametrize("family", QUICK)
def test_passing_over_openers_in_reasoning_reads_as_holding_them(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an opener inside reasoning is held until the text after it decides (`_considered`);
    # the pass read the whole text and the whitespace after the opener with it, so a run of
    # whitespace longer than the held opener's window, or a closer beginning in it, read
    # otherwise (cohere_command3 at `length`: `a<|START_ACTION|>` + 70 spaces + `x`)
    pieces = [*_pieces(family), " " * 70, "\n" * 40]
    rng = random.Random(family + " reasoning")
    texts = ["".join(rng.choices(pieces, k=rng.randint(1, 16))) for _ in range(60)]
    texts += ["a" + opener + " " * 70 + "x" for opener, _ in get_spec(family).openers[:1]]
    cases = [(text, 1 + n % 5, ("length", "stop")[n % 2]) for n, text in enumerate(texts)]
    quick = [_read_reasoning(family, *case) for case in cases]
    monkeypatch.setattr(Engine, "_quick", False)
    slow = [_read_reasoning(family, *case) for case in cases]
    for case, fast_read, slow_read in zip(cases, quick, slow):
        assert fast_read == slow_read, case
        assert fast_read[0] == fast_read[1], case


@pytest.mark.parametrize(
    "run", ["[", "{", "[ ", "{\n", "[,", ";", "<|python_start|>", "[{", "[ {\n", "[a", "[ab  "]
)
@pytest.mark.parametrize("family", ["pythonic", "llama4_pythonic", "llama3_json", "xlam"])
def test_a_run_of_openers_in_prose_makes_no_call(family: str, run: str) -> None:
    # each of these used to make and drop one call per opener (~20 µs a character; `[{`
    # and `[a`, which fail at their second or third character, ~5 µs)
    made = []
    original = Engine._new_call

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(1)
        return original(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Engine, "_new_call", counting)
        text = "Prose " + run * 8000 + " end."
        message = toolgrammar.parse(family, text, TOOLS)
    assert message.content == text.strip() and message.tool_calls == []
    assert len(made) <= 2, f"{len(made)} calls made for {len(text)} characters"


@pytest.mark.parametrize(
    "family, run",
    [
        ("functionary_v32", ">>>"),  # two shapes: a bare name, and `python` by its pattern
        ("functionary_v32", ">>>get_w"),  # a name with no `{` within twice its reach
        ("functionary_v31", "<function="),
        ("beam", "to="),  # a pattern name (`[^\s<]+`) with no end marker near
        ("muse", "to="),  # message headers: `to=to` is no recipient and header end
        ("gpt-oss", "to="),
        ("gpt-oss", "<|channel|>commentary to="),
        ("hermes", "<tool_call>"),  # a JSON call object that cannot begin with `<`
        ("apertus", "<|tools_prefix|>"),  # a JSON call array, the same
        ("glm45", "<tool_call>"),  # a bare name holding `>` before any end marker
        ("qwen3_coder", "<tool_call>"),  # a required `<function=` that is not there
        ("command_r_plus", "Action:"),  # an optional "```json" that is not there
        ("firefunction_v2", "functools"),  # the marker without its space
        ("firefunction_v2", " functools"),  # the space read, as the call reads it
        ("lfm2", "<|tool_call_start|>"),  # a Python call list that cannot begin with `<`
        ("xlam", "```json"),  # a lookahead `[` that is not there
        # a special token that opens three shapes, each reading a second one (optional)
        # before it gives up: read with it, and both go back as nothing
        ("mistral", "[TOOL_CALLS]"),
        ("mistral", "[TOOL_CALLS] \n"),
    ],
)
def test_a_run_of_markers_is_passed_over_in_one_match(family: str, run: str) -> None:
    # each of these made (and gave back) one call or one message header per marker, each
    # shape in turn: some µs a marker, 2.3 s for a megabyte of Functionary's `>>>`
    from toolgrammar.runtime.messages import MessageHeaders

    made = []
    new_call, read_header = Engine._new_call, MessageHeaders.read

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(1)
        return new_call(self, *args, **kwargs)

    def reading(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(1)
        return read_header(self, *args, **kwargs)

    text = "Prose " + run * 8000 + " end."
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Engine, "_new_call", counting)
        patch.setattr(MessageHeaders, "read", reading)
        quick = _read(family, text, len(text))[0]
    # (but near the end, where a name may still end within its reach: ~600 characters)
    assert len(made) <= 600, f"{len(made)} calls or headers made for {len(text)} characters"
    quick = quick, _read(family, text, 16)[1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Engine, "_quick", False)
        slow = _read(family, text, len(text))[0], _read(family, text, 16)[1]
    assert quick == slow


def _deltas(family: str, text: str, split: int, trace: object = None) -> list[dict]:
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential", trace=trace)
    deltas = parser.feed(text[:split]) + parser.feed(text[split:]) + parser.finish()
    return [delta.to_dict() for delta in deltas]


def _opener_then_marker_starts(family: str) -> list[tuple[str, int]]:
    """Each opener the scan may pass over or skip (in a section too, after its opener),
    followed by each start of each marker of the family, whole ones included; with where
    the opener ends (a delta ending before it ends ends in a marker's start, held by every
    scan alike)."""
    spec = get_spec(family)
    compiled_family = compiled(spec)
    literals = sorted(markup_literals(spec))
    openers = set(compiled_family.gives_back)  # (passed over, or guarded in the search)
    openers |= compiled_family.quick_content_markers.passable
    openers |= compiled_family.quick_section_markers.passable
    contexts = ["", *sorted(compiled_family.section_opens)[:1]]
    texts = (
        (context + opener + lit[:k], len(context + opener))
        for context in contexts
        for opener in sorted(openers)
        for lit in literals
        for k in range(1, len(lit) + 1)
    )
    return list(dict.fromkeys(texts))


@pytest.mark.parametrize("family", QUICK)
def test_an_opener_then_the_start_of_a_marker_streams_as_the_traced_and_slow_scans(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `<|tool_call_start|><|` ending a delta: the call waits (an empty block is given back
    # only at its closer), so the quick scan must not pass the opener over there; it did,
    # and streamed `<|tool_call_start|><|tool_call_end|>` in three deltas where the traced
    # engine (no quick scan) and the quick scan turned off stream one (so did pythonic's
    # search skipping `[` before `<|python_end|`, and OLMo 3's `<function_calls>` before `<`)
    cases = [
        (text, split)
        for text, opened in _opener_then_marker_starts(family)
        for split in (0, *range(opened, len(text) + 1))
    ]
    quick = [_deltas(family, text, split) for text, split in cases]
    traced = [_deltas(family, text, split, lambda event: None) for text, split in cases]
    monkeypatch.setattr(Engine, "_quick", False)
    slow = [_deltas(family, text, split) for text, split in cases]
    for (text, split), fast_read, traced_read, slow_read in zip(cases, quick, traced, slow):
        assert fast_read == traced_read == slow_read, (text[:split], text[split:])
