"""Markers the scan may pass over: the text right after them decides, at once, that what they
open is no call or no header, and gives them back as text.

A model looping on a marker (`>>>` a million times, `to=to=to=`) otherwise makes one call
or one header per marker, each tried and given back in Python: linear, but some µs a
marker, seconds a megabyte. `Markers.pass_over` reads a whole run of them in one regex
match instead. Each regex here is the reader's own immediate decision on the same text,
written as a lookahead after the marker (errs one way only: text it does not match goes to
the reader), so passing over reads exactly as making the call and giving it back:

- a call opener every shape of which, after any whitespace, gives the call up at once: a
  required literal that is not there, a naming dialect whose text cannot begin so
  (`protocol.Opening.begins`: `<tool_call><tool_call>`), or a name (`call_head._read_name`):
  the name is given up at once when its first character is one no name holds (a bare
  name's `BAD_NAME`, or no match of its pattern begins with it: `first_chars.py`) or begins
  one of its end markers (an empty name); when a bare name holds a `BAD_NAME` character
  before any end marker may begin; or when none of its end markers' first characters comes
  within twice its reach, or before the text's end past its reach (too long to be a name);
- a message header opener (`messages.MessageHeaders.read`): the recipient, then text that
  neither ends the header, starts a field, nor may still grow into either: "x to=5".

Both give back the marker (and the call nothing more) and read on right after it; except
where a marker may begin with a space (` functools`): there the whitespace after the opener
is read by the pass, as the call's last shape reads it (whitespace items, then a naming
dialect that cannot begin so) and gives it back with the opener, the scan reading on after
it (a marker starting in that whitespace is not found, as it is not when the call is made).

A call's required literal or naming dialect does not decide where the text ends in the start
of a marker of the family: the call waits there for the rest (`<|tool_call_start|><|` may
be an empty block, given back only at its closer), so the opener is not passed over there
either (else the stream's deltas differ from the reader's: `arriving`).
"""

from __future__ import annotations

import re
from typing import Iterable

from .dialects import DIALECTS
from .first_chars import may_begin
from .spec import BAD_NAME, CallShape, Dialect, Lit, Messages, Name, Ws

# the characters a name's first one is tried against (others go to the reader): printable
# ASCII, to which the family's marker characters are added
_TRIED = "".join(chr(code) for code in range(0x21, 0x7F))


def opener_pass(shapes: Iterable[tuple[CallShape, int]], literals: Iterable[str]) -> str | None:
    """The text after a call opener (not a lookahead) on which every shape it starts, in
    turn, gives it back at once; None unless each decides so (`_gives_up`)."""
    literals = list(literals)
    tried = sorted(set(_TRIED) | {char for lit in literals for char in lit})
    # whitespace the call reads is given back as text and read on after it, as the scan
    # reads it once the opener is passed: the same, unless a marker may begin in it
    spaced = not any(lit[:1].isspace() for lit in literals)
    # the start of a marker at the text's end: the call waits there for the rest (the
    # engine holds it back from the item), so nothing is decided yet
    arriving = sorted({lit[:k] for lit in literals for k in range(1, len(lit))}, key=len)
    shapes = list(shapes)
    ways = []
    for number, (shape, start) in enumerate(shapes):
        if not spaced and number == len(shapes) - 1:
            # a marker may begin with a space: read what the last shape reads before it
            # gives the call up (all of it goes back, the scan reads on after it)
            read = _gives_up(shape, start, tried, arriving, True, read_space=True)
            if read is not None:
                return "".join(f"(?={way})" for way in ways) + read
        way = _gives_up(shape, start, tried, arriving, spaced)
        if way is None:
            return None
        ways.append(way)
    return "".join(f"(?={way})" for way in ways) if ways else None


def _gives_up(
    shape: CallShape,
    start: int,
    tried: list[str],
    arriving: list[str],
    spaced: bool,
    read_space: bool = False,
) -> str | None:
    """A regex of the text after the opener on which the call's items from `start` give
    the call up at once: whitespace items, then a name (`_no_name`), a required literal
    that is not there (nor may still be: the text ends in a prefix of it), or a naming
    dialect whose text cannot begin so (`Opening.begins`); an optional literal only where
    it is not there. Neither where the text ends in the start of a marker (`arriving`: the
    call waits for the rest, as an empty block waits for its closer: `<|tool_call_start|><|`).
    None when they do not decide. `read_space`: only whitespace items then such a dialect
    decide, and the regex reads what they read (not a lookahead)."""
    waits = "|".join(re.escape(prefix) for prefix in arriving)
    held = f"(?!(?:{waits})\\Z)" if waits else ""
    read = ""
    for item in shape.call[start:]:
        if isinstance(item, Ws):  # (none at all where a marker may begin with a space)
            read += "\\s*+" if spaced else "(?!\\s)"
            continue
        if read_space and not isinstance(item, Dialect):
            return None
        if isinstance(item, Name):
            if item.fixed or item.recipient or not item.until:
                return None
            return read + _no_name(item, tried)
        if isinstance(item, Lit):
            texts = [text for text in item.texts if text]
            if not texts:  # (a lookahead literal that is not there fails the same)
                return None
            whole = "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
            cut = sorted({t[:k] for t in texts for k in range(len(t))} | set(arriving), key=len)
            growing = "|".join(re.escape(prefix) for prefix in cut)
            read += f"(?!{whole})(?!(?:{growing})\\Z)"  # not there, nor still arriving
            if item.optional:  # absent: the next item reads at the same place
                continue
            return read
        row = DIALECTS.get(type(item))
        opening = row.opening(item) if row is not None and row.names_calls else None
        if opening is None or not opening.begins:
            return None
        # (read no further)
        return read + f"[{opening.space}]*+{held}(?=[^{opening.begins}])"
    return None


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
    # a character no name holds (a space may end it), before any end marker, and not the
    # start of one nor of a tail held back as one's start
    bad = [c for c in tried if BAD_NAME.match(c) and not c.isspace()]
    if item.pattern is None and bad:
        plain = "".join(re.escape(c) for c in bad if c not in end_firsts)
        starts = "".join(re.escape(c) for c in bad if c in end_firsts)
        cut = sorted({end[:k] for end in item.until for k in range(1, len(end))}, key=len)
        held = "(?!(?:" + "|".join(re.escape(prefix) for prefix in cut) + ")\\Z)" if cut else ""
        hits = ([f"[{plain}]"] if plain else []) + (
            [f"(?!{ends}){held}[{starts}]"] if starts else []
        )
        scan = f"[^{end_firsts}{plain}]{{0,{2 * reach}}}+"
        ways.append(scan + "(?:" + "|".join(hits) + ")")
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
    return "(?=" + "|".join(ways) + ")"
