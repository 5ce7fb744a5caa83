"""What an argument dialect is to the engine: one constructor shape, one sink, four members.

Every dialect (`xml_params`, `json_call`, …) has a reader made as `Reader(item, stops,
sink)` when a call reaches its item: the item's spec, the markers that may follow its text
(they end it, even inside a value; a `Stops` also says which of them open a call, for the
markup dialects to decide one met inside a value), and the `Sink` it reports to. The engine then calls
`read(text, pos, eof)` as text arrives, which takes what it can decide of text[pos:] and
returns the new position, until the reader is `done`, and `close()` when the call or the
output ends first. A dialect that names calls itself (`CallsReader`) also says whether
it `failed` before any call, and whether that was `malformed` text rather than text cut
short: then it was not a call, and the engine gives the text back.

`DialectRow` is what the one table (`dialects.DIALECTS`) holds per dialect: its reader,
how it writes calls, the literals its markup is made of, and whether it names calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, Union

from .limits import MAX_DEPTH
from .markers import NextStop
from .spec import Lit, Name, Ws


class Stops(tuple):
    """The markers that end a dialect's text (a tuple of them, as every reader reads it),
    knowing which of them open a call rather than close something.

    A markup value (raw text ended by markers) that meets one of `openers` cannot tell yet
    whether the model wrote the marker as text or started a new call without closing the
    value: the dialect decides by what follows (docs/policies.md, "Markers inside values").
    `headers` show that a call's header follows its opener: the literal right before the
    call's name (`<function=` after `<tool_call>`). `name_ends` do when the opener is that
    literal: each marker that ends a name, with the `Name` item that reads it (`">` after
    `<invoke name="`), a header only when a name is written before it. `heads`: per
    opener, how each call it opens goes on after it (`Head`), so that text it cannot go on
    with says at once that the opener was the value's.
    """

    openers: frozenset[str]
    headers: frozenset[str]
    name_ends: tuple[tuple[str, Name], ...]
    heads: tuple[tuple[str, tuple[Head, ...]], ...]

    def __new__(
        cls,
        literals: Sequence[str],
        openers: Iterable[str] = (),
        headers: Iterable[str] = (),
        name_ends: Iterable[tuple[str, Name]] = (),
        heads: Iterable[tuple[str, tuple[Head, ...]]] = (),
    ) -> Stops:
        made = super().__new__(cls, literals)
        made.openers = frozenset(openers) & frozenset(literals)
        made.headers = frozenset(headers) - {""}
        made.name_ends = tuple(name_ends)
        made.heads = tuple((opener, head) for opener, head in heads if opener in made.openers)
        return made

    def __getnewargs__(self) -> tuple[Any, ...]:  # copy and pickle
        return tuple(self), self.openers, self.headers, self.name_ends, self.heads


class Sink(Protocol):
    """What a reader sends its results to and asks of the engine, about the current call.

    A reader keeps its sink, never the call: the engine drops the call when it ends, and
    with it the reader, so no reference cycle is left for the garbage collector.
    """

    def emit_args(self, text: str) -> None:
        """A piece of the current call's arguments JSON."""

    def commit_call(self, name: str, call_id: str | None = None) -> None:
        """The dialect read the name of the call (in a list of calls, of its next one)."""

    def schema_of(self, key: str) -> dict | None:
        """The schema of a top-level argument of the current call, if its tool has one."""

    def typed_keys(self) -> frozenset[str]:
        """The current call's arguments that are typed rather than kept as text."""

    def unwraps(self, key: str) -> bool:
        """Whether `key`, asked of the current call's first key only, is a lone wrapper
        whose object value is the arguments themselves (`runtime/unwrap.py`)."""

    def drops_param(self, key: str) -> bool:
        """Whether a markup parameter `key` of the current call is read but not written
        (`undeclared_params="drop"`: its tool declares properties, none called `key`)."""

    def next_stop(self, stops: tuple[str, ...]) -> NextStop:
        """One `NextStop` over `stops` shared by the calls read one after another from one
        text (each searching to its end would make a whole parse quadratic)."""

    # the trace's, told each change of a dialect's state in words ("reads a key"): None
    # unless tracing, so a dialect pays one test per change for it; a sink may lack it
    log: Callable[[str], None] | None

    # the engine's (`DialectSink.tool_memo`): `tool_memo(item)`, a dict the reader of `item`
    # keeps for the current call's tool from call to call (what its keys read as); a sink
    # may lack it, and a reader then works its keys out per call
    tool_memo: Callable[[Any], dict]


class Reader(Protocol):
    """What the engine hands text to as it arrives: a dialect's arguments reader, the message-header
    reader (`messages.py`, which leaves its decision in its `outcome`)."""

    def read(self, text: str, pos: int, eof: bool) -> int:
        """Take what can be decided of text[pos:]; return the new position."""


class ArgumentsReader(Reader, Protocol):
    """A dialect's reader of one call's arguments (or, naming calls, of a list of calls)."""

    done: bool

    def __init__(self, item: Any, stops: tuple[str, ...], sink: Sink) -> None: ...

    def close(self) -> None:
        """The call or the output ends here: close what is open."""


class CallsReader(ArgumentsReader, Protocol):
    """A dialect that names its calls itself: before its first call, failing means the text
    was not a call."""

    failed: bool
    malformed: bool  # failed on text that is not a call, not for want of more text


Pairs = Sequence[tuple[str, Any]]
"""A call's arguments as (key, value) pairs, in order; a key may repeat (a model looping on
one parameter writes it again), and every writer writes every pair."""

Arguments = Mapping[str, Any] | Pairs
"""What a caller of render gives: an object, or pairs."""

