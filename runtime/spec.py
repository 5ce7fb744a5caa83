"""The compiled form of a grammar: what a generated module hands to the runtime.

A generated module builds one `FamilySpec` from these classes. They are plain frozen
slotted dataclasses (not pydantic) because the engine reads them on every delta.
Every item and statement keeps the grammar line it came from (and its file, when a family
that `extends` another inherits it), so a misbehaving stream can be traced back to the
grammar text (`where`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable, Union

from .xml_entities import xml_unescape
from .prefixes import may_grow

BAD_NAME = re.compile(r'[\s<>{}\[\]"]')  # no function name holds these; JSON or markup does


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal marker in a call's sequence; `optional` ones are skipped when absent.

    `alternatives` are other spellings of the same marker; a `peek` literal must come
    next but is left for the following item to read (Llama's bare `{"name": …}`). A `lazy`
    optional literal (`"…"??`) reads the same; render leaves it out, as the model does.
    """

    text: str
    optional: bool = False
    alternatives: tuple[str, ...] = ()
    peek: bool = False
    lazy: bool = False
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text, *self.alternatives)


@dataclass(frozen=True, slots=True)
class Ws:
    """Any run of whitespace (possibly empty); it belongs to the markup. `write` is the
    whitespace render writes there (the family's template's, `ws(write="\n")`): reading
    takes any run whatever it says."""

    write: str = ""
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class Name:
    """The function name: the text up to (not including) the first of `until`.

    With `pattern`, the captured text is matched by that regex (fullmatch, after
    stripping) and its group `name` is the function name, its group `id` (if any) the
    tool-call id (Mistral's `NAME[CALL_ID]ID`); with `id` (the grammar's `id=header`), the
    whole stripped capture becomes the tool-call id (Kimi's `functions.f:0`). With
    `doubled` (a separator), a name written twice around it (`get_weather.get_weather`) is
    the name once when only that is a requested tool (Muse's template renders a bare tool
    as `get_weather.*`, and the model fills in the name again). With `requested`, the text is a name only when the request lists a tool of that name (none
    when no tools were given): a drifted spelling such as Step-3.5's `<functionbash>`, whose
    name is glued to its tag, is a call only where prose cannot be (`<functions>`).

    With `recipient` (a `messages` family; the call's first item), the name is not in the
    call's text: it is the recipient of the message whose body the call is (Harmony's
    `to=get_weather<|message|>{…}`). A recipient that names a requested tool is that call,
    whatever its route says; with `after_last` (a separator), so is one whose part after the
    last separator does (`ns.get_weather`), named by that part, unless a `route` names the
    recipient (a built-in `browser.search` stays the built-in's when only `search` is requested). With no tools requested,
    every recipient that no `route` names is a call. Any other message takes its route.

    With `fixed`, the call's name is that word and nothing is read for it: the opener
    before it says which tool is called (Functionary v3.1's `<|python_tag|>` calls `python`).

    With `xml_unescape`, the name (the pattern's group) is an XML attribute's value, whose
    entities are decoded (Kimi K3's template writes `&` as `&amp;` and `"` as `&quot;`).
    """

    until: tuple[str, ...] = ()
    pattern: str | None = None
    id: bool = False
    max_len: int = 256
    doubled: str = ""
    requested: bool = False
    recipient: bool = False
    after_last: str = ""
    fixed: str = ""  # the name, not in the call's text (Functionary v3.1's `<|python_tag|>`)
    xml_unescape: bool = False  # the name is an XML attribute's value: `tool="a&amp;b"`
    # the number `render` gives the first call where the pattern holds its position (Kimi
    # K3's `index="1"`; Kimi K2's `functions.NAME:0` counts from 0)
    write_index_from: int = 0
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


def where(
    spec: FamilySpec, node: "Item | CallShape | Reasoning | Section | Messages | Content | Write"
) -> str:
    """The grammar `file:line` an item or a statement of `spec` comes from."""
    return f"{node.file or spec.source}:{node.line}"


# a name item's pattern, compiled once (`re.fullmatch` looks it up in its cache per call)
_compiled = lru_cache(maxsize=512)(re.compile)


