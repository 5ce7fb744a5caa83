"""What a serving adapter needs to know about a family's markup, read from its spec alone.

A stack that detokenizes with `skip_special_tokens=True` deletes every marker that is a
special token of the model's tokenizer before any parser sees the text: the calls are lost.
Whether that can happen for a family depends on its grammar's markers and on the tokenizer,
so both are read here, generically; no family is named.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any, Iterable

from toolgrammar.runtime.spec import FamilySpec

# Fields of the spec classes that hold strings which are not markup the model writes:
# identity, provenance, regexes (names, keys, recipients), flag values and route tables.
_NOT_MARKUP = frozenset(
    {
        "name",
        "aliases",
        "source",
        "source_sha256",
        "params",
        "pattern",
        "key_pattern",
        "recipient",
        "text_when",
        "routes",
        "default",
    }
)


@lru_cache(maxsize=None)
def markers(spec: FamilySpec) -> frozenset[str]:
    """Every literal the family's markup is made of: call items, reasoning, section,
    ignored markers, message headers, argument-dialect delimiters."""
    found: set[str] = set()
    _walk(spec, found)
    return frozenset(text for text in found if text.strip())


def _walk(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, tuple):
        for item in value:
            _walk(item, found)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if field.name not in _NOT_MARKUP:
                _walk(getattr(value, field.name), found)


def special_markers(spec: FamilySpec, special_tokens: Iterable[str]) -> frozenset[str]:
    """The special tokens that occur in the family's markers (a marker may be one special
    token, or hold one: `<tool_call${suffix}>`, `<|channel|>analysis<|message|>`)."""
    family_markers = markers(spec)
    return frozenset(
        token
        for token in special_tokens
        if token and any(token in marker for marker in family_markers)
    )
