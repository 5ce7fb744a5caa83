"""The key/value-in-markup argument dialect: `<parameter=KEY>VALUE</parameter>` and kin.

Values are text. A value whose schema allows only strings (or that has no schema)
streams as a JSON string as its characters arrive, holding back only what could still
be a closing marker, the markup's newline, trailing whitespace that `strip` removes, or
half an XML entity. Any other value is typed from the schema once complete and released
whole: a typed value is never streamed early, so coercion can never rewrite bytes a
client already holds. A parameter flagged as JSON by its key (DSML's `string="false"`)
is decoded as JSON, falling back to its text, then typed. A first parameter that is a lone
wrapper around the arguments (`runtime/unwrap.py`) is held until complete, and the members
of the object it holds are written in its place.

The arguments are written as `json.dumps` would (`{"k": "v", "n": 3}`), each parameter
once, in the order the model wrote them. A repeated name is written again: the streamed
text stays a prefix, and `json.loads` keeps its first position with the last value.
"""

from __future__ import annotations

from functools import lru_cache
from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C
import re
from typing import Any, Final, NamedTuple, Sequence

from .batched import MarkupArgs
from .coerce import coerce_flagged_json, coerce_text, decode_json_or_text, json_text
from .in_value import OpenerInValue
from .json_args import JsonArgsReader
from .markers import Markers, markers
from .scan_meter import forgets, metered
from .protocol import Call, DialectRow, RenderError, Sink, render_value_text, the_call
from . import shortcuts
from .schemas import streams_as_text
from .spec import JsonArgs, XmlParams
from .unwrap import WRAPPER_KEYS, members_text, wrapped_text
from .unicode import MARKUP_SPACE
from .xml_entities import xml_unescape

# the reader's states (Final: compiled, a constant, not a look-up in this module's dict)
BETWEEN: Final = 0
KEY: Final = 1
VALUE_OPEN: Final = 2
VALUE_START: Final = 3
VALUE: Final = 4
DONE: Final = 5
CDATA: Final = 6
JSON: Final = 7
BODY: Final = 8  # before the first parameter with `json_body`, where a `{` may open a JSON body

CDATA_OPEN: Final = "<![CDATA["
CDATA_CLOSE: Final = "]]>"

_MAX_KEY: Final = 256
_MAX_ENTITY: Final = 10  # "&#x10FFFF;"
_WHOLE_LOOK: Final = 1024  # the rest of a text looked through for a closer before a whole match
_NEVER: Final = 1 << 62  # a length no text reaches


def _crlf_spellings(literals: Sequence[str]) -> tuple[str, ...]:
    """`literals` and, for each that holds a line end (`</parameter\n`, a drifted closer at
    the end of its line), the same with `\r\n`: a value's newline is `\n` or `\r\n`
    (`trim_newline` reads both as one), so a marker that ends a line ends a CRLF line too."""
    crlf = (lit.replace("\r\n", "\n").replace("\n", "\r\n") for lit in literals if "\n" in lit)
    return tuple(dict.fromkeys((*literals, *crlf)))


class Closers(NamedTuple):
    """The markers that end a value, every spelling: its own closers (consumed) and the
    implicit ones (left for what follows)."""

    own: tuple[str, ...]
    implicit: tuple[str, ...]


@lru_cache(maxsize=256)
def closers(item: XmlParams) -> Closers:
    """The item's value closers with their CRLF spellings (the reader and the exporter
    read the same set)."""
    return Closers(_crlf_spellings(item.value_ends), _crlf_spellings(item.implicit_end))


def _json_string_body(text: str) -> str:
    return encode_basestring(text)[1:-1]


class _Key(NamedTuple):
    """What a parameter's raw key text decides, worked out once per call and key."""

    name: str
    json_flagged: bool
    schema: dict | None
    as_text: bool
    prefix: str  # the key as the arguments write it: `"name": `
    wraps: bool  # a lone wrapper around the arguments, if it comes first
    dropped: bool  # not written: `undeclared_params="drop"` and undeclared
    # typed values written, by their text (`_typed_piece`): a key lives as long as the
    # parser keeps its tool's keys, and a model repeats its values
    written: dict[str, str]


_MAX_WRITTEN: Final = 64  # typed values remembered per key, each at most _MAX_WRITTEN_TEXT long
_MAX_WRITTEN_TEXT: Final = 64


_MAX_KEYS: Final = 256  # keys remembered per call; a model inventing names is not remembered

# a `_Key` made from its fields' tuple (`NamedTuple`'s own `__new__` is a Python call)
_new_key = tuple.__new__


def _plain_keys(item: XmlParams) -> bool:
    """Whether `item`'s keys are read as written less markup whitespace: no key pattern,
    no entities, not verbatim (`XmlParamsReader._read_plain_key`)."""
    return not (item.verbatim_keys or item.key_pattern or item.xml_unescape or item.unescape_keys)


# the fields `_whole_param` and `_whole_params` decide as the state machine does
SHORTCUT_KNOWS = frozenset(
    {
        "open",
        "key_end",
        "value_end",
        "implicit_end",
        "trim_newline",
        "keep_last_newline",
        "value_open",
        "key_pattern",
        "text_when",
        "strip",
        "xml_unescape",
        "unescape_keys",
        "cdata",
        "open_alternatives",
        "key_end_alternatives",
        "value_end_alternatives",
        "write_flush",  # how `render` writes, never how text is read
        "write_between",
        "write_before_value",
        "write_python",
    }
)


# the fields the per-marker shortcuts (`_value_first`, `_open_at`, `_key_end_at`,
# `_value_open_at`, `_own_at`) decide as the state machine does: those of the whole-parameter
# shortcut, and two that only the states before a parameter (`json_body`) and the key's
# reading (`verbatim_keys`) look at, which these shortcuts leave to the state machine
MARKER_KNOWS = SHORTCUT_KNOWS | {"json_body", "verbatim_keys"}


