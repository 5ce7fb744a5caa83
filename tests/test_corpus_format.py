"""Mistakes in a corpus file are said with the file, the line and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.corpus_format import CorpusError, load

GOOD = '{"content": "hi", "reasoning": null, "tool_calls": [], "finish_reason": "stop"}'


@pytest.mark.parametrize(
    "text, where, says",
    [
        ("=== a\nhi\n--- expect\n\n=== b\nhi\n--- expect\n" + GOOD, 4, "empty expectation"),
        ('=== a\nhi\n--- expect\n{"content": \n', 4, "expectation is not JSON"),
        ('=== a\nhi\n--- expect\n{"content": "hi"}\n', 4, "lacks reasoning, tool_calls"),
        ("=== a\nhi\n=== b\nhi\n--- expect\n" + GOOD, 1, "has no `--- expect` line"),
        ("=== a\nhi\n--- expect\n" + GOOD + "\n=== a\nhi\n--- expect\n" + GOOD, 5, "second case"),
        ("=== a\n--- options: finsh=length\nhi\n--- expect\n" + GOOD, 2, "unknown corpus option"),
    ],
)
def test_corpus_mistakes_name_file_and_line(
    tmp_path: Path, text: str, where: int, says: str
) -> None:
    path = tmp_path / "demo.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusError) as error:
        load(path)
    assert str(error.value).startswith(f"{path}:{where}: ")
    assert says in str(error.value)


def test_a_good_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "demo.txt"
    path.write_text(
        "# notes\n\n=== a\n--- options: finish=length\nhi\n--- expect\n" + GOOD, "utf-8"
    )
    [case] = load(path)
    assert (case.family, case.name, case.text, case.finish, case.line) == (
        "demo",
        "a",
        "hi",
        "length",
        3,
    )