def name_of(item: Name, raw: str) -> tuple[str, str | None]:
    """The call's name in the stripped text `raw` read for `item` ("" when it holds none),
    and the id its header carries, if any."""
    header_id = None
    name = raw
    if item.pattern is not None:
        found = _compiled(item.pattern).fullmatch(raw)
        name = found.group("name") if found else ""
        if item.id:
            header_id = raw
        elif found and "id" in found.re.groupindex and found.group("id"):
            header_id = found.group("id")
    if not name or len(raw) > item.max_len or BAD_NAME.search(name):
        return "", None
    if item.xml_unescape and "&" in name:  # an attribute's value: `tool="a&amp;b"` (what
        name = xml_unescape(name)  # it decodes to was written escaped, so is no prose)
    return name, header_id


def name_reader(item: Name) -> Callable[[str], tuple[str, str | None]]:
    """`name_of(item, raw)` as a function of `raw` alone, the item's pattern compiled and
    its fields looked up once: the whole-output route reads a header per call, and a header
    that is the call's id is read anew for every call (no two are alike)."""
    if item.pattern is None or item.xml_unescape or not item.id:
        return partial(name_of, item)
    fullmatch = _compiled(item.pattern).fullmatch
    max_len = item.max_len
    bad = BAD_NAME.search

    def read(raw: str) -> tuple[str, str | None]:
        found = fullmatch(raw)
        name = found.group("name") if found else ""
        if not name or len(raw) > max_len or bad(name):
            return "", None
        return name, raw

    return read


def never_a_name(item: Name, raw: str) -> bool:
    r"""Whether the stripped text `raw`, read for `item` up to the end of the output, is no
    name however it would have gone on: a bare name holds none of BAD_NAME; a header (a
    name with a pattern) is none when no text that begins with it fits the pattern with a
    name group free of BAD_NAME (`prefixes.py`): `>python` for `(?P<name>python)`,
    MiniCPM5's `>\n"\xa0n` (its name `>\n`) or `a"b` for
    `(?P<name>[^"]*)(?:"\s+[\w:-]+="[^"]*)*`, but not `a" d`, which may still grow into
    `a" d="1`, nor any text of kimi_k3's lookahead pattern. A shape alone (spaces in a
    header) decides nothing: a header cut inside its next attribute has them too.
    Either is none once it is longer than `max_len`."""
    if len(raw) > item.max_len:
        return True
    if item.pattern is None:
        return bool(BAD_NAME.search(raw))
    return not may_grow(item.pattern, raw, "name", BAD_NAME.pattern)


