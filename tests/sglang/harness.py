"""Drive a toolgrammar family through SGLang 0.5.23's own parser classes, with no model.

What SGLang's OpenAI chat serving layer does per choice with `--tool-call-parser tg-F` (and
`--reasoning-parser tg-F` when paired), minus the engine: the real `ReasoningParser` and
`FunctionCallParser`, built in the serving layer's order and driven as it drives them (one
`parse_stream_chunk` per engine output, `parse_stream_end` on the output that carries the
finish reason, then the end-of-stream check for unstreamed arguments; non-streaming:
`parse_non_stream`, `has_tool_call`, then `parse_non_stream`).

The end-of-stream check is SGLang's own method `_check_for_unstreamed_tool_args`, compiled from
serving_chat.py's source and run as it is: that module cannot be imported here (it imports
torchvision, and PyPI has no CPU torchvision for this CPU torch).
"""

from __future__ import annotations

import __future__
import ast
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterable

import sglang.srt.entrypoints.openai as openai_entrypoints
from sglang.srt.entrypoints.openai import protocol
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

import toolgrammar.adapters.sglang as adapter


@lru_cache(maxsize=1)
def unstreamed_args_check() -> Callable[..., str | None]:
    """SGLang's `OpenAIServingChat._check_for_unstreamed_tool_args`, from its source."""
    path = Path(openai_entrypoints.__file__).parent / "serving_chat.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    chat = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "OpenAIServingChat"
    )
    method = next(
        n
        for n in chat.body
        if isinstance(n, ast.FunctionDef) and n.name == "_check_for_unstreamed_tool_args"
    )
    code = compile(
        ast.Module(body=[method], type_ignores=[]),
        str(path),
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace: dict[str, Any] = {"json": json, **vars(protocol)}
    exec(code, namespace)
    return namespace["_check_for_unstreamed_tool_args"]


def sglang_tools(tools: list[dict[str, Any]] | None) -> list[Tool]:
    """The request's tools as SGLang's serving layer holds them ([] when none declared)."""
    return [Tool.model_validate(tool) for tool in tools or []]


@dataclass
class Result:
    """What a client holds at the end: accumulated content, reasoning and calls."""

    content: str | None
    reasoning: str | None
    calls: list[tuple[str, str]]
    # what SGLang's end-of-stream check sent after the parser's own end (must stay empty)
    unstreamed: list[str] = field(default_factory=list)
    # names sent more than once for one call index, or arguments before a name
    misordered: list[int] = field(default_factory=list)


def _reasoning_parser(
    name: str, stream_reasoning: bool, force_reasoning: bool, tool_active: bool, tokenizer: Any
) -> ReasoningParser:
    # as serving_chat builds it: stream_reasoning from the request (default True; False for a
    # whole output), force reasoning from the template or request, whether a tool parser follows
    return ReasoningParser(
        name,
        stream_reasoning=stream_reasoning,
        force_reasoning=force_reasoning,
        tool_call_parser_active=tool_active,
        tokenizer=tokenizer,
    )


def stream(
    name: str,
    deltas: Iterable[str],
    tools: list[dict[str, Any]] | None,
    *,
    paired: bool,
    stream_reasoning: bool = True,
    force_reasoning: bool = False,
    tokenizer: Any = None,
) -> Result:
    """One streamed choice; the finish reason comes with the last delta (not an abort).
    `tokenizer` is the served tokenizer, which SGLang hands to the parsers."""
    steps = [d for d in deltas if d] or [""]
    tool_active = bool(tools)
    reasoning_parser = (
        _reasoning_parser(name, stream_reasoning, force_reasoning, tool_active, tokenizer)
        if paired
        else None
    )
    parser = (
        FunctionCallParser(sglang_tools(tools), name, tokenizer=tokenizer) if tool_active else None
    )
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    result = Result(None, None, [])
    for i, delta in enumerate(steps):
        last = i == len(steps) - 1
        text = delta
        if reasoning_parser is not None:
            said, text = reasoning_parser.parse_stream_chunk(delta)
            if last:
                end_said, end_text = reasoning_parser.parse_stream_end()
                said, text = (said or "") + (end_said or ""), (text or "") + (end_text or "")
            reasoning.append(said or "")
        if parser is None:
            content.append(text or "")
            continue
        normal, items = parser.parse_stream_chunk(text or "")
        if last:
            end_normal, end_items = parser.parse_stream_end()
            normal, items = (normal or "") + end_normal, list(items) + end_items
        content.append(normal or "")
        for item in items:
            call = calls.setdefault(item.tool_index, {"name": None, "args": []})
            if item.name:
                if call["name"] is not None or call["args"]:
                    result.misordered.append(item.tool_index)
                call["name"] = item.name
            elif call["name"] is None:
                result.misordered.append(item.tool_index)
            call["args"].append(item.parameters)
        if last:
            chunk = unstreamed_args_check()(
                None, parser, {"meta_info": {"id": "x"}}, SimpleNamespace(model="m"), 0, 0
            )
            if chunk is not None:
                data = json.loads(chunk.removeprefix("data: "))
                for part in data["choices"][0]["delta"]["tool_calls"]:
                    result.unstreamed.append(part["function"]["arguments"])
                    calls[part["index"]]["args"].append(part["function"]["arguments"])
    result.content = "".join(content) or None
    result.reasoning = "".join(reasoning) or None
    result.calls = [(c["name"], "".join(c["args"])) for _, c in sorted(calls.items())]
    return result


def whole(
    name: str,
    text: str,
    tools: list[dict[str, Any]] | None,
    *,
    paired: bool,
    force_reasoning: bool = False,
    tokenizer: Any = None,
) -> Result:
    """One non-streamed choice, as the serving layer's reasoning step and `_process_tool_calls`
    (tool_choice "auto") handle it."""
    tool_active = bool(tools)
    reasoning = None
    if paired:
        parser = _reasoning_parser(name, False, force_reasoning, tool_active, tokenizer)
        reasoning, text = parser.parse_non_stream(text)
    calls: list[tuple[str, str]] = []
    if tool_active:
        parser = FunctionCallParser(
            sglang_tools(tools), name, tool_choice="auto", tokenizer=tokenizer
        )
        if parser.has_tool_call(text):
            text, items = parser.parse_non_stream(text)
            calls = [(item.name, item.parameters) for item in items]
    return Result(text or None, reasoning or None, calls)


def registered_name(family: str) -> str:
    return adapter.PREFIX + family


def cut_failures(
    name: str,
    text: str,
    tools: list[dict[str, Any]] | None,
    want: Callable[[str], Any],
    tokenizer: Any = None,
) -> list[tuple[int, Any, Any]]:
    """`text` cut after every character (max_tokens) and streamed in two deltas: the cuts
    where, after SGLang's end-of-stream steps, a call's arguments do not load as JSON, the
    calls differ from `want(cut_text)`'s, or SGLang sent something of its own."""
    failures = []
    for cut in range(1, len(text) + 1):
        part = text[:cut]
        got = stream(name, [part[:-1], part[-1:]], tools, paired=False, tokenizer=tokenizer)
        expected = want(part)
        bad = [args for _, args in got.calls if not _loads(args)]
        if bad or got.calls != expected.calls or got.unstreamed or got.misordered:
            failures.append((cut, got, expected))
    return failures


def _loads(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return True


def same(got: Result, want: Result) -> bool:
    """What SGLang's client received is what the library reads, all of it streamed, in order."""
    return (
        (got.content, got.reasoning, got.calls) == (want.content, want.reasoning, want.calls)
        and not got.unstreamed
        and not got.misordered
    )
