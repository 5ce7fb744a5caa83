"""The whole-output route: `parse()` of a complete output reads runs of complete calls in
one step each instead of feeding them through the engine's item loop.

The engine stays the one definition of what an output means. This route hands it every
piece of text it does not decide itself: the text before, between and after the calls, and
any call it is not sure of. A run of calls is read here only from a point where the engine
itself stands clean (`_clean`: outside any call, reasoning or held text, nothing pending),
at a call opener the engine's own search of that place finds (its `Markers`, with their
passes), and each call only when every item of its shape is one this module reads exactly
as the engine's readers do (`_Steps`) and the call reads whole:

- literals and whitespace as `item_readers` reads them, no whitespace left at the call's
  end (the engine would give it back as text);
- a name as `call_head._read_name` reads it (`spec.name_of`), with no field the route does
  not know (`shortcuts.unknown_fields`: a `doubled`, `requested` or `recipient` name makes the
  shape the engine's), its text up to the first end marker and within the reader's reach;
- `json_args` and `json_call` arguments only where their own shortcut would take them
  (`json_args.decoded_object`, `json_args.sent_as_written`, `json_stream.whole_members`:
  one C decoder call, bytes released as written, no typing that changes a value); the
  JSON text of the call before, met again for the same tool, reads the same (`_Read.seen`);
  an object of plain members none of which typing reads is known sent as written from its
  text by one pattern (`_flat`), without decoding it;
- a `skip` header (`_skip`) only where `call_head._read_skip` (and `_in_block`) takes it
  as a header: no whitespace, no character a marker of the family starts with, at most
  `max_len`, then its `until`;
- a `json_call_array` (`_Read._array`) from its `[` to its `]`, each element a call object
  read as a `json_call` object below (`{NAME: {…}}`, `name_is_key`, only in its plain
  layout: `_KEY_CALL`), all its calls or none (not a `bare` one);
- `xml_params` arguments one match of the reader's own per-parameter pattern each, as
  its `_whole_params` reads them (`_Read._xml`), each parameter's text made once per
  output (with `json_body`, a `{` first is the reader's), a key written as text closed by
  its own closer in one step (`prefixes`);
- `xml_elements` arguments one match per element (`_Elements`, `_Read._elements`) where
  the value is text holding no prefix, typed by the reader's own conversion; any other
  dialect, and a call `_xml` or `_elements` cannot read so, by the dialect's reader
  through a stand-in for the engine (`_Sink`);
- a call object's plain layout with an id first (`_plain_call`: Cohere's `tool_call_id`).

The route starts where the engine stands clean (`_clean`), which includes open reasoning
where an opener opens its call there at once (`_opens_in_reasoning`: calls written inside
reasoning, `calls_inside`, or no reasoning text yet, as in an output that opens with its
calls after a prompt that opened the reasoning): the first call then leaves the reasoning.

A call ending within a few markers of the end of the output (`_Route.margin`) is read
only where the engine ends it at its last item with no text after it to look at (a
required literal, an optional one that is there or that the output ends right before, its
JSON object: `_Shape.final`), so a single-call output is the route's too; the finish reason
then decides only what follows. An optional literal a longer opener begins with (xLAM's
closer "```" and its opener "```json") is taken only where that opener does not start
(`_not_followed`), as `_opener_longer` has the engine decide.

Anything else (a value typing would change, a call the policies hold, drop or give back,
switches that reshape a call's arguments or the text after it (`Policies.reshapes_calls`:
the route reads none of them, so it does not start), a
name of a tool the request lacks under `unknown_tools`, any other call ending near the end
of the output, where the finish reason decides) stops the route: the engine reads the rest
of the output from there in one piece. No read goes past where a call could still be the
route's, so a call it leaves is read once, by the engine. The text before a run of calls goes to the engine in a
piece that ends at the run's first opener (where the output begins after the prompt's
marker, `prompt_opened`, the first piece goes on through the first opener: the engine reads
the prompt's call, and where it then holds just that opener, it stood clean before it: the
prompt's marker written once more); feeding it the text in pieces reads as feeding it
whole (the parity the invariants require of every cut), and where the engine does not stand
clean at such a cut (it holds text back), the route stops there too. A section's marker
right at such a cut, where the engine stands clean in content or a section, the route hands
to `Engine._marker` itself (`_markup`), as the engine's scan would hand it over: Kimi K2's
section opener and closer around its calls cost no run of the engine's loop.

Per call the route makes what the engine's `_marker`, `_commit` and `_end_call` make of a
whole call that is sent as it is read: the call's id and name, its arguments, the state
flags. `tests/test_whole_output.py` reads every corpus case under every policy it names,
and fuzzed outputs, both ways and requires the same message.

Off switch: `TOOLGRAMMAR_NO_WHOLE_ROUTE=1` in the environment (read at import), or
`switch(False)` at run time; `TOOLGRAMMAR_NO_SHORTCUTS=1` turns it off too, and a traced
parse (`trace=`) never takes it (docs/debugging.md).
"""

from __future__ import annotations

import os
import re
from functools import partial
from typing import TYPE_CHECKING, Any

from . import shortcuts
from .dialects import DIALECTS
from .engine import Engine
from .deltas import CallParts
from .coerce import json_text
from .json_args import SHORTCUT_KNOWS as JSON_ARGS_KNOWS
from .json_args import sent_as_written
from .json_call import _BEFORE_NAME, _MAX_NAME
from .json_call import ARRAY_SHORTCUT_KNOWS as ARRAY_KNOWS
from .json_call import SHORTCUT_KNOWS as JSON_CALL_KNOWS
from .json_stream import MAX_DEPTH, WHOLE_STRING, loads_or_none, scan_value, whole_members
from .limits import deeper_than
from .markers import Markers, NextStop, markers
from .modes import CONTENT, REASONING, SECTION
from .scan_meter import SEARCHES, forgets, metered
from .spec import JsonArgs, JsonCall, JsonCallArray, Lit, Name, Skip, Ws, XmlElements, XmlParams
from .spec import BAD_NAME, name_reader
from .unwrap import WRAPPER_KEYS
from .xml_entities import xml_unescape
from .xml_elements import _convert as element_value
from .xml_elements import _Node as ElementNode
from .schemas import streams_as_text
from .unicode import strip_space
from .xml_params import SHORTCUT_KNOWS as XML_PARAMS_KNOWS
from .xml_params import XmlParamsReader, _tables
from . import xml_params
from json.encoder import encode_basestring

if TYPE_CHECKING:
    from .tables import CompiledFamily

__all__ = ["ON", "switch", "whole"]

ON: bool = os.environ.get("TOOLGRAMMAR_NO_WHOLE_ROUTE", "") in ("", "0")
"""Whether `parse()` takes the whole-output route at all."""


def switch(on: bool) -> None:
    """Turn the whole-output route on or off from now on."""
    global ON
    ON = on


_BAD_NAME = BAD_NAME.search  # (no name holds one of these: `spec.name_of`)

_LIT_KNOWS = frozenset({"text", "optional", "alternatives", "lazy", "file"})
_NAME_KNOWS = frozenset({"until", "pattern", "id", "max_len", "write_index_from", "xml_unescape"})


class _Shape:
    """How the route reads the calls one opener starts (its first shape), from the item
    after the opener: `head`, one match over the literals, whitespace and name before the
    arguments (to their `{`); the arguments, a `json_args` object (`call` None) or a
    `json_call` object (`call` its item), up to `ends`; `tail`, one match over the
    literals and whitespace after them, ending in no whitespace. Possessive and atomic, as
    each reader takes its item whole and never gives it back."""

    __slots__ = (
        "peek", "head", "name", "reach", "fixed", "call", "plain", "dialect", "ends", "tail",
        "final", "needle", "xml", "array", "elements", "namer", "ids", "header", "header_max",
        "tail_text", "tail_size",
    )  # fmt: skip

    def __init__(self, peek: bool) -> None:
        self.peek = peek  # the opener is a lookahead: the call's items read it
        self.head: re.Pattern[str] | None = None
        self.name: Name | None = None  # the name read in `head` (group `raw`)
        # how its text reads (`spec.name_reader`), and whether that text is the call's id
        self.namer: Any = None
        self.ids = False
        # a header that is the id, read as `name_reader` reads it where it has a pattern:
        # its pattern's `fullmatch` and the header's longest, asked in line (no call per
        # call); None where `namer` reads it
        self.header: Any = None
        self.header_max = 0
        self.reach = 0  # the name's end marker must end within this of its start
        self.fixed = ""  # the name the opener implies (`name(fixed=…)`)
        self.call: JsonCall | None = None
        # the call object's commonest layout, its name then its arguments (`_plain_call`)
        self.plain: re.Pattern[str] | None = None
        # any other dialect: (its reader class, its item, its stops), read by that reader
        self.dialect: tuple[Any, Any, Any] | None = None
        self.ends: Any = None  # the stop markers of the arguments
        self.tail: re.Pattern[str] | None = None
        # what `tail` reads where the text goes on with it right at the arguments' end
        # (`_tail_text`), and its length: "" for a tail that reads nothing after JSON
        # arguments, else its one literal; `()` (which `str.startswith` finds nowhere) where
        # only `tail` says
        self.tail_text: str | tuple[()] = ()
        self.tail_size = 0
        # whether the engine ends a call of this shape where its text ends, with no text
        # after it to look at: then a call at the end of the output is the route's too
        # (0: never; 1: always, its last item is a required literal or its JSON object;
        # 2: when its last item, an optional literal, is there (the tail's group `last`) or
        # the output ends where it would begin)
        self.final = 0
        # a literal every call of the shape writes after its arguments ("": none known)
        self.needle = ""
        # `xml_params` arguments read one match per parameter (`_Xml`), or None
        self.xml: _Xml | None = None
        # `xml_elements` arguments read one match per element (`_Elements`), or None
        self.elements: _Elements | None = None
        # a `json_call_array`: its elements, each a `json_call` object (`call`), are read
        # from its `[` to its `]` (`_Read._array`), all or none
        self.array = False


