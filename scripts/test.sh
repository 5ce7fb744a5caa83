#!/usr/bin/env bash
# Every test, as CI runs them (.ci/run is this script): the plain suite, then the vLLM
# adapter's tests in vLLM's environment (built under .cache/vllm-VERSION/ by scripts/vllm_env.sh,
# reused while it is current), then the SGLang adapter's in SGLang's (.cache/sglang-VERSION/,
# scripts/sglang_env.sh), then the compiled leg (scripts/test_compiled.sh): the opt-in mypyc
# build of the hot runtime modules, cached in .cache/mypyc-KEY/, and the tests that say it is
# safe, run against it (docs/compiled.md). Any failure, a missing environment or build, or a
# run of no test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
pip install -e '.[test,compiled]'
toolgrammar build --check
# pure Python everywhere but the compiled leg, even where runtime/_compiled/ was installed
export TOOLGRAMMAR_PURE_PYTHON=1
python -m pytest -q
VLLM_PYTHON="$(bash scripts/vllm_env.sh)"
TOOLGRAMMAR_VLLM_TESTS=1 "$VLLM_PYTHON" -m pytest -q -p no:warnings tests/vllm
SGLANG_PYTHON="$(bash scripts/sglang_env.sh)"
TOOLGRAMMAR_SGLANG_TESTS=1 "$SGLANG_PYTHON" -m pytest -q -p no:warnings tests/sglang
bash scripts/test_compiled.sh
