"""One text repeated many times: read twice, then replayed (issue 28, second pass).

A model looping on one piece of markup (`<|python_tag|>` a million times, the same cut call
over and over) makes the engine decide the same things at every repetition: one call, or
one opener tried in each shape and given back, some µs each, a second or more a megabyte.
The engine is deterministic: from the same state, the same text makes the same output and
leaves the same state. So where the scan is back at a boundary (a scan mode, no call open,
`Engine._run`), the text right after it repeats the text since an earlier boundary (the
unit), and reading two units one after the other, as usual, left the engine in the same
state at all three boundaries and made the same output (the calls' indices one unit's
calls apart, their ids drawn or the same text), every further repetition of the unit is
that output again: `Repeats.at` writes it (`DeltaBuffer.text`, `call`, `args`, with the
call indices moved on and a fresh id for each drawn one) and moves the scan past it.

What a reader decides may depend on text past the unit (a name's end searched within its
reach, a JSON call object whose name must come within `json_call._BEFORE_NAME` characters,
the start of a marker at the end): the last `MARGIN` characters of the text are always
read as usual, so every text a unit's reading looks at, replayed or read, is the same
repeated text (a window longer than `MARGIN` would be one per unit over the whole output,
quadratic, which `bench/hostile.py` would show). Only a long text at hand gets here: a
whole parse, or a delta longer than `MARGIN`; a stream of small deltas never does. What
the state is: everything the engine keeps but its output, the count of calls it made and
caches (`_NOT_STATE`), its flags (`EngineState`) and message headers by value, so a flag
added later is compared too. A trace (`Engine._log`) sees every decision: no replay there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from .deltas import DeltaBuffer, OutEntry
from .json_call import _BEFORE_NAME
from .modes import CALL

if TYPE_CHECKING:
    from .engine import Engine

# the text at the end of the text at hand that is always read as usual (see above)
MARGIN = 2 * _BEFORE_NAME
# the longest unit looked for (a longer one costs its reading less per character)
MAX_UNIT = 4096
# the boundaries before the current one that a unit may begin at
RECENT = 8
# a unit is looked for at a boundary this many characters past the last look, at the
# soonest: a long output of many calls, none the same, pays for a look every few calls
LOOK_EVERY = 2048
# the engine's attributes that are no state its reading depends on: its output, how many
# calls it made (each replayed call is numbered on), caches and positions in the text, and
# its settings (class attributes in pure Python, attributes of the compiled engine)
_NOT_STATE = frozenset(
    {
        "_out",
        "calls_emitted",
        "_next_stops",
        "_raw_buf",
        "_raw_from",
        "_quick",
        "_replays",
        # caches: a reader kept to be renewed (which reads as a new one), the names of
        # header texts read, the call openers longer than a literal
        "_spare",
        "_names",
        "_longer_openers",
    }
)

_TEXT, _CALL, _ARGS = 0, 1, 2
_NEVER = (0, 0)  # a unit length never failed: tried from anywhere


class Repeats:
    """The boundaries of the text at hand and a unit being tried (`at`)."""

    __slots__ = ("buf", "recent", "next_look", "unit", "start", "marks", "failed")
    # (`failed`: per unit length whose readings differed, where it may be tried again and
    # how many times it failed: ever further on, so a text whose state never repeats costs
    # a few marks, not one per unit)

    def __init__(self) -> None:
        self.buf: str | None = None
        self.recent: list[int] = []  # the last boundaries' positions in `buf`
        self.next_look = 0  # where a unit is looked for next
        self.unit = 0  # the length of the unit being tried (0: none)
        self.start = 0  # where its first reading began
        self.marks: list[tuple[Any, ...]] = []  # at each boundary it reached: `_mark`
        self.failed: dict[int, tuple[int, int]] = {}  # length -> (from where, failures)

    def at(self, engine: Engine, buf: str, pos: int) -> int:
        """The scan is at a boundary, `pos` of `buf`, and more than `MARGIN` characters
        follow: where it goes on from (past units replayed, or `pos`)."""
        if buf is not self.buf:
            self.buf = buf
            self.recent.clear()
            self.next_look = 0
            self.unit = 0
            self.failed.clear()
        if self.unit:
            return self._reading(engine, buf, pos)
        recent = self.recent
        recent.append(pos)
        if pos < self.next_look:  # (looked for a unit not long ago)
            if len(recent) > 8 * RECENT:
                del recent[:-RECENT]
            return pos
        self.next_look = pos + LOOK_EVERY
        for start in reversed(recent[-RECENT - 1 : -1]):
            size = pos - start
            if size > MAX_UNIT:
                break
            if (
                size
                and pos >= self.failed.get(size, _NEVER)[0]
                and buf[start] == buf[pos]
                and buf.startswith(buf[start:pos], pos)
            ):
                self.unit, self.start = size, pos  # read two units as usual from here
                self.marks = [_mark(engine)]
                break
        return pos

    def _reading(self, engine: Engine, buf: str, pos: int) -> int:
        """A unit is being read twice: at a boundary inside it nothing is done; at each
        of its ends the engine is marked, and after the second, the readings are compared
        and every repetition after them replayed."""
        size = self.unit
        end = self.start + len(self.marks) * size
        if pos < end:
            return pos
        if pos > end:  # the unit's end is no boundary: it is none
            return self._give_up(size, pos)
        self.marks.append(_mark(engine))
        if len(self.marks) < 3:
            return pos
        first, second, third = self.marks
        unit = buf[self.start : self.start + size]
        template = None
        if first[0] == second[0] == third[0] and buf.startswith(unit, self.start + size):
            calls = second[1] - first[1]
            if third[1] - second[1] == calls:
                entries = engine._out.entries
                template = _same(
                    _ops(entries, first[2], second[2]), _ops(entries, second[2], third[2]), calls
                )
        if template is None:
            return self._give_up(size, pos)
        self.unit = 0
        self.recent.clear()
        times = _repeats(buf, pos, unit, (len(buf) - MARGIN - pos) // size)
        if times:
            _replay(engine, template, calls, times)
        return pos + times * size

    def _give_up(self, size: int, pos: int) -> int:
        self.unit = 0
        failures = self.failed.get(size, _NEVER)[1] + 1
        self.failed[size] = (pos + (size << (2 * failures)), failures)
        self.recent.clear()
        self.recent.append(pos)
        return pos


def _mark(engine: Engine) -> tuple[Any, ...]:
    """The engine's state (by value), the count of its calls, and where its output is."""
    state = []
    for key, value in _attributes(engine):
        if key in _NOT_STATE:
            continue
        if key in ("_state", "_headers") and value is not None:
            value = tuple(_frozen(getattr(value, slot)) for slot in _slots(value))
        state.append((key, _frozen(value)))
    entries = engine._out.entries
    where = (len(entries), len(entries[-1].parts) if entries else 0)
    return tuple(state), engine.calls_emitted, where


