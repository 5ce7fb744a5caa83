"""The shapes the parser hands out: OpenAI chat-completion chunk deltas and messages,
how one feed's output becomes them, and the ids calls get.

Deltas are built on every `feed`, so they are plain slotted classes (compiled in the
compiled build); the one-shot `Message` is built once per parse and is a pydantic model
(validation, `model_dump`), in message.py.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, cast

# (the message models live in message.py: also importable from here, as before)
from .message import CallParts, Function, Message, ToolCall, message_of
from .modes import CALL, CONTENT
from .traits import mypyc_attr
from .unicode import sendable


class FunctionDelta:
    """A fragment of one call's function: the name once, then argument text pieces."""

    __slots__ = ("name", "arguments")

    def __init__(self, name: str | None = None, arguments: str = "") -> None:
        self.name = name
        self.arguments = arguments

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        out["arguments"] = self.arguments
        return out


class ToolCallDelta:
    """One entry of a chunk's `tool_calls`: `id` and `type` only on a call's first fragment."""

    __slots__ = ("index", "id", "type", "function")

    def __init__(
        self, index: int, id: str | None, function: FunctionDelta, type: str | None = None
    ) -> None:
        self.index = index
        self.id = id
        self.type = type
        self.function = function

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index}
        if self.id is not None:
            out["id"] = self.id
            out["type"] = self.type or "function"
        out["function"] = self.function.to_dict()
        return out


class Delta:
    """One `chat.completion.chunk` delta: content, reasoning and/or tool-call fragments."""

    __slots__ = ("content", "reasoning", "tool_calls")

    def __init__(
        self,
        content: str | None = None,
        reasoning: str | None = None,
        tool_calls: list[ToolCallDelta] | None = None,
    ) -> None:
        self.content = content
        self.reasoning = reasoning
        self.tool_calls = tool_calls or []

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.content is not None:
            out["content"] = self.content
        if self.tool_calls:
            out["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        return out

    def __repr__(self) -> str:
        return f"Delta({self.to_dict()!r})"


def assemble(deltas: Iterable[Delta], finish_reason: str | None = None) -> Message:
    """Accumulate streamed deltas into the message a client would hold at the end."""
    # (`Iterable`, not `list`: compiled, a `list` parameter refuses any other iterable before
    # the guards run.) The guards read what the caller passed as `object`: typed as Deltas,
    # mypy would take them for dead code and the compiled build would drop them.
    given = cast(object, deltas)
    if isinstance(given, (str, bytes)) or not hasattr(given, "__iter__"):
        raise TypeError(f"assemble() takes a list of Delta, not {type(given).__name__}")
    items: list[object] = list(cast(Any, given))
    for at, item in enumerate(items):
        if not isinstance(item, Delta):
            raise TypeError(
                f"assemble() takes a list of Delta (what feed() and finish() return), "
                f"not {type(item).__name__} at index {at}"
            )
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, CallParts] = {}
    for delta in cast("list[Delta]", items):
        if delta.content:
            content.append(delta.content)
        if delta.reasoning:
            reasoning.append(delta.reasoning)
        for part in delta.tool_calls:
            add_call_part(calls, part.index, part.id, part.function.name, [part.function.arguments])
    return message_of(content, reasoning, calls, finish_reason)


def add_call_part(
    calls: dict[int, CallParts],
    index: int,
    call_id: str | None,
    name: str | None,
    arguments: list[str],
) -> None:
    """One fragment of call `index`, kept as a client keeps it: the id and the name when a
    fragment has them, the argument pieces in order."""
    call = calls.get(index)
    if call is None:
        calls[index] = [call_id, name or "", list(arguments)]
        return
    if call_id is not None:
        call[0] = call_id
    if name is not None:
        call[1] = name
    call[2] += arguments


# random ids made 64 at a time: one `os.urandom` call per 64 calls, not one per call (a
# microsecond a call, a tenth of what a whole parse of many short calls costs per call)
_ID_BATCH = 64
_random_ids: list[str] = []


