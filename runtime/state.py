"""What the engine holds while it reads: the call being read, and its flags.

The engine's mode and its `CallState` say where in the grammar it is; `EngineState` keeps
the few facts the regions need besides (what is held back, whether a section is open, …).
Both are slotted: the engine reads them on every delta.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .modes import CONTENT

if TYPE_CHECKING:  # the builders import nothing of this; only the annotation needs them
    from .engine import Builder


class EngineState:
    """The engine's flags, beside its mode and the call being read."""

    __slots__ = (
        "pending",
        "ws_held",
        "content_started",
        "in_section",
        "routed",
        "header_back",
        "waiting",
        "rewind",
    )

    def __init__(self) -> None:
        # the end of the text seen so far, held back until what follows decides it
        self.pending = ""
        # content's trailing whitespace: markup if a marker or the end follows
        self.ws_held: list[str] = []
        self.content_started = False  # leading whitespace of the content is dropped
        self.in_section = False
        self.routed = False  # the current reasoning or content came from a message route
        self.header_back = CONTENT  # the mode a message header was found in
        self.waiting = False  # a call's item waits for more text
        self.rewind: str | None = None  # text a call's next shape must read again


class CallState:
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
        self.dialect: Builder | None = None
        # text read before the name (a lookahead opener is read by the call's next item)
        self.held: list[str] = [opener] if opener and not peeked else []
        self.peeked = opener if peeked else ""  # the lookahead opener that started the call
        self.args_done = False
        # whitespace read since the last marker: markup if another marker of the call
        # follows, given back as text if the call ends there
        self.ws_tail: list[str] = []
