"""The grammar IR: what a `.tg` file says, with the position of every node.

Nodes are frozen pydantic models. Each prints itself back as grammar text (`str()`,
pegen style) so errors and generated comments can quote the grammar exactly, and a
whole `Grammar` prints back to a file that parses to the same IR.

Call items are deliberately generic: a `Literal`, or an `Element` (a word with keyword
arguments). Which words and arguments exist is data, in `ELEMENTS`, shared by the
validation and the lowering: growing the language means adding a row there (naming the
runtime class it lowers to, whose fields are the row's argument names), not a new node type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Literal as L, Union

from pydantic import BaseModel, ConfigDict, Field

from toolgrammar.runtime import spec as rt


class Node(BaseModel):
    """Base of every IR node: 1-based `line` and `column` of its first character (positions,
    `lines` too, are left out of `shape`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int = 0
    column: int = 0

    def shape(self) -> Any:
        """The node as plain data without positions, to compare two parses of one grammar."""
        return _drop_positions(self.model_dump())


def _drop_positions(data: Any) -> Any:
    if isinstance(data, dict):
        return {
            k: _drop_positions(v) for k, v in data.items() if k not in ("line", "column", "lines")
        }
    if isinstance(data, (list, tuple)):
        return [_drop_positions(v) for v in data]
    return data


# ---------------------------------------------------------------- text helpers


def quote(text: str) -> str:
    """A grammar STRING for `text`: JSON escapes, printable unicode kept as is."""
    out = []
    for ch in text:
        if ch in '"\\' or not ch.isprintable():
            out.append(json.dumps(ch)[1:-1])  # \" \\ \n \t \u2028 ...
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def regex_literal(pattern: str) -> str:
    """A grammar REGEX for `pattern`: slashes escaped, other escapes kept verbatim."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        out.append("\\/" if ch == "/" else ch)
        i += 1
    return "/" + "".join(out) + "/"


def unescape_regex(body: str) -> str:
    """The pattern inside a REGEX token body: only `\\/` means something else in Python."""
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            pair = body[i : i + 2]
            out.append("/" if pair == "\\/" else pair)
            i += 2
            continue
        out.append(body[i])
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- values


class Str(Node):
    kind: L["str"] = "str"
    value: str

    def __str__(self) -> str:
        return quote(self.value)


class StrList(Node):
    kind: L["list"] = "list"
    items: tuple[Str, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(str(s) for s in self.items) + "]"


class Regex(Node):
    kind: L["regex"] = "regex"
    pattern: str

    def __str__(self) -> str:
        return regex_literal(self.pattern)


class Bool(Node):
    kind: L["bool"] = "bool"
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


class Int(Node):
    kind: L["int"] = "int"
    value: int

    def __str__(self) -> str:
        return str(self.value)


class Word(Node):
    kind: L["word"] = "word"
    word: str

    def __str__(self) -> str:
        return self.word


Value = Annotated[Union[Str, StrList, Regex, Bool, Int, Word], Field(discriminator="kind")]
Markers = Annotated[Union[Str, StrList], Field(discriminator="kind")]


def strings(value: Str | StrList) -> tuple[str, ...]:
    """The texts of a STRING or a list of STRINGs."""
    return (value.value,) if isinstance(value, Str) else tuple(s.value for s in value.items)


def describe(value: Value) -> str:
    """How an error message names a value's type."""
    return {
        "str": "a string",
        "list": "a list",
        "regex": "a regex",
        "bool": "a boolean",
        "int": "an integer",
        "word": f"the word `{getattr(value, 'word', '')}`",
    }[value.kind]


# ---------------------------------------------------------------- call items


class Arg(Node):
    """`name=value` inside an element's parentheses."""

    name: str
    value: Value

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


class Literal(Node):
    """A marker the model writes verbatim; `optional` when written `"..."?`, and also `lazy`
    when written `"..."??` (render leaves it out: the model seldom writes it).

    `["a", "b"]` is a choice: any one of the texts (the first is the canonical one).
    `&"{"` is a lookahead: the text must come next but stays for the next item to read.
    """

    kind: L["literal"] = "literal"
    text: str
    optional: bool = False
    alternatives: tuple[str, ...] = ()
    peek: bool = False
    lazy: bool = False
    lines: tuple[int, ...] = ()  # the line of each spelling of a choice (it may span lines)

    def __str__(self) -> str:
        if self.alternatives:
            body = "[" + ", ".join(quote(t) for t in (self.text, *self.alternatives)) + "]"
        else:
            body = quote(self.text)
        mark = "??" if self.lazy else "?" if self.optional else ""
        return ("&" if self.peek else "") + body + mark

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text, *self.alternatives)


