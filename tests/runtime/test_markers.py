"""The shared marker sets: one per set of literals, and a bounded cache of them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgrammar.runtime import markers as markers_module
from toolgrammar.runtime.markers import BY_TUPLE_LIMIT, markers


def test_a_tuple_and_a_set_of_the_same_literals_share_one_marker_set() -> None:
    stops = ("</tool_call>", "<tool_call>")
    assert markers(stops) is markers(tuple(reversed(stops))) is markers({*stops})
    assert markers(stops).search("a <tool_call>", 0) == (2, "<tool_call>")


def test_the_tuple_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    # a process that fills many distinct `params` asks for ever new stop tuples: the cache
    # keeps at most its bound, and the tuples still in use stay in it
    markers_module._by_tuple.cache_clear()
    kept = ("<keep>", "</keep>")
    first = markers(kept)
    for n in range(BY_TUPLE_LIMIT + 1000):
        markers((f"<t{n}>", f"</t{n}>"))
        if n % 1000 == 0:
            assert markers(kept) is first  # used again: the most recent, not evicted
        assert markers_module._by_tuple.cache_info().currsize <= BY_TUPLE_LIMIT
    hits = markers_module._by_tuple.cache_info().hits
    assert markers(kept) is first and markers_module._by_tuple.cache_info().hits == hits + 1
    misses = markers_module._by_tuple.cache_info().misses
    markers(("<t0>", "</t0>"))  # the oldest, not used since: evicted, made again
    assert markers_module._by_tuple.cache_info().misses == misses + 1


@given(
    st.lists(st.text("<|ab>", min_size=1, max_size=6), min_size=1, max_size=5),
    st.text("<|ab>x", max_size=10),
    st.integers(0, 4),
)
@settings(max_examples=300, deadline=None)
def test_a_marker_may_grow_while_the_text_from_it_still_begins_a_longer_one(
    literals: list[str], text: str, at: int
) -> None:
    # `may_grow` answers from a table of the longer markers' beginnings: as the definition,
    # whether some longer marker the found one begins with begins with the text from it
    found = markers(literals)
    at = min(at, len(text))
    for lit in found.literals:
        longer = [o for o in found.literals if len(o) > len(lit) and o.startswith(lit)]
        with_lit = text[:at] + lit + text[at:]
        for end in range(at + len(lit), len(with_lit) + 1):  # the text cut anywhere after it
            cut = with_lit[:end]
            rest = cut[at : at + max(map(len, longer), default=0) + 1]
            expected = any(o.startswith(rest) for o in longer)
            assert found.may_grow(cut, at, lit) == expected, (lit, cut)


@given(
    st.lists(st.text("<|ab>", min_size=1, max_size=6), min_size=1, max_size=5),
    st.text("<|ab>x", max_size=12),
    st.integers(0, 12),
)
@settings(max_examples=300, deadline=None)
def test_text_without_the_lead_holds_no_marker_nor_the_start_of_one(
    literals: list[str], text: str, pos: int
) -> None:
    # `lead` is the one character every marker begins with, or "": where the text from
    # `pos` has no lead, the search finds nothing and nothing is held (the readers' one
    # `str.find` before any search: `JsonCallReader.read`)
    found = markers(literals)
    pos = min(pos, len(text))
    firsts = {lit[0] for lit in found.literals}
    assert found.lead == (next(iter(firsts)) if len(firsts) == 1 else "")
    if found.lead and found.lead not in text[pos:]:
        assert found.search(text, pos) == (-1, "")
        assert found.held(text, pos) == 0


def test_the_lead_is_the_markers_one_first_character() -> None:
    assert markers(("<|end_message|>", "<|message_model|>")).lead == "<"
    assert markers(("</tool_call>", "<tool_call>", "[TOOL_CALLS]")).lead == ""
    assert markers(()).lead == ""
