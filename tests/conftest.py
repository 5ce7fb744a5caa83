"""tests/vllm needs vLLM's environment (scripts/vllm_env.sh); scripts/test.sh runs it there,
in a pytest run of its own that sets TOOLGRAMMAR_VLLM_TESTS=1. The plain run leaves it out."""

import os

collect_ignore = [] if os.environ.get("TOOLGRAMMAR_VLLM_TESTS") == "1" else ["vllm"]
