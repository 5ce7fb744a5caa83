"""tests/vllm and tests/sglang need their stack's environment (scripts/vllm_env.sh,
scripts/sglang_env.sh); scripts/test.sh runs each there, in a pytest run of its own that sets
TOOLGRAMMAR_VLLM_TESTS=1 or TOOLGRAMMAR_SGLANG_TESTS=1. The plain run leaves them out."""

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

collect_ignore = [
    stack
    for stack in ("vllm", "sglang")
    if os.environ.get(f"TOOLGRAMMAR_{stack.upper()}_TESTS") != "1"
]


def _fetcher() -> Any:
    """scripts/fetch_templates.py, loaded as a module (scripts/ is no package)."""
    path = Path(__file__).resolve().parent.parent / "scripts/fetch_templates.py"
    spec = importlib.util.spec_from_file_location("fetch_templates", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def template_folder() -> Path:
    """The folder of the models' chat templates (`grammars/templates.toml` names them), one
    folder per source inside, fetched once into .cache/; a failed fetch fails the test with its reason (CI runs on a clean clone, so a
    skip would hide that nothing was checked)."""
    fetcher = _fetcher()
    try:
        return fetcher.templates_root()
    except fetcher.FetchError as error:
        pytest.fail(f"the chat templates could not be fetched: {error}", pytrace=False)
