"""A unit of text read twice the same is replayed after (`runtime/repeats.py`): the parse must
be exactly the one the engine makes reading every repetition, in every grammar."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import toolgrammar
from toolgrammar.runtime import engine as engine_module
from toolgrammar.runtime import repeats
from toolgrammar.runtime.dialects import markup_literals
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.registry import get_spec

from support.corpus_format import TOOLS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import hostile  # noqa: E402

SMALL_MARGIN = 2048  # (the real one, 128K, makes every text here ten times longer)
CALL = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
OTHER = {"name": "get_weather", "arguments": {"city": "Rome"}}
OPTIONS = ({"reasoning_open": False, "block_open": False}, {})


def _units(family: str) -> dict[str, str]:
    """The repeated texts of `bench/hostile.py` (markers, openers, cut calls), and whole
    calls as the family writes them, alone, with content, two of them."""
    units = hostile.patterns(family, ("marker", "opener"))
    for label, calls, content in (
        ("call", [CALL], None),
        ("content and a call", [CALL], "Sure. "),
        ("two calls", [CALL, OTHER], None),
    ):
        try:
            units[label] = toolgrammar.render(family, calls, TOOLS, content=content)
        except toolgrammar.RenderError:
            pass
    return units


def _parse(family: str, text: str, options: dict, reason: str = "stop") -> object:
    try:
        return toolgrammar.parse(family, text, TOOLS, reason, ids="sequential", **options)
    except Exception as error:  # (the same error both ways is the same reading)
        return repr(error)


@pytest.mark.parametrize("family", hostile.grammars())
def test_replayed_repeats_read_as_reading_each(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "MARGIN", SMALL_MARGIN)
    monkeypatch.setattr(repeats, "MARGIN", SMALL_MARGIN)
    replayed = []
    replay = repeats._replay
    monkeypatch.setattr(repeats, "_replay", lambda *args: replayed.append(1) or replay(*args))
    cases = [
        (name, before + unit * (3 * SMALL_MARGIN // len(unit) + 20) + after, options)
        for name, unit in _units(family).items()
        for before, after in (("", ""), ("Hi ", " end"))
        for options in OPTIONS
    ]
    fast = [_parse(family, text, options) for _, text, options in cases]
    monkeypatch.setattr(Engine, "_replays", False)
    for (name, text, options), read in zip(cases, fast):
        assert read == _parse(family, text, options), (name, options)
    assert replayed  # (something in every grammar repeats: a call, a cut call, a marker)


# what a text is read with besides: reasoning the prompt opened or not, and policy switches
# that hold calls, give them back as text or keep every space (docs/policies.md)
SWITCHES = (
    {"reasoning_open": False},
    {"reasoning_open": True},
    {"unknown_tools": "text", "reasoning_open": False},
    {"unknown_tools": "drop"},
    {"partial_calls": "text", "malformed_calls": "drop"},
    {"whitespace": "verbatim", "reasoning_open": False},
)


@pytest.mark.parametrize("family", hostile.grammars())
def test_replays_amid_other_text_read_as_reading_each(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a unit of one to three pieces (markers, words, whole calls, one to a tool not listed)
    # repeated between others, read with two of `SWITCHES`, ended by a stop or cut at `length`
    monkeypatch.setattr(engine_module, "MARGIN", SMALL_MARGIN // 2)
    monkeypatch.setattr(repeats, "MARGIN", SMALL_MARGIN // 2)
    pieces = [*markup_literals(get_spec(family)), "x", " ", "\n", "Hello world. ", '{"a": 1}']
    pieces += [unit for name, unit in _units(family).items() if not name.startswith("marker")]
    try:
        pieces.append(toolgrammar.render(family, [{"name": "nope", "arguments": {"q": "x"}}]))
    except toolgrammar.RenderError:
        pass
    rng = random.Random(family)
    cases = []
    for _ in range(4):
        unit = "".join(rng.choices(pieces, k=rng.randint(1, 3)))
        around = ["".join(rng.choices(pieces, k=rng.randint(0, 4))) for _ in range(2)]
        text = around[0] + unit * (3 * SMALL_MARGIN // 2 // len(unit) + 9) + around[1]
        cases += [
            (text, reason, options)
            for reason in ("stop", "length")
            for options in rng.sample(SWITCHES, 2)
        ]
    fast = [_parse(family, text, options, reason) for text, reason, options in cases]
    monkeypatch.setattr(Engine, "_replays", False)
    for (text, reason, options), read in zip(cases, fast):
        assert read == _parse(family, text, options, reason), (text[:200], reason, options)


@pytest.mark.parametrize(
    "family, unit",
    [
        ("functionary_v31", "<|python_tag|>"),  # a call each, its code empty
        ("mistral", "[TOOL_CALLS]get_w"),  # three shapes tried, each given back
        ("hermes", toolgrammar.render("hermes", [CALL]) + "\n"),
    ],
)
def test_a_megabyte_repeated_is_replayed_with_ids_of_its_own(
    family: str, unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # at the real margin; random ids: each replayed call draws its own
    text = unit * ((1 << 20) // len(unit))
    message = toolgrammar.parse(family, text, TOOLS)
    ids = [call.id for call in message.tool_calls]
    assert len(set(ids)) == len(ids)
    monkeypatch.setattr(Engine, "_replays", False)
    slow = toolgrammar.parse(family, text, TOOLS)
    assert message.content == slow.content
    assert [c.function for c in message.tool_calls] == [c.function for c in slow.tool_calls]
