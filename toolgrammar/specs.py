"""Which `FamilySpec` a family name means: a grammar's, or the one compiled from the caller's
`response_template` (`hf`).

The API (`toolgrammar`) and the grammar export (`toolgrammar.export`) both start from a
name; this module is below both, so the export need not import the API.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from .runtime.registry import get_spec
from .runtime.spec import FamilySpec

TEMPLATE_FAMILIES = ("hf",)
"""Names whose markup comes from the caller's `response_template`, not from a grammar file:
not in `families()`, which lists the grammars' names."""


def family_spec(family: str, response_template: Mapping[str, Any] | None = None) -> FamilySpec:
    """The spec `family` names; for `hf`, the one compiled from `response_template` (cached
    by value). The template compiler is loaded on first use: parsing any other family never
    needs it."""
    if family in TEMPLATE_FAMILIES:
        if response_template is None:
            raise ValueError(
                f"family {family!r} reads the checkpoint's response_template: pass "
                "response_template=… (CLI: --response-template FILE)"
            )
        compiler = importlib.import_module("toolgrammar.compiler.response_template")
        return compiler.template_spec(response_template, family)
    if response_template is not None:
        raise ValueError(
            f"response_template is read by {', '.join(TEMPLATE_FAMILIES)} only, not {family!r}"
        )
    return get_spec(family)
