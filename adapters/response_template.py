"""Where a serving adapter finds the response template of a template family (`hf`).

vLLM and SGLang give a parser the served tokenizer and nothing of the checkpoint besides; the
checkpoint's `response_template` (docs/response_templates.md) comes with that tokenizer. Both
stacks' own response-template parsers look it up in the same order, and so do the adapters:
the template passed to the parser, else the tokenizer's `response_template` attribute, else
its `init_kwargs` entry (read from tokenizer_config.json).
"""

from __future__ import annotations

from typing import Any

import toolgrammar


def response_template_of(tokenizer: Any, given: Any = None) -> dict[str, Any] | None:
    """The template found for `tokenizer` (None when there is none): `given`, else the
    tokenizer's `response_template` attribute, else its `init_kwargs` entry."""
    template = given
    if template is None:
        template = getattr(tokenizer, "response_template", None)
    if not isinstance(template, dict):
        template = (getattr(tokenizer, "init_kwargs", None) or {}).get("response_template")
    return template if isinstance(template, dict) else None


def template_for(name: str, family: str, tokenizer: Any, given: Any) -> dict[str, Any] | None:
    """The template a parser registered as `name` for `family` reads with: None for a
    grammar family; for a template family the one found, or a clear ValueError when the
    tokenizer has none (raised where the stack builds the parser)."""
    if family not in toolgrammar.TEMPLATE_FAMILIES:
        return None
    template = response_template_of(tokenizer, given)
    if template is None:
        raise ValueError(
            f"{name} needs the checkpoint's `response_template` (tokenizer_config.json) and "
            + ("no tokenizer was given" if tokenizer is None else "the tokenizer has none")
        )
    return template
