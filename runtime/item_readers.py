"""The readers of a call's markup items (mixed into `Engine`): literals, whitespace, the
argument dialect, and runs of literals and whitespace read in one match (`tables._Run`).

Each is `(call, item, buf, pos, eof) -> the position reached`, and sets the engine's
`_outcome` to what it decided (`outcomes.py`): a read moves `call.item` on.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

from .call_outcome import MALFORMED, PARTIAL, WHOLE
from . import shortcuts
from .call_record import CallRecord
from .outcomes import ABSENT, READ, WAIT
from .spec import Dialect, Lit, Ws
from .traits import trait  # (a mixin of the compiled Engine: docs/compiled.md)

if TYPE_CHECKING:
    from .engine import Engine

_WS = re.compile(r"\s*")


def _lit_at(item: Lit, buf: str, pos: int) -> str:
    """The spelling of `item` that `buf` has at `pos` (the longest), or ""."""
    if not item.alternatives:
        return item.text if buf.startswith(item.text, pos) else ""
    texts = item.texts
    if shortcuts.ON:  # one test for every spelling, then the longest first: the first found
        if not buf.startswith(texts, pos):
            return ""
        for text in _longest_first(texts):
            if buf.startswith(text, pos):
                return text
    best = ""
    for text in texts:
        if len(text) > len(best) and buf.startswith(text, pos):
            best = text
    return best


def _longer_openers(openers: Iterable[str], text: str) -> tuple[tuple[str, ...], int]:
    """The call openers longer than `text` that begin with it, in the family's order, and
    how much text tells whether one is at a place (the longest of them, and one more)."""
    longer = tuple(o for o in openers if len(o) > len(text) and o.startswith(text))
    return longer, max(map(len, longer), default=0) + 1


@lru_cache(maxsize=256)
def _longest_first(texts: tuple[str, ...]) -> tuple[str, ...]:
    """A literal's spellings, the longest first (two that both begin at a place and are as
    long are the same text)."""
    return tuple(sorted(texts, key=len, reverse=True))


@trait
class ItemReaders:
    """The literal, whitespace and dialect readers of the engine (`Engine._run_call`
    calls each by its item's kind)."""

    _hot: tuple[CallRecord, int] | None  # (the engine's: declared for mypyc's traits)
    _longer_openers: dict[str, tuple[tuple[str, ...], int]]

    def _read_literal(
        self: Engine, call: CallRecord, item: Lit, buf: str, pos: int, eof: bool
    ) -> int:
        if item.alternatives:
            text = _lit_at(item, buf, pos)
        else:
            text = item.text if buf.startswith(item.text, pos) else ""
        if text and item.optional:
            known = self._longer_openers.get(text)  # (no longer opener: no need to look)
            longer = (
                self._opener_longer(buf, pos, text, eof) if known is None or known[0] else False
            )
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
            self._outcome = READ
            return pos
        end = len(buf)
        if not item.alternatives:  # (one spelling: the test below, without its generator)
            cut = end - pos < len(item.text) and item.text.startswith(buf[pos:])
        else:
            texts = item.texts
            cut = end - pos < max(map(len, texts)) and any(t.startswith(buf[pos:]) for t in texts)
        if cut:  # the text ends inside a spelling of it
            if not eof:
                return self._wait(pos)
            if not call.committed:  # cut inside its spelling: markup; else nothing followed
                return (
                    self._unfinished(end) if pos < end else self._opener_alone(call, pos, end, True)
                )
            if pos < end:  # the output ends inside this marker: it is markup
                call.item += 1
                self._outcome = READ
                return end
        if item.optional:
            call.item += 1
            self._outcome = ABSENT
            return pos
        return self._mismatch(call, buf, pos, eof)

    def _opener_longer(self: Engine, buf: str, pos: int, text: str, eof: bool) -> bool | None:
        """Whether a call opener longer than `text` starts at `pos` (None: not known yet)."""
        found = self._longer_openers.get(text)
        if found is None:  # (asked at every optional literal read: worked out once)
            found = self._longer_openers[text] = _longer_openers(self.family.openers, text)
        longer, reach = found
        # (as long as the longest of them and one more: not a copy of the rest of the output)
        rest = buf[pos : pos + reach]
        for opener in longer:
            if rest.startswith(opener):
                return True
            if not eof and opener.startswith(rest):
                return None
        return False

    def _read_whitespace(
        self: Engine, call: CallRecord, item: Ws, buf: str, pos: int, eof: bool
    ) -> int:
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
        self._outcome = READ
        return pos

    def _read_dialect(
        self: Engine, call: CallRecord, item: Dialect, buf: str, pos: int, eof: bool
    ) -> int:
        """Give the text at `pos` to the call's dialect (made on first use); at the end of
        the output, close it. Waits while the dialect has not read its whole value."""
        dialect = call.dialect
        if dialect is None:
            dialect = call.dialect = self._dialect(call, item)
        cut = False  # the end of the output ended the arguments (`call_outcome.py`)
        if eof and self._holds_calls:
            new = dialect.read(buf, pos, False)  # what it reads whole, as a stream would
            if not dialect.done:
                cut = True
                new = dialect.read(buf, new, True)
        else:
            new = dialect.read(buf, pos, eof)
        if new > pos:
            if call.ws_tail:
                call.ws_tail.clear()
            if not call.committed:
                call.held.append(buf[pos:new])
        if not dialect.done:
            if not eof:
                self._outcome = WAIT  # (`_wait`, on every delta of a call's arguments)
                if (
                    call.committed
                    and call.raw is None
                    and call.hold is None
                    and shortcuts.ON
                    and self._log is None
                ):  # the next delta may go straight here (`Engine.feed`), untraced
                    self._hot = call, call.item
                return new
            cut = True
            dialect.close()
        return self._dialect_ended(call, buf, new, cut)

    def _dialect_ended(self: Engine, call: CallRecord, buf: str, new: int, cut: bool) -> int:
        """The call's dialect read its whole value (or the end of the output cut it,
        `cut`), up to `new`: the call goes on with its next item."""
        call.args_done = True
        if call.hold is not None:  # held until its arguments end (`call_outcome.py`)
            self._raw_sync(call, new)
            # arguments known malformed stay so when the end of the output also cuts the
            # skip past them (a call with no closer of its own: GigaChat 3)
            self._settle(call, MALFORMED if call.malformed else PARTIAL if cut else WHOLE)
        call.item += 1
        self._outcome = READ
        return new

    def _read_naming_dialect(
        self: Engine, call: CallRecord, item: Dialect, buf: str, pos: int, eof: bool
    ) -> int:
        """A dialect that finds the call's name itself: ended before a name, it was no call
        (the call read so far is dropped with it)."""
        new = self._read_dialect(call, item, buf, pos, eof)
        if call.committed or self._outcome == WAIT:
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
    def _read_run(call: CallRecord, text: str) -> None:
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

    def _read(self: Engine, call: CallRecord, text: str) -> None:
        if not call.committed and text:
            call.held.append(text)