class Element(Node):
    """A word item, with keyword arguments: `ws`, `name(until=">")`, `xml_params(...)`."""

    kind: L["element"] = "element"
    name: str
    args: tuple[Arg, ...] = ()

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}(" + ", ".join(str(a) for a in self.args) + ")"

    def arg(self, name: str) -> Value | None:
        """The first argument called `name`, if given."""
        return next((a.value for a in self.args if a.name == name), None)


Item = Annotated[Union[Literal, Element], Field(discriminator="kind")]


# ---------------------------------------------------------------- statements


class Ident(Node):
    """A registered name (family or alias), positioned for duplicate reports."""

    name: str

    def __str__(self) -> str:
        return self.name


class FamilyStmt(Node):
    kind: L["family"] = "family"
    name: Ident

    def __str__(self) -> str:
        return f"family {self.name}"


class AliasesStmt(Node):
    kind: L["aliases"] = "aliases"
    names: tuple[Ident, ...]

    def __str__(self) -> str:
        return "aliases " + ", ".join(str(n) for n in self.names)


class ExtendsStmt(Node):
    """`extends NAME`: start from another family's grammar; statements given here replace
    the inherited statements of the same kind."""

    kind: L["extends"] = "extends"
    name: Ident

    def __str__(self) -> str:
        return f"extends {self.name}"


class ParamStmt(Node):
    """`param NAME = "default"`: a value chosen when a parser is made, used as `${NAME}`
    inside any string of the grammar (Hunyuan's per-checkpoint tag suffix)."""

    kind: L["param"] = "param"
    name: Ident
    default: Str

    def __str__(self) -> str:
        return f"param {self.name} = {self.default}"


class ReasoningStmt(Node):
    kind: L["reasoning"] = "reasoning"
    opens: Markers
    closes: Markers
    prompt_opened: bool = False
    calls_inside: bool = False  # a call opener inside the block is a call at once

    def __str__(self) -> str:
        flag = " prompt_opened" if self.prompt_opened else ""
        flag += " calls_inside" if self.calls_inside else ""
        return f"reasoning {self.opens} {self.closes}{flag}"


class SectionStmt(Node):
    kind: L["section"] = "section"
    opens: Markers
    closes: Markers
    optional: bool = False
    prompt_opened: bool = False

    def __str__(self) -> str:
        flag = " optional" if self.optional else ""
        opened = " prompt_opened" if self.prompt_opened else ""
        return f"section {self.opens} {self.closes}{flag}{opened}"


class MessagesStmt(Node):
    """`messages HEADER /RECIPIENT/ [FIELDS] HEADER_END ENDS`: output made of messages whose
    header names a recipient (`to=self<|message|>`); `route` statements say where each goes.
    HEADER may be a list of spellings; FIELDS, markers that may follow the recipient and begin
    more of the header (Harmony's `<|channel|>commentary`, ` <|constrain|>code`)."""

    kind: L["messages"] = "messages"
    header: Markers
    recipient: Regex
    fields: StrList | None = None
    header_end: Str
    ends: Markers
    prompt_opened: bool = False
    join: Str | None = None  # between the texts of messages that go to the same place

    def __str__(self) -> str:
        fields = f" {self.fields}" if self.fields is not None else ""
        opened = " prompt_opened" if self.prompt_opened else ""
        opened += f" join {self.join}" if self.join is not None else ""
        return (
            f"messages {self.header} {self.recipient}{fields} {self.header_end} {self.ends}{opened}"
        )


ROUTE_KINDS = ("reasoning", "content", "calls", "drop")


class RouteStmt(Node):
    """`route RECIPIENTS KIND` or `route default KIND`: a message to those recipients is
    reasoning, content (calls are text there), calls (content where calls open) or dropped
    (a message to a tool the parser does not run: Harmony's built-in `python`)."""

    kind: L["route"] = "route"
    recipients: Markers | None = None  # None: the default route
    to: Ident

    def __str__(self) -> str:
        who = "default" if self.recipients is None else str(self.recipients)
        return f"route {who} {self.to}"


class SpecialStmt(Node):
    """`special MARKERS`: markers that are each one special token of the family's tokenizer
    (a call opener of these that opens no call is dropped, its text given back)."""

    kind: L["special"] = "special"
    markers: Markers

    def __str__(self) -> str:
        return f"special {self.markers}"


class IgnoreStmt(Node):
    """`ignore MARKERS`: markers dropped wherever they appear outside a call."""

    kind: L["ignore"] = "ignore"
    markers: Markers

    def __str__(self) -> str:
        return f"ignore {self.markers}"


class ContentStmt(Node):
    """`content OPENS [CLOSES]`: how the family's model writes content (Functionary v3.2's
    `>>>all\n` block); its markers are markup wherever they appear outside a call."""

    kind: L["content"] = "content"
    opens: Markers
    closes: Markers | None = None

    def __str__(self) -> str:
        closes = f" {self.closes}" if self.closes is not None else ""
        return f"content {self.opens}{closes}"