def _literal(item: Lit, openers: Any) -> str | None:
    """A literal as the reader takes it (the longest spelling there; an optional one
    when there; a lookahead one seen, not taken), or None for one the route does not read."""
    if shortcuts.unknown_fields(item, _LIT_KNOWS | {"peek"}) or (item.peek and item.optional):
        return None
    texts = sorted((t for t in item.texts if t), key=len, reverse=True)
    if not texts:
        return None
    spellings = [re.escape(t) for t in texts]
    if item.optional:
        # a spelling that a longer opener begins with is not taken where that opener starts
        # (`_opener_longer`: "```" before "```json" is the next call's opener); the longest
        # spelling there is the reader's, and where an opener rejects it, it rejects every
        # shorter one there too, so a lookahead per spelling reads as the reader does
        spellings = [spelling + _not_followed(t, openers) for t, spelling in zip(texts, spellings)]
    group = "(?>" + "|".join(spellings) + ")"
    if item.peek:  # there, and left for the next item to read
        return f"(?={group})"
    return group + "?+" if item.optional else group


def _not_followed(text: str, openers: Any) -> str:
    """A lookahead that fails where an opener longer than `text` and beginning with it
    starts at `text` ("" where none does)."""
    rests = sorted(
        {o[len(text) :] for o in openers if len(o) > len(text) and o.startswith(text)},
        key=len,
        reverse=True,
    )
    return "(?!" + "|".join(map(re.escape, rests)) + ")" if rests else ""


def _shape(family: CompiledFamily, number: int, start: int, peek: bool) -> _Shape | None:
    """How the route reads shape `number` from item `start`, or None when one of its items
    is not one the route reads exactly as the engine does."""
    items = family.shapes[number].call
    shape = _Shape(peek)
    head: list[str] = []
    tail: list[str] = []
    tail_items: list[Any] = []  # (the items `tail` reads, for `_tail_text`)
    parts = head
    arguments: Any = None
    for index in range(start, len(items)):
        item = items[index]
        if parts is tail:
            tail_items.append(item)
        if isinstance(item, Ws):
            parts.append(r"\s*+")
        elif isinstance(item, Lit):
            literal = _literal(item, family.openers)
            if literal is None:
                return None
            if parts is tail and index == len(items) - 1 and not item.peek:
                # the call's last item, a literal: where it is there, the engine ends the
                # call right after it
                bare = literal[:-2] if item.optional else literal
                literal = f"(?P<last>{bare})" + ("?+" if item.optional else "")
                shape.final = 2 if item.optional else 1
            elif parts is tail and not shape.needle and not item.optional and not item.peek:
                if not item.alternatives:
                    shape.needle = item.text
            parts.append(literal)
        elif isinstance(item, Name) and parts is head and shape.name is None and not shape.fixed:
            if item.fixed:
                if shortcuts.unknown_fields(item, _NAME_KNOWS | {"fixed"}):
                    return None
                shape.fixed = item.fixed
                continue
            if shortcuts.unknown_fields(item, _NAME_KNOWS) or not item.until:
                return None
            # the earliest end marker; a header longer than `max_len + 1` is the engine's to
            # read (the reader gives up a header that streamed past `max_len` and its longest
            # `until` before one came: `call_head._read_name`)
            shape.name, shape.reach = item, item.max_len + 1
            shape.namer, shape.ids = name_reader(item), bool(item.id)
            if item.id and item.pattern is not None and not item.xml_unescape:
                shape.header, shape.header_max = re.compile(item.pattern).fullmatch, item.max_len
            ends = "|".join(map(re.escape, sorted(item.until, key=len, reverse=True)))
            # up to the first place an end marker starts, in runs of characters none starts
            # with (no try of the markers at every character); one past the reach is the
            # engine's (`_Read.calls` checks the length)
            firsts = "".join(sorted({re.escape(end[0]) for end in item.until}))
            head.append(
                f"(?>(?P<raw>(?:[^{firsts}]++|(?!{ends})[{firsts}])*+)(?=(?P<until>{ends})))"
            )
        elif isinstance(item, Skip) and parts is head:
            skip = _skip(family, item)
            if skip is None:
                return None
            head.append(skip)
        elif isinstance(item, (JsonArgs, JsonCall)) and parts is head:
            if isinstance(item, JsonArgs):  # after the name (the call is made)
                if item.raw or not shortcuts.takes(item, JSON_ARGS_KNOWS):
                    return None
                if shape.name is None and not shape.fixed:
                    return None
            else:  # the object names the call: nothing before it does
                if item.name_is_key or not shortcuts.takes(item, JSON_CALL_KNOWS):
                    return None
                if shape.name is not None or shape.fixed:
                    return None
                shape.call = item
                shape.plain = _plain_call(item)
            shape.ends = markers(family.stops[number, index])
            head.append(r"[ \t\n\r]*+(?=\{)")  # (`skip_whitespace`, then its `{`)
            parts = tail
            arguments = item
        elif isinstance(item, JsonCallArray) and parts is head:
            # each element a call object, read as `JsonCallArrayReader` has its element's
            # `JsonCallReader` read it (its shortcut's whole read); no name before the array
            if item.bare or not shortcuts.takes(item, ARRAY_KNOWS):
                return None
            if shape.name is not None or shape.fixed:
                return None
            element = JsonCall(
                name=item.name, arguments=item.arguments, name_is_key=item.name_is_key, id=item.id
            )
            if not shortcuts.takes(element, JSON_CALL_KNOWS):
                return None
            plain = _KEY_CALL if item.name_is_key else _plain_call(element)
            shape.call, shape.plain, shape.array = element, plain, True
            shape.ends = markers(family.stops[number, index])
            head.append(r"[ \t\n\r]*+\[")  # (`skip_whitespace`, then its `[`)
            parts = tail
            arguments = item
        elif type(item) in DIALECTS and parts is head and (shape.name is not None or shape.fixed):
            # another dialect after the name: its own reader reads the arguments, as the
            # engine has it read them (`DialectSink._dialect`), for a sink of the route's
            row = DIALECTS[type(item)]
            if row.names_calls:
                return None
            shape.dialect = (row.reader, item, family.stops[number, index])
            if isinstance(item, XmlParams):
                shape.xml = _Xml.of(item, family.stops[number, index])
            elif isinstance(item, XmlElements):
                shape.elements = _Elements.of(item, family.stops[number, index])
            parts = tail
        else:
            return None
    if parts is not tail:
        return None
    if not tail and arguments is not None:
        # the JSON object is the call's last item: its reader ends the call at its `}`
        shape.final = 1
    shape.head = metered(re.compile("".join(head)))
    # (no whitespace at the call's end: the engine would give it back as text; where the
    # tail reads nothing, the arguments' last character, which no whitespace is where the
    # route reads them whole, so the route leaves such a call to the engine)
    shape.tail = metered(re.compile("".join(tail) + r"(?<!\s)"))
    tail_text = _tail_text(tail_items, family.openers, shape.dialect is None)
    if tail_text is not None:
        shape.tail_text, shape.tail_size = tail_text, len(tail_text)
    return shape


def _tail_text(items: list[Any], openers: Any, json: bool) -> str | None:
    """What a tail of `items` reads, in one test, where the text goes on with it right at
    the arguments' end: "" for no items after JSON arguments (its match is the lookbehind
    alone, and JSON read whole ends in `}` or `]`), a literal's one spelling for whitespace
    (none there) then that literal, required or optional (there, taken whole: possessive),
    beginning and ending in no whitespace (so the whitespace before it reads none, and the
    lookbehind passes). None for any other tail (more items, several spellings, a
    lookahead, no items after another dialect's arguments): its pattern decides.
    tests/test_whole_output.py compares the two on drawn texts."""
    if items and isinstance(items[0], Ws):
        items = items[1:]
        if not items:
            return None  # (whitespace alone: the pattern)
    if not items:
        return "" if json else None
    item = items[0]
    if len(items) > 1 or not isinstance(item, Lit) or item.peek:
        return None
    spellings = [t for t in item.texts if t]
    if len(spellings) != 1 or _literal(item, openers) is None:
        return None
    lit = spellings[0]
    if lit[0].isspace() or lit[-1].isspace():
        return None
    if item.optional and _not_followed(lit, openers):
        return None
    return lit


_SKIP_KNOWS = frozenset({"until", "max_len", "block"})


