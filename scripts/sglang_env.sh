#!/usr/bin/env bash
# Builds the environment the SGLang adapter tests run in, under .cache/sglang-VERSION/
# (gitignored), and prints its python. Reused while tests/sglang/requirements.lock and this
# script are unchanged.
#
#   bash scripts/sglang_env.sh            # the tested SGLang (TESTED below)
#   bash scripts/sglang_env.sh 0.5.24     # another release, beside it (scripts/peer_release.py)
#
# SGLang's own requirements pull CUDA torch and GPU kernels, so its wheel is installed
# with --no-deps into a venv that holds CPU torch (the version vLLM's environment uses) and the
# pure-Python packages that importing SGLang's function-call, reasoning and server-argument
# modules needs, pinned in the lock (found by importing them until nothing was missing).
set -euo pipefail
TESTED="0.5.23"
VERSION="${1:-$TESTED}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/.cache/sglang-$VERSION"
VENV="$DIR/venv"
LOCK="$ROOT/tests/sglang/requirements.lock"
KEY="$( (cat "$0" "$LOCK"; echo "$VERSION") | sha256sum | cut -c1-16)"

if [ ! -f "$DIR/ready-$KEY" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR/wheel"
    python3 -m venv "$VENV"
    # torch first and pinned: pip takes the CPU wheel that lies on this machine's disk
    "$VENV/bin/pip" install -q torch==2.13.0 >&2
    "$VENV/bin/pip" install -q --no-deps -r "$LOCK" >&2
    "$VENV/bin/pip" download -q --no-deps "sglang==$VERSION" -d "$DIR/wheel" >&2
    "$VENV/bin/pip" install -q --no-deps "$DIR"/wheel/sglang-"$VERSION"-*.whl >&2
    rm -rf "$DIR/wheel"
    # the modules the adapter and its tests use must import, or the environment is not ready
    "$VENV/bin/python" -c 'import sglang.srt.function_call.function_call_parser
import sglang.srt.parser.reasoning_parser, sglang.srt.server_args, sglang.launch_server' >&2
    touch "$DIR/ready-$KEY"
fi
# this checkout's toolgrammar, every time (cheap: no dependencies; registers its SGLang plugin)
"$VENV/bin/pip" install -q --no-deps -e "$ROOT" >&2
echo "$VENV/bin/python"
