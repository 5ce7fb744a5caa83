"""Parsers share the memos of what a parser works out once per tool or grammar literal
(`runtime/shared_memos.py`): a fresh parser's first call of a tool then reads as its later
calls do. It is a shortcut: every parser gives, feed by feed, what it gives with nothing
shared before it (the shared memos forgotten) and what the general path gives (shortcuts
off, nothing shared), whatever other grammars, policies and tools the parsers made before
it, or beside it, read; and no two parsers whose tools, policies or grammar differ share a
tool's memo."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.schema_check import ToolSchemaWarning
from toolgrammar.runtime.shared_memos import forget

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


def interleaved(batch: list[Request], forgotten: bool) -> list[list[list[dict]]]:
    """Each request's deltas per feed (and finish), its parser fed piece by piece in turn
    with the others' (`forgotten`: the shared memos let go of before each parser is made)."""
    parsers, pieces = [], []
    for family, tools, policies, calls, size in batch:
        if forgotten:
            forget()
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
        shared = interleaved(batch, forgotten=False)
        alone = interleaved(batch, forgotten=True)
    with shortcuts_set(False):
        general = interleaved(batch, forgotten=False)
    assert shared == alone == general


def memo_of(parser: toolgrammar.StreamParser, tool: str) -> dict:
    """The key memo `parser` read its calls of `tool` with."""
    (memo,) = [m for (name, _), (_, m) in parser._engine._tool_memos.items() if name == tool]
    return memo


def fed(parser: toolgrammar.StreamParser, family: str, calls: list[tuple[str, str, str]]) -> Any:
    parser.feed(text_of(family, calls))
    return parser


def test_what_is_shared_and_what_is_not() -> None:
    """(the comparison above means something: parsers of one grammar share its memos, and
    parsers given equal tools share a tool's memo, but not parsers whose tools, policies or
    grammar differ, nor traced ones, nor any with the shortcuts off)"""
    forget()
    calls = [("f", "x", "3")]
    with shortcuts_set(True):
        first = fed(parser_of("minicpm5", 0, 0), "minicpm5", calls)
        second = fed(parser_of("minicpm5", 0, 0), "minicpm5", calls)
        a, b = first._engine, second._engine
        assert a._names is b._names and a._longer_openers is b._longer_openers
        assert a._next_stops is not b._next_stops  # (where a parser is in its text: its own)
        assert memo_of(first, "f") is memo_of(second, "f") != {}
        other_family = fed(parser_of("qwen3_coder", 0, 0), "qwen3_coder", calls)
        for other in (
            fed(parser_of("minicpm5", 1, 0), "minicpm5", calls),
            fed(parser_of("minicpm5", 0, 2), "minicpm5", calls),
            other_family,
        ):
            assert memo_of(other, "f") is not memo_of(first, "f")
        # (a grammar's memos are its own: header names and openers are read by its items)
        assert other_family._engine._names is not a._names
        assert other_family._engine._longer_openers is not a._longer_openers
        assert parser_of("minicpm5", 1, 3)._engine._names is a._names
        # tools of another value for "g" share nothing with "f", and the same "f" as ever
        assert memo_of(fed(parser_of("minicpm5", 3, 0), "minicpm5", calls), "f") is not memo_of(
            first, "f"
        )
        traced = toolgrammar.StreamParser("minicpm5", TOOLS[0], trace=lambda event: None)
        fed(traced, "minicpm5", calls)
        assert traced._engine._names is not a._names
        assert memo_of(traced, "f") is not memo_of(first, "f")
    with shortcuts_set(False):
        slow = fed(parser_of("minicpm5", 0, 0), "minicpm5", calls)
        assert slow._engine._names is not a._names
        assert memo_of(slow, "f") is not memo_of(first, "f")


