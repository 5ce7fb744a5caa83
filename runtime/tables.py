"""The compiled family tables: what the engine (and the grammar export) derives once from a
`FamilySpec` and shares between every parser of that family."""

from __future__ import annotations

import re
from typing import Iterable

from .dialects import DIALECTS, markup_literals
from .markers import Markers, markers
from .protocol import Head, Stops
from .spec import CallShape, FamilySpec, Lit, Name, Skip, Ws

# the kinds of a call's items; a naming dialect finds the call's name itself, so a
# failure before it means "not a call"
LIT, WS, SKIP, NAME, DIALECT, NAMING_DIALECT = range(6)


def _kind_of(item: object) -> int:
    if isinstance(item, Lit):
        return LIT
    if isinstance(item, Ws):
        return WS
    if isinstance(item, Skip):
        return SKIP
    if isinstance(item, Name):
        return NAME
    return NAMING_DIALECT if DIALECTS[type(item)].names_calls else DIALECT


def _texts(item: object) -> tuple[str, ...]:
    """The spellings of a literal item (none for any other item)."""
    return tuple(t for t in item.texts if t) if isinstance(item, Lit) else ()


def _headers(shape: CallShape) -> tuple[tuple[str, ...], tuple[tuple[str, Name], ...]]:
    """What shows that a call's header follows its first opener (`Stops`): the literal
    right before its name (`<function=` after `<tool_call>`), or, when the opener is that
    literal, each marker that ends the name with the name item (`">` after
    `<invoke name="`). A shape whose dialect reads the name has neither."""
    name_at = next((i for i, item in enumerate(shape.call) if isinstance(item, Name)), None)
    if name_at is None or not shape.openers:
        return (), ()
    name = shape.call[name_at]
    before = [item for item in shape.call[shape.openers[0][1] : name_at] if isinstance(item, Lit)]
    before = [item for item in before if not item.peek]
    if before:
        return _texts(before[-1]), ()
    return (), tuple((end, name) for end in name.until if end)


def _head(shape: CallShape, index: int) -> Head:
    """How a call of `shape` goes on after the opener whose next item is `index`, up to its
    name (`protocol.Head`): a value that holds the opener followed by text the head cannot
    read holds it as text (docs/policies.md, "Markers inside values")."""
    steps: list = []
    for item in shape.call[index:]:
        if isinstance(item, (Ws, Lit)):
            steps.append(item)
            continue
        if isinstance(item, Name) and not item.recipient:
            steps.append(item)
        elif type(item) in DIALECTS and DIALECTS[type(item)].names_calls:
            opening = DIALECTS[type(item)].opening(item)
            if opening is not None:
                steps.append(opening)
        break  # a skip, a recipient, arguments: what follows is not the head's to say
    return tuple(steps)


def _may_be_absent(item: object) -> bool:
    """Whether a call may end before `item` and still be whole (its arguments read `{}`)."""
    if isinstance(item, Ws):
        return True
    if isinstance(item, Lit):
        return item.optional
    return type(item) in DIALECTS and not DIALECTS[type(item)].names_calls


class _Run:
    """Consecutive literals and whitespace of a call read in one regex match.

    Read one at a time, each item costs a pass through the call loop; many small calls
    spend more there than in their arguments. The match decides what the items would
    decide one by one (longest spelling first, whitespace taken whole, an optional literal
    taken when there), given `lookahead` characters after it: then no item could have been
    waiting for more text.
    """

    __slots__ = ("pattern", "next", "lookahead")

    def __init__(self, pattern: re.Pattern[str], next_item: int, lookahead: int) -> None:
        self.pattern = pattern
        self.next = next_item  # the item after the run
        self.lookahead = lookahead


