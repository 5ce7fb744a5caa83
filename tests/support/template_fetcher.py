"""scripts/fetch_templates.py as a module, for the `template_folder` fixture (conftest.py)
and the fetcher's own tests (scripts/ is no package, and `conftest` is no importable name:
each test folder has its own)."""

import importlib.util
import sys
from pathlib import Path
from typing import Any


def fetcher() -> Any:
    """scripts/fetch_templates.py, loaded once."""
    if "fetch_templates" in sys.modules:
        return sys.modules["fetch_templates"]
    path = Path(__file__).resolve().parents[2] / "scripts/fetch_templates.py"
    spec = importlib.util.spec_from_file_location("fetch_templates", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module
