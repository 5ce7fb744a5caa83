"""The toolgrammar compiler: grammars/*.tg -> generated/*.py.

Pipeline, one job per module: `frontend` (lark parse -> `ir`), `validate` (every static
error of a file at once), `lower` (IR -> runtime `FamilySpec` -> view model), `emit`
(jinja2 + black + compile check), `build` (files, cross-file validation, compare mode).
Building needs the `compiler` extra (lark, jinja2, black); the runtime never imports this
package. `response_template` (a checkpoint's response template -> IR -> `FamilySpec`) needs
only `ir`, `validate` and `lower`, so the package imports without the extra, as the CLI does:
`COMPILER_MISSING` then says what is missing and the build names are absent.
"""

from .response_template import ResponseTemplateError, template_grammar, template_spec

try:
    from .build import BuildResult, build, compile_grammar_text, default_paths
    from .errors import CompileError, CompileErrors
    from .frontend import parse_grammar
except ImportError as missing:  # no compiler extra (e.g. vLLM's environment)
    COMPILER_MISSING: ImportError | None = missing
else:
    COMPILER_MISSING = None

__all__ = [
    "BuildResult",
    "COMPILER_MISSING",
    "CompileError",
    "CompileErrors",
    "ResponseTemplateError",
    "build",
    "compile_grammar_text",
    "default_paths",
    "parse_grammar",
    "template_grammar",
    "template_spec",
]