Call = tuple[str, Pairs]
"""A call to write: its name and its argument pairs."""


def argument_pairs(args: Arguments) -> list[tuple[str, Any]]:
    """The arguments as pairs, whichever way they were given."""
    return list(args.items()) if isinstance(args, Mapping) else list(args)


def json_object(pairs: Pairs) -> str:
    """`json.dumps` of an object given as pairs, each pair written even when its key repeats
    (nested values are ordinary JSON)."""
    body = ", ".join(f"{_json(key)}: {_json(value)}" for key, value in pairs)
    return "{" + body + "}"


def indent_json(text: str, indent: int, depth: int = 0) -> str:
    """Compact JSON text (`json.dumps`' `", "` and `": "` separators) laid out as
    `json.dumps(indent=indent)` lays it out (a template's `tojson(indent=4)`), keys in the
    order written, repeated keys kept; with `depth`, only the outermost `depth` levels are
    broken into lines, deeper values staying on one line (`[\n    {"a": 1},\n    {…}\n]`)."""
    out: list[str] = []
    level, at, quoted = 0, 0, False
    while at < len(text):
        char = text[at]
        if quoted:
            out.append(char)
            if char == "\\":
                out.append(text[at + 1])
                at += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
            out.append(char)
        elif char in "[{":
            level += 1
            empty = text[at + 1 : at + 2] in ("]", "}")
            out.append(char)
            if not empty and (not depth or level <= depth):
                out.append("\n" + " " * indent * level)
        elif char in "]}":
            level -= 1
            if text[at - 1] not in "[{" and (not depth or level < depth):
                out.append("\n" + " " * indent * level)
            out.append(char)
        elif char == "," and (not depth or level <= depth):
            out.append(",\n" + " " * indent * level)
            at += 1  # the space after the comma
        else:
            out.append(char)
        at += 1
    return "".join(out)


def the_call(calls: Sequence[Call]) -> Call:
    """The one call given to the writer of a dialect whose item holds one call."""
    [call] = calls
    return call


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Opening:
    """How every text a naming dialect reads as a call begins, as far as it decides at once:
    `lead` (plain text), then any run of the characters of `space` (the body of a regex
    character class), then one of `first` (another class body). On text with `lead` and its
    run followed by any other character (a marker that ends the dialect included), the
    reader fails before any call, having read no further than that character, so the
    engine gives the text back (docs/policies.md, 'Malformed calls'); the engine passes
    over such text without making the call, which a long run of `[` or `{` in prose
    otherwise costs at every character (`tables._gives_back`).

    `begins` (a class body), when set: the characters the text may begin with after any run
    of `space`; on any other the reader fails at once, having read no further than that run
    (the engine passes such openers over too: `passes.py`).

    `then`, a regex matched at that one of `first`, says more text the reader fails on
    before any call: a call array's element `{` with no key after it (`[{[`), a Python
    name that no `(` follows (`[a[`). Its match must be bounded (a constant length, or
    runs that the scan would read anyway), end on the character that tells, and hold
    nothing the reader reads past but the characters of `then_reads` (a class body), so
    that a marker it may hold is found by the scan as the call would find it.
    """

    lead: str
    space: str
    first: str
    then: str = ""
    then_reads: str = ""
    begins: str = ""


Head = tuple[Union[Ws, Lit, Name, Opening], ...]
"""How a call goes on after one of its openers, up to its name: its whitespace and literal
items, then its `Name`, or the `Opening` of the naming dialect that reads the name (the
head stops at any other item: whatever follows is not decided by the head)."""


def no_opening(_: Any) -> None:
    """A dialect that promises nothing about how its calls begin."""
    return None


@dataclass(frozen=True, slots=True)
class DialectRow:
    """One argument dialect, as every part of the runtime needs it."""

    item_class: type  # its item class (`spec.py`), the key of the table
    word: str  # how the grammar language spells it (`compiler/ir.ELEMENTS`)
    reader: Callable[[Any, tuple[str, ...], Sink], ArgumentsReader]
    # (item, calls) -> markup: one call, or every call of the output if `lists_calls`
    render: Callable[[Any, Sequence[Call]], str]
    literals: Callable[[Any], tuple[str, ...]]  # the markup literals an item names
    names_calls: bool = False  # a `CallsReader`: it reads the call's name itself
    lists_calls: bool = False  # one item holds every call of the output (`[a(), b()]`)
    # its render takes the calls' ids too, `(item, calls, ids)` (render's own where the
    # caller gave none): a dialect that may write each call's id in its text
    takes_ids: bool = False
    # (item) -> how every call it reads begins (`Opening`), or None: a naming dialect's
    # promise that lets the engine pass over text that opens none without trying a call
    opening: Callable[[Any], Opening | None] = no_opening
    # the item fields the dialect's whole-input shortcut decides as its state machine does
    # (`shortcuts.takes`: an item that sets another away from its default is read without
    # the shortcut); None: the dialect has no such shortcut
    shortcut_knows: frozenset[str] | None = None


def no_literals(_: Any) -> tuple[str, ...]:
    """A dialect whose syntax is JSON or Python: no literal of the family's markup."""
    return ()


class RenderError(ValueError):
    """Calls this family's markup cannot write so that they parse back the same."""


def too_deep_to_write() -> str:
    """What a `RenderError` says of arguments nested deeper than the parser reads."""
    return (
        f"the arguments nest too deep to write (deeper than {MAX_DEPTH} levels, the deepest read)"
    )


def render_value_text(value: Any, xml_escape: bool = False) -> str:
    """A value in markup: a string as it is, anything else as JSON; `xml_escape` for a
    dialect that decodes XML entities in values."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if xml_escape:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text
