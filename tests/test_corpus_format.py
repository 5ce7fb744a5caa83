"""Mistakes in a corpus file are said with the file, the line and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.corpus_format import CorpusError, load, rewrite

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
        load(path, update=False)
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


@pytest.mark.parametrize("expectation", ["", "\n", '{"content": "hi"}', '{"content": '])
def test_the_update_switch_fills_an_empty_or_broken_expectation(
    tmp_path: Path, expectation: str
) -> None:
    """A new case is written with `--- expect` and nothing after it; the update run fills it
    (it used to stop collection with a hint naming the switch already on)."""
    path = tmp_path / "demo.txt"
    path.write_text("=== a\nhi\n--- expect\n" + expectation + "\n=== b\nho\n--- expect\n", "utf-8")
    with pytest.raises(CorpusError):
        load(path, update=False)
    cases = load(path, update=True)
    assert [(case.name, case.text, case.expect) for case in cases] == [
        ("a", "hi", {}),
        ("b", "ho", {}),
    ]
    filled = json.loads(GOOD)
    rewrite(path, {"a": filled, "b": filled})
    assert [case.expect for case in load(path, update=False)] == [filled, filled]


def test_the_hint_for_an_empty_expectation_says_to_leave_it_empty_and_fill(tmp_path: Path) -> None:
    path = tmp_path / "demo.txt"
    path.write_text("=== a\nhi\n--- expect\n", "utf-8")
    with pytest.raises(
        CorpusError, match="leave it empty and run with TOOLGRAMMAR_UPDATE_CORPUS=1"
    ):
        load(path, update=False)


def test_a_crlf_case_keeps_its_carriage_returns() -> None:
    """A script that rewrites a corpus file in text mode turns its CRLF cases into LF ones,
    silently: the case still passes, testing nothing of what its title says (it happened in
    two branches). Every case whose title names CRLF must still hold a CR LF."""
    from support.corpus_format import all_cases

    crlf = [case for case in all_cases() if "CRLF" in case.name]
    assert len(crlf) >= 10
    lost = [f"{case.family}: {case.name}" for case in crlf if "\r\n" not in case.text]
    assert not lost, f"CRLF cases without a CR LF (rewritten in text mode?): {lost}"
