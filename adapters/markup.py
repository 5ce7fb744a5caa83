"""What a serving adapter needs to know about a family's markup, read from its spec alone.

A stack that detokenizes with `skip_special_tokens=True` deletes every marker that is a
special token of the model's tokenizer before any parser sees the text: the calls are lost.
Whether that can happen for a family depends on its grammar's markers and on the tokenizer,
so both are read here, generically; no family is named.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from toolgrammar.runtime.dialects import markup_literals
from toolgrammar.runtime.spec import FamilySpec


@lru_cache(maxsize=None)
def nonblank_markup_literals(spec: FamilySpec) -> frozenset[str]:
    """Every literal the family's markup is made of (`markup_literals`), but whitespace."""
    return frozenset(text for text in markup_literals(spec) if text.strip())


def special_markers(
    spec: FamilySpec, special_tokens: Iterable[str], reasoning_only: bool = False
) -> frozenset[str]:
    """The special tokens that occur in the family's markers (a marker may be one special
    token, or hold one: `<tool_call${suffix}>`, `<|channel|>analysis<|message|>`); with
    `reasoning_only`, in its reasoning markers alone (what a reasoning parser reads)."""
    family_markers = (
        frozenset(m for r in spec.reasoning for m in (*r.opens, *r.closes) if m.strip())
        if reasoning_only
        else nonblank_markup_literals(spec)
    )
    return frozenset(
        token
        for token in special_tokens
        if token and any(token in marker for marker in family_markers)
    )
