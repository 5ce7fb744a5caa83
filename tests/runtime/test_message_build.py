"""`message_of` builds the parse's `Message` directly when shortcuts are on
(`runtime/message._built_message`): the result must be the one pydantic's validation makes,
down to each model's fields set, as `model_dump(exclude_unset=True)` and `==` read them."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from toolgrammar.runtime import deltas, shortcuts
from toolgrammar.runtime.message import _BUILDABLE

GATHERED = [  # (content pieces, reasoning pieces, calls by index, finish reason)
    ([], [], {}, None),
    (["hi ", "there"], [], {}, "stop"),
    ([], ["think"], {0: ["call_0", "get_weather", ['{"city": ', '"Paris"}']]}, "tool_calls"),
    (["a"], ["b"], {1: [None, "f", []], 0: ["x", "", ["{}"]]}, "length"),
    (["\ud800 lone"], [], {0: ["id\udfff", "n\ud83d", ['{"a": "\udc00"}']]}, "stop"),
]
MANY_CALLS = (  # a parse of many calls (kimi_k2 many_calls: 141), out of index order
    ["before "],
    [],
    {
        index: [f"functions.get_weather:{index}", "get_weather", ['{"city": ', f'"{index}"}}']]
        for index in reversed(range(141))
    },
    "tool_calls",
)
GATHERED.append(MANY_CALLS)
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


def assert_built_is_validated(args: tuple[Any, ...]) -> None:
    assert _BUILDABLE  # else the direct build is never taken and this tests nothing
    built, validated = both_ways(args)
    assert len(built.tool_calls) == len(args[2])
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
        assert vars(mine) == vars(theirs)
        assert [type(value) for value in vars(mine).values()] == [
            type(value) for value in vars(theirs).values()
        ]
        assert mine.__getstate__() == theirs.__getstate__()
    assert pickle.loads(pickle.dumps(built)) == validated
    assert copy.deepcopy(built) == validated
    assert deltas.Message.model_validate(built.model_dump()) == built


@pytest.mark.parametrize("args", GATHERED)
def test_built_message_is_the_validated_one(args: tuple[Any, ...]) -> None:
    assert_built_is_validated(args)


# text with lone surrogates often (what `sendable` escapes), non-ASCII and ASCII
TEXT = st.text(
    st.sampled_from(["a", '"', "é", "😀", "\ud83d", "\udc00", "\udfff"])
    | st.characters(exclude_categories=()),
    max_size=8,
)


@given(
    st.lists(TEXT, max_size=3),
    st.lists(TEXT, max_size=3),
    st.dictionaries(
        st.integers(0, 300),
        st.tuples(st.none() | TEXT, TEXT, st.lists(TEXT, max_size=3)).map(list),
        max_size=12,
    ),
    st.none() | st.sampled_from(["stop", "tool_calls", "length"]),
)
@settings(max_examples=300, deadline=None)
def test_any_gathered_message_is_built_as_validated(
    content: list[str], reasoning: list[str], calls: dict[int, Any], finish_reason: str | None
) -> None:
    """Random pieces, surrogates and non-ASCII text included (the `sendable` pass)."""
    assert_built_is_validated((content, reasoning, calls, finish_reason))


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


@pytest.mark.parametrize("calls", [0, 1, 2, 141])
def test_a_message_of_any_number_of_calls_is_built_directly(
    calls: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The direct build is taken whenever shortcuts are on (else this file tests nothing),
    and validation whenever they are off (the reference the direct build is compared with)."""
    validated: list[Any] = []
    real = deltas.Message.model_validate
    monkeypatch.setattr(
        deltas.Message, "model_validate", lambda values: validated.append(values) or real(values)
    )
    gathered = {index: [f"call_{index}", "f", ["{}"]] for index in range(calls)}
    monkeypatch.setattr(shortcuts, "ON", True)
    assert len(deltas.message_of([], [], gathered, "tool_calls").tool_calls) == calls
    assert validated == []
    monkeypatch.setattr(shortcuts, "ON", False)
    assert len(deltas.message_of([], [], gathered, "tool_calls").tool_calls) == calls
    assert len(validated) == 1
