"""Exact-text error fixtures (tree-sitter style) and the table of common mistakes.

fixtures/errors/NAME.tg is a bad grammar; NAME.err is everything the compiler says
about it. After a deliberate change to messages, regenerate the expectations with
`TOOLGRAMMAR_UPDATE_FIXTURES=1 python -m pytest tests/compiler` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lark.exceptions import UnexpectedInput

from toolgrammar.compiler import CompileErrors, compile_grammar_text
from toolgrammar.compiler.frontend import MISTAKES, _parser, classify

from compiler_paths import HERE

FIXTURES = HERE / "fixtures" / "errors"
CASES = sorted(p.stem for p in FIXTURES.glob("*.tg"))
UPDATE = os.environ.get("TOOLGRAMMAR_UPDATE_FIXTURES") == "1"


def compile_errors(name: str) -> str:
    path = FIXTURES / f"{name}.tg"
    shown = path.relative_to(HERE).as_posix()  # fixtures/errors/NAME.tg
    with pytest.raises(CompileErrors) as info:
        compile_grammar_text(path.read_text(encoding="utf-8"), shown)
    return str(info.value) + "\n"


@pytest.mark.parametrize("name", CASES)
def test_error_fixture(name: str) -> None:
    actual = compile_errors(name)
    expected_path = FIXTURES / f"{name}.err"
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
    assert (
        expected_path.exists()
    ), f"missing {expected_path.name}; run with TOOLGRAMMAR_UPDATE_FIXTURES=1"
    assert actual == expected_path.read_text(encoding="utf-8")


def test_fixture_set_is_complete() -> None:
    assert len(CASES) >= 15
    orphans = sorted(p.stem for p in FIXTURES.glob("*.err") if p.stem not in CASES)
    assert orphans == []


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.message[:40])
def test_mistake_examples_match_their_label(mistake) -> None:
    for example in mistake.examples:
        with pytest.raises(UnexpectedInput) as info:
            _parser().parse(example)
        assert classify(info.value) is mistake, example


def test_every_mistake_label_has_a_fixture() -> None:
    outputs = "".join((FIXTURES / f"{name}.err").read_text(encoding="utf-8") for name in CASES)
    for mistake in MISTAKES:
        assert mistake.message.split("{")[0] in outputs, mistake.message


def test_bad_grammar_reports_all_errors_at_once() -> None:
    text = compile_errors("many_errors")
    locations = [line for line in text.splitlines() if line.startswith("fixtures/")]
    assert len(locations) >= 12
    assert locations == sorted(locations, key=lambda l: tuple(int(n) for n in l.split(":")[1:3]))


def test_error_shows_line_and_caret() -> None:
    with pytest.raises(CompileErrors) as info:
        compile_grammar_text('family x\ncall "<a>"\tname(until=">" \'b\')', "x.tg")
    (error,) = info.value.errors
    assert (error.path, error.line, error.column) == ("x.tg", 2, 27)
    assert str(error).splitlines() == [
        "x.tg:2:27: single-quoted string: grammar strings use double quotes",
        '    call "<a>"\tname(until=">" \'b\')',
        "    " + " " * 10 + "\t" + " " * 15 + "^",  # the tab is kept so the caret lines up
    ]


def test_unexpected_end_of_file_points_after_the_last_token() -> None:
    with pytest.raises(CompileErrors) as info:
        compile_grammar_text('family x\nreasoning "<think>"\n\n', "x.tg")
    (error,) = info.value.errors
    assert (error.line, error.column) == (2, 20)
    assert error.message.startswith("incomplete marker pair")


def test_unlabelled_syntax_error_lists_what_was_expected() -> None:
    with pytest.raises(CompileErrors) as info:
        compile_grammar_text('family x\ncall "<a>" name(until=">", max_len=-1)', "x.tg")
    assert str(info.value).startswith("x.tg:2:36: unexpected character '-'")
    with pytest.raises(CompileErrors) as info:
        compile_grammar_text('family x call "<a>" 12', "x.tg")
    assert info.value.errors[0].message == (
        "unexpected `12`; expected `&`, `??`, `?`, `[`, `aliases`, `call`, `citation`, `content`, "
        "`extends`, `family`, `ignore`, `messages`, `param`, `reasoning`, `render`, `route`, "
        "`section`, `special`, a name, a string, "
        "end of file"
    )
