"""The toolgrammar compiler: grammars/*.tg -> generated/*.py.

Pipeline, one job per module: `frontend` (lark parse -> `ir`), `validate` (every static
error of a file at once), `lower` (IR -> runtime `FamilySpec` -> view model), `emit`
(jinja2 + black + compile check), `build` (files, cross-file validation, compare mode).
Needs the `compiler` extra (lark, jinja2, black); the runtime never imports this package.
"""

from .build import BuildResult, build, compile_grammar_text, default_paths
from .errors import CompileError, CompileErrors
from .frontend import parse_grammar

__all__ = [
    "BuildResult",
    "CompileError",
    "CompileErrors",
    "build",
    "compile_grammar_text",
    "default_paths",
    "parse_grammar",
]