@dataclass(frozen=True, slots=True)
class Skip:
    """Markup of no fixed spelling up to (not including) the first of `until`, at most
    `max_len` characters: a header such as Inkling's `<|message_model|>NAME<|content_…|>`.
    With `keep`, the text is prose, not markup: content once the call is known, given back
    with the opener when it is no call (pre-v11 Mistral's `[TOOL_CALLS] Sure: [{…}]`).
    With `id`, the text (stripped) is the model's own id of the call, written before its
    name (Solar Open's `<|tool_call:begin|>ID<|tool_call:name|>NAME`): streamed as the call's
    id, written by `render` and let through by the exporter.
    With `block`, the opener opens a block the text is in (Inkling's message): text that is
    no header (prose, a word longer than `max_len`, or a word another marker ends) is the
    block's text, content as it comes, the opener is markup, and the block's next marker is
    read as if the opener came right before it (`until` goes on with the call:
    `I will look it up.<|content_invoke_tool_json|>{…}` is a call)."""

    until: tuple[str, ...]
    max_len: int = 256
    keep: bool = False
    id: bool = False
    block: bool = False
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class XmlParams:
    """Key/value parameters written in markup: OPEN key KEY_END value VALUE_END.

    Fields are named as the grammar's `xml_params(...)` arguments. `implicit_end` markers also close an open value without being consumed (the next
    parameter opener, the function closer). `trim_newline` removes one newline (`\n` or `\r\n`)
    right after KEY_END and one right before the closer (with `keep_last_newline`, only
    the one after KEY_END: a template that writes values flush); `strip` removes all
    whitespace around the value. With `value_open` the value starts at that marker
    after the key (GLM's `</arg_key><arg_value>`). `key_pattern` reads the text
    between OPEN and KEY_END (fullmatch, after stripping): group `key` is the name and
    an optional group `text` is a per-parameter flag, raw text when its value is in
    `text_when`, JSON otherwise (DSML's `string="true"`). `xml_unescape` decodes XML
    entities in values and key names; `unescape_keys` in key names only (an attribute's
    value, where a template escapes, as Kimi K3's `key="a&amp;b"`: its values are raw). `cdata` reads `<![CDATA[…]]>` sections in a value
    verbatim: no marker ends the value inside one. `verbatim_keys` keeps a key's whitespace
    (by default a key is stripped: ` city ` is `city`), so two keys the model wrote
    differently are never merged into one. `open_alternatives`,
    `key_end_alternatives` and `value_end_alternatives` are other spellings of those
    markers (the grammar's `open=["<param name=", "<paramname="]`), read as the first.
    """

    open: str
    key_end: str
    value_end: str
    implicit_end: tuple[str, ...] = ()
    trim_newline: bool = False
    keep_last_newline: bool = False
    value_open: str = ""
    key_pattern: str | None = None
    text_when: tuple[str, ...] = ()
    strip: bool = False
    xml_unescape: bool = False
    cdata: bool = False
    # a `{` where the first parameter would open begins the arguments as one JSON object,
    # read as `json_args` reads one (SGLang's DeepSeek V3.2 detector reads such invoke bodies)
    json_body: bool = False
    verbatim_keys: bool = False
    unescape_keys: bool = False
    write_between: str = ""  # what `render` writes between two parameters (whitespace)
    write_before_value: str = ""  # what `render` writes between KEY_END and VALUE_OPEN
    # `render` writes each value flush against its key and closer (Seed-OSS's template), not
    # with the newlines `trim_newline` reads as markup; a value that begins (or, without
    # `keep_last_newline`, ends) with a newline still gets the markup newline beside it
    write_flush: bool = False
    # `render` writes a list or an object as Python's str prints it (`['rain', 'travel']`), as
    # a template printing every value with `{{ value }}` does (Seed-OSS's, MiniCPM5's); the
    # parser reads it back by the tool's schema
    write_python: bool = False
    open_alternatives: tuple[str, ...] = ()
    key_end_alternatives: tuple[str, ...] = ()
    value_end_alternatives: tuple[str, ...] = ()
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)

    @property
    def opens(self) -> tuple[str, ...]:
        return (self.open, *self.open_alternatives)

    @property
    def key_ends(self) -> tuple[str, ...]:
        return (self.key_end, *self.key_end_alternatives)

    @property
    def value_ends(self) -> tuple[str, ...]:
        return (self.value_end, *self.value_end_alternatives)


