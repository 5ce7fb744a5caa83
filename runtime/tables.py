"""The compiled family tables: what the engine (and the grammar export) derives once from a
`FamilySpec` and shares between every parser of that family."""

from __future__ import annotations

import re
from dataclasses import MISSING, Field, dataclass, fields, is_dataclass
from typing import Any, Iterable, Sequence

from . import scan_meter, shortcuts
from .call_head import _PROSE  # (the words `_read_skip` tells a header from: `skip_waits`)
from .dialects import DIALECTS, markup_literals
from .limits import MAX_DEPTH
from .markers import Markers, markers, not_at_end
from .passes import header_pass, opener_pass
from .protocol import Head, Stops
from .spec import CallShape, FamilySpec, Lit, Messages, Name, Skip, Ws

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
    waiting for more text. With fewer, it decides all the same when the match ends before
    the text does (a whitespace item waits at the end) and `cut` finds no spelling of its
    literals begun and cut off by the end of the text, from a place at or before the
    match's end (a literal waits only for one of those): at a delta's end, a call's next
    item (its name) is often only a few characters in.

    `partial` reads a run the text ends inside of, as the items would: the items before
    the one the text ends at (whitespace that reaches the end, or a literal whose spelling
    the end cuts, none of it there yet) are read, and that one waits for more text. Its
    groups, one per item in order, each empty, mark where that item's wait begins (after
    its whitespace, before its literal); None when a literal has a spelling that begins
    another of its spellings (then the end may cut the longer while the shorter is there).
    """

    __slots__ = ("pattern", "next", "lookahead", "cut", "at_end", "partial")

    def __init__(
        self,
        pattern: re.Pattern[str],
        next_item: int,
        lookahead: int,
        cut: re.Pattern[str],
        at_end: int = -1,
    ) -> None:
        self.pattern = pattern
        self.next = next_item  # the item after the run
        self.lookahead = lookahead
        self.cut = cut  # a literal's spelling begun, cut off by the end of the text
        # a match that reaches the end of the text, `cut` finding nothing, decides the items
        # up to the run's last literal when that is a required one: the item to go on with
        # (its whitespace after it, which waits for more text, or the run's next); -1: none
        self.at_end = at_end
        self.partial: re.Pattern[str] | None = None


def _partial_pattern(items: Sequence[object]) -> re.Pattern[str] | None:
    """`_Run.partial` of a run of `items` (literals and whitespace): per item, nested,
    its wait at the end of the text (its group) or the item read whole and the next tried."""
    pattern = "(?!)"  # every item read and text left: not a wait (the run's own match decides)
    for item in reversed(items):
        if isinstance(item, Ws):
            pattern = r"(?:\s*+()\Z|\s*+" + pattern + ")"
            continue
        assert isinstance(item, Lit)
        texts = sorted(item.texts, key=len, reverse=True)
        if any(a != b and b.startswith(a) for a in texts for b in texts):
            return None
        begun = sorted({t[:end] for t in texts for end in range(len(t))}, key=len, reverse=True)
        whole = "(?>" + "|".join(map(re.escape, texts)) + ")" + ("?+" if item.optional else "")
        cut = "(?:" + "|".join(map(re.escape, begun)) + ")"
        pattern = "(?:()" + cut + r"\Z|" + whole + pattern + ")"
    return re.compile(pattern)


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
        begun: set[str] = set()
        for item in call[start:stop]:
            if isinstance(item, Ws):
                parts.append(r"\s*+")
                continue
            texts = sorted(item.texts, key=len, reverse=True)  # the longest spelling first
            longest = max(longest, len(texts[0]))
            group = "(?>" + "|".join(re.escape(text) for text in texts) + ")"
            parts.append(group + ("?+" if item.optional else ""))
            begun.update(text[:end] for text in texts for end in range(1, len(text)))
        cut = "|".join(map(re.escape, sorted(begun, key=len, reverse=True)))
        cut_pattern = re.compile("(?:" + cut + r")\Z" if cut else r"(?!)")
        spaces = stop
        while isinstance(call[spaces - 1], Ws):  # the whitespace items the run ends with
            spaces -= 1
        last = call[spaces - 1] if spaces > start else None
        at_end = spaces if isinstance(last, Lit) and not last.optional else -1
        run = _Run(re.compile("".join(parts)), stop, longest, cut_pattern, at_end)
        run.partial = _partial_pattern(call[start:stop])
        runs.append(run)
    return tuple(runs)


def _begins_longer(literals: Iterable[str], text: str) -> bool:
    """Whether one of `literals` longer than `text` begins with it."""
    return any(len(lit) > len(text) and lit.startswith(text) for lit in literals)


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
    Neither way decides where the text ends, from the character that tells, in the start
    of such a marker: the call waits there for the rest (`[<|python_end|`, `passes.py`).
    """
    literals = list(literals)
    arriving = sorted({lit[:k] for lit in literals for k in range(1, len(lit))}, key=len)
    # (a lookbehind of the character that tells, then the rest of the start up to the end)
    waits = [f"(?<={re.escape(p[0])}){re.escape(p[1:])}" for p in arriving]
    held = not_at_end(waits, max((len(p) - 1 for p in arriving), default=0))
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
        ways.append((f"(?=[^{firsts}])(?=(?s:.){held})", inner))
        index += 1
        item = items[index] if index < len(items) else None
    row = DIALECTS.get(type(item))
    opening = row.opening(item) if row is not None and row.names_calls else None
    if opening is not None:
        lead = opening.lead[1:] if peek and index == start else opening.lead  # (at the opener)
        head = f"{re.escape(opening.lead)}[{opening.space}]*+"
        read = inner + re.escape(lead) + opening.space
        ways.append((f"{head}(?=[^{opening.first}])(?=(?s:.){held})", read))
        if opening.then:  # (a way of its own: what it reads may begin a marker)
            ways.append((head + opening.then + held, read + opening.then_reads))
    kept = [way for way, chars in ways if not _begins_within(literals, chars)]
    if not kept:
        return None
    return pattern + "(?:" + "|".join(kept) + ")"


