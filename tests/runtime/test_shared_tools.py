"""Parsers given tools of one value share them, and share the memos of what a parser works
out once per tool or literal (`schemas.shared_tool_schemas`, `ToolSchemas.memos_for`): a
fresh parser's first call of a tool then reads as its later calls do. It is a shortcut:
every parser gives the same deltas as it does with nothing shared before it (the shared
values forgotten) and as the general path does (shortcuts off, nothing shared), whatever
other grammars, policies and tools the parsers made before it, or beside it, read; and no
two parsers whose tools or policies differ share a memo."""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.schema_check import ToolSchemaWarning
from toolgrammar.runtime.schemas import forget_shared_tools

# tools of the same names whose schemas type the same key differently
TOOLS = [
    [function_tool("f", {"x": {"type": "integer"}}), function_tool("g", {"x": {"type": "string"}})],
    [function_tool("f", {"x": {"type": "string"}}), function_tool("g", {"x": {"type": "boolean"}})],
    [function_tool("f", {"x": {"type": "number"}, "y": {"type": "array"}}), function_tool("g", {})],
    [function_tool("f", {"x": {"type": ["integer", "null"]}}), function_tool("g", {"y": {}})],
]
POLICIES: list[dict[str, Any]] = [
    {},
    {"untyped_values": "json"},
    {"undeclared_params": "drop"},
    {"compat": "vllm"},
]
FAMILIES = ["minicpm5", "qwen3_coder", "spark25", "kimi_k2", "hermes"]
VALUES = ["3", "true", "1.5", "[1, 2]", "null", "hi there"]

Request = tuple[str, int, int, list[tuple[str, str, str]], int]

# one grammar per batch, most often: parsers that may share are what the test is about
requests = st.sampled_from(FAMILIES).flatmap(
    lambda family: st.lists(
        st.tuples(
            st.sampled_from([family, family, family, *FAMILIES]),
            st.integers(0, len(TOOLS) - 1),
            st.integers(0, len(POLICIES) - 1),
            st.lists(
                st.tuples(st.sampled_from("fg"), st.sampled_from("xy"), st.sampled_from(VALUES)),
                min_size=1,
                max_size=4,
            ),
            st.sampled_from([1, 5, 16, 1000]),
        ),
        min_size=1,
        max_size=6,
    )
)


def parser_of(family: str, tools: int, policies: int) -> toolgrammar.StreamParser:
    # a copy of the tools per parser: a server's requests bring equal tools, not the same list
    copied = json.loads(json.dumps(TOOLS[tools]))
    return toolgrammar.StreamParser(family, copied, ids="sequential", **POLICIES[policies])


def text_of(family: str, calls: list[tuple[str, str, str]]) -> str:
    return toolgrammar.render(family, [(name, {key: value}) for name, key, value in calls])


def interleaved(batch: list[Request], forget: bool) -> list[list[list[dict]]]:
    """Each request's deltas per feed (and finish), its parser fed piece by piece in turn
    with the others' (`forget`: the shared values let go of before each parser is made)."""
    parsers, pieces = [], []
    for family, tools, policies, calls, size in batch:
        if forget:
            forget_shared_tools()
        parsers.append(parser_of(family, tools, policies))
        text = text_of(family, calls)
        pieces.append([text[at : at + size] for at in range(0, len(text), size)])
    out: list[list[list[dict]]] = [[] for _ in batch]
    for step in range(max(len(p) for p in pieces)):
        for number, parser in enumerate(parsers):
            if step < len(pieces[number]):
                fed = parser.feed(pieces[number][step])
                out[number].append([delta.to_dict() for delta in fed])
    for number, parser in enumerate(parsers):
        out[number].append([delta.to_dict() for delta in parser.finish("stop")])
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=requests)
def test_a_parser_reads_as_it_does_with_nothing_shared(batch: list[Request]) -> None:
    with shortcuts_set(True):
        shared = interleaved(batch, forget=False)
        alone = interleaved(batch, forget=True)
    with shortcuts_set(False):
        general = interleaved(batch, forget=False)
    assert shared == alone == general


def test_equal_tools_are_shared_and_different_ones_are_not() -> None:
    """(the comparison above means something: parsers of equal tools do share them and their
    memos, and parsers whose tools, policies or grammar differ share no memo)"""
    forget_shared_tools()
    with shortcuts_set(True):
        first, second = parser_of("minicpm5", 0, 0), parser_of("minicpm5", 0, 0)
        other_tools = parser_of("minicpm5", 1, 0)
        other_policies = parser_of("minicpm5", 0, 2)
        other_family = parser_of("qwen3_coder", 0, 0)
        traced = toolgrammar.StreamParser("minicpm5", TOOLS[0], trace=lambda event: None)
        a, b = first._engine, second._engine
        assert a.tools is b.tools
        assert a._tool_memos is b._tool_memos and a._names is b._names
        assert a._longer_openers is b._longer_openers
        assert a._next_stops is not b._next_stops  # (where a parser is in its text: its own)
        assert other_policies._engine.tools is a.tools
        for engine in (other_tools._engine, other_policies._engine, other_family._engine):
            assert engine._tool_memos is not a._tool_memos
        assert other_tools._engine.tools is not a.tools
        assert traced._engine.tools is not a.tools
        assert traced._engine._tool_memos is not a._tool_memos
    with shortcuts_set(False):
        assert parser_of("minicpm5", 0, 0)._engine.tools is not a.tools