def _whole_param_pattern(
    item: XmlParams,
    between: Markers,
    value_opens: Markers,
    value_ends: Markers,
    after_open: bool = False,
    head: bool = False,
    after_key: bool = False,
) -> re.Pattern[str] | None:
    """One pattern for a whole parameter already in the text, from where the last one
    ended: its key, its value and the marker that ends the value; None when this markup
    has no such shortcut. `after_open`: the rest of one from just past its OPEN, where the
    state machine reads the key (`XmlParamsReader.read`'s KEY step). `head`: the parameter's
    start instead, up to its value's first text, that text a run of characters no rule
    decides (`_param_head`); `after_key`, that start from past its key, where the state
    machine looks for VALUE_OPEN.

    The pattern decides exactly what the state machine decides on the same text:
    whitespace before OPEN (when no marker can start inside it), the first KEY_END ends the
    key (keys up to _MAX_KEY), VALUE_OPEN directly after it (or after up to _MAX_KEY
    whitespace characters, as far as the state machine looks for it), the leading
    whitespace or newline the value drops (taken whole, as the state machine skips it
    before it searches), and the left-most end marker, longest first at a tie. Anything
    else does not match and is left to the state machine.
    """
    opens = item.opens
    if any(lit not in opens and lit.startswith(opens) for lit in between.literals):
        return None  # OPEN could still be the start of a longer marker
    if any(a != b and a.startswith(b) for a in opens for b in opens):
        return None  # one spelling of OPEN is the start of another
    no_space_marker = not any(lit[0].isspace() for lit in between.literals)
    ends = value_ends.literals
    alternatives = "|".join(re.escape(lit) for lit in ends)  # longest first, as in Markers
    firsts = "".join(sorted({re.escape(lit[0]) for lit in ends}))
    if item.cdata:  # a CDATA section is left to the state machine: no match across one
        alternatives += "|" + re.escape(CDATA_OPEN)
        firsts = "".join(sorted({*firsts, re.escape(CDATA_OPEN[0])}))
    parts = [r"\s*+" if no_space_marker else ""]
    # atomic: the key ends at the first KEY_END, never at a later one
    key_ends = "|".join(re.escape(lit) for lit in sorted(item.key_ends, key=len, reverse=True))
    key = rf"(?>(?P<key>.{{0,{_MAX_KEY}}}?)(?:{key_ends}))"
    if item.key_ends and all(len(lit) == 1 for lit in item.key_ends):
        # the same first KEY_END, found by a run of characters that end no key (no try of
        # the ends at every character of the key)
        chars = "".join(sorted({re.escape(lit) for lit in item.key_ends}))
        key = rf"(?P<key>[^{chars}]{{0,{_MAX_KEY}}}+)(?:{key_ends})"
    if after_key:  # (the state machine looks for VALUE_OPEN from here on)
        parts = []
    elif after_open:  # (the state machine reads the key from here on as it does past OPEN)
        parts = [key]
    else:
        parts += ["(?:" + "|".join(re.escape(lit) for lit in opens) + ")", key]
    if item.value_open:
        others = [lit for lit in value_opens.literals if lit != item.value_open]
        if any(lit.startswith(item.value_open) for lit in others):
            return None  # a longer marker could win where VALUE_OPEN matches
        if not any(lit[0].isspace() for lit in others):
            parts.append(rf"\s{{0,{_MAX_KEY}}}+")
        parts.append(re.escape(item.value_open))
    if item.strip:
        parts.append(r"\s*+")
    elif item.trim_newline:
        parts.append(r"(?:\r?\n)?+")  # `\r\n` is one newline
    if head:
        # the value's first text: characters that begin no marker, no CDATA section, no
        # entity and no line end (what a value's rules may hold back), one at least
        stops = {lit[0] for lit in ends} | {"\r", "\n"}
        if item.cdata:
            stops.add(CDATA_OPEN[0])
        if item.xml_unescape:
            stops.add("&")
        parts.append("(?P<value>[^" + "".join(sorted(map(re.escape, stops))) + "]++)")
        # then what the VALUE step holds back and returns at, to the end of the text: a line
        # end the markup's newline may be (held, `pend`, where `trim_newline` trims one and
        # no marker begins with one), and the start of a marker that is not yet one
        lits, prefixes, _ = _value_marks(item, value_ends)
        first = _value_first(value_ends, item.cdata)
        newline = r"(?:\r\n|\r|\n)?" if item.trim_newline and first not in ("", "\r", "\n") else ""
        held = ""
        if prefixes:
            marks = "|".join(map(re.escape, sorted(lits, key=len, reverse=True)))
            starts = "|".join(map(re.escape, sorted(prefixes, key=len, reverse=True)))
            held = f"(?!{marks})(?:{starts})?"
        parts.append(f"(?=(?P<pend>{newline}){held}\\Z)")
        return re.compile("".join(parts), re.DOTALL)
    # the value: runs of characters that start no marker, or one that starts no marker here
    ending = "|".join(re.escape(lit) for lit in ends)
    parts.append(rf"(?P<value>(?:[^{firsts}]++|(?!{alternatives}).)*+)(?P<end>{ending})")
    return re.compile("".join(parts), re.DOTALL)


def _whole_min(item: XmlParams, value_ends: Markers) -> int:
    """The fewest characters a whole parameter takes (`_whole_param_pattern`: its markers,
    each at its shortest; key, value and whitespace may be empty): shorter text is not one,
    so no match need be tried (a streamed delta most often holds less)."""
    return (
        min(map(len, item.opens))
        + min(map(len, item.key_ends))
        + len(item.value_open)
        + min(map(len, value_ends.literals), default=0)
    )


@lru_cache(maxsize=256)
def _whole_param(
    item: XmlParams, between: Markers, value_opens: Markers, value_ends: Markers
) -> re.Pattern[str] | None:
    """`_whole_param_pattern`, made once per family (metered under a test's scan meter)."""
    pattern = _whole_param_pattern(item, between, value_opens, value_ends)
    return None if pattern is None else metered(pattern)


def _value_first(value_ends: Markers, cdata: bool) -> str:
    """The one character every marker that ends a value (and a CDATA section's opener)
    begins with, "" when they begin with several: a value's text without it holds no such
    marker nor the start of one, so `_value` would take all of it as value text (one
    `str.find`, cheaper than the search and held tail it stands in for, and than a regex
    that fails where a short value ends in the text)."""
    firsts = {lit[0] for lit in value_ends.literals}
    if cdata:
        firsts.add(CDATA_OPEN[0])
    return firsts.pop() if len(firsts) == 1 else ""


@lru_cache(maxsize=256)
def _rest_param(
    item: XmlParams, between: Markers, value_opens: Markers, value_ends: Markers
) -> re.Pattern[str] | None:
    """The rest of a whole parameter past its OPEN, for where a delta ended inside the key:
    `_whole_param_pattern(after_open=True)`, made once per family, None where the whole
    parameter has no pattern (the same refusals; metered under a test's scan meter)."""
    pattern = _whole_param_pattern(item, between, value_opens, value_ends, after_open=True)
    if pattern is None or pattern.groups != 3 or list(pattern.groupindex) != _REST_GROUPS:
        return None  # (the reader takes its groups in order: `Match.groups()`)
    return metered(pattern)


_REST_GROUPS = ["key", "value", "end"]


@lru_cache(maxsize=256)
def _param_head(
    item: XmlParams,
    between: Markers,
    value_opens: Markers,
    value_ends: Markers,
    start: int,
) -> re.Pattern[str] | None:
    """A parameter's start up to its value's first text, from between parameters (`start`
    BETWEEN), past its OPEN (KEY) or past its key (VALUE_OPEN, where the markup has a value
    opener): `_whole_param_pattern(head=True)`, made once per family, None where the whole
    parameter has no pattern or values are stripped (a value's first text and the
    whitespace `strip` skips before it are then not told apart by one match; metered under
    a test's scan meter). A streamed delta most often ends inside a value, and this reads
    the key, the value's opener and its text so far in one match."""
    if item.strip or (start == VALUE_OPEN and not item.value_open):
        return None
    pattern = _whole_param_pattern(
        item,
        between,
        value_opens,
        value_ends,
        after_open=start == KEY,
        head=True,
        after_key=start == VALUE_OPEN,
    )
    groups = ["value", "pend"] if start == VALUE_OPEN else ["key", "value", "pend"]
    if pattern is None or list(pattern.groupindex) != groups:
        return None
    return metered(pattern)


forgets(_whole_param.cache_clear)
forgets(_rest_param.cache_clear)
forgets(_param_head.cache_clear)


def _value_marks(
    item: XmlParams, value_ends: Markers
) -> tuple[tuple[str, ...], frozenset[str], int]:
    """The markers that end a value (and a CDATA section's opener, where one may open),
    their proper prefixes, and the longest of those, when every one begins with the same
    character (`_value_first`): a value's text is then looked through at that character's
    places only, each a `str.startswith` of them or a look-up of the rest of the text among
    the prefixes (what the search for the value's end, the CDATA section's and their held
    tails decide there). ((), frozenset(), 0) otherwise."""
    if not _value_first(value_ends, item.cdata):
        return (), frozenset(), 0
    lits = (*value_ends.literals, CDATA_OPEN) if item.cdata else value_ends.literals
    prefixes = frozenset(lit[:k] for lit in lits for k in range(1, len(lit)))
    return lits, prefixes, max(map(len, prefixes), default=0)


def _starts_alone(lit: str, found: Markers) -> bool:
    """Whether text that begins with `lit` is read as `lit` by a search of `found` (no other
    marker begins with it, so none is found at its place nor may grow from it), and text
    that is a proper prefix of it holds no marker (none is inside it): a `str.startswith`
    then decides what the search and `Markers.held` would."""
    return bool(lit) and not any(
        o != lit and (o.startswith(lit) or o in lit) for o in found.literals
    )


def _open_at(item: XmlParams, between: Markers) -> str:
    """OPEN when `_starts_alone` among the markers between parameters, else ""."""
    return item.open if _starts_alone(item.open, between) else ""


def _own_at(item: XmlParams, ends: Closers, value_ends: Markers) -> str:
    """The value's one own closer when every marker that ends a value (and, where one may
    open, a CDATA section's opener) begins with the same character (`_value_first`) and no
    other begins with this closer: found where that character first is, it is what the
    search for the value's end finds, with no section opened before it. "" otherwise."""
    if len(ends.own) != 1 or not _value_first(value_ends, item.cdata):
        return ""
    found = markers((*value_ends.literals, CDATA_OPEN)) if item.cdata else value_ends
    return ends.own[0] if _starts_alone(ends.own[0], found) else ""