def _attributes(engine: Engine) -> Iterable[tuple[str, Any]]:
    """The engine's attributes: its `__dict__`, or those mypyc lists where the compiled build
    made `Engine` a native class, which has no `__dict__` (docs/compiled.md)."""
    names = getattr(type(engine), "__mypyc_attrs__", None)
    if names is None:
        return vars(engine).items()
    return [(name, getattr(engine, name)) for name in dict.fromkeys(names) if hasattr(engine, name)]


def _slots(value: Any) -> tuple[str, ...]:
    """The attributes of a slotted record (`EngineState`, `MessageHeaders`): its `__slots__`,
    or those mypyc lists where the compiled build made it a native class, which has no
    `__slots__` (docs/compiled.md)."""
    names = getattr(type(value), "__mypyc_attrs__", None)
    return tuple(names) if names is not None else tuple(type(value).__slots__)


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _ops(entries: list, start: tuple[int, int], end: tuple[int, int]) -> list[tuple]:
    """What the engine wrote between two marks of its output, as `DeltaBuffer` calls:
    (_TEXT, mode, text), (_CALL, index, id, name), (_ARGS, index, text)."""
    ops: list[tuple] = []
    first, first_part = start
    last, last_part = end
    for at in range(max(first - 1, 0), last):
        entry = entries[at]
        parts = entry.parts
        begin = first_part if at == first - 1 else 0
        stop = last_part if at == last - 1 else len(parts)
        text = "".join(parts[begin:stop])
        if entry.mode != CALL:
            if text:
                ops.append((_TEXT, entry.mode, text))
            continue
        if entry.call_id is not None and at >= first:  # the call's first entry
            ops.append((_CALL, entry.index, entry.call_id, entry.name))
        if text:
            ops.append((_ARGS, entry.index, text))
    return ops


def _same(one: list[tuple], two: list[tuple], calls: int) -> list[tuple] | None:
    """The second reading's output as a template, where the two readings wrote the same
    (calls `calls` apart, texts equal, an id either the same, read from the text, or drawn
    for each: None in the template); None where they differ."""
    if len(one) != len(two):
        return None
    template = []
    for a, b in zip(one, two):
        kind = a[0]
        if kind != b[0]:
            return None
        if kind == _TEXT:
            if a != b:
                return None
            template.append(b)
        elif b[1] - a[1] != calls:
            return None
        elif kind == _ARGS:
            if a[2] != b[2]:
                return None
            template.append(b)
        else:
            if a[3] != b[3]:
                return None
            template.append((_CALL, b[1], b[2] if a[2] == b[2] else None, b[3]))
    return template


def _repeats(buf: str, pos: int, unit: str, most: int) -> int:
    """How many times (at most `most`) `unit` repeats at `pos` of `buf`: compared in
    blocks of doubling length, then halving."""
    times = 0
    block = 1
    while times < most:
        block = min(block, most - times)
        if buf.startswith(unit * block, pos + times * len(unit)):
            times += block
            block *= 2
        elif block == 1:
            break
        else:
            block //= 2
    return times


def _replay(engine: Engine, template: list[tuple], calls: int, times: int) -> None:
    """The output of `times` more readings of the unit, after the one `template` is."""
    out: DeltaBuffer = engine._out
    if not template:  # (calls dropped by a switch: nothing written)
        return
    if len(template) == 1 and template[0][0] == _TEXT:  # text alone: one piece
        out.text(template[0][1], template[0][2] * times)
        return
    call_id = engine.call_id
    entries = out.entries
    steps = _joined(template)
    for time in range(1, times + 1):
        shift = calls * time
        for op in steps:
            kind = op[0]
            if kind == _CALL:  # (as `out.call`, then `out.args` of the same call: one entry)
                index = op[1] + shift
                made = call_id(index) if op[2] is None else op[2]
                entries.append(OutEntry(CALL, ["", *op[4:]], index, made, op[3]))
            elif kind == _ARGS:
                out.args(op[1] + shift, op[2])
            else:
                out.text(op[1], op[2])
    engine.calls_emitted += calls * times


def _joined(template: list[tuple]) -> list[tuple]:
    """`template` with each call's arguments right after it put in its op (a fifth item)."""
    joined: list[tuple] = []
    for op in template:
        last = joined[-1] if joined else None
        if op[0] == _ARGS and last and last[0] == _CALL and last[1] == op[1] and len(last) == 4:
            joined[-1] = (*last, op[2])
        else:
            joined.append(op)
    return joined
