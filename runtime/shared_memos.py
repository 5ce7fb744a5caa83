"""What a parser works out once per tool or per grammar literal rather than once per call,
shared by the parsers of the process: a fresh parser's first call of a tool then reads as
its later calls do.

A parser remembers what a markup key reads as against its tool's schema and the policies
(`DialectSink.tool_memo`), the name a call header reads as (`HeadReaders._read_name`) and
the call openers longer than an optional literal (`ItemReaders._opener_longer`). Made anew
per parser, that work ran in every request's first call of each tool: on minicpm5's
many_calls stream the first call's deltas cost 1.7 times a later call's (side-by-side
harness timing, pure build). Here it is kept per process, keyed by everything its value
depends on:

- per compiled grammar (by identity, the grammar kept with its memos): header names and
  longer openers, which read the grammar's items and literals alone;
- per compiled grammar, policies (by value), whether tools were given, the tool's name and
  its `parameters` by value (`schema_check.value_key`: marshal's bytes, which tell `1`,
  `1.0` and `True` apart), and the dialect item (by identity): a tool's key memo. A tool
  whose schema a parser must warn about at its own first call of it (`warn_about_schema`)
  keeps a memo per parser, as do `parameters` marshal refuses.

Bounded (least recently used out first) and locked where the stores change, as a server
makes parsers on many threads; the memos' own entries are each one dict operation, and a
value two parsers work out at once is the same value. Traced parsers and parsers made with
the shortcuts off (`shortcuts.ON`, the general path tests/runtime/test_shared_memos.py reads
this one against) share nothing.
"""

from __future__ import annotations

import threading
from typing import Any

from . import shortcuts
from .schema_check import is_suspect, value_key
from .schemas import TYPE_SPELLINGS, ToolSchemas

__all__ = ["forget", "grammar_memos", "tool_memo"]

# per compiled grammar: (the grammar, header names, longer openers)
_GRAMMARS: dict[int, tuple[object, dict, dict]] = {}
_GRAMMARS_LIMIT = 64
# per grammar, policies, tools given, tool name, parameters value and item:
# (the grammar, the item, the tool's key memo)
_TOOLS: dict[tuple[int, object, bool, str, bytes, int], tuple[object, object, dict]] = {}
_TOOLS_LIMIT = 128
_lock = threading.Lock()


def grammar_memos(family: object) -> tuple[dict, dict] | None:
    """The header-name and longer-opener memos of every parser of `family` (a compiled
    grammar), or None when the shortcuts are off (each parser's own)."""
    if not shortcuts.ON:
        return None
    key = id(family)
    with _lock:
        found = _GRAMMARS.pop(key, None)
        if found is None or found[0] is not family:
            found = (family, {}, {})
            if len(_GRAMMARS) >= _GRAMMARS_LIMIT:
                del _GRAMMARS[next(iter(_GRAMMARS))]
        _GRAMMARS[key] = found  # (re)inserted last: the most recently used
    return found[1], found[2]


def tool_memo(family: object, policies: Any, tools: ToolSchemas, name: str, item: object) -> dict:
    """The key memo of tool `name` read by `item` of `family` under `policies`, shared by
    every parser of them given that tool with `parameters` of the same value; a new dict
    of this parser's own when it may not be shared (see the module's docstring)."""
    if not shortcuts.ON:
        return {}
    params = tools.params_of(name)
    value = value_key(params)
    if value is None or is_suspect(params, TYPE_SPELLINGS, value):
        return {}
    key = (id(family), policies, tools.given, name, value, id(item))
    with _lock:
        found = _TOOLS.pop(key, None)
        if found is None or found[0] is not family or found[1] is not item:
            found = (family, item, {})
            if len(_TOOLS) >= _TOOLS_LIMIT:
                del _TOOLS[next(iter(_TOOLS))]
        _TOOLS[key] = found
    return found[2]


def forget() -> None:
    """Let go of every shared memo (for tests that count the work a first call does)."""
    with _lock:
        _GRAMMARS.clear()
        _TOOLS.clear()
