"""The checker tooling, apart from the API: what proves a grammar and what attacks it.

- `family`: `toolgrammar check`, the invariants, render and export proven on one family;
- `fuzz`: `toolgrammar fuzz`, hostile outputs thrown at the invariants;
- `invariants`: the invariant checks over one text at its cut points and splits;
- `probes`: the per-family probes (a watched value's promptness, big and deep values);
- `templates`: round trips through a model's own chat template (`grammars/templates.toml`);
- `exports`: exported grammars run through llguidance (the test extra).

Nothing here is imported by `import toolgrammar`; the CLI imports it on demand.
"""

from __future__ import annotations

from .family import INVARIANTS, CheckReport, check

__all__ = ["INVARIANTS", "CheckReport", "check"]