@dataclass(frozen=True, slots=True)
class CompiledFamily:
    """What the engine (and the grammar export) derives once from a spec and shares between
    parsers: a frozen record, made by `compile_family`'s named passes, printed by `pretty()`
    (`toolgrammar tables FAMILY`). Its dicts are read, never written, after it is made."""

    spec: FamilySpec
    shapes: tuple[CallShape, ...]
    # -- _compute_openers: opener text -> the (shape, next item) pairs it starts, in the
    # order they are tried; the openers that are lookaheads (found, but left for the call's
    # next item to read); every spelling of each shape's first opener (no lookahead)
    openers: dict[str, list[tuple[int, int]]]
    peek_openers: frozenset[str]
    first_opener: str
    first_openers: tuple[str, ...]
    # -- _compute_blocks: reasoning, section and ignored markers; whether calls open in
    # content too (no section, or an optional one); whether the prompt opened reasoning
    reasoning_opens: frozenset[str]
    reasoning_closes: frozenset[str]
    section_opens: frozenset[str]
    section_closes: frozenset[str]
    calls_anywhere: bool
    ignore: frozenset[str]
    special: frozenset[
        str
    ]  # special tokens (`special`): an opener of these goes back without itself
    special_openers: tuple[str, ...]  # the call openers among them, never given back as text
    # ignored markers that run on to an end string (`</co:` … `>`): marker -> end
    ignore_until: dict[str, str]
    content_ignore: frozenset[str]  # ignored in content only: text in reasoning
    prompt_opened: bool
    calls_inside: bool  # a call opener inside reasoning is a call at once (`calls_inside`)
    # -- _compute_messages: a messages family's header reading and routes
    messages: Messages | None
    recipient: re.Pattern[str] | None
    routes: dict[str, str]
    message_ends: frozenset[str]
    # the call openers that are no other marker (no section's, reasoning's or message's, not
    # ignored), in a family without messages: the engine opens their call at once
    # (`Engine._marker`; a shortcut: none when they are off)
    plain_openers: frozenset[str]
    # -- _compute_markers: the searches of each place of the output
    content_markers: Markers
    reasoning_markers: Markers
    # the reasoning closers, searched alone in the text held after a call opener met inside
    # reasoning (docs/policies.md, "Reasoning")
    reasoning_closers: Markers
    routed_markers: Markers  # a message routed to reasoning or content: calls are text there
    section_markers: Markers  # a section opener repeated inside the section is markup
    # content right after calls read without their section's opener: the section's closer
    # left after them is markup too (none: no optional section)
    after_calls_markers: Markers | None
    # an unfinished marker of these at the end of output is an unfinished call opener (a
    # message's end or header end cut short too; not its header opener, everyday prose: "to")
    call_drop_prefixes: Markers
    section_drop_prefixes: Markers  # inside a section, a section closer cut short too
    # -- _compute_items: per shape, each item with its kind (`_kind_of`), and the run of
    # literals and whitespace that starts there (`_Run`); per (shape, item), the markers
    # that end a name or a skip, and the stops of a dialect; the names nothing but their
    # arguments must follow (a name alone at a normal stop is a call with `{}`); the shape
    # a message's recipient names (its name item is the shape's first), or None
    steps: tuple[tuple[tuple[int, object], ...], ...]
    runs: tuple[tuple[_Run | None, ...], ...]
    name_markers: dict[tuple[int, int], Markers]
    # per (shape, name item): the item, its markers and how far it may reach, its `until`
    # included (a name ends within this, or is none): `_read_name`'s look-ups, made once
    name_reads: dict[tuple[int, int], tuple[Name, Markers, int]]
    bare: frozenset[tuple[int, int]]
    skip_markers: dict[tuple[int, int], Markers]
    # per (shape, skip item), the `until` markers at which the skip is empty and read at once
    # (`HeadReaders._read_skip`): those no longer marker of the content search begins with,
    # so that nothing at them is another marker or may still grow into one (a shortcut:
    # none when they are off)
    empty_skips: dict[tuple[int, int], tuple[str, ...]]
    # -- _compute_skip_waits: per (shape, skip item), the texts at which the skip, nothing
    # read yet, waits for the rest of its `until` (`HeadReaders._read_skip`): a part of one,
    # that holds no marker (nor another `until`, nor a marker of its block's search), no
    # words and no more than the skip may read; with the longest of them. A shortcut: none
    # when they are off
    skip_waits: dict[tuple[int, int], tuple[int, frozenset[str]]]
    stops: dict[tuple[int, int], Stops]
    by_recipient: tuple[int, Name] | None
    # -- _compute_quick_markers: the same searches, passing over call openers where the call
    # would only give its text back (`_gives_back`), used while nothing else is pending
    quick_content_markers: Markers
    quick_section_markers: Markers
    # the same in reasoning: no pass there that reads a marker or drops a special token (an
    # opener held inside reasoning is text with its token, or read as its call, at the end)
    quick_reasoning_markers: Markers
    # -- _compute_reopen: per opener of a `skip(block=true)`, the content search once text
    # was found in its block: the content markers, and what follows the opener in a marker
    # or a call (`<|content_text|>` of `<|message_model|><|content_text|>`, the skip's
    # `until`), each mapped to the marker it is read as and whether it is consumed there
    reopen: dict[str, tuple[Markers, dict[str, tuple[str, bool]]]]
    # per opener with a guard or a pass, its pattern (opener included): an opener held inside
    # reasoning whose text matches it is reasoning text at once (its call would only give it
    # back)
    gives_back: dict[str, re.Pattern[str]]

    def pretty(self) -> str:
        """Every table, one field a line (a dict: one entry a line), in the record's order."""
        lines = [f"compiled tables of {self.spec.name} ({self.spec.source})"]
        for field in fields(self):
            if field.name == "spec":
                continue
            value = getattr(self, field.name)
            if isinstance(value, dict) and value:
                lines.append(f"{field.name}:")
                lines += [f"  {_shown(k)}: {_shown(v)}" for k, v in value.items()]
            elif isinstance(value, tuple) and field.name in ("shapes", "steps", "runs"):
                lines.append(f"{field.name}:")
                lines += [f"  [{n}] {_shown(v)}" for n, v in enumerate(value)]
            else:
                lines.append(f"{field.name}: {_shown(value)}")
        return "\n".join(lines)


