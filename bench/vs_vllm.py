"""toolgrammar and vLLM 0.34.0's tool parsers on the same streams, in the same run.

Opt-in: it needs the environment `bench/vllm_env.sh` builds (vLLM's pure-Python modules
unzipped from its wheel, a CPU torch venv); run it with that venv's Python:

    bash bench/vllm_env.sh
    "$(bash bench/vllm_env.sh)" bench/vs_vllm.py [--families ...] [--sizes 1K,16K,64K,256K]
        [--budget 30] [--repeat 1] [--json PATH] [--markdown PATH] [--plot docs/vs_vllm.png]

The measuring and the correctness sweep are `side_by_side.py`'s (shared with `vs_sglang.py`);
how vLLM's parsers are driven is `peer_vllm.py`'s. `vs_peers.py` runs this and `vs_sglang.py`,
each in its stack's environment, and joins their results.
"""

from __future__ import annotations

import sys

from peer_vllm import PEER
from side_by_side import main

if __name__ == "__main__":
    sys.exit(main(PEER))
