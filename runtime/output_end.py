"""What the end of the output decides: the part of the engine (`Engine`, a mixin) that
runs when the output ends inside something still undecided.

The finish reason decides ("Unfinished output" in docs/policies.md): at a normal stop
(`NORMAL_STOPS`) nothing was cut, so text that is no call goes back and a lone name is a
call with `{}`; at `length` an unfinished opener is dropped, so that the cut reads as the
start of an output that goes on.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .call_record import CallRecord
from .modes import SECTION
from .outcomes import END_OF_OUTPUT, NO_CALL, UNFINISHED
from .spec import Name, name_of, never_a_name
from .traits import trait  # (a mixin of the compiled Engine: docs/compiled.md)

if TYPE_CHECKING:
    from .engine import Engine

# letters and digits, spaces between (and before: a space-led marker's prefix ` f`)
_WORDS = re.compile(r"\s*[^\W_]+(?:\s+[^\W_]+)*")
_WORD = re.compile(r"\s*[^\W_]+")
# a name a call may be made of at a normal stop with nothing after it (`7` is prose)
_BARE_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_LAST_TOKEN = re.compile(r"\S+\Z")
# the finish reasons of an output the model ended itself: nothing in it was cut
NORMAL_STOPS = frozenset({"stop", "tool_calls"})


@trait
class OutputEnd:
    """The engine's decisions at the end of the output (mixed into `Engine`)."""

    _call: CallRecord | None  # (the engine's: declared for mypyc's traits)

    def _end_of_output(self: Engine) -> None:
        call = self._call
        if call is not None:
            if call.committed:  # (its text reaches the end of the output)
                self._end_call(-1 if self._raw_buf is None else len(self._raw_buf))
            else:
                self._call = None
                self._outcome = NO_CALL
        if self._stopped and self.mode == SECTION:
            self._section_back()
        self._state.ws_held.clear()  # trailing whitespace of the content
        if call is not None and self._log is not None:
            self._log(END_OF_OUTPUT, call, self._outcome)

    def _section_back(self: Engine) -> None:
        """At a normal stop, a section that holds no call was text: its opener goes back."""
        opener, self._state.section_opener = self._state.section_opener, ""
        self._text(opener)

    def _unfinished(self: Engine, end: int) -> int:
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
        self._outcome = UNFINISHED
        return end

    def _opener_alone(
        self: Engine, call: CallRecord, pos: int, end: int, markup_only: bool = False
    ) -> int:
        """The output ends after a call's opener, before its name, and no marker is cut
        there: at a normal stop the text was no call and goes back, unless it is only
        markup left after the calls (llama3's `; ` separator); else it is dropped."""
        if self._stopped and not (markup_only and self.calls_emitted):
            return self._abandon(call, pos)
        return self._unfinished(end)

    def _name_at_end(self: Engine, call: CallRecord, item: Name, buf: str, pos: int) -> int:
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
            self._end_call(len(buf))
            return len(buf)
        if cut:
            return self._unfinished(len(buf))
        return self._abandon(call, pos)

    def _finished_part(self: Engine, item: Name, raw: str) -> str:
        """The header cut at `length` without its last word, which may be unfinished
        (`t j` of Harmony's `t json`, `[CALL_ID]` before Mistral's id): with a pattern, a
        header that fits either way may be a name. A last word that may begin a marker goes
        too: were it that marker, the header before it would be as unfinished."""
        last = _LAST_TOKEN.search(raw) if item.pattern is not None else None
        return raw if last is None else raw[: last.start()].rstrip()

    def _no_name(self: Engine, call: CallRecord, pos: int) -> int:
        """The output ends in text that no name holds: the opener goes back as it would
        have had more text followed, whatever the finish reason. A section opener before it
        stays markup then (text after it), so a normal stop reads as a `length` cut does,
        not with the section opener given back in front of the text."""
        self._state.section_opener = ""
        return self._abandon(call, pos)

    def _held_is_prose(self: Engine, buf: str, start: int) -> bool:
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

    def _ends_at(self: Engine, buf: str, end: int) -> bool:
        """Whether a normal stop ends the output right at `end`: then a marker that ends
        there is itself, not the start of a longer one cut short (`[` of `[TOOL_CALLS]`)."""
        return self._stopped and end == len(buf)