def test_a_memo_is_never_read_by_another_tools_value_or_policy() -> None:
    """Two parsers at once, the same tool and key typed by different schemas, or read under
    different policies: each reads by its own, whichever read the key first."""
    forget_shared_tools()
    text = text_of("minicpm5", [("f", "x", "3"), ("f", "y", "[1, 2]"), ("g", "x", "true")])
    want = {
        (0, 0): [("f", {"x": 3}), ("f", {"y": "[1, 2]"}), ("g", {"x": "true"})],
        (1, 0): [("f", {"x": "3"}), ("f", {"y": "[1, 2]"}), ("g", {"x": True})],
        (0, 1): [("f", {"x": 3}), ("f", {"y": [1, 2]}), ("g", {"x": "true"})],
        (0, 2): [("f", {"x": 3}), ("f", {}), ("g", {"x": "true"})],
    }
    with shortcuts_set(True):
        for order in (list(want), list(reversed(want))):
            parsers = {key: parser_of("minicpm5", *key) for key in order}
            deltas: dict[tuple[int, int], list[Any]] = {key: [] for key in order}
            for at in range(0, len(text), 7):
                for key in order:
                    deltas[key] += parsers[key].feed(text[at : at + 7])
            for key in order:
                message = toolgrammar.assemble(deltas[key] + parsers[key].finish())
                got = [
                    (c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls
                ]
                assert got == want[key], key


def test_a_tools_value_changed_in_place_is_read_anew_by_the_next_parser() -> None:
    forget_shared_tools()
    tools = [function_tool("f", {"x": {"type": "integer"}})]
    text = text_of("minicpm5", [("f", "x", "3")])

    def arguments(parser: toolgrammar.StreamParser) -> dict:
        message = toolgrammar.assemble(parser.feed(text) + parser.finish())
        return json.loads(message.tool_calls[0].function.arguments)

    with shortcuts_set(True):
        before = toolgrammar.StreamParser("minicpm5", tools)
        assert arguments(toolgrammar.StreamParser("minicpm5", tools)) == {"x": 3}
        tools[0]["function"]["parameters"]["properties"]["x"]["type"] = "string"
        assert arguments(toolgrammar.StreamParser("minicpm5", tools)) == {"x": "3"}
        assert arguments(before) == {"x": 3}  # (made before the change: the value it was given)


def test_tools_a_parser_warns_about_are_not_shared() -> None:
    """A parser warns at its own first call of a tool whose schema typing cannot read: such
    tools are each parser's own, so every parser still warns."""
    forget_shared_tools()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "junk"}}}]
    text = text_of("minicpm5", [("f", "x", "3")])
    with shortcuts_set(True):
        for _ in range(2):
            parser = toolgrammar.StreamParser("minicpm5", tools)
            with pytest.warns(ToolSchemaWarning, match="'f'"):
                parser.feed(text)
                parser.finish()
        assert parser._engine.tools is not toolgrammar.StreamParser("minicpm5", tools)._engine.tools


def test_tools_marshal_refuses_are_each_parsers_own() -> None:
    class Params(dict):  # type: ignore[type-arg]
        pass

    tools = [{"type": "function", "function": {"name": "f", "parameters": Params(type="object")}}]
    with shortcuts_set(True):
        first = toolgrammar.StreamParser("minicpm5", tools)
        second = toolgrammar.StreamParser("minicpm5", tools)
        assert first._engine.tools is not second._engine.tools
        assert first._engine._tool_memos is not second._engine._tool_memos
    with pytest.raises(ValueError, match="no function name"):
        toolgrammar.StreamParser("minicpm5", [{"type": "function", "function": {"name": ""}}])


def test_parsers_on_many_threads_read_their_own_tools() -> None:
    """A server makes parsers on many threads at once, of two tools values in turns."""
    forget_shared_tools()
    text = text_of("minicpm5", [("f", "x", "3"), ("g", "x", "true")] * 3)
    want = {
        0: [("f", {"x": 3}), ("g", {"x": "true"})] * 3,
        1: [("f", {"x": "3"}), ("g", {"x": True})] * 3,
    }
    wrong: list[str] = []

    def work(start: int) -> None:
        for number in range(40):
            which = (start + number) % 2
            parser = parser_of("minicpm5", which, 0)
            deltas = [d for at in range(0, len(text), 9) for d in parser.feed(text[at : at + 9])]
            message = toolgrammar.assemble(deltas + parser.finish())
            got = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
            if got != want[which]:
                wrong.append(f"{which}: {got}")

    with shortcuts_set(True), warnings.catch_warnings():
        threads = [threading.Thread(target=work, args=(start,)) for start in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert wrong == []
