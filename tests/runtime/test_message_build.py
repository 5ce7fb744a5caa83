"""`message_of` builds the parse's `Message` directly when shortcuts are on
(`runtime/deltas._built_message`): the result must be the one pydantic's validation makes,
down to each model's fields set, as `model_dump(exclude_unset=True)` and `==` read them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from toolgrammar.runtime import deltas, shortcuts

GATHERED = [  # (content pieces, reasoning pieces, calls by index, finish reason)
    ([], [], {}, None),
    (["hi ", "there"], [], {}, "stop"),
    ([], ["think"], {0: ["call_0", "get_weather", ['{"city": ', '"Paris"}']]}, "tool_calls"),
    (["a"], ["b"], {1: [None, "f", []], 0: ["x", "", ["{}"]]}, "length"),
    (["\ud800 lone"], [], {0: ["id\udfff", "n\ud83d", ['{"a": "\udc00"}']]}, "stop"),
]
ONE_CALL = GATHERED[2]


def both_ways(args: tuple[Any, ...]) -> tuple[deltas.Message, deltas.Message]:
    """The message built directly (shortcuts on) and validated (shortcuts off)."""
    was = shortcuts.ON
    try:
        shortcuts.ON = True
        built = deltas.message_of(*args)
        shortcuts.ON = False
        validated = deltas.message_of(*args)
    finally:
        shortcuts.ON = was
    return built, validated


def models(message: BaseModel) -> list[BaseModel]:
    """The message and every model inside it."""
    found: list[BaseModel] = [message]
    for call in message.tool_calls:  # type: ignore[attr-defined]
        found += [call, call.function]
    return found


@pytest.mark.parametrize("args", GATHERED)
def test_built_message_is_the_validated_one(args: tuple[Any, ...]) -> None:
    assert deltas._BUILDABLE  # else the direct build is never taken and this tests nothing
    built, validated = both_ways(args)
    assert built == validated
    assert repr(built) == repr(validated)
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert built.to_dict() == validated.to_dict()
    for mine, theirs in zip(models(built), models(validated), strict=True):
        assert type(mine) is type(theirs)
        assert mine.model_fields_set == theirs.model_fields_set
        assert mine.model_extra == theirs.model_extra
        assert mine.__pydantic_private__ == theirs.__pydantic_private__


def test_built_message_is_a_model_of_its_own() -> None:
    """Two parses never share a fields set or a dict (a caller may change one message)."""
    args = ONE_CALL
    first, second = deltas.message_of(*args), deltas.message_of(*args)
    first.content = "changed"
    first.tool_calls[0].function.name = "other"
    first.model_fields_set.add("x")
    assert second.content is None and second.tool_calls[0].function.name == "get_weather"
    assert "x" not in second.model_fields_set
    assert deltas.Message.model_validate(second.model_dump()) == second


def test_a_message_of_one_call_is_built_directly_and_one_of_more_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The direct build is taken where it is cheaper (else this file tests nothing)."""
    validated: list[Any] = []
    real = deltas.Message.model_validate
    monkeypatch.setattr(
        deltas.Message, "model_validate", lambda values: validated.append(values) or real(values)
    )
    monkeypatch.setattr(shortcuts, "ON", True)
    deltas.message_of(*ONE_CALL)
    assert validated == []
    deltas.message_of([], [], {0: ["a", "f", ["{}"]], 1: ["b", "g", ["{}"]]}, "tool_calls")
    assert len(validated) == 1
