"""Checking exported grammars with llguidance on a byte-level vocabulary.

No model tokenizer is needed: 256 one-byte tokens plus an end-of-sequence token make every
string a token sequence, and the matcher's token mask is then exactly the set of bytes the
grammar allows next.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import Any

import llguidance
from llguidance import LLMatcher, LLTokenizer, TokenizerWrapper

EOS = 256


class _ByteVocabulary:
    eos_token_id = EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [EOS]

    def __call__(self, text: Any) -> list[int]:
        return list(text if isinstance(text, bytes) else text.encode("utf-8"))


TOKENIZER = LLTokenizer(TokenizerWrapper(_ByteVocabulary()))


@lru_cache(maxsize=512)
def compiled(text: str, fmt: str = "lark") -> str:
    """The grammar in llguidance's form; raises ValueError with llguidance's message when
    the grammar does not compile."""
    grammar = llguidance.grammar_from(fmt, text)
    error = LLMatcher.validate_grammar(grammar, TOKENIZER)
    if error:
        raise ValueError(error)
    return grammar


def matcher(text: str, fmt: str = "lark") -> LLMatcher:
    return LLMatcher(TOKENIZER, compiled(text, fmt), log_level=0)


def accepts(grammar: str, output: str, fmt: str = "lark") -> bool:
    """Whether the whole output is a complete sentence of the grammar."""
    m = matcher(grammar, fmt)
    return m.consume_tokens(list(output.encode("utf-8"))) and m.is_accepting()


def allowed_bytes(m: LLMatcher) -> list[int]:
    mask = m.compute_bitmask()
    return [i for i in range(257) if mask[i // 8] >> (i % 8) & 1]


def random_walk(grammar: str, rng: random.Random, max_bytes: int = 400,
                fmt: str = "lark") -> tuple[bytes, bool]:
    """Bytes chosen at random among the allowed ones until the grammar lets the output end
    (chosen with growing probability as the walk gets long) or `max_bytes`; returns the
    bytes and whether the walk ended in an accepting state."""
    m = matcher(grammar, fmt)
    out = bytearray()
    while len(out) < max_bytes:
        forced = m.compute_ff_bytes()
        if forced:
            assert m.consume_tokens(list(forced)), m.get_error()
            out += forced
            continue
        allowed = allowed_bytes(m)
        if not allowed:
            break
        if EOS in allowed and (len(allowed) == 1 or rng.random() < len(out) / max_bytes):
            return bytes(out), True
        choices = [b for b in allowed if b != EOS]
        # prefer printable ASCII so walks read like text, but keep every byte possible
        printable = [b for b in choices if 32 <= b < 127 or b == 10]
        pick = rng.choice(printable if printable and rng.random() < 0.9 else choices)
        assert m.consume_tokens([pick]), m.get_error()
        out.append(pick)
    return bytes(out), m.is_accepting()


def validates(value: Any, schema: Any) -> bool:
    """A JSON-schema subset (the one the tests' tools use): type, enum/const, properties,
    required, additionalProperties false, items, anyOf/oneOf, minimum/maximum, $ref to
    local definitions (the schema passed must be inlined)."""
    if not isinstance(schema, dict):
        return True
    if "const" in schema and value != schema["const"]:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    for key in ("anyOf", "oneOf"):
        if key in schema and not any(validates(value, s) for s in schema[key]):
            return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is(value, k) for k in kinds):
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return False
        if "maximum" in schema and value > schema["maximum"]:
            return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if any(r not in value for r in schema.get("required", [])):
            return False
        for k, v in value.items():
            if k in props:
                if not validates(v, props[k]):
                    return False
            elif schema.get("additionalProperties") is False:
                return False
    if isinstance(value, list) and "items" in schema:
        return all(validates(v, schema["items"]) for v in value)
    return True


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        "string": str, "boolean": bool, "null": type(None), "object": dict, "array": list
    }.get(kind, object) in (type(value),) or (kind == "object" and isinstance(value, dict))


def loads(text: str) -> Any:
    return json.loads(text)
