"""The shared marker sets: one per set of literals, and a bounded cache of them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgrammar.runtime import markers as markers_module
from toolgrammar.runtime.markers import BY_TUPLE_LIMIT, free_run, markers


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


LITERALS = ["</arg_value>", "<arg_key>", "</tool_call>", "<![CDATA[", "</parameter\n", "\n\n"]
ALPHABET = ["<", "/", "a", "r", "g", "_", "v", "</arg_value>", "</arg", "<![CD", "x", "\n", "]"]


@given(st.lists(st.sampled_from(ALPHABET), max_size=8), st.integers(0, 40))
@settings(max_examples=3000, deadline=None)
def test_a_free_run_reads_to_the_end_exactly_where_nothing_is_found_or_held(
    pieces: list[str], start: int
) -> None:
    """`free_run` stands in for a search that finds nothing and a held tail of nothing
    (`xml_params` takes a streamed value's text in one match of it)."""
    text = "".join(pieces)
    start = min(start, len(text))
    found = markers(LITERALS)
    run = re.compile(free_run(LITERALS))
    nothing = found.search(text, start)[0] < 0 and found.held(text, start) == 0
    assert (run.match(text, start).end() == len(text)) == nothing