def _key_end_at(item: XmlParams) -> str:
    """KEY_END when it is the only spelling: the key's end is its first occurrence, a
    `str.find` (one literal may grow into no other). "" otherwise."""
    return item.key_end if item.key_end and not item.key_end_alternatives else ""


def _value_open_at(item: XmlParams, value_opens: Markers) -> str:
    """VALUE_OPEN when `_starts_alone` among the markers looked for after a key, else ""."""
    return item.value_open if _starts_alone(item.value_open, value_opens) else ""


def _tables(item: XmlParams, stops: Sequence[str]) -> tuple[Any, ...]:
    """What a reader of `item` ended by `stops` searches with, made once per item and stops
    (a family's own, as long-lived as it): a call's reader made them anew, about a tenth
    of the work of a short call. By identity, not value: `Stops` tells apart what its
    tuple does not, and hashing an item hashes every field of it."""
    key = (id(item), id(stops))
    found = _TABLES.get(key)
    if found is not None and found[0] is item and found[1] is stops:
        return found[2]
    ends = closers(item)
    between = markers((*item.opens, *stops))
    value_opens = markers((item.value_open, *item.opens, *stops))
    value_ends = markers((*ends.own, *ends.implicit, *stops))
    fast = shortcuts.takes(item, SHORTCUT_KNOWS)
    marks = shortcuts.takes(item, MARKER_KNOWS)
    own_at = _own_at(item, ends, value_ends) if marks else ""
    rest = _rest_param(item, between, value_opens, value_ends) if fast and marks else None
    rest_own = own_at if rest is not None else ""
    # (where the markers that end a value begin with one character: else a value's text
    # stops at any of theirs, and a head would most often fail where it is tried; and in
    # the pure build, `_HEADS`)
    headed = _HEADS and fast and marks and bool(_value_first(value_ends, item.cdata))
    heads = [
        _param_head(item, between, value_opens, value_ends, start) if headed else None
        for start in (BETWEEN, KEY, VALUE_OPEN)
    ]
    past_key = len(item.value_open) + 1
    past_open = min(map(len, item.key_ends)) + past_key
    heads_least = (min(map(len, item.opens)) + past_open, past_open, past_key)
    # call openers that end a value only when what follows them says a call began
    in_value = OpenerInValue(stops, (*ends.own, *ends.implicit), item.opens)
    tables = (
        between,
        value_opens,
        ends,
        value_ends,
        markers(item.key_ends),
        markers((CDATA_OPEN,)),
        markers((CDATA_CLOSE,)),
        # ASCII classes: a pattern's `\s` is the markup whitespace of `strip_space`, so a
        # key written as U+2028 is that key (runtime/unicode.py)
        re.compile(item.key_pattern, re.ASCII) if item.key_pattern else None,
        _value_first(value_ends, item.cdata) if marks else "",
        fast and _plain_keys(item),
        # the markers a `str.startswith` / `str.find` decides as the searches do
        _open_at(item, between) if marks else "",
        _key_end_at(item) if marks else "",
        _value_open_at(item, value_opens) if marks else "",
        "\n" not in between.firsts,
        "\n" not in value_opens.firsts,
        item.opens,
        not (item.strip or item.trim_newline or item.xml_unescape),
        not (item.strip or item.xml_unescape),
        own_at,
        _whole_min(item, value_ends),
        *(_value_marks(item, value_ends) if marks else ((), frozenset(), 0)),
        rest,
        # the fewest characters the rest takes (its key end and closer: shorter text is
        # not one; no text where there is no rest to look for)
        _whole_min(item, value_ends) - min(map(len, item.opens)) if rest_own else _NEVER,
        # the value's one own closer (`_own_at`) where the rest is looked for: text without
        # it holds no such parameter
        rest_own,
        # the closers the rest is read to in line: its own, none that may grow into a
        # longer marker nor a call opener whose meaning what follows decides
        frozenset(
            lit for lit in ends.own if lit not in value_ends.growing and lit not in in_value.held
        ),
        # a parameter's start to its value's first text, from between parameters and from
        # past its OPEN (`_param_head`), where `_value_marks` decides the text held after it
        *heads,
        # the fewest characters each takes (a value opener and one character of value; a
        # key end before them past OPEN, and an OPEN before that from between parameters):
        # shorter text is not one (no text where there is no head)
        *(least if head is not None else _NEVER for head, least in zip(heads, heads_least)),
        # (`whole_output` reads the last two by their place)
        _whole_param(item, between, value_opens, value_ends) if fast else None,
        in_value,
    )
    if len(_TABLES) >= _TABLES_LIMIT:
        _TABLES.clear()
    _TABLES[key] = (item, stops, tables)
    return tables


# Whether `_param_head`'s heads are read: in the pure build, where a head's one match saves
# the Python steps it stands in for (bench/opcodes.py: 5-14% of the bytecodes a delta of the
# XML families' loop, many_params and many_calls); compiled, the steps cost fewer machine
# instructions than the match (bench/instructions.py with the heads on: qwen3_coder:loop
# +9.7%, minicpm5:many_calls +2.7%, iquest_q1:many_calls +3.0%), so they are left to them.
# (A function of this module is a Python function only where the module runs as Python.)
_HEADS: Final = type(_value_first).__name__ == "function"


# `_tables`' answers by (id(item), id(stops)), the item and stops kept with them (an id is
# only unique while its object lives); forgotten with the metered patterns they hold, kept
# per setting of the shortcuts
_TABLES: dict[tuple[int, int], tuple[Any, Any, tuple[Any, ...]]] = {}
_TABLES_LIMIT = 1024
forgets(_TABLES.clear)
shortcuts.keeps(_TABLES)