KIND_NAMES = ("LIT", "WS", "SKIP", "NAME", "DIALECT", "NAMING_DIALECT")


def _shown(value: object, depth: int = 0) -> str:
    """A table's value in one line: sets sorted, markers as their literals, patterns as text
    (`depth` bounds the walk: compiled, a recursion has no limit; docs/compiled.md)."""
    if depth > MAX_DEPTH:
        return "..."
    if isinstance(value, Stops):
        extra = f" openers={sorted(value.openers)!r}" if value.openers else ""
        return f"Stops{list(value)!r}{extra}"
    if isinstance(value, Markers):
        regex = value._regex
        guarded = (
            f" /{_one_line(regex.pattern)}/" if regex is not None and "(?!" in regex.pattern else ""
        )
        passed = f" passes {sorted(value.passable)!r}" if value.passable else ""
        return f"Markers{list(value.literals)!r}{guarded}{passed}"
    if isinstance(value, _Run):
        return f"Run(/{_one_line(value.pattern.pattern)}/ -> item {value.next})"
    if isinstance(value, re.Pattern):
        return f"/{_one_line(value.pattern)}/"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_shown(v, depth + 1) for v in value)) + "}"
    if isinstance(value, CallShape):
        return " ".join(_item(item) for item in value.call)
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) for v in value):
        if all(len(v) == 2 and isinstance(v[0], int) and not isinstance(v[1], int) for v in value):
            return " ".join(f"{KIND_NAMES[kind]}:{_item(item)}" for kind, item in value)
    if isinstance(value, tuple):
        shown = ", ".join(_shown(v, depth + 1) for v in value)
        return "(" + shown + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v, depth + 1) for v in value) + "]"
    return repr(value)


