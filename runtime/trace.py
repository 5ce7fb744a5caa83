"""What the engine does with each feed, told as it happens: `StreamParser(..., trace=fn)`.

The engine tells each decision it makes, as the code it decided (`outcomes.py`), to its
log, which is None unless tracing (one test per decision, as tree-sitter's parser logs);
its dialects tell their changes of state the same way (`protocol.Sink.log`). A
`tracing_engine` makes an `Engine` whose log is a `Tracer`, which words those codes as small
events: the feed and the mode it starts in, each marker found outside a call, each
grammar item of a call read (with the grammar `file:line` the compiler wrote into the
spec), a dialect's state, what was emitted, and what is held back at the end of the feed
and why. It decides nothing again. `format_event` prints one event as one plain line (as
pegen's verbose mode and tree-sitter's `parse --debug` do); `print_trace` is the default
sink.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from .deltas import DeltaBuffer
from .call_record import CallRecord
from .engine import Engine
from .modes import CALL, HEADER, MODE_NAMES
from .outcomes import (
    ABANDON,
    COMPLETE,
    END,
    END_OF_OUTPUT,
    ENDED,
    FEED,
    HELD,
    ITEM,
    MARKER,
    RETRY,
    ROUTED,
    RUN,
    SAYS,
    SKIPPED,
    WORDS,
)
from .dialects import DIALECTS
from .messages import MessageHeaders
from .spec import FamilySpec, Lit, Name, Skip, Ws
from .unicode import sendable

# how the grammar language spells each kind of call item (a literal is its quoted text)
ITEM_WORDS: dict[type, str] = {
    Ws: "ws",
    Skip: "skip",
    Name: "name",
    **{spec: row.word for spec, row in DIALECTS.items()},
}


@dataclass(frozen=True, slots=True)
class Where:
    """A line of a grammar file."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Feed:
    """A feed begins (`eof`: the finish; `whole`: the whole output at once)."""

    number: int
    text: str
    eof: bool
    mode: str
    whole: bool = False


@dataclass(frozen=True, slots=True)
class Marker:
    """A marker found outside a call, what it did, and the mode after it."""

    text: str
    action: str
    mode: str
    where: Where | None


@dataclass(frozen=True, slots=True)
class Item:
    """One item of a call read (or tried) at the text: `text` is what it consumed."""

    label: str  # the item as the grammar writes it: `ws`, `name`, `"</tool_call>"`, …
    where: Where
    text: str
    outcome: str


@dataclass(frozen=True, slots=True)
class Step:
    """What became of a call outside its items' reading: it ended, or the output did."""

    what: str
    mode: str


@dataclass(frozen=True, slots=True)
class Emit:
    """Output: content or reasoning text, a call's start (id, name) or argument text."""

    mode: str  # "content", "reasoning" or "call"
    text: str
    index: int = -1
    call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class State:
    """What a call's argument dialect says it is doing now (`protocol.Sink.log`)."""

    label: str  # the dialect as the grammar writes it: `xml_params`, …
    text: str


@dataclass(frozen=True, slots=True)
class Held:
    """Text the parser holds back at the end of a feed, and why."""

    text: str
    reason: str


TraceEvent = Feed | Marker | Item | Step | Emit | State | Held
Trace = Callable[[TraceEvent], None]


def format_event(event: TraceEvent) -> str:
    """One event as one line: a feed heads its group, the rest are indented under it."""
    if isinstance(event, Feed):
        if event.whole:
            return f"whole output ({len(event.text)} chars) in {event.mode}: {event.text!r}"
        if event.eof:
            return f"finish #{event.number} in {event.mode}"
        return f"feed #{event.number} ({len(event.text)} chars) in {event.mode}: {event.text!r}"
    if isinstance(event, Marker):
        where = str(event.where) if event.where else "-"
        return f"  marker {where:<28} {event.text!r}: {event.action} -> {event.mode}"
    if isinstance(event, Item):
        read = f" {event.text!r}" if event.text else ""
        return f"  item   {str(event.where):<28} {event.label}{read}: {event.outcome}"
    if isinstance(event, Step):
        return f"  step   {event.what} -> {event.mode}"
    if isinstance(event, State):
        return f"    state {event.label}: {event.text}"
    if isinstance(event, Emit):
        if event.mode != "call":
            return f"    emit {event.mode} {event.text!r}"
        if event.name is not None:
            return f"    emit call {event.index} begins: {event.name} (id {event.call_id})"
        return f"    emit call {event.index} arguments {event.text!r}"
    return f"  held   {event.text!r}: {event.reason}"


def print_trace(out: TextIO | None = None) -> Trace:
    """A trace sink that prints each event as a line (to stderr by default)."""

    def sink(event: TraceEvent) -> None:
        print(format_event(event), file=out or sys.stderr)

    return sink


