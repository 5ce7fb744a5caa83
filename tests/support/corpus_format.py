"""The golden corpus: one plain-text file per family, read as documentation (docs/corpus.md).

    === a case's name
    --- options: reasoning_open block_open=false unknown_tools=drop finish=length tools=none
    <the model output, verbatim>
    --- expect
    {"content": ..., "reasoning": ..., "tool_calls": [["name", "arguments text"]], "finish_reason": ...}

The options line is optional; `reasoning_open=false` overrides a grammar's `prompt_opened`
reasoning and `block_open=false` its `prompt_opened` call, section or message,
`param.NAME=VALUE` fills a grammar param; `compat=STACK` and each switch (`whitespace=…`,
`unknown_tools=…`, `partial_calls=…`, `malformed_calls=…`) set the policies
(docs/policies.md);
`tools=none` parses with no tools, `tools=NAME` with those of `corpus/tools_NAME.json` instead
of `corpus/tools.json`. The output runs up to the `--- expect` line; the one
newline before that line is not part of it (leave an empty line to end an output with a
newline). `\\` + `n` is not special: the output is byte for byte what is written.
Setting TOOLGRAMMAR_UPDATE_CORPUS=1 rewrites the expectations from the parser's output
(then read the diff before committing it), as tree-sitter's corpus switch does.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from toolgrammar.runtime.policies import SWITCHES

CORPUS = Path(__file__).parent.parent / "corpus"
TOOLS: list[dict[str, Any]] = json.loads((CORPUS / "tools.json").read_text(encoding="utf-8"))


@dataclass
class Case:
    family: str
    name: str
    text: str
    expect: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    finish: str = "stop"
    tools: list[dict[str, Any]] | None = None
    line: int = 0

    @property
    def id(self) -> str:
        return f"{self.family}:{self.name}"


def _options(line: str) -> tuple[dict[str, Any], str, list[dict[str, Any]] | None]:
    options: dict[str, Any] = {}
    finish = "stop"
    tools: list[dict[str, Any]] | None = TOOLS
    for word in line.split():
        key, _, value = word.partition("=")
        if key in ("reasoning_open", "block_open"):
            options[key] = value != "false"
        elif key.startswith("param."):
            options.setdefault("params", {})[key[len("param.") :]] = value
        elif key in SWITCHES or key == "compat":  # policies.md's switches
            options[key] = value
        elif key == "finish":
            finish = value
        elif key == "tools" and value == "none":
            tools = None
        elif key == "tools":  # tools=NAME: the schemas of corpus/tools_NAME.json
            tools = json.loads((CORPUS / f"tools_{value}.json").read_text(encoding="utf-8"))
        else:
            raise ValueError(f"unknown corpus option {word!r}")
    return options, finish, tools


class CorpusError(ValueError):
    """A mistake in a corpus file, said as `file:line: what; hint` (collection stops on it)."""


UPDATE_SWITCH = "TOOLGRAMMAR_UPDATE_CORPUS"
EXPECT_KEYS = ("content", "reasoning", "tool_calls", "finish_reason")
MIN_CASES = 15  # per family: enough to cover its shapes, malformed calls and text around them


def updating() -> bool:
    """The update switch is on: expectations are filled from the parser, not read."""
    return os.environ.get(UPDATE_SWITCH) == "1"


def load(path: Path, *, update: bool | None = None) -> list[Case]:
    """The cases of one corpus file. With the update switch on (`update`, default: the
    environment's), an expectation that is empty, not JSON or incomplete is no error: it
    is about to be filled from the parser."""
    update = updating() if update is None else update
    family = path.stem
    lines = path.read_bytes().decode("utf-8").split("\n")  # a `\r` stays: CRLF cases
    cases: list[Case] = []
    seen: dict[str, int] = {}
    i = 0
    while i < len(lines):
        if not lines[i].startswith("=== "):
            i += 1
            continue
        name, start = lines[i][4:].strip(), i + 1
        if name in seen:
            raise CorpusError(
                f"{path}:{start}: a second case named {name!r} (the first is on "
                f"line {seen[name]}); case names are test ids, make it unique"
            )
        seen[name] = start
        i += 1
        options, finish, tools = {}, "stop", TOOLS
        if i < len(lines) and lines[i].startswith("--- options:"):
            try:
                options, finish, tools = _options(lines[i][len("--- options:") :])
            except (ValueError, OSError) as error:
                raise CorpusError(f"{path}:{i + 1}: {error}") from None
            i += 1
        body: list[str] = []
        while i < len(lines) and lines[i] != "--- expect" and not lines[i].startswith("=== "):
            body.append(lines[i])
            i += 1
        if i == len(lines) or lines[i] != "--- expect":
            raise CorpusError(
                f"{path}:{start}: case {name!r} has no `--- expect` line; end the "
                "output with `--- expect` and the expected message as JSON"
            )
        i += 1
        expect_at = i + 1
        expect_lines: list[str] = []
        while i < len(lines) and not lines[i].startswith("=== "):
            expect_lines.append(lines[i])
            i += 1
        try:
            expect = _expectation("\n".join(expect_lines), f"{path}:{expect_at}", name)
        except CorpusError:
            if not update:
                raise
            expect = {}  # filled by the update run

        cases.append(Case(family, name, "\n".join(body), expect, options, finish, tools, start))
    return cases


def _expectation(text: str, where: str, name: str) -> dict[str, Any]:
    """The `--- expect` JSON of a case, or a CorpusError that says what is wrong with it."""
    hint = (
        "write one JSON object with "
        + ", ".join(EXPECT_KEYS)
        + f" (or leave it empty and run with {UPDATE_SWITCH}=1 to fill it from the parser, "
        "then read the diff)"
    )
    if not text.strip():
        raise CorpusError(f"{where}: case {name!r} has an empty expectation; {hint}")
    try:
        expect = json.loads(text)
    except json.JSONDecodeError as error:
        raise CorpusError(
            f"{where}: case {name!r}: expectation is not JSON ({error}); {hint}"
        ) from None
    missing = [key for key in EXPECT_KEYS if not isinstance(expect, dict) or key not in expect]
    if missing:
        raise CorpusError(f"{where}: case {name!r}: expectation lacks {', '.join(missing)}; {hint}")
    return expect


def all_cases() -> list[Case]:
    return [case for path in sorted(CORPUS.glob("*.txt")) for case in load(path)]


def render_expect(message: Any) -> dict[str, Any]:
    return {
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [[c.function.name, c.function.arguments] for c in message.tool_calls],
        "finish_reason": message.finish_reason,
    }


def rewrite(path: Path, results: dict[str, dict[str, Any]]) -> None:
    """Replace each case's expectation with `results[name]` (the update switch)."""
    lines = path.read_bytes().decode("utf-8").split("\n")  # a `\r` stays: CRLF cases
    out: list[str] = []
    i = 0
    current = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("=== "):
            current = line[4:].strip()
        if line == "--- expect" and current in results:
            out.append(line)
            out.append(json.dumps(results[current], ensure_ascii=False))
            out.append("")
            i += 1
            while i < len(lines) and not lines[i].startswith("=== "):
                i += 1
            continue
        out.append(line)
        i += 1
    path.write_text("\n".join(out).rstrip("\n") + "\n", encoding="utf-8")


@contextmanager
def params_in_env(case: Case, variable: str) -> Iterator[None]:
    """A case's grammar params, given to a serving adapter the way a server is given them: as
    JSON in the adapter's environment variable, for the case's family."""
    given = case.options.get("params")
    if given is None:
        yield
        return
    os.environ[variable] = json.dumps({case.family: given})
    try:
        yield
    finally:
        del os.environ[variable]