def _one_line(text: str) -> str:
    """A pattern's text with its control characters escaped (a literal's `\\n`)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _item(item: object) -> str:
    """A call item in short: its class and its fields that differ from their defaults."""
    if isinstance(item, Lit):
        return repr(item.text) + ("?" if item.optional else "")
    if isinstance(item, Ws):
        return "ws"
    if not is_dataclass(item):
        return repr(item)
    changed = [
        f"{f.name}={getattr(item, f.name)!r}"
        for f in fields(item)
        if f.name != "line" and getattr(item, f.name) != _default(f)
    ]
    return f"{type(item).__name__}({', '.join(changed)})"


def _default(field: Field) -> object:
    if field.default is not MISSING:
        return field.default
    if field.default_factory is not MISSING:
        return field.default_factory()
    return MISSING


def compile_family(spec: FamilySpec) -> CompiledFamily:
    """The tables of `spec`, made pass by pass, each pass reading the ones before it."""
    shapes = spec.shapes
    made: dict[str, object] = {"spec": spec, "shapes": shapes}
    made |= _compute_openers(spec, shapes)
    made |= _compute_blocks(spec)
    made |= _compute_messages(spec)
    made["plain_openers"] = _plain_openers(spec, made)
    markers_made, outside, inside, message_markers = _compute_markers(spec, made)
    made |= markers_made
    made |= _compute_items(shapes, made)
    made |= _compute_quick_markers(spec, made, outside, inside, message_markers)
    made |= _compute_reopen(shapes, made, outside)
    made |= _compute_skip_waits(shapes, made)
    return CompiledFamily(**made)  # type: ignore[arg-type]


def _compute_openers(spec: FamilySpec, shapes: tuple[CallShape, ...]) -> dict[str, object]:
    openers: dict[str, list[tuple[int, int]]] = {}
    for number, shape in enumerate(shapes):
        for text, index in shape.openers:
            openers.setdefault(text, []).append((number, index))
    peek_openers = frozenset(
        text
        for shape in shapes
        for item in shape.call
        if isinstance(item, Lit) and item.peek
        for text in item.texts
        if text in openers
    )
    firsts = {
        text for shape in shapes for text, index in shape.openers if index == shape.openers[0][1]
    } - peek_openers
    return {
        "openers": openers,
        "peek_openers": peek_openers,
        "first_opener": spec.openers[0][0],
        "first_openers": tuple(sorted(firsts)),
        "special_openers": tuple(sorted(text for text in openers if text in spec.special)),
    }


def _compute_blocks(spec: FamilySpec) -> dict[str, object]:
    section = spec.section
    return {
        "reasoning_opens": frozenset(o for r in spec.reasoning for o in r.opens),
        "reasoning_closes": frozenset(c for r in spec.reasoning for c in r.closes),
        "section_opens": frozenset(section.opens) if section else frozenset(),
        "section_closes": frozenset(section.closes) if section else frozenset(),
        "calls_anywhere": section is None or section.optional,
        "ignore": frozenset(spec.ignore),
        "special": frozenset(spec.special),
        "ignore_until": dict(spec.ignore_until),
        "content_ignore": frozenset(spec.content_ignore),
        "prompt_opened": any(r.prompt_opened for r in spec.reasoning),
        "calls_inside": any(r.calls_inside for r in spec.reasoning),
    }


def _compute_messages(spec: FamilySpec) -> dict[str, object]:
    m = spec.messages
    return {
        "messages": m,
        "recipient": re.compile(m.recipient) if m else None,
        "routes": dict(m.routes) if m else {},
        "message_ends": frozenset(m.ends) if m else frozenset(),
    }


def _plain_openers(spec: FamilySpec, made: dict[str, Any]) -> frozenset[str]:
    """The call openers that are no other marker of the family (`plain_openers`)."""
    if spec.messages or not shortcuts.ON:
        return frozenset()
    others = (
        "section_opens",
        "section_closes",
        "reasoning_opens",
        "reasoning_closes",
        "ignore",
        "message_ends",
    )
    return frozenset(made["openers"]).difference(*(made[name] for name in others))


def _compute_markers(
    spec: FamilySpec, made: dict[str, Any]
) -> tuple[dict[str, object], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The searches; also the literals outside and inside a section and the message
    markers, which `_compute_quick_markers` searches again with guards."""
    m = spec.messages
    message_markers: tuple[str, ...] = (*m.header, m.header_end, *m.ends) if m else ()
    openers, ignore = made["openers"], made["ignore"]
    section_opens, section_closes = made["section_opens"], made["section_closes"]
    entry = section_opens | (set(openers) if made["calls_anywhere"] else set())
    reasoning = (*made["reasoning_opens"], *made["reasoning_closes"])
    outside = (*reasoning, *entry, *ignore, *message_markers)
    inside = (*openers, *section_opens, *section_closes, *ignore)
    ends = (m.header_end, *m.ends) if m else ()
    content = markers(outside)
    found: dict[str, object] = {
        "content_markers": content,
        "reasoning_markers": content,
        "reasoning_closers": markers(made["reasoning_closes"]),
        "routed_markers": markers((*ignore, *message_markers)),
        "section_markers": markers(inside + message_markers),
        "after_calls_markers": (
            markers((*outside, *section_closes))
            if section_opens and made["calls_anywhere"]
            else None
        ),
        "call_drop_prefixes": markers((*entry, *openers, *ends)),
        "section_drop_prefixes": markers((*entry, *openers, *section_closes, *ends)),
    }
    return found, outside, inside, message_markers


