"""The model outputs the benches stream, written from each family's grammar.

A shape is a list of calls that grows with a count n; its stream at a size is the text of the
smallest n that reaches the size, written by `runtime/render.py` in the family's markup (every
marker in the grammar's canonical spelling, no whitespace the grammar does not need). Nothing
here knows a family: it asks the spec only whether the arguments are a JSON object and whether
the output is channel messages.

  loop         one `edit` call repeating two short string parameters (seed 004's
               old_string/new_string); for JSON arguments one object that keeps adding short
               string members ("k123": "total = 1"), as a JSON parser keeps one value per key
  long_string  one `write_file` call whose `content` string grows to the size
  many_params  one call with many distinct short parameters p0, p1, ...
  many_calls   many small complete calls back to back (get_weather, Paris, 3 days)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.render import render_output
from toolgrammar.runtime.spec import FamilySpec, JsonArgs, JsonCall, JsonCallArray

ROOT = Path(__file__).resolve().parent.parent

Value = str | int
Call = tuple[str, list[tuple[str, Value]]]  # a name and its (key, value) pairs, keys may repeat

# Tools the shapes call beyond the corpus ones (Claude Code's Edit, an open-ended one).
BENCH_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "edit",
            "parameters": {
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_options",
            "parameters": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    },
]


def load_tools() -> list[dict[str, Any]]:
    corpus = json.loads((ROOT / "tests" / "corpus" / "tools.json").read_text(encoding="utf-8"))
    return corpus + BENCH_TOOLS


@lru_cache(maxsize=None)
def spec_of(family: str) -> FamilySpec:
    return with_params(get_spec(family))


def json_arguments(spec: FamilySpec) -> bool:
    """The arguments are one JSON object (a repeated key there is a value overwritten, not a
    parameter the parser must stream again, so the loop adds distinct keys instead)."""
    return any(isinstance(item, (JsonArgs, JsonCall, JsonCallArray)) for item in spec.call)


def write(family: str, calls: list[Call]) -> str:
    """The text a model of `family` writes for the calls."""
    return render_calls(spec_of(family), calls)


def render_calls(spec: FamilySpec, calls: list[Call]) -> str:
    """The calls in the family's markup; where the output is channel messages, a message to
    each called tool (`render_output` writes the calls alone, which such a family reads too,
    but a model writes them in messages and vLLM's Muse parser warns without them)."""
    if spec.messages is None or not calls:
        return render_output(spec, calls)
    m = spec.messages
    if render_output(spec, calls[:1]).startswith(m.header):
        return render_output(spec, calls)  # each call is a message already (Harmony's)
    return "\n".join(
        f"{m.header[0]}{name}{m.header_end}{render_output(spec, [(name, pairs)])}{m.ends[0]}"
        for name, pairs in calls
    )


# --------------------------------------------------------------------------- shapes


def loop(spec: FamilySpec, n: int) -> list[Call]:
    pairs: list[tuple[str, Value]] = [("file_path", "src/app.py")]
    distinct_keys = json_arguments(spec)
    for i in range(1, n):
        if distinct_keys:
            pairs.append((f"k{i}", "total = 1"))
        else:
            pairs.append(("old_string", "total = 0") if i % 2 else ("new_string", "total = 1"))
    return [("edit", pairs[:n])]


def source_line(i: int) -> str:
    return f'    print("row", {i}, total)  # keep <going>\n'


def long_string(spec: FamilySpec, n: int) -> list[Call]:
    content = "".join(source_line(i) for i in range(n))
    return [("write_file", [("path", "big.py"), ("content", content)])]


def many_params(spec: FamilySpec, n: int) -> list[Call]:
    return [("set_options", [(f"p{i}", f"v{i}") for i in range(n)])]


def many_calls(spec: FamilySpec, n: int) -> list[Call]:
    return [("get_weather", [("city", "Paris"), ("days", 3)])] * n


SHAPES: dict[str, Callable[[FamilySpec, int], list[Call]]] = {
    "loop": loop,
    "long_string": long_string,
    "many_params": many_params,
    "many_calls": many_calls,
}


# --------------------------------------------------------------------------- streams


@dataclass
class Stream:
    """One output text, and the calls (name, arguments) it must parse to."""

    family: str
    shape: str
    text: str
    expected: list[tuple[str, dict[str, Any]]]


def smallest_count(length: Callable[[int], int], size: int) -> int:
    """The smallest n >= 0 with length(n) >= size. The length grows with n about linearly, so
    each guess extrapolates from the texts written so far: a few renders, not a bisection's
    many, of a text as long as the size."""
    low, low_length = 0, length(0)
    if low_length >= size:
        return 0
    high, high_length = 16, length(16)
    while high_length < size:  # extrapolate past the size
        step = (high_length - low_length) / (high - low)
        low, low_length = high, high_length
        high = low + max(1, math.ceil((size - low_length) / max(step, 1e-9)))
        high_length = length(high)
    while high - low > 1:  # length(low) < size <= length(high): interpolate, then its neighbour
        share = (size - low_length) / (high_length - low_length)
        guess = min(max(low + math.ceil(share * (high - low)), low + 1), high - 1)
        for n in (guess, guess - 1) if guess - 1 > low else (guess,):
            got = length(n)
            if got >= size:
                high, high_length = n, got
            else:
                low, low_length = n, got
                break
    return high


def build_stream(family: str, shape: str, size: int) -> Stream:
    """The shape's smallest text of at least `size` chars in the family's markup."""
    spec, calls_of = spec_of(family), SHAPES[shape]
    n = smallest_count(lambda n: len(render_calls(spec, calls_of(spec, n))), size)
    calls = calls_of(spec, n)
    # a repeated key reads back as JSON reads it: its first position, its last value
    expected = [(name, dict(pairs)) for name, pairs in calls]
    return Stream(family, shape, render_calls(spec, calls), expected)