def _skip(family: CompiledFamily, item: Skip) -> str | None:
    """A `skip` as `call_head._read_skip` reads a header it takes (`_in_block` first, for
    a block's): text of no whitespace (no prose) and no character a marker of the family
    starts with (no marker in it, so no other marker before its `until` and no block text
    another marker ends), at most `max_len` long, then one of its `until` (left for the
    next item); or None where a marker of the family and an `until` begin one another (the
    engine's search there may find the other one)."""
    if shortcuts.unknown_fields(item, _SKIP_KNOWS) or not item.until or not all(item.until):
        return None
    others = set(family.content_markers.literals)
    for search, _ in family.reopen.values():
        others.update(search.literals)
    others.difference_update(item.until)
    if any(o.startswith(u) or u.startswith(o) for o in others for u in item.until if o):
        return None
    firsts = {lit[0] for lit in (*others, *item.until) if lit}
    chars = "".join(sorted(re.escape(c) for c in firsts))
    ends = "|".join(map(re.escape, sorted(item.until, key=len, reverse=True)))
    return f"[^\\s{chars}]{{0,{item.max_len}}}+(?=(?:{ends}))"


def _plain_call(item: JsonCall) -> re.Pattern[str] | None:
    """A `json_call` object up to its arguments' `{` in the layouts models write, a name key
    with a plain string, then an arguments key, the two after an id key with a plain string
    where the item reads an id (Cohere's `tool_call_id`): where it matches,
    `JsonCallReader._whole` reads just these members, the id and the name as written (no
    escape in them, so each decodes to itself), and the arguments object, if the object
    closes right after it."""
    keys = (*item.name, *item.arguments, *item.id)
    names, arguments, ids = set(item.name), set(item.arguments), set(item.id)
    if names & arguments or names & ids or ids & arguments:
        return None
    if any('"' in key or "\\" in key or not key for key in keys):
        return None
    space = "[ \\t\\n\\r]*"
    string = '"[^"\\\\\\x00-\\x1f]*"'
    first = "(?P<id>(?!))?"  # (no id read: the group never matches)
    if item.id:
        ids_pattern = "|".join(map(re.escape, item.id))
        first = f'(?:"(?:{ids_pattern})"{space}:{space}(?P<id>{string}){space},{space})?'
    name_keys = "|".join(map(re.escape, item.name))
    arguments_keys = "|".join(map(re.escape, item.arguments))
    return metered(
        re.compile(
            f'\\{{{space}{first}"(?:{name_keys})"{space}:{space}(?P<name>{string}){space},{space}'
            f'"(?:{arguments_keys})"{space}:{space}(?=\\{{)'
        )
    )


# after a call object's arguments: its end
_CLOSE = re.compile(r"[ \t\n\r]*\}")

# a `{NAME: {…}}` call object (`name_is_key`) up to its arguments' `{`, its name a key of no
# escape (it decodes to itself): `JsonCallReader._member` names the call by it, stripped,
# and its arguments are the key's object; a member after them is the engine's (`_CLOSE`)
_KEY_CALL = metered(
    re.compile(
        '\\{[ \t\n\r]*(?P<id>(?!))?(?P<name>"[^"\\\\\x00-\x1f]*")[ \t\n\r]*:[ \t\n\r]*(?=\\{)'
    )
)

# the fields of `xml_params` the route's reading (`_Read._xml`) decides as the reader does:
# its shortcut's, the ones only `render` reads, and `json_body` (a JSON body first is the
# reader's: `_Read._xml`)
_XML_KNOWS = XML_PARAMS_KNOWS | {"write_between", "write_before_value", "json_body"}


# the markup whitespace `XmlParamsReader._json_body` passes before a JSON body's `{`
_BODY_SPACE = re.compile("[ \t\r\n]*+")


class _Xml:
    """`xml_params` arguments read as `XmlParamsReader._whole_params` reads them, one match
    of its pattern per parameter (`xml_params._whole_param`), from the reader's own tables;
    a call whose parameters that pattern does not read to a marker that ends them (a
    wrapper first, a marker that may grow, an opener whose call decides) is read by the
    reader itself (`_Read._dialect`)."""

    __slots__ = (
        "item", "stops", "param", "between", "opens", "own", "implicit", "value_ends",
        "in_value", "strip", "trim", "keep_last", "unescape", "body", "plain_ends", "reading",
    )  # fmt: skip
    # (declared: set by `of`, not by a method of the instance, so compiled they would be no
    # attributes of the class at all, docs/compiled.md)
    item: XmlParams
    stops: Any
    param: Any
    between: Any
    opens: frozenset[str]
    own: frozenset[str]
    implicit: frozenset[str]
    value_ends: Any
    in_value: Any
    strip: bool
    trim: bool
    keep_last: bool
    unescape: bool
    body: bool
    plain_ends: Any
    reading: tuple[Any, ...]

    @classmethod
    def of(cls, item: XmlParams, stops: Any) -> _Xml | None:
        if shortcuts.unknown_fields(item, _XML_KNOWS):
            return None
        between, value_opens, ends, value_ends, *_, param, in_value = _tables(item, stops)
        if param is None:  # (the reader's own, where its shortcut takes the item)
            param = xml_params._whole_param(item, between, value_opens, value_ends)
        if param is None:
            return None
        xml = cls()
        xml.item, xml.stops, xml.param = item, stops, param
        xml.between, xml.opens = between, frozenset(item.opens)
        xml.own, xml.implicit = frozenset(ends.own), frozenset(ends.implicit)
        xml.value_ends, xml.in_value = value_ends, in_value.held
        xml.strip, xml.trim = item.strip, item.trim_newline
        xml.keep_last, xml.unescape = item.keep_last_newline, item.xml_unescape
        xml.body = item.json_body  # (a `{` first: the arguments are one JSON object)
        # the parameter's own closers that end its value there and then (`_Read._xml`)
        xml.plain_ends = xml.own - value_ends.growing - xml.in_value
        # what `_Read._xml` asks of it per call, in one piece
        xml.reading = (
            param.match, xml.own, xml.implicit, xml.in_value, value_ends, value_ends.growing,
            xml.strip, xml.trim, xml.keep_last, xml.unescape,
            xml.plain_ends if not (xml.strip or xml.unescape) else frozenset(),
            xml.trim and not xml.keep_last,
        )  # fmt: skip
        return xml


class _Elements:
    """`xml_elements` arguments read as `XmlElementsReader` reads them, one match per
    element, where each is the plainest kind: a tag the reader takes as an element's
    (`TAG`: a name up to the first `>`, within its reach, not blank, no `/` first), a value
    of text holding no prefix (so no tag and no stop marker: every stop begins with the
    prefix), then its own closer. The reader reads such a value as text (`TEXT`) where its
    schema takes only text and as a leaf of its `TREE` otherwise, or where it is blank:
    the two read blank text alike, and a stop marker at the closer (`PREFIX</invoke>` of
    an element `invoke`) ends neither before it. Anything else, and a first element that
    is a wrapper, is the reader's (`_Read._dialect`)."""

    __slots__ = ("item", "open", "between", "reach", "element")
    item: XmlElements  # (declared, as `_Xml`'s)
    open: str
    between: Any
    reach: int
    element: Any

    @classmethod
    def of(cls, item: XmlElements, stops: Any) -> _Elements | None:
        if shortcuts.unknown_fields(item, frozenset({"prefix", "max_depth"})):
            return None
        prefix = item.prefix
        if not prefix or not all(stop.startswith(prefix) for stop in stops):
            return None
        elements = cls()
        elements.item = item
        elements.open = prefix + "<"
        elements.between = markers((elements.open, *stops))  # (the reader's `_between`)
        elements.reach = max(len(lit) for lit in elements.between.literals)
        first, rest = re.escape(prefix[0]), re.escape(prefix[1:])
        # (as the reader's `TAG` finds the first `>` within `_MAX_NAME` + 1 characters)
        elements.element = metered(
            re.compile(
                f"(?P<key>[^\\s<>/][^<>]{{0,{_MAX_TAG - 1}}})>"
                f"(?P<value>[^{first}]*+(?:{first}(?!{rest})[^{first}]*+)*+){re.escape(prefix)}</"
            )
        )
        return elements


_MAX_TAG = 256  # an element's name is at most this long (`xml_elements._MAX_NAME`)


class _Route:
    """What the route reads of one compiled family: per call opener, how it reads the calls
    of the shape the opener starts first (openers left out: the engine reads their calls),
    and the search for those openers."""

    __slots__ = (
        "family", "shapes", "in_section", "in_content", "starts", "margin", "asked", "stop_starts",
        "markup", "after", "good_names",
    )  # fmt: skip

    def __init__(self, family: CompiledFamily) -> None:
        self.family = family
        self.shapes: dict[str, _Shape] = {}
        for opener, starts in family.openers.items():
            # an opener that is also another marker (ignored, a block's) is the engine's
            if opener in family.ignore or opener in family.section_closes:
                continue
            shape = _shape(family, *starts[0], opener in family.peek_openers)
            if shape is not None:
                self.shapes[opener] = shape
        # where each opens a call (`Engine._marker`): in a section, and in content too
        # where calls open anywhere
        self.in_section = frozenset(self.shapes)
        self.in_content = self.in_section if family.calls_anywhere else frozenset()
        routed = sorted(self.shapes, key=len, reverse=True)
        self.starts = (
            metered(re.compile("|".join(map(re.escape, routed))), SEARCHES, "start")
            if routed
            else None
        )
        # a call ending within this of the output's end is the engine's: there the end of
        # the output (and its finish reason) may decide what a marker cut short is
        longest = max((len(lit) for lit in family.section_drop_prefixes.literals), default=0)
        longest = max([longest, *(len(o) for o in family.openers)])
        self.margin = 2 * longest + 2
        # per markers searched and openers read there, what `_asked` asks of them
        self.asked: dict[tuple[Any, frozenset[str]], tuple[Any, dict, frozenset[str]]] = {}
        # per stop markers, every beginning of one (`_stopless`)
        self.stop_starts: dict[Any, tuple[str, ...]] = {}
        # the section markers `_markup` hands to `Engine._marker` itself: those the scan
        # treats no other way first (no opener, no marker with a tail, none ignored in
        # content only); `_marker` decides what each does, ignored or not
        others = set(family.openers) | set(family.ignore_until) | family.content_ignore
        self.markup = (family.section_opens | family.section_closes) - others
        # per place after a call, outside a section and in one (`_Read._after_calls`): the
        # markers searched there and what the route asks of them
        self.after: list[tuple[Any, Any, dict, frozenset[str]] | None] = [None, None]
        # names read from headers that are the calls' ids in which `BAD_NAME` finds no
        # character no name holds (`_Read.calls`): a name comes back call after call
        self.good_names: set[str] = set()


