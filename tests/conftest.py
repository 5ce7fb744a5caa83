"""tests/vllm and tests/sglang need their stack's environment (scripts/vllm_env.sh,
scripts/sglang_env.sh); scripts/test.sh runs each there, in a pytest run of its own that sets
TOOLGRAMMAR_VLLM_TESTS=1 or TOOLGRAMMAR_SGLANG_TESTS=1. The plain run leaves them out."""

import os
from pathlib import Path

import pytest

from support.compiled import BUILD, COMPILED, REQUIRE_COMPILED, refuse_unreached
from support.template_fetcher import fetcher as template_fetcher


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(REQUIRE_COMPILED) == "1" and BUILD["build"] != "compiled":
        raise pytest.UsageError(
            f"{REQUIRE_COMPILED}=1 but the compiled build does not run: {BUILD['why']}"
        )


if COMPILED:
    _setattr = pytest.MonkeyPatch.setattr

    def _refusing_setattr(self, target, name, value=None, raising=True):  # type: ignore[no-untyped-def]
        if isinstance(target, str) or not isinstance(name, str):
            return _setattr(self, target, name, value, raising)  # (no runtime target so patched)
        refuse_unreached(target, name)
        return _setattr(self, target, name, value, raising)

    pytest.MonkeyPatch.setattr = _refusing_setattr  # type: ignore[method-assign]


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
