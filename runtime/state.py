"""The engine's flags: what it holds between feeds besides its mode and the call it reads.

The engine's mode and its call being read say where in the grammar it is; `EngineState`
keeps the few facts the regions need besides (what is held back, whether a section is
open, …). Slotted: the engine reads it on every delta.
"""

from __future__ import annotations


class EngineState:
    """The engine's flags, beside its mode and the call being read."""

    __slots__ = (
        "pending",
        "ws_held",
        "content_started",
        "gap",
        "in_section",
        "section_opener",
        "rewind",
        "prompt",
        "reopen",
    )

    def __init__(self) -> None:
        # the end of the text seen so far, held back until what follows decides it
        self.pending = ""
        # content's trailing whitespace: markup if a marker or the end follows
        self.ws_held: list[str] = []
        self.content_started = False  # leading whitespace of the content is dropped
        # the content so far ends at markup or at the start of the output: with verbatim
        # whitespace, whitespace held here is markup if markup or the end follows it, and
        # content if text does (a gap of only whitespace between markup is layout)
        self.gap = True
        self.in_section = False
        # the opener of the open section while no call is in it: text again if none comes
        self.section_opener = ""
        self.rewind: str | None = None  # text a call's next shape must read again
        # the marker the prompt ended with, read as the start of the text until the first
        # marker is decided: it is the prompt's, so none of it is ever given back as text
        self.prompt = ""
        # the opener of a block a `skip(block=true)` found text in (no header): the block's
        # next marker is read as if this opener came right before it (`CompiledFamily.reopen`)
        self.reopen = ""
