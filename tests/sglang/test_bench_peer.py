"""The side-by-side bench's SGLang peer (`bench/peer_sglang.py`) drives SGLang's own detectors.

Small streams only: what is checked is that the peer imports, pairs our names with names
SGLang registers, and reads a stream and a whole output back as SGLang's serving layer would;
the bench's speed is measured by `bench/vs_sglang.py`, never here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import side_by_side as sbs  # noqa: E402
import streams  # noqa: E402
from peer_sglang import PEER  # noqa: E402

import toolgrammar  # noqa: E402

FAMILY = "qwen3_coder"


@pytest.fixture(scope="module")
def modules() -> dict:
    return PEER.load()


def side_and_tokens(modules: dict, family: str, texts: list[str]) -> tuple[sbs.Side, sbs.Tokens]:
    tokens = sbs.Tokens(sbs.special_tokens(family), texts)
    return PEER.side(modules, PEER.pairs[family], tokens, streams.load_tools()), tokens


def test_every_pair_is_one_of_our_names_and_one_of_sglangs(modules: dict) -> None:
    assert set(PEER.pairs) <= set(toolgrammar.families())
    assert set(PEER.pairs.values()) <= set(PEER.registered(modules))


def test_a_stream_and_the_whole_output_read_back_as_written(modules: dict) -> None:
    stream = streams.build_stream(FAMILY, "many_calls", 300)
    side, tokens = side_and_tokens(modules, FAMILY, [stream.text])
    chunks = sbs.chunks_of(tokens.tokens(stream.text), sbs.DELTA_CHARS)
    clock = [0] * len(chunks)
    outcome, fed = side.run(chunks, "stop", clock)
    assert fed == len(chunks) and all(clock)
    assert sbs.check_streamed(outcome, stream.expected) == ""
    assert sbs.check_streamed(side.parse(stream.text), stream.expected) == ""


def test_the_correctness_sweep_counts_sglangs_cut_calls(modules: dict) -> None:
    call = sbs.probe_call(FAMILY)
    side, tokens = side_and_tokens(modules, FAMILY, [call, sbs.forty_two_call(FAMILY)])
    theirs = sbs.correctness(side, tokens, FAMILY)
    ours = sbs.correctness(sbs.Ours(FAMILY, streams.load_tools()), tokens, FAMILY)
    assert theirs.cuts == ours.cuts == len(tokens.tokens(call))
    assert ours.unparsable == 0 and ours.forty_two == "ok"
    assert 0 <= theirs.unparsable <= theirs.cuts and theirs.crashes == 0
