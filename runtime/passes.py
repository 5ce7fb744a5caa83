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
from .spec import BAD_NAME, CallShape, Dialect, Lit, Messages, Name, Skip, Ws

# the characters a name's first one is tried against (others go to the reader): printable
# ASCII, to which the family's marker characters are added
_TRIED = "".join(chr(code) for code in range(0x21, 0x7F))


def opener_pass(
    shapes: Iterable[tuple[CallShape, int]],
    literals: Iterable[str],
    content: Iterable[str] = (),
    openers: Iterable[str] = (),
    reads_markers: bool = False,
    extended: bool = False,
) -> str | None:
    """The text after a call opener (not a lookahead) on which every shape it starts, in
    turn, gives it back at once; None unless each decides so (`_gives_up`). `content`: the
    literals of the content search (a `skip`'s `_marker_before` asks it); `openers`: every
    call opener (an optional literal that begins a longer one is not decided here).

    `reads_markers`: the last shape may also read an optional literal that is there (a
    stuttered `[TOOL_CALLS][TOOL_CALLS]`) before it gives up; the regex then reads it, and
    the scan goes on after it, as after the call. Without it, the regex decides only where
    the call reads no marker, so the scan may go on right after the opener (`gives_back`,
    an opener held inside reasoning, reads on so).

    `extended`: also the decisions added for issue 28's third pass (a `skip` at a marker, a
    naming dialect's `lead` then none of `first`, an optional literal that is there, a
    pattern name at a character an end marker begins with); without it, the passes of
    before, which reasoning keeps (an opener held there that its pass does not decide
    waits for the reasoning's end, and at `length` is dropped: deciding more there would
    change what a cut reasoning reads as)."""
    literals = list(literals)
    tried = sorted(set(_TRIED) | {char for lit in literals for char in lit})
    # the start of a marker at the text's end: the call waits there for the rest (the
    # engine holds it back from the item), so nothing is decided yet
    arriving = sorted({lit[:k] for lit in literals for k in range(1, len(lit))}, key=len)
    context = _Context(tried, tuple(content), tuple(openers), extended, tuple(arriving))
    # whitespace the call reads is given back as text and read on after it, as the scan
    # reads it once the opener is passed: the same, unless a marker may begin in it
    spaced = not any(lit[:1].isspace() for lit in literals)
    shapes = list(shapes)
    ways = []
    for number, (shape, start) in enumerate(shapes):
        last = number == len(shapes) - 1
        if not spaced and last:
            # a marker may begin with a space: read what the last shape reads before it
            # gives the call up (all of it goes back, the scan reads on after it)
            read = _gives_up(shape, start, context, True, read_space=True)
            if read is not None:
                return "".join(f"(?={way})" for way in ways) + read
        # (a shape tried before the last may read a marker: the next one reads again from
        # right after the opener)
        way = _gives_up(shape, start, context, spaced, markers=extended and spaced and not last)
        read = None
        if last and spaced and reads_markers and extended:
            read = _gives_up(shape, start, context, True, markers=True, read=True)
        if way is None and read is None:
            return None
        if last and read is not None:  # where it reads no marker, as without `read`
            ahead = "".join(f"(?={way})" for way in ways)
            return ahead + (f"(?:(?={way})|{read})" if way is not None else read)
        ways.append(way)
    return "".join(f"(?={way})" for way in ways) if ways else None


class _Context:
    """What `_gives_up` asks of the family: the characters tried as a name's first, the
    content search's literals (`skip`), the call openers, and the starts of every marker
    (`arriving`: text that ends in one decides nothing yet)."""

    __slots__ = ("tried", "content", "openers", "extended", "arriving")

    def __init__(
        self,
        tried: list[str],
        content: tuple[str, ...],
        openers: tuple[str, ...],
        extended: bool,
        arriving: tuple[str, ...] = (),
    ) -> None:
        self.arriving = arriving
        self.tried = tried
        self.content = content
        self.openers = openers
        self.extended = extended


