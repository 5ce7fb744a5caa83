"""A call opener met inside a markup value: the value's text, or a new call the model began
without closing the value (docs/policies.md, "Markers inside values").

One rule for every dialect whose values are raw text ended by markers (`xml_params`,
`xml_elements`, `keyvalue_args` strings), so that the same text reads the same in each.
What may follow each opener comes from the grammar (`tables` hands it over in `Stops`):
text after an opener that its call cannot go on with says at once that the opener was text.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, NamedTuple, Sequence

from .markers import markers
from .scan_meter import forgets
from .protocol import Head, Opening
from .spec import Lit, Name, Ws, name_of, never_a_name

# how far past a call opener met inside a value the text is searched for what decides it
# (docs/policies.md, "Markers inside values"): a new call's header and first key come well
# within it; with none of them there, the opener was the value's text
MAX_OPENER_WAIT = 1024

_SPACE = re.compile(r"\s*+")


class ValueEnd(NamedTuple):
    """Where a value's text stopped (`OpenerInValue.read_text`): the value's text before
    `pos` was emitted; `at` and `lit` are the marker that ends the value (-1 and "": none
    yet), or, `waiting`, the opener at `pos` waits for more text to decide it."""

    pos: int
    at: int
    lit: str
    waiting: bool


class OpenerInValue:
    """Decides a call opener met inside a markup value (raw text ended by markers): the
    model wrote it as text, or began a new call without closing the value.

    First, what follows the opener must be able to go on as a call it opens (`Head`: its
    whitespace and literals up to the name, the name itself, how a naming dialect's body
    begins): `<tool_call>n` cannot be Qwen3-Coder's `<tool_call>\\n<function=`, so that
    opener is the value's text at once, whether the output goes on or not. (The head reads
    the text before the deciding marker, never a tail that may still become one: its
    answer holds however the text goes on.) Otherwise the first marker after it decides.
    One of `new_call` (the literal before a call's name, a parameter's key opener, another
    call opener) says a call began: the value ends before the opener. A marker that ends a
    call's name (`name_ends`) says so when the text before it is a name. Any other (a
    closer: the value's own, the call's, the section's) says the opener was text of the
    value. Nothing within MAX_OPENER_WAIT characters: text; the end
    of the output first: a call began, unless the text after the opener ends in a cut-off
    marker that can only be one of the others.
    (A closer of the call or the section met inside a value ends it at once, as the peers'
    parsers end it.)

    So a value never holds more than MAX_OPENER_WAIT characters plus a marker waiting to be
    decided, and the decision depends on the text alone, never on how it was split.
    """

    __slots__ = ("held", "new_call", "name_ends", "deciders", "heads")

    def __init__(self, stops: Sequence[str], own: Iterable[str], new_call: Iterable[str] = ()):
        """`stops` as the engine gives them to a dialect (`protocol.Stops`), `own` the
        markers that close the value itself, `new_call` the dialect's key opener."""
        self.held = frozenset(getattr(stops, "openers", ()))
        self.new_call = frozenset(
            lit for lit in (*self.held, *new_call, *getattr(stops, "headers", ())) if lit
        )
        self.name_ends: dict[str, Name] = {
            end: name for end, name in getattr(stops, "name_ends", ()) if end not in self.new_call
        }
        self.deciders = markers((*self.new_call, *self.name_ends, *own, *stops))
        # per held opener, how each call it opens goes on (none known: anything may)
        self.heads: dict[str, tuple[Head, ...]] = dict(getattr(stops, "heads", ()))

    def ends_value(self, text: str, start: int, eof: bool, opener: str) -> bool | None:
        """Whether the held `opener`, which ends at `start`, begins a call (and so ends the
        value); None while the text does not tell yet."""
        deciders = self.deciders
        limit = start + MAX_OPENER_WAIT  # a decider must start before it
        at, lit = deciders.search(text, start, limit + deciders.max_prefix)
        found = 0 <= at < limit
        if found and eof and deciders.may_grow(text, at, lit):
            # the output ends in this marker, which more text could have made a longer one
            # (`PREFIX<` of `PREFIX</content>`): a marker cut short, read as the end below
            found = False
        # the head is read on the text before the deciding marker, and never on a tail
        # that may still become one (read on what it turns out to be, the head could say
        # otherwise): so the answer stays what it is however the text goes on; at the end
        # of the output, on all of it
        end = min(at if found else len(text), limit)
        if not eof:
            end = min(end, len(text) - deciders.held(text, start))
        if not self.may_go_on(opener, text, start, end, eof and not found):
            return False
        if found:
            if not eof and self._may_start_earlier(text, start, at, lit):
                return None
            if lit in self.new_call:
                return True
            name = self.name_ends.get(lit)
            return name is not None and bool(name_of(name, text[start:at].strip())[0])
        if len(text) >= limit + deciders.max_prefix:
            return False
        if not eof:
            return None
        # the end of the output first: a call began (its head may go on, above), unless
        # what follows the opener ends in a marker cut short that can only be one that
        # says the opener was text
        cut = deciders.held(text, start)
        if cut and not any(
            lit.startswith(text[len(text) - cut :])
            and (lit in self.new_call or lit in self.name_ends)
            for lit in deciders.literals
        ):
            return False
        raw = text[start : len(text) - cut].strip()
        return not any(never_a_name(name, raw) for name in self.name_ends.values())

    def read_text(
        self,
        text: str,
        pos: int,
        eof: bool,
        found: tuple[int, str],
        search: Callable[[str, int], tuple[int, str]],
        emit: Callable[[str], None],
    ) -> ValueEnd:
        """The loop every raw-text value runs once the first marker that may end it
        (`found`, by `search(text, pos)`) is a held opener: emit (`emit(raw)`) the value's
        text from `pos` on, passing over each such opener that is the value's text and
        searching on after it, up to a marker that ends the value (or (-1, "")); stop
        before an opener that waits. Where it stopped, and at what."""
        at, lit = found
        while lit in self.held:
            ends_value = self.ends_value(text, at + len(lit), eof, lit)
            if ends_value:
                break
            stop = at if ends_value is None else at + len(lit)  # it waits, or is text
            if stop > pos:
                emit(text[pos:stop])
            if ends_value is None:
                return ValueEnd(stop, at, lit, True)
            pos = stop
            at, lit = search(text, pos)
        return ValueEnd(pos, at, lit, False)

    def may_go_on(self, opener: str, text: str, start: int, end: int, eof: bool) -> bool:
        """Whether text[start:end], right after `opener`, may be the start of the rest of
        the head of a call it opens, as the engine would read it: however the output goes
        on, or, `eof`, as it ends there (a name with a pattern is judged only then)."""
        heads = self.heads.get(opener)
        return heads is None or any(_fits(head, 0, text, start, end, eof) for head in heads)

    def _may_start_earlier(self, text: str, start: int, at: int, lit: str) -> bool:
        """Whether more text may still turn a marker found at `at` into another: a longer
        one there (`PREFIX<` of `PREFIX</`), or one beginning before it in a tail that is
        not complete yet (MiniMax-M3's name end `>` inside `]<]minimax[>` of a cut-off
        `]<]minimax[>[</content>`). Either way the whole text would decide by the other."""
        deciders = self.deciders
        if deciders.may_grow(text, at, lit):
            return True
        return len(text) - deciders.held(text, start) < at


