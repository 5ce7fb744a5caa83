"""Compiler diagnostics: every error names a file, a line and a column.

Errors are values first (`CompileError`) and an exception second (`CompileErrors`),
so each stage can collect all of a file's problems before anything is raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class CompileError:
    """One problem at `path:line:column` (both 1-based), with the offending source line."""

    path: str
    line: int
    column: int
    message: str
    source_line: str | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}"
        if self.source_line is None:
            return text
        # Keep tabs in the padding so the caret lines up in any terminal.
        pad = "".join("\t" if c == "\t" else " " for c in self.source_line[: self.column - 1])
        return f"{text}\n    {self.source_line}\n    {pad}^"


def error_at(path: str, text: str, line: int, column: int, message: str) -> CompileError:
    """Build an error and attach the source line `line` of `text` for the caret."""
    lines = text.split("\n")  # lark counts "\n" only; str.splitlines() would also split on U+2028
    source = lines[line - 1].rstrip() if 0 < line <= len(lines) else None
    return CompileError(path, line, column, message, source)


class CompileErrors(Exception):
    """Raised with every error found, sorted by file and position."""

    def __init__(self, errors: Iterable[CompileError]) -> None:
        self.errors: list[CompileError] = sorted(errors, key=_order)
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


def _order(error: CompileError) -> tuple[str, int, int]:
    # sorted() is stable: errors at one position keep the order the checks found them in.
    return (error.path, error.line, error.column)
