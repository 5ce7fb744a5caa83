"""A key or a name read by a grammar's pattern costs what its text costs (issue 28): the
patterns run on what the model writes, up to the 256-character cap, once per parameter.

MiniMax-M2's and dots' key pattern read a lazy key between two `\\s*` runs: a key of 240
spaces, a digit and a mismatched quote took 0.1 s (the regex tried every split of the spaces
between the three), so 100 KB of such parameters took 40 s. The compiler now refuses patterns
that backtrack exponentially (`compiler/regex_cost.py`); these two were polynomial, and are
possessive now. A ratio with a wide margin, not a time: 16 times the key, at most 32 times
the cost (the old patterns gave thousands).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import toolgrammar

TOOLS = json.loads((Path(__file__).parent / "corpus" / "tools.json").read_text(encoding="utf-8"))
WRAPPERS = {
    "minimax_m2": (
        '<minimax:tool_call><invoke name="get_weather">',
        "</invoke></minimax:tool_call>",
    ),
    "dots": ('<dots_function_call><invoke name="get_weather">', "</invoke></dots_function_call>"),
}
HOSTILE_KEYS = [
    lambda width, i: '"' + " " * width + str(i) + " " * 5 + "'",  # quotes that do not pair
    lambda width, i: '"a' + " " * width + f"b{i}'",
    lambda width, i: "'" + " a" * (width // 2) + f"{i}" + " " * 5 + '"',
]


def _cost(text: str, family: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        toolgrammar.parse(family, text, TOOLS)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("family", sorted(WRAPPERS))
@pytest.mark.parametrize("shape", range(len(HOSTILE_KEYS)))
def test_a_hostile_key_costs_linear_in_its_length(family: str, shape: int) -> None:
    opener, closer = WRAPPERS[family]

    def output(width: int) -> str:
        key = HOSTILE_KEYS[shape]
        params = "".join(f"<parameter name={key(width, i)}>x</parameter>" for i in range(40))
        return opener + params + closer

    short, long = _cost(output(15), family), _cost(output(240), family)
    assert long <= 32 * max(short, 1e-4), (short, long)