def random_call_id(_: int) -> str:
    # 16 random bytes as 32 hex digits, like uuid4().hex and secrets.token_hex(16); the
    # batch is taken with `list.pop` (atomic: threads never share an id) and dropped in a
    # forked child (which would otherwise hand out its parent's ids again)
    try:
        return _random_ids.pop()
    except IndexError:
        digits = os.urandom(16 * _ID_BATCH).hex()
        _random_ids.extend(
            f"chatcmpl-tool-{digits[at : at + 32]}" for at in range(0, 32 * _ID_BATCH, 32)
        )
        return _random_ids.pop()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_random_ids.clear)


def sequential_call_id(index: int) -> str:
    return f"call_{index}"


class OutEntry:
    """One stretch of a feed's output: text of one mode (CONTENT or REASONING), or (mode
    CALL) a fragment of call `index`, with its id and name when it begins the call."""

    __slots__ = ("mode", "parts", "index", "call_id", "name")

    def __init__(
        self,
        mode: int,
        parts: list[str],
        index: int = -1,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        self.mode = mode
        self.parts = parts  # text pieces, joined once when the deltas are made
        self.index = index
        self.call_id = call_id
        self.name = name


@mypyc_attr(allow_interpreted_subclasses=True)  # (trace.TracingDeltaBuffer: docs/compiled.md)
class DeltaBuffer:
    """Collects one feed's output and merges it into as few deltas as keep the order."""

    __slots__ = ("entries", "lone")

    def __init__(self) -> None:
        self.entries: list[OutEntry] = []
        # the argument pieces of a feed that may write nothing else (`Engine.feed`
        # opens it, `DialectSink.emit_args` fills it): made into its delta without an entry
        self.lone: list[str] | None = None

    def settle(self, index: int) -> None:
        """The open `lone` pieces (call `index`'s) as an entry: something else is written."""
        lone = self.lone
        if lone is not None:
            self.lone = None
            for text in lone:
                if text:  # (as `DialectSink.emit_args` sends them)
                    self.args(index, text)

    def put_first(self, index: int, pieces: list[str]) -> None:
        """Argument `pieces` of call `index`, written before all that was collected since
        (`Engine._hot_read` held them apart): the entries `settle` would have made of them
        first, and the `args` of this call written next joined to them as `args` joins."""
        texts = [text for text in pieces if text]  # (as `settle` leaves out empty ones)
        if not texts:
            return
        entries = self.entries
        if entries:
            first = entries[0]
            # (an entry of this call's arguments, made first by `args`: `args` would have
            # joined it to theirs, the last entry then)
            if first.mode == CALL and first.index == index and first.call_id is None:
                if first.name is None:
                    first.parts[:0] = texts
                    return
        entries.insert(0, OutEntry(CALL, texts, index))

    def text(self, mode: int, text: str) -> None:
        """Content or reasoning text (`mode` is CONTENT or REASONING)."""
        if not text:
            return
        entries = self.entries
        if entries and entries[-1].mode == mode:
            entries[-1].parts.append(text)
        else:
            entries.append(OutEntry(mode, [text]))

    def call(self, index: int, call_id: str, name: str) -> None:
        """Call `index` begins: its id and name (its arguments follow through `args`)."""
        self.entries.append(OutEntry(CALL, [""], index, call_id, name))

    def args(self, index: int, text: str) -> None:
        """An argument text piece of call `index` (the commonest entry: kept short)."""
        entries = self.entries
        if entries:
            last = entries[-1]
            if last.mode == CALL and last.index == index:
                last.parts.append(text)
                return
        entries.append(OutEntry(CALL, [text], index))

    def gather(self) -> tuple[list[str], list[str], dict[int, CallParts]]:
        """What `take` would send, accumulated as `assemble` would: the content and
        reasoning pieces and each call's parts, without building the deltas."""
        content: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, CallParts] = {}
        for entry in self.entries:
            mode = entry.mode
            if mode == CALL:
                add_call_part(calls, entry.index, entry.call_id, entry.name, entry.parts)
            elif mode == CONTENT:
                content += entry.parts
            else:
                reasoning += entry.parts
        self.entries = []
        return content, reasoning, calls

    def take(self) -> list[Delta]:
        """The deltas of what was collected since the last `take`, every string in them
        `sendable` (it encodes as UTF-8: runtime/unicode.py)."""
        entries = self.entries
        if len(entries) == 1:  # the commonest feed: one stretch, one delta
            self.entries = []
            entry = entries[0]
            mode = entry.mode
            if mode == CALL:
                if entry.call_id is None and entry.name is None:  # (`_call_part`, inline:
                    arguments = "".join(entry.parts)  # a later fragment, the commonest)
                    if not arguments.isascii():
                        arguments = sendable(arguments)
                    part = ToolCallDelta(entry.index, None, FunctionDelta(None, arguments))
                    return [Delta(None, None, [part])]
                return [Delta(None, None, [_call_part(entry)])]
            text = "".join(entry.parts)
            if not text.isascii():
                text = sendable(text)
            return [Delta(text) if mode == CONTENT else Delta(None, text)]
        if not entries:
            return []
        self.entries = []
        deltas: list[Delta] = []
        last: Delta | None = None  # (the last delta made: `deltas[-1]`, kept at hand)
        for entry in entries:
            mode = entry.mode
            if mode == CALL:
                if entry.call_id is None and entry.name is None:  # (`_call_part`, inline:
                    arguments = "".join(entry.parts)  # a later fragment)
                    if not arguments.isascii():
                        arguments = sendable(arguments)
                    part = ToolCallDelta(entry.index, None, FunctionDelta(None, arguments))
                else:
                    part = _call_part(entry)
                if last is not None and last.tool_calls and last.content is None:
                    last.tool_calls.append(part)
                else:
                    last = Delta(None, None, [part])
                    deltas.append(last)
            elif mode == CONTENT:
                text = "".join(entry.parts)
                if not text.isascii():  # (`sendable`'s own first test, without its call)
                    text = sendable(text)
                if last is not None and not last.tool_calls and last.content is None:
                    last.content = text
                else:
                    last = Delta(text)
                    deltas.append(last)
            else:
                text = "".join(entry.parts)
                if not text.isascii():
                    text = sendable(text)
                last = Delta(None, text)
                deltas.append(last)
        return deltas


