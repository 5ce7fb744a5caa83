"""A long-running process keeps every cache bounded (bench/long_running.py, shortened).

2,000 requests with rotating tools (the same, equal, changed in place, ever new), params,
options and families, streamed in random deltas: every cache the runtime keeps between
requests stays at or below its bound. It counts entries, never time or RSS; the full
100,000-request run, with its RSS figure, is in docs/benchmarks.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import long_running  # noqa: E402
from toolgrammar.runtime import schemas  # noqa: E402


def test_caches_stay_bounded_over_many_requests() -> None:
    result = long_running.run(2000, 4, seed=1, report=lambda line: None)
    assert result["over"] == []
    # the requests made more distinct schemas than the cache holds: eviction was exercised
    assert len(schemas._ROOTS) == schemas._ROOTS_LIMIT
    sizes = long_running.cache_sizes()
    assert all(size <= bound for size, bound in sizes.values()), sizes