def _compute_items(shapes: tuple[CallShape, ...], made: dict[str, Any]) -> dict[str, object]:
    openers, firsts = made["openers"], made["first_openers"]
    # per first opener, how each call it opens goes on (what a value's opener must be
    # followed by to end the value)
    heads = tuple(
        (opener, tuple(_head(shapes[n], i) for n, i in openers[opener])) for opener in firsts
    )
    headers = [_headers(other) for other in shapes]
    name_markers: dict[tuple[int, int], Markers] = {}
    name_reads: dict[tuple[int, int], tuple[Name, Markers, int]] = {}
    bare: set[tuple[int, int]] = set()
    skip_markers: dict[tuple[int, int], Markers] = {}
    empty_skips: dict[tuple[int, int], tuple[str, ...]] = {}
    content = made["content_markers"].literals
    stops: dict[tuple[int, int], Stops] = {}
    for number, shape in enumerate(shapes):
        for index, item in enumerate(shape.call):
            if isinstance(item, Name) and item.recipient:
                continue  # read from the header, not from the text
            if isinstance(item, Name):
                name_markers[number, index] = markers(item.until)
                reach = item.max_len + max(map(len, item.until), default=0)
                name_reads[number, index] = (item, name_markers[number, index], reach)
                if all(map(_may_be_absent, shape.call[index + 1 :])):
                    bare.add((number, index))
            elif isinstance(item, Skip):
                skip_markers[number, index] = markers(item.until)
                untils = tuple(u for u in item.until if u and not _begins_longer(content, u))
                if untils and shortcuts.ON:
                    empty_skips[number, index] = untils
            elif type(item) in DIALECTS:
                # `[` or `{` inside arguments is not a new call; other first openers are
                ends = {*shape.follows[index], *made["section_closes"], *firsts}
                ends |= made["message_ends"]  # the end of a tool message ends its calls
                # the call's own closers further on end it too (`</tool_call>` after a
                # missing `</function>`)
                ends |= {t for later in shape.call[index + 1 :] for t in _texts(later)}
                stops[number, index] = Stops(
                    sorted(ends),
                    firsts,
                    [h for literals, _ in headers for h in literals],
                    [end for _, name_ends in headers for end in name_ends],
                    heads,
                )
    by_recipient = next(
        (
            (number, shape.call[0])
            for number, shape in enumerate(shapes)
            if shape.call and isinstance(shape.call[0], Name) and shape.call[0].recipient
        ),
        None,
    )
    return {
        "steps": tuple(tuple((_kind_of(item), item) for item in shape.call) for shape in shapes),
        "runs": tuple(
            _runs(shape.call, openers) if shortcuts.ON else (None,) * len(shape.call)
            for shape in shapes
        ),
        "name_markers": name_markers,
        "name_reads": name_reads,
        "bare": frozenset(bare),
        "skip_markers": skip_markers,
        "empty_skips": empty_skips,
        "stops": stops,
        "by_recipient": by_recipient,
    }


