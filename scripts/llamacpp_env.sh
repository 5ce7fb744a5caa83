#!/usr/bin/env bash
# Builds the llama.cpp peer of bench/agreement.py under .cache/llama.cpp-VERSION/ (gitignored)
# and prints the path of its harness (bench/llamacpp_harness.cpp, built against llama.cpp's
# common/ chat parsing). Reused while this script, bench/llamacpp/CMakeLists.txt and the harness
# are unchanged.
#
#   bash scripts/llamacpp_env.sh            # the llama.cpp vendored by llama-cpp-python 0.3.36
#
# llama.cpp's sources come from the llama-cpp-python sdist that scripts/fetch_templates.py
# pins (same URL, same sha256); only vendor/llama.cpp is unpacked. The build compiles only the
# chat-output parsing of common/ (templates, PEG and auto parsers, per-model parsers) and
# ggml-base, niced, two jobs: about 4 minutes on a loaded 2-core machine. Needs g++, cmake, ninja.
set -euo pipefail
VERSION="0.3.36"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$ROOT/.cache/llama.cpp-$VERSION"
SRC="$DIR/src"
BUILD="$DIR/build"
KEY="$( (cat "$0" "$ROOT/bench/llamacpp/CMakeLists.txt" "$ROOT/bench/llamacpp_harness.cpp"; echo "$VERSION") | sha256sum | cut -c1-16)"
PYTHON="${PYTHON:-python3}"

if [ ! -f "$DIR/ready-$KEY" ]; then
    rm -f "$DIR"/ready-*
    mkdir -p "$DIR"
    if [ ! -f "$SRC/.complete" ]; then
        rm -rf "$SRC"
        # the sdist fetch_templates.py pins, downloaded and checked by its own code
        "$PYTHON" - "$ROOT" "$DIR" "$VERSION" <<'PY' >&2
import sys, tarfile, tempfile
from pathlib import Path
root, target, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
sys.path.insert(0, str(root / "scripts"))
from fetch_templates import SOURCES, _download
source = next(s for s in SOURCES if s.name == "llama.cpp")
assert version in source.archive, (version, source.archive)
with tempfile.TemporaryDirectory(dir=target) as scratch:
    archive = Path(scratch) / source.archive
    _download(source, archive)
    prefix = f"{source.archive.removesuffix('.tar.gz')}/vendor/llama.cpp/"
    with tarfile.open(archive, "r:gz") as tar:
        members = []
        for member in tar.getmembers():
            if member.name.startswith(prefix) and (member.isfile() or member.isdir()):
                member.name = member.name[len(prefix):]
                members.append(member)
        tar.extractall(target / "src", members=members)
(target / "src" / ".complete").write_text(source.sha256 + "\n")
PY
    fi
    # an existing build directory is reused: ninja recompiles only what changed
    cmake -G Ninja -S "$ROOT/bench/llamacpp" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_SRC="$SRC" >&2
    nice -n 10 ninja -C "$BUILD" -j2 llamacpp_harness >&2
    # the harness must answer, or the environment is not ready
    echo '{"template": "'"$SRC"'/models/templates/Qwen3-Coder.jinja", "text": "hi"}' \
        | "$BUILD/llamacpp_harness" | grep -q '"content":"hi"' >&2
    touch "$DIR/ready-$KEY"
fi
echo "$BUILD/llamacpp_harness"