RENDER_ARGS = {  # the `render` statement's arguments: what each takes
    "between": "a string",
    "after_reasoning": "a string",
    "after_content": "a string",
    "after_calls": "a string",
    "before_calls": "a string",
    "in_reasoning": "a list of two strings",
    "in_section": "a list of two strings",
    "content_after_calls": "true or false",
    "content_always": "true or false",
}


class RenderStmt(Node):
    """`render between="\n" after_content="\n" in_section=["\n", "\n"]`: the whitespace
    `render` writes between the parts of an output, the family's chat template's (none
    where the grammar says none); reading is the same whatever it says."""

    kind: L["render"] = "render"
    args: tuple[Arg, ...] = ()

    def __str__(self) -> str:
        return "render " + " ".join(str(a) for a in self.args)

    def arg(self, name: str) -> Value | None:
        return next((a.value for a in self.args if a.name == name), None)


class CitationStmt(Node):
    """`citation OPENS CLOSES END`: how the family's model marks a citation span in its
    answer (Cohere's `<co>TEXT</co: 0:[1]>`). A marker that does not end with END runs on
    to it (`</co:` … `>`). With `citations="strip"` the markup is dropped and the text kept;
    by default it is text like any other."""

    kind: L["citation"] = "citation"
    opens: Markers
    closes: Markers
    end: Str

    def __str__(self) -> str:
        return f"citation {self.opens} {self.closes} {self.end}"


class CallStmt(Node):
    kind: L["call"] = "call"
    items: tuple[Item, ...]
    prompt_opened: bool = False  # the prompt usually ends with this call's first opener

    def __str__(self) -> str:
        head = "call prompt_opened" if self.prompt_opened else "call"
        return head + "\n" + "\n".join("    " + text for _, text in item_lines(self.items))


def item_lines(items: tuple[Item, ...]) -> list[tuple[int, str]]:
    """Items grouped by the grammar line they start on, as (line, printed text) pairs."""
    groups: list[tuple[int, list[str]]] = []
    for item in items:
        if groups and groups[-1][0] == item.line:
            groups[-1][1].append(str(item))
        else:
            groups.append((item.line, [str(item)]))
    return [(line, " ".join(texts)) for line, texts in groups]


Statement = Annotated[
    Union[
        FamilyStmt,
        AliasesStmt,
        ExtendsStmt,
        ParamStmt,
        ReasoningStmt,
        SectionStmt,
        IgnoreStmt,
        SpecialStmt,
        ContentStmt,
        CitationStmt,
        MessagesStmt,
        RouteStmt,
        CallStmt,
        RenderStmt,
    ],
    Field(discriminator="kind"),
]


class Grammar(Node):
    """One `.tg` file: its leading comment block (`doc`) and its statements in order."""

    doc: tuple[str, ...] = ()
    statements: tuple[Statement, ...] = ()

    def __str__(self) -> str:
        lines = [f"# {d}" if d else "#" for d in self.doc]
        if lines:
            lines.append("")
        after_call = False
        for stmt in self.statements:
            is_call = isinstance(stmt, CallStmt)
            if (is_call or after_call) and lines and lines[-1]:
                lines.append("")
            lines.append(str(stmt))
            after_call = is_call
        return "\n".join(lines) + "\n"

    def of(self, kind: type[Node]) -> list[Any]:
        """The statements of one kind, in file order."""
        return [s for s in self.statements if isinstance(s, kind)]


# ---------------------------------------------------------------- the element table


class ArgType(Enum):
    """What an argument accepts; the value is how messages name it."""

    STRING = "a string"
    STRINGS = "a string or a list of strings"
    SPELLINGS = "a string or a list of its spellings"
    REGEX = "a regex /.../"
    BOOL = "true or false"
    INT = "an integer"
    HEADER = "the word `header`"


@dataclass(frozen=True)
class Param:
    type: ArgType
    required: bool = False
    default: Any = None
    groups: tuple[str, ...] = ()  # a REGEX argument: its required named group(s)


@dataclass(frozen=True)
class ElementSig:
    """One item word: the runtime item class it lowers to, its arguments (each lowered to
    the item field of the same name; one left out keeps the field's default; a SPELLINGS
    argument `NAME` lowers its first spelling to `NAME` and the others to
    `NAME_alternatives`), and its role in a call."""

    item_class: type
    params: dict[str, Param] = field(default_factory=dict)
    is_dialect: bool = False  # parses the arguments
    gives_name: bool = False  # yields the function name


