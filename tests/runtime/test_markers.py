"""The shared marker sets: one per set of literals, and a bounded cache of them."""

from __future__ import annotations

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
