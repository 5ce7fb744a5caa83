"""A call whose name is read over several deltas has it read on the next delta before the
engine's loop and the call's item loop run (`call_head._hot_name`): the name's text held
from 0, it waits again while no `until` is in it, it is no longer than the name may reach
and holds nothing no name holds; else the name is read as `_read_name` reads it, and the
loops go on from there. It is a shortcut (`_read_name` arms it only with the shortcuts on):
every feed gives the same deltas with the shortcuts on and off, wherever the deltas cut the
name, its `until` or what follows it, and the corpus goes through it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import all_cases
from support.readers import drawn_cuts, feeds_at
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.registry import families, get_spec
from toolgrammar.runtime.tables import compile_family


def _named_families() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """The families with a name item read from the text: their call openers and the
    markers that end their names."""
    found: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for family in families():
        compiled = compile_family(get_spec(family))
        untils = sorted(
            {u for item, _, _ in compiled.name_reads.values() if not item.fixed for u in item.until}
        )
        if untils:
            found[family] = (tuple(compiled.openers), tuple(untils))
    return found


NAMED = _named_families()
CASES = [case for case in all_cases() if case.family in NAMED]
# what a name's text is made of, and what breaks one
NAME_PIECES = [
    "get_weather",
    "functions.",
    "get_",
    ":0",
    ":12",
    " ",
    "\n",
    "{",
    '{"city": "Paris"}',
    "[",
    '"',
    "prose with words ",
    "é",
    "x" * 40,
]


def per_feed(family: str, text: str, cuts: list[int], **options: Any) -> list[list[dict]]:
    """Each feed's deltas (and finish's) of `text` cut at `cuts`."""
    parser = toolgrammar.StreamParser(family, ids="sequential", **options)
    out = []
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        out.append([delta.to_dict() for delta in parser.feed(text[start:end])])
    out.append([delta.to_dict() for delta in parser.finish("stop")])
    return out


def same_both_ways(family: str, text: str, cuts: list[int], **options: Any) -> None:
    with shortcuts_set(True):
        fast = per_feed(family, text, cuts, **options)
    with shortcuts_set(False):
        slow = per_feed(family, text, cuts, **options)
    assert fast == slow, (family, text, cuts)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_name_in_any_pieces_reads_as_with_the_shortcuts_off(data: st.DataObject) -> None:
    family = data.draw(st.sampled_from(sorted(NAMED)))
    openers, untils = NAMED[family]
    # an opener, then the name's own pieces and its `until` markers, often cut inside one
    until = st.sampled_from([u[:cut] for u in untils for cut in range(1, len(u) + 1)])
    pieces = data.draw(st.lists(st.one_of(st.sampled_from(NAME_PIECES), until), max_size=8))
    opener = data.draw(st.sampled_from(openers))
    text = "Hi " + opener + "".join(pieces) + data.draw(st.sampled_from(["", " end", opener]))
    same_both_ways(family, text, drawn_cuts(data, text, 14), reasoning_open=False)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_corpus_in_any_pieces_reads_as_with_the_shortcuts_off(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES))
    text = case.text
    cuts = drawn_cuts(data, text, 14)
    with shortcuts_set(True):
        fast = feeds_at(case.family, case.tools, text, cuts, case.finish, **case.options)
    with shortcuts_set(False):
        slow = feeds_at(case.family, case.tools, text, cuts, case.finish, **case.options)
    assert fast == slow, (case.name, cuts)


def test_the_corpus_reaches_the_hot_name() -> None:
    """(the comparisons above mean something: names waiting over deltas go through it,
    and both of its answers are given)"""
    waits = reads = 0
    with shortcuts_set(True):
        for case in CASES:
            parser = toolgrammar.StreamParser(case.family, case.tools, **case.options)
            engine = parser._engine
            for at in range(0, len(case.text), 2):
                hot = engine._hot
                parser.feed(case.text[at : at + 2])
                if hot is not None and hot[0].dialect is None:
                    if engine._hot is hot or engine._hot == hot:
                        waits += 1
                    else:
                        reads += 1
    assert waits > 500 and reads > 100, (waits, reads)


def test_a_name_that_grows_past_its_reach_is_no_call() -> None:
    """The hot test says no once the name is longer than it may be: the call goes back as
    text, as it does read item by item."""
    text = "<|tool_call_begin|>" + "n" * 300 + "<|tool_call_argument_begin|>{}"
    for size in (1, 5, 16):
        same_both_ways("kimi_k2", text, list(range(size, len(text), size)))
    with shortcuts_set(True):
        deltas = per_feed("kimi_k2", text, list(range(16, len(text), 16)))
    content = "".join(d.get("content", "") for feed in deltas for d in feed)
    assert "n" * 300 in content


def test_a_name_held_for_a_cut_until_is_asked_again() -> None:
    """`<` no name begins with waits while it may begin the `until` (`<|channel|>…`), and is
    no name once more text shows it does not (hypothesis found the hot read taking the
    first wait for a first character a name may begin with)."""
    same_both_ways("beam", "Hi to=<get_weather", [7], reasoning_open=False)
    same_both_ways("beam", "Hi to=<|chan", [7, 9], reasoning_open=False)
    with shortcuts_set(True):
        deltas = per_feed("beam", "Hi to=<get_weather", [7], reasoning_open=False)
    assert deltas[1] == [{"content": "to=<get_weather"}]