def item_label(item: object) -> str:
    if isinstance(item, Lit):
        spelled = " | ".join(_quoted(text) for text in item.texts)
        return f"[{spelled}]" if item.alternatives else spelled
    return ITEM_WORDS[type(item)]


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class TracingDeltaBuffer(DeltaBuffer):
    """A delta buffer that also reports each piece of output as it is collected."""

    __slots__ = ("report",)

    def __init__(self, report: Trace) -> None:
        super().__init__()
        self.report = report

    # (each told as the deltas carry it: `sendable`, so a trace prints as UTF-8 too)
    def text(self, mode: int, text: str) -> None:
        if text:
            self.report(Emit(MODE_NAMES[mode], sendable(text)))
        super().text(mode, text)

    def call(self, index: int, call_id: str, name: str) -> None:
        self.report(Emit("call", "", index, sendable(call_id), sendable(name)))
        super().call(index, call_id, name)

    def args(self, index: int, text: str) -> None:
        if text:
            self.report(Emit("call", sendable(text), index))
        super().args(index, text)


class Tracer:
    """The engine's log while tracing (`Engine._log`): each decision the engine tells, as
    the code it decided (`outcomes.py`), becomes a trace event. The output an item's
    reader sends is told under the item's own line, which the engine tells once the reader
    has decided: it is held until then (any other event is told after what was sent)."""

    def __init__(self, trace: Trace, spec: FamilySpec) -> None:
        self.trace = trace
        self.engine: Engine | None = None  # set once the engine is made
        self.source = spec.source
        self.markers_at = dict(spec.markers_at)  # the compiler's `file:line` of each marker
        self.feeds = 0
        self.held: list[TraceEvent] = []  # output sent since the last event
        self.told = {
            FEED: self._feed,
            HELD: self._held,
            END: self._end,
            MARKER: self._marker,
            ITEM: self._item,
            RUN: self._run,
            COMPLETE: self._complete,
            ENDED: self._ended,
            END_OF_OUTPUT: self._end_of_output,
            ROUTED: self._routed,
            SAYS: self._says,
        }
        # what the dialect of the call being read said last (the call, its words)
        self.said: tuple[CallRecord | None, str] = (None, "")

    def __call__(self, what: int, *details: Any) -> None:
        self.told[what](*details)

    def sent(self, event: TraceEvent) -> None:
        """Output, held until the next event says where it belongs."""
        self.held.append(event)

    def _tell(self, event: TraceEvent) -> None:
        self._flush()
        self.trace(event)

    def _flush(self) -> None:
        held, self.held = self.held, []
        for event in held:
            self.trace(event)

    @property
    def _engine(self) -> Engine:
        assert self.engine is not None
        return self.engine

    def _mode(self) -> str:
        return MODE_NAMES[self._engine.mode]

    # -- what the engine tells ---------------------------------------------------------

    def _feed(self, text: str, eof: bool, whole: bool = False) -> None:
        self.feeds += 1
        self._tell(Feed(self.feeds, text, eof, self._mode(), whole))

    def _held(self) -> None:
        self._flush()
        for event in held_back(self._engine, self):
            self.trace(event)

    def _end(self) -> None:
        self._flush()

    def _marker(self, lit: str, action: int) -> None:
        self._tell(Marker(lit, WORDS[action], self._mode(), self._marker_where(lit)))

    def _item(self, call: CallRecord, index: int, item: Any, text: str, outcome: int) -> None:
        self.trace(
            Item(
                item_label(item),
                self.item_where(item),
                text,
                self._words(call, index, outcome, text),
            )
        )
        self._flush()

    def _run(self, call: CallRecord, index: int, text: str) -> None:
        """Items read in one match (`tables._Run`): told item by item."""
        run = self._engine.family.runs[call.shape][index]
        assert run is not None
        at = 0
        for item in call.items[index : run.next]:
            if isinstance(item, Ws):
                size = len(text[at:]) - len(text[at:].lstrip())
            else:
                size = max((len(t) for t in item.texts if text.startswith(t, at)), default=0)
            outcome = "read" if size or isinstance(item, Ws) else "absent (optional)"
            self._tell(Item(item_label(item), self.item_where(item), text[at : at + size], outcome))
            at += size

    def _complete(self, call: CallRecord) -> None:
        self._tell(Step(_ends(call), self._mode()))

    def _ended(self, call: CallRecord) -> None:
        """A call ended before its last item: its item (or the end of output) tells it."""

    def _end_of_output(self, call: CallRecord, outcome: int) -> None:
        if outcome == COMPLETE:
            return  # told as the call's end
        what = _ends(call) if outcome == ENDED else "an unfinished call opener: dropped"
        self._tell(Step(f"end of output: {what}", self._mode()))

    def _says(self, words: str) -> None:
        """A dialect's state, told under its item's line as its output is."""
        call = self._engine._call
        assert call is not None
        self.said = (call, words)
        self.held.append(State(item_label(call.items[call.item]), words))

    def _routed(self, headers: MessageHeaders) -> None:
        who = headers.recipient or "no one"
        self._tell(Step(f"a message to {who}: {headers.kind}", self._mode()))

    # -- how it is worded --------------------------------------------------------------

    def _words(self, call: CallRecord, index: int, outcome: int, text: str) -> str:
        engine = self._engine
        if outcome == SKIPPED:
            if call.item > index:
                later = call.items[call.item]
                return f"not here: skipped to {item_label(later)} at {self.item_where(later)}"
            return "not here: skipped text up to it" if text else "not read"
        if outcome == ABANDON:
            return f"no call: its text goes back to {self._mode()}"
        if outcome == RETRY:
            assert engine._call is not None
            return f"no call in this shape: shape {engine._call.shape + 1} tries the text"
        if outcome in (ENDED, COMPLETE):
            return _ends(call)
        return WORDS[outcome]

    def item_where(self, item: Any) -> Where:
        return Where(item.file or self.source, item.line)

    def _marker_where(self, lit: str) -> Where | None:
        found = self.markers_at.get(lit)
        if found is None:
            return None
        file, _, line = found.rpartition(":")
        return Where(file, int(line))