def _gives_up(
    shape: CallShape,
    start: int,
    context: _Context,
    spaced: bool,
    read_space: bool = False,
    markers: bool = False,
    read: bool = False,
) -> str | None:
    """A regex of the text after the opener on which the call's items from `start` give
    the call up at once: whitespace items, then a name (`_no_name`), a required literal
    that is not there (nor may still be: the text ends in a prefix of it), a naming
    dialect whose text cannot begin so (`Opening.begins`; and, with `markers`, its `lead`
    and run followed by none of `first`), or a `skip` at a marker of the content search
    that no `until` begins with (`call_head._marker_before`: no header); an optional
    literal where it is not there, and with `markers` also where it is (read, as the
    literal reader reads it). None when they do not decide. `read_space`: only whitespace
    items then such a dialect decide, and the regex reads what they read (not a
    lookahead). `read`: the regex reads the whitespace and optional literals the items
    read before they decide (the call gives them back and the scan reads on after them)."""
    waits = "|".join(re.escape(prefix) for prefix in context.arriving)
    held = f"(?!(?:{waits})\\Z)" if waits else ""
    out = ""
    for item in shape.call[start:]:
        if isinstance(item, Ws):  # (none at all where a marker may begin with a space)
            out += "\\s*+" if spaced else "(?!\\s)"
            continue
        if read_space and not isinstance(item, Dialect):
            return None
        if isinstance(item, Name):
            if item.fixed or item.recipient or not item.until:
                return None
            return out + _no_name(item, context.tried, context.extended)
        if isinstance(item, Lit):
            texts = [text for text in item.texts if text]
            if not texts:  # (a lookahead literal that is not there fails the same)
                return None
            whole = "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
            cut = sorted(
                {t[:k] for t in texts for k in range(len(t))} | set(context.arriving), key=len
            )
            growing = "|".join(re.escape(prefix) for prefix in cut)
            absent = f"(?!{whole})(?!(?:{growing})\\Z)"  # not there, nor still arriving
            if not item.optional:
                return out + absent
            # absent: the next item reads at the same place; there: read (the longest
            # spelling, as `_lit_at`), unless it may begin a longer call opener
            # (`_opener_longer`) or is a lookahead the next item reads
            longer = any(
                len(opener) > len(text) and opener.startswith(text)
                for opener in context.openers
                for text in texts
            )
            if markers and not item.peek and not longer:
                out += f"(?:(?>{whole})|{absent})"
            else:
                out += absent
            continue
        if isinstance(item, Skip):
            if item.block or not markers:
                return None
            # a marker of the content search here, that no `until` begins with: the
            # skip's first `until` (if any) is here and begins it, or is further on
            found = [
                lit
                for lit in context.content
                if not any(until.startswith(lit) for until in item.until)
            ]
            if not found:
                return None
            ordered = sorted(found, key=len, reverse=True)
            return out + "(?=" + "|".join(re.escape(lit) for lit in ordered) + ")"
        row = DIALECTS.get(type(item))
        opening = row.opening(item) if row is not None and row.names_calls else None
        if opening is None or not opening.begins:
            return None
        begins = f"[{opening.space}]*+{held}(?=[^{opening.begins}])"  # (read no further)
        if markers and not read and opening.lead:  # (a lookahead: what it reads is not said)
            lead = f"{re.escape(opening.lead)}[{opening.space}]*+{held}(?=[^{opening.first}])"
            return out + f"(?:{begins}|{lead})"
        return out + begins
    return None


def _no_name(item: Name, tried: list[str], extended: bool = False) -> str:
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
    if extended and item.pattern is not None:  # (`_never_a_name`: a first character no match begins
        # with, one an end marker begins with too, unless the text is that marker arriving)
        starts = [c for c in tried if c in in_ends and not c.isspace()]
        starts = [c for c in starts if not may_begin(item.pattern, c)]
        if starts:
            cut = sorted({end[:k] for end in item.until for k in range(1, len(end))}, key=len)
            held = "|".join(re.escape(prefix) for prefix in cut)
            arriving = f"(?!(?:{held})\\Z)" if cut else ""
            ways.append(f"\\s*+{arriving}[{''.join(re.escape(c) for c in starts)}]")
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
