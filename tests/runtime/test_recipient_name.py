"""A call named by its message's recipient (`name(recipient=true)`): the header's recipient
is the call's name, the message body its arguments. Read whole and char by char."""

from __future__ import annotations

from typing import Any

import pytest

from toolgrammar.runtime.spec import Name
from grammar_text import read_both, spec_of

GRAMMAR = (
    "family x\n"
    'messages "to=" /[a-z_.]+/ "<m>" ["<e>"]\n'
    'route "" content\n'
    'route ["self"] reasoning\n'
    'route ["py", "b.ping"] drop\n'
    "route default drop\n"
    'call "<c>" name(until="</n>") "</n>" json_args "</c>"\n'
    'call name(recipient=true, after_last=".") ws json_args ws "<e>"?\n'
)


def tools(*names: str) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]


def read(text: str, given: list[dict] | None, reason: str = "stop") -> tuple:
    return read_both(spec_of(GRAMMAR), text, given, reason)


def test_the_item_lowers_with_no_opener() -> None:
    spec = spec_of(GRAMMAR)
    (shape,) = spec.alternatives
    assert shape.openers == ()
    assert shape.call[0] == Name(recipient=True, after_last=".", line=8)


@pytest.mark.parametrize(
    ("text", "given", "expected"),
    [
        # a requested tool's name
        ('to=ping<m>{"n": 1}<e>', tools("ping"), [("ping", '{"n": 1}')]),
        # the part after the last separator, when only that is requested
        ('to=a.b.ping<m>{"n": 1}<e>', tools("ping"), [("ping", '{"n": 1}')]),
        # the whole dotted name when that is requested
        ("to=a.ping<m>{}<e>", tools("a.ping", "ping"), [("a.ping", "{}")]),
        # not requested: the default route (drop)
        ('to=pong<m>{"n": 1}<e>', tools("ping"), []),
        # a routed recipient is not read by its last part
        ("to=b.ping<m>{}<e>", tools("ping"), []),
        # a routed recipient is a call when a requested tool has its name
        ("to=py<m>{}<e>", tools("py"), [("py", "{}")]),
        # no tools: any recipient no route names
        ('to=pong<m>{"n": 1}<e>to=py<m>x<e>to=self<m>hm<e>', None, [("pong", '{"n": 1}')]),
        # the call with its own opener still reads its name from the text
        ('<c>ping</n>{"n": 2}</c>', tools("ping"), [("ping", '{"n": 2}')]),
    ],
)
def test_recipient_names_the_call(text: str, given: Any, expected: list) -> None:
    assert read(text, given)[2] == expected


def test_text_around_is_kept_and_routes_still_apply() -> None:
    text = '<m>Hi<e>to=self<m>think<e>to=ping<m>{"n": 1}<e><m>bye'
    assert read(text, tools("ping")) == ("Hibye", "think", [("ping", '{"n": 1}')])


def test_cut_in_the_header_and_in_the_arguments() -> None:
    assert read("<m>Hi<e>to=pi", tools("ping"), "length") == ("Hi", None, [])
    assert read('to=ping<m>{"n": 1, "m"', tools("ping"), "length")[2] == [("ping", '{"n": 1}')]