def _compute_quick_markers(
    spec: FamilySpec,
    made: dict[str, Any],
    outside: tuple[str, ...],
    inside: tuple[str, ...],
    message_markers: tuple[str, ...],
) -> dict[str, object]:
    """Per call opener with a `_gives_back` pattern, that pattern guards the opener in the
    searches: only for an opener that opens one shape and is no other marker (ignored, a
    block's, a message's). Per call opener and message header opener that the text right
    after it gives back at once, the scan passes over it (`passes.py`): a call opener
    where it makes a call (in a section, or anywhere calls open), a header opener that is
    no ignored marker."""
    others = {*made["ignore"], *made["section_opens"], *made["section_closes"], *message_markers}
    others |= made["reasoning_opens"] | made["reasoning_closes"]
    literals = markup_literals(spec)
    special = made["special"]
    # a special token opener goes back as nothing (`Engine._abandon`): passed over, the scan
    # drops it from the text (`Markers.drops`), which only it may spell (no other literal
    # holds one), and not in reasoning, where an opener held is text with its token
    droppable = not any(
        token in lit for token in made["special_openers"] for lit in literals if lit != token
    )
    content = made["content_markers"].literals
    guards, passes, plain = {}, {}, {}
    for opener, starts in made["openers"].items():
        if opener in others:
            continue
        if opener not in made["peek_openers"] and (opener not in special or droppable):
            shapes = [(made["shapes"][number], start) for number, start in starts]
            found = opener_pass(
                shapes, literals, content, made["openers"], reads_markers=True, extended=True
            )
            if found is not None:
                passes[opener] = found
            found = opener_pass(shapes, literals)  # (reasoning's: see `opener_pass`)
            if found is not None and opener not in special:
                plain[opener] = found
        if opener in special or len(starts) != 1:  # (a guarded token would be text with it)
            continue
        number, start = starts[0]
        found = _gives_back(
            opener, opener in made["peek_openers"], made["shapes"][number], start, literals
        )
        if found is not None:
            guards[opener] = found
    headers = {}
    if made["messages"] is not None:
        found = header_pass(made["messages"], made["recipient"], literals)
        if found is not None:
            headers = {h: found for h in made["messages"].header if h not in made["ignore"]}
    if not guards and not passes and not headers:
        return {
            "quick_content_markers": made["content_markers"],
            "quick_section_markers": made["section_markers"],
            "quick_reasoning_markers": made["content_markers"],
            "gives_back": {},
        }
    drops = [opener for opener in made["special_openers"] if opener in passes]
    anywhere = made["calls_anywhere"]
    quick_content = Markers(outside, guards, {**(passes if anywhere else {}), **headers}, drops)
    return {
        "quick_content_markers": quick_content,
        "quick_section_markers": Markers(
            inside + message_markers, guards, {**passes, **headers}, drops
        ),
        "quick_reasoning_markers": (
            quick_content
            if plain == passes
            else Markers(outside, guards, {**(plain if anywhere else {}), **headers})
        ),
        # the text after an opener on which every shape gives up: its pass, its guard, or
        # either (an opener held in reasoning decides as the scan's pass would have, had
        # the text after it been there: else a stream that met the opener at the end of
        # a delta held it, and dropped it at `length`, where the whole output passed it)
        "gives_back": {
            opener: re.compile(
                "|".join(
                    f"(?:{way})"
                    for way in (
                        re.escape(opener) + plain[opener] if opener in plain else None,
                        guards.get(opener),
                    )
                    if way is not None
                )
            )
            for opener in {**plain, **guards}
        },
    }


