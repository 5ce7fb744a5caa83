"""Markers the scan may pass over: the text right after them decides, at once, that what they
open is no call or no header, and gives them back as text.

A model looping on a marker (`>>>` a million times, `to=to=to=`) otherwise makes one call
or one header per marker, each tried and given back in Python: linear, but some µs a
marker, seconds a megabyte. `Markers.pass_over` reads a whole run of them in one regex
match instead. Each regex here is the reader's own immediate decision on the same text,
written as a lookahead after the marker (errs one way only: text it does not match goes to
the reader), so passing over reads exactly as making the call and giving it back:

- a call opener every shape of which reads a name right after it (`call_head._read_name`):
  the name is given up at once when its first character is one no name holds (a bare
  name's `BAD_NAME`, or no match of its pattern begins with it: `first_chars.py`) or begins
  one of its end markers (an empty name); when a bare name holds a `BAD_NAME` character
  before any end marker may begin; or when none of its end markers' first characters comes
  within twice its reach, or before the text's end past its reach (too long to be a name);
- a message header opener (`messages.MessageHeaders.read`): the recipient, then text that
  neither ends the header, starts a field, nor may still grow into either: "x to=5".

Both give back the marker (and the call nothing more) and read on right after it.
"""

from __future__ import annotations

import re
from typing import Iterable

from .first_chars import may_begin
from .spec import BAD_NAME, CallShape, Messages, Name

# the characters a name's first one is tried against (others go to the reader): printable
# ASCII, to which the family's marker characters are added
_TRIED = "".join(chr(code) for code in range(0x21, 0x7F))


def opener_pass(shapes: Iterable[tuple[CallShape, int]], literals: Iterable[str]) -> str | None:
    """The text after a call opener (not a lookahead) on which every shape it starts, in
    turn, gives it back at once; None unless each reads its name first."""
    tried = sorted(set(_TRIED) | {char for lit in literals for char in lit})
    ways = []
    for shape, start in shapes:
        item = shape.call[start] if start < len(shape.call) else None
        if not isinstance(item, Name) or item.fixed or item.recipient or not item.until:
            return None
        ways.append(_no_name(item, tried))
    return "".join(f"(?={way})" for way in ways) if ways else None


def _no_name(item: Name, tried: list[str]) -> str:
    """A regex of the text after the name's start on which `_read_name` gives it up now."""
    in_ends = {char for end in item.until for char in end}
    if item.pattern is None:
        chars = [c for c in tried if BAD_NAME.match(c) and c not in in_ends]
    else:
        chars = [c for c in tried if not may_begin(item.pattern, c) and c not in in_ends]
    chars = [c for c in chars if not c.isspace()]
    ends = "|".join(re.escape(end) for end in sorted(item.until, key=len, reverse=True))
    first = "".join(re.escape(c) for c in chars)
    ways = [f"\\s*+(?:[{first}]|{ends})" if first else f"\\s*+(?:{ends})"]
    reach = item.max_len + max(map(len, item.until))
    end_firsts = "".join(sorted({re.escape(end[0]) for end in item.until}))
    bad = "".join(
        re.escape(c)
        for c in tried
        if BAD_NAME.match(c) and not c.isspace() and c not in end_firsts  # (a space may end it)
    )
    if item.pattern is None and bad:  # a character no name holds, before any end may begin
        ways.append(f"[^{end_firsts}{bad}]{{0,{2 * reach}}}+[{bad}]")
    # no end marker begins within twice its reach (or before the text's end, past its reach)
    ways.append(f"[^{end_firsts}]{{{2 * reach}}}|[^{end_firsts}]{{{reach + 1},}}+\\Z")
    return "(?:" + "|".join(ways) + ")"


def header_pass(
    messages: Messages, recipient: re.Pattern[str], literals: Iterable[str]
) -> str | None:
    """The text after a header opener on which the header reader says it was text: a
    recipient that neither the header's end nor a field follows (nor may yet), or no
    recipient (a first character none begins with) before text that is no start of either."""
    if recipient.groups or recipient.flags & ~re.UNICODE:
        return None
    ends = (messages.header_end, *messages.fields)
    whole = "|".join(re.escape(end) for end in sorted(ends, key=len, reverse=True))
    prefixes = sorted({end[:k] for end in ends for k in range(len(end) + 1)}, key=len)
    growing = "(?!(?:" + "|".join(re.escape(prefix) for prefix in prefixes) + ")\\Z)"
    ways = [f"(?>{recipient.pattern})?+(?!{whole}){growing}"]
    tried = sorted(set(_TRIED) | {char for lit in literals for char in lit})
    none = "".join(re.escape(c) for c in tried if not may_begin(recipient.pattern, c))
    if none:
        ways.append(f"(?=[{none}]){growing}")
    return "(?:" + "|".join(ways) + ")"