@dataclass(frozen=True, slots=True)
class XmlElements:
    """One element per argument, named by its key, nestable: PREFIX<key>…PREFIX</key>."""

    prefix: str = ""
    max_depth: int = 128
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class KeyValueArgs:
    """`{key:value,…}` with bare keys and `string` as the string delimiter (Gemma's `<|"|>`)."""

    string: str = '"'
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class KvLines:
    """`key: value` lines: one argument per `line_sep`, split at the first `kv_sep`, key and
    value stripped (a response template's `kv-lines`)."""

    line_sep: str = "\n"
    kv_sep: str = ":"
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class PythonCalls:
    """Python calls `NAME(key=value, …)`: in `[…]` separated by commas (`list`), or one after
    another (OLMo 3's one per line). Each is a call of its own."""

    list: bool = True
    # `render` writes values as JSON (`city="Paris", metric=true`), as a template that prints
    # them with `tojson` does; reading is the same (Python and JSON spellings alike)
    write_json: bool = False
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class JsonArgs:
    """The arguments are one JSON object, streamed as the model's own bytes.

    With `raw` (a key), arguments that do not open with `{` are raw text up to the next
    marker, held as `{RAW: TEXT}` (Functionary's `python` tool: its code, as `code`)."""

    raw: str = ""
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class JsonCall:
    """One JSON object that carries the name and the arguments under these keys.

    Fields are named as the grammar's `json_call(...)` arguments: `name`, `arguments` and
    `id` list the keys that may hold the name, the arguments and the call id.
    """

    name: tuple[str, ...] = ("name",)
    arguments: tuple[str, ...] = ("arguments", "parameters")
    name_is_key: bool = False  # `{NAME: {...}}`: the object's one key is the name
    id: tuple[str, ...] = ()  # a string under one of these, before the name, is the id
    require_args: bool = False  # a call only once an arguments key is seen (bare JSON in prose)
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class JsonCallArray:
    """A JSON array of call objects (`[{"name": …, "arguments": {…}}, …]`), each a call.

    With `name_is_key`, an element is `{NAME: {...}}` (Apertus). With `bare`, the brackets may
    be left out: `{…}` or `{…}, {…}` is the array of those objects (pre-v11 Mistral writes
    both). Other fields as in `JsonCall`.
    """

    name: tuple[str, ...] = ("name",)
    arguments: tuple[str, ...] = ("arguments", "parameters")
    name_is_key: bool = False
    id: tuple[str, ...] = ()
    bare: bool = False
    # how `render` writes the array, the template's layout (reading is the same whatever they
    # say): JSON indented by `write_indent` spaces (0: on one line), only the first
    # `write_indent_depth` levels broken into lines (0: every level; Cohere's 1 puts each call
    # on its own line, compact); `write_id`: each call's first key is its `id` key, holding
    # the call's position ("0", "1", …: Cohere's numbering)
    write_indent: int = 0
    write_indent_depth: int = 0
    write_id: bool = False
    # `render` writes each call's own id (the caller's, else one of its own) under the `id`
    # key after the arguments (Mistral's pre-v11 `{"name": …, "arguments": …, "id": …}`)
    write_call_id: bool = False
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