def _ends(call: CallRecord) -> str:
    """What a call's end is, in words."""
    if not call.committed:
        return "a call's markup with no call in it: markup"
    if call.texted:
        return (
            "a call given back as text ends (`unknown_tools`, `partial_calls`, `malformed_calls`)"
        )
    if call.dropped:
        return "a dropped call ends (a tool not in `tools`, or a switch dropped it)"
    return f"call {call.index} ends"


def held_back(engine: Engine, tracer: Tracer) -> list[Held]:
    """What the engine holds back at the end of a feed, and why."""
    state = engine._state
    found = []
    if state.pending:
        found.append(Held(state.pending, _pending_reason(engine, tracer, state.pending)))
    call = engine._call
    if call is not None and not call.committed and call.held:
        reason = "the call's text before its name: given back as text if it is no call"
        found.append(Held("".join(call.held), reason))
    if call is not None and call.ws_tail:
        reason = "whitespace inside the call: markup if the call's markup follows, else text"
        found.append(Held("".join(call.ws_tail), reason))
    if state.ws_held:
        reason = "whitespace at the end of the content: dropped if markup or the end follows"
        found.append(Held("".join(state.ws_held), reason))
    return found


def _pending_reason(engine: Engine, tracer: Tracer, pending: str) -> str:
    mode = engine.mode
    if mode == HEADER:
        return "a message header: its recipient or its end is still arriving"
    call = engine._call
    if mode == CALL and call is not None and call.item < len(call.items):
        item = call.items[call.item]
        where = tracer.item_where(item)
        if isinstance(item, Lit):
            return f"may be {item_label(item)} ({where})"
        if isinstance(item, Ws):
            return f"whitespace: the call's next item decides ({where})"
        if isinstance(item, (Name, Skip)):
            ends = " | ".join(_quoted(end) for end in item.until)
            return f"{item_label(item)} so far: waiting for its end, {ends} ({where})"
        said, words = tracer.said
        if said is call:  # what the dialect says it is doing
            return f"{item_label(item)} {words} ({where})"
        if not call.committed:  # (json_call holds a call object's head until its name is whole)
            return f"{item_label(item)} before the call's name: read again with more text ({where})"
        return f"an unfinished {item_label(item)} value, or the start of its end ({where})"
    begins = sorted(m for m in tracer.markers_at if m.startswith(pending))
    if begins:
        return f"may begin a marker: {', '.join(_quoted(m) for m in begins[:3])}"
    return f"may begin a marker ({MODE_NAMES[mode]})"


def tracing_engine(spec: FamilySpec, tools: Any, *, trace: Trace, **options: Any) -> Engine:
    """An `Engine` whose log (`Tracer`) tells `trace` what it decides (see the module's
    docstring). Not a subclass: the engine tells its decisions to any log, and a compiled
    `Engine` (docs/compiled.md) is a class Python code may not subclass."""
    tracer = Tracer(trace, spec)
    engine = Engine(spec, tools, log=tracer, **options)
    # every call opener found is told, even one whose call gives its text back
    engine._quick = False
    tracer.engine = engine
    engine._out = TracingDeltaBuffer(tracer.sent)
    return engine
