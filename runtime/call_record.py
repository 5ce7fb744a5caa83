"""The engine's record of the call it is reading (`Engine._call`).

Slotted: the engine reads and moves it on every item of every call.
"""

from __future__ import annotations

from .protocol import ArgumentsReader


class CallRecord:
    """The call being read: where it is in its shape's items, and what it holds until its
    name decides that it is a call (its text goes back if it is none)."""

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
        "read_id",
        "raw",
        "texted",
        "hold",
        "malformed",
        "ws_before",
        "section_back",
        "sent",
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
        special: bool = False,
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
        # text read before the name (a lookahead opener is read by the call's next item; a
        # special token opener is never given back: its slot stays empty)
        self.held: list[str] = (
            [opener[len(prompt) :] if not special else ""] if opener and not peeked else []
        )
        self.peeked = opener if peeked else ""  # the lookahead opener that started the call
        self.args_done = False
        # whitespace read since the last marker: markup if another marker of the call
        # follows, given back as text if the call ends there
        self.ws_tail: list[str] = []
        self.kept: list[str] = []  # prose a `skip(keep=true)` read: content once committed
        self.read_id = ""  # the call's own id, read by a `skip(id=true)` before its name
        # the call's text as the model wrote it, kept while a policy may give it back as
        # text (`call_outcome.py`); None when no policy would
        self.raw: list[str] | None = None
        self.texted = False  # given back as content: its text goes out as it is read
        # the opener of the section the call opened first in (with the whitespace before
        # it): given back in front of the call's text if the call is (`call_outcome.py`)
        self.section_back = ""
        # a call of this record's list was sent or dropped: the list's text is no longer
        # one call's to give back (`call_outcome.py`)
        self.sent = False
        # a call held until it is known whole: (id, name, argument pieces), or None
        self.hold: tuple[str | None, str, list[str]] | None = None
        self.malformed = False  # its dialect said the arguments never formed an object
        self.ws_before = ""  # whitespace held right before its opener (trim), for its text
