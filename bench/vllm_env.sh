#!/usr/bin/env bash
# Build the opt-in environment bench/vs_vllm.py runs in (not part of the test command).
#
# It is the environment the vLLM adapter tests run in (scripts/vllm_env.sh: the tested vLLM's
# wheel unzipped without its .so files under .cache/vllm-VERSION/, a venv with torch CPU and the
# pinned packages vLLM's parser and serving modules import, toolgrammar -e), so the bench and
# the tests measure the same vLLM; the bench adds matplotlib for its plot.
#
# Usage: VPY="$(bash bench/vllm_env.sh [VERSION])"   (reuses what is current; prints nothing
#        $VPY bench/vs_vllm.py --help                   else on stdout than the python's path)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VPY="$(bash "$ROOT/scripts/vllm_env.sh" "$@")"
"$VPY" -m pip install --quiet "matplotlib>=3.8" >&2
"$VPY" "$ROOT/bench/vs_vllm.py" --check-env >&2
echo "$VPY"
