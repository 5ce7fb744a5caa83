"""What the engine decided, as values: each reader, the marker scan and the message-header
reader set one of these codes where they decide, and the engine acts on the code (the
trace only prints it, `trace.py`). Plain ints: the engine compares them on every delta.
"""

from __future__ import annotations

from typing import Final

# Final: the compiled modules read these as constants, not through this module's dict
# (docs/compiled.md, "What the compiled code reads")

# -- what became of a call's item (a reader's decision), or of the call it belongs to
READ: Final = 0  # the item was read: the call goes on with its next item
ABSENT: Final = 1  # an optional literal that is not there: the next item reads the text
SKIPPED: Final = 2  # stray text inside the call: skipped up to a later literal of the call
WAIT: Final = 3  # not decided yet: more text must come (also the header reader's)
ABANDON: Final = 4  # no call after all: its text goes back to where the opener was found
RETRY: Final = 5  # no call in this shape: the opener's next shape reads the same text again
UNFINISHED: Final = 6  # the output ends inside the call's opener: dropped
ENDED: Final = 7  # the call ended here, before its last item (or its item ended the output)
COMPLETE: Final = 8  # every item of the call was read: the call ends

# the codes after which the call's next item reads on (`_run_call`)
GOES_ON = frozenset({READ, ABSENT, SKIPPED})

# -- what a marker found outside a call did (`Engine._marker`)
IGNORED: Final = 20
MESSAGE_HEADER: Final = 21  # a message header begins (`messages.py` reads it)
MESSAGE_TO: Final = 22  # a header's end: the message goes where its route says
MESSAGE_ENDS: Final = 23
OPENS_CALL: Final = 24
OPENS_SECTION: Final = 25
CLOSES_SECTION: Final = 26
OPENS_REASONING: Final = 27
REASONING_OPENER_KEPT: Final = (
    28  # a reasoning opener outside content: markup, kept out of the text
)
CLOSES_REASONING: Final = 29
REASONING_CLOSER_DROPPED: Final = 30  # a reasoning closer outside reasoning: dropped
MARKUP: Final = 31
CONSIDERED: Final = 32  # a call's (or section's) opener inside open reasoning: held until decided
OPENER_IS_REASONING: Final = 33  # such an opener, and the reasoning closed after it: reasoning text

# -- what the message-header reader decided about a header (besides WAIT)
ROUTED: Final = 40  # the header is whole: the message goes where its route says
HEADER_IS_TEXT: Final = 41  # prose such as "x to=5": the opener was text
HEADER_CUT: Final = 42  # the output ends inside the header: an unfinished opener, dropped

# -- how the end of the output found the call being read (`Engine._end_of_output`)
NO_CALL: Final = 50

# -- what the engine tells its log (`Engine._log`, the trace), besides the codes above
FEED: Final = 60  # (text, eof[, whole]): a feed begins
HELD: Final = 61  # (): a feed ends; what is held back stays for the next
END: Final = 62  # (): the output ended
MARKER: Final = 63  # (marker, action)
ITEM: Final = 64  # (call, index, item, text read, outcome)
RUN: Final = 65  # (call, index, text): items from `index` on read in one match (`tables._Run`)
END_OF_OUTPUT: Final = 66  # (call, outcome): the output ended inside a call
SAYS: Final = 67  # (words): a dialect's change of state (`protocol.Sink.log`)
# ROUTED (headers), COMPLETE or ENDED (call): as decided

WORDS: dict[int, str] = {
    READ: "read",
    ABSENT: "absent (optional)",
    WAIT: "waits for more text",
    UNFINISHED: "the output ends inside the call's opener: dropped",
    IGNORED: "ignored",
    MESSAGE_HEADER: "a message header",
    MESSAGE_TO: "markup",
    MESSAGE_ENDS: "ends the message",
    OPENS_CALL: "opens a call",
    OPENS_SECTION: "opens the tool-call section",
    CLOSES_SECTION: "closes the tool-call section",
    OPENS_REASONING: "opens reasoning",
    REASONING_OPENER_KEPT: "a reasoning opener, kept as markup",
    CLOSES_REASONING: "closes reasoning",
    REASONING_CLOSER_DROPPED: "a reasoning closer, dropped",
    MARKUP: "markup",
    CONSIDERED: "a call opener inside reasoning: held until the block closes (reasoning) "
    "or the output ends (a call)",
    OPENER_IS_REASONING: "a call opener inside reasoning that closed after it: reasoning text",
}
"""How the trace words the codes whose words need nothing but the code."""
