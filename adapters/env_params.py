"""Grammar params for a serving adapter, read from one environment variable.

A marker spelling that varies per checkpoint (`{"hy_v4": {"suffix": ":6124c78e"}}`) cannot come
from a serving stack's command line, which names a parser and nothing more.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache


@lru_cache(maxsize=8)
def _table(variable: str, raw: str) -> dict[str, dict[str, str]]:
    try:
        table = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError) as exc:  # (JSON nested too deep to read)
        raise ValueError(f"{variable} is not JSON: {exc}") from None
    if not isinstance(table, dict) or not all(
        isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) for v in table.values()
    ):
        raise ValueError(
            f'{variable} must map names to string params: {{"hy_v4": {{"suffix": ":x"}}}}'
        )
    return table


def params_from_env(variable: str, name: str) -> dict[str, str] | None:
    """The params `variable` gives for the registered name (None: the grammar's defaults)."""
    return _table(variable, os.environ.get(variable, "")).get(name)
