"""A lone wrapper parameter around a call's arguments, read as the arguments themselves.

Models trained on OpenAI-style calls sometimes write every argument inside one parameter
(`{"arguments": {"city": "Paris"}}`, DSML's `<parameter name="input">{…}</parameter>`,
MiniCPM5's `<param name="properties">{'id': 1}</param>`). The engine decides at the key
(`Sink.unwraps`): the call's first key is `arguments`, `input` or `properties`, its tool is
a requested one with properties, and that key is not one of them. The dialect then holds
the key's value until it is complete and writes its members in its place, each typed by
its own schema; a value that holds no object is written as the key's value after all.
The policy is docs/policies.md, "Wrapped arguments".
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Callable

from .coerce import coerce_json, decode_json_or_text, decode_object, json_text

WRAPPER_KEYS = frozenset({"arguments", "input", "properties"})


def wrapped_object(value: object) -> dict | None:
    """The object a wrapper's value holds: an object, or a string that writes one (JSON,
    over-escaped JSON, a Python dict); None for anything else."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        return decode_object(value)
    return None


def wrapped_text(text: str, json_flagged: bool) -> dict | None:
    """The object a markup wrapper's raw text holds (`json_flagged`: the markup says the
    value is JSON, DSML's `string="false"`)."""
    return wrapped_object(decode_json_or_text(text) if json_flagged else text)


def write_members(emit: Callable[[str], None], text: str, count: int) -> int:
    """Write a wrapper's members (`members_text`) in its place, after the `count` members
    already written; the count after them (an empty wrapper writes nothing)."""
    if not text:
        return count
    emit((", " if count else "") + text)
    return count + 1


def members_text(members: dict, schema_of: Callable[[str], dict | None]) -> str:
    """The members as they stand inside the arguments object (`"k": v, …`, no braces), each
    typed by its own parameter's schema, as the dialects write arguments."""
    return ", ".join(
        encode_basestring(str(key)) + ": " + json_text(coerce_json(value, schema_of(str(key))))
        for key, value in members.items()
    )
