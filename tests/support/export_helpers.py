"""Checking exported grammars with llguidance on a byte-level vocabulary: the matcher and
the walks live in `toolgrammar.check.exports` (shared with `toolgrammar check`); the tests'
own value generator is here.
"""

from __future__ import annotations

import json
import random
from typing import Any

from toolgrammar.check.exports import (  # noqa: F401  (re-exported for the tests)
    EOS,
    TOKENIZER,
    accepts,
    allowed_bytes,
    closing_markers,
    closing_walk,
    compiled,
    matcher,
    rejection,
    take_forced,
    validates,
    walk_problem,
)


def loads(text: str) -> Any:
    return json.loads(text)


def random_value(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value valid against a (`$ref`-free) schema of the kinds the corpus tools use."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "anyOf" in schema:
        return random_value(rng.choice(schema["anyOf"]), rng, depth)
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "string":
        alphabet = "abcxyz XYZ019.,:;-_/'\"\\\n{}[]()<>=é中"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
    if kind == "integer":
        low = schema.get("minimum", -1000)
        return rng.randint(int(low), 100000)
    if kind == "number":
        return rng.choice([0.5, -2.25, 3.0, 1e-3, 12345.678, 0])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        return [
            random_value(schema.get("items", {"type": "string"}), rng, depth + 1)
            for _ in range(rng.randint(0, 3))
        ]
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return {
        k: random_value(v, rng, depth + 1)
        for k, v in props.items()
        if k in required or rng.random() < 0.6
    }
