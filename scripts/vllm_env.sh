#!/usr/bin/env bash
# Builds the environment the vLLM adapter tests run in, under .cache/vllm-VERSION/ (gitignored),
# and prints its python. Reused while tests/vllm/requirements.lock and this script are unchanged.
#
#   bash scripts/vllm_env.sh            # the tested vLLM (TESTED below)
#   bash scripts/vllm_env.sh 0.33.0     # another release, beside it (scripts/peer_release.py)
#
# vLLM is never pip-installed (that pulls CUDA torch): its wheel is downloaded and unpacked
# without its compiled .so files onto the sys.path of a venv that holds CPU torch and the
# pure-Python packages vLLM's serving and parser modules import, pinned in the lock. The lock
# names no vLLM: the version is this script's argument, so one lock serves releases whose
# requirements it meets (scripts/peer_release.py says when a release asks for more).
set -euo pipefail
TESTED="0.34.0"
VERSION="${1:-$TESTED}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/.cache/vllm-$VERSION"
VENV="$DIR/venv"
SRC="$DIR/vllm-$VERSION"
LOCK="$ROOT/tests/vllm/requirements.lock"
KEY="$( (cat "$0" "$LOCK"; echo "$VERSION") | sha256sum | cut -c1-16)"

if [ ! -f "$DIR/ready-$KEY" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR/wheel"
    python3 -m venv "$VENV"
    # torch first and pinned: pip takes the CPU wheel that lies on this machine's disk
    "$VENV/bin/pip" install -q torch==2.13.0 >&2
    "$VENV/bin/pip" install -q --no-deps -r "$LOCK" >&2
    "$VENV/bin/pip" download -q --no-deps "vllm==$VERSION" -d "$DIR/wheel" >&2
    "$VENV/bin/python" - "$DIR/wheel" "$SRC" "$VERSION" <<'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob(f"vllm-{sys.argv[3]}-*.whl"))
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        if not (name.endswith(".so") or ".so." in name):
            z.extract(info, sys.argv[2])
PY
    rm -rf "$DIR/wheel"
    SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    echo "$SRC" > "$SITE/vllm-source.pth"
    # the modules the adapter and its tests use must import, or the environment is not ready
    "$VENV/bin/python" -c "import vllm, vllm.tool_parsers, vllm.reasoning
assert vllm.__version__ == '$VERSION', vllm.__version__" >&2
    touch "$DIR/ready-$KEY"
fi
# this checkout's toolgrammar, every time (cheap: no dependencies)
"$VENV/bin/pip" install -q --no-deps -e "$ROOT" >&2
echo "$VENV/bin/python"