_ROUTES: dict[int, _Route] = {}
_ROUTES_LIMIT = 256


def _forget() -> None:
    _ROUTES.clear()
    _SHARED_KEYS.clear()


shortcuts.keeps(_ROUTES)  # (and `_SHARED_KEYS`, below)
forgets(_forget)  # (their patterns count scans only when made under a test's meter)


def _route(family: CompiledFamily) -> _Route:
    route = _ROUTES.get(id(family))
    if route is None or route.family is not family:
        if len(_ROUTES) >= _ROUTES_LIMIT:
            _ROUTES.clear()
        route = _ROUTES[id(family)] = _Route(family)
    return route


def whole(
    engine: Engine, text: str, reason: str
) -> tuple[list[str], list[str], dict[int, CallParts]]:
    """What `engine.whole(text, reason)` gathers, read by the route where it can."""
    if not (ON and shortcuts.ON) or type(engine) is not Engine:
        return engine.whole(text, reason)
    route = _route(engine.family)  # (first: most families' outputs are decided by this)
    if (
        route.starts is None
        or not engine._quick
        or engine._log is not None
        or engine.finished
        or engine._headers is not None
    ):
        return engine.whole(text, reason)
    policies = engine.policies
    if policies.holds_calls or policies.keeps_text or policies.reshapes_calls:
        return engine.whole(text, reason)
    state = engine._state
    size = len(text)
    # a call ending past this is the route's only where the engine ends it where its text
    # ends (`_Shape.final`); no other call is read past it (each read is bounded by it: a
    # call the route cannot take costs no read of its own before the engine's)
    limit = size - route.margin
    pos = 0  # the text before it went to the engine or was read here
    read: _Read | None = None
    search = route.starts.search
    while True:
        found = search(text, pos) if pos < size else None
        if found is None:
            break
        at = found.start()
        if at > pos:
            pos = _markup(engine, route, text, pos, at)
            if at > pos:
                engine._run(state.pending + text[pos:at], eof=False)
                pos = at
        if not _clean(engine):
            if not (state.prompt and read is None):
                break
            # the output begins where the prompt's marker left it (`_open_by_prompt`): the
            # engine reads through this opener (the prompt's call, as a rule, or the prompt's
            # marker written once more: no call); where that leaves the engine clean but for
            # the opener held (a marker that may grow), it stood clean before it, and the
            # route reads on from there (the engine's buffer is the opener and what follows)
            lit = found.group()
            engine._run(state.pending + text[pos : at + len(lit)], eof=False)
            pos = at + len(lit)
            if state.pending == lit:
                state.pending = ""
                if _clean(engine):
                    pos = at
                    continue
                state.pending = lit
            continue
        if read is None:
            read = _Read(engine, route)
        new = read.calls(text, at, limit)
        if new == at:
            # the engine reads the rest in one piece: cut into pieces at the openers the route
            # leaves, its scan could not pass over an opener whose call gives its text back
            # (it would make the call, where the text after the opener, whole, decides)
            break
        pos = new
        if read.done:
            break
    if pos < size:
        pos = _markup(engine, route, text, pos, size)
        if pos < size:
            engine._run(state.pending + text[pos:], eof=False)
    engine._end(reason)
    content, reasoning, calls = engine._out.gather()
    if read is not None:  # (the engine numbers its own calls after these: no index twice)
        calls.update(read.made)
    return content, reasoning, calls


def _markup(engine: Engine, route: _Route, text: str, pos: int, end: int) -> int:
    """Section markers right at `pos` (ending by `end`), each handed to `Engine._marker` as
    the engine's scan (`Engine._scan`) hands it one it finds there with no text before it,
    where the engine stands clean in content or a section: its search of that place (the
    quick one: no prompt's marker, not at the output's end), a marker of `route.markup`
    (none the scan treats apart), not one it passes over, not one that may still grow (the
    scan would wait for what follows). The position after the last one (`pos`: none). A
    section's opener and closer around the calls (Kimi K2's) cost no run of the engine's
    loop and scan each. (`_marker` leaves the engine clean after a section marker: no
    call, nothing held; only its mode is asked again.)"""
    markup = route.markup
    if not markup or not _clean(engine):
        return pos
    family = engine.family
    state = engine._state
    found: Markers | None  # (`after_calls_markers` may be None: typed so, compiled)
    while pos < end:
        mode = engine.mode
        if mode == SECTION:
            found = family.quick_section_markers
        elif mode != CONTENT:
            break
        elif state.after_calls:
            found = family.after_calls_markers  # (`after_calls` is set only where it is)
        else:
            found = family.quick_content_markers
        if found is None:
            break
        marker = found.at(text, pos)
        if marker is None:
            break
        lit = marker.group()
        after = pos + len(lit)
        if (
            after > end
            or lit not in markup
            or lit in found.passable
            or (lit in found.growing and found.may_grow(text, pos, lit))
        ):
            break
        pos = engine._marker(lit, after)
    return pos


def _asked(
    route: _Route, found: Any, allowed: frozenset[str]
) -> tuple[Any, dict[str, tuple[_Shape, Any, int, Any]], frozenset[str]]:
    """What the route asks of markers `found` per call: its search (`_finds_none` where
    it has no pattern: one call per marker, no test of it), per opener it reads there
    (`allowed`), its shape, how its head is matched (the match and where from, the
    opener's position or just after it) and its whole-head match (`_fused`, or None), and
    the markers that may grow. The head of an opener the search may pass over
    (`Markers.pass_over`) is matched from the opener, after a lookahead that fails where
    the scan passes it: one match where the scan's pattern and the head's were two."""
    key = (found, allowed)
    asked = route.asked.get(key)
    if asked is not None:
        return asked
    regex = found._regex
    heads: dict[str, tuple[_Shape, Any, int, Any]] = {}
    for lit in allowed:
        shape = route.shapes[lit]
        assert shape.head is not None
        opener = "" if shape.peek else re.escape(lit)
        if lit in found.passable and found.passes is not None:
            pattern = f"(?!(?:{found.passes})){opener}{shape.head.pattern}"
            head = metered(re.compile(pattern))
            heads[lit] = (shape, head.match, 0, _fused(found, lit, pattern, shape.peek))
        else:
            pattern = f"{opener}{shape.head.pattern}"
            offset = 0 if shape.peek else len(lit)
            heads[lit] = (shape, shape.head.match, offset, _fused(found, lit, pattern, shape.peek))
    asked = route.asked[key] = (
        _finds_none if regex is None else regex.search,
        heads,
        found.growing,
    )
    return asked


def _fused(found: Any, lit: str, head: str, peek: bool) -> Any:
    """One match, from where the last call left off, of what the route's search and head
    match read there (the marker search's answer, whitespace before it, the head from the
    opener: `head`), where the two say the same: no marker of `found` begins with
    whitespace (so none starts inside the whitespace before the opener, and the search's
    earliest marker is at its end: `\\s` is `str.isspace`), none begins with `lit` or is
    begun by it (so where `lit` is, the search finds it there, unless its guard says no:
    a lookahead asks the search's own pattern there, where a marker has a guard). None where it would not (then the
    search and the head's match, as before; a lookahead opener's head reads it, asked to
    be there first). Where it fails, the route asks as before."""
    regex = found._regex
    if regex is None or lit in found.growing or any(c.isspace() for c in found.firsts):
        return None
    if any(other != lit and lit.startswith(other) for other in found.literals):
        return None
    opener = f"(?={re.escape(lit)})" if peek else ""
    # a search of literals alone (no guard: `Markers`) finds `lit` wherever it is: it need
    # not be asked
    plain = regex.pattern == "|".join(map(re.escape, found.literals))
    searched = "" if plain else f"(?=(?:{regex.pattern}))"
    return metered(re.compile(f"\\s*+{searched}{opener}{head}")).match


def _finds_none(text: str, pos: int) -> None:
    """The search of markers that have no pattern: no marker anywhere."""
    return None


