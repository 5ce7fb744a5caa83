"""The push core every family runs on: `feed(delta)` and `finish(reason)`.

A state machine over the regions of an output, its modes (`modes.py`): content,
reasoning, a tool-call section and a message header are scanned for the markers the
family's `FamilySpec` declares (`_scan`, `_marker`); in a call, the call's sequence of
items (literals, whitespace, the name, one argument dialect) is read over the text as it
arrives, one reader per item kind (`_read_literal`, …, dispatched by the kind
`tables.CompiledFamily` precomputed). Its flags live in `state.EngineState`, the call
being read in `_Call`. It never re-reads text it has decided on: each delta
is scanned once, plus the few characters held back because they could still begin a
marker.

Policies that today's parsers answer per family are answered here, once
(docs/policies.md): whitespace touching markup is markup; a tool-call opener ends an open
reasoning block; a call whose opener turns out malformed before its name is known
goes back to the text it came from; at the end of the output, the finish reason decides
what was held back (`length`: an unfinished opener is dropped; a normal stop: text that is
no call goes back, a lone name is a call with `{}`).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .deltas import CallParts, Delta, DeltaBuffer, random_call_id
from .dialects import DIALECTS
from .markers import Markers, NextStop, markers
from .modes import CALL, CONTENT, HEADER, REASONING, SECTION
from .protocol import ArgumentsReader
from .schemas import ToolSchemas
from .spec import BAD_NAME, Dialect, FamilySpec, Lit, Name, Skip, Ws, name_of, never_a_name
from .state import EngineState
from .unwrap import WRAPPER_KEYS
from .tables import DIALECT, LIT, NAME, NAMING_DIALECT, SKIP, WS, compiled

_MAX_RECIPIENT = 256
_MAX_HEADER = 512  # a header's recipient and fields together, on one line
_MAX_JUNK = 256  # stray text inside a call, after its name, read as the call's markup

_WS = re.compile(r"\s*")
# letters and digits, spaces between (and before: a space-led marker's prefix ` f`)
_WORDS = re.compile(r"\s*[^\W_]+(?:\s+[^\W_]+)*")
_WORD = re.compile(r"\s*[^\W_]+")
# words with whitespace between: prose, which no skipped header holds
_PROSE = re.compile(r"\S\s+\S")
# a name a call may be made of at a normal stop with nothing after it (`7` is prose)
_BARE_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_LAST_TOKEN = re.compile(r"\S+\Z")
# the finish reasons of an output the model ended itself: nothing in it was cut
NORMAL_STOPS = frozenset({"stop", "tool_calls"})


class _Call:
    """The call being read."""

    __slots__ = (
        "item",
        "shape",
        "items",
        "opener",
        "tried",
        "back",
        "committed",
        "dropped",
        "index",
        "dialect",
        "held",
        "args_done",
        "ws_tail",
        "peeked",
        "kept",
        "prompt",
    )

    def __init__(
        self,
        item: int,
        back: int,
        opener: str,
        shape: int = 0,
        items: tuple = (),
        tried: int = 0,
        peeked: bool = False,
        prompt: str = "",
    ) -> None:
        self.item = item
        self.shape = shape  # which `call` statement is being tried
        self.items = items
        self.opener = opener  # the opener text (a lookahead's too), to try another shape
        self.tried = tried  # how many of the opener's shapes have been tried before this one
        self.back = back  # the mode the opener was found in
        self.committed = False
        self.dropped = False
        self.index = -1
        self.dialect: ArgumentsReader | None = None
        # the part of the opener the prompt wrote: never given back as text
        self.prompt = prompt
        # text read before the name (a lookahead opener is read by the call's next item)
        self.held: list[str] = [opener[len(prompt) :]] if opener and not peeked else []
        self.peeked = opener if peeked else ""  # the lookahead opener that started the call
        self.args_done = False
        # whitespace read since the last marker: markup if another marker of the call
        # follows, given back as text if the call ends there
        self.ws_tail: list[str] = []
        self.kept: list[str] = []  # prose a `skip(keep=true)` read: content once committed


# how a call's item of one kind is read: (engine, call, item, buf, pos, eof) -> the position
Reader = Callable[["Engine", _Call, Any, str, int, bool], int]


def _lit_at(item: Lit, buf: str, pos: int) -> str:
    """The spelling of `item` that `buf` has at `pos` (the longest), or ""."""
    if not item.alternatives:
        return item.text if buf.startswith(item.text, pos) else ""
    found = [t for t in item.texts if buf.startswith(t, pos)]
    return max(found, key=len) if found else ""


class Engine:
    """Incremental parser for one output of one family."""

    _readers: tuple[Reader, ...]  # indexed by item kind; set below the class
    _quick = True  # openers that would only give their text back are passed over (`_scan`)

    def __init__(
        self,
        spec: FamilySpec,
        tools: ToolSchemas,
        *,
        reasoning_open: bool | None = None,
        block_open: bool | None = None,
        unknown_tools: str = "keep",
        call_id: Callable[[int], str] = random_call_id,
    ) -> None:
        if unknown_tools not in ("keep", "drop"):
            raise ValueError(f"unknown_tools must be 'keep' or 'drop', not {unknown_tools!r}")
        self.family = compiled(spec)
        self.tools = tools
        self.unknown_tools = unknown_tools
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
        self._call: _Call | None = None
        # the name of the call being read (set by `_commit`, read by a dialect's schema look-ups)
        self._current_name = ""
        # per stop markers: where the first lies in the text at hand, shared by the calls
        # read one after another from one text (else N calls search N times to its end)
        self._next_stops: dict[tuple[str, ...], NextStop] = {}

    def _open_by_prompt(self, marker: str) -> None:
        """The prompt ended with `marker` (a call opener, a section opener, a message
        header): the output is read as if it followed it, so a longer marker it begins
        (`<|message_model|><|content_text|>`) is still that marker, and a model that writes
        `marker` once more is read the same. It is the prompt's text: never given back."""
        self._state.pending = marker
        self._state.prompt = marker

    # -- the push interface -----------------------------------------------------

    def feed(self, text: str) -> list[Delta]:
        if self.finished:
            raise RuntimeError("feed() after finish()")
        if text:
            self._run(self._state.pending + text, eof=False)
        return self._out.take()

    def finish(self, reason: str = "stop") -> list[Delta]:
        """End of output. The reason decides what was held back: at a normal stop nothing
        was cut, so text that is not a call goes back; at `length` an unfinished opener is
        dropped ("Unfinished output" in docs/policies.md)."""
        if not self.finished:
            self._end(reason)
        return self._out.take()

    def whole(
        self, text: str, reason: str = "stop"
    ) -> tuple[list[str], list[str], dict[int, CallParts]]:
        """The whole output at once: exactly `feed(text)` then `finish(reason)`, its output
        gathered (`DeltaBuffer.gather`) instead of made into deltas no one streams."""
        if self.finished:
            raise RuntimeError("whole() after finish()")
        if text:
            self._run(self._state.pending + text, eof=False)
        self._end(reason)
        return self._out.gather()

    def _end(self, reason: str) -> None:
        self.finished = True
        self._stopped = reason in NORMAL_STOPS
        self._run(self._state.pending, eof=True)
        self._end_of_output()

    # -- the main loop --------------------------------------------------------------

    def _run(self, buf: str, eof: bool) -> None:
        state = self._state
        pos = 0
        while True:
            mode = self.mode
            if mode == CALL:
                call = self._call
                assert call is not None
                item = call.item
                state.waiting = False
                new = self._run_call(buf, pos, eof)
                if state.rewind is not None:  # another shape reads the same text again
                    buf, pos, state.rewind = state.rewind + buf[new:], 0, None
                    continue
                # a safety net: a call that neither read nor moved on waits for more text
                stuck = new == pos and self._call is call and call.item == item
                pos = new
                if state.waiting or stuck:
                    break
            elif mode == HEADER:
                new = self._header(buf, pos, eof)
                if new == pos and self.mode == HEADER:
                    break
                pos = new
            else:
                if pos >= len(buf):
                    break
                new = self._scan(buf, pos, eof)
                if new == pos and self.mode == mode:
                    break
                pos = new
        state.pending = buf[pos:]

    def _scan(self, buf: str, pos: int, eof: bool) -> int:
        family = self.family
        mode = self.mode
        # a call opener on text its call would only give back is passed over: the same
        # result, without making the call (`tables._gives_back`); not at the end of the
        # output, where a section's opener may go back with it, nor before the prompt's
        # marker is read
        quick = self._quick and not eof and not self._state.prompt
        if self._state.routed and mode != SECTION:
            markers = family.routed_markers
        elif mode == CONTENT or mode == REASONING:
            markers = family.quick_content_markers if quick else family.content_markers
        else:
            markers = family.quick_section_markers if quick else family.section_markers
        at, lit = markers.search(buf, pos)
        if at < 0:
            held = markers.held(buf, pos)
            stop = len(buf) - held
            self._text(buf[pos:stop])
            if eof and held:
                if self._held_is_prose(buf, stop):
                    self._text(buf[stop:])
                else:  # `<tool_ca`, `plan</thi`: markup cut off, dropped with the
                    self._state.ws_held.clear()  # whitespace right before it
                return len(buf)
            return stop
        if markers.may_grow(buf, at, lit) and not (eof and self._ends_at(buf, at + len(lit))):
            self._text(buf[pos:at])  # the marker may still be the start of a longer one
            if not eof:
                return at
            self._state.ws_held.clear()  # the output ends inside the longer marker: markup
            return len(buf)
        self._text(buf[pos:at])
        return self._marker(lit, at + len(lit))

    def _ends_at(self, buf: str, end: int) -> bool:
        """Whether a normal stop ends the output right at `end`: then a marker that ends
        there is itself, not the start of a longer one cut short (`[` of `[TOOL_CALLS]`)."""
        return self._stopped and end == len(buf)

    def _held_is_prose(self, buf: str, start: int) -> bool:
        """Whether the tail held back at the end as a possible marker start is text. At a
        normal stop: words (prose ends in words), or one character (`if a <`). At `length`:
        one word (`func` of `functools[`, ` f` of ` functools`: the last word of prose may
        begin a marker); several (`function c` of GigaChat's `function call<|role_sep|>`)
        are that marker cut inside its spelling, dropped as `function call<` is, so that
        the cut reads as the start of the output that goes on. Longer markup cut inside
        its spelling is dropped at either reason."""
        if self._stopped:
            return bool(_WORDS.fullmatch(buf, start)) or len(buf) - start == 1
        return bool(_WORD.fullmatch(buf, start))

    def _text(self, text: str) -> None:
        if not text or self._state.dropping:
            return
        if self._state.section_opener:  # text after it: the opener can no longer go back
            self._state.section_opener = ""  # in order, so it stays markup
        if self.mode == REASONING:
            self._out.text(REASONING, text)
            return
        state = self._state
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
            self._out.text(CONTENT, "".join(state.ws_held))
            state.ws_held.clear()
        self._out.text(CONTENT, body)
        if len(body) < len(text):
            state.ws_held.append(text[len(body) :])

    def _new_call(self, opener: str, back: int, tried: int, prompt: str = "") -> _Call:
        """A call started by `opener`, in the `tried`-th shape that opener starts; `prompt`
        is the part of the opener the prompt wrote."""
        family = self.family
        shape, item = family.openers[opener][tried]
        return _Call(
            item,
            back,
            opener,
            shape,
            family.shapes[shape].call,
            tried,
            opener in family.peek_openers,
            prompt,
        )

    def _boundary(self) -> None:
        """Markup begins: the whitespace right before it is markup too."""
        self._state.ws_held.clear()

    def _marker(self, lit: str, pos: int) -> int:
        family = self.family
        # the first marker begins with the one the prompt ended with, if it did: that part
        # is the prompt's
        prompt, self._state.prompt = self._state.prompt, ""
        if lit in family.ignore and not (
            (self.mode == REASONING and lit in family.reasoning_closes)
            or (self.mode == SECTION and lit in family.section_closes)
        ):
            return pos  # (a marker both ignored and closing the open block closes it there)
        messages = family.messages
        if messages is not None:  # a header or a message's end also closes a section
            if lit in messages.header:
                self._state.header_back = self.mode
                self._state.header_opener = lit[len(prompt) :]
                self.mode = HEADER
                return pos
            if lit == messages.header_end:  # a header without a recipient
                self._route("")
                return pos
            if lit in family.message_ends:
                self._boundary()
                self.mode, self._state.routed, self._state.in_section = CONTENT, False, False
                self._state.dropping = False
                return pos
        if lit in family.openers and (self.mode == SECTION or family.calls_anywhere):
            self._call = self._new_call(lit, self.mode, 0, prompt)
            self.mode = CALL
            if lit in family.peek_openers:
                return pos - len(lit)  # the call's next item reads it
            return pos
        space = "".join(self._state.ws_held)  # (given back with a section holding no call)
        self._boundary()
        if lit in family.section_opens:
            if self.mode != SECTION:
                self._state.section_opener = space + lit[len(prompt) :]
            self.mode = SECTION
            self._state.in_section = True
        elif lit in family.section_closes:
            self.mode = CONTENT
            self._state.in_section = False
            self._state.section_opener = ""
        elif lit in family.reasoning_opens:
            if self.mode == CONTENT:
                self.mode = REASONING
        elif lit in family.reasoning_closes:
            self.mode = CONTENT
        return pos

    # -- messages -------------------------------------------------------------------

    def _header(self, buf: str, pos: int, eof: bool) -> int:
        """After the header opener: a recipient, then the header's end (or first a field
        that begins more header, up to the header's end on the same line); else it was
        text ("x to=5")."""
        messages = self.family.messages
        assert messages is not None and self.family.recipient is not None
        found = self.family.recipient.match(buf, pos)
        end = found.end() if found else pos
        if end - pos > _MAX_RECIPIENT:
            return self._header_is_text(pos)
        if end > pos and buf.startswith(messages.header_end, end):
            self._route(buf[pos:end])
            return end + len(messages.header_end)
        if end > pos and any(buf.startswith(field, end) for field in messages.fields):
            return self._header_fields(buf, pos, end, eof)
        rest = buf[end:]
        if any(marker.startswith(rest) for marker in (messages.header_end, *messages.fields)):
            if not eof:
                return pos  # the recipient or the header's end is still arriving
            if not rest:  # the output ends right after the opener or the recipient
                return self._header_is_text(pos) if self._stopped else self._header_cut(buf)
            if end > pos:
                return self._header_cut(buf)
        return self._header_is_text(pos)

    def _header_fields(self, buf: str, pos: int, end: int, eof: bool) -> int:
        """The recipient `buf[pos:end]` is followed by a field: the header runs to its end
        marker, on the same line and within `_MAX_HEADER`; else the opener was text."""
        header_end = self.family.messages.header_end  # type: ignore[union-attr]
        limit = pos + _MAX_HEADER
        close = buf.find(header_end, end, limit + len(header_end))
        newline = buf.find("\n", end, close if close >= 0 else limit)
        if close >= 0 and newline < 0:
            self._route(buf[pos:end])
            return close + len(header_end)
        if close < 0 and newline < 0 and len(buf) < limit + len(header_end):
            return self._header_cut(buf) if eof else pos  # its end is still arriving
        return self._header_is_text(pos)

    def _header_cut(self, buf: str) -> int:
        """The output ends inside a header: an unfinished opener, dropped."""
        self.mode = self._state.header_back
        self._state.ws_held.clear()
        return len(buf)

    def _header_is_text(self, pos: int) -> int:
        """Prose such as "x to=5": the opener was text, and what follows it is read again."""
        self.mode = self._state.header_back
        self._text(self._state.header_opener)
        return pos

    def _route(self, recipient: str) -> None:
        family = self.family
        assert family.messages is not None
        kind = family.routes.get(recipient, family.messages.default)
        self._boundary()
        self._state.in_section = False
        name = self._recipient_name(recipient)
        self._state.routed = kind != "calls" and not name
        self._state.dropping = kind == "drop" and not name
        self.mode = REASONING if kind == "reasoning" and not name else CONTENT
        if name:
            self._call_by_recipient(name)

    def _recipient_name(self, recipient: str) -> str:
        """The name of the call a message to `recipient` is, when the family has a call
        named by its recipient (`name(recipient=true)`), else "": a requested tool's name,
        or (with `after_last`) the part after the last separator when that is one and no
        `route` names the recipient; with no tools requested, any recipient no `route` names."""
        found = self.family.by_recipient
        if found is None or not recipient:
            return ""
        item = found[1]
        tools = self.tools
        if not tools.has_tools():
            return "" if recipient in self.family.routes else recipient
        if tools.requested(recipient):
            return recipient
        if recipient in self.family.routes:  # a routed recipient is a call by its whole name
            return ""
        if item.after_last and item.after_last in recipient:
            tail = recipient.rsplit(item.after_last, 1)[1]
            if tail and tools.requested(tail):
                return tail
        return ""

    def _call_by_recipient(self, name: str) -> None:
        """The message's body is a call named `name`: its items after the name read it."""
        family = self.family
        assert family.by_recipient is not None
        shape = family.by_recipient[0]
        call = _Call(1, CONTENT, "", shape, family.shapes[shape].call)
        self._call = call
        self.mode = CALL
        self._commit(call, name, None)

    # -- a call ---------------------------------------------------------------------

    def _run_call(self, buf: str, pos: int, eof: bool) -> int:
        """Read the call's items from `pos` on; the position reached.

        Each item kind has its reader (`_READERS`). A reader that read its item moves the
        call to its next item; one that did not (waiting for text, a mismatch, the call
        abandoned or ended) leaves `call.item` where it was, and the loop stops there.
        """
        call = self._call
        assert call is not None
        steps = self.family.steps[call.shape]
        runs = self.family.runs[call.shape]
        readers = self._readers
        count = len(steps)
        while call.item < count:
            index = call.item
            run = runs[index]
            if run is not None:
                found = run.pattern.match(buf, pos)
                if found is not None and len(buf) - found.end() >= run.lookahead:
                    self._read_run(call, found.group())
                    pos = found.end()
                    call.item = run.next
                    continue
            kind, item = steps[index]
            pos = readers[kind](self, call, item, buf, pos, eof)
            if call.item == index or self._call is not call:
                return pos
        self._end_call()
        return pos

    # -- the readers of a call's items: (call, item, buf, pos, eof) -> the position reached

    def _read_literal(self, call: _Call, item: Lit, buf: str, pos: int, eof: bool) -> int:
        if item.alternatives:
            text = _lit_at(item, buf, pos)
        else:
            text = item.text if buf.startswith(item.text, pos) else ""
        if text and item.optional:
            longer = self._opener_longer(buf, pos, text, eof)
            if longer is None:
                return self._wait(pos)  # "```" may still become "```json"
            if longer:
                text = ""  # "```" begins the next call's "```json": not a closer
        if text:
            if not item.peek:  # a lookahead stays for the next item to read
                if not call.committed:
                    call.held.append(text)
                pos += len(text)
            if call.ws_tail:
                call.ws_tail.clear()
            call.item += 1
            return pos
        end = len(buf)
        if end - pos < len(max(item.texts, key=len)) and any(
            t.startswith(buf[pos:]) for t in item.texts
        ):
            if not eof:
                return self._wait(pos)
            if not call.committed:  # cut inside its spelling: markup; else nothing followed
                return (
                    self._unfinished(end) if pos < end else self._opener_alone(call, pos, end, True)
                )
            if pos < end:  # the output ends inside this marker: it is markup
                call.item += 1
                return end
        if item.optional:
            call.item += 1
            return pos
        return self._mismatch(call, buf, pos, eof)

    def _read_whitespace(self, call: _Call, item: Ws, buf: str, pos: int, eof: bool) -> int:
        found = _WS.match(buf, pos).end()  # type: ignore[union-attr]
        if found > pos:
            space = buf[pos:found]
            if call.committed:
                call.ws_tail.append(space)
            else:
                call.held.append(space)
            pos = found
        if pos == len(buf) and not eof:
            return self._wait(pos)
        call.item += 1
        return pos

    def _read_skip(self, call: _Call, item: Skip, buf: str, pos: int, eof: bool) -> int:
        skip_markers = self.family.skip_markers[call.shape, call.item]
        # a skip ends within this, or is none: read no further (repeated openers stay linear)
        reach = min(len(buf), pos + item.max_len + max(map(len, item.until)) + 1)
        at, until = skip_markers.search(buf, pos, reach)
        if self._marker_before(buf, pos, at, until, item):  # the skipped text was not a header
            return self._mismatch(call, buf, pos, eof)
        if at >= 0 and self._may_be_marker(buf, at):
            if not eof:
                return self._wait(pos)  # `[` may be the start of `[TOOL_CALLS]`
            if len(buf) - at > len(until):  # `[TOOL_CA` cut at the end: markup that would
                return self._mismatch(call, buf, pos, eof)  # end the call there, whole
        end = at if at >= 0 else reach
        if at < 0 and reach == len(buf):  # a tail that may begin the `until` is not prose
            end -= skip_markers.held(buf, pos)  # yet: read whole, it is the `until` itself
        if not item.keep and not call.committed and _PROSE.search(buf, pos, end):
            return self._abandon(call, pos)  # words, not a header: the text goes back now
        if at >= 0 and at - pos <= item.max_len:
            self._read(call, buf[pos:at])
            if item.keep:
                self._keep(call, buf[pos:at])
            call.item += 1
            return at
        if at >= 0 or len(buf) - pos > item.max_len + max(map(len, item.until)):
            return self._mismatch(call, buf, pos, eof)
        if eof:
            if call.committed:
                return self._mismatch(call, buf, pos, eof)
            if item.keep:  # prose that reached no `until`: no call
                return self._abandon(call, pos)
            cut = skip_markers.held(buf, pos)
            if cut > 1 or (cut and not self._stopped):  # `NAME<|content_inv`: markup cut short
                return self._unfinished(len(buf))
            return self._opener_alone(call, pos, len(buf))
        return self._wait(pos)

    def _marker_before(self, buf: str, pos: int, at: int, until: str, item: Skip) -> bool:
        """Whether another marker of the family starts before the `until` found at `at`
        (-1: none yet), or there, beginning with it (`[` of `[TOOL_CALLS]`). The search
        goes no further than the skip may reach: repeated openers stay linear."""
        markers = self.family.content_markers
        reach = (at if at >= 0 else pos + item.max_len) + markers.max_prefix + 1
        other, lit = markers.search(buf, pos, min(len(buf), reach))
        if other < 0:
            return False
        return at < 0 or other < at or (other == at and lit != until and lit.startswith(until))

    def _may_be_marker(self, buf: str, at: int) -> bool:
        """Whether the text from the `until` found at `at` to the end may still grow into a
        marker of the family (`[TOOL_CA`): the skip cannot end there yet."""
        return self.family.content_markers.held(buf, at) == len(buf) - at

    def _keep(self, call: _Call, text: str) -> None:
        """Prose read by a `skip(keep=true)`: held until the call is known (it goes back with
        the opener if there is no call), content at once inside a known call."""
        if call.committed:
            self._text(text)
        elif text:
            call.kept.append(text)

    def _read_name(self, call: _Call, item: Name, buf: str, pos: int, eof: bool) -> int:
        if item.fixed:  # the opener names the call: nothing to read
            call.item += 1
            self._commit(call, item.fixed, None)
            return pos
        markers = self.family.name_markers[call.shape, call.item]
        reach = item.max_len + max(map(len, item.until))  # a name ends within this, or is none
        # search no further than that: a whole output of openers with no name end stays linear
        at, _ = markers.search(buf, pos, min(len(buf), pos + 2 * reach))
        if at < 0:
            if len(buf) - pos > reach:
                return self._abandon(call, pos)
            if item.requested and not self._may_be_requested(buf, pos, markers):
                return self._abandon(call, pos)  # prose: no requested tool is named so
            if eof:
                return self._name_at_end(call, item, buf, pos)
            if self._never_a_name(item, buf, pos, markers.held(buf, pos)):
                return self._abandon(call, pos)  # (the next shape may read it as it streams)
            return self._wait(pos)  # the end of the name is not here yet
        raw = buf[pos:at].strip()
        name, header_id = name_of(item, raw)
        if item.doubled:
            name = self._undoubled(name, item.doubled)
        if not name or (item.requested and not self.tools.requested(name)):
            return self._abandon(call, pos)
        self._read(call, buf[pos:at])
        call.item += 1
        self._commit(call, name, header_id)
        return at

    def _may_be_requested(self, buf: str, pos: int, ends: Markers) -> bool:
        """Whether the name text read so far (a marker may be cut at its end) may still
        grow into the name of a requested tool."""
        text = buf[pos : len(buf) - ends.held(buf, pos)].strip()
        return self.tools.may_be_requested(text)

    @staticmethod
    def _never_a_name(item: Name, buf: str, pos: int, cut: int) -> bool:
        """Whether the name read so far (up to a marker cut at its end) already holds what no
        name holds (`{` of a JSON body): the call is abandoned now, as it would be once its
        marker arrives. Only for names with no pattern: a pattern decides on the whole."""
        return item.pattern is None and bool(BAD_NAME.search(buf[pos : len(buf) - cut].strip()))

    def _name_at_end(self, call: _Call, item: Name, buf: str, pos: int) -> int:
        """The output ends inside a call's name (no marker after it yet).

        Text that cannot start a name ("[TOOL_CALLS] not json at all") was not a call. At a
        normal stop a whole name is a call with `{}` where nothing but its arguments may
        follow it (`[TOOL_CALLS]ping`), and other text goes back; at `length`, and with a
        marker cut inside its spelling after the name (`ping\n</tool_ca`), it is an
        unfinished opener, dropped.
        """
        cut = self.family.name_markers[call.shape, call.item].held(buf, pos)
        raw = buf[pos : len(buf) - cut].strip()
        if item.requested and not self.tools.may_be_requested(raw):
            return self._no_name(call, pos)  # prose: no requested tool is named so
        if never_a_name(item, raw) and (
            self._stopped or never_a_name(item, self._finished_part(item, raw))
        ):
            return self._no_name(call, pos)
        if not self._stopped:
            return self._unfinished(len(buf))
        name, header_id = name_of(item, raw)
        if name and _BARE_NAME.fullmatch(name) and (call.shape, call.item) in self.family.bare:
            if item.doubled:
                name = self._undoubled(name, item.doubled)
            self._read(call, buf[pos:])
            call.item += 1
            self._commit(call, name, header_id)
            self._end_call()
            return len(buf)
        if cut:
            return self._unfinished(len(buf))
        return self._abandon(call, pos)

    def _finished_part(self, item: Name, raw: str) -> str:
        """The header cut at `length` without its last word, which may be unfinished
        (`t j` of Harmony's `t json`, `[CALL_ID]` before Mistral's id): with a pattern, a
        header that fits either way may be a name. A last word that may begin a marker goes
        too: were it that marker, the header before it would be as unfinished."""
        last = _LAST_TOKEN.search(raw) if item.pattern is not None else None
        return raw if last is None else raw[: last.start()].rstrip()

    def _no_name(self, call: _Call, pos: int) -> int:
        """The output ends in text that no name holds: the opener goes back as it would
        have had more text followed, whatever the finish reason. A section opener before it
        stays markup then (text after it), so a normal stop reads as a `length` cut does,
        not with the section opener given back in front of the text."""
        self._state.section_opener = ""
        return self._abandon(call, pos)

    def _undoubled(self, name: str, separator: str) -> str:
        """`get_weather.get_weather` is `get_weather` when only the short name is a
        requested tool (a `name(doubled=…)` item): a name that is a requested tool itself,
        halves that differ or no requested tools at all leave it as written."""
        if not self.tools.has_tools() or self.tools.known(name):
            return name
        head, found, tail = name.partition(separator)
        if found and head == tail and self.tools.known(head):
            return head
        return name

    def _read_dialect(self, call: _Call, item: Dialect, buf: str, pos: int, eof: bool) -> int:
        """Give the text at `pos` to the call's dialect (made on first use); at the end of
        the output, close it. Waits while the dialect has not read its whole value."""
        dialect = call.dialect
        if dialect is None:
            dialect = call.dialect = self._dialect(call, item)
        new = dialect.read(buf, pos, eof)
        if new > pos:
            if call.ws_tail:
                call.ws_tail.clear()
            if not call.committed:
                call.held.append(buf[pos:new])
        if not dialect.done:
            if not eof:
                return self._wait(new)
            dialect.close()
        call.args_done = True
        call.item += 1
        return new

    def _read_naming_dialect(
        self, call: _Call, item: Dialect, buf: str, pos: int, eof: bool
    ) -> int:
        """A dialect that finds the call's name itself: ended before a name, it was no call
        (the call read so far is dropped with it)."""
        new = self._read_dialect(call, item, buf, pos, eof)
        if call.committed or self._state.waiting:
            return new
        dialect = call.dialect
        assert dialect is not None
        if dialect.failed:  # type: ignore[union-attr]
            if new >= len(buf) and eof and not dialect.malformed:  # type: ignore[union-attr]
                return self._opener_alone(call, new, len(buf))  # the output ended inside the opener
            return self._abandon(call, new)  # not a call: its text goes back
        if call.peeked:
            return self._abandon(call, new)  # a lookahead `[]` that held no call: text
        if call.kept:  # prose, then a list that held no call: all of it goes back, as
            return self._abandon(call, new)  # with any other list that holds none
        return new

    @staticmethod
    def _read_run(call: _Call, text: str) -> None:
        """Account for a run's text as its items would: held before the name; after it,
        the whitespace after the run's last literal (or all of it, when it took none)
        waits to be markup or text."""
        if not text:
            return
        if not call.committed:
            call.held.append(text)
            return
        marks = text.rstrip()  # a literal ends in no whitespace
        if marks:
            call.ws_tail.clear()
            if len(marks) < len(text):
                call.ws_tail.append(text[len(marks) :])
        else:
            call.ws_tail.append(text)

    def _opener_longer(self, buf: str, pos: int, text: str, eof: bool) -> bool | None:
        """Whether a call opener longer than `text` starts at `pos` (None: not known yet)."""
        rest = buf[pos:]
        for opener in self.family.openers:
            if len(opener) > len(text) and opener.startswith(text):
                if rest.startswith(opener):
                    return True
                if not eof and opener.startswith(rest):
                    return None
        return False

    def _wait(self, pos: int) -> int:
        self._state.waiting = True
        return pos

    def _read(self, call: _Call, text: str) -> None:
        if not call.committed and text:
            call.held.append(text)

    def _dialect(self, call: _Call, item: Dialect) -> ArgumentsReader:
        stops = self.family.stops[call.shape, call.item]
        return DIALECTS[type(item)].reader(item, stops, self)

    # -- the sink of a call's dialect (`protocol.Sink`) -------------------------------

    def commit_call(self, name: str, call_id: str | None = None) -> None:
        """A dialect has read the name of the call being read (or, in a list of calls, of
        its next one). The dialect holds this, not the call: a reader that held its call
        would make a reference cycle of every call, left for the garbage collector."""
        call = self._call
        assert call is not None
        self._commit(call, name, call_id)

    def emit_args(self, text: str) -> None:
        call = self._call
        if call is not None and not call.dropped and text:
            self._out.args(call.index, text)

    def schema_of(self, key: str) -> dict | None:
        return self.tools.param_schema(self._current_name, key)

    def typed_keys(self) -> frozenset[str]:
        return self.tools.typed_keys(self._current_name)

    def unwraps(self, key: str) -> bool:
        return key in WRAPPER_KEYS and self.tools.lacks_property(self._current_name, key)

    def next_stop(self, stops: tuple[str, ...]) -> NextStop:
        found = self._next_stops.get(stops)
        if found is None:
            found = self._next_stops[stops] = NextStop(markers(stops))
        return found

    def _commit(self, call: _Call, name: str, header_id: str | None) -> None:
        """The name is known: the call is real from here on."""
        call.committed = True
        call.held = []
        if call.kept:  # prose between the opener and the call (with the space before it)
            self._text("".join(call.kept))
            call.kept = []
        self._state.section_opener = ""
        call.dropped = False  # an array's next element is a call of its own
        self._boundary()
        if self.unknown_tools == "drop" and not self.tools.known(name):
            call.dropped = True
            return
        call.index = self.calls_emitted
        self.calls_emitted += 1
        self._current_name = name
        self._out.call(call.index, header_id or self.call_id(call.index), name)

    def _mismatch(self, call: _Call, buf: str, pos: int, eof: bool) -> int:
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
            return pos + best_at
        if len(buf) - pos < _MAX_JUNK and not any(0 <= window.find(e) for e in ends):
            if not eof:
                return self._wait(pos)  # the next literal may still arrive
            if not self._stopped:  # cut short before it: had the output gone on, the
                self._end_call()  # literal could have come, and this text was the call's
                return len(buf)
        self._end_call()
        return pos

    def _abandon(self, call: _Call, pos: int) -> int:
        """Not a call after all: the opener's next shape is tried on the same text, or the
        text goes back to where it came from."""
        if call.tried + 1 < len(self.family.openers[call.opener]):
            past = call.held[1:] if not call.peeked else call.held  # the text after the opener
            self._call = self._new_call(call.opener, call.back, call.tried + 1, call.prompt)
            self._state.rewind = "".join(past)
            return pos
        self._call = None
        self.mode = call.back
        if self._stopped and call.back == SECTION:
            self._section_back()
        held = "".join(call.held)
        if not held and call.peeked:  # nothing read past a lookahead opener: it is text
            self._text(call.peeked)
            return pos + len(call.peeked)
        self._text(held)
        return pos

    def _opener_alone(self, call: _Call, pos: int, end: int, markup_only: bool = False) -> int:
        """The output ends after a call's opener, before its name, and no marker is cut
        there: at a normal stop the text was no call and goes back, unless it is only
        markup left after the calls (llama3's `; ` separator); else it is dropped."""
        if self._stopped and not (markup_only and self.calls_emitted):
            return self._abandon(call, pos)
        return self._unfinished(end)

    def _section_back(self) -> None:
        """At a normal stop, a section that holds no call was text: its opener goes back."""
        opener, self._state.section_opener = self._state.section_opener, ""
        self._text(opener)

    def _unfinished(self, end: int) -> int:
        """End of output inside a call opener: drop it, keep the text before it.

        Prose a `skip(keep=true)` read after the opener belongs to the opener until the
        call is known (with no call it goes back with it, at a normal stop): at a normal
        stop, before a marker cut inside its spelling, it stays content; at `length` it
        goes with the opener, so that the stop only adds to what the cut reads
        (`[TOOL_CALLS]j[{` is nothing at `length`, all of it at a normal stop)."""
        call = self._call
        assert call is not None and not call.committed
        self._call = None
        self.mode = call.back
        if call.kept and self._stopped:
            self._text("".join(call.kept))
        self._state.ws_held.clear()
        return end

    def _end_call(self) -> None:
        call = self._call
        assert call is not None
        if call.committed and not call.args_done:
            self._close_args(call)
        self._call = None
        self.mode = SECTION if self._state.in_section else CONTENT
        if not call.committed:  # a complete call structure with no call in it (`[]`) is markup
            self._boundary()
        if call.ws_tail:
            self._text("".join(call.ws_tail))

    def _close_args(self, call: _Call) -> None:
        call.args_done = True
        if call.dialect is None:
            self.emit_args("{}")
        else:
            call.dialect.close()

    def _end_of_output(self) -> None:
        call = self._call
        if call is not None:
            if call.committed:
                self._end_call()
            else:
                self._call = None
        if self._stopped and self.mode == SECTION:
            self._section_back()
        self._state.ws_held.clear()  # trailing whitespace of the content


# the reader of each kind of call item, indexed by the kinds `CompiledFamily.steps` holds
Engine._readers = tuple(
    reader
    for _, reader in sorted(
        {
            LIT: Engine._read_literal,
            WS: Engine._read_whitespace,
            SKIP: Engine._read_skip,
            NAME: Engine._read_name,
            DIALECT: Engine._read_dialect,
            NAMING_DIALECT: Engine._read_naming_dialect,
        }.items()
    )
)
