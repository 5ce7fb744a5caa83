"""toolgrammar and SGLang 0.5.23's tool-call detectors on the same streams, in the same run.

Opt-in: it needs SGLang's environment (`scripts/sglang_env.sh`: the sglang wheel installed
without its GPU dependencies in a CPU torch venv, the one the SGLang adapter tests run in);
run it with the python that script prints:

    SGLANG_PYTHON="$(bash scripts/sglang_env.sh)"
    $SGLANG_PYTHON bench/vs_sglang.py --check-env
    $SGLANG_PYTHON bench/vs_sglang.py [--families ...] [--sizes 1K,16K,64K,256K] [--budget 30]
        [--json PATH] [--markdown PATH] [--plot PNG]

The options are `vs_vllm.py`'s. The measuring and the correctness sweep are
`side_by_side.py`'s; how SGLang's detectors are driven is `peer_sglang.py`'s. `vs_peers.py`
runs this and `vs_vllm.py`, each in its stack's environment, and joins their results.
"""

from __future__ import annotations

import sys

from peer_sglang import PEER
from side_by_side import main

if __name__ == "__main__":
    sys.exit(main(PEER))
