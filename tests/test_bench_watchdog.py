"""The side-by-side bench's hard limit (`bench/killable.py`): a peer step stuck where neither
the stream's budget nor SIGALRM reaches (a sleep with SIGALRM blocked, as a long call into C
is) is killed, the peer's numbers print as past the budget, ours are measured, and the run
goes on. No peer is imported; the only time bound is a wide one (the stuck step sleeps an
hour)."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import side_by_side  # noqa: E402
from killable import run_killable  # noqa: E402
from side_by_side import Chunk, Outcome, Side  # noqa: E402

WIDE = 120.0  # seconds: a stuck step sleeps 3600
# the hard limit where the peer must measure something before it (or instead of) getting
# stuck: wide, as a loaded machine may take seconds for it; where it gets stuck at once, short
MEASURES_FIRST = 20.0
STUCK_AT_ONCE = 1.0


def stuck() -> None:
    """What no alarm interrupts: SIGALRM blocked, then a long sleep (a step inside C)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
    time.sleep(3600)


def test_a_worker_sends_its_results_in_order() -> None:
    finished = run_killable(lambda send: [send(n) for n in range(3)], 60)
    assert finished.sent == [0, 1, 2] and not finished.killed and not finished.error


def test_a_worker_that_raises_says_what() -> None:
    def work(send: Callable[[Any], None]) -> None:
        send("before")
        raise ValueError("inside the peer")

    finished = run_killable(work, 60)
    assert finished.sent == ["before"] and "ValueError: inside the peer" in finished.error


def test_a_step_the_alarm_cannot_interrupt_is_killed_and_what_came_before_kept() -> None:
    def work(send: Callable[[Any], None]) -> None:
        send("measured")
        with side_by_side._Alarm(0.1):  # the bench's own budget: it rings, unheard
            stuck()
        send("never")

    started = time.monotonic()
    finished = run_killable(work, 1.0)
    assert finished.killed and finished.sent == ["measured"]
    assert time.monotonic() - started < WIDE


class StuckPeer(Side):
    """A peer whose timed stream (a clock given) or whole parse gets stuck."""

    label = "stuck peer"

    def __init__(self, stuck_in: str) -> None:
        self.stuck_in = stuck_in

    def run(
        self,
        chunks: list[Chunk],
        finish: str | None = "stop",
        clock: list[int] | None = None,
        budget_s: float | None = None,
    ) -> tuple[Outcome, int]:
        if self.stuck_in == "stream" and clock is not None or self.stuck_in == "everything":
            stuck()
        if self.stuck_in == "sampling" and clock is not None:
            if finish is None:  # a mark past the budget, sampled: stuck
                stuck()
            fed = next(i for i, chunk in enumerate(chunks) if chunk.end > 1100) + 1
            clock[:fed] = [2000] * fed  # 2 µs a delta, then past the budget
            return Outcome("", [], "budget"), fed
        return Outcome("", []), len(chunks)

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        def parse() -> Outcome:
            if self.stuck_in in ("parse", "everything"):
                stuck()
            return Outcome("", [])

        return parse


def _run(
    stuck_in: str,
    correctness: bool = False,
    sizes: tuple[int, ...] = (1024,),
    kill_after: float = STUCK_AT_ONCE,
) -> tuple[Any, list[str]]:
    peer = side_by_side.Peer(
        name="Stuck",
        version="0",
        pairs={"hermes": "stuck"},
        load=lambda: None,
        side=lambda modules, name, tok, tools: StuckPeer(stuck_in),
        registered=lambda modules: ["stuck"],
        env_script="",
        beforehand="nothing",
    )
    args = argparse.Namespace(
        sizes=list(sizes),
        shapes=["loop"],
        plot_marks=list(sizes),
        mem_size=1024,
        repeat=1,
        budget=0.5,
        parse_budget=0.5,
        parse_repeat=2,
        no_correctness=not correctness,
        kill_after=kill_after,
    )
    logged: list[str] = []
    result = side_by_side.run_family(peer, None, "hermes", args, [], logged.append)
    return result, logged


def test_a_stuck_peer_stream_prints_past_the_budget_and_ours_is_measured() -> None:
    started = time.monotonic()
    result, logged = _run("stream", kill_after=MEASURES_FIRST)
    assert time.monotonic() - started < WIDE
    (stream,) = result.streams
    assert stream.theirs.median_us == {"1K": None}  # `> budget` in the tables
    assert stream.theirs.peak_mb is None and stream.theirs.reached == 0
    assert stream.theirs.parse_ms is not None  # parsed before it got stuck: kept
    assert stream.ours.median_us["1K"] is not None and stream.ours.ok
    assert stream.ours.parse_ms is not None and stream.ours.peak_mb is not None
    assert any("killed at the hard limit" in line and "while streaming" in line for line in logged)


def test_a_stuck_peer_parse_leaves_ours_parse_measured() -> None:
    result, logged = _run("parse")
    (stream,) = result.streams
    assert stream.theirs.parse_ms is None and stream.theirs.median_us == {"1K": None}
    assert stream.ours.parse_ms is not None and stream.ours.median_us["1K"] is not None
    assert any("while parsing whole" in line for line in logged)


def test_a_stuck_peer_correctness_sweep_counts_as_failed() -> None:
    result, logged = _run("everything", correctness=True)
    assert result.theirs_correct.forty_two == "killed at the hard limit"
    assert result.theirs_correct.unparsable == result.theirs_correct.cuts > 0
    assert result.ours_correct.forty_two == "ok"
    assert any("correctness of stuck peer: killed" in line for line in logged)


def test_a_peer_that_finishes_is_measured_in_its_worker() -> None:
    result, logged = _run("nowhere", kill_after=WIDE)
    (stream,) = result.streams
    assert stream.theirs.median_us["1K"] is not None and stream.theirs.parse_ms is not None
    assert stream.theirs.peak_mb is not None
    assert not any("killed" in line for line in logged)


def test_marks_measured_before_a_stuck_sample_are_kept() -> None:
    result, logged = _run("sampling", sizes=(1024, 2048), kill_after=MEASURES_FIRST)
    (stream,) = result.streams
    assert stream.theirs.median_us == {"1K": 2.0, "2K": None}
    assert stream.ours.median_us["2K"] is not None
    assert any("killed at the hard limit" in line for line in logged)
