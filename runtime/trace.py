"""What the engine does with each feed, told as it happens: `StreamParser(..., trace=fn)`.

A `TracingEngine` is an `Engine` whose steps also report small events: the feed and the
mode it starts in, each marker found outside a call, each grammar item of a call read
(with its grammar `file:line`), what was emitted, and what is held back at the end of
the feed and why. The plain `Engine` knows nothing of this, so a parser without a trace
pays nothing for it. `format_event` prints one event as one plain line (as pegen's
verbose mode and tree-sitter's `parse --debug` do); `print_trace` is the default sink.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from .deltas import CallParts, Delta, DeltaBuffer
from .engine import Engine, _Call
from .modes import CALL, CONTENT, HEADER, MODE_NAMES, REASONING
from .dialects import DIALECTS
from .spec import FamilySpec, Lit, Name, Skip, Ws
from .unicode import sendable

# the folder `FamilySpec.source` paths (`grammars/hermes.tg`) are relative to
_ROOT = Path(__file__).resolve().parent.parent

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
class Held:
    """Text the parser holds back at the end of a feed, and why."""

    text: str
    reason: str


TraceEvent = Feed | Marker | Item | Step | Emit | Held
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


class GrammarFiles:
    """Which grammar file each statement of a family comes from: a family that `extends`
    another inherits every statement of a kind it does not state itself."""

    def __init__(self, spec: FamilySpec) -> None:
        self.chain: list[tuple[str, str]] = []  # (path, text), the family's own file first
        path: str | None = spec.source
        while path is not None and len(self.chain) < 16:
            try:
                text = (_ROOT / path).read_text(encoding="utf-8")
            except OSError:
                break
            self.chain.append((path, text))
            parent = re.search(r"(?m)^extends\s+([\w\-]+)", text)
            path = f"{Path(path).parent.as_posix()}/{parent.group(1)}.tg" if parent else None

    def where(self, statement: str, line: int, needle: str = "") -> Where | None:
        """Line `line` of the nearest file in the chain that has a `statement`; with
        `needle`, the line of that statement (it may span lines) that quotes it."""
        if not line:
            return None
        for path, text in self.chain:
            if re.search(rf"(?m)^{statement}(?![\w\-])", text):
                return Where(path, self._line_of(text, line, needle) if needle else line)
        return None

    def find(self, statement: str, needle: str) -> Where | None:
        """The first line of a `statement` (and its continuation lines) holding `needle`."""
        for path, text in self.chain:
            inside = False
            for number, line in enumerate(text.splitlines(), 1):
                if re.match(rf"{statement}(?![\w\-])", line):
                    inside = True
                elif line and not line[0].isspace():
                    inside = False
                if inside and _quoted(needle) in line:
                    return Where(path, number)
        return None

    @staticmethod
    def _line_of(text: str, start: int, needle: str) -> int:
        """The first line from `start` on, within its statement, that quotes `needle`."""
        lines = text.splitlines()
        for number in range(start, len(lines) + 1):
            line = lines[number - 1]
            if number > start and line and not line[0].isspace():
                break  # the next statement
            if _quoted(needle) in line:
                return number
        return start


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


def _traced(reader: Callable[..., int]) -> Callable[..., int]:
    def read(engine: TracingEngine, call: _Call, item: Any, buf: str, pos: int, eof: bool) -> int:
        index = call.item
        engine._outcome = ""
        engine._emitted = []  # told after the item that emitted them
        new = reader(engine, call, item, buf, pos, eof)
        emitted, engine._emitted = engine._emitted, None
        engine._report_item(call, index, item, buf[pos:new])
        for event in emitted:
            engine._trace(event)
        return new

    return read


class TracingEngine(Engine):
    """An `Engine` that reports what it does to `trace` (see the module's docstring)."""

    _readers = tuple(_traced(reader) for reader in Engine._readers)
    _quick = False  # every call opener found is told, even one whose call gives its text back

    def __init__(self, spec: FamilySpec, tools: Any, *, trace: Trace, **options: Any) -> None:
        super().__init__(spec, tools, **options)
        self._trace = trace
        self._out = TracingDeltaBuffer(self._emit)
        self._emitted: list[TraceEvent] | None = None  # output of the item being read
        self._files = GrammarFiles(spec)
        self._feeds = 0
        self._outcome = ""  # what became of the call an item was reading, told by the item
        family = self.family
        self._all_markers = {
            *family.reasoning_opens,
            *family.reasoning_closes,
            *family.section_opens,
            *family.section_closes,
            *family.openers,
            *family.ignore,
        }
        if spec.messages is not None:
            self._all_markers |= {*spec.messages.header, spec.messages.header_end}
            self._all_markers |= set(spec.messages.ends)

    # -- feeds ------------------------------------------------------------------------

    def feed(self, text: str) -> list[Delta]:
        if text and not self.finished:
            self._start(text, eof=False)
        deltas = super().feed(text)
        if text:
            self._report_held()
        return deltas

    def finish(self, reason: str = "stop") -> list[Delta]:
        if not self.finished:
            self._start("", eof=True)
        return super().finish(reason)

    def whole(
        self, text: str, reason: str = "stop"
    ) -> tuple[list[str], list[str], dict[int, CallParts]]:
        if not self.finished:
            self._start(text, eof=True, whole=True)
        return super().whole(text, reason)

    def _start(self, text: str, eof: bool, whole: bool = False) -> None:
        self._feeds += 1
        self._trace(Feed(self._feeds, text, eof, MODE_NAMES[self.mode], whole))

    # -- what the engine does -----------------------------------------------------------

    def _marker(self, lit: str, pos: int) -> int:
        before = self.mode
        new = super()._marker(lit, pos)
        self._trace(
            Marker(
                lit,
                self._marker_action(lit, before),
                MODE_NAMES[self.mode],
                self._marker_where(lit),
            )
        )
        return new

    def _route(self, recipient: str) -> None:
        super()._route(recipient)
        messages = self.family.messages
        assert messages is not None
        kind = self.family.routes.get(recipient, messages.default)
        self._trace(Step(f"a message to {recipient or 'no one'}: {kind}", MODE_NAMES[self.mode]))

    def _read_run(self, call: _Call, text: str) -> None:  # type: ignore[override]
        """A run of literals and whitespace read in one match: told item by item."""
        run = self.family.runs[call.shape][call.item]
        assert run is not None
        at = 0
        for item in call.items[call.item : run.next]:
            if isinstance(item, Ws):
                size = len(text[at:]) - len(text[at:].lstrip())
            else:
                size = max((len(t) for t in item.texts if text.startswith(t, at)), default=0)
            outcome = "read" if size or isinstance(item, Ws) else "absent (optional)"
            self._trace(
                Item(item_label(item), self._item_where(item), text[at : at + size], outcome)
            )
            at += size
        Engine._read_run(call, text)

    def _abandon(self, call: _Call, pos: int) -> int:
        new = super()._abandon(call, pos)
        if self._call is not None and self.mode == CALL:
            self._outcome = f"no call in this shape: shape {self._call.shape + 1} tries the text"
        else:
            self._outcome = f"no call: its text goes back to {MODE_NAMES[self.mode]}"
        return new

    def _unfinished(self, end: int) -> int:
        new = super()._unfinished(end)
        self._outcome = "the output ends inside the call's opener: dropped"
        return new

    def _end_call(self) -> None:
        call = self._call
        super()._end_call()
        if call is None:
            return
        if not call.committed:
            what = "a call's markup with no call in it: markup"
        elif call.dropped:
            what = "a call to a tool not in `tools` ends: dropped"
        else:
            what = f"call {call.index} ends"
        self._outcome = self._outcome or what
        if call.item < len(call.items):  # ended early: the item or the end of output tells
            return
        self._trace(Step(what, MODE_NAMES[self.mode]))

    def _end_of_output(self) -> None:
        call = self._call
        self._outcome = ""
        super()._end_of_output()
        if call is not None and call.item < len(call.items):
            what = self._outcome or "an unfinished call opener: dropped"
            self._trace(Step(f"end of output: {what}", MODE_NAMES[self.mode]))

    # -- how it is told -----------------------------------------------------------------

    def _emit(self, event: TraceEvent) -> None:
        if self._emitted is not None:
            self._emitted.append(event)
        else:
            self._trace(event)

    def _report_item(self, call: _Call, index: int, item: Any, text: str) -> None:
        if self._state.waiting:
            outcome = "waits for more text"
        elif self._outcome:
            outcome = self._outcome
        elif call.item == index + 1:
            outcome = "read" if text or not isinstance(item, Lit) else "absent (optional)"
        elif call.item > index:
            later = call.items[call.item]
            outcome = f"not here: skipped to {item_label(later)} at {self._item_where(later)}"
        else:
            outcome = "not here: skipped text up to it" if text else "not read"
        self._trace(Item(item_label(item), self._item_where(item), text, outcome))

    def _report_held(self) -> None:
        state = self._state
        if state.pending:
            self._trace(Held(state.pending, self._pending_reason(state.pending)))
        call = self._call
        if call is not None and not call.committed and call.held:
            reason = "the call's text before its name: given back as text if it is no call"
            self._trace(Held("".join(call.held), reason))
        if call is not None and call.ws_tail:
            reason = "whitespace inside the call: markup if the call's markup follows, else text"
            self._trace(Held("".join(call.ws_tail), reason))
        if state.ws_held:
            reason = "whitespace at the end of the content: dropped if markup or the end follows"
            self._trace(Held("".join(state.ws_held), reason))

    def _pending_reason(self, pending: str) -> str:
        mode = self.mode
        if mode == HEADER:
            return "a message header: its recipient or its end is still arriving"
        call = self._call
        if mode == CALL and call is not None and call.item < len(call.items):
            item = call.items[call.item]
            where = self._item_where(item)
            if isinstance(item, Lit):
                return f"may be {item_label(item)} ({where})"
            if isinstance(item, Ws):
                return f"whitespace: the call's next item decides ({where})"
            if isinstance(item, (Name, Skip)):
                ends = " | ".join(_quoted(end) for end in item.until)
                return f"{item_label(item)} so far: waiting for its end, {ends} ({where})"
            return f"an unfinished {item_label(item)} value, or the start of its end ({where})"
        begins = sorted(m for m in self._all_markers if m.startswith(pending))
        if begins:
            return f"may begin a marker: {', '.join(_quoted(m) for m in begins[:3])}"
        return f"may begin a marker ({MODE_NAMES[mode]})"

    def _item_where(self, item: Any) -> Where:
        where = self._files.where("call", item.line)
        return where if where is not None else Where(self.family.spec.source, item.line)

    def _marker_where(self, lit: str) -> Where | None:
        family = self.family
        spec = family.spec
        for reasoning in spec.reasoning:
            if lit in reasoning.opens or lit in reasoning.closes:
                return self._files.where("reasoning", reasoning.line, lit)
        if spec.section is not None and lit in (*spec.section.opens, *spec.section.closes):
            return self._files.where("section", spec.section.line, lit)
        messages = spec.messages
        if messages is not None and lit in (*messages.header, messages.header_end, *messages.ends):
            return self._files.where("messages", messages.line, lit)
        if lit in family.openers:
            shape, index = family.openers[lit][0]
            for item in reversed(family.shapes[shape].call[: index + 1]):
                if isinstance(item, Lit) and lit in item.texts:
                    where = self._files.where("call", item.line, lit)
                    return where if where is not None else self._item_where(item)
        if lit in family.ignore:
            return self._files.find("ignore", lit)
        return None

    def _marker_action(self, lit: str, before: int) -> str:
        family = self.family
        after = self.mode
        if after == CALL and before != CALL:
            return "opens a call"
        if lit in family.ignore and after == before:
            return "ignored"
        if family.messages is not None and lit in family.messages.header:
            return "a message header"
        if lit in family.message_ends:
            return "ends the message"
        if lit in family.section_opens:
            return "opens the tool-call section"
        if lit in family.section_closes:
            return "closes the tool-call section"
        if lit in family.reasoning_opens:
            return "opens reasoning" if after == REASONING else "a reasoning opener, kept as markup"
        if lit in family.reasoning_closes:
            return "closes reasoning" if before == REASONING else "a reasoning closer, dropped"
        return "markup"