def test_a_memo_is_never_read_by_another_tools_value_or_policy() -> None:
    """Two parsers at once, the same tool and key typed by different schemas, or read under
    different policies: each reads by its own, whichever read the key first."""
    text = text_of("minicpm5", [("f", "x", "3"), ("f", "y", "[1, 2]"), ("g", "x", "true")])
    want = {
        (0, 0): [("f", {"x": 3}), ("f", {"y": "[1, 2]"}), ("g", {"x": "true"})],
        (1, 0): [("f", {"x": "3"}), ("f", {"y": "[1, 2]"}), ("g", {"x": True})],
        (0, 1): [("f", {"x": 3}), ("f", {"y": [1, 2]}), ("g", {"x": "true"})],
        (0, 2): [("f", {"x": 3}), ("f", {}), ("g", {"x": "true"})],
    }
    with shortcuts_set(True):
        for order in (list(want), list(reversed(want))):
            forget()
            parsers = {key: parser_of("minicpm5", *key) for key in order}
            deltas: dict[tuple[int, int], list[Any]] = {key: [] for key in order}
            for at in range(0, len(text), 7):
                for key in order:
                    deltas[key] += parsers[key].feed(text[at : at + 7])
            for key in order:
                assert calls_in(deltas[key] + parsers[key].finish()) == want[key], key


def calls_in(deltas: list[Any]) -> list[tuple[str, Any]]:
    message = toolgrammar.assemble(deltas)
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]


def test_a_schema_changed_in_place_is_read_anew() -> None:
    """A tool's memo is the one of its `parameters`' value when its first call is read: a
    caller that changes its tools in place gets the new reading, from the next call on, as
    a parser that shares nothing gets it."""
    forget()
    tools = [function_tool("f", {"x": {"type": "integer"}})]
    text = text_of("minicpm5", [("f", "x", "3")])

    def arguments(parser: toolgrammar.StreamParser) -> Any:
        return calls_in(parser.feed(text) + parser.finish())[0][1]

    with shortcuts_set(True):
        made_before = toolgrammar.StreamParser("minicpm5", tools)
        assert arguments(toolgrammar.StreamParser("minicpm5", tools)) == {"x": 3}
        tools[0]["function"]["parameters"]["properties"]["x"]["type"] = "string"
        assert arguments(toolgrammar.StreamParser("minicpm5", tools)) == {"x": "3"}
        assert arguments(made_before) == {"x": "3"}
        tools[0]["function"]["parameters"]["properties"]["x"]["type"] = "integer"
        assert arguments(toolgrammar.StreamParser("minicpm5", tools)) == {"x": 3}


def test_tools_a_parser_warns_about_keep_their_memos_apart() -> None:
    """A parser warns at its own first call of a tool whose schema typing cannot read: what
    it works out of such a tool is its own, so every parser still warns."""
    forget()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "junk"}}}]
    text = text_of("minicpm5", [("f", "x", "3")])
    with shortcuts_set(True):
        parsers = []
        for _ in range(2):
            parser = toolgrammar.StreamParser("minicpm5", tools)
            with pytest.warns(ToolSchemaWarning, match="'f'"):
                parser.feed(text)
                parser.finish()
            parsers.append(parser)
        assert memo_of(parsers[0], "f") is not memo_of(parsers[1], "f")


def test_parameters_marshal_refuses_keep_their_memos_apart() -> None:
    class Params(dict):  # type: ignore[type-arg]
        pass

    params = Params(type="object", properties={"x": {"type": "integer"}})
    tools = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    text = text_of("minicpm5", [("f", "x", "3")])
    with shortcuts_set(True):
        first, second = (toolgrammar.StreamParser("minicpm5", tools) for _ in range(2))
        assert calls_in(first.feed(text) + first.finish()) == [("f", {"x": 3})]
        assert calls_in(second.feed(text) + second.finish()) == [("f", {"x": 3})]
        assert memo_of(first, "f") is not memo_of(second, "f")


def test_parsers_on_many_threads_read_their_own_tools() -> None:
    """A server makes parsers on many threads at once, of two tools values in turns."""
    forget()
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
            got = calls_in(deltas + parser.finish())
            if got != want[which]:
                wrong.append(f"{which}: {got}")

    with shortcuts_set(True):
        threads = [threading.Thread(target=work, args=(start,)) for start in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert wrong == []
