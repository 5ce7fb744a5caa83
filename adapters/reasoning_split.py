"""Reasoning taken out of an output, the rest handed on as written: a reasoning-parser slot.

A serving stack's reasoning parser (vLLM's `--reasoning-parser NAME`) removes the reasoning
and hands every other character to whatever reads next: its tool parser, of any family, or
the client as content. toolgrammar's engine reads a whole output, so the split is found from
the grammar alone, for every family: the engine says when the output has left reasoning,
and the family's reasoning closers (its `reasoning` statements) say where in the text.
Nothing here names a family; nothing fed is lost (what is not reasoning is handed on).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import toolgrammar
from toolgrammar.runtime.spec import FamilySpec


def reasoning_markers(spec: FamilySpec) -> tuple[frozenset[str], frozenset[str]]:
    """The family's reasoning openers and closers (empty: it has no reasoning block)."""
    opens = frozenset(o for r in spec.reasoning for o in r.opens if o.strip())
    closes = frozenset(c for r in spec.reasoning for c in r.closes if c.strip())
    return opens, closes


def last_reasoning_marker(spec: FamilySpec, text: str) -> str | None:
    """Which kind of reasoning marker, "open" or "close", `text` (a prompt, or an output so
    far) holds last; None when it holds none. A prompt whose last one is a closer has
    reasoning over (thinking turned off); one whose last one is an opener starts inside it."""
    opens, closes = reasoning_markers(spec)
    last_open = max((text.rfind(m) for m in opens), default=-1)
    last_close = max((text.rfind(m) for m in closes), default=-1)
    if last_open < 0 and last_close < 0:
        return None
    return "close" if last_close > last_open else "open"


class ReasoningSplit:
    """One output read for its reasoning only: `feed` and `finish` give (reasoning, rest),
    where `rest` is the text after the reasoning as written, once `ended` (before that, the
    text waits: it may still open reasoning)."""

    def __init__(
        self,
        family: str,
        *,
        reasoning_open: bool | None = None,
        params: Mapping[str, str] | None = None,
        response_template: Mapping[str, Any] | None = None,
        policies: Mapping[str, Any] | None = None,
    ) -> None:
        self._parser = toolgrammar.StreamParser(
            family,
            None,
            reasoning_open=reasoning_open,
            params=params,
            response_template=response_template,
            **dict(policies or {}),
        )
        spec = toolgrammar.family_spec(family, response_template)
        # longest first: at one place the longest closer is the one the engine took
        self._closes = sorted(reasoning_markers(spec)[1], key=len, reverse=True)
        self._raw: list[str] = []  # fed and not handed on yet
        self._reasoning: list[str] = []
        self._entered = self._parser.in_reasoning
        self.ended = not spec.reasoning  # no reasoning block: everything is the rest

    def feed(self, text: str) -> tuple[str, str]:
        if self.ended:
            return "", text
        self._raw.append(text)
        return self._step(self._parser.feed(text), eof=False)

    def finish(self) -> tuple[str, str]:
        """End of output: the reasoning still held, and the text still waiting."""
        if self.ended:
            return "", ""
        return self._step(self._parser.finish("stop"), eof=True)

    def _step(self, deltas: list[Any], eof: bool) -> tuple[str, str]:
        reasoning = "".join(d.reasoning for d in deltas if d.reasoning)
        self._reasoning.append(reasoning)
        if self._parser.in_reasoning:
            self._entered = True
            if not eof:
                return reasoning, ""
        elif not self._entered:
            self._entered = bool(reasoning)
            other = any((d.content or "").strip() or d.tool_calls for d in deltas)
            if not (self._entered or other or eof):
                return reasoning, ""  # blank so far: reasoning may still open
        self.ended = True
        raw, self._raw = "".join(self._raw), []
        if self._parser.in_reasoning:  # the output ended inside reasoning
            return reasoning, ""
        return reasoning, (self._after_reasoning(raw) if self._entered else raw)

    def _after_reasoning(self, raw: str) -> str:
        """The text after the reasoning block: after its closer, or (a block the engine left
        otherwise, e.g. by a call opener) after the last reasoning text read."""
        found = [(raw.find(c), -len(c)) for c in self._closes if c in raw]
        if found:
            at, minus = min(found)
            return raw[at - minus :]
        said = "".join(self._reasoning).strip()
        tail = said[-64:]
        if tail and tail in raw:
            return raw[raw.rfind(tail) + len(tail) :]
        return raw
