"""The message-header machine of a family whose output is messages (Harmony, Muse).

`HEADER RECIPIENT [FIELD …] HEADER_END body`: after a header opener, the recipient and
the header's end decide where the message's body goes (its `route`: reasoning, content,
calls, or no one), or that the body is a call named by its recipient. Text that does not
read as a header ("x to=5") was prose, and the opener goes back as text.

Behind the reader protocol (`protocol.Reader`): the engine, in its HEADER mode, calls
`read(text, pos, eof)`, which returns the position reached and leaves its decision in
`outcome` (`outcomes.py`: WAIT, ROUTED, HEADER_IS_TEXT, HEADER_CUT) with the mode the
engine goes to; the engine acts on it. Only a family with `messages` has one, so the
engine of every other family carries none of this.
"""

from __future__ import annotations

from .modes import CALL, CONTENT, HEADER, REASONING
from .outcomes import (
    HEADER_CUT,
    HEADER_IS_TEXT,
    MESSAGE_ENDS,
    MESSAGE_HEADER,
    MESSAGE_TO,
    ROUTED,
    WAIT,
)
from .schemas import ToolSchemas
from .tables import CompiledFamily

_MAX_RECIPIENT = 256
_MAX_HEADER = 512  # a header's recipient and fields together, on one line


class MessageHeaders:
    """Reads message headers and says where each message goes."""

    __slots__ = (
        "family",
        "tools",
        "markers",
        "outcome",
        "mode",
        "back",
        "opener",
        "recipient",
        "kind",
        "name",
        "routed",
        "dropping",
        "stopped",
    )

    def __init__(self, family: CompiledFamily, tools: ToolSchemas) -> None:
        assert family.messages is not None and family.recipient is not None
        self.family = family
        self.tools = tools
        messages = family.messages
        self.markers = frozenset((*messages.header, messages.header_end, *family.message_ends))
        self.outcome = WAIT
        self.mode = CONTENT  # the mode the engine goes to after the header
        self.back = CONTENT  # the mode the header was found in
        self.opener = ""  # its opener's spelling (less the prompt's part): text again if prose
        self.recipient = ""  # the last header's recipient, its route's kind, and
        self.kind = ""
        self.name = ""  # the call its message is, if it is one ("" when not)
        self.routed = False  # the current reasoning or content came from a message route
        self.dropping = False  # the current message is routed `drop`: its text is no one's
        self.stopped = False  # the output ended at a normal stop

    def marker(self, lit: str, mode: int, prompt: str) -> int:
        """One of `markers`, found outside a call: a header opener, a header's end (a
        header with no recipient) or a message's end."""
        messages = self.family.messages
        assert messages is not None
        if lit in messages.header:
            self.back, self.opener = mode, lit[len(prompt) :]
            return MESSAGE_HEADER
        if lit == messages.header_end:
            self._route("")
            return MESSAGE_TO
        self.routed = self.dropping = False  # one of the message's ends
        return MESSAGE_ENDS

    def read(self, buf: str, pos: int, eof: bool) -> int:
        """After the header opener: a recipient, then the header's end (or first a field
        that begins more header, up to the header's end on the same line); else it was
        text ("x to=5")."""
        messages = self.family.messages
        assert messages is not None and self.family.recipient is not None
        found = self.family.recipient.match(buf, pos)
        end = found.end() if found else pos
        if end - pos > _MAX_RECIPIENT:
            return self._is_text(pos)
        if end > pos and buf.startswith(messages.header_end, end):
            self._route(buf[pos:end])
            return end + len(messages.header_end)
        if end > pos and any(buf.startswith(field, end) for field in messages.fields):
            return self._fields(buf, pos, end, eof)
        ends = (messages.header_end, *messages.fields)
        rest = buf[end : end + max(map(len, ends)) + 1]  # (not the rest of a whole output)
        if any(marker.startswith(rest) for marker in ends):
            if not eof:
                return self._wait(pos)  # the recipient or the header's end is still arriving
            if not rest:  # the output ends right after the opener or the recipient
                return self._is_text(pos) if self.stopped else self._cut(buf)
            if end > pos:
                return self._cut(buf)
        return self._is_text(pos)

    def _fields(self, buf: str, pos: int, end: int, eof: bool) -> int:
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
            return self._cut(buf) if eof else self._wait(pos)  # its end is still arriving
        return self._is_text(pos)

    def _wait(self, pos: int) -> int:
        self.outcome, self.mode = WAIT, HEADER
        return pos

    def _cut(self, buf: str) -> int:
        """The output ends inside a header: an unfinished opener, dropped."""
        self.outcome, self.mode = HEADER_CUT, self.back
        return len(buf)

    def _is_text(self, pos: int) -> int:
        """Prose such as "x to=5": the opener was text, and what follows it is read again."""
        self.outcome, self.mode = HEADER_IS_TEXT, self.back
        return pos

    def _route(self, recipient: str) -> None:
        family = self.family
        kind = family.routes.get(recipient, family.messages.default)  # type: ignore[union-attr]
        name = self._recipient_name(recipient)
        self.recipient, self.kind, self.name = recipient, kind, name
        self.routed = kind != "calls" and not name
        self.dropping = kind == "drop" and not name
        if name:
            self.mode = CALL
        else:
            self.mode = REASONING if kind == "reasoning" else CONTENT
        self.outcome = ROUTED

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