def args_deltas(index: int, pieces: list[str]) -> list[Delta]:
    """The deltas of a feed that wrote only argument `pieces` of call `index` (no id or
    name): the commonest feed, built without an entry (`Engine.feed`); what
    `DeltaBuffer.take` makes of them."""
    arguments = "".join(pieces)
    if not arguments:
        return []
    if not arguments.isascii():
        arguments = sendable(arguments)
    return [Delta(None, None, [ToolCallDelta(index, None, FunctionDelta(None, arguments))])]


def _call_part(entry: OutEntry) -> ToolCallDelta:
    """The `tool_calls` entry of a CALL stretch (every string `sendable`)."""
    arguments = "".join(entry.parts)
    if not arguments.isascii():
        arguments = sendable(arguments)
    call_id = entry.call_id
    name = entry.name
    if call_id is None and name is None:  # (a later fragment: no id, name or type)
        return ToolCallDelta(entry.index, None, FunctionDelta(None, arguments))
    # (`sendable_or_none` of each, its ASCII test first: a call's first fragment)
    if call_id is not None and not call_id.isascii():
        call_id = sendable(call_id)
    if name is not None and not name.isascii():
        name = sendable(name)
    return ToolCallDelta(
        entry.index,
        call_id,
        FunctionDelta(name, arguments),
        "function" if call_id is not None else None,
    )
