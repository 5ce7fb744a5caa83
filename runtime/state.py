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
        "section_texted",
        "section_back",
        "rewind",
        "prompt",
        "reopen",
        "after_calls",
        "considered",
        "openers_are_reasoning",
        "calls_from_reasoning",
        "reasoned",
        "messages_wrote",
        "message_wrote",
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
        # the open section's opener went back as text with its first call, and every call in
        # it since did too: its closer is text as well
        self.section_texted = False
        # the same opener and the whitespace after it, while no text or call came after it:
        # what a first call given back as text takes with it (`call_outcome.py`)
        self.section_back: list[str] = []  # pieces: an opener written again adds one, in O(1)
        self.rewind: str | None = None  # text a call's next shape must read again
        # the marker the prompt ended with, read as the start of the text until the first
        # marker is decided: it is the prompt's, so none of it is ever given back as text
        self.prompt = ""
        # the opener of a block a `skip(block=true)` found text in (no header): the block's
        # next marker is read as if this opener came right before it (`CompiledFamily.reopen`)
        self.reopen = ""
        # calls were read outside a section, and only markup or whitespace followed: the
        # section's closer left after them is markup, as the calls' block closing
        self.after_calls = False
        # a call opener met inside open reasoning and the text after it, held until the
        # block closes (it was reasoning) or the output ends (a call): None when none is
        self.considered: list[str] | None = None
        # the held text is read again as reasoning, up to the block's closer: call openers
        # in it are reasoning text
        self.openers_are_reasoning = False
        # the output ended with no reasoning closer after a held opener: openers inside
        # reasoning open calls (the call is not lost) for the rest of it
        self.calls_from_reasoning = False
        # the open reasoning block holds reasoning text: a call opener with none before it
        # is a call at once (the model wrote no thought in which to consider it)
        self.reasoned = False
        # the kinds of text (a bit per `modes` kind: content, reasoning) that earlier
        # messages and the current one have sent: a grammar's `join` goes between
        self.messages_wrote = 0
        self.message_wrote = 0