Dialect = Union[
    XmlParams, XmlElements, KeyValueArgs, KvLines, PythonCalls, JsonArgs, JsonCall, JsonCallArray
]
Item = Union[
    Lit,
    Ws,
    Skip,
    Name,
    XmlParams,
    XmlElements,
    KeyValueArgs,
    KvLines,
    PythonCalls,
    JsonArgs,
    JsonCall,
    JsonCallArray,
]


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A reasoning block: text between one of `opens` and one of `closes` is reasoning."""

    opens: tuple[str, ...]
    closes: tuple[str, ...]
    prompt_opened: bool = False  # the family's default: the prompt opened the block
    # a call opener inside the block is a call at once, ending the block there (a model
    # that calls tools from its reasoning); otherwise the block's closer or the end of the
    # output decides it (docs/policies.md, "Reasoning")
    calls_inside: bool = False
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class Section:
    """A wrapper around one or more calls; whitespace between its calls is markup.

    When a grammar declares a section, calls open only inside it, unless it is
    `optional`: then a call opener in content opens a call too.
    """

    opens: tuple[str, ...]
    closes: tuple[str, ...]
    optional: bool = False
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class Content:
    """How the family's model writes content: `opens` TEXT `closes` (Functionary v3.2's
    `>>>all\n` block, ended by the next block; Kimi K3's response element). The first
    spelling of each is the one `render` writes; every spelling is also in the family's
    `ignore` markers, so the parser reads them as markup wherever they appear outside a call.
    """

    opens: tuple[str, ...]
    closes: tuple[str, ...] = ()
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class Write:
    """What `render` writes between the parts of an output (the `write` statement): the
    whitespace the family's chat template puts there, and nothing where the grammar says
    nothing. Reading ignores it: whitespace between markup is markup."""

    between: str = ""  # between two calls
    after_reasoning: str = ""  # after a reasoning block, before the content or the calls
    after_content: str = ""  # after the content, before the calls (or their section)
    after_calls: str = ""  # after the calls (or their section), before text after them
    # before the calls (or their section) whatever comes before them, in place of
    # after_reasoning or after_content (None: those)
    before_calls: str | None = None
    in_reasoning: tuple[str, str] = ("", "")  # around the reasoning text, inside its markers
    in_section: tuple[str, str] = ("", "")  # around the calls, inside the section's markers
    # the content of an output with calls is written after them (Gemma 4's template), not
    # before; the parser reads text after the calls as content either way
    content_after_calls: bool = False
    # an output with calls and no content has an empty content block all the same (Kimi K3's
    # template writes its response element in every turn)
    content_always: bool = False
    line: int = 0  # 0: no `write` statement, everything is ""
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class Citation:
    """How the family's model marks a citation span in its answer: `opens` TEXT `closes`
    (Cohere's `<co>TEXT</co: 0:[1]>`); a marker that does not end with `end` runs on to it.
    Text unless the `citations` switch strips it (`runtime/citations.py`)."""

    opens: tuple[str, ...]
    closes: tuple[str, ...]
    end: str
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class Messages:
    """An output made of messages: HEADER RECIPIENT [FIELD …] HEADER_END body, ended by one
    of `ends` or by the next header. `header` lists the opener's spellings; a `fields` marker
    right after the recipient begins more header (up to HEADER_END, on one line). `routes`
    maps a recipient ("" for a header without one) to "reasoning", "content" (calls are text
    there), "calls" (content where calls open) or "drop" (a message to a tool the parser does
    not run: its text is no one's); any other recipient takes `default`.
    """

    header: tuple[str, ...]
    recipient: str
    header_end: str
    ends: tuple[str, ...]
    routes: tuple[tuple[str, str], ...] = ()
    default: str = "calls"
    fields: tuple[str, ...] = ()
    # written between the texts of two messages that go to the same place (content, or
    # reasoning), as the family's peers join them (Harmony's "\n"); "": glued
    join: str = ""
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class CallShape:
    """Another way the family writes a call (a second `call` statement), tried when the
    first shape fails before its name is known (Mistral's pre-v11 `[TOOL_CALLS][{…}]`)."""

    call: tuple[Item, ...]
    openers: tuple[tuple[str, int], ...]
    follows: tuple[tuple[str, ...], ...]
    line: int = 0
    file: str = ""  # its grammar file, when not the family's own (`extends`)


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One family, as the compiler lowered it from its grammar file.

    `openers` are the literals that start a call when seen in content (the leading
    optional literals and the first required one), each with the index of the call
    item that follows it. `follows[i]` lists the literals that may come right after
    the name or dialect item at index i, so it knows where its text stops.
    """

    name: str
    aliases: tuple[str, ...]
    source: str
    source_sha256: str
    call: tuple[Item, ...]
    openers: tuple[tuple[str, int], ...]
    follows: tuple[tuple[str, ...], ...]
    reasoning: tuple[Reasoning, ...] = ()
    section: Section | None = None
    ignore: tuple[str, ...] = ()  # markers dropped wherever they appear outside a call
    # markers that are each one special token of the tokenizer (`special`): an opener of
    # these that opens no call is dropped, and only the text after it goes back
    special: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()  # (name, default); strings say `${name}`
    messages: Messages | None = None
    alternatives: tuple[CallShape, ...] = ()
    # the marker the family's prompt usually ends with (a `prompt_opened` call's first opener,
    # section opener or message header): output is read as if it followed it ("": none)
    prompt_opens: str = ""
    # how the model writes content (`content` statement); None: as bare text
    content: Content | None = None
    # how the model marks citations (`citation` statement); None: it does not
    citation: Citation | None = None
    # markers dropped, with their text up to the end string, wherever `ignore` drops its
    # own: (marker, end); the `citations="strip"` switch makes them (`runtime/citations.py`)
    ignore_until: tuple[tuple[str, str], ...] = ()
    # of the `ignore`d markers, those that are markup in content only (text in reasoning):
    # the citation markers `citations="strip"` drops from the answer
    content_ignore: tuple[str, ...] = ()
    # every marker found outside a call, with the grammar `file:line` that names it
    markers_at: tuple[tuple[str, str], ...] = ()
    # what `render` writes between the parts of an output (`write` statement)
    write: Write = Write()

    @property
    def shapes(self) -> tuple[CallShape, ...]:
        """Every call shape, the first `call` statement first."""
        first = CallShape(self.call, self.openers, self.follows)
        return (first, *self.alternatives)
