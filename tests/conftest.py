"""tests/vllm and tests/sglang need their stack's environment (scripts/vllm_env.sh,
scripts/sglang_env.sh); scripts/test.sh runs each there, in a pytest run of its own that sets
TOOLGRAMMAR_VLLM_TESTS=1 or TOOLGRAMMAR_SGLANG_TESTS=1. The plain run leaves them out."""

import os
from pathlib import Path

import pytest

from support.template_fetcher import fetcher as template_fetcher

collect_ignore = [
    stack
    for stack in ("vllm", "sglang")
    if os.environ.get(f"TOOLGRAMMAR_{stack.upper()}_TESTS") != "1"
]


@pytest.fixture(scope="session")
def template_folder() -> Path:
    """The folder of the models' chat templates (`grammars/templates.toml` names them), one
    folder per source inside, fetched once into .cache/; a failed fetch fails the test with
    its reason (CI runs on a clean clone, so a skip would hide that nothing was checked)."""
    fetcher = template_fetcher()
    try:
        return fetcher.templates_root()
    except fetcher.FetchError as error:
        pytest.fail(f"the chat templates could not be fetched: {error}", pytrace=False)
