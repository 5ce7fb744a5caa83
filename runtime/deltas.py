"""The shapes the parser hands out: OpenAI chat-completion chunk deltas and messages,
how one feed's output becomes them, and the ids calls get.

Deltas are built on every `feed`, so they are plain slotted classes; the one-shot
`Message` is built once per parse and is a pydantic model (validation, `model_dump`).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, Field

from . import shortcuts
from .modes import CALL, CONTENT
from .unicode import sendable, sendable_or_none


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


class Function(BaseModel):
    name: str
    arguments: str = Field(description="The arguments as a JSON object, serialized")


class ToolCall(BaseModel):
    id: str
    type: str = "function"
    function: Function


class Message(BaseModel):
    """The whole assistant message, as a non-streaming OpenAI response carries it."""

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [call.model_dump() for call in self.tool_calls]
        return out


# what a parse gathers for one call: [id, name, argument text pieces]
CallParts = list


def assemble(deltas: list[Delta], finish_reason: str | None = None) -> Message:
    """Accumulate streamed deltas into the message a client would hold at the end."""
    if isinstance(deltas, (str, bytes)) or not hasattr(deltas, "__iter__"):
        raise TypeError(f"assemble() takes a list of Delta, not {type(deltas).__name__}")
    deltas = list(deltas)
    for at, delta in enumerate(deltas):
        if not isinstance(delta, Delta):
            raise TypeError(
                f"assemble() takes a list of Delta (what feed() and finish() return), "
                f"not {type(delta).__name__} at index {at}"
            )
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, CallParts] = {}
    for delta in deltas:
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


def message_of(
    content: list[str],
    reasoning: list[str],
    calls: dict[int, CallParts],
    finish_reason: str | None = None,
) -> Message:
    """The message from its gathered pieces: text in order, calls by index."""
    values: dict[str, Any] = {  # every exit is `sendable`: it encodes as UTF-8 (unicode.py)
        "content": sendable("".join(content)) or None,
        "reasoning": sendable("".join(reasoning)) or None,
        "tool_calls": None,
        "finish_reason": finish_reason,
    }
    gathered = sorted(calls.items())
    if shortcuts.ON and _BUILDABLE:
        values["tool_calls"] = _built_calls(gathered)
        return _built_message(values)
    values["tool_calls"] = [  # validated with the message (cheaper than a model each)
        {
            "id": sendable(call_id or ""),
            "function": {"name": sendable(name), "arguments": sendable("".join(arguments))},
        }
        for _, (call_id, name, arguments) in gathered
    ]
    return Message.model_validate(values)


# The models built directly set what pydantic-core's validation sets, through BaseModel's
# own slot descriptors (a C call each, no `__setattr__` lookup): `__dict__`, the fields set,
# and no extras or private attributes.
_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
# the models hold nothing but their fields (what the direct build sets): else they are
# validated
_BUILDABLE = all(
    cls.__pydantic_post_init__ is None
    and not cls.__private_attributes__
    and cls.model_config.get("extra") in (None, "ignore")
    and not cls.__pydantic_root_model__
    and cls.__new__ is object.__new__
    for cls in (Function, ToolCall, Message)
)


def _built_calls(gathered: list[tuple[int, CallParts]]) -> list[ToolCall]:
    """The calls `Message.model_validate` would make of the gathered parts, built directly
    (a call's two models, its dicts and its strings made in one pass): validation walks
    pydantic-core's validators for nothing it could refuse (every value is a str made here),
    and is left the slower of the two once the strings' `sendable` pass is counted.
    tests/runtime/test_message_build.py compares the two, fields set included."""
    built: list[ToolCall] = []
    for _, (call_id, name, arguments) in gathered:
        text = "".join(arguments)
        function = _new(Function)
        _set_dict(
            function,
            {
                "name": name if name.isascii() else sendable(name),
                "arguments": text if text.isascii() else sendable(text),
            },
        )
        _set_fields_set(function, {"name", "arguments"})
        _set_extra(function, None)
        _set_private(function, None)
        call_id = call_id or ""
        call = _new(ToolCall)
        _set_dict(
            call,
            {
                "id": call_id if call_id.isascii() else sendable(call_id),
                "type": "function",
                "function": function,
            },
        )
        _set_fields_set(call, {"id", "function"})  # `type` left at its default, as validated
        _set_extra(call, None)
        _set_private(call, None)
        built.append(call)
    return built


def _built_message(values: dict[str, Any]) -> Message:
    """`Message.model_validate(values)` of values already what it checks, built directly."""
    message = _new(Message)
    _set_dict(message, values)
    _set_fields_set(message, {"content", "reasoning", "tool_calls", "finish_reason"})
    _set_extra(message, None)
    _set_private(message, None)
    return message


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
        for entry in entries:
            mode = entry.mode
            last = deltas[-1] if deltas else None
            if mode == CALL:
                part = _call_part(entry)
                if last is not None and last.tool_calls and last.content is None:
                    last.tool_calls.append(part)
                else:
                    deltas.append(Delta(tool_calls=[part]))
            elif mode == CONTENT:
                text = sendable("".join(entry.parts))
                if last is not None and not last.tool_calls and last.content is None:
                    last.content = text
                else:
                    deltas.append(Delta(content=text))
            else:
                deltas.append(Delta(reasoning=sendable("".join(entry.parts))))
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
    if call_id is None and entry.name is None:  # (a later fragment: no id, name or type)
        return ToolCallDelta(entry.index, None, FunctionDelta(None, arguments))
    return ToolCallDelta(
        entry.index,
        sendable_or_none(call_id),
        FunctionDelta(sendable_or_none(entry.name), arguments),
        "function" if call_id is not None else None,
    )