def _runs(call: tuple, openers: Iterable[str]) -> tuple[_Run | None, ...]:
    """Per item of a call, the run of two or more items that starts there, if any.

    A literal joins a run unless it is a lookahead, one of its spellings ends in
    whitespace (the run gives back the whitespace after its last literal as the items
    would, by stripping), or it is optional and a longer call opener starts with it (then
    it is only decided by what follows).
    """

    def fuses(item: object) -> bool:
        if isinstance(item, Ws):
            return True
        if not isinstance(item, Lit) or item.peek:
            return False
        if any(not text or text[-1].isspace() for text in item.texts):
            return False
        return not item.optional or not any(
            len(opener) > len(text) and opener.startswith(text)
            for text in item.texts
            for opener in openers
        )

    runs: list[_Run | None] = []
    for start in range(len(call)):
        stop = start
        while stop < len(call) and fuses(call[stop]):
            stop += 1
        if stop - start < 2:
            runs.append(None)
            continue
        parts, longest = [], 1
        for item in call[start:stop]:
            if isinstance(item, Ws):
                parts.append(r"\s*+")
                continue
            texts = sorted(item.texts, key=len, reverse=True)  # the longest spelling first
            longest = max(longest, len(texts[0]))
            group = "(?>" + "|".join(re.escape(text) for text in texts) + ")"
            parts.append(group + ("?+" if item.optional else ""))
        runs.append(_Run(re.compile("".join(parts)), stop, longest))
    return tuple(runs)


def _begins_within(literals: Iterable[str], chars: str) -> bool:
    """Whether one of `literals` begins with a character of the regex class body `chars`."""
    if not chars:
        return False
    within = re.compile(f"[{chars}]")
    return any(within.match(lit) for lit in literals if lit)


def _gives_back(
    opener: str, peek: bool, shape: CallShape, start: int, literals: Iterable[str]
) -> str | None:
    """A regex of text at a call opener on which the call it starts certainly ends before
    its name, having read no further than the match's end: the engine gives that text back
    and scans on from there, so the scan may pass over it without making the call (a long
    run of `[` in prose otherwise makes and drops one call per character). None when the
    call's items after `opener` (a lookahead: at it) do not decide so at once.

    After any whitespace items, two ways: a required lookahead literal that is not there
    (the next character is none of its first ones), or a naming dialect whose `Opening`
    fails at the character after its lead and run (a marker that ends the dialect there
    ends it before any call too: the same text goes back).
    A way whose text may hold, past the opener's first character, the first character of
    a marker of the family (`literals`) is left out: the call would have read past that
    marker, while the scan, going on from the opener's next character, would find it.
    """
    pattern = "" if peek else re.escape(opener)
    inner = "" if peek else re.escape(opener[1:])  # the text's characters past its first
    items, index = shape.call, start
    while index < len(items) and isinstance(items[index], Ws):
        pattern += r"\s*+"
        inner += r"\s"
        index += 1
    ways: list[tuple[str, str]] = []
    item = items[index] if index < len(items) else None
    if isinstance(item, Lit) and item.peek and not item.optional:
        firsts = "".join(sorted({re.escape(text[0]) for text in item.texts if text}))
        ways.append((f"(?=[^{firsts}])", inner))
        index += 1
        item = items[index] if index < len(items) else None
    row = DIALECTS.get(type(item))
    opening = row.opening(item) if row is not None and row.names_calls else None
    if opening is not None:
        lead = opening.lead[1:] if peek and index == start else opening.lead  # (at the opener)
        head = f"{re.escape(opening.lead)}[{opening.space}]*+"
        read = inner + re.escape(lead) + opening.space
        ways.append((f"{head}(?=[^{opening.first}])", read))
        if opening.then:  # (a way of its own: what it reads may begin a marker)
            ways.append((head + opening.then, read + opening.then_reads))
    kept = [way for way, chars in ways if not _begins_within(literals, chars)]
    if not kept:
        return None
    return pattern + "(?:" + "|".join(kept) + ")"


