"""The policies a serving adapter reads its outputs with: its stack's profile, then what the
environment says.

An adapter behaves like the stack it serves (`compat="vllm"`, `"sglang"`: docs/compat.md's
table), so an operator who swaps `--tool-call-parser X` for `tg-X` gets what X gave. The
operator can change any switch for every parser of the process with one variable, as a
serving stack's command line names a parser and nothing more:

    TOOLGRAMMAR_POLICIES='{"whitespace": "trim"}'       # one switch
    TOOLGRAMMAR_POLICIES='{"compat": null}'             # the project's own policies

A bad value is a clear error where the stack builds the parser (at server start).
"""

from __future__ import annotations

import json
import os
from typing import Any

from toolgrammar.runtime.policies import COMPAT, SWITCHES

POLICIES_ENV = "TOOLGRAMMAR_POLICIES"
# a stack's own settings that change one of its answers: variable -> (switch, value when set)
STACK_SETTINGS: dict[str, dict[str, tuple[str, str]]] = {
    "sglang": {"SGLANG_FORWARD_UNKNOWN_TOOLS": ("unknown_tools", "keep")},
}
_TRUE = ("1", "true", "yes", "on")


def policies_from_env(stack: str) -> dict[str, Any]:
    """The `compat` and switch options for a parser of `stack`: the stack's profile, what the
    stack's own settings change (SGLang's forwarding of calls to unknown tools), then
    `TOOLGRAMMAR_POLICIES`, which wins."""
    options: dict[str, Any] = {"compat": stack}
    for variable, (switch, value) in STACK_SETTINGS.get(stack, {}).items():
        if os.environ.get(variable, "").strip().lower() in _TRUE:
            options[switch] = value
    raw = os.environ.get(POLICIES_ENV, "")
    if not raw.strip():
        return options
    try:
        given = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # (JSON nested too deep to read)
        raise ValueError(f"{POLICIES_ENV} is not JSON: {exc}") from None
    known = ("compat", *SWITCHES)
    if not isinstance(given, dict) or any(key not in known for key in given):
        raise ValueError(
            f"{POLICIES_ENV} must be a JSON object with keys among {', '.join(known)}: " f"{raw!r}"
        )
    if "compat" in given and given["compat"] not in (None, *COMPAT):
        allowed = ", ".join(json.dumps(c) for c in (*COMPAT, None))
        raise ValueError(
            f"{POLICIES_ENV}: compat must be one of {allowed}, not {given['compat']!r}"
        )
    options.update(given)
    return options
