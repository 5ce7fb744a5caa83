"""Constrained-decoding grammars exported from the same grammar files the parsers come from.

`export_grammar(family, tools)` gives the grammar of a family's whole output for those tools
(content, the optional reasoning block, calls to exactly these tools with arguments that
follow their schemas) in llguidance's Lark syntax or in GBNF, so what a model may write
under constraint is what the family's parser reads back.

`toolgrammar.export` names this package. Called, it still exports, with a
`DeprecationWarning`, for one release: the name was both the package and the function.
Whichever way the name was reached (`toolgrammar.__getattr__`, or the import system binding
it to the package when the package or one of its modules is imported) it is this module, so
only the module's class can make it callable (`_DeprecatedCall`); it goes with the old name.
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType
from typing import Any, Literal, Mapping

from ..runtime.params import UnknownParam, with_params
from ..runtime.registry import UnknownFamily
from ..specs import family_spec
from . import gbnf, lark
from .build import Mode, build
from .schema import ExportError, load_tools
from .values import expand_json

__all__ = ["ExportError", "export_grammar"]

FORMATS = ("lark", "gbnf")
# the `source` of a spec compiled from a response template (compiler/response_template.py's
# SOURCE; not imported from there, which would load pydantic for every export)
TEMPLATE_SOURCE = "response_template"


def export_grammar(
    family: str,
    tools: Any,
    format: Literal["lark", "gbnf"] = "lark",
    mode: str = "auto",
    *,
    params: Mapping[str, str] | None = None,
    reasoning_open: bool | None = None,
    block_open: bool | None = None,
    json: Literal["native", "rules"] = "native",
    response_template: Mapping[str, Any] | None = None,
) -> str:
    """The grammar text. `mode` is `auto` (free text, then calls if the model opens one),
    `required` (at least one call) or `named:NAME` (exactly one call, to NAME).
    `reasoning_open` says the prompt already opened the reasoning block (default: the
    grammar's `prompt_opened`); `block_open` that it ended with the opener of the call,
    section or message the grammar flags `prompt_opened` (default: the grammar's), so the
    output may begin with the rest of that block. `json="native"` hands JSON arguments to
    llguidance as `%json` in lark (a JSON value inside a markup parameter is rules even so:
    a marker in its strings would end it); `"rules"` writes them as rules whose strings
    cannot hold the family's markers (always so in GBNF). Each run of rules made from one
    grammar line follows a comment naming that `file:line`. `response_template` is the
    checkpoint's template that family `hf` reads (docs/response_templates.md): its export is
    the grammar of that template.

    Raises `ExportError` on an unknown family, param, tool, mode or format, a tools list it
    cannot read, or a response template missing, refused or given to another family.
    """
    if not isinstance(family, str):
        raise ExportError(f"family must be a name, not {type(family).__name__}")
    if format not in FORMATS:
        raise ExportError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if json not in ("native", "rules"):
        raise ExportError(f"json must be 'native' or 'rules', not {json!r}")
    try:
        spec = with_params(family_spec(family, response_template), params)
    except UnknownFamily as e:
        raise ExportError(str(e)) from None
    except (UnknownParam, TypeError, ValueError) as e:  # a template error is a ValueError
        raise ExportError(str(e)) from None
    loaded = load_tools(tools)
    grammar = build(spec, loaded, Mode.parse(mode), reasoning_open, block_open)
    grammar.header = [
        f"toolgrammar export: family {spec.name}, mode {mode}, "
        f"tools {', '.join(t.name for t in loaded)}",
        f"from {_source(spec)} (sha256 {spec.source_sha256[:12]}); regenerate, do not edit",
    ]
    if format == "gbnf":
        return gbnf.write(grammar)
    expand_json(grammar, only_in_markup=json == "native")
    return lark.write(grammar)


def _source(spec: Any) -> str:
    """Where the grammar came from: a grammar file, or a response template (no file)."""
    if spec.source == TEMPLATE_SOURCE:
        return "the checkpoint's response_template"
    return f"grammars/{spec.name}.tg"


class _DeprecatedCall(ModuleType):
    """This package; calling it (the old `toolgrammar.export(...)`) warns and calls
    `export_grammar`. To be removed with the old name, one release on."""

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        warnings.warn(
            "toolgrammar.export(...) is deprecated: call toolgrammar.export_grammar(...)",
            DeprecationWarning,
            stacklevel=2,
        )
        return export_grammar(*args, **kwargs)


sys.modules[__name__].__class__ = _DeprecatedCall