class CompiledFamily:
    """What the engine derives once from a spec and shares between parsers."""

    __slots__ = (
        "spec",
        "openers",
        "peek_openers",
        "first_opener",
        "first_openers",
        "reasoning_opens",
        "reasoning_closes",
        "section_opens",
        "section_closes",
        "calls_anywhere",
        "ignore",
        "prompt_opened",
        "messages",
        "recipient",
        "routes",
        "message_ends",
        "routed_markers",
        "content_markers",
        "reasoning_markers",
        "section_markers",
        "quick_content_markers",
        "quick_section_markers",
        "call_drop_prefixes",
        "section_drop_prefixes",
        "name_markers",
        "bare",
        "skip_markers",
        "stops",
        "shapes",
        "steps",
        "runs",
        "by_recipient",
    )

    def __init__(self, spec: FamilySpec) -> None:
        self.spec = spec
        self.shapes = spec.shapes
        # opener text -> the (shape, next item) pairs it starts, in the order they are tried
        self.openers: dict[str, list[tuple[int, int]]] = {}
        for number, shape in enumerate(self.shapes):
            for text, index in shape.openers:
                self.openers.setdefault(text, []).append((number, index))
        # openers that are lookaheads: found, but left for the call's next item to read
        self.peek_openers = {
            text
            for shape in self.shapes
            for item in shape.call
            if isinstance(item, Lit) and item.peek
            for text in item.texts
            if text in self.openers
        }
        self.first_opener = spec.openers[0][0]
        # every spelling of each shape's first opener (a lookahead `[` or `{` is not one)
        firsts = {
            text
            for shape in self.shapes
            for text, index in shape.openers
            if index == shape.openers[0][1]
        } - self.peek_openers
        self.first_openers = tuple(sorted(firsts))
        self.reasoning_opens = {o for r in spec.reasoning for o in r.opens}
        self.reasoning_closes = {c for r in spec.reasoning for c in r.closes}
        self.section_opens = set(spec.section.opens) if spec.section else set()
        self.section_closes = set(spec.section.closes) if spec.section else set()
        # calls open in content too: no section, or an optional one
        self.calls_anywhere = spec.section is None or spec.section.optional
        self.ignore = set(spec.ignore)
        self.prompt_opened = any(r.prompt_opened for r in spec.reasoning)
        entry = self.section_opens | (set(self.openers) if self.calls_anywhere else set())
        reasoning = (*self.reasoning_opens, *self.reasoning_closes)
        self.messages = spec.messages
        message_markers: tuple[str, ...] = ()
        self.routes: dict[str, str] = {}
        self.message_ends: set[str] = set()
        self.recipient = None
        if spec.messages is not None:
            m = spec.messages
            message_markers = (*m.header, m.header_end, *m.ends)
            self.routes = dict(m.routes)
            self.message_ends = set(m.ends)
            self.recipient = re.compile(m.recipient)
        outside = (*reasoning, *entry, *self.ignore, *message_markers)
        self.content_markers = markers(outside)
        self.reasoning_markers = self.content_markers
        # a message routed to reasoning or content: calls are text there
        self.routed_markers = markers((*self.ignore, *message_markers))
        # a section opener repeated inside the section is markup, not text
        inside = (*self.openers, *self.section_opens, *self.section_closes, *self.ignore)
        self.section_markers = markers(inside + message_markers)
        # an unfinished marker of these at the end of output is an unfinished call opener
        # (a message's end or header end cut short too; not its header opener, which is
        # also everyday prose: "to")
        ends = (spec.messages.header_end, *spec.messages.ends) if spec.messages else ()
        self.call_drop_prefixes = markers((*entry, *self.openers, *ends))
        # inside a section, a section closer cut short at the end is markup too
        self.section_drop_prefixes = markers((*entry, *self.openers, *self.section_closes, *ends))
        # per (shape, item): the markers that end a name or a skip, the stops of a dialect
        self.name_markers: dict[tuple[int, int], Markers] = {}
        # the (shape, item) of each name that nothing but its arguments must follow: a name
        # alone at a normal stop is a call with `{}` there
        self.bare: set[tuple[int, int]] = set()
        self.skip_markers: dict[tuple[int, int], Markers] = {}
        self.stops: dict[tuple[int, int], tuple[str, ...]] = {}
        # per shape, each item with its kind (`_kind_of`): a call's loop needs no type tests
        self.steps = tuple(
            tuple((_kind_of(item), item) for item in shape.call) for shape in self.shapes
        )
        # per shape, per item: the run of literals and whitespace that starts there (`_Run`)
        self.runs = tuple(_runs(shape.call, self.openers) for shape in self.shapes)
        # the shape a message's recipient names (`name(recipient=true)`, its first item):
        # (shape, its name item), or None
        self.by_recipient: tuple[int, Name] | None = next(
            (
                (number, shape.call[0])
                for number, shape in enumerate(self.shapes)
                if shape.call and isinstance(shape.call[0], Name) and shape.call[0].recipient
            ),
            None,
        )
        # per first opener, how each call it opens goes on (what a value's opener must be
        # followed by to end the value)
        heads = tuple(
            (opener, tuple(_head(self.shapes[n], i) for n, i in self.openers[opener]))
            for opener in self.first_openers
        )
        for number, shape in enumerate(self.shapes):
            for index, item in enumerate(shape.call):
                if isinstance(item, Name) and item.recipient:
                    continue  # read from the header, not from the text
                if isinstance(item, Name):
                    self.name_markers[number, index] = markers(item.until)
                    if all(map(_may_be_absent, shape.call[index + 1 :])):
                        self.bare.add((number, index))
                elif isinstance(item, Skip):
                    self.skip_markers[number, index] = markers(item.until)
                elif type(item) in DIALECTS:
                    # `[` or `{` inside arguments is not a new call; other first openers are
                    stops = {*shape.follows[index], *self.section_closes, *firsts}
                    stops |= self.message_ends  # the end of a tool message ends its calls
                    # the call's own closers further on end it too (`</tool_call>` after a
                    # missing `</function>`)
                    stops |= {t for later in shape.call[index + 1 :] for t in _texts(later)}
                    headers = [_headers(other) for other in self.shapes]
                    self.stops[number, index] = Stops(
                        sorted(stops),
                        firsts,
                        [h for literals, _ in headers for h in literals],
                        [end for _, ends in headers for end in ends],
                        heads,
                    )
        # the same searches, passing over call openers where the call would only give its
        # text back (`_gives_back`); the engine uses them while nothing else is pending
        guards = self._opener_guards(message_markers)
        self.quick_content_markers = Markers(outside, guards) if guards else self.content_markers
        self.quick_section_markers = (
            Markers(inside + message_markers, guards) if guards else self.section_markers
        )

    def _opener_guards(self, message_markers: tuple[str, ...]) -> dict[str, str]:
        """Per call opener with a `_gives_back` pattern, that pattern: only for an opener
        that opens one shape and is no other marker (ignored, a block's, a message's)."""
        others = {*self.ignore, *self.section_opens, *self.section_closes, *message_markers}
        others |= self.reasoning_opens | self.reasoning_closes
        literals = markup_literals(self.spec)
        guards = {}
        for opener, starts in self.openers.items():
            if len(starts) != 1 or opener in others:
                continue
            number, start = starts[0]
            found = _gives_back(
                opener,
                opener in self.peek_openers,
                self.shapes[number],
                start,
                literals,
            )
            if found is not None:
                guards[opener] = found
        return guards


