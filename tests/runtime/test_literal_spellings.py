"""A literal with other spellings reads the longest one written at its place
(`item_readers._lit_at`): one test for all of them first, then the longest first (a
shortcut), the same as trying each in turn."""

from __future__ import annotations

import pytest

from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.item_readers import _lit_at
from toolgrammar.runtime.spec import Lit

# spellings that begin one another, in an order that is not the longest first
ITEM = Lit("ab", alternatives=("a", "abc", "xyz"))


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize(
    ("text", "pos", "spelling"),
    [
        ("abcd", 0, "abc"),
        ("abx", 0, "ab"),
        ("ax", 0, "a"),
        ("..xyz", 2, "xyz"),
        ("x", 0, ""),
        ("", 0, ""),
        ("zab", 1, "ab"),
        ("zabc", 1, "abc"),
    ],
)
def test_the_longest_spelling_at_the_place(on: bool, text: str, pos: int, spelling: str) -> None:
    with shortcuts_set(on):
        assert _lit_at(ITEM, text, pos) == spelling
