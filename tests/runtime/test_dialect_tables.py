"""The dialect tables agree: the grammar's words, the runtime's rows, the exporter's rules.

Each dialect is one row in each table (`compiler/ir.ELEMENTS`, `runtime/dialects.DIALECTS`,
`export/dialects.EXPORT_RULES`); a dialect missing from one would only fail when a grammar
first uses it. Every reader is made and read through the one protocol shape.
"""

from __future__ import annotations

import pytest

from toolgrammar.compiler import ir
from toolgrammar.export.dialects import EXPORT_RULES
from toolgrammar.runtime.dialects import DIALECTS
from toolgrammar.runtime.markers import NextStop, markers

WORDS = {word: sig for word, sig in ir.ELEMENTS.items() if sig.is_dialect}


def test_every_dialect_word_has_one_runtime_row_and_one_export_rule() -> None:
    specs = {sig.item_class for sig in WORDS.values()}
    assert len(specs) == len(WORDS)
    assert set(DIALECTS) == specs
    assert set(EXPORT_RULES) == specs


@pytest.mark.parametrize("word", sorted(WORDS))
def test_a_dialect_is_named_and_names_calls_in_the_runtime_as_the_grammar_says(word: str) -> None:
    sig = WORDS[word]
    assert DIALECTS[sig.item_class].names_calls == sig.gives_name
    assert DIALECTS[sig.item_class].item_class is sig.item_class
    assert DIALECTS[sig.item_class].word == word


class RecordingSink:
    """The engine's side of a reader, recorded."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.calls: list[tuple[str, str | None]] = []

    def emit_args(self, text: str) -> None:
        self.args.append(text)

    def commit_call(self, name: str, call_id: str | None = None) -> None:
        self.calls.append((name, call_id))

    def schema_of(self, key: str) -> dict | None:
        return None

    def typed_keys(self) -> frozenset[str]:
        return frozenset()

    def unwraps(self, key: str) -> bool:
        return False

    def next_stop(self, stops: tuple[str, ...]) -> NextStop:
        return NextStop(markers(stops))


# one item per word, with the arguments its grammar word requires, and text it reads
SAMPLES = {
    "xml_params": ({"open": "<p=", "key_end": ">", "value_end": "</p>"}, "<p=a>x</p>", False),
    "xml_elements": ({}, "<a>x</a>", False),
    "keyvalue_args": ({"string": '"'}, '{a:"x"}', False),
    "kv_lines": ({}, "a: x\n", False),
    "python_calls": ({}, "[f(a='x')]", True),
    "json_args": ({}, '{"a": "x"}', False),
    "json_call": ({}, '{"name": "f", "arguments": {"a": "x"}}', True),
    "json_call_array": ({}, '[{"name": "f", "arguments": {"a": "x"}}]', True),
}


@pytest.mark.parametrize("word", sorted(WORDS))
def test_every_reader_is_made_read_and_closed_the_same_way(word: str) -> None:
    fields, text, names = SAMPLES[word]
    item = WORDS[word].item_class(**fields)
    sink = RecordingSink()
    reader = DIALECTS[type(item)].reader(item, ("</end>",), sink)
    pos = reader.read(text + "</end>", 0, False)
    if not reader.done:
        reader.close()
    assert reader.done
    assert pos == len(text)
    assert "".join(sink.args).replace(" ", "") == '{"a":"x"}'
    assert sink.calls == ([("f", None)] if names else [])
    if names:
        assert reader.failed is False and reader.malformed is False