def _clean(engine: Engine) -> bool:
    """Whether the engine stands where a call opener is read as a marker with nothing else
    to decide first: outside a call and a message header (in reasoning only where an
    opener opens its call at once: `_opens_in_reasoning`), nothing held."""
    state = engine._state
    mode = engine.mode
    return (
        (mode == CONTENT or mode == SECTION or (mode == REASONING and _opens_in_reasoning(engine)))
        and engine._call is None
        and not state.pending
        and state.considered is None
        and not state.reopen
        and not state.prompt
        and state.rewind is None
    )


def _opens_in_reasoning(engine: Engine) -> bool:
    """Whether a call opener met in open reasoning opens its call there and then, as
    `Engine._marker` has it: where calls are written inside reasoning (`calls_inside`), or
    where no opener is text yet (`openers_are_reasoning`) nor held until the reasoning
    decides (`considered`: reasoning text came first, and the output's end has not yet made
    openers calls). Openers open calls in reasoning only where calls open anywhere: the
    route reads none there otherwise (`_Route.in_content` is empty)."""
    state = engine._state
    if engine.family.calls_inside:
        return True
    return not (state.openers_are_reasoning or (state.reasoned and not state.calls_from_reasoning))


class _Read:
    """One output read by the route: the engine it reads for, the calls it made (as
    `DeltaBuffer.gather` gathers them), and what it looked up once for every call."""

    __slots__ = (
        "engine", "route", "made", "stops", "schemas", "xml_keys", "known", "seen", "done",
        "names", "element_keys",
    )  # fmt: skip

    def __init__(self, engine: Engine, route: _Route) -> None:
        self.engine = engine
        self.route = route
        self.made: dict[int, CallParts] = {}
        self.done = False  # the rest of the output holds no marker the engine acts on
        # per stop markers, (where the last search began, the stop it found): a search from
        # up to that stop finds it again (as `markers.NextStop`: no rescan of a long rest)
        self.stops: dict[Any, tuple[int, int]] = {}
        self.schemas: dict[str, tuple] = {}  # per tool name, what `sent_as_written` asks
        # per `xml_params` shape and tool name: a reader whose keys (`_key_of`) are the
        # engine's, and each typed parameter's text written, by its key and value text
        # (and per key text written as text, its key as written: `prefixes`)
        self.xml_keys: dict[tuple[Any, str], tuple[XmlParamsReader, dict, dict | None, dict]] = {}
        # per `xml_elements` shape and tool name: per key text, (its key as written, whether
        # its value is text, its schema, the key where it is a wrapper's), and each typed
        # value written, by key and value text
        self.element_keys: dict[tuple[Any, str], tuple[dict, dict]] = {}
        self.known: dict[str, bool] = {}  # per tool name, whether the request has it
        # per JSON shape, the last call read: [its name, its JSON text, what it read (for a
        # call object, (name, id, arguments)), whether no stop begins in it (`_stopless`;
        # None: not asked yet)]; an array's last element apart, (name, text, what it read)
        self.seen: dict[Any, Any] = {}
        # per shape and name text read (`raw`), the name and id it reads as (`name_of`)
        self.names: dict[tuple[_Shape, str], tuple[str, str | None]] = {}

    def calls(self, text: str, pos: int, limit: int) -> int:
        """Read whole calls from `pos` (each after whitespace only) as the engine would;
        the position after the last one read (`pos`: none)."""
        engine = self.engine
        route = self.route
        family = route.family
        state = engine._state
        made = self.made
        unknown_kept = engine.policies.unknown_tools == "keep"
        call_id_of = engine.call_id
        stops = self.stops
        schemas = self.schemas
        # the search the engine's scan makes here (`Engine._scan`); after a call, the one of
        # the place a call leaves it in (`_end_call`), the same for every call after
        in_section = state.in_section
        found: Markers | None  # (`after_calls_markers` may be None: typed so, compiled)
        if engine.mode == SECTION:
            found, allowed = family.quick_section_markers, route.in_section
        elif engine.mode == REASONING:  # (`_opens_in_reasoning`: `_clean` asked)
            # the engine's search in reasoning before the output's end made openers calls
            # (`calls_from_reasoning`, set only by `Engine._end`, after the route): no pass
            # (`Engine._scan`); the first call leaves the reasoning (`_end_call`)
            found, allowed = family.content_markers, route.in_content
        elif state.after_calls:
            found, allowed = family.after_calls_markers, route.in_content
        else:
            found, allowed = family.quick_content_markers, route.in_content
        first = index = engine.calls_emitted
        call_id: str | None
        size = len(text)
        known = self.known
        seen = self.seen
        names = self.names
        # `found.search`, `pass_over` and `may_grow`, asked as they answer here
        search, heads, growing = _asked(route, found, allowed)
        # the whole-head match of the last call's opener (`_fused`: the search and the
        # head's match in one, where they agree): where it reads the next call's head, that
        # call's shape is the last one's
        fused: Any = None
        while True:
            if fused is None or (head := fused(text, pos)) is None:
                marker = search(text, pos)
                if marker is None:
                    # no marker the engine acts on in the rest: no call the route reads
                    # there either (`whole` searches it no more)
                    self.done = True
                    break
                at = marker.start()
                lit = marker.group()
                entry = heads.get(lit)
                if entry is None or (at > pos and not text[pos:at].isspace()):
                    break
                if lit in growing and found.may_grow(text, at, lit):
                    break
                # the call's items, as its readers read them (`_Shape`); no match where the
                # scan passes over an opener whose call gives it back (`pass_over`)
                shape, head_at, offset, fused = entry
                head = head_at(text, at + offset)
                if head is None:
                    break
            if shape.name is not None:
                raw = head.group("raw")
                if len(raw) > shape.reach:
                    break  # (its end marker is past where the reader searches)
                if shape.header is not None:  # (`name_reader`'s reading, in line)
                    header = raw.strip()
                    found_name = shape.header(header)
                    if found_name is None:
                        break
                    got = found_name.group("name")
                    if not got or len(header) > shape.header_max:
                        break
                    if got not in route.good_names:  # (`BAD_NAME` asked once a name)
                        if _BAD_NAME(got):
                            break
                        if len(route.good_names) < _MAX_NAMES:
                            route.good_names.add(got)
                    called, call_id = got, header
                else:
                    if shape.ids:  # (a header that is the id: one a call, not remembered)
                        named = shape.namer(raw.strip())
                    else:
                        named = names.get((shape, raw))
                        if named is None:
                            named = shape.namer(raw.strip())
                            if len(names) < _MAX_NAMES:
                                names[shape, raw] = named
                    called, call_id = named
                    if not called:
                        break
            else:
                called, call_id = shape.fixed, None
            start = head.end()
            # the farthest the call may end: the end of the output where the engine may end
            # the call at its last item, else `limit` (past it the call is the engine's)
            bound = size if shape.final else limit
            if bound < size and shape.needle and text.find(shape.needle, start, bound) < 0:
                break  # (its closer is past the bound: not read twice)
            if shape.dialect is not None:
                read = None
                if shape.xml is not None:
                    read = self._xml(shape.xml, text, start, called)
                elif shape.elements is not None:
                    read = self._elements(shape.elements, text, start, called)
                if read is None:
                    read = self._dialect(shape.dialect, text, start, called)
                    if read is None:
                        break
                end, arguments = read
                tail = shape.tail.match(text, end)
                if tail is None:
                    break
                after = tail.end()  # (no whitespace before it: `_Shape.tail`)
            else:
                ends = shape.ends
                # the JSON the route read last for this shape (and tool): where the text
                # holds it again, it reads the same (a JSON value ends at its last
                # character: the decoder reads nothing past it); a text no stop marker
                # begins in (`_stopless`) ends before the next stop, wherever that is
                again = seen.get(shape)
                if (
                    again is not None
                    and again[0] == called
                    and text.startswith(again[1], start)
                    and (end := start + len(again[1])) <= bound
                    and (
                        again[3] or (again[3] is None and _stopless(again, ends, route.stop_starts))
                    )
                ):
                    # (not searched: what the stop bounds is read)
                    if shape.call is None:
                        arguments = again[1]
                    else:
                        called, call_id, arguments = again[2]
                else:
                    # where the arguments may end at most: their next stop marker, as the
                    # readers find it, remembered (`markers.NextStop`), or the end less a
                    # held tail
                    last = stops.get(ends)
                    if last is not None and last[0] <= start and (last[1] < 0 or start <= last[1]):
                        stop = last[1]
                    else:
                        stop = ends.search(text, start)[0]
                        stops[ends] = (start, stop)
                    if stop < 0:
                        stop = size - ends.held(text, start)
                    if stop > bound:
                        stop = bound
                    if (
                        again is not None
                        and again[0] == called
                        and text.startswith(again[1], start)
                        and start + len(again[1]) <= stop
                    ):
                        end = start + len(again[1])  # type: ignore[index]
                        if shape.call is None:
                            arguments = again[1]
                        else:
                            called, call_id, arguments = again[2]
                    elif shape.call is None:
                        asks = schemas.get(called)
                        if asks is None:
                            asks = self._asks(called)
                        end = _flat(text, start, stop, asks)
                        if end < 0:
                            decoded = _decoded(text, start, stop)
                            if decoded is None:
                                break
                            end = decoded[1]
                            if not sent_as_written(text, start, end, decoded[0], *asks):
                                break
                        arguments = text[start:end]
                        seen[shape] = [called, arguments, None, None]
                    elif shape.array:  # (its elements are remembered apart: `_array`)
                        elements = self._array(shape, text, start, stop)
                        if elements is None:
                            break
                        end = elements[0]
                    else:
                        # (not `read`: typed as the readers' (end, arguments) above)
                        object_read = self._call_object(shape, text, start, stop, again)
                        if object_read is None:
                            break
                        seen[shape] = [called, text[start : object_read[0]], object_read[1:], None]
                        end, called, call_id, arguments = object_read
                # the call's tail: its one literal or nothing, right there, in one test
                # (`_tail_text`; None: its last literal, where it is one, is there), else
                # its match
                if text.startswith(shape.tail_text, end):
                    after = end + shape.tail_size
                    tail = None
                else:
                    tail = shape.tail.match(text, end)
                    if tail is None:
                        break
                    after = tail.end()  # (no whitespace before it: `_Shape.tail`)
            if after > limit and not (
                shape.final == 1
                or (shape.final == 2 and (after == size or tail is None or tail.start("last") >= 0))
            ):
                # a call's last literal, when optional, must be there, or the output end
                # right after the rest of the call: the engine, at the end, reads it absent
                # (no text is left that could begin it) and ends the call there
                break
            if shape.array:  # (every call of the array, or none)
                if not (unknown_kept or self._known(elements[1])):
                    break
                if index == first:
                    found, search, heads, growing = self._after_calls(in_section)
                    if fused is not None:  # (the opener's, among what is asked there now)
                        entry = heads.get(lit)
                        fused = None if entry is None else entry[3]
                for called, call_id, arguments in elements[1]:
                    made[index] = [call_id or call_id_of(index), called, [arguments]]
                    index += 1
                pos = after
                continue
            if not unknown_kept:
                ok = known.get(called)
                if ok is None:
                    ok = known[called] = engine.tools.known(called)
                if not ok:
                    break
            made[index] = [call_id or call_id_of(index), called, [arguments]]
            pos = after
            if index == first:
                found, search, heads, growing = self._after_calls(in_section)
                if fused is not None:  # (the opener's, among what is asked there now)
                    entry = heads.get(lit)
                    fused = None if entry is None else entry[3]
            index += 1
        if index > first:
            # what `_marker`, `_commit` and `_end_call` made of the last of the whole calls,
            # each sent as read (the whitespace before each was held as layout, and
            # `_commit` dropped it)
            state.section_opener = ""
            state.ws_held.clear()
            engine.calls_emitted = index
            engine._current_name = made[index - 1][1]  # (the last call's name)
            engine.mode = SECTION if in_section else CONTENT
            state.after_calls = not in_section and bool(family.after_calls_markers)
            state.gap = True
        return pos

    def _dialect(
        self, dialect: tuple[Any, Any, Any], text: str, start: int, name: str
    ) -> tuple[int, str] | None:
        """Arguments of another dialect read by its reader, as the engine has it read them
        (`Engine._read_dialect`): (their end, their text); None unless it read them whole,
        well formed, in one read."""
        reader_class, item, stops = dialect
        sink = _Sink(self.engine.tools, name, self.stops)
        reader = reader_class(item, stops, sink)
        end = reader.read(text, start, False)
        if not reader.done:
            # closed, into this call's own sink, all the same: a reader left open may hold a
            # cycle (a JSON body's scanner holds its reader's methods until it is closed)
            reader.close()
            return None
        if sink.odd or end <= start:
            return None
        return end, "".join(sink.pieces)

    def _xml(self, xml: _Xml, text: str, start: int, name: str) -> tuple[int, str] | None:
        """`xml_params` arguments at `start` read whole, one match per parameter, as
        `XmlParamsReader` reads them (`_whole_params`, then its search between parameters
        for the marker that ends them): (their end, their text); None where the reader must
        read them itself."""
        found = self.xml_keys.get((xml, name))
        if found is None:
            if len(self.xml_keys) >= _MAX_XML_TOOLS:
                return None
            tools = self.engine.tools
            sink = _Sink(tools, name, self.stops)
            reader = XmlParamsReader(xml.item, xml.stops, sink)
            both = _shared_keys(xml, tools._root(name))
            shared, prefixes = both if both is not None else (None, {})
            found = self.xml_keys[xml, name] = (reader, {}, shared, prefixes)
        reader, written, shared, prefixes = found
        if xml.body:
            # before the first parameter, `{` after markup whitespace opens the arguments as
            # one JSON object (`XmlParamsReader._json_body`): the reader's; so is whitespace
            # up to the end, where what follows would decide
            at = _BODY_SPACE.match(text, start).end()
            if at == len(text) or text[at] == "{":
                return None
        keys = reader._keys
        # the commonest parameter, a key written as text, its value as written, ended by its
        # own closer that neither grows nor waits: one step (`prefixes`, per key text; `own`
        # less those closers: `plain_ends`), as the steps below read it; a typed value met
        # before for the key, one step too (`written`: only keys read below are in it)
        (
            match, own, implicit, held, value_ends, growing,
            strip, trim, keep_last, unescape, plain_ends, trims,
        ) = xml.reading  # fmt: skip
        pieces: list[str] = []
        append = pieces.append
        pos = start
        while True:
            whole = match(text, pos)
            if whole is None:
                # (the reader's search between parameters: text up to a marker is markup)
                at, lit = xml.between.search(text, pos)
                if at < 0 or lit in xml.opens or xml.between.may_grow(text, at, lit):
                    return None
                pos = at
                break
            end, raw, value = whole.group("end", "key", "value")
            if end in plain_ends:
                prefix = prefixes.get(raw)
                if prefix is not None:
                    if trims and value[-1:] == "\n":
                        value = value[: -2 if value[-2:] == "\r\n" else -1]
                    append(prefix + encode_basestring(value))
                    pos = whole.end()
                    continue
                plain = value  # (the steps below trim `value` themselves)
                if trims and plain[-1:] == "\n":
                    plain = plain[: -2 if plain[-2:] == "\r\n" else -1]
                piece = written.get((raw, plain))
                if piece is not None:
                    append(piece)
                    pos = whole.end()
                    continue
            if end in growing and value_ends.may_grow(text, whole.start("end"), end):
                return None
            if end in held:
                return None  # whether it ends the value is decided by what follows it
            key = keys.get(raw)
            if key is None:
                key = shared.get(raw) if shared is not None else None
                if key is None:
                    key = reader._key_of(raw)
                    if shared is not None and len(shared) < _MAX_SHARED_KEYS:
                        shared[raw] = key
            if key.wraps or key.dropped:
                return None  # (a wrapper's members are written in its place)
            if strip:
                value = value.rstrip()
            elif trim and value[-1:] == "\n" and not (keep_last and end in own):
                value = value[: -2 if value[-2:] == "\r\n" else -1]
            if unescape:
                value = xml_unescape(value)
            if key.as_text:
                piece = key.prefix + encode_basestring(value)
                if len(prefixes) < _MAX_SHARED_KEYS:
                    prefixes[raw] = key.prefix  # (neither wrapper nor dropped: above)
            else:  # typed once per key and text
                piece = written.get((raw, value))
                if piece is None:
                    piece = key.prefix + json_text(reader._typed_value(key, value))
                    if len(written) < _MAX_WRITTEN:
                        written[raw, value] = piece
            pieces.append(piece)
            if end in own:
                pos = whole.end()
            elif end in implicit:
                pos = whole.start("end")
            else:  # a marker of the call or the stream: the arguments end here
                pos = whole.start("end")
                break
        if pos <= start:
            return None
        return pos, "{" + ", ".join(pieces) + "}"

    def _elements(
        self, elements: _Elements, text: str, start: int, name: str
    ) -> tuple[int, str] | None:
        """`xml_elements` arguments at `start` read whole, one match per element, as
        `XmlElementsReader` reads them (`_Elements`): (their end, their text); None where
        the reader must read them itself."""
        tools = self.engine.tools
        found = self.element_keys.get((elements, name))
        if found is None:
            if len(self.element_keys) >= _MAX_XML_TOOLS:
                return None
            # (a key's reading depends on its tool's schema only: kept from output to
            # output per schema, as `xml_params` keys are)
            shared = _shared_keys(elements, tools._root(name))
            found = self.element_keys[elements, name] = (
                {} if shared is None else shared[0],
                {},
            )
        keys, written = found
        between = elements.between
        element = elements.element.match
        opener = elements.open
        size, reach = len(text), elements.reach
        pieces: list[str] = []
        pos = start
        while True:
            # (the reader's `BETWEEN`: text up to a tag or a stop marker is markup)
            at, lit = between.search(text, pos)
            if at < 0:
                return None
            # (a marker may grow into a longer one only where the text ends within the
            # longest of them: `Markers.may_grow`)
            if size - at <= reach and between.undecided(text, at, lit, False):
                return None
            if lit != opener:
                break  # a marker of the call or the stream: the arguments end here
            whole = element(text, at + len(opener))
            if whole is None:
                return None
            raw, value = whole.group("key", "value")
            end = whole.end()
            if not text.startswith(raw, end) or text[end + len(raw) : end + len(raw) + 1] != ">":
                return None  # (another element's closer, or a stop marker)
            key = keys.get(raw)
            if key is None:
                stripped = strip_space(raw)
                schema = tools.param_schema(name, stripped)
                wrapper = stripped if stripped in WRAPPER_KEYS else ""
                key = (encode_basestring(stripped) + ": ", streams_as_text(schema), schema, wrapper)
                if len(keys) < _MAX_SHARED_KEYS:
                    keys[raw] = key
            if not pieces and key[3] and tools.lacks_property(name, key[3]):
                return None  # (a first element that is a wrapper: its members in its place)
            if key[1]:
                pieces.append(key[0] + encode_basestring(value))
            else:  # typed once per key and text, as the reader's leaf of its `TREE`
                piece = written.get((raw, value))
                if piece is None:
                    piece = key[0] + json_text(element_value(ElementNode(raw, [value]), key[2]))
                    if len(written) < _MAX_WRITTEN:
                        written[raw, value] = piece
                pieces.append(piece)
            pos = end + len(raw) + 1
        return at, "{" + ", ".join(pieces) + "}"

    def _after_calls(self, in_section: bool) -> tuple[Any, Any, dict, frozenset[str]]:
        """The markers searched after a call and what the route asks of them there
        (`_asked`, for the openers it reads there): the place a call leaves the engine in
        (`_end_call`), the same for every call after; made once per family and place."""
        route = self.route
        after = route.after[in_section]
        if after is not None:
            return after
        family = route.family
        if in_section:
            found, allowed = family.quick_section_markers, route.in_section
        elif family.after_calls_markers:
            found, allowed = family.after_calls_markers, route.in_content
        else:
            found, allowed = family.quick_content_markers, route.in_content
        search, heads, growing = _asked(route, found, allowed)
        after = route.after[in_section] = (found, search, heads, growing)
        return after

    def _known(self, elements: list[tuple[str, str | None, str]]) -> bool:
        """Whether the request has the tool of every element."""
        known = self.known
        for called, _, _ in elements:
            ok = known.get(called)
            if ok is None:
                ok = known[called] = self.engine.tools.known(called)
            if not ok:
                return False
        return True

    def _array(
        self, shape: _Shape, text: str, start: int, stop: int
    ) -> tuple[int, list[tuple[str, str | None, str]]] | None:
        """A `json_call_array`'s elements from after its `[`, each a call object read whole
        (`_call_object`), to its `]`: (the end after it, per element its name, id and
        arguments), or None (the engine reads the array: an element it does not read so,
        one that is no call, an empty array, anything else between them)."""
        seen = self.seen
        element = (shape, "element")  # (the last element read, remembered apart)
        elements: list[tuple[str, str | None, str]] = []
        pos = start
        while True:
            pos = _BODY_SPACE.match(text, pos, stop).end()
            again = seen.get(element)
            if again is not None and text.startswith(again[1], pos) and pos + len(again[1]) <= stop:
                pos += len(again[1])
                elements.append(again[2])
            else:
                read = self._call_object(shape, text, pos, stop, again)
                if read is None:
                    return None
                seen[element] = ("", text[pos : read[0]], read[1:])
                pos = read[0]
                elements.append(read[1:])
            pos = _BODY_SPACE.match(text, pos, stop).end()
            if pos < stop and text[pos] == ",":
                pos += 1
                continue
            if pos < stop and text[pos] == "]":
                return pos + 1, elements
            return None

    def _asks(self, name: str) -> tuple:
        """What `sent_as_written` asks of tool `name`'s schemas, as the engine's sink answers."""
        tools = self.engine.tools
        asks = self.schemas[name] = (
            lambda key: key in WRAPPER_KEYS and tools.lacks_property(name, key),
            lambda key: tools.param_schema(name, key),
            tools.typed_keys(name),
        )
        return asks

    def _as_written(self, text: str, start: int, found: tuple[dict, int], name: str) -> bool:
        """Whether the arguments decoded at `start` go out as written for tool `name`."""
        asks = self.schemas.get(name) or self._asks(name)
        value, end = found
        return sent_as_written(text, start, end, value, *asks)

    def _call_object(
        self, shape: _Shape, text: str, start: int, stop: int, again: Any
    ) -> tuple[int, str, str | None, str] | None:
        """A `json_call` object at `start`, read whole as `JsonCallReader._whole` reads it:
        (its end, the name, the id, the arguments as written), or None. `again`: what the
        route remembers of the last object it read of this shape (`_Read.seen`; index 2,
        what that read), or None."""
        plain = shape.plain.match(text, start, stop) if shape.plain is not None else None
        if plain is not None:
            # (`plain_name` and `closer`, not `name` and `close`: the names typed otherwise
            # below, which compiled would refuse these values, docs/compiled.md)
            raw = plain.group("name")
            plain_name = raw[1:-1].strip()
            # (named within the reader's bound: an id first may be long)
            if plain_name and len(raw) <= _MAX_NAME and plain.end("name") - start <= _BEFORE_NAME:
                at = plain.end()
                written_id = plain.group("id")  # (a string of no escape: itself)
                if written_id is not None:
                    written_id = written_id[1:-1]
                    # an object of another id (Cohere's numbered calls) before the arguments
                    # the last one read, for the same tool, where the text holds them again
                    # (by `stop`): they read the same (decoded to the same value, ending at
                    # their last character, sent as written: `again`'s were)
                    if again is not None:
                        last = again[2]
                        if (
                            last[0] == plain_name
                            and text.startswith(last[2], at)
                            and at + len(last[2]) <= stop
                        ):
                            closer = _CLOSE.match(text, at + len(last[2]), stop)
                            if closer is not None:
                                return closer.end(), plain_name, written_id, last[2]
                found = _decoded(text, at, stop, MAX_DEPTH - 1)
                if found is not None:
                    closer = _CLOSE.match(text, found[1], stop)
                    if closer is not None:
                        if not self._as_written(text, at, found, plain_name):
                            return None
                        return closer.end(), plain_name, written_id, text[at : found[1]]
        if shape.call is not None and shape.call.name_is_key:
            return None  # (any other layout of it: the engine's)
        if not text.startswith("{", start):
            return None  # no object (an array's element): `whole_members` takes its `{` as read
        whole = whole_members(text, start, stop)  # (not `found`: typed otherwise above)
        if whole is None:
            return None
        members, close = whole
        item = shape.call
        assert item is not None
        args_keys, name_keys, id_keys = item.arguments, item.name, item.id
        named = False
        args_at = -1
        for key, begin, end, _ in members:
            if key in args_keys:
                if not named or args_at >= 0:
                    return None
                args_at = begin
            elif key in name_keys and not named:
                raw = text[begin:end]
                if not (WHOLE_STRING.fullmatch(raw) and raw[1:-1].strip()) or len(raw) > _MAX_NAME:
                    return None
                if end - start > _BEFORE_NAME:
                    return None
                named = True
        if args_at < 0 or text[args_at] != "{":
            return None
        name: str | None = None
        call_id: str | None = None
        arguments = ""
        for key, begin, end, value in members:
            if key in args_keys:
                if name is None or not self._as_written(text, begin, (value, end), name):
                    return None
                arguments = text[begin:end]
                continue
            if key in id_keys and name is None and call_id is None:
                ok, got = loads_or_none(text[begin:end])
                if ok and isinstance(got, (str, int)) and not isinstance(got, bool):
                    call_id = str(got)
            if key in name_keys and name is None:
                ok, got = loads_or_none(text[begin:end])
                if ok and isinstance(got, str) and got.strip() and len(got.strip()) <= _MAX_NAME:
                    name = got.strip()
        if name is None:
            return None
        return close, name, call_id, arguments


