"""The readers of a call's head (mixed into `Engine`): its name, and the markup of no
fixed spelling a `skip` reads before it (Inkling's `<|message_model|>NAME<|content_…|>`).

Both end at one of their item's `until` markers, within the item's `max_len`: the search
never reads further, so an output of openers with no end stays linear. Before the name,
text that cannot be one (prose, a JSON body) abandons the call at once: its text goes back.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .call_record import CallRecord
from .first_chars import may_begin
from .markers import Markers
from . import shortcuts
from .outcomes import ABANDON, READ, WAIT
from .spec import BAD_NAME, Name, Skip, name_of
from .traits import trait  # (a mixin of the compiled Engine: docs/compiled.md)

if TYPE_CHECKING:
    from .engine import Engine

# words with whitespace between: prose, which no skipped header holds
_MAX_NAMES = 256  # header texts a parser remembers the name of (`_read_name`)
_PROSE = re.compile(r"\S\s+\S")


@trait
class HeadReaders:
    """The name and skip readers of the engine (`Engine._run_call` calls each by its
    item's kind)."""

    _call: CallRecord | None  # (the engine's: declared for mypyc's traits)
    _hot: tuple[CallRecord, int] | None
    # per name item and header text read: its name and id (`name_of`), bounded
    _names: dict[tuple[int, int, str], tuple[str, str | None]]

    def _read_skip(
        self: Engine, call: CallRecord, item: Skip, buf: str, pos: int, eof: bool
    ) -> int:
        empty = self.family.empty_skips.get((call.shape, call.item))
        if empty is not None and buf.startswith(empty, pos):
            # an `until` right here: the skip reads nothing, as the search below would
            # decide (no marker of the content search begins with it, so none is found
            # before it or may grow from it)
            if item.id:
                call.read_id = ""
            call.item += 1
            self._outcome = READ
            return pos
        if not eof:  # a part of its `until` that the search below would wait at, alone
            waits = self.family.skip_waits.get((call.shape, call.item))  # (`tables`)
            if waits is not None and len(buf) - pos <= waits[0] and buf[pos:] in waits[1]:
                self._outcome = WAIT
                return pos
        skip_markers = self.family.skip_markers[call.shape, call.item]
        # a skip ends within this, or is none: read no further (repeated openers stay linear)
        reach = min(len(buf), pos + item.max_len + max(map(len, item.until)) + 1)
        if item.block and not call.committed:
            decided = self._in_block(call, item, buf, pos, reach, eof)
            if decided is not None:
                return decided
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
        if not (item.keep or item.block or call.committed) and _PROSE.search(buf, pos, end):
            return self._abandon(call, pos)  # words, not a header: the text goes back now
        if at >= 0 and at - pos <= item.max_len:
            self._read(call, buf[pos:at])
            if item.keep:
                self._keep(call, buf[pos:at])
            elif item.id:
                call.read_id = buf[pos:at].strip()
            call.item += 1
            self._outcome = READ
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

    def _in_block(
        self: Engine, call: CallRecord, item: Skip, buf: str, pos: int, reach: int, eof: bool
    ) -> int | None:
        """A `skip(block=true)`: the opener opened a block. Text before its first marker
        (the `until` included, each read as if the opener came right before it) that is no
        header, prose or a word longer than the header may be, is the block's text: the call
        is none, the opener stays markup and the text is read as content from `pos`
        (`state.reopen`). None: not decided here (a header, or nothing yet)."""
        search = self.family.reopen[call.opener][0]
        found, lit = search.search(buf, pos, reach)
        end = found if found >= 0 else reach
        if found < 0 and reach == len(buf):  # a tail that may begin a marker is not text yet
            end -= search.held(buf, pos)
        text = buf[pos:end]
        if found >= 0 and lit not in item.until:
            prose = bool(text.strip())  # a word another marker ends: the block's text
        else:  # a header ends at `until`, unless it is prose or longer than a header may be
            prose = bool(_PROSE.search(text)) or end - pos > item.max_len
        if not prose:
            return None
        self._call = None
        self.mode = call.back
        self._outcome = ABANDON
        self._boundary()  # the opener is markup
        self._state.reopen = call.opener
        return pos

    def _marker_before(self: Engine, buf: str, pos: int, at: int, until: str, item: Skip) -> bool:
        """Whether another marker of the family starts before the `until` found at `at`
        (-1: none yet), or there, beginning with it (`[` of `[TOOL_CALLS]`). The search
        goes no further than the skip may reach: repeated openers stay linear."""
        markers = self.family.content_markers
        reach = (at if at >= 0 else pos + item.max_len) + markers.max_prefix + 1
        other, lit = markers.search(buf, pos, min(len(buf), reach))
        if other < 0:
            return False
        return at < 0 or other < at or (other == at and lit != until and lit.startswith(until))

    def _may_be_marker(self: Engine, buf: str, at: int) -> bool:
        """Whether the text from the `until` found at `at` to the end may still grow into a
        marker of the family (`[TOOL_CA`): the skip cannot end there yet."""
        return self.family.content_markers.held(buf, at) == len(buf) - at

    def _keep(self: Engine, call: CallRecord, text: str) -> None:
        """Prose read by a `skip(keep=true)`: held until the call is known (it goes back with
        the opener if there is no call), content at once inside a known call."""
        if call.committed:
            self._text(text)
        elif text:
            call.kept.append(text)

    def _read_name(
        self: Engine, call: CallRecord, item: Name, buf: str, pos: int, eof: bool
    ) -> int:
        if item.fixed:  # the opener names the call: nothing to read
            call.item += 1
            self._commit(call, item.fixed, None)
            self._outcome = READ
            return pos
        _, markers, reach = self.family.name_reads[call.shape, call.item]
        # a name ends within `reach`, or is none: search no further than that (twice, as it
        # streams: `at` is told below), so that a whole output of openers with no name end
        # stays linear
        at, until = markers.search(buf, pos, min(len(buf), pos + 2 * reach))
        if at < 0:
            if len(buf) - pos > reach:
                return self._abandon(call, pos)
            if item.requested and not self._may_be_requested(buf, pos, markers):
                return self._abandon(call, pos)  # prose: no requested tool is named so
            if eof:
                return self._name_at_end(call, item, buf, pos)
            if self._never_a_name(item, buf, pos, markers):
                return self._abandon(call, pos)  # (the next shape may read it as it streams)
            if (
                not item.requested
                and call.raw is None
                and call.dialect is None
                and shortcuts.ON
                and self._log is None
            ):  # the next delta may ask this again at once (`_hot_name`), untraced
                self._hot = call, call.item
            self._outcome = WAIT  # the end of the name is not here yet
            return pos
        return self._name_ends(call, item, buf, pos, at, until, reach)

    def _name_ends(
        self: Engine,
        call: CallRecord,
        item: Name,
        buf: str,
        pos: int,
        at: int,
        until: str,
        reach: int,
    ) -> int:
        """The name read from `pos` ends at `at`, where its `until` marker was found."""
        if at - pos + len(until) - 1 > reach:  # streamed, this header had been given up
            return self._abandon(call, pos)  # before its `until` came (whitespace counts)
        raw = buf[pos:at].strip()
        if item.id:  # (the header is the call's id: read anew, no two are alike)
            name, header_id = name_of(item, raw)
        else:  # a model calling one tool again and again: its header read once
            key = (call.shape, call.item, raw)
            known = self._names.get(key)
            if known is None:
                if len(self._names) >= _MAX_NAMES:
                    self._names.clear()
                known = self._names[key] = name_of(item, raw)
            name, header_id = known
        if item.doubled:
            name = self._undoubled(name, item.doubled)
        if not name or (item.requested and not self.tools.requested(name)):
            return self._abandon(call, pos)
        # (the name's text is not held with the call's text so far: `_commit` drops it)
        call.item += 1
        self._commit(call, name, header_id)
        self._outcome = READ
        return at

    def _hot_name(self: Engine, call: CallRecord, buf: str) -> int:
        """A hot feed of a call waiting for its name's end (`_read_name` set `_hot`: a name
        no requested tool bounds, its text held from 0): its name item read as `_read_name`
        reads it, its answer in `_outcome`, the position reached returned; while it still
        waits (no `until`, no longer than the name may reach, nothing no name holds),
        without `_read_name`'s other questions. `feed` leaves `_hot` set: cleared here
        unless the name still waits."""
        item, markers, reach = self.family.name_reads[call.shape, call.item]
        if len(buf) > reach:
            self._hot = None  # (`_read_name` sets it again if the name still waits)
            return self._read_name(call, item, buf, 0, False)
        found = markers.find(buf, 0)  # (`_read_name`'s search: the whole text is in reach)
        if found is not None:
            self._hot = None
            return self._name_ends(call, item, buf, 0, found.start(), found.group(), reach)
        # (`_never_a_name`, its shortcut inline, on while `_hot` is set: a first character
        # a match of the name's pattern may begin with, not whitespace, decides at once)
        pattern = item.pattern
        if pattern is None or buf[0].isspace() or not may_begin(pattern, buf[0]):
            if self._never_a_name(item, buf, 0, markers):
                self._hot = None
                return self._abandon(call, 0)
        self._outcome = WAIT  # (`_hot` left as the feed found it: this call and item)
        return 0

    def _may_be_requested(self: Engine, buf: str, pos: int, ends: Markers) -> bool:
        """Whether the name text read so far (a marker may be cut at its end) may still
        grow into the name of a requested tool."""
        text = buf[pos : len(buf) - ends.held(buf, pos)].strip()
        return self.tools.may_be_requested(text)

    @staticmethod
    def _never_a_name(item: Name, buf: str, pos: int, ends: Markers) -> bool:
        """Whether the name read so far (up to a marker cut at its end) already holds what no
        name holds (`{` of a JSON body): the call is abandoned now, as it would be once its
        marker arrives. A pattern decides on the whole, but for its first character: one
        no match begins with (`first_chars.py`) is no name however the text goes on;
        without one, a character of `BAD_NAME` up to the cut."""
        pattern = item.pattern
        if shortcuts.ON:
            if pattern is None:
                # no character no name holds in all the rest: none in the text up to the cut
                # either (`BAD_NAME` is one class of characters), so no cut to work out
                if BAD_NAME.search(buf, pos) is None:
                    return False
            else:
                # a first character a match may begin with decides without the cut: the
                # text up to the cut begins with it or is empty (a name waiting for its
                # `until` over several deltas is asked again on each of them)
                first = buf[pos:].lstrip()[:1]
                if not first or may_begin(pattern, first):
                    return False
        text = buf[pos : len(buf) - ends.held(buf, pos)].strip()
        if item.pattern is None:
            return bool(BAD_NAME.search(text))
        return bool(text) and not may_begin(item.pattern, text[0])

    def _undoubled(self: Engine, name: str, separator: str) -> str:
        """`get_weather.get_weather` is `get_weather` when only the short name is a
        requested tool (a `name(doubled=…)` item): a name that is a requested tool itself,
        halves that differ or no requested tools at all leave it as written."""
        if not self.tools.has_tools() or self.tools.known(name):
            return name
        head, found, tail = name.partition(separator)
        if found and head == tail and self.tools.known(head):
            return head
        return name