class XmlParamsReader(MarkupArgs):
    """Reads parameters until a marker that follows them; writes the arguments JSON."""

    __slots__ = (
        "_between",
        "_value_opens",
        "_value_ends",
        "_key_pattern",
        "_count",
        "_key",
        "_as_text",
        "_typed",
        "_pend",
        "_skipped",
        "_keys",
        "_whole",
        "_first_char",
        "_plain",
        "_sink",
        "_policy",
        "_wrapper",
        "_first",
        "_key_ends",
        "_cdata_open",
        "_cdata_close",
        "_in_value",
        "_closers",
        "_log",
        "_body",
        "_json",
        "_memo_of",
        "_plain_keys",
        "_open_at",
        "_key_end_at",
        "_value_open_at",
        "_open_nl",
        "_value_open_nl",
        "_opens",
        "_raw_tail",
        "_own_at",
        "_whole_min",
        "_value_marks",
        "_value_prefixes",
        "_value_reach",
        "_tool_memo",
        "stops",
        "_key_reach",
        "_strip",
        "_trim_newline",
        "_unescape",
        "_cdata_on",
        "_keep_last",
        "_has_value_open",
        "_held_openers",
        "_rest",
        "_rest_min",
        "_rest_own",
        "_rest_ends",
        "_entity_tail",
        "_head",
        "_key_head",
        "_head_min",
        "_key_head_min",
        "_value_head",
        "_value_head_min",
        "_key_look",
        "_head_mark",
    )

    item: XmlParams
    # (declared: compiled, each is a native slot of its type, read without a look-up, and
    # the `str` methods called on them are mypyc's primitives, not Python method calls)
    _between: Markers
    _value_opens: Markers
    _closers: Closers
    _value_ends: Markers
    _key_ends: Markers
    _cdata_open: Markers
    _cdata_close: Markers
    _key_pattern: re.Pattern[str] | None
    _first_char: str
    _plain_keys: bool
    _open_at: str
    _key_end_at: str
    _value_open_at: str
    _open_nl: bool
    _value_open_nl: bool
    _opens: tuple[str, ...]
    _plain: bool
    _raw_tail: bool
    _own_at: str
    _whole_min: int
    _value_marks: tuple[str, ...]
    _value_prefixes: frozenset[str]
    _value_reach: int
    _whole: re.Pattern[str] | None
    _rest: re.Pattern[str] | None
    _rest_min: int
    _rest_own: str
    _rest_ends: frozenset[str]
    _head: re.Pattern[str] | None
    _key_head: re.Pattern[str] | None
    _value_head: re.Pattern[str] | None
    _value_head_min: int
    _key_look: int  # the least of `_rest_min` and `_key_head_min`
    # the last marker a head from between parameters or a key holds (its value's opener, or
    # its key's end): text without it holds no head (most often a delta ended before it)
    _head_mark: str
    _head_min: int
    _key_head_min: int
    _in_value: OpenerInValue
    # the item's value rules, read per parameter (compiled, an item's field is a look-up on
    # a Python object), and the call openers a value holds undecided (`_in_value.held`)
    _strip: bool
    _trim_newline: bool
    _unescape: bool
    _cdata_on: bool
    _keep_last: bool
    _has_value_open: bool
    _held_openers: frozenset[str]
    _entity_tail: bool  # values decode entities, and no rule but `trim_newline` holds a tail

    def __init__(self, item: XmlParams, stops: tuple[str, ...], sink: Sink) -> None:
        super().__init__(item, sink, BODY if item.json_body else BETWEEN)
        self.stops = stops  # what it was made for: renewed only for the same (`renew`)
        self._key_reach = _MAX_KEY + len(item.key_end)  # (where `_key_end_at` is looked for)
        (
            self._between,
            self._value_opens,
            self._closers,
            self._value_ends,
            self._key_ends,
            self._cdata_open,
            self._cdata_close,
            self._key_pattern,
            self._first_char,
            self._plain_keys,
            self._open_at,
            self._key_end_at,
            self._value_open_at,
            self._open_nl,
            self._value_open_nl,
            self._opens,
            # a value no strip, newline or entity rule holds a tail of: its text is as read
            self._plain,
            # a value's tail no rule but `trim_newline` decides (`_close_value`)
            self._raw_tail,
            self._own_at,
            self._whole_min,
            # the markers that end a value, looked for at their one first character's
            # places, and the proper prefixes of them a tail within `_value_reach` may be
            self._value_marks,
            self._value_prefixes,
            self._value_reach,
            # the rest of a whole parameter from its key on (`_rest_param`) and its fewest
            # characters: a delta that ended inside a key most often holds the rest of it
            self._rest,
            self._rest_min,
            self._rest_own,
            self._rest_ends,
            self._head,
            self._key_head,
            self._value_head,
            self._head_min,
            self._key_head_min,
            self._value_head_min,
            self._whole,
            self._in_value,
        ) = _tables(item, stops)
        self._strip = item.strip
        self._trim_newline = item.trim_newline
        self._unescape = item.xml_unescape
        self._cdata_on = item.cdata
        self._keep_last = item.keep_last_newline
        self._has_value_open = bool(item.value_open)
        self._held_openers = self._in_value.held
        self._entity_tail = item.xml_unescape and not item.strip
        self._count = 0
        self._key: _Key | None = None  # the parameter being read
        self._as_text = True
        self._typed: list[str] = []
        self._pend = ""  # raw value text not decided yet (a trailing newline, half an entity)
        self._skipped = 0  # text skipped while looking for the value opener
        self._keys: dict[str, _Key] = {}
        # the keys read by the parser's earlier calls of the same tool (`Sink.tool_memo`)
        self._tool_memo = getattr(sink, "tool_memo", None)
        self._memo_of = self._tool_memo  # (None once asked, for this call)
        # what a key not yet read asks of (`_policies`): a call of a tool read before
        # finds its keys in the memo, and asks nothing
        self._sink = sink
        self._policy: tuple[bool, Any] | None = None  # (`_policies`, once asked)
        self._wrapper = False  # the parameter being read is a wrapper (`runtime/unwrap.py`)
        self._first = True  # no parameter opened yet: only the first may be a wrapper
        # the trace's (`protocol.Sink.log`): told each change of state; None unless tracing
        self._log = getattr(sink, "log", None)
        if self._log is not None:  # a traced reader tells each step: no heads
            self._head_min = self._key_head_min = self._value_head_min = _NEVER
        self._key_look = min(self._rest_min, self._key_head_min)
        self._head_mark = item.value_open or item.key_end
        # `json_body`: until a parameter opens, a `{` may begin the arguments as one JSON
        # object instead (the sink and stops its reader would get); then its reader
        self._body: tuple[Sink, tuple[str, ...]] | None = (sink, stops) if item.json_body else None
        self._json: JsonArgsReader | None = None

    def renew(self) -> None:
        """Back to the state `__init__` leaves it in, for the next call of the same item,
        stops and sink (`DialectSink._dialect`): the tables and what it took from the sink
        are kept, what it read is forgotten, and the object's `{` is sent again, so the next
        call reads as a new reader would (a call's reader made anew cost a fifth of the
        reader's work in a stream of short calls)."""
        json_body = self.item.json_body
        self.state = BODY if json_body else BETWEEN
        self.done = False
        self._pieces.clear()
        self._count = 0
        self._key = None
        self._as_text = True
        self._typed = []
        self._pend = ""
        self._skipped = 0
        self._keys = {}
        self._memo_of = self._tool_memo
        self._wrapper = False
        self._first = True
        self._body = (self._sink, self.stops) if json_body else None
        self._json = None
        self._send("{")

    def _json_body(self, text: str, pos: int, eof: bool) -> int:
        """Before the first parameter, with `json_body`: a `{` after markup whitespace opens
        the arguments as one JSON object, read as `json_args` reads them (the `{` this
        reader sent is theirs); anything else leaves the parameters to be read."""
        end = len(text)
        at = pos
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at == end and not eof:
            return pos  # what comes after the whitespace decides
        sink, stops = self._body  # type: ignore[misc]
        self._body = None
        self.state = BETWEEN
        if at < end and text[at] == "{":
            self._flush()
            self._json = JsonArgsReader(JsonArgs(), stops, _BodySink(sink))
            self.state = JSON
            if self._log is not None:
                self._log("reads the arguments as one JSON object")
            return at
        return pos

    def read(self, text: str, pos: int, eof: bool) -> int:
        """`Batched.read`, its `_read` in line (one call a delta fewer): what the steps
        gather is sent as one piece when it returns, whichever way (`finally`).

        A value's text that holds no character a marker ending it begins with
        (`_first_char`) is all value, sent at once as the steps would gather and send it:
        most deltas of a long value, without the state machine and the gathering."""
        if self.state == VALUE and not eof:
            first = self._first_char
            if first and text.find(first, pos) < 0:
                chunk = text[pos:]
                # (no rule but `trim_newline` holds a tail, and the text ends in no newline:
                # all of it and what was held before it is value, `_value_text` in line;
                # or values decode entities and this text, none held before it, holds no
                # `&`: it decodes to itself, the same)
                if chunk and (
                    self._raw_tail
                    and (chunk[-1] not in "\r\n" or self._plain)
                    or self._entity_tail
                    and "&" not in chunk
                    and not self._pend
                    and (chunk[-1] not in "\r\n" or not self._trim_newline)
                ):
                    if self._pend:
                        chunk = self._pend + chunk
                        self._pend = ""
                    if self._as_text:
                        self._send(encode_basestring(chunk)[1:-1])
                    else:
                        self._typed.append(chunk)
                    return len(text)
                if chunk:
                    self._value_text(chunk, closing=False)  # (its rules may hold a tail)
                    self._flush()
                return len(text)
        try:
            # the states in the order a parameter passes them: a step that completes falls
            # through to the next state's step while text is left (one turn of the loop per
            # parameter rather than per state, most of a short parameter's cost)
            end = len(text)
            while pos < end and not self.done:
                state = self.state
                if state == VALUE:
                    first = self._first_char
                    if first:
                        at = text.find(first, pos)
                        own = self._own_at
                        if at >= 0 and own and text.startswith(own, at):
                            # its own closer at the first place any marker may begin: what
                            # `_value`'s search finds (the most common case first)
                            self._close_value(text[pos:at], True)
                            pos = at + len(own)
                            continue
                        marks = self._value_marks
                        if marks and not eof:
                            # past the places of that character that begin no marker, nor a
                            # tail that may still become one (what `_value`'s search and held
                            # tail decide): a value's `<` in code or prose
                            while at >= 0 and not text.startswith(marks, at):
                                if (
                                    end - at <= self._value_reach
                                    and text[at:] in self._value_prefixes
                                ):
                                    # a tail that may still be a marker waits (the text before
                                    # it is value, `_value_text` in line where it holds no tail:
                                    # no rule but `trim_newline`, and no newline last)
                                    if self._raw_tail and (
                                        self._plain or (at > pos and text[at - 1] not in "\r\n")
                                    ):
                                        chunk = text[pos:at]
                                        if self._pend:
                                            chunk = self._pend + chunk
                                            self._pend = ""
                                        if chunk:
                                            if self._as_text:
                                                self.emit(encode_basestring(chunk)[1:-1])
                                            else:
                                                self._typed.append(chunk)
                                    else:
                                        self._value_text(text[pos:at], closing=False)
                                    return at
                                at = text.find(first, at + 1)
                        if at < 0:
                            if not eof:
                                # no marker, nor the start of one, in the rest: all of it is
                                # value text (`_value` then `_value_text`, in line where it
                                # holds no tail: no rule but `trim_newline`, no newline last)
                                chunk = text[pos:]
                                if self._raw_tail and (self._plain or chunk[-1] not in "\r\n"):
                                    if self._pend:
                                        chunk = self._pend + chunk
                                        self._pend = ""
                                    if self._as_text:
                                        self.emit(encode_basestring(chunk)[1:-1])
                                    else:
                                        self._typed.append(chunk)
                                else:
                                    self._value_text(chunk, closing=False)
                                return end
                        elif own and text.startswith(own, at):
                            # its own closer at the first place past the value's `<`s any
                            # marker begins: what `_value`'s search finds
                            self._close_value(text[pos:at], True)
                            pos = at + len(own)
                            continue
                    pos = self._value(text, pos, eof)
                    if self.state == VALUE:
                        return pos
                    continue
                if state == BETWEEN:
                    whole = self._whole
                    # (tried where a whole parameter may be: text as long as the shortest one,
                    # and, in a short rest, holding the value's own closer where there is one to
                    # look for: a failed match costs more than the steps it would save a
                    # streamed delta; the look is bounded, so a long text costs it no more)
                    if (
                        whole is not None
                        and end - pos >= self._whole_min
                        and (
                            not self._own_at
                            or end - pos > _WHOLE_LOOK
                            or text.find(self._own_at, pos) >= 0
                        )
                    ):
                        found = whole.match(text, pos)
                        if found is not None:  # (most often the parameter is still arriving)
                            pos = self._whole_params(text, found, eof)
                            if self._ended():
                                return pos
                    # where OPEN is when no search is needed to tell (what the search and `held`
                    # decide): here, or past a newline no marker begins with; its start is held
                    lit = self._open_at
                    at = -1
                    if lit:
                        if text.startswith(lit, pos):
                            if end - pos >= self._head_min and self._head_mark in text and not eof:
                                # a parameter that starts here and whose value goes on past
                                # the text (`_took_head`)
                                found = self._head.match(text, pos)  # type: ignore[union-attr]
                                if found is not None:
                                    took = self._took_head(text, found, None)
                                    if took:
                                        return took
                            at = pos
                        elif not eof and end - pos < len(lit) and lit.startswith(text[pos:]):
                            return pos
                        elif self._open_nl and text.startswith("\n", pos):
                            if text.startswith(lit, pos + 1):
                                at = pos + 1
                            elif (
                                not eof
                                and end - pos <= len(lit)
                                and lit.startswith(text[pos + 1 :])
                            ):
                                return pos + 1
                    if at >= 0:
                        pos = at + len(lit)
                    else:
                        between = self._between
                        found = between.find(text, pos)  # (`Markers.search`, in line)
                        if found is None:
                            # text between parameters is markup; keep only a possible marker start
                            if eof:
                                return end
                            low = end - between.max_prefix  # (`between.held(text, pos)`, in line)
                            tail = between.find_tail(text, low if low > pos else pos)
                            return end if tail is None else tail.start()
                        at, lit = found.start(), found.group()
                        if lit in between.growing and between.undecided(text, at, lit, eof):
                            if not eof:
                                return at
                            return end  # the output ends inside a longer marker: markup
                        if lit not in self._opens:
                            self._finish()
                            return at
                        pos = at + len(lit)
                    self.state = state = KEY
                    if self._log is not None:
                        self._log("reads a key")
                    if pos == end:
                        break
                if state == KEY:
                    if end - pos >= self._key_look:
                        # (text as long as the fewest characters of the rest of a parameter or
                        # of its head, one compare for both where a delta holds less)
                        if (
                            end - pos >= self._rest_min
                            and text.find(self._rest_own, pos) >= 0
                            and self._log is None
                        ):
                            # the rest of the parameter may be here whole (a delta ended inside its
                            # key): one match, read as `_whole_params` reads one ended by its own
                            # closer, a wrapper left to it (what the state machine would decide)
                            found = self._rest.match(text, pos)  # type: ignore[union-attr]
                            # (its groups, in order: key, value, end)
                            raw, value, lit = ("", "", "") if found is None else found.groups()
                            if lit in self._rest_ends:
                                key = self._keys.get(raw) or self._key_of(raw)
                                if not (self._first and key.wraps):
                                    self._first = False
                                    if self._strip:
                                        value = value.rstrip()
                                    elif (
                                        self._trim_newline
                                        and not self._keep_last
                                        and value[-1:] == "\n"
                                    ):
                                        value = value[: -2 if value[-2:] == "\r\n" else -1]
                                    if self._unescape and "&" in value:
                                        value = xml_unescape(value)
                                    if not key.dropped:
                                        count = self._count  # (`_key_prefix`, in line)
                                        self._count = count + 1
                                        piece = key.prefix + (
                                            encode_basestring(value)
                                            if key.as_text
                                            else self._typed_piece(key, value)
                                        )
                                        self.emit(", " + piece if count else piece)
                                    self.state = state = BETWEEN
                                    pos = found.end()
                                    continue
                        if end - pos >= self._key_head_min and self._head_mark in text and not eof:
                            # the rest of the key, and the value's first text (`_took_head`)
                            found = self._key_head.match(text, pos)  # type: ignore[union-attr]
                            if found is not None:
                                took = self._took_head(text, found, None)
                                if took:
                                    return took
                    key_ends = self._key_ends
                    lit = self._key_end_at
                    if lit:  # the one spelling: its first place within a key's reach
                        at = text.find(lit, pos, pos + self._key_reach)
                    else:
                        found = key_ends.find(text, pos)
                        at, lit = (-1, "") if found is None else (found.start(), found.group())
                        if (
                            at >= 0
                            and lit in key_ends.growing
                            and key_ends.undecided(text, at, lit, eof)
                        ):
                            if not eof:
                                return pos
                            at = -1  # the output ends inside a longer marker: the key is cut
                    if at < 0 or at - pos > _MAX_KEY:
                        # a key longer than _MAX_KEY is no parameter, whole or streamed: skipped
                        if at >= 0 or (
                            end - pos > _MAX_KEY and end - pos - key_ends.held(text, pos) > _MAX_KEY
                        ):
                            self.state = BETWEEN
                            if self._log is not None:
                                self._log("a key longer than any: no parameter")
                            continue
                        return end if eof else pos
                    raw = text[pos:at]
                    self._key = self._keys.get(raw) or self._key_of(raw)
                    pos = at + len(lit)
                    if not self._has_value_open:
                        self._open_param()
                        if pos == end:
                            break
                        state = VALUE_START  # (on to its step, not round the loop)
                    else:
                        self.state, self._skipped = VALUE_OPEN, 0
                        if self._log is not None:
                            self._log(f"read the key {self._key.name!r}: looks for its value")
                        if pos == end:
                            break
                        state = VALUE_OPEN
                if state == VALUE_OPEN:
                    if end - pos >= self._value_head_min and not eof and not self._skipped:
                        # the value's opener and its first text (`_took_head`)
                        found = self._value_head.match(text, pos)  # type: ignore[union-attr]
                        if found is not None:
                            took = self._took_head(text, found, self._key)
                            if took:
                                return took
                    # (`_find_value_open`'s common cases: VALUE_OPEN here, or past a newline no
                    # marker begins with, or its start held)
                    lit = self._value_open_at
                    at = -1
                    if lit and self._skipped < _MAX_KEY:
                        if text.startswith(lit, pos):
                            at = pos
                        elif not eof and end - pos < len(lit) and lit.startswith(text[pos:]):
                            return pos
                        elif self._value_open_nl and text.startswith("\n", pos):
                            if text.startswith(lit, pos + 1):
                                at = pos + 1
                            elif (
                                not eof
                                and end - pos <= len(lit)
                                and lit.startswith(text[pos + 1 :])
                            ):
                                self._skipped += 1
                                return pos + 1
                    if at >= 0:
                        self._open_param()
                        pos = at + len(lit)
                    else:
                        pos = self._find_value_open(text, pos, eof)
                        if self.state != VALUE_START:
                            if self.state == VALUE_OPEN:
                                return pos
                            continue
                    if pos == end:
                        break
                    state = VALUE_START
                if state == VALUE_START:
                    if self._strip:
                        while pos < end and text[pos].isspace():
                            pos += 1
                        if pos == end and not eof:
                            return pos
                    elif self._trim_newline:
                        if text[pos] == "\r" and pos + 1 == end and not eof:
                            return pos  # `\r\n` may be arriving
                        if text.startswith("\n", pos):  # one newline, `\n` or `\r\n`
                            pos += 1
                        elif text.startswith("\r\n", pos):
                            pos += 2
                    self.state = VALUE
                elif state == CDATA:
                    pos = self._cdata(text, pos, eof)
                    if self.state == CDATA:
                        return pos
                elif state == JSON:
                    reader = self._json
                    pos = reader.read(text, pos, eof)  # type: ignore[union-attr]
                    if reader.done:  # type: ignore[union-attr]
                        self._finish()
                        return pos
                    if not eof:
                        return pos
                elif state == BODY:
                    pos = self._json_body(text, pos, eof)
                    if self.state == BODY:
                        return pos
            if eof and not self.done:
                if self.state == VALUE_START:
                    self.state = VALUE
                self._finish()
            return pos
        finally:
            pieces = self._pieces
            if pieces:  # (`_flush`, in line)
                self._send("".join(pieces))
                pieces.clear()

    def _key_of(self, raw: str) -> _Key:
        """The name, whether a flag in the key says the value is JSON rather than text, and
        the schema that types the value, remembered: a call repeats its few keys (callers
        look in `_keys` first), and by the parser from call to call of one tool. At the
        first key not in `_keys`, `_keys` becomes the parser's memo of the tool's keys
        (`Sink.tool_memo`: what a key reads as is the same for every call of the tool), so
        a key read by an earlier call is found there at once."""
        memo_of = self._memo_of
        if memo_of is not None:
            self._memo_of = None  # (the call's tool is decided: the memo is the one for it)
            memo = memo_of(self.item)
            # (`read`, not `key`: a name typed _Key here, and compiled it takes no None below)
            for known, read in self._keys.items():  # (read before the memo was asked for)
                if len(memo) < _MAX_KEYS:
                    memo.setdefault(known, read)
            self._keys = memo
            key = memo.get(raw)
            if key is not None:
                return key
        key = self._read_plain_key(raw) if self._plain_keys else self._read_key(raw)
        keys = self._keys
        if len(keys) < _MAX_KEYS:
            keys[raw] = key
        return key

    def _policies(self) -> tuple[bool, Any]:
        """Whether a value no schema types is its JSON value when it is one
        (`untyped_values="json"`), and the sink's `drops_param` when undeclared parameters
        are dropped (else None): the parser's policies, asked where a key is first read."""
        policy = self._policy
        if policy is None:
            sink = self._sink
            policies = getattr(sink, "policies", None)
            if policies is None:
                policy = False, None
            else:
                drops = sink.drops_param if policies.undeclared_params == "drop" else None
                policy = policies.untyped_values == "json", drops
            self._policy = policy
        return policy

    def _read_plain_key(self, raw: str) -> _Key:
        """`_read_key` for an item whose keys are read as written, markup whitespace
        stripped (`_plain_keys`): a call of many distinct keys reads each once, and that
        reading was half the cost of such a call. Asks the sink only what a key needs
        (`unwraps` only of `WRAPPER_KEYS`, which are all it answers yes for)."""
        name = raw.strip(MARKUP_SPACE)  # (`strip_space`, in line)
        schema = self.schema_of(name)
        untyped_json, drops = self._policy or self._policies()
        if schema is None:
            as_text = not untyped_json
        else:
            as_text = streams_as_text(schema)
        prefix = encode_basestring(name) + ": "
        if drops is not None and drops(name):  # read, not written
            return _new_key(_Key, (name, False, schema, False, prefix, False, True, {}))
        wraps = name in WRAPPER_KEYS and self._sink.unwraps(name)
        return _new_key(_Key, (name, False, schema, as_text, prefix, wraps, False, {}))

    def _read_key(self, raw: str) -> _Key:
        """What the key text `raw` reads as for the current call (`_key_of`)."""
        item = self.item
        # (`strip_space`, in line: a key of U+2028 is that key)
        name = raw if item.verbatim_keys else raw.strip(MARKUP_SPACE)
        json_flagged = False
        pattern = self._key_pattern
        if pattern is not None:
            found = pattern.fullmatch(name)
            if found is not None:  # an unreadable key is kept whole: nothing is lost
                name = found.group("key")
                if "text" in pattern.groupindex:  # an absent flag reads as ""
                    json_flagged = (found.group("text") or "") not in item.text_when
        if (item.xml_unescape or item.unescape_keys) and "&" in name:  # `name="a&amp;b"`
            name = xml_unescape(name)
        schema = self.schema_of(name)
        untyped_json, drops = self._policy or self._policies()
        as_text = not json_flagged and (
            streams_as_text(schema) if schema is not None else not untyped_json
        )
        prefix = encode_basestring(name) + ": "
        if drops is not None and drops(name):  # read, not written
            return _new_key(_Key, (name, json_flagged, schema, False, prefix, False, True, {}))
        # (`unwraps` only of `WRAPPER_KEYS`, the only keys it answers yes for)
        wraps = name in WRAPPER_KEYS and self._sink.unwraps(name)
        return _new_key(_Key, (name, json_flagged, schema, as_text, prefix, wraps, False, {}))

    def _ended(self) -> bool:
        """`self.done`, read through a call: after `_whole_params`, which may set it, mypy
        keeps `while not self.done`'s narrowing, and the compiled build would drop the check."""
        return self.done

    def _whole_params(self, text: str, first_param: re.Match[str], eof: bool) -> int:
        """Write the parameters found whole in the text from the first, `first_param`, as the
        state machine would write them (one regex match each); return where it goes on."""
        match = self._whole.match  # type: ignore[union-attr]
        whole: re.Match[str] | None = first_param  # (None ends the loop: typed so compiled)
        pos = first_param.start()
        growing = self._value_ends.growing
        strip, trim_newline, unescape = self._strip, self._trim_newline, self._unescape
        value_ends, implicit_ends = self._closers
        keep_last = self._keep_last
        pieces = self._pieces
        keys = self._keys
        count = self._count
        first = self._first
        held = self._held_openers
        while True:
            end, raw, value = whole.group("end", "key", "value")
            if end in growing and self._value_ends.undecided(text, whole.start("end"), end, eof):
                break
            if end in held:
                break  # whether it ends the value is decided by what follows it
            key = keys.get(raw)
            if key is None:
                key = self._key_of(raw)
                keys = self._keys  # (the first key read may make it the tool's memo)
            if strip:
                value = value.rstrip()
            elif trim_newline and value[-1:] == "\n" and not (keep_last and end in value_ends):
                value = value[: -2 if value[-2:] == "\r\n" else -1]
            if unescape:
                value = xml_unescape(value)
            members = None
            if first:  # (only the first parameter may be a wrapper)
                first = self._first = False
                if key.wraps:
                    members = self._members(key, value)
            if key.dropped:
                pass
            elif members is not None:
                pieces.append(members)
                count = 1 if members else 0
            else:
                # the parameter as one piece: its separator, key and value
                piece = key.prefix + (
                    encode_basestring(value) if key.as_text else self._typed_piece(key, value)
                )
                pieces.append(", " + piece if count else piece)
                count += 1
            if end in value_ends:
                pos = whole.end()
                whole = match(text, pos)
                if whole is None:
                    break
                continue
            pos = whole.start("end")
            if end not in implicit_ends:
                self._finish()  # a marker of the call or the stream: the arguments end here
            break
        self._count = count
        return pos

    def _took_head(self, text: str, head: re.Match[str], key: _Key | None) -> int:
        """Read a parameter's start matched by `_head`, `_key_head` or `_value_head` as the
        steps from BETWEEN, KEY or VALUE_OPEN to VALUE read it (the match is to the end of
        the text: the value's first text, then what the VALUE step holds back and returns
        at). The key, its opener (`_open_param`, in line) and the text are written in one
        piece; where it goes on is returned, past a line end held (`pend`). 0, having read
        nothing but the key, when the key is the first parameter's wrapper: the steps decide
        then."""
        if key is None:  # (not read yet: the head's)
            raw: str = head.group("key")
            key = self._keys.get(raw) or self._key_of(raw)
        if self._first:  # (only the first parameter may be a wrapper)
            if key.wraps:
                return 0
            self._first = False
        value: str
        pend: str
        value, pend = head.group("value", "pend")
        self._key = key
        self._wrapper = False
        self._pend = pend
        self.state = VALUE
        if key.as_text:
            self._as_text = True
            count = self._count  # (`_key_prefix`, in line)
            self._count = count + 1
            opened = ", " + key.prefix if count else key.prefix
            self.emit(opened + encode_basestring(value)[:-1])
        else:
            self._as_text = False
            self._typed = [value]
        return head.end("pend")

    def _find_value_open(self, text: str, pos: int, eof: bool) -> int:
        found = self._value_opens.find(text, pos)
        at, lit = (-1, "") if found is None else (found.start(), found.group())
        if at >= 0 and lit == self.item.value_open and self._skipped + at - pos <= _MAX_KEY:
            self._open_param()
            return at + len(lit)
        if at >= 0 or eof or self._skipped > _MAX_KEY:
            self.state = BETWEEN  # a key with no value is not an argument
            if self._log is not None:
                self._log("a key with no value: no parameter")
            return at if at >= 0 else pos
        stop = len(text) - self._value_opens.held(text, pos)
        self._skipped += stop - pos
        return stop

    def _open_param(self) -> None:
        key: _Key = self._key  # type: ignore[assignment]  # (a key was read)
        wrapper = False
        if self._first:  # (only the first parameter may be a wrapper)
            self._first = False
            wrapper = key.wraps
        self._wrapper = wrapper
        self._pend = ""
        self.state = VALUE_START
        if key.as_text and not wrapper:  # a wrapper waits whole
            self._as_text = True
            count = self._count  # (`_key_prefix`, in line)
            self._count = count + 1
            self.emit((", " + key.prefix if count else key.prefix) + '"')
        else:
            self._as_text = False
            self._typed = []
        if self._log is not None:
            how = "streamed as text" if self._as_text else "typed once whole"
            self._log(f"reads the value of {self._key.name!r}, {how}")

    def _key_prefix(self) -> str:
        sep = ", " if self._count else ""
        self._count += 1
        return sep + self._key.prefix

    def _value(self, text: str, pos: int, eof: bool) -> int:
        ends = self._value_ends
        found = ends.find(text, pos)  # (`_value_end`, its common case in line)
        at, lit = (-1, "") if found is None else (found.start(), found.group())
        marker_at = at  # the next marker, decided or not
        if at >= 0 and lit in ends.growing and ends.undecided(text, at, lit, eof):
            at, lit = -1, ""
        cdata = self._cdata_on
        while cdata or lit in self._held_openers:
            if cdata:  # a section before the next marker: no marker ends it
                inside = self._enter_cdata(text, pos, marker_at)
                if inside >= 0:
                    return inside
            if lit not in self._held_openers:
                break
            ends_value = self._in_value.ends_value(text, at + len(lit), eof, lit)
            if ends_value is None:  # not decided yet: the marker and what follows wait
                self._value_text(text[pos:at], closing=False)
                return at
            if ends_value:
                break
            self._value_text(text[pos : at + len(lit)], closing=False)  # the value's text
            pos = at + len(lit)
            marker_at = ends.search(text, pos)[0]
            at, lit = self._value_end(text, pos, eof)
        # a possible closing marker waits; at the end of output it is markup, not value
        if at < 0:
            # what may still begin a marker, or a CDATA section (at the end of output a
            # partial section opener is value text, not markup)
            low = len(text) - ends.max_prefix  # (`ends.held(text, pos)`, in line)
            tail = ends.find_tail(text, low if low > pos else pos)
            held = 0 if tail is None else len(text) - tail.start()
            if cdata and not eof:
                held = max(held, self._cdata_open.held(text, pos))
            stop = len(text) - held
            self._value_text(text[pos:stop], closing=eof)
            if eof:
                self._close_param()
                return len(text)
            return stop
        own = self._closers.own
        self._close_value(text[pos:at], lit in own)
        if lit in own:
            self.state = BETWEEN
            return at + len(lit)
        if lit in self._closers.implicit:
            self.state = BETWEEN
            return at
        self._finish()  # a marker of the call or the stream: the arguments end here
        return at

    def _close_value(self, chunk: str, by_own: bool) -> None:
        """Write the value's last text `chunk` and close it, ended by one of its own closers
        (`by_own`) or another marker: `_value_text` then `_close_param`, in line but for a
        wrapper (a value's whole tail is decided here: its closing rules, then its entities)."""
        if not self._wrapper and self._log is None:
            if self._pend:
                chunk = self._pend + chunk
                self._pend = ""
            if self._raw_tail:  # (no rule but the newline's trims)
                if chunk.endswith("\n"):
                    if self._trim_newline and not (by_own and self._keep_last):
                        chunk = chunk[: -2 if chunk.endswith("\r\n") else -1]
            else:
                if self._strip:
                    chunk = chunk.rstrip()
                elif (
                    self._trim_newline and chunk.endswith("\n") and not (by_own and self._keep_last)
                ):
                    chunk = chunk[: -2 if chunk.endswith("\r\n") else -1]
                if self._unescape and "&" in chunk:  # (text with none decodes to itself)
                    chunk = xml_unescape(chunk)
            if self._as_text:
                self.emit(encode_basestring(chunk)[1:-1] + '"' if chunk else '"')
            else:
                typed = self._typed
                if chunk:
                    typed.append(chunk)
                value = "".join(typed)
                self._typed = []
                key: _Key = self._key  # type: ignore[assignment]  # (a key was read)
                if not key.dropped:
                    count = self._count  # (`_key_prefix`, in line)
                    self._count = count + 1
                    piece = key.prefix + self._typed_piece(key, value)
                    self.emit(", " + piece if count else piece)
            self.state = BETWEEN
        else:
            self._value_text(chunk, True, self._keep_last and by_own)
            self._close_param()

    def _enter_cdata(self, text: str, pos: int, marker_at: int) -> int:
        """Where the section's text starts when a CDATA section opens before the next
        marker (the value text before it is written first), else -1."""
        at = text.find(CDATA_OPEN, pos, marker_at if marker_at >= 0 else len(text))
        if at < 0:
            return -1
        self._value_text(text[pos:at], closing=False)
        self._flush_pending()  # a held newline or half an entity before the section is value
        self.state = CDATA
        if self._log is not None:
            self._log("reads a CDATA section of the value")
        return at + len(CDATA_OPEN)

    def _flush_pending(self) -> None:
        """Write the held raw tail as value text: what follows decides it is not markup."""
        pend, self._pend = self._pend, ""
        if pend:
            self._emit_value(xml_unescape(pend) if self._unescape else pend)

    def _cdata(self, text: str, pos: int, eof: bool) -> int:
        """Inside `<![CDATA[`: the text up to `]]>` is value, verbatim (no marker ends it, no
        entity is decoded); unterminated, it runs to the end of output. Only what may
        still be `]]>` is held back."""
        at = text.find(CDATA_CLOSE, pos)
        if at >= 0:
            self._emit_value(text[pos:at])
            self.state = VALUE
            return at + len(CDATA_CLOSE)
        stop = len(text) if eof else len(text) - self._cdata_close.held(text, pos)
        self._emit_value(text[pos:stop])
        return stop

    def _emit_value(self, ready: str) -> None:
        """Write decided value text: streamed as JSON string text, or kept to be typed."""
        if not ready:
            return
        if self._as_text:
            self.emit(_json_string_body(ready))
        else:
            self._typed.append(ready)

    def _value_end(self, text: str, pos: int, eof: bool) -> tuple[int, str]:
        """The first marker that may end the value from `pos`, or (-1, "")."""
        at, lit = self._value_ends.search(text, pos)
        if at >= 0 and self._value_ends.undecided(text, at, lit, eof):
            return -1, ""  # may still grow into a longer marker (or, at the end, is one cut)
        return at, lit

    def _value_text(self, chunk: str, closing: bool, keep_newline: bool = False) -> None:
        """Append value text, holding back a tail that the next text may still change.

        `keep_newline`: the value ends at VALUE_END and the grammar keeps its last newline
        there (`keep_last_newline`); before any other marker the newline is markup."""
        raw = self._pend + chunk if self._pend else chunk
        if not raw:
            return
        if not closing and (self._raw_tail or ("&" not in raw and not self._strip)):
            # (no strip, and no entities or none to decode: only `trim_newline` holds a tail,
            # a newline that may be the markup's; the steps below for this case, without
            # those of the others: text with no `&` decodes to itself)
            if raw[-1] in "\r\n" and self._trim_newline:
                hold = 2 if raw.endswith("\r\n") else 1  # (a `\r` may begin `\r\n`)
                ready = raw[:-hold]
                self._pend = raw[-hold:]
            else:
                ready = raw
                self._pend = ""
            if ready:
                if self._as_text:
                    self.emit(encode_basestring(ready)[1:-1])
                else:
                    self._typed.append(ready)
            return
        unescape = self._unescape
        if closing:
            if self._strip:
                raw = raw.rstrip()
            elif self._trim_newline and not keep_newline and raw.endswith("\n"):
                raw = raw[: -2 if raw.endswith("\r\n") else -1]
            hold = 0
        else:
            hold = 0
            if self._strip:
                hold = len(raw) - len(raw.rstrip())
            elif self._trim_newline and raw[-1:] in ("\n", "\r"):
                hold = 2 if raw.endswith("\r\n") else 1  # (a `\r` may begin `\r\n`)
            if unescape and not hold:  # half an entity: `&am`
                amp = raw.rfind("&")
                if amp >= 0 and len(raw) - amp < _MAX_ENTITY and ";" not in raw[amp:]:
                    hold = len(raw) - amp
        if hold:
            ready = raw[: len(raw) - hold]
            self._pend = raw[len(raw) - hold :]
        else:
            ready = raw
            self._pend = ""
        if ready and unescape:
            ready = xml_unescape(ready)
        if ready:  # (`_emit_value`, in line)
            if self._as_text:
                self.emit(encode_basestring(ready)[1:-1])
            else:
                self._typed.append(ready)

    def _close_param(self) -> None:
        if self._pend:
            self._value_text("", closing=True)
        self._pend = ""
        if self._as_text:
            self.emit('"')
        else:
            text = "".join(self._typed)
            self._typed = []
            members = self._members(self._key, text) if self._wrapper else None
            if members is not None:
                self.emit(members)
                self._count = 1 if members else 0
            elif self._wrapper and self._key.as_text:  # no object: the text it is, as ever
                self.emit(self._key_prefix() + encode_basestring(text))
            elif self._key.dropped:
                pass
            else:
                self.emit(self._key_prefix() + self._typed_piece(self._key, text))
        self._wrapper = False
        self.state = BETWEEN
        if self._log is not None:
            self._log(f"read the value of {self._key.name!r}: between parameters")

    def _members(self, key: _Key, text: str) -> str | None:
        """A wrapper's members, typed, to write in its place (`""` for an empty object);
        None when its text holds no object."""
        members = wrapped_text(text, key.json_flagged)
        return None if members is None else members_text(members, self.schema_of)

    def _typed_piece(self, key: _Key, text: str) -> str:
        """The JSON of a typed value, remembered per key and text (a pure function of
        them: the key holds its schema and flag)."""
        if len(text) > _MAX_WRITTEN_TEXT:
            return json_text(self._typed_value(key, text))
        written = key.written
        piece = written.get(text)
        if piece is None:
            piece = json_text(self._typed_value(key, text))
            if len(written) < _MAX_WRITTEN:
                written[text] = piece
        return piece

    @staticmethod
    def _typed_value(key: _Key, text: str) -> object:
        if key.json_flagged:
            return coerce_flagged_json(text, key.schema)
        if key.schema is None:  # held, not streamed: `untyped_values="json"`
            return decode_json_or_text(text)
        return coerce_text(text, key.schema)

    def _finish(self) -> None:
        if self._json is not None:  # a JSON body: its reader closes the object
            self._json.close()
            self.state = DONE
            self.done = True
            return
        if self.state in (VALUE, VALUE_START, CDATA):
            self._close_param()
        self.state = DONE
        self.done = True
        self.emit("}")
        if self._log is not None:
            self._log("the arguments end")

    def close(self) -> None:
        """End of input or of the call: keep an open parameter, close the object."""
        if not self.done:
            if self.state == VALUE_START:
                self.state = VALUE
            self._finish()
        self._flush()


