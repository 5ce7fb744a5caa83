"""A grammar written in a test, compiled and read (a plain module the runtime tests share)."""

from __future__ import annotations

from typing import Any

from toolgrammar.compiler.frontend import parse_grammar
from toolgrammar.compiler.lower import lower
from toolgrammar.compiler.validate import validate_grammar
from toolgrammar.runtime.deltas import assemble, sequential_call_id
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.schemas import ToolSchemas
from toolgrammar.runtime.spec import FamilySpec


def spec_of(text: str) -> FamilySpec:
    """The runtime spec of grammar `text`, which must compile without an error."""
    grammar = parse_grammar(text, "x.tg")
    assert validate_grammar(grammar, text, "x.tg") == []
    return lower(grammar, "x.tg", "0" * 64)


def read_both(
    spec: FamilySpec, text: str, tools: list[dict] | None, reason: str, **options: Any
) -> tuple:
    """(content, reasoning, calls) of `text` fed whole; a char-by-char stream must agree."""
    results = []
    for pieces in ([text], list(text)):
        engine = Engine(spec, ToolSchemas(tools), call_id=sequential_call_id, **options)
        deltas = [d for piece in pieces for d in engine.feed(piece)] + engine.finish(reason)
        message = assemble(deltas)
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
        results.append((message.content, message.reasoning, calls))
    assert results[0] == results[1], text
    return results[0]