def _compute_reopen(
    shapes: tuple[CallShape, ...], made: dict[str, Any], outside: tuple[str, ...]
) -> dict[str, object]:
    """For each opener whose call's next item is a `skip(block=true)`: the searches of
    content in its block (`CompiledFamily.reopen`)."""
    reopen: dict[str, tuple[Markers, dict[str, tuple[str, bool]]]] = {}
    for opener, starts in made["openers"].items():
        for number, start in starts:
            item = shapes[number].call[start] if start < len(shapes[number].call) else None
            if not isinstance(item, Skip) or not item.block:
                continue
            acts = {
                marker[len(opener) :]: (marker, True)
                for marker in outside
                if marker.startswith(opener) and len(marker) > len(opener)
            }
            acts |= {until: (opener, False) for until in item.until}
            reopen[opener] = (markers((*outside, *acts)), acts)
    return {"reopen": reopen}


def _compute_skip_waits(shapes: tuple[CallShape, ...], made: dict[str, Any]) -> dict[str, object]:
    """Per skip item, the parts of its `until` at which `_read_skip` waits having read
    nothing, whatever came before (`CompiledFamily.skip_waits`): no marker of the content
    search, none of the skip's own, none of the block search of an opener of its shape is
    in the part, nor words (`_PROSE`), and it is no longer than the skip may read."""
    waits: dict[tuple[int, int], tuple[int, frozenset[str]]] = {}
    if not shortcuts.ON:
        return {"skip_waits": waits}
    content: Markers = made["content_markers"]
    reopen = made["reopen"]
    for number, shape in enumerate(shapes):
        blocks = [
            reopen[opener][0]
            for opener, starts in made["openers"].items()
            if opener in reopen and any(n == number for n, _ in starts)
        ]
        for index, item in enumerate(shape.call):
            if not isinstance(item, Skip):
                continue
            own = made["skip_markers"][number, index]
            parts = {
                until[:cut]
                for until in item.until
                for cut in range(1, min(len(until), item.max_len + 1))
            }
            kept = frozenset(
                part
                for part in parts
                if not _PROSE.search(part)
                and all(found.search(part, 0)[0] < 0 for found in (content, own, *blocks))
            )
            if kept:
                waits[number, index] = (max(map(len, kept)), kept)
    return {"skip_waits": waits}


# The compiled families, by spec value, the most recently used last; and the same by the
# identity of each spec object asked for, with that object (kept alive: its id is not reused)
_COMPILED: dict[FamilySpec, CompiledFamily] = {}
_BY_ID: dict[int, tuple[FamilySpec, CompiledFamily]] = {}
_COMPILED_LIMIT = 256


def _forget() -> None:
    _COMPILED.clear()
    _BY_ID.clear()


shortcuts.keeps(_COMPILED, _BY_ID)  # the runs are a shortcut: tables are kept per setting
scan_meter.forgets(_forget)  # their markers count scans only when made under a meter


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
        family = compile_family(spec)
        if len(_COMPILED) >= _COMPILED_LIMIT:
            del _COMPILED[next(iter(_COMPILED))]
    _COMPILED[spec] = family
    if len(_BY_ID) >= _COMPILED_LIMIT:
        del _BY_ID[next(iter(_BY_ID))]
    _BY_ID[key] = (spec, family)
    return family