# The compiled families, by spec value, the most recently used last; and the same by the
# identity of each spec object asked for, with that object (kept alive: its id is not reused)
_COMPILED: dict[FamilySpec, CompiledFamily] = {}
_BY_ID: dict[int, tuple[FamilySpec, CompiledFamily]] = {}
_COMPILED_LIMIT = 256


def compiled(spec: FamilySpec) -> CompiledFamily:
    """The tables of `spec`, made once per spec value. Bounded, least recently used out
    first: a server that fills many distinct `params` makes a new spec for each, and must
    not grow without end; an equal spec made again (`params` filled once more after its
    cache let it go) finds the tables already made. A spec object asked for before is
    found by identity, without hashing the whole spec (a parser is made per request)."""
    key = id(spec)
    known = _BY_ID.pop(key, None)
    if known is not None and known[0] is spec:
        _BY_ID[key] = known  # (re)inserted last: the most recently used
        return known[1]
    family = _COMPILED.pop(spec, None)
    if family is None:
        family = CompiledFamily(spec)
        if len(_COMPILED) >= _COMPILED_LIMIT:
            del _COMPILED[next(iter(_COMPILED))]
    _COMPILED[spec] = family
    if len(_BY_ID) >= _COMPILED_LIMIT:
        del _BY_ID[next(iter(_BY_ID))]
    _BY_ID[key] = (spec, family)
    return family
