"""The invariants of docs/invariants.md over every corpus case of every grammar.

Exhaustive over cut points (every prefix of every case is an output that stopped
there), with 1-char, random and whole splittings of each prefix; hypothesis adds random
splittings, truncations and mutations on top.

Every invariant holds under every policy setting (docs/policies.md): the cases are read
with their own options at every cut, "nothing lost" is checked at every third cut with the
project's own policies and every ninth under each stack's `compat` profile (the three
together cover every third cut), and each hypothesis example draws a `compat` value, and
now and then explicit switches, as one more part of the example rather than multiplying
the examples.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import Case, all_cases
from toolgrammar.check.helpers import mutate_span
from toolgrammar.check.invariants import check_text, comparable, run, split_at
from toolgrammar.runtime.policies import COMPAT, SWITCHES

CASES = all_cases()
FAMILIES = sorted({case.family for case in CASES})
COMPATS = (None, *COMPAT)


@st.composite
def policies(draw: st.DrawFn) -> dict[str, str | None]:
    """A `compat` value, and a third of the time explicit switches (each of any value)."""
    chosen: dict[str, str | None] = {"compat": draw(st.sampled_from(COMPATS))}
    if draw(st.integers(0, 2)) == 0:
        for name, values in SWITCHES.items():
            value = draw(st.sampled_from((None, *values)))
            if value is not None:
                chosen[name] = value
    return chosen


def _with(options: dict[str, object], policy: dict[str, str | None]) -> dict[str, object]:
    """A case's options read under `policy`: its own policies, where it sets them, stay."""
    return {**{k: v for k, v in policy.items() if k not in options}, **options}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_cut_every_split(case: Case) -> None:
    violations = check_text(
        case.family, case.text, case.tools, case.options, finish=case.finish, seed=case.line
    )
    assert not violations, "\n".join(map(str, violations[:5]))


@pytest.mark.parametrize("compat", COMPATS, ids=str)
@pytest.mark.parametrize("family", FAMILIES)
def test_nothing_lost_at_every_third_cut_under_every_compat(
    family: str, compat: str | None
) -> None:
    # "nothing lost" reads each cut twice more (cut short, and ended at a normal stop) against
    # the whole output: every third cut with the project's own policies, every ninth under
    # each stack's profile (shifted so that the three cover every third cut between them)
    offset = COMPATS.index(compat)
    step = 3 if compat is None else 9
    for case in (c for c in CASES if c.family == family):
        options = _with(case.options, {"compat": compat})
        cuts = list(range(0 if compat is None else 3 * offset - 2, len(case.text) + 1, step))
        violations = check_text(
            family, case.text, case.tools, options, cuts=cuts, finish=case.finish, lost=True,
            splittings=False,
        )  # fmt: skip
        assert not violations, f"{case.id}: " + "\n".join(map(str, violations[:3]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CASES), st.data(), policies())
def test_every_invariant_at_a_cut_under_any_policy(
    case: Case, data: st.DataObject, policy: dict[str, str | None]
) -> None:
    # prefix, termination, parity (1-char and random splittings), UTF-8 and nothing lost at
    # one cut, the case read under a drawn compat value and switches
    cut = data.draw(st.integers(0, len(case.text)))
    options = _with(case.options, policy)
    violations = check_text(
        case.family, case.text, case.tools, options, seed=case.line, cuts=[cut],
        finish=data.draw(st.sampled_from([case.finish, "stop", "length"])), lost=True,
    )  # fmt: skip
    assert not violations, "\n".join(map(str, violations[:3]))


@st.composite
def case_and_split(draw: st.DrawFn) -> tuple[Case, int, list[int]]:
    case = draw(st.sampled_from(CASES))
    cut = draw(st.integers(0, len(case.text)))
    points = sorted(draw(st.sets(st.integers(1, max(1, cut - 1)), max_size=40)))
    return case, cut, [p for p in points if 0 < p < cut]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case_and_split(), policies())
def test_random_splits_agree_with_whole(
    sample: tuple[Case, int, list[int]], policy: dict[str, str | None]
) -> None:
    case, cut, points = sample
    text = case.text[:cut]
    options = _with(case.options, policy)
    _, whole = run(case.family, [text], case.tools, options, case.finish)
    _, split = run(case.family, split_at(text, points), case.tools, options, case.finish)
    assert comparable(split) == comparable(whole)
    for call in whole.tool_calls:
        assert isinstance(json.loads(call.function.arguments), dict)


def _mutate(text: str, ops: list[tuple[int, int, int]]) -> str:
    """Delete, duplicate or swap spans: markers end up cut, doubled, nested, out of order."""
    for kind, a, b in ops:
        if not text:
            break
        text = mutate_span(text, kind, a, b)
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(CASES),
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=4
    ),
    st.lists(st.integers(1, 500), max_size=30),
    policies(),
)
def test_mutated_markup_never_raises_and_keeps_parity(
    case: Case,
    ops: list[tuple[int, int, int]],
    points: list[int],
    policy: dict[str, str | None],
) -> None:
    text = _mutate(case.text, ops)
    points = sorted({p for p in points if 0 < p < len(text)})
    options = _with(case.options, policy)
    _, whole = run(case.family, [text], case.tools, options)
    _, split = run(case.family, split_at(text, points), case.tools, options)
    assert comparable(split) == comparable(whole)
    for call in whole.tool_calls:
        assert isinstance(json.loads(call.function.arguments), dict)


MARKUP_ALPHABET = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<function=",
        "</function>",
        "<parameter=",
        "</parameter>",
        ">",
        "<",
        "{",
        "}",
        "[",
        "]",
        '"',
        "\\",
        ":",
        ",",
        "\n",
        " ",
        "a",
        "é",
        "😀",
        "name",
        "arguments",
        "<think>",
        "</think>",
        "<|tool_calls_section_begin|>",
        "<|tool_call_begin|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "<|tool_calls_section_end|>",
        "functions.get_weather:0",
        "get_weather",
        "true",
        "12",
        "\\u00",
        "null",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["qwen3_coder", "hermes", "kimi_k2"]),
    st.lists(MARKUP_ALPHABET, max_size=60),
    st.lists(st.integers(1, 400), max_size=20),
    policies(),
)
def test_markup_soup_never_raises(
    family: str, words: list[str], points: list[int], policy: dict[str, str | None]
) -> None:
    text = "".join(words)
    points = sorted({p for p in points if 0 < p < len(text)})
    tools = CASES[0].tools
    _, whole = run(family, [text], tools, policy)
    _, split = run(family, split_at(text, points), tools, policy)
    assert comparable(split) == comparable(whole)
    for call in whole.tool_calls:
        assert isinstance(json.loads(call.function.arguments), dict)


def test_every_registered_family_has_corpus_cases() -> None:
    specs = {toolgrammar.runtime.registry.get_spec(n).name for n in toolgrammar.families()}
    assert specs <= {case.family for case in CASES}
