"""The push core every family runs on: `feed(delta)` and `finish(reason)`.

A state machine over the regions of an output, its modes (`modes.py`): content,
reasoning, a tool-call section and a message header are scanned for the markers the
family's `FamilySpec` declares (`_scan`, `_marker`); in a call, the call's sequence of
items (literals, whitespace, the name, one argument dialect) is read over the text as it
arrives, one reader per item kind (`item_readers.py`, `call_head.py`, dispatched by the
kind `tables.CompiledFamily` precomputed). Each reader, the marker scan and the message
header reader (`messages.py`) say what they decided as a code (`outcomes.py`), which the
loops act on and a log (the trace, None otherwise) is told. Its flags live in
`state.EngineState`, the call being read in a `CallRecord`. It never re-reads text it has
decided on: each delta is scanned once, plus the few characters held back because they
could still begin a marker.

Policies that today's parsers answer per family are answered here, once
(docs/policies.md): whitespace is content or markup as the `whitespace` switch says (`policies.py`); a tool-call opener inside
open reasoning waits for the block's closer (reasoning) or the end of the output (a call); a call whose opener turns out malformed before its name is known
goes back to the text it came from; at the end of the output, the finish reason decides
what was held back (`output_end.py`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

from .call_head import HeadReaders
from .call_outcome import MALFORMED, PARTIAL, WHOLE, CallOutcome
from .call_record import CallRecord
from .citations import stripping, tail_end
from .deltas import CallParts, Delta, DeltaBuffer, args_deltas, random_call_id
from .dialect_sink import DialectSink
from .item_readers import ItemReaders
from .markers import Markers, NextStop
from .messages import MessageHeaders
from .modes import CALL, CONTENT, HEADER, REASONING, SECTION
from .outcomes import ABANDON, ABSENT, CLOSES_REASONING, CLOSES_SECTION, COMPLETE, END, ENDED, FEED
from .outcomes import HEADER_CUT, HEADER_IS_TEXT, HELD, IGNORED, ITEM, MARKER, MARKUP
from .outcomes import MESSAGE_HEADER, MESSAGE_TO, OPENS_CALL, OPENS_REASONING, OPENS_SECTION, READ
from .outcomes import REASONING_CLOSER_DROPPED, REASONING_OPENER_KEPT, RETRY, ROUTED, RUN, SAYS
from .outcomes import CONSIDERED, OPENER_IS_REASONING, SKIPPED, WAIT
from .output_end import NORMAL_STOPS, OutputEnd
from .policies import Policies
from .repeats import MARGIN, Repeats
from .schemas import ToolSchemas
from .shared_memos import grammar_memos
from . import shortcuts
from .protocol import ArgumentsReader
from .spec import FamilySpec, Lit
from .state import EngineState
from .tables import DIALECT, LIT, NAME, SKIP, WS, _Run, compiled

__all__ = ["Engine", "Log", "NORMAL_STOPS"]

_MAX_JUNK = 256  # stray text inside a call, after its name, read as the call's markup

# the trace's log: (what, *details), told each decision (`trace.py`)
Log = Callable[..., None]


class Engine(OutputEnd, HeadReaders, ItemReaders, DialectSink, CallOutcome):
    """Incremental parser for one output of one family."""

    _quick = True  # openers that would only give their text back are passed over (`_scan`)
    _replays = True  # a unit of text read twice the same is replayed after (`repeats.py`)

    def __init__(
        self,
        spec: FamilySpec,
        tools: ToolSchemas,
        *,
        reasoning_open: bool | None = None,
        block_open: bool | None = None,
        policies: Policies = Policies(),
        call_id: Callable[[int], str] = random_call_id,
        log: Log | None = None,
    ) -> None:
        if policies.citations == "strip":
            spec = stripping(spec)  # the citation markers are `ignore`d (`citations.py`)
        self.family = compiled(spec)
        # per shape, each item's run, reader and item (`_run_call`), made once per grammar
        self._plans = _plans_of(self.family)
        self.tools = tools
        self.policies = policies
        # (two of its properties, asked on every call)
        self._keeps_text = policies.keeps_text
        self._holds_calls = policies.holds_calls
        # every call whose name is read is sent as it is read (`CallOutcome._on_name`)
        self._sends_every_call = policies.unknown_tools == "keep" and not self._holds_calls
        self.call_id = call_id
        if reasoning_open is None:  # the grammar's default: did the prompt open it?
            reasoning_open = self.family.prompt_opened
        self.mode = REASONING if (reasoning_open and spec.reasoning) else CONTENT
        self.calls_emitted = 0
        self.finished = False
        # the output ended at a normal stop (`NORMAL_STOPS`): what it holds back goes back
        self._stopped = False
        self._state = EngineState()
        if block_open is None:  # the grammar's default: did the prompt open a block?
            block_open = bool(spec.prompt_opens)
        if block_open and spec.prompt_opens and self.mode == CONTENT:
            self._open_by_prompt(spec.prompt_opens)
        self._out = DeltaBuffer()
        # the message-header reader of a family whose output is messages
        self._headers = MessageHeaders(self.family, tools) if spec.messages else None
        # what the texts of two messages that go to the same place are joined with ("": none)
        self._join = spec.messages.join if spec.messages else ""
        # the trace's log (`trace.py`), None unless tracing: told each decision as it is made
        self._log: Log | None = log
        # the dialects' (`protocol.Sink.log`): what a dialect says of its state, traced
        self.log: Callable[[str], None] | None = None if log is None else partial(log, SAYS)
        self._outcome = READ  # what the last reader decided (`outcomes.py`)
        self._call: CallRecord | None = None
        # the name of the call being read (set by `_commit`, read by a dialect's schema look-ups)
        self._current_name = ""
        # per tool name and dialect item: what a dialect works out once per tool rather
        # than once per call (`DialectSink.tool_memo`), each memo shared by the parsers
        # given that tool when untraced (`shared_memos.tool_memo`)
        self._tool_memos: dict[tuple[str, int], tuple[object, dict]] = {}
        # the two grammar-only memos below, shared by the untraced parsers of this grammar
        shared = grammar_memos(self.family) if log is None else None
        names, longer_openers = ({}, {}) if shared is None else shared
        # per stop markers: where the first lies in the text at hand, shared by the calls
        # read one after another from one text (else N calls search N times to its end)
        self._next_stops: dict[tuple[str, ...], NextStop] = {}
        # the text a call is read from, and where its text not yet recorded begins
        # (`call_outcome.py`: only while a switch may give a call back as text)
        self._raw_buf: str | None = None
        self._raw_from: int = 0
        # the call waiting in its dialect after the last delta, and its item (`feed`)
        self._hot: tuple[CallRecord, int] | None = None
        # the markers the last `_scan` held back the rest of its text as the start of (None:
        # it did not): the loop stops there, a scan of that rest would hold it back again;
        # kept until the next `_run`, so that the next feed, while all the text held is
        # still only the start of one of them, is held at once (`feed`) (a shortcut:
        # `shortcuts.ON`; tests/runtime/test_held_rest.py)
        self._held_rest: Markers | None = None
        # the markers the last `_scan` searched, where it sent all its text as content (or
        # reasoning) and the next scan would search them again from an empty buffer: a delta
        # holding none of their first characters is sent as that scan would send it
        # (`feed`; untraced, shortcuts on). Set with `_held_rest` (it implies it), read only
        # by `feed`, and dropped by `feed` before its next run: `finish` and `whole` read no
        # more deltas
        self._prose: Markers | None = None
        # the call openers `_marker` opens a call on at once (`tables.plain_openers`;
        # untraced: the trace is told each decision)
        self._plain_openers = self.family.plain_openers if log is None else frozenset()
        # per optional literal's text: the call openers longer than it that begin with it
        # (`ItemReaders._opener_longer`; the grammar's literals: bounded)
        self._longer_openers: dict[str, tuple[tuple[str, ...], int]] = longer_openers
        # the reader of the last call that ended, kept to be renewed for the next call of the
        # same item (`DialectSink._dialect`; untraced, shortcuts on); let go at the end
        self._spare: ArgumentsReader | None = None
        # per name item and header text: the name and id it reads as (`_read_name`; bounded)
        self._names: dict[tuple[int, int, str], tuple[str, str | None]] = names

    def _open_by_prompt(self, marker: str) -> None:
        """The prompt ended with `marker` (a call opener, a section opener, a message
        header): the output is read as if it followed it, so a longer marker it begins
        (`<|message_model|><|content_text|>`) is still that marker, and a model that writes
        `marker` once more is read the same. It is the prompt's text: never given back."""
        self._state.pending = marker
        self._state.prompt = marker

    # -- the push interface -----------------------------------------------------

    def feed(self, text: object) -> list[Delta]:
        """The deltas that `text`, appended to what came before, makes safe to send
        (`StreamParser.feed` is this method: its argument is checked here).

        A call whose last delta left it waiting in its dialect (`_read_dialect` set `_hot`)
        is read at once, as `_run(buf, False)` would read it, without the engine's loop and
        the call's item loop, which would come to it the same way. What its dialect sends
        of its arguments is gathered in the buffer's `lone` (`DialectSink.emit_args`) and,
        when that is all the feed wrote, made into the feed's delta directly. One waiting
        for its name's end (`_read_name` set `_hot`, no dialect yet) has its name read at
        once (`_hot_name`), then its next items and the engine's loop, as `_run` goes on."""
        if not isinstance(text, str):
            raise TypeError(f"feed() takes str, not {type(text).__name__}")
        hot = self._hot
        if hot is not None and text:  # the call waits in its dialect: straight to it
            # (`_hot` stays set through the commonest read below, which leaves it so, and
            # nothing a dialect asks reads it; every other way clears it first: None once
            # finished, and while tracing, `_read_dialect`)
            call = hot[0]
            state = self._state
            if call is self._call and call.item == hot[1] and self.mode == CALL:
                buf = state.pending + text
                dialect: Any = call.dialect
                if dialect is None:  # (none yet: it waits for its name's end)
                    # its name item read at once, then, as `_run` and `_run_call` go on
                    # (its text not recorded), the call's next items, then `_run` on from
                    # where they stopped
                    pos = self._hot_name(call, buf)  # (it clears `_hot` unless it waits)
                    outcome = self._outcome
                    if outcome == READ:
                        pos = self._run_call(buf, pos, False)
                        outcome = self._outcome
                    out = self._out
                    if outcome == WAIT:
                        state.pending = buf[pos:]
                        return out.take() if out.entries else []  # (most wait with nothing)
                    if outcome == RETRY:
                        buf, pos = _rewound(buf, pos, state.rewind)  # type: ignore[arg-type]
                        state.rewind = None
                    self._run(buf, False, pos)
                    return out.take() if out.entries else []
                out = self._out
                if call.dropped or out.entries:  # (its output dropped, or after an error)
                    self._hot = None
                    return self._hot_read(call, buf, dialect.read(buf, 0, False))
                lone = out.lone = []
                try:
                    new = dialect.read(buf, 0, False)
                except BaseException:  # (what it sent is kept, as the engine's loop keeps it)
                    self._hot = None
                    out.settle(call.index)
                    raise
                # (read as `self._out.lone`: mypy narrows `out.lone` to the list set above
                # across the read, which may close it; compiled, that read would raise:
                # "Stale narrowing" in docs/compiled.md)
                if self._out.lone is lone and not dialect.done:  # the commonest
                    out.lone = None  # (nothing else written: no call committed, it waits)
                    if call.ws_tail and new > 0:
                        call.ws_tail.clear()
                    self._outcome = WAIT
                    state.pending = buf[new:]
                    return args_deltas(call.index, lone)
                self._hot = None
                return self._hot_read(call, buf, new)
            self._hot = None  # (another call, or item, since: read as usual)
        if self.finished:
            raise RuntimeError("feed() after finish()")
        if text:
            if self._log is None:
                prose = self._prose
                if prose is not None:  # (nothing held: the last scan sent all it read)
                    if len(text) <= MARGIN and prose.find_first(text) is None:
                        # no marker nor the start of one in it: the scan would send it all
                        # as text (`_text`), and search the same markers next unless the
                        # text ended `after_calls` (`_same_markers`)
                        self._text(text)
                        if not self._same_markers(prose, self.mode):
                            self._prose = self._held_rest = None
                        return self._out.take()
                    self._prose = None  # (a run changes what it holds)
                state = self._state
                held = self._held_rest
                if held is not None:  # the last feed ended holding the start of a marker
                    buf = state.pending + text
                    # still all of it only that (no marker in it), as a scan would find:
                    # held again, without the loop and the scan (`_run`, `_scan`)
                    if (
                        len(buf) <= held.max_prefix  # (`could_start`, inline)
                        and buf in held.prefixes
                        and len(buf) <= MARGIN
                        and held.find(buf, 0) is None
                    ):
                        state.pending = buf
                        out = self._out
                        return out.take() if out.entries else []
                    self._run(buf, False)
                else:
                    self._run(state.pending + text, False)
            else:
                self._log(FEED, text, False)
                self._run(self._state.pending + text, eof=False)
                self._log(HELD)
        out = self._out
        return out.take() if out.entries else []  # (`take`'s answer, without its call)

    def _hot_read(self, call: CallRecord, buf: str, new: int) -> list[Delta]:
        """The rest of a hot call's feed (`feed`) when its dialect wrote more than its
        arguments, or ended them at `new`: the engine's loop goes on from there.

        When they ended and were all the feed wrote, they stay apart from the buffer while
        the loop reads the call's end and what follows (shortcuts on): put first after it
        (`DeltaBuffer.put_first`, what `settle` before the loop would have made of them), or,
        when the loop wrote nothing, made into the feed's delta directly (`args_deltas`)."""
        out = self._out
        lone = out.lone
        if lone is not None and call.dialect.done and not out.entries and shortcuts.ON:
            out.lone = None
            if call.ws_tail and new > 0:
                call.ws_tail.clear()
            try:
                self._run(buf, False, self._dialect_ended(call, buf, new, False))
            except BaseException:  # (what it sent is kept, as `settle` first would keep it)
                out.put_first(call.index, lone)
                raise
            if not out.entries:  # (the commonest: the call ended, the next one not begun)
                return args_deltas(call.index, lone)
            out.put_first(call.index, lone)
            return out.take()
        if lone is not None:  # (`settle`'s test, without its call)
            out.settle(call.index)
        if call.ws_tail and new > 0:
            call.ws_tail.clear()
        if call.dialect.done:
            self._run(buf, False, self._dialect_ended(call, buf, new, False))
            return out.take()
        self._outcome = WAIT
        if call.hold is None:  # (committed, its text not recorded, nor its arguments held)
            self._hot = call, call.item
        self._state.pending = buf[new:]
        return out.take() if out.entries else []

    def finish(self, reason: str = "stop") -> list[Delta]:
        """End of output. The reason decides what was held back: at a normal stop nothing
        was cut, so text that is not a call goes back; at `length` an unfinished opener is
        dropped ("Unfinished output" in docs/policies.md)."""
        if not self.finished:
            if self._log is not None:
                self._log(FEED, "", True)
            self._end(reason)
        return self._out.take()

    def whole(
        self, text: str, reason: str = "stop"
    ) -> tuple[list[str], list[str], dict[int, CallParts]]:
        """The whole output at once: exactly `feed(text)` then `finish(reason)`, its output
        gathered (`DeltaBuffer.gather`) instead of made into deltas no one streams."""
        if self.finished:
            raise RuntimeError("whole() after finish()")
        if self._log is not None:
            self._log(FEED, text, True, True)
        if text:
            self._run(self._state.pending + text, eof=False)
        self._end(reason)
        return self._out.gather()

    def _end(self, reason: str) -> None:
        self.finished = True
        state = self._state
        if state.considered is not None:  # no reasoning closer came
            held = "".join(state.considered) + state.pending
            state.considered, state.pending = None, ""
            if reason in NORMAL_STOPS:  # the model ended it: the opener opens a call, read
                state.calls_from_reasoning = True  # as it was, then the end
                self._run(held, eof=False)
            # cut (`length`): had the output gone on, a closer could have made it reasoning;
            # undecided, it is dropped as an unfinished opener is, so that the cut reads as
            # the start of either reading
        self._stopped = reason in NORMAL_STOPS
        self._at_end = True  # (a call given back as text ends as content: `_give_text`)
        if self._headers is not None:
            self._headers.stopped = self._stopped
        self._run(self._state.pending, eof=True)
        self._end_of_output()
        self._hot = None  # (it holds the call, whose dialect holds this engine: no cycle left)
        self._spare = None  # (the same: a reader holds this engine's methods)
        if self._log is not None:
            self._log(END)

    # -- the main loop --------------------------------------------------------------

    def _run(self, buf: str, eof: bool, pos: int = 0) -> None:
        state = self._state
        # (set again only by a scan that holds this text's rest; typed so, not narrowed to
        # None across the loop's scans: "Stale narrowing" in docs/compiled.md)
        self._held_rest = _NOT_HELD
        repeats = None  # a long text's boundaries, for a unit read the same twice (`repeats.py`)
        while True:
            if state.considered is not None:
                found = self._considered(buf, pos)
                if found is None:
                    pos = len(buf) - self.family.reasoning_closers.held(buf, pos)
                    if not eof:
                        break
                    # an opener met in the text the end of the output read: decided now
                    held = "".join(state.considered) + buf[pos:]  # type: ignore[arg-type]
                    state.considered = None
                    if not self._stopped:  # cut: undecided, dropped (see `_end`)
                        pos = len(buf)
                        break
                    state.calls_from_reasoning = True
                    found = (held, 0)
                buf, pos = found
                continue
            mode = self.mode
            if mode == CALL:
                call: CallRecord = self._call  # type: ignore[assignment]
                if call.raw is not None:  # its text is recorded (`call_outcome.py`)
                    self._raw_buf, self._raw_from = buf, pos
                pos = self._run_call(buf, pos, eof)
                if call.raw is not None and self._call is call:
                    self._raw_sync(call, pos)
                outcome = self._outcome
                if outcome == WAIT:
                    break
                if outcome == RETRY:  # another shape reads the same text again
                    buf, pos = _rewound(buf, pos, state.rewind)  # type: ignore[arg-type]
                    state.rewind = None
                    continue
            elif mode == HEADER:
                pos = self._header(buf, pos, eof)
                if self._headers.outcome == WAIT:  # type: ignore[union-attr]
                    break
            else:
                left = len(buf) - pos
                if left <= 0:
                    break
                if left > MARGIN and self._replays and self._log is None:
                    if repeats is None:
                        repeats = Repeats()
                    pos = repeats.at(self, buf, pos)  # past the units replayed, if any
                new = self._scan(buf, pos, eof)
                if self._held_rest is not None:  # (the rest may begin a marker: another scan
                    pos = new  # holds it; kept for the next feed, `feed`)
                    break
                if new == pos and self.mode == mode:
                    break
                pos = new
        state.pending = buf[pos:]

    def _considered(self, buf: str, pos: int) -> tuple[str, int] | None:
        """A call opener met inside open reasoning waits, with the text after it, for the
        first reasoning closer (it was reasoning: the held text is read again as
        reasoning, openers as text) or the end of the output (a call: the held text is read
        again as the opener's call, as if the opener had ended the reasoning). The text to
        read again from, and where; None while neither has come (the text up to a tail
        that may begin a closer is held)."""
        state = self._state
        closers = self.family.reasoning_closers
        considered = state.considered
        gives_back = self.family.gives_back.get(considered[0])  # type: ignore[index]
        held = "".join(considered)  # type: ignore[arg-type]
        # the text the pattern is tried on: the opener and the 64 characters after it, however
        # the deltas cut them (a stream decides as the whole output does)
        room = len(considered[0]) + _DECIDES_WITHIN - len(held)  # type: ignore[index]
        if gives_back is not None and room > 0:
            found = gives_back.match(held + buf[pos : pos + room])
            if found:  # no call could follow: reasoning text at once, what the match read
                # with the opener (the whitespace a call reads before it gives up, as the
                # whole output's pass and a call made read it), the scan on after that
                state.considered = None
                end = found.end()
                if end <= len(held):
                    self._text(held[:end])
                    return _rewound(buf, pos, held[end:])
                self._text(held + buf[pos : pos + end - len(held)])
                return buf, pos + end - len(held)
        at, _ = closers.search(buf, pos)
        if at < 0:  # (the end of the output decides in `_end`)
            state.considered.append(buf[pos : len(buf) - closers.held(buf, pos)])  # type: ignore[union-attr]
            return None
        held = "".join(state.considered)  # type: ignore[arg-type]
        state.considered = None
        state.openers_are_reasoning = True
        return _rewound(buf, at, held + buf[pos:at])

    def _opener_makes_no_call(self) -> bool:
        """Whether a call opener found in reasoning may be held (`_considered`) or text,
        not a call (`_marker`): any but where the output's end already made openers calls
        (`reasoned` turns on at the first text, inside the scan's own pass)."""
        state = self._state
        return state.openers_are_reasoning or not state.calls_from_reasoning

    def _scan(self, buf: str, pos: int, eof: bool) -> int:
        family = self.family
        mode = self.mode
        state = self._state
        # a call opener on text its call would only give back is passed over: the same
        # result, without making the call (`tables._gives_back`); not at the end of the
        # output, where a section's opener may go back with it, nor before the prompt's
        # marker is read
        quick = self._quick and not eof and not state.prompt
        if quick and mode == REASONING and self._opener_makes_no_call():
            # an opener held in reasoning is decided by `_considered` (its pattern, within
            # its window), one that reasoning closed is text: the pass, which reads the
            # whole text and the whitespace after an opener with it, would decide otherwise
            quick = False
        reopen = state.reopen
        acts = _NO_ACTS
        if mode == SECTION:  # (first: none of the tests below holds in a section)
            markers = family.quick_section_markers if quick else family.section_markers
        elif reopen and (mode == CONTENT or mode == REASONING):
            markers, acts = family.reopen[reopen]  # text in the block a skip's opener opened
        elif self._headers is not None and self._headers.routed and mode != SECTION:
            markers = family.routed_markers
        elif mode == CONTENT and state.after_calls:
            markers = family.after_calls_markers  # type: ignore[assignment]
        elif mode == CONTENT:
            markers = family.quick_content_markers if quick else family.content_markers
        elif mode == REASONING:
            markers = family.quick_reasoning_markers if quick else family.content_markers
        else:
            markers = family.quick_section_markers if quick else family.section_markers
        found = markers.find(buf, pos)  # (`Markers.search`, without its call)
        if found is None:
            at, lit = -1, ""
        else:
            at, lit = found.start(), found.group()
        start = pos  # where a tail held back as a possible marker may begin
        if lit in markers.passable:  # (only a quick search has any: `tables._passes`)
            at, lit, start = markers.pass_over(buf, at, lit, pos)
            if markers.drops and start > pos:  # special tokens passed: back as nothing,
                passed = buf[pos:start]  # as a call that gives them back drops them
                for token in family.special_openers:  # (`_abandon`)
                    passed = passed.replace(token, "")
                self._text(passed)
                pos = start
        if at < 0:  # the tail that may begin a marker is held (`Markers.held`, inline)
            stop = len(buf)
            low = stop - markers.max_prefix
            tail = markers.find_tail(buf, low if low > start else start)
            if tail is not None:
                stop = tail.start()
            held = len(buf) - stop
            if stop > pos:
                self._text(buf[pos:stop])
            if eof and held:
                if self._held_is_prose(buf, stop):
                    self._text(buf[stop:])
                else:  # `<tool_ca`, `plan</thi`: markup cut off, dropped with the
                    state.ws_held.clear()  # whitespace right before it
                return len(buf)
            # (`_same_markers`, inline: the commonest scan holds a tail)
            if shortcuts.ON and (
                mode != CONTENT or state.after_calls or markers is not family.after_calls_markers
            ):
                self._held_rest = markers
                if not held and not reopen and (mode == CONTENT or mode == REASONING):
                    # all sent, nothing pending, no opener considered (`_run` reads one
                    # before any scan): a prose delta next is read by `feed` at once
                    # (untraced). (What chose the markers, `_text` does not change: in
                    # reasoning, `quick` reads the state of calls from reasoning, not
                    # `reasoned`)
                    self._prose = markers
            return stop
        # (`may_grow` asked only of a marker a longer one begins: no other may grow)
        if (
            lit in markers.growing
            and markers.may_grow(buf, at, lit)
            and not (eof and self._ends_at(buf, at + len(lit)))
        ):
            self._text(buf[pos:at])  # the marker may still be the start of a longer one
            if not eof:
                if shortcuts.ON and self._same_markers(markers, mode):
                    self._held_rest = markers
                return at
            self._state.ws_held.clear()  # the output ends inside the longer marker: markup
            return len(buf)
        if at > pos:
            self._text(buf[pos:at])
        if reopen:  # the block's next marker: read as if its opener came right before it
            self._state.reopen = ""
            act = acts.get(lit)
            if act is not None:
                marker, consumed = act
                self._state.prompt = reopen
                return self._marker(marker, at + len(lit) if consumed else at)
        if lit in family.content_ignore and mode != CONTENT:  # (a citation in reasoning)
            self._text(lit)
            return at + len(lit)
        end = family.ignore_until.get(lit)
        if end is not None:  # a marker with a tail (`</co:` … `>`): `citations.py`
            after = tail_end(buf, at + len(lit), end, eof)
            if after == -1:
                return at  # held until its end arrives
            if after == -3:  # the output ends inside it: cut markup at `length`, else text
                after = -2 if self._stopped else len(buf)
            if after == -2:  # no tail after all: the marker is text
                self._text(lit)
                return at + len(lit)
            if self._log is not None:
                self._log(MARKER, lit, IGNORED)
            return after
        return self._marker(lit, at + len(lit))

    def _same_markers(self, markers: Any, mode: int) -> bool:
        """Whether the next scan would search `markers` again: the text a scan sent in
        content may have ended `after_calls` (text after the calls: their section's closer
        is text again), which chose the markers; nothing else a scan sends changes them, and
        no other mode's choice reads it. (The markers of the same literals are one object:
        content's may be the after-calls ones, so in content this says no at worst.)"""
        return (
            mode != CONTENT
            or self._state.after_calls
            or markers is not self.family.after_calls_markers
        )

    def _text(self, text: str) -> None:
        if not text or (self._headers is not None and self._headers.dropping):
            return
        state = self._state
        if state.section_back:  # whitespace after the opener goes back with it, text not
            if text.isspace():
                state.section_back.append(text)
            else:
                state.section_back = []
        if state.section_opener:  # text after it: the opener can no longer go back
            state.section_opener = ""  # in order, so it stays markup
        if self.mode == REASONING:
            if not self._state.reasoned and not text.isspace():
                self._state.reasoned = True  # a call opener after this is only considered
            self._put(REASONING, text)
            return
        state = self._state
        if state.after_calls and not text.isspace():
            state.after_calls = False  # text after the calls: a closer is text again
        if self.calls_emitted and self.policies.text_after_calls == "drop":
            return  # content is the text before the first call (`text_after_calls`)
        if self.policies.verbatim:
            if state.gap:  # whitespace after markup: layout unless text follows
                if text.isspace():
                    state.ws_held.append(text)
                    return
                state.gap = False
                if state.ws_held:
                    text = "".join(state.ws_held) + text
                    state.ws_held.clear()
            self._put(CONTENT, text)
            return
        if not state.content_started:
            text = text.lstrip()
            if not text:
                return
            state.content_started = True
        body = text.rstrip()
        if not body:
            state.ws_held.append(text)
            return
        if state.ws_held:
            self._put(CONTENT, "".join(state.ws_held))
            state.ws_held.clear()
        self._put(CONTENT, body)
        if len(body) < len(text):
            state.ws_held.append(text[len(body) :])

    def _put(self, kind: int, text: str) -> None:
        """Send content or reasoning text; the first of a message whose text goes where an
        earlier message's went is led by the grammar's `join` (Harmony's "\n")."""
        join = self._join
        if join:
            state = self._state
            bit = 1 << kind
            if not state.message_wrote & bit:
                state.message_wrote |= bit
                if state.messages_wrote & bit:
                    self._out.text(kind, join)
        self._out.text(kind, text)

    def _next_message(self) -> None:
        """A message ended or a whole header began one: the next text is another message's."""
        state = self._state
        state.messages_wrote |= state.message_wrote
        state.message_wrote = 0

    def _new_call(self, opener: str, back: int, tried: int, prompt: str = "") -> CallRecord:
        """A call started by `opener`, in the `tried`-th shape that opener starts; `prompt`
        is the part of the opener the prompt wrote."""
        family = self.family
        shape, item = family.openers[opener][tried]
        peeked = opener in family.peek_openers
        call = CallRecord(
            item,
            back,
            opener,
            shape,
            family.shapes[shape].call,
            tried,
            peeked,
            prompt,
            opener in family.special,
        )
        if self._keeps_text:
            call.raw = [] if peeked else [opener[len(prompt) :]]
        return call

    def _boundary(self) -> None:
        """Markup begins: the whitespace right before it is markup too (held whitespace: with
        verbatim whitespace only a gap's)."""
        self._state.ws_held.clear()
        self._state.gap = True

    def _marker(self, lit: str, pos: int) -> int:
        """A marker found outside a call: what it does (`outcomes.py`) is decided here."""
        family = self.family
        state = self._state
        mode = self.mode
        if lit in self._plain_openers and (
            mode == SECTION or (mode == CONTENT and family.calls_anywhere)
        ):  # (what the tests below decide for it, without them: its call opens)
            prompt, state.prompt = state.prompt, ""
            state.after_calls = False
            self._call = self._new_call(lit, mode, 0, prompt)
            self.mode = CALL
            return pos - len(lit) if lit in family.peek_openers else pos
        # the first marker begins with the one the prompt ended with, if it did: that part
        # is the prompt's
        prompt, state.prompt = state.prompt, ""
        headers = self._headers
        if self._join and lit in family.message_ends:  # the next text is another message's
            self._next_message()
        if lit in family.section_closes and mode == CONTENT and not state.after_calls:
            if lit not in family.ignore:  # found after the calls, but text came first
                self._text(lit)
                return pos
        if lit not in family.ignore:
            state.after_calls = False
        if (
            mode == REASONING
            and not family.calls_inside
            and (lit in family.section_opens or (lit in family.openers and family.calls_anywhere))
        ):
            if state.openers_are_reasoning:  # the reasoning closed after it: its text
                self._text(lit)
                if self._log is not None:
                    self._log(MARKER, lit, OPENER_IS_REASONING)
                return pos
            if state.reasoned and not state.calls_from_reasoning:  # held until decided
                state.considered = [lit]
                if self._log is not None:
                    self._log(MARKER, lit, CONSIDERED)
                return pos
        if lit in family.ignore and not (
            (mode == REASONING and lit in family.reasoning_closes)
            or (mode == SECTION and lit in family.section_closes)
        ):
            action = IGNORED  # (a marker both ignored and closing the open block closes it)
        elif headers is not None and lit in headers.markers:
            action = headers.marker(lit, mode, prompt)
            if action == MESSAGE_HEADER:  # (a header or a message's end closes a section)
                self.mode = HEADER
            elif action == MESSAGE_TO:  # a header without a recipient
                self._enter_message(headers)
            else:
                self._boundary()
                self.mode, state.in_section = CONTENT, False
        elif lit in family.openers and (mode == SECTION or family.calls_anywhere):
            self._call = self._new_call(lit, mode, 0, prompt)
            self.mode = CALL
            action = OPENS_CALL
            if lit in family.peek_openers:
                pos -= len(lit)  # the call's next item reads it
        else:
            space = "".join(state.ws_held)  # (given back with a section holding no call)
            self._boundary()
            action = MARKUP
            if lit in family.section_opens:
                if mode != SECTION:  # (a special token goes back as nothing, its gap too)
                    state.section_opener = (
                        "" if lit in family.special else space + lit[len(prompt) :]
                    )
                    # (`section_text="call"`: a call given back leaves the section markup)
                    state.section_back = (
                        [state.section_opener]
                        if state.section_opener and self.policies.section_text != "call"
                        else []
                    )
                    state.section_texted = False
                elif state.section_back and lit not in family.special:
                    # written again before the section's first call: it goes back with it
                    # (the whitespace before it is in section_back already: `_text` put it)
                    state.section_back.append(lit)  # (pieces: repeated, it stays linear)
                self.mode, state.in_section, action = SECTION, True, OPENS_SECTION
            elif lit in family.section_closes:
                self.mode, state.in_section, action = CONTENT, False, CLOSES_SECTION
                state.section_opener, state.section_back = "", []
                if state.section_texted:  # its opener and calls went back: it goes too
                    state.section_texted = False
                    self._text(space + lit)
            elif lit in family.reasoning_opens:
                action = REASONING_OPENER_KEPT
                if mode == CONTENT:
                    self.mode, action = REASONING, OPENS_REASONING
                    state.reasoned = False
            elif lit in family.reasoning_closes:
                state.openers_are_reasoning = False
                action = CLOSES_REASONING if mode == REASONING else REASONING_CLOSER_DROPPED
                self.mode = CONTENT
        if self._log is not None:
            self._log(MARKER, lit, action)
        return pos

    # -- messages (`messages.py` reads a header; the engine acts on what it decided) ----

    def _header(self, buf: str, pos: int, eof: bool) -> int:
        headers = self._headers
        assert headers is not None
        new = headers.read(buf, pos, eof)
        outcome = headers.outcome
        if outcome == WAIT:
            return new
        self.mode = headers.mode
        if outcome == HEADER_IS_TEXT:
            self._text(headers.opener)
        elif outcome == HEADER_CUT:
            self._state.ws_held.clear()
        else:
            self._enter_message(headers)
        return new

    def _enter_message(self, headers: MessageHeaders) -> None:
        """A whole header: the message's body goes where its route says, or is a call
        named by its recipient, read by its call's items after the name."""
        self._next_message()
        self._boundary()
        self._state.in_section = False
        self.mode = headers.mode
        if headers.name:
            family = self.family
            assert family.by_recipient is not None
            shape = family.by_recipient[0]
            call = CallRecord(1, CONTENT, "", shape, family.shapes[shape].call)
            if self._keeps_text:
                call.raw = []
            self._call = call
            self._commit(call, headers.name, None)
        if self._log is not None:
            self._log(ROUTED, headers)

    # -- a call ---------------------------------------------------------------------

    def _run_call(self, buf: str, pos: int, eof: bool) -> int:
        """Read the call's items from `pos` on; the position reached.

        Each item kind has its reader (called by kind: a direct method call, which the
        compiled build makes a native call, where a table of functions made a generic
        one), which says what it decided in
        `_outcome` (`outcomes.py`): read, absent or skipped, the call goes on with the item
        the reader moved it to; anything else (waiting for text, the call abandoned, cut
        or ended) stops the loop, and `_run` acts on the same code.
        """
        call: CallRecord = self._call  # type: ignore[assignment]
        plan = self._plans[call.shape]
        log = self._log
        count = len(plan)
        itemwise = -1  # items before this are read one by one: their run did not decide
        index = call.item
        while index < count:
            run, kind, item = plan[index]
            if run is not None and index > itemwise:
                found = run.pattern.match(buf, pos)
                if found is not None:
                    end = found.end()
                    left = len(buf) - end
                    if left >= run.lookahead or (
                        (left or run.at_end >= 0)
                        and run.cut.search(buf, max(pos, len(buf) - run.lookahead)) is None
                    ):  # (no literal begun and cut by the end, at or before `end`)
                        if log is not None:
                            log(RUN, call, index, found.group())
                        self._read_run(call, found.group())
                        pos = end
                        call.item = index = run.next if left else run.at_end
                        continue
                partial = run.partial
                if partial is not None and not eof and log is None:
                    # the text ends inside the run: the items before the one it ends at
                    # read in one match, that one waits (`_Run.partial`)
                    waits = partial.match(buf, pos)
                    if waits is not None:
                        group = waits.lastindex
                        new = waits.end(group)  # type: ignore[arg-type]
                        self._read_run(call, buf[pos:new])
                        call.item = index + group - 1  # type: ignore[operator]
                        self._outcome = WAIT
                        return new
                itemwise = run.next  # (the items read the same: their own runs are not tried)
            if kind == LIT:
                new = self._read_literal(call, item, buf, pos, eof)
            elif kind == WS:
                new = self._read_whitespace(call, item, buf, pos, eof)
            elif kind == DIALECT:
                new = self._read_dialect(call, item, buf, pos, eof)
            elif kind == NAME:
                new = self._read_name(call, item, buf, pos, eof)
            elif kind == SKIP:
                new = self._read_skip(call, item, buf, pos, eof)
            else:
                new = self._read_naming_dialect(call, item, buf, pos, eof)
            outcome = self._outcome
            if log is not None:
                log(ITEM, call, index, item, buf[pos:new], outcome)
            if outcome > ABSENT and (outcome != SKIPPED or (new == pos and call.item == index)):
                return new if outcome != SKIPPED else self._wait(new)  # (never stuck)
            pos = new
            index = call.item
        self._end_call(pos)
        return pos

    # -- the readers of a call's items: (call, item, buf, pos, eof) -> the position reached

    def _wait(self, pos: int) -> int:
        self._outcome = WAIT
        return pos

    # -- the sink of a call's dialect (`protocol.Sink`) -------------------------------

    def _commit(self, call: CallRecord, name: str, header_id: str | None) -> None:
        """The name is known: the call is real from here on."""
        state = self._state
        call.committed = True
        call.held = []
        if call.raw is not None:  # (it may be given back: the section's opener with it)
            call.section_back = "".join(state.section_back)
        state.section_opener, state.section_back = "", []
        call.dropped = False  # an array's next element is a call of its own
        if self._sends_every_call and call.hold is None:  # (`_on_name`'s answer, at once)
            call.malformed = False
            state.section_texted = False
        elif not self._on_name(call, name, header_id):  # dropped, text or held
            return
        if call.kept:  # prose between the opener and the call (with the space before it)
            self._kept_prose(call)
        state.ws_held.clear()  # (`_boundary`)
        state.gap = True
        call.index = self.calls_emitted
        self.calls_emitted += 1
        self._current_name = name
        self._out.call(call.index, header_id or call.read_id or self.call_id(call.index), name)

    def _mismatch(self, call: CallRecord, buf: str, pos: int, eof: bool) -> int:
        """A required literal is not there.

        Before the name, the call was not one. After it, the text up to the call's next
        literal (within `_MAX_JUNK` characters) is markup of the call, e.g. a doubled
        `</steptml:invoke>`; a marker that ends calls (the next opener, the section's
        closer) or a longer stretch of text ends the call there instead.
        """
        if not call.committed:
            return self._abandon(call, pos)
        family = self.family
        items = call.items
        window = buf[pos : pos + _MAX_JUNK]
        best, best_at = -1, len(window)
        for later in range(call.item, len(items)):  # this literal, further on, or a later one
            item = items[later]
            if isinstance(item, Lit):
                for text in item.texts:
                    at = window.find(text)
                    if 0 <= at < best_at:
                        best, best_at = later, at
        ends = (*family.first_openers, *family.section_closes)
        if any(0 <= window.find(end) <= best_at for end in ends):
            best = -1  # a marker that ends calls comes first
        if best >= 0:
            call.item = best
            call.ws_tail.clear()
            self._outcome = SKIPPED
            return pos + best_at
        if len(buf) - pos < _MAX_JUNK and not any(0 <= window.find(e) for e in ends):
            if not eof:
                return self._wait(pos)  # the next literal may still arrive
            if not self._stopped:  # cut short before it: had the output gone on, the
                self._end_call(self._undecided_from(call, buf, pos))  # literal could have
                return len(buf)  # come, and this text was the call's
        self._end_call(pos)
        return pos

    def _undecided_from(self, call: CallRecord, buf: str, pos: int) -> int:
        """Where the call's text ends when the output is cut at `length` in stray text
        after its name, before the literal it awaits: the end of the output (that text is
        the call's markup had the literal come). A call that may be given back as text
        (`unknown_tools`, `partial_calls`, `malformed_calls` at "text": its text is kept)
        ends at the first marker of where its text goes back to (a reasoning opener, an
        ignored token, a message header: `<tool_call>{…}zz<think>x`): had the literal come,
        the marker would be the call's text as written; at a normal stop, the stray text
        goes back and the marker is markup. Undecided, it and what follows are dropped, as
        an unfinished opener is, so that the cut reads as the start of either reading
        (docs/policies.md, "Partial and malformed calls")."""
        if call.raw is None:
            return len(buf)  # (nothing of the call goes back: its end is its own)
        family = self.family
        markers = family.section_markers if self._state.in_section else family.content_markers
        at, _ = markers.search(buf, pos)
        return len(buf) if at < 0 else at

    def _abandon(self, call: CallRecord, pos: int) -> int:
        """Not a call after all: the opener's next shape is tried on the same text, or the
        text goes back to where it came from."""
        if call.tried + 1 < len(self.family.openers[call.opener]):
            past = call.held[1:] if not call.peeked else call.held  # the text after the opener
            self._call = self._new_call(call.opener, call.back, call.tried + 1, call.prompt)
            self._state.rewind = "".join(past)
            self._outcome = RETRY
            return pos
        self._call = None
        self.mode = call.back
        self._outcome = ABANDON
        if self._stopped and call.back == SECTION:
            self._section_back()
        held = "".join(call.held)
        for token in self.family.special_openers:  # (a stuttered `[TOOL_CALLS][TOOL_CALLS]`)
            held = held.replace(token, "")
        if not held and call.peeked:  # nothing read past a lookahead opener: it is text
            self._text(call.peeked)
            return pos + len(call.peeked)
        self._text(held)
        return pos

    def _end_call(self, end: int = -1) -> None:
        """The call ends; its text reaches `end` of the text at hand (-1: no further than
        read so far)."""
        call = self._call
        assert call is not None
        self._outcome = COMPLETE if call.item >= len(call.items) else ENDED
        if end >= 0 and call.raw is not None:
            self._raw_sync(call, end)
        if call.committed and not call.args_done:
            self._close_args(call)  # arguments cut by the end, or ended by junk
            self._settle(call, PARTIAL if self.finished and not call.malformed else MALFORMED)
        if call.hold is not None:
            self._settle(call, MALFORMED if call.malformed else WHOLE)
        dialect = call.dialect
        if dialect is not None and self._log is None and shortcuts.ON and hasattr(dialect, "renew"):
            self._spare = dialect  # renewed for the next call of its item (`_dialect`)
        self._call = None
        state = self._state
        if state.in_section:
            self.mode = SECTION
        else:
            self.mode = CONTENT
            if call.committed and self.family.after_calls_markers:
                state.after_calls = True  # a section closer left after them is markup
        if not call.committed:  # a complete call structure with no call in it (`[]`) is markup
            state.ws_held.clear()  # (`_boundary`)
        state.gap = True
        if call.ws_tail and not call.texted:  # (a call given back has its text out)
            self._text("".join(call.ws_tail))
        if self._log is not None:
            self._log(self._outcome, call)

    def _close_args(self, call: CallRecord) -> None:
        call.args_done = True
        if call.dialect is None:
            self.emit_args("{}")
        else:
            call.dialect.close()


