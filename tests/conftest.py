"""tests/vllm and tests/sglang need their stack's environment (scripts/vllm_env.sh,
scripts/sglang_env.sh); scripts/test.sh runs each there, in a pytest run of its own that sets
TOOLGRAMMAR_VLLM_TESTS=1 or TOOLGRAMMAR_SGLANG_TESTS=1. The plain run leaves them out."""

import os

collect_ignore = [
    stack
    for stack in ("vllm", "sglang")
    if os.environ.get(f"TOOLGRAMMAR_{stack.upper()}_TESTS") != "1"
]
