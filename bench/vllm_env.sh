#!/usr/bin/env bash
# Build the opt-in environment bench/vs_vllm.py runs in (not part of the test command).
#
#   .cache/vllm-0.33.0/       vLLM 0.33.0's wheel unzipped, its compiled .so files left out:
#                             only its pure-Python parser and serving modules are used, put on
#                             sys.path by bench/vs_vllm.py (a full `pip install vllm` would pull
#                             a multi-GB CUDA torch)
#   .cache/vllm-bench-venv/   a venv with torch==2.13.0 (the CPU wheel on this machine's disk;
#                             pinned so pip never resolves a newer CUDA build), what vLLM's
#                             parser and serving modules import, matplotlib, and toolgrammar
#                             itself (`pip install -e .`)
#
# Usage: bash bench/vllm_env.sh            (idempotent: a finished step is skipped)
#        .cache/vllm-bench-venv/bin/python bench/vs_vllm.py --help
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache"
VLLM_VERSION="0.33.0"
VLLM_DIR="$CACHE/vllm-$VLLM_VERSION"
VENV="$CACHE/vllm-bench-venv"
PYTHON="${PYTHON:-python3}"

mkdir -p "$CACHE"

# 1. vLLM's pure-Python source, from its wheel, without the compiled extensions.
if [ ! -f "$VLLM_DIR/vllm/__init__.py" ]; then
    download="$(mktemp -d)"
    echo "== downloading vllm==$VLLM_VERSION (wheel only, no dependencies)"
    "$PYTHON" -m pip download --no-deps --only-binary=:all: -d "$download" "vllm==$VLLM_VERSION"
    wheel="$(ls "$download"/vllm-*.whl)"
    rm -rf "$VLLM_DIR.partial"
    mkdir -p "$VLLM_DIR.partial"
    echo "== unzipping $wheel without its .so files"
    "$PYTHON" - "$wheel" "$VLLM_DIR.partial" <<'EOF'
import sys, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    names = [n for n in archive.namelist() if not n.endswith(".so") and ".so." not in n]
    archive.extractall(target, members=names)
EOF
    rm -rf "$VLLM_DIR" "$download"
    mv "$VLLM_DIR.partial" "$VLLM_DIR"
fi

# 2. The venv: torch pinned to the CPU wheel on disk first, then the rest (a range that
#    torch 2.13.0 satisfies installs no other torch).
if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
VPY="$VENV/bin/python"
if ! "$VPY" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.13.0')" 2>/dev/null; then
    echo "== installing torch==2.13.0 (CPU)"
    "$VPY" -m pip install --quiet "torch==2.13.0"
fi
echo "== installing what vLLM's parser and serving modules import"
"$VPY" -m pip install --quiet \
    "torch==2.13.0" \
    "transformers>=5.16,<5.21" tokenizers pydantic openai partial-json-parser \
    "xgrammar==0.2.8" jsonschema msgspec regex cachetools psutil numpy pyyaml pybase64 \
    cbor2 orjson "fastapi<0.137" pyzmq blake3 py-cpuinfo ijson cloudpickle sentencepiece \
    tiktoken mistral_common aiohttp prometheus_client uvloop "oss-harmony>=0.0.11" \
    "matplotlib>=3.8"
echo "== installing toolgrammar (editable)"
"$VPY" -m pip install --quiet -e "$ROOT"

echo "== checking that vLLM's parser modules import"
"$VPY" "$ROOT/bench/vs_vllm.py" --check-env
echo "ok: run  $VPY bench/vs_vllm.py"
