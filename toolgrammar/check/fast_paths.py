"""The fast paths against the slow ones, on one output: what `toolgrammar fuzz` and the
property tests check besides the invariants.

An invariant holds for the shortcuts and for the state machine alike, so a shortcut that
decides differently (a typed value streamed as a string) can break none. Two readings must
be identical instead, byte for byte:
- streamed with every shortcut on (`runtime/shortcuts.py`) and with them off: the deltas
  of each feed and the final message;
- `parse()` of the whole output by the whole-output route (`runtime/whole_output.py`) and
  by the streaming engine alone: the whole message, ids included.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from typing import Any, Iterator

from .. import parse
from ..runtime import shortcuts, whole_output
from .invariants import Violation, run, split_at

SHORTCUTS = "shortcuts"  # the invariant of a reading that shortcuts on and off disagree on
WHOLE_ROUTE = "whole route"  # the same for parse()'s route against the engine


@contextmanager
def shortcuts_set(on: bool) -> Iterator[None]:
    """Every shortcut on or off for the block (their tables are made again either way)."""
    was = shortcuts.ON
    if was != on:
        shortcuts.switch(on)
    try:
        yield
    finally:
        if shortcuts.ON != was:
            shortcuts.switch(was)


@contextmanager
def route_set(on: bool) -> Iterator[None]:
    """The whole-output route on or off for the block."""
    was = whole_output.ON
    whole_output.switch(on)
    try:
        yield
    finally:
        whole_output.switch(was)


def coarse_points(text: str, rng: random.Random) -> list[int]:
    """Split points of chunks from 1 to 200 characters: long enough that a shortcut sees a
    whole value or call in one feed, short enough that some are cut."""
    points: list[int] = []
    at = 0
    while True:
        at += rng.choice((rng.randint(1, 8), rng.randint(8, 64), rng.randint(64, 200)))
        if at >= len(text):
            return points
        points.append(at)


def _streamed(
    family: str, pieces: list[str], tools: Any, options: dict[str, Any], finish: str
) -> Any:
    """Every delta of every feed and the final message, as plain data (an exception is a
    reading too: the same must come out both ways)."""
    try:
        per_feed, message = run(family, pieces, tools, options, finish)
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"
    return [[d.to_dict() for d in feed] for feed in per_feed], message.model_dump()


def _parsed(family: str, text: str, tools: Any, options: dict[str, Any], finish: str) -> Any:
    try:
        return parse(family, text, tools, finish, ids="sequential", **options).model_dump()
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"


def _first_difference(on: Any, off: Any) -> str:
    """Where two readings part, said briefly: the feed and what each gave there."""
    if isinstance(on, tuple) and isinstance(off, tuple):
        feeds_on, feeds_off = on[0], off[0]
        for number, (a, b) in enumerate(zip(feeds_on, feeds_off)):
            if a != b:
                return f"feed {number}: on {a}, off {b}"
        if on[1] != off[1]:
            return f"message: on {on[1]}, off {off[1]}"
    return f"on {on}, off {off}"


def disagreement(
    family: str,
    text: str,
    tools: Any,
    options: dict[str, Any],
    finish: str,
    splits: list[list[int]],
) -> Violation | None:
    """The first reading of `text` that a fast path gives differently from its slow path:
    streamed in each of `splits` (split points; [] is one feed) with shortcuts on and off,
    then parsed whole with the route on and off (both with the shortcuts on: the route is
    one of them)."""
    for points in splits:
        pieces = split_at(text, points)
        with shortcuts_set(True):
            on = _streamed(family, pieces, tools, options, finish)
        with shortcuts_set(False):
            off = _streamed(family, pieces, tools, options, finish)
        if on != off:
            detail = "shortcuts on and off disagree, " + _first_difference(on, off)
            return Violation(SHORTCUTS, text, points, detail)
    with shortcuts_set(True):
        with route_set(True):
            routed = _parsed(family, text, tools, options, finish)
        with route_set(False):
            engine = _parsed(family, text, tools, options, finish)
    if routed != engine:
        detail = f"parse() by the whole-output route {routed}, by the engine {engine}"
        return Violation(WHOLE_ROUTE, text, [], detail)
    return None