def opener_in_value(
    stops: Sequence[str], own: tuple[str, ...], new_call: tuple[str, ...] = ()
) -> OpenerInValue:
    """An `OpenerInValue` made once per family's stops (and the dialect's own markers), not
    once per call: a call's reader made one anew, frozensets, a dict and a marker set, a
    tenth of the work of a short call. Nothing in it changes once made. By the stops'
    identity, kept with the answer (`Stops` tells apart what its tuple does not)."""
    key = (id(stops), own, new_call)
    found = _MADE.get(key)
    if found is not None and found[0] is stops:
        return found[1]
    made = OpenerInValue(stops, own, new_call)
    if len(_MADE) >= _MADE_LIMIT:
        _MADE.clear()
    _MADE[key] = (stops, made)
    return made


# `opener_in_value`'s answers, forgotten with the metered patterns their markers hold
_MADE: dict[tuple[int, tuple[str, ...], tuple[str, ...]], tuple[object, OpenerInValue]] = {}
_MADE_LIMIT = 1024
forgets(_MADE.clear)


def _fits(head: Head, index: int, text: str, pos: int, end: int, eof: bool) -> bool:
    """Whether text[pos:end] may be the start of what `head[index:]` reads (reaching `end`
    first: it may; `eof`: the output ends at `end`)."""
    while index < len(head):
        if pos >= end:
            return True
        step = head[index]
        if isinstance(step, Ws):
            pos = _SPACE.match(text, pos, end).end()  # type: ignore[union-attr]
        elif isinstance(step, Lit):
            for spelling in step.texts:
                if not spelling:
                    continue
                if text.startswith(spelling, pos, end):
                    if _fits(
                        head, index + 1, text, pos + (0 if step.peek else len(spelling)), end, eof
                    ):
                        return True
                elif end - pos < len(spelling) and spelling.startswith(text[pos:end]):
                    return True  # the text stops inside this spelling
            if not step.optional:
                return False
        elif isinstance(step, Name):
            return _name_fits(step, text, pos, end, eof)
        else:
            return _opening_fits(step, text, pos, end)
        index += 1
    return True


def _name_fits(name: Name, text: str, pos: int, end: int, eof: bool) -> bool:
    """Whether text[pos:end] may begin a call's name (as `Engine._read_name` reads one):
    up to a marker that ends it, a name; with none, text that may still grow into one (a
    name with a pattern is judged on the whole: only once the output has ended)."""
    if name.requested or not name.until:
        return True  # a name decided by the request's tools, or by no marker: anything may
    until = markers(name.until)
    reach = name.max_len + max(map(len, name.until))
    at, _ = until.search(text, pos, min(end, pos + 2 * reach))
    if at >= 0:
        return bool(name_of(name, text[pos:at].strip())[0])
    if end - pos > reach:
        return False
    if name.pattern is not None and not eof:
        return True
    return not never_a_name(name, text[pos : end - until.held(text, pos, end)].strip())


def _opening_fits(opening: Opening, text: str, pos: int, end: int) -> bool:
    """Whether text[pos:end] may begin a body the naming dialect reads as a call."""
    return _opening_pattern(opening).match(text, pos, end) is not None


_OPENINGS: dict[Opening, re.Pattern[str]] = {}


def _opening_pattern(opening: Opening) -> re.Pattern[str]:
    """The text a body may begin with: a prefix of `lead`, or `lead`, a run of `space`,
    then one of `first` or the end of the text."""
    found = _OPENINGS.get(opening)
    if found is None:
        lead = opening.lead
        partial = "|".join(re.escape(lead[:k]) + r"\Z" for k in range(len(lead)))
        space = f"[{opening.space}]*+" if opening.space else ""
        first = f"[{opening.first}]|" if opening.first else ""
        whole = rf"{re.escape(lead)}{space}(?:{first}\Z)"
        found = re.compile(f"(?:{partial}|{whole})" if partial else whole)
        if len(_OPENINGS) < 256:  # a handful per family; never grows with requests
            _OPENINGS[opening] = found
    return found