class _BodySink:
    """A JSON body's sink (`json_body`): the call's, less the `{` the parameters' reader
    already sent for the object."""

    __slots__ = ("_sink", "_opened", "schema_of", "typed_keys", "unwraps", "malformed_args")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._opened = False
        self.schema_of = sink.schema_of
        self.typed_keys = sink.typed_keys
        self.unwraps = sink.unwraps
        self.malformed_args = getattr(sink, "malformed_args", lambda: None)

    def emit_args(self, text: str) -> None:
        if not self._opened:
            self._opened = True
            text = text[1:] if text.startswith("{") else text
        if text:
            self._sink.emit_args(text)


# key shapes, each with the flag it writes for a raw-text value and for a JSON value
KEY_SHAPES = (
    ('name="{key}" string="{flag}"', "true", "false"),
    ('key="{key}" type="{flag}"', "string", "{type}"),
    ('"{key}"', "", ""),
    ('name="{key}"', "", ""),
    ("{key}", "", ""),
)
_JSON_TYPES = {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return _JSON_TYPES.get(type(value), "string")


def render_key(item: XmlParams, key: str, value: Any) -> str:
    """A key that the item's key pattern reads back as `key`, flagged raw text for a string
    value and JSON for any other (DSML's `string="true"`, Kimi K3's `type="number"`)."""
    if item.key_pattern is None:
        return key
    is_text = isinstance(value, str)
    for shape, raw_flag, json_flag in KEY_SHAPES:
        flag = raw_flag if is_text else json_flag.format(type=_json_type(value))
        text = shape.format(key=key, flag=flag)
        found = re.fullmatch(item.key_pattern, text, re.ASCII)
        if not found or found.group("key") != key:
            continue
        if "text" in found.re.groupindex:
            if ((found.group("text") or "") in item.text_when) != is_text:
                continue
        return (" " if item.open[-1:].isalpha() else "") + text
    raise RenderError(f"cannot write the key {key!r} in the shape /{item.key_pattern}/ reads")


def render_xml_params(item: XmlParams, calls: Sequence[Call]) -> str:
    newline = "\n" if item.trim_newline else ""
    out = []
    for key, value in the_call(calls)[1]:
        if item.strip and isinstance(value, str) and value != value.strip():
            raise RenderError(f"xml_params(strip=true) strips values: {value!r} cannot be written")
        if item.write_python and isinstance(value, (list, dict)):
            value = str(value)  # Python's str of the container, written as text
        text = render_value_text(value, item.xml_unescape)
        first = last = newline
        if item.write_flush:  # the markup newline only where the reading would trim the value's
            first = newline if text[:1] in ("\n", "\r") else ""
            last = newline if text[-1:] == "\n" else ""
        if item.keep_last_newline:
            last = ""
        out.append(
            f"{item.open}{render_key(item, key, value)}{item.key_end}{item.write_before_value}"
            f"{item.value_open}{first}{text}{last}{item.value_end}"
        )
    return item.write_between.join(out)


def xml_params_literals(item: XmlParams) -> tuple[str, ...]:
    ends = closers(item)
    return (*item.opens, *item.key_ends, *ends.own, *ends.implicit, item.value_open)


XML_PARAMS = DialectRow(
    XmlParams,
    "xml_params",
    XmlParamsReader,
    render_xml_params,
    xml_params_literals,
    shortcut_knows=SHORTCUT_KNOWS,
)
