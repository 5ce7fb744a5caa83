"""What becomes of a call once its name is known: the part of the engine (`Engine`, a mixin)
that applies the `unknown_tools`, `partial_calls` and `malformed_calls` switches
(docs/policies.md, "Unknown tools" and "Partial and malformed calls").

A call is sent as it is read (the default), dropped, or given back as content: its text, as
the model wrote it, from its opener on. The name decides an unknown tool at once, so such a
call holds nothing back: its text so far goes to content when the name is read, the rest as
it is read. Whether arguments are whole or malformed is known only when they end, so with
either of the other switches set away from "keep" a call is held (its header and arguments
kept here, unsent) until its arguments end, then sent, dropped or given back: that hold is
the promptness those values cost. The text a call may be given back as is the text the
engine's readers consumed for it, recorded at the points where the engine stops reading
(`_raw_sync`), so it is the same whether the output came whole or in pieces.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .call_record import CallRecord
from .dialects import DIALECTS
from .tables import NAMING_DIALECT
from .traits import trait  # (a mixin of the compiled Engine: docs/compiled.md)

if TYPE_CHECKING:
    from .engine import Engine

WHOLE, PARTIAL, MALFORMED = "whole", "partial", "malformed"


@trait
class CallOutcome:
    """The engine's decisions on a call after its name (mixed into `Engine`)."""

    # the engine reads what the end of the output decides (`Engine._end` sets it)
    _at_end = False

    def _raw_sync(self: Engine, call: CallRecord, end: int) -> None:
        """The call's readers have consumed the text up to `end` of the text at hand: it is
        the call's (sent to content now, for a call given back as text)."""
        raw = call.raw
        if raw is None or self._raw_buf is None:
            return
        start = self._raw_from
        if end > start:
            piece = self._raw_buf[start:end]
            self._raw_from = end
            if call.texted:
                self._give_text(piece)
            else:
                raw.append(piece)

    def _lists_calls(self: Engine, call: CallRecord) -> bool:
        """Whether the call's shape reads a list of calls (a dialect that names them): one
        call's text is not its own to give back there, so "text" drops it instead, unless the
        output ends in the list's first call (the list's text is then that call's)."""
        return any(
            kind == NAMING_DIALECT and DIALECTS[type(item)].lists_calls
            for kind, item in self.family.steps[call.shape]
        )

    def _on_name(self: Engine, call: CallRecord, name: str, header_id: str | None) -> bool:
        """The name is read: whether the call is sent from here on. Otherwise it is dropped,
        given back as text, or held until its arguments end (`_settle`)."""
        policies = self.policies
        if call.hold is not None:  # a list's earlier call, held: whole, since another follows
            self._settle(call, MALFORMED if call.malformed else WHOLE)
            call.dropped = False  # (that call's verdict: this one is a call of its own)
        call.malformed = False
        if policies.unknown_tools != "keep" and not self.tools.known(name):
            if policies.unknown_tools == "text" and not self._lists_calls(call):
                self._give_back(call)
            else:
                self._state.section_texted = False
                self._kept_prose(call)
                self._boundary()
            call.dropped = True
            call.sent = True
            return False
        if self._holds_calls:
            call.ws_before = "".join(self._state.ws_held)
            self._boundary()
            call.hold = (header_id or call.read_id or None, name, [])
            self._current_name = name
            return False
        self._state.section_texted = False
        return True

    def _lacks_required(self: Engine, name: str, arguments: str) -> bool:
        """Whether whole `arguments` (JSON text) lack a property tool `name` requires
        (`required_params="check"`)."""
        required = self.tools.required(name)
        if not required:
            return False
        try:
            read = json.loads(arguments or "{}")
        except ValueError:
            return False  # not JSON: malformed already, or the dialect's own text
        return isinstance(read, dict) and any(key not in read for key in required)

    def _give_back(self: Engine, call: CallRecord) -> None:
        """The call is text after all: what was read of it goes to content, the rest of it
        as it is read."""
        call.texted = True
        call.dropped = True
        call.hold = None
        state = self._state
        if call.section_back:  # the first call of its section: the section's opener with it
            state.section_texted = True
            state.ws_held.clear()  # (the whitespace after the opener is in section_back)
            self._give_text(call.section_back + "".join(call.raw or ()))
        else:
            if call.ws_before:
                state.ws_held[:] = [call.ws_before]
            self._give_text("".join(call.raw or ()))
        call.raw = []

    def _give_text(self: Engine, text: str) -> None:
        """Send a call's text given back as content. Where it runs to the end of the output,
        a tail that may begin a marker is what it is at the end of any content: markup cut
        inside its spelling (`<|` of `<|function_call|>`), dropped with the whitespace
        before it, or prose (one character at a normal stop): the readers took it as the
        call's markup at the end, but given back it is content, and ends as content does
        (docs/policies.md, "Unfinished output")."""
        buf = self._raw_buf
        cut = 0
        if self._at_end and buf is not None and self._raw_from == len(buf):
            family = self.family  # (the markers of where the text goes back to: after a
            # call in content, a section's closer left after the calls is markup there too)
            if self._state.in_section:
                markers = family.section_markers
            else:
                markers = family.after_calls_markers or family.content_markers
            cut = min(len(text), markers.held(buf, 0))
        if not cut:
            self._text(text)
            return
        self._text(text[:-cut])
        if self._held_is_prose(text, len(text) - cut):
            self._text(text[-cut:])
        else:
            self._state.ws_held.clear()

    def _kept_prose(self: Engine, call: CallRecord) -> None:
        """Prose a `skip(keep=true)` read between the opener and the call: content."""
        if call.kept:
            if self.policies.text_after_calls != "drop":  # after the opener: not content then
                self._text("".join(call.kept))
            call.kept = []

    def malformed_args(self: Engine) -> None:
        """A dialect found that the current call's arguments never form an object."""
        if self._call is not None:
            self._call.malformed = True

    def _settle(self: Engine, call: CallRecord, verdict: str) -> None:
        """A held call's arguments have ended: sent whole, or as its switch says."""
        hold = call.hold
        if hold is None:
            return
        call.hold = None
        if verdict == WHOLE and self.policies.required_params == "check":
            if self._lacks_required(hold[1], "".join(hold[2])):
                verdict = MALFORMED
        if verdict == WHOLE:
            choice = "keep"
        elif verdict == PARTIAL:
            choice = self.policies.partial_calls
        else:
            choice = self.policies.malformed_calls
        if choice == "text" and (
            not self._lists_calls(call) or (verdict == PARTIAL and not call.sent)
        ):  # a list cut in its first call is all that call's text: it goes back whole
            self._give_back(call)
            return
        self._state.section_texted = False  # a call of the section is not text: it is markup
        self._kept_prose(call)
        call.sent = True
        if choice != "keep":
            call.dropped = True
            return
        call_id, name, pieces = hold
        index = call.index = self.calls_emitted
        self.calls_emitted += 1
        self._out.call(index, call_id or self.call_id(index), name)
        if pieces:
            self._out.args(index, "".join(pieces))
