"""The message a parse hands out: the one-shot `Message` (a pydantic model: validation,
`model_dump`) and how it is built from what a parse gathered.

Apart from deltas.py, whose per-feed classes the compiled build compiles: mypyc compiles no
pydantic model (docs/compiled.md).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from . import shortcuts
from .unicode import sendable


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


def message_of(
    content: list[str],
    reasoning: list[str],
    calls: dict[int, CallParts],
    finish_reason: str | None = None,
) -> Message:
    """The message from its gathered pieces: text in order, calls by index."""
    gathered = sorted(calls.items())
    if shortcuts.ON and _BUILDABLE:  # (the fields in their order, as validation sets them)
        return _built_message(
            {  # every exit is `sendable`: it encodes as UTF-8 (unicode.py)
                "content": sendable("".join(content)) or None,
                "reasoning": sendable("".join(reasoning)) or None,
                "tool_calls": _built_calls(gathered),
                "finish_reason": finish_reason,
            }
        )
    values: dict[str, Any] = {
        "content": sendable("".join(content)) or None,
        "reasoning": sendable("".join(reasoning)) or None,
        "tool_calls": None,
        "finish_reason": finish_reason,
    }
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
