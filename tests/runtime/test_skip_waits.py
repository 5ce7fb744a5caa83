"""A skip that has read nothing and has only a part of its `until` before it waits for the
rest at once (`CompiledFamily.skip_waits`, `HeadReaders._read_skip`): a shortcut, so a
stream cut at every place gives the same deltas, feed by feed, with the shortcuts on and
off; and the table leaves out the parts the search must decide (a marker in them, words,
more than the skip may read)."""

from __future__ import annotations

import pytest

from grammar_text import spec_of
from support.readers import feeds_at
from support.tools import function_tool
from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import Skip
from toolgrammar.runtime.tables import compile_family

TOOLS = [function_tool("f", {"a": {"type": "integer"}, "s": {"type": "string"}})]

INKLING_CALL = '<|message_model|><|content_invoke_tool_json|>{"name": "f", "args": {"a": 1}}'
SOLAR_CALL = '<|tool_call:begin|>c1<|tool_call:name|>f<|tool_call:args|>{"a": 1}<|tool_call:end|>'
# per family: outputs whose skips stand, by turns, empty, with a header, in a block of text
OUTPUTS = {
    "inkling": [
        INKLING_CALL + "<|end_message|>" + INKLING_CALL + "<|content_model_end_sampling|>",
        "Hi.<|message_model|> x<|content_invoke_tool_json|>"
        '{"name": "f", "args": {"s": "<|content_i"}}<|end_message|>',
        "<|message_model|>Hello there<|end_message|><|message_model|><|content_text|>Yes"
        "<|end_message|>" + INKLING_CALL + "<|end_message|>",
        "<|message_model|><|content_invoke_tool_text|>no<|end_message|>" + INKLING_CALL,
    ],
    "solar_open": [
        "<|tool_calls|>" + SOLAR_CALL + SOLAR_CALL + "<|calls|>",
        "<|tool_calls|><|tool_call:begin|><|tool_call:name|>f<|tool_call:args|>{}"
        "<|tool_call:end|><|tool_call:begin|>two words<|tool_call:name|>f<|calls|>",
    ],
}


def per_feed(family: str, text: str, cuts: list[int], finish: str) -> list[list[dict]]:
    return feeds_at(family, TOOLS, text, cuts, finish)


@pytest.mark.parametrize(
    "family, text", [(family, text) for family, texts in OUTPUTS.items() for text in texts]
)
def test_every_cut_reads_the_same_with_the_shortcuts_on_and_off(family: str, text: str) -> None:
    for finish in ("stop", "length"):
        for cut in range(1, len(text)):
            # one cut here, then the rest in 7-character deltas (a second cut in an `until`)
            cuts = [cut, *range(cut + 7, len(text), 7)]
            with shortcuts_set(True):
                fast = per_feed(family, text, cuts, finish)
            with shortcuts_set(False):
                slow = per_feed(family, text, cuts, finish)
            assert fast == slow, (text[:cut], finish)


def test_the_waits_are_the_parts_of_the_until_the_search_would_wait_at() -> None:
    with shortcuts_set(True):
        table = compile_family(get_spec("inkling"))
    [(key, (longest, parts))] = table.skip_waits.items()
    item = table.steps[key[0]][key[1]][1]
    assert isinstance(item, Skip) and item.until == ("<|content_invoke_tool_json|>",)
    until = item.until[0]
    assert parts == {until[:cut] for cut in range(1, len(until))}
    assert longest == len(until) - 1
    with shortcuts_set(False):
        assert compile_family(get_spec("inkling")).skip_waits == {}


@pytest.mark.parametrize("max_len, kept", [(16, {"x", "x "}), (1, {"x"})])
def test_a_part_that_holds_a_marker_or_words_is_left_to_the_search(
    max_len: int, kept: set[str]
) -> None:
    """A grammar of its own whose `until` holds a marker of the content search (`<b>`,
    ignored) after words: the parts that hold either, or are longer than the skip may
    read, are not in the table."""
    spec = spec_of(
        f'family t\nignore "<b>"\ncall\n    "<a>" skip(until="x <b>y", max_len={max_len})\n'
        '    "x <b>y" name(until="(") "(" json_args\n'
    )
    with shortcuts_set(True):
        table = compile_family(spec)
    [(_, parts)] = table.skip_waits.values()
    assert parts == kept