ELEMENTS: dict[str, ElementSig] = {
    "ws": ElementSig(rt.Ws, params={"write": Param(ArgType.STRING, default="")}),
    "skip": ElementSig(
        rt.Skip,
        params={
            "until": Param(ArgType.STRINGS, required=True),
            "max_len": Param(ArgType.INT, default=256),
            "keep": Param(ArgType.BOOL, default=False),
            "id": Param(ArgType.BOOL, default=False),
            "block": Param(ArgType.BOOL, default=False),
        },
    ),
    "name": ElementSig(
        rt.Name,
        params={
            "until": Param(ArgType.STRINGS, default=()),
            "pattern": Param(ArgType.REGEX, groups=("name",)),
            "id": Param(ArgType.HEADER),
            "max_len": Param(ArgType.INT, default=256),
            "doubled": Param(ArgType.STRING, default=""),
            "requested": Param(ArgType.BOOL, default=False),
            "recipient": Param(ArgType.BOOL, default=False),
            "after_last": Param(ArgType.STRING, default=""),
            "fixed": Param(ArgType.STRING, default=""),
            "xml_unescape": Param(ArgType.BOOL, default=False),
            "write_index_from": Param(ArgType.INT, default=0),
        },
        gives_name=True,
    ),
    "xml_params": ElementSig(
        rt.XmlParams,
        params={
            "open": Param(ArgType.SPELLINGS, required=True),
            "key_end": Param(ArgType.SPELLINGS, required=True),
            "value_end": Param(ArgType.SPELLINGS, required=True),
            "implicit_end": Param(ArgType.STRINGS, default=()),
            "trim_newline": Param(ArgType.BOOL, default=False),
            "keep_last_newline": Param(ArgType.BOOL, default=False),
            "value_open": Param(ArgType.STRING, default=""),
            "key_pattern": Param(ArgType.REGEX, groups=("key",)),
            "text_when": Param(ArgType.STRINGS, default=()),
            "strip": Param(ArgType.BOOL, default=False),
            "xml_unescape": Param(ArgType.BOOL, default=False),
            "cdata": Param(ArgType.BOOL, default=False),
            "json_body": Param(ArgType.BOOL, default=False),
            "verbatim_keys": Param(ArgType.BOOL, default=False),
            "unescape_keys": Param(ArgType.BOOL, default=False),
            "write_between": Param(ArgType.STRING, default=""),
            "write_before_value": Param(ArgType.STRING, default=""),
            "write_flush": Param(ArgType.BOOL, default=False),
            "write_python": Param(ArgType.BOOL, default=False),
        },
        is_dialect=True,
    ),
    "xml_elements": ElementSig(
        rt.XmlElements,
        params={
            "prefix": Param(ArgType.STRING, default=""),
            "max_depth": Param(ArgType.INT, default=128),
        },
        is_dialect=True,
    ),
    "keyvalue_args": ElementSig(
        rt.KeyValueArgs,
        params={"string": Param(ArgType.STRING, required=True)},
        is_dialect=True,
    ),
    "kv_lines": ElementSig(
        rt.KvLines,
        params={
            "line_sep": Param(ArgType.STRING, default="\n"),
            "kv_sep": Param(ArgType.STRING, default=":"),
        },
        is_dialect=True,
    ),
    "python_calls": ElementSig(
        rt.PythonCalls,
        params={
            "list": Param(ArgType.BOOL, default=True),
            "write_json": Param(ArgType.BOOL, default=False),
        },
        is_dialect=True,
        gives_name=True,
    ),
    "json_args": ElementSig(
        rt.JsonArgs, params={"raw": Param(ArgType.STRING, default="")}, is_dialect=True
    ),
    "json_call": ElementSig(
        rt.JsonCall,
        params={
            "name": Param(ArgType.STRINGS, default=("name",)),
            "arguments": Param(ArgType.STRINGS, default=("arguments", "parameters")),
            "name_is_key": Param(ArgType.BOOL, default=False),
            "id": Param(ArgType.STRINGS, default=()),
            "require_args": Param(ArgType.BOOL, default=False),
        },
        is_dialect=True,
        gives_name=True,
    ),
    "json_call_array": ElementSig(
        rt.JsonCallArray,
        params={
            "name": Param(ArgType.STRINGS, default=("name",)),
            "arguments": Param(ArgType.STRINGS, default=("arguments", "parameters")),
            "name_is_key": Param(ArgType.BOOL, default=False),
            "id": Param(ArgType.STRINGS, default=()),
            "bare": Param(ArgType.BOOL, default=False),
            "write_indent": Param(ArgType.INT, default=0),
            "write_indent_depth": Param(ArgType.INT, default=0),
            "write_id": Param(ArgType.BOOL, default=False),
            "write_call_id": Param(ArgType.BOOL, default=False),
        },
        is_dialect=True,
        gives_name=True,
    ),
}
"""Every item word of the language. Iterated only through sorted() where order shows."""
