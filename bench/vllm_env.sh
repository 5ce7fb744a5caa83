#!/usr/bin/env bash
# Build the opt-in environment bench/vs_vllm.py runs in (not part of the test command).
#
# It is the environment the vLLM adapter tests run in (scripts/vllm_env.sh: vLLM 0.33.0's wheel
# unzipped without its .so files under .cache/vllm/, a venv with torch==2.13.0 CPU and the
# pinned packages vLLM's parser and serving modules import, toolgrammar -e), so the bench and
# the tests measure the same vLLM; the bench adds matplotlib for its plot.
#
# Usage: bash bench/vllm_env.sh            (reuses what is current; prints nothing else on stdout
#        .cache/vllm/venv/bin/python bench/vs_vllm.py --help       than the python's path)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VPY="$(bash "$ROOT/scripts/vllm_env.sh")"
"$VPY" -m pip install --quiet "matplotlib>=3.8" >&2
"$VPY" "$ROOT/bench/vs_vllm.py" --check-env >&2
echo "$VPY"