class _Sink:
    """What a dialect's reader sends to and asks of the engine (`protocol.Sink`), for one
    call of the route: the pieces of its arguments, the answers of the engine's own
    `DialectSink` for the call's tool; a name read (a call of a list) or arguments that
    never formed an object make the call the engine's (`odd`)."""

    __slots__ = ("tools", "name", "pieces", "odd", "_stops", "schema_of")

    log = None  # (not tracing)

    def __init__(self, tools: Any, name: str, stops: dict[Any, Any]) -> None:
        self.tools = tools
        self.name = name
        self.pieces: list[str] = []
        self.odd = False
        self._stops = stops
        # (`schema_of(key)`: the tool's schema of `key`, asked once per key of a call)
        self.schema_of = partial(tools.param_schema, name)

    def emit_args(self, text: str) -> None:
        if text:
            self.pieces.append(text)

    def commit_call(self, name: str, call_id: str | None = None) -> None:
        self.odd = True

    def malformed_args(self) -> None:
        self.odd = True

    def typed_keys(self) -> frozenset[str]:
        return self.tools.typed_keys(self.name)

    def unwraps(self, key: str) -> bool:
        return key in WRAPPER_KEYS and self.tools.lacks_property(self.name, key)

    def next_stop(self, stops: tuple[str, ...]) -> NextStop:
        key = ("next", stops)
        found = self._stops.get(key)
        if found is None:
            found = self._stops[key] = NextStop(markers(stops))
        return found


