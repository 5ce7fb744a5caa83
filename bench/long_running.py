"""A long-running process: does memory stay bounded over many requests?

What it does
------------
One process serves `--requests` requests (default 100,000), as an API server would: each
picks a family (every registered name, aliases included), a tools list, grammar `params`
and parser options, and streams one model output in random deltas (1 to 32 characters),
or parses it whole. The tools rotate: the same schemas passed again as the same dicts,
as equal dicts made anew, as dicts changed in place after their first use (a property's
type switched), and as ever new ones (tool and property names never seen before); the
params take ever new values too (Hunyuan's tag suffix), so every cache keyed by a tool or
a family sees more distinct keys than it holds. Outputs are the family's own markup for
calls to those tools (`toolgrammar.render`), with prose around them, cut short, or prose
alone, ended by every finish reason.

At each checkpoint (`--checkpoints`, default 20) it collects garbage and reads the
resident set size from /proc/self/statm, and counts the entries of every cache the
runtime keeps between requests (`cache_sizes`). After the warm-up (`--warm-up`, the
first 30% of the requests: the caches fill in about the first 25,000), RSS may grow by at
most `--max-growth-mb` (default 4); every cache must stay at or below its bound at every
checkpoint. It prints one line per checkpoint and exits 1 when either fails.

    python bench/long_running.py                        # 100,000 requests (minutes)
    python bench/long_running.py --requests 2000 --checkpoints 4 --seed 7

`tests/test_long_running.py` runs 2,000 requests and asserts the cache bounds (entries,
never time or RSS). The figure of the full run is in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
import warnings
from typing import Any, Callable

import toolgrammar
from toolgrammar.runtime import keyvalue_args, markers, params, schema_check, schemas, tables
from toolgrammar.runtime import call_head, shared_memos, xml_elements, xml_params
from toolgrammar.runtime.protocol import RenderError

PAGE = os.sysconf("SC_PAGE_SIZE")
FINISH = ("stop", "stop", "tool_calls", "length", "content_filter")
TYPES = ("string", "integer", "number", "boolean", "array", "object")
VALUES: dict[str, Callable[[random.Random], Any]] = {
    "string": lambda rng: rng.choice(["Paris", "a b", "x\ny", "é", ""]),
    "integer": lambda rng: rng.randint(-5, 500),
    "number": lambda rng: rng.choice([1.5, -2.25, 3]),
    "boolean": lambda rng: rng.random() < 0.5,
    "array": lambda rng: [1, "two"][: rng.randint(0, 2)],
    "object": lambda rng: {"k": rng.randint(0, 9)},
}


def cache_sizes() -> dict[str, tuple[int, int]]:
    """Every cache the runtime keeps between requests: name -> (entries, bound)."""
    registry = schemas.__dict__.get("__warningregistry__", {})
    return {
        "schemas._ROOTS": (len(schemas._ROOTS), schemas._ROOTS_LIMIT),
        "tables._COMPILED": (len(tables._COMPILED), tables._COMPILED_LIMIT),
        "tables._BY_ID": (len(tables._BY_ID), tables._COMPILED_LIMIT),
        "params._filled": _lru(params._filled),
        "markers._cached": _lru(markers._cached),
        "markers._by_tuple": _lru(markers._by_tuple),
        "keyvalue_args._raw_tokens": _lru(keyvalue_args._raw_tokens),
        "keyvalue_args._whole_member": _lru(keyvalue_args._whole_member),
        "xml_params._whole_param": _lru(xml_params._whole_param),
        "schema_check._FOUND": (len(schema_check._FOUND), schema_check._LIMIT),
        "schema_check._SUSPECT": (len(schema_check._SUSPECT), schema_check._LIMIT),
        "schemas warnings shown": (len(registry), schema_check._LIMIT + 2),
        # shared by the parsers of the process (runtime/shared_memos.py): the stores, and the
        # largest memo each holds (a header-name memo, a tool's key memo)
        "shared_memos._GRAMMARS": (len(shared_memos._GRAMMARS), shared_memos._GRAMMARS_LIMIT),
        "shared_memos._TOOLS": (len(shared_memos._TOOLS), shared_memos._TOOLS_LIMIT),
        "shared header names (largest)": (
            max((len(names) for _, names, _ in list(shared_memos._GRAMMARS.values())), default=0),
            call_head._MAX_NAMES,
        ),
        "shared tool key memo (largest)": (
            max((len(memo) for _, _, memo in list(shared_memos._TOOLS.values())), default=0),
            max(xml_params._MAX_KEYS, xml_elements._MAX_NAMES),
        ),
    }


def _lru(function: Any) -> tuple[int, int]:
    info = function.cache_info()
    return info.currsize, info.maxsize


def rss_mb() -> float:
    """The resident set size of this process, in MB (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


class Requests:
    """Makes the requests: a family, tools, params, options and an output, from one seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.families = toolgrammar.families()
        self.kept: list[list[dict]] = [self._tools(n) for n in range(24)]  # passed again
        self.texts: dict[tuple[str, int], str] = {}  # rendered once per family and shape

    def _schema(self, n: int) -> dict:
        rng = self.rng
        props = {f"p{(n + k) % 50}": {"type": rng.choice(TYPES)} for k in range(rng.randint(1, 4))}
        props["city"] = {"type": "string"}
        if rng.random() < 0.05:  # a type typing cannot read: one ToolSchemaWarning per tool
            props["odd"] = {"type": "strng"}
        if rng.random() < 0.2:
            props["when"] = {"$ref": "#/$defs/day"}
        return {"type": "object", "properties": props, "$defs": {"day": {"type": "integer"}}}

    def _tools(self, n: int) -> list[dict]:
        names = ["get_weather", f"tool_{n}"][:: self.rng.choice([1, -1])]  # either called
        return [
            {"type": "function", "function": {"name": name, "parameters": self._schema(n + i)}}
            for i, name in enumerate(names)
        ]

    def tools(self, n: int) -> list[dict] | None:
        """Tools as a server sees them: the same lists again, equal ones made anew, ones
        changed in place, ever new ones, or none."""
        rng = self.rng
        kind = rng.random()
        if kind < 0.05:
            return None
        if kind < 0.45:
            return rng.choice(self.kept)
        if kind < 0.6:
            return json.loads(json.dumps(rng.choice(self.kept)))  # equal, made anew
        if kind < 0.75:  # changed in place after its use
            tools = rng.choice(self.kept)
            props = tools[0]["function"]["parameters"]["properties"]
            key = rng.choice(sorted(props))
            props[key] = {"type": rng.choice(TYPES)}
            return tools
        return self._tools(100 + n)  # never seen before

    def params(self, family: str, n: int) -> dict[str, str] | None:
        declared = dict(toolgrammar.get_spec(family).params)
        if not declared or self.rng.random() < 0.3:
            return None
        # a param `render` writes is a layout and takes whitespace only (its default is
        # whitespace: compiler/validate.py; other text makes render refuse, as it should)
        return {
            name: (
                "\n" * (n % 3) + " " * (n % 5)
                if default and not default.strip()
                else f":{n % 5000:x}"
            )
            for name, default in declared.items()
        }

    def options(self) -> dict[str, Any]:
        rng = self.rng
        return {
            "reasoning_open": rng.choice([None, True, False]),
            "block_open": rng.choice([None, False]),
            "unknown_tools": rng.choice(["keep", "drop"]),
            "ids": rng.choice(["random", "sequential"]),
        }

    def output(self, family: str, tools: list[dict] | None, values: dict | None) -> str:
        """The family's markup for a call to the first tool, with prose, cut, or prose."""
        rng = self.rng
        kind = rng.random()
        if kind < 0.1:
            return rng.choice(["Just prose.", "a [ { < ( ) > } ] b", "", "\n\n", "[" * 40])
        props = tools[0]["function"]["parameters"]["properties"] if tools else {"city": {}}
        args = {key: VALUES.get(s.get("type"), VALUES["string"])(rng) for key, s in props.items()}
        name = tools[0]["function"]["name"] if tools else "get_weather"
        try:
            text = toolgrammar.render(
                family, [{"name": name, "arguments": args}], tools, params=values
            )
        except RenderError:
            text = self._fallback(family, values)
        if kind < 0.4:
            text = "Let me check. " + text + " Done."
        elif kind < 0.55:
            text = text[: rng.randint(0, len(text))]
        return text

    def _fallback(self, family: str, values: dict | None) -> str:
        """A call every family can write (string arguments only)."""
        key = (family, hash(tuple(sorted((values or {}).items()))) % 8)
        if key not in self.texts:
            call = {"name": "get_weather", "arguments": {"city": "Paris"}}
            self.texts[key] = toolgrammar.render(family, [call], params=values)
        return self.texts[key]


def serve(requests: Requests, n: int) -> None:
    """One request: stream (or parse whole) one output."""
    rng = requests.rng
    family = rng.choice(requests.families)
    tools = requests.tools(n)
    values = requests.params(family, n)
    options = requests.options()
    text = requests.output(family, tools, values)
    finish = rng.choice(FINISH)
    if rng.random() < 0.2:
        toolgrammar.parse(family, text, tools, finish, params=values, **options)
        return
    parser = toolgrammar.StreamParser(family, tools, params=values, **options)
    pos = 0
    while pos < len(text):
        step = rng.randint(1, 32)
        parser.feed(text[pos : pos + step])
        pos += step
    parser.finish(finish)


def run(total: int, checkpoints: int, seed: int, report: Callable[[str], None]) -> dict:
    """Serve `total` requests; at each checkpoint the RSS and the caches' sizes.

    Returns {"rss": [MB per checkpoint], "over": [caches found above their bound]}.
    """
    requests = Requests(seed)
    every = max(1, total // checkpoints)
    rss, over = [], []
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as a server runs: each new warning recorded once
        warnings.showwarning = lambda *args, **kwargs: None  # (recorded, not printed)
        for n in range(1, total + 1):
            serve(requests, n)
            if n % every and n != total:
                continue
            gc.collect()
            rss.append(rss_mb())
            sizes = cache_sizes()
            over += [
                f"{name} {size} > {bound}" for name, (size, bound) in sizes.items() if size > bound
            ]
            busiest = ", ".join(f"{name} {size}/{bound}" for name, (size, bound) in sizes.items())
            elapsed = time.perf_counter() - started
            report(f"{n:>8} requests  {elapsed:7.1f} s  RSS {rss[-1]:7.1f} MB  {busiest}")
    return {"rss": rss, "over": over}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--checkpoints", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-growth-mb", type=float, default=4.0)
    parser.add_argument(
        "--warm-up", type=float, default=0.3, help="share of the requests before RSS counts"
    )
    args = parser.parse_args(argv)
    result = run(args.requests, args.checkpoints, args.seed, print)
    rss = result["rss"]
    start = min(len(rss) - 1, max(0, round(args.warm_up * len(rss)) - 1))
    growth = max(rss[start:]) - rss[start]
    print(
        f"RSS {rss[0]:.1f} MB at the first checkpoint, {rss[start]:.1f} MB after the warm-up, "
        f"at most {max(rss):.1f} MB: grew {growth:.2f} MB after the warm-up"
    )
    failed = False
    if growth > args.max_growth_mb:
        print(f"FAIL: RSS grew {growth:.2f} MB after warm-up (bound {args.max_growth_mb} MB)")
        failed = True
    for line in result["over"]:
        print(f"FAIL: cache above its bound: {line}")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