# one shape's plan: per item, its run (or None), its kind and the item (`_run_call`)
Plan = tuple[tuple[_Run | None, int, Any], ...]

# per compiled grammar (by identity, kept with it): its shapes' plans (`_plans_of`)
_PLANS: dict[int, tuple[object, tuple[Plan, ...]]] = {}
_PLANS_LIMIT = 64


def _plans_of(family: Any) -> tuple[Plan, ...]:
    """The plans of `family`'s shapes: worked out once per compiled grammar, not on every
    entry into a call's items (a grammar's tables, `CompiledFamily.steps` and `runs`,
    never change once made)."""
    found = _PLANS.get(id(family))
    if found is not None and found[0] is family:
        return found[1]
    plans = tuple(
        tuple((run, kind, item) for run, (kind, item) in zip(runs, steps))
        for runs, steps in zip(family.runs, family.steps)
    )
    if len(_PLANS) >= _PLANS_LIMIT:
        _PLANS.pop(next(iter(_PLANS)), None)
    _PLANS[id(family)] = family, plans
    return plans


# `_run`'s `_held_rest` at its start: none held, typed as the attribute (a plain None would
# narrow it to None for mypy across the scans that set it; `typing.cast` is a call in Python)
_NOT_HELD: Markers | None = None

# `_scan`'s acts outside a reopened block: none (shared, never written)
_NO_ACTS: dict[str, tuple[str, bool]] = {}

# how far past a call opener held in reasoning its `gives_back` pattern is tried
_DECIDES_WITHIN = 64


def _rewound(buf: str, pos: int, past: str) -> tuple[str, int]:
    """The text to read again from, `past` then buf[pos:], and where it starts. Text still
    in `buf` right before `pos` (a whole parse) is read where it is: building a new buffer
    copied the rest of the output at every shape tried, quadratic over repeated openers."""
    back = pos - len(past)
    if back >= 0 and buf.startswith(past, back):
        return buf, back
    return past + buf[pos:], 0
