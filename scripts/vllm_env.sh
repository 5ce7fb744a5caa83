#!/usr/bin/env bash
# Builds the environment the vLLM adapter tests run in, under .cache/vllm/ (gitignored), and
# prints its python. Reused while tests/vllm/requirements.lock and this script are unchanged.
#
# vLLM is never pip-installed (that pulls CUDA torch): its 0.33.0 wheel is downloaded and
# unpacked without its compiled .so files onto the sys.path of a venv that holds CPU torch
# and the pure-Python packages vLLM's serving and parser modules import, pinned in the lock.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/.cache/vllm"
VENV="$DIR/venv"
SRC="$DIR/vllm-0.33.0"
LOCK="$ROOT/tests/vllm/requirements.lock"
KEY="$(cat "$0" "$LOCK" | sha256sum | cut -c1-16)"

if [ ! -f "$DIR/ready-$KEY" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR/wheel"
    python3 -m venv "$VENV"
    # torch first and pinned: pip takes the CPU wheel that lies on this machine's disk
    "$VENV/bin/pip" install -q torch==2.13.0 >&2
    "$VENV/bin/pip" install -q --no-deps -r "$LOCK" >&2
    "$VENV/bin/pip" download -q --no-deps vllm==0.33.0 -d "$DIR/wheel" >&2
    "$VENV/bin/python" - "$DIR/wheel" "$SRC" <<'EOF'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("vllm-0.33.0-*.whl"))
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        if not (name.endswith(".so") or ".so." in name):
            z.extract(info, sys.argv[2])
EOF
    rm -rf "$DIR/wheel"
    SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    echo "$SRC" > "$SITE/vllm-source.pth"
    touch "$DIR/ready-$KEY"
fi
# this checkout's toolgrammar, every time (cheap: no dependencies)
"$VENV/bin/pip" install -q --no-deps -e "$ROOT" >&2
echo "$VENV/bin/python"
