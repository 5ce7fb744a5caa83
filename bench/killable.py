"""Work in a forked worker process that is killed at a hard time limit.

The side-by-side bench's budgets are checked between a peer's steps, and its SIGALRM runs
its handler only between Python bytecodes: one step stuck inside C (a regex backtracking over
a long buffer, a C decoder) cannot be interrupted by either (SGLang's `pythonic` and vLLM's
`llama4_pythonic` held a run for over ten minutes so). A process can always be killed, so a
peer's measurement runs in a fork of the bench: it has everything the bench made (no pickling
of parsers), sends each result back as it has it, and is SIGKILLed at the limit; what it sent
before stays.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

_HEADER = struct.Struct("!Q")


@dataclass
class Finished:
    """What a worker sent, and whether it was killed at the limit before it was done."""

    sent: list[Any] = field(default_factory=list)
    killed: bool = False
    error: str = ""  # what the work raised, when it did


def run_killable(work: Callable[[Callable[[Any], None]], None], limit_s: float) -> Finished:
    """Run `work(send)` in a forked child; every `send(value)` (picklable) comes back in
    order. Past `limit_s` seconds the child is killed (SIGKILL: nothing it runs can stop
    that) and `killed` is set."""
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the worker: never returns into the bench's code
        os.close(read_end)
        status = 0
        try:

            def send(value: Any) -> None:
                data = pickle.dumps(("sent", value))
                os.write(write_end, _HEADER.pack(len(data)))
                _write_all(write_end, data)

            work(send)
        except BaseException:  # (the parent reports it; the child must not unwind)
            data = pickle.dumps(("error", traceback.format_exc(limit=3)))
            os.write(write_end, _HEADER.pack(len(data)))
            _write_all(write_end, data)
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    finished = Finished()
    deadline = time.monotonic() + limit_s
    buffer = b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                finished.killed = True
                break
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            data = os.read(read_end, 1 << 20)
            if not data:
                break  # the worker is done
            buffer += data
            while len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer)
                if len(buffer) < _HEADER.size + size:
                    break
                kind, value = pickle.loads(buffer[_HEADER.size : _HEADER.size + size])
                buffer = buffer[_HEADER.size + size :]
                if kind == "error":
                    finished.error = value
                else:
                    finished.sent.append(value)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    return finished


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
