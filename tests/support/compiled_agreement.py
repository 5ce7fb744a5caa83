"""Every delta of the corpus and of fuzz inputs, as one build runs them: the compiled build's
agreement test (tests/test_compiled.py) runs this once under pure Python
(TOOLGRAMMAR_PURE_PYTHON=1) and once under the compiled build, and compares.

    python tests/support/compiled_agreement.py [--fuzz N] > out.json

Prints one JSON object: "build" (toolgrammar.runtime.compiled()) and "results", for every
corpus case and every fuzz input (N seeds per grammar) a list with, per way of splitting the
text (whole, one character at a time, random 1-12 character pieces, the cut of the fuzz
input), every feed's deltas and the finish's, or the exception raised; and `parse()`'s
message. Nothing is hashed: a disagreement shows where it is.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for `support`

import toolgrammar  # noqa: E402
import toolgrammar.runtime  # noqa: E402
from support.corpus_format import all_cases  # noqa: E402
from toolgrammar.check.fuzz import grammars, make_input  # noqa: E402
from toolgrammar.check.invariants import random_points, split_at  # noqa: E402


def stream(family: str, pieces: list[str], tools: Any, options: dict, finish: str) -> Any:
    try:
        parser = toolgrammar.StreamParser(family, tools, ids="sequential", **options)
        feeds = [[d.to_dict() for d in parser.feed(piece)] for piece in pieces]
        feeds.append([d.to_dict() for d in parser.finish(finish)])
        return feeds
    except Exception as error:  # both builds must raise the same
        return f"raised {type(error).__name__}: {error}"


def whole(family: str, text: str, tools: Any, options: dict, finish: str) -> Any:
    try:
        message = toolgrammar.parse(family, text, tools, finish, ids="sequential", **options)
        return message.model_dump()
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"


def ways(family: str, text: str, tools: Any, options: dict, finish: str, seed: str) -> list:
    rng = random.Random(seed)
    splits = [
        [text],
        split_at(text, list(range(1, len(text)))),
        split_at(text, random_points(text, rng)),
        split_at(text, random_points(text, rng)),
    ]
    out = [stream(family, pieces, tools, options, finish) for pieces in splits]
    out.append(whole(family, text, tools, options, finish))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fuzz", type=int, default=12, help="fuzz inputs per grammar")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for case in all_cases():
        results[f"corpus {case.id}"] = ways(
            case.family, case.text, case.tools, dict(case.options), case.finish, case.id
        )
    for family in grammars():
        for seed in range(args.fuzz):
            item = make_input(family, seed)
            key = f"fuzz {family} seed {seed}"
            results[key] = ways(family, item.text, item.tools, item.options, item.finish, key) + [
                stream(family, [item.text[: item.cut]], item.tools, item.options, "length")
            ]
    build = toolgrammar.runtime.compiled()
    json.dump({"build": build, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