# arguments up to this long are decoded in one slice: a failure costs what the slice holds
_SLICE = 4096

# per output, the tools whose `xml_params` keys the route remembers, and the typed values
# (key, value text) it remembers written
_MAX_XML_TOOLS = 64
# what a parameter's key text reads as (`XmlParamsReader._key_of`), per `xml_params` item
# and tool schema (its resolved root: one per schema value, shared by every request passing
# that value) and kept from output to output: the reading depends on nothing else where
# the route reads (no policy that drops or types undeclared parameters, `_Sink`), and a
# server's requests name the same tools' keys again and again
# (and per `xml_elements` item and schema, its keys' readings: `_Read._elements`)
_SHARED_KEYS: dict[tuple[Any, int], tuple[Any, dict[str, Any], dict[str, str]]] = {}
shortcuts.keeps(_SHARED_KEYS)
_MAX_SHARED = 64  # item and schema pairs
_MAX_SHARED_KEYS = 1024  # keys each


def _shared_keys(xml: _Xml | _Elements, root: Any) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The key readings kept for `xml` and the tool schema `root`, and the prefixes of the
    keys among them written as text (`_Read._xml`); None: no schema."""
    if root is None:
        return None
    found = _SHARED_KEYS.get((xml, id(root)))
    if found is None or found[0] is not root:  # (kept with it: its id is no other's)
        if len(_SHARED_KEYS) >= _MAX_SHARED:
            _SHARED_KEYS.clear()
        found = _SHARED_KEYS[xml, id(root)] = (root, {}, {})
    return found[1], found[2]


# per output, the name texts whose reading the route remembers
_MAX_NAMES = 256
_MAX_WRITTEN = 1024


# a JSON object of plain members (strings, numbers, literals), as the strict decoder reads
# one: what it matches, the decoder decodes to the same end (an integer part of at most
# 4,000 digits: Python refuses to make an int of more than 4,300)
_JSON_SPACE = "[ \t\n\r]*+"
_JSON_STRING = '"[^"\\\\\x00-\x1f]*+(?:\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\\\x00-\x1f]*+)*+"'
_JSON_OTHER = (  # (a plain value that is no string)
    "-?+(?:0|[1-9][0-9]{0,3999}+)(?:\\.[0-9]++)?+(?:[eE][-+]?+[0-9]++)?+|true|false|null"
)
_JSON_PLAIN = f"(?:{_JSON_STRING}|{_JSON_OTHER})"
_FLAT = metered(
    re.compile(
        f"\\{{{_JSON_SPACE}(?:(?P<first>{_JSON_STRING}){_JSON_SPACE}:{_JSON_SPACE}{_JSON_PLAIN}"
        f"{_JSON_SPACE}(?:,{_JSON_SPACE}{_JSON_STRING}{_JSON_SPACE}:{_JSON_SPACE}{_JSON_PLAIN}"
        f"{_JSON_SPACE})*+)?+\\}}"
    )
)

# the same object read in two matches, faster on the layout models write (`_flat`): `{`,
# then members each written `"KEY": VALUE, ` (a plain key, one space after its colon and
# its comma: fewer steps of the pattern per member; group `first`, the first key), then the
# rest as `_FLAT` reads it after a member (`_FLAT_MORE`: at least one member more)
_PLAIN_KEY = '"[^"\\\\\x00-\x1f]*+"'
_RUN_MEMBER = f"{_PLAIN_KEY}: (?:{_PLAIN_KEY}|{_JSON_PLAIN}), "
_FLAT_RUN = metered(
    re.compile(
        f"\\{{(?:(?P<first>{_PLAIN_KEY}): (?:{_PLAIN_KEY}|{_JSON_PLAIN}), (?:{_RUN_MEMBER})*+)?+"
    )
)
# the run's members again with every string `"[^"]*+"`: one character test a character (the
# engine's string class is a set, tested by a call a character); on a run holding no
# backslash and no control character (`_flat`) each string of it is one the strict
# class reads to the same closing quote, so the run is `_FLAT_RUN`'s, member for member, and
# ends where it does (where the next member is one only the strict class reads, an escaped
# quote, `_FLAT_MORE` reads it from there as it would after `_FLAT_RUN`)
_LOOSE_STRING = '"[^"]*+"'
_LOOSE_VALUE = f"(?:{_LOOSE_STRING}|{_JSON_OTHER})"
_LOOSE_MEMBER = f"{_LOOSE_STRING}: {_LOOSE_VALUE}, "
_LOOSE_RUN = metered(
    re.compile(f"\\{{(?:(?P<first>{_LOOSE_STRING}): {_LOOSE_VALUE}, (?:{_LOOSE_MEMBER})*+)?+")
)
# a backslash, and the bytes no JSON string holds as they are (a control character is one
# byte in UTF-8, and no byte of a longer character's is below 0x80)
_UNCLEAN = bytes(range(0x20)) + b"\\"
_FLAT_MORE = metered(
    re.compile(
        f"{_JSON_SPACE}{_JSON_STRING}{_JSON_SPACE}:{_JSON_SPACE}{_JSON_PLAIN}"
        f"{_JSON_SPACE}(?:,{_JSON_SPACE}{_JSON_STRING}{_JSON_SPACE}:{_JSON_SPACE}{_JSON_PLAIN}"
        f"{_JSON_SPACE})*+\\}}"
    )
)


_SAMPLE = 512


def _flat(text: str, pos: int, stop: int, asks: tuple) -> int:
    """The end of JSON arguments at `pos` (ending by `stop`) sent as written, where they
    are an object of plain members none of which typing reads (no typed key's text in it,
    and no escape that could spell one) and whose first key is no wrapper: their text
    decides that without decoding them (`sent_as_written` of their value); -1 where the
    value decides (then `_decoded`). Where escapes outnumber members in the first
    `_SAMPLE` characters (a long string), the decoder reads faster than the pattern: -1 too."""
    sample = pos + _SAMPLE if pos + _SAMPLE < stop else stop
    if text.count("\\", pos, sample) * 4 > text.count('"', pos, sample):
        return -1
    # its first members in the layout models write (`_FLAT_RUN`), the rest as `_FLAT` reads
    # it after a member (`_FLAT_MORE`); where no member is so written, `_FLAT` reads it all.
    # JSON reads one way, so the two matches end where `_FLAT` ends.
    run = _LOOSE_RUN.match(text, pos, stop)
    if run is None:
        return -1  # (no object: `_FLAT` fails there too)
    after = run.end()
    if after - pos > 1:
        # the run holds no backslash and no control character (none of `_UNCLEAN` in its
        # UTF-8 bytes: a byte-table pass, where a pattern's set tests each character by a
        # call): its loose strings are strict ones; else it is the strict pattern's
        written = text[pos:after].encode("utf-8", "surrogatepass")
        if len(written.translate(None, _UNCLEAN)) < len(written):
            run = _FLAT_RUN.match(text, pos, stop)
            if run is None:
                return -1
            after = run.end()
    first = run.group("first")
    if first is None:
        found = _FLAT.match(text, pos, stop)
        if found is None:
            return -1
        first = found.group("first")
    else:
        found = _FLAT_MORE.match(text, after, stop)
        if found is None:
            return -1
    end = found.end()
    unwraps, _, typed_keys = asks
    if typed_keys:
        if text.find("\\", pos, end) >= 0:
            return -1
        for key in typed_keys:
            if text.find(f'"{key}"', pos, end) >= 0:
                return -1
    if first is not None:
        if "\\" in first:
            return -1
        if unwraps(first[1:-1]):
            return -1
    return end


def _stopless(again: list, ends: Any, starts: dict[Any, tuple[str, ...]]) -> bool:
    """Whether no stop marker of `ends` (all literals) begins inside the JSON text
    `again[1]`, wherever the text holds it: none is in it, and no end of it begins one
    (so no marker there reaches past it, and no tail held at the output's end starts in
    it); kept as `again[3]`. (`starts`: per stop markers, every beginning of one, made once
    per family: one `endswith` asks them all.)"""
    json = again[1]
    found = starts.get(ends)
    if found is None:
        found = starts[ends] = tuple(
            sorted({lit[:k] for lit in ends.literals for k in range(1, len(lit) + 1)})
        )
    clear = not json.endswith(found) and not any(lit in json for lit in ends.literals)
    again[3] = clear  # (its markers are literals: a guard only ever passes one over)
    return clear


def _decoded(text: str, pos: int, stop: int, depth: int = MAX_DEPTH) -> tuple[dict, int] | None:
    """`json_args.decoded_object(text, pos, stop)` (nested no deeper than `depth`: a call
    object's arguments one less, as `whole_members` reads them), decided alike: a short
    object is read from its slice at once (no `}` search first: the slice bounds what a
    failure costs); a longer one from the text itself, once (a JSON value ends at its last
    character, so an object that ends by `stop` decodes the same either way). A failure
    there costs what the decoder's error counts, the lines before it: the route stops at a
    call it cannot read, so that is paid at most twice an output (`whole`)."""
    try:
        if stop - pos > _SLICE:
            value, end = scan_value(text, pos)
            if end > stop:
                return None
        else:
            value, end = scan_value(text[pos:stop], 0)
            end += pos
    except (StopIteration, ValueError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    if end - pos > _SHALLOW and len(value) <= _FEW and not _nests(value):
        return value, end  # (one level deep: no counting of its text)
    if text.count("{", pos, end) + text.count("[", pos, end) > depth and deeper_than(value, depth):
        return None
    return value, end


# a long object of a few members, none of them a container, is one level deep (a long
# string's arguments): asked of its members, not counted over its text
_SHALLOW = 1024
_FEW = 16


def _nests(value: dict) -> bool:
    """Whether a member of `value` is a container."""
    for member in value.values():
        if type(member) is dict or type(member) is list:
            return True
    return False
