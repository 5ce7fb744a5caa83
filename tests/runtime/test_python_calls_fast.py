"""The Python-call reader's shortcuts (`runtime/python_calls.py`) send exactly what its
character loop sends, feed for feed: a delta inside a one-quote string sent whole from
`read`, markers ruled out up to the first `Markers.lead` character, a run of commas and
spaces read at once (and a key still arriving after it waited on at once), a whole `NAME(`
(or a name still arriving) in one match. Random outputs made of the pieces these decide on
(strings with simple and other escapes, `<` inside them, markers cut anywhere, commas, keys
and names cut at the end) are fed split at every place, and in random pieces, with the
shortcuts on and off."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import toolgrammar
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime import python_calls

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties},
        },
    }
    for name, properties in (
        ("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
        ("edit", {"old_string": {"type": "string"}, "new_string": {"type": "string"}}),
        ("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}),
    )
]

# (family, what opens the calls, what closes them)
FRAMES = (
    ("lfm2", "<|tool_call_start|>[", "]<|tool_call_end|>"),
    ("pythonic", "[", "]"),
    ("llama4_pythonic", "<|python_start|>[", "]<|python_end|>"),
    ("olmo3", "<function_calls>", "</function_calls>"),
)

NAMES = st.sampled_from(["get_weather", "edit", "write_file", "f", "g.h-i", "n" * 257])
KEYS = st.sampled_from(["city", "days", "old_string", "content", "path", "x", "k" * 257])
EQUALS = st.sampled_from(["=", "=", " = ", "==", "=\n"])
STRING_TEXT = st.sampled_from(
    [
        "Paris", "total = 0", "a\\nb", "  print(\"row\", 1)  # keep <going>\\n", "<", "<|",
        "<|tool_call_end", "it\\'s", "\\\\", "\\x41", "\\u00e9", "\\", "'", '"', "x'y", "é",
        "<|tool_call_end|>", "</function_calls>", ")", "', ", "\\\n", "]",
    ]
)  # fmt: skip
BARE = st.sampled_from(["3", "-0.5", "True", "None", "[1, 'a']", "{'a': 1}", "07", "f(1)", "x"])
SEPARATORS = st.sampled_from([", ", ",", ", , ", ",\n ", " ,", "", " "])


@st.composite
def python_outputs(draw: st.DrawFn) -> tuple[str, str]:
    """A family and an output of calls in its frame, of the pieces the shortcuts decide on
    (its end, a call or the frame's closer, may be missing)."""
    family, opener, closer = draw(st.sampled_from(FRAMES))
    parts = [draw(st.sampled_from(["", "Text ", "<"])), opener]
    for number in range(draw(st.integers(1, 3))):
        if number:
            parts.append(draw(SEPARATORS) + ("\n" if family == "olmo3" else ""))
        parts += [draw(NAMES), draw(st.sampled_from(["(", " (", "\t("]))]
        for index in range(draw(st.integers(0, 4))):
            parts += [draw(SEPARATORS) if index else "", draw(KEYS), draw(EQUALS)]
            if draw(st.booleans()):
                quote = draw(st.sampled_from(["'", "'", '"', "'''"]))
                body = "".join(draw(st.lists(STRING_TEXT, max_size=6)))
                parts += [quote, body, quote if draw(st.integers(0, 5)) else ""]
            else:
                parts.append(draw(BARE))
        parts.append(draw(st.sampled_from([")", ")", ",)", "", " )"])))
    parts.append(draw(st.sampled_from([closer, closer, "", closer[:3], " tail"])))
    return family, "".join(parts)


def per_feed(family: str, pieces: list[str]) -> list[list[dict]]:
    """Each feed's deltas, and finish's."""
    parser = toolgrammar.StreamParser(family, TOOLS, ids="sequential")
    out = [[delta.to_dict() for delta in parser.feed(piece)] for piece in pieces]
    out.append([delta.to_dict() for delta in parser.finish()])
    return out


def both_ways(family: str, pieces: list[str]) -> None:
    with shortcuts_set(True):
        fast = per_feed(family, pieces)
    with shortcuts_set(False):
        slow = per_feed(family, pieces)
    assert fast == slow, pieces


@settings(max_examples=250, deadline=None)
@given(python_outputs())
def test_every_split_reads_as_the_loop(output: tuple[str, str]) -> None:
    """Split in two at every place, and one character at a time."""
    family, text = output
    for at in range(len(text) + 1):
        both_ways(family, [text[:at], text[at:]])
    both_ways(family, list(text))


@settings(max_examples=250, deadline=None)
@given(python_outputs(), st.lists(st.integers(1, 24), min_size=1, max_size=40))
def test_random_pieces_read_as_the_loop(output: tuple[str, str], sizes: list[int]) -> None:
    """Fed in pieces of random sizes (the sizes repeated to the end of the text)."""
    family, text = output
    pieces, at, index = [], 0, 0
    while at < len(text):
        size = sizes[index % len(sizes)]
        pieces.append(text[at : at + size])
        at, index = at + size, index + 1
    both_ways(family, pieces)


class _CountedLookups(dict):  # type: ignore[type-arg]
    """`python_calls._WHOLE_STRINGS`, counting its look-ups: one per `_string` call that
    tries the whole string (the character loop's way in), none from `read`'s shortcut."""

    looked = 0

    def __getitem__(self, quote: str) -> Any:
        _CountedLookups.looked += 1
        return super().__getitem__(quote)


def strings_read_by_the_loop(monkeypatch: Any, on: bool) -> tuple[int, int]:
    """How many feeds inside a long string reached `_string`, of how many feeds."""
    monkeypatch.setattr(
        python_calls, "_WHOLE_STRINGS", _CountedLookups(python_calls._WHOLE_STRINGS)
    )
    text = "<|tool_call_start|>[write_file(content='" + "line <b> \\n" * 40
    with shortcuts_set(on):
        parser = toolgrammar.StreamParser("lfm2", TOOLS)
        parser.feed(text[:45])
        _CountedLookups.looked = 0
        pieces = [text[at : at + 4] for at in range(45, len(text), 4)]
        for piece in pieces:
            parser.feed(piece)
    return _CountedLookups.looked, len(pieces)


def test_the_string_shortcut_is_taken(monkeypatch: Any) -> None:
    """(the comparisons above mean something: most feeds inside a long string go out from
    `read`; only those with a marker's lead character `<` in them, or an escape cut short,
    reach `_string`, and some do: the count is live)"""
    fast, feeds = strings_read_by_the_loop(monkeypatch, True)
    assert 0 < fast < feeds // 2, (fast, feeds)
