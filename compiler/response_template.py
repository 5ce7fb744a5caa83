"""A Hugging Face `response_template` compiled into the family model.

A checkpoint may ship a declarative description of its output with its tokenizer (vLLM's and
SGLang's `hf` and `beam` parsers read it): a start anchor, defaults, and `fields`, each with an
opener, closers and a content parser. This module maps each construct onto the grammar
language, building the compiler's IR (`ir.Grammar`) directly, so the rest is the ordinary
pipeline: `validate`, then `lower` to a `FamilySpec`, or `str()` to print a `.tg` file
(`toolgrammar import-template`). It needs neither lark, jinja2 nor black: a parser is made
from a template at run time (`toolgrammar.parse("hf", ..., response_template=...)`).

What the grammar language cannot say is refused with one `ResponseTemplateError` line naming
the field and the construct; docs/response_templates.md lists the mapping and the refusals.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from itertools import product
from typing import Any, Iterator, Literal as L, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgrammar.runtime.json_stream import JsonScanner
from toolgrammar.runtime.limits import MAX_DEPTH
from toolgrammar.runtime.spec import FamilySpec

from . import ir, lower, validate
from .regex_cost import linear_risk

THINKING, CONTENT, TOOL_CALLS = "thinking", "content", "tool_calls"
SOURCE = "response_template"  # the spec's `source` when compiled at run time


class ResponseTemplateError(ValueError):
    """A template that is malformed or says something the grammar language cannot."""

    def __init__(self, message: str) -> None:
        # one line, whatever text of the template it quotes (a pattern may hold a newline)
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))


# ---------------------------------------------------------------- the template's shape

Markers = Union[str, list[str]]


class TemplateField(BaseModel):
    """One field of `fields`: a region of the output and how its text is read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    open: Markers | None = None
    open_pattern: str | None = None
    close: Markers | None = None
    close_pattern: str | None = None
    content: L["text", "int", "float", "bool", "json", "xml-inline", "kv-lines"] = "text"
    content_args: dict[str, Any] = Field(default_factory=dict)
    repeats: bool = False
    join: str | None = None
    optional: bool = True
    transform: Any = None
    transform_each: bool = False


class ResponseTemplate(BaseModel):
    """The whole `response_template` (version 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: L[1] = 1
    start_anchor: Markers | None = None
    start_anchor_pattern: str | None = None
    defaults: dict[str, Any] = Field(default_factory=dict)
    fields: dict[str, TemplateField] = Field(min_length=1)


def load(template: Any) -> ResponseTemplate:
    """The template validated by shape; any error becomes one `ResponseTemplateError` line."""
    if isinstance(template, ResponseTemplate):
        return template
    if not isinstance(template, dict):
        raise ResponseTemplateError(
            f"response_template: must be a JSON object, not {type(template).__name__}"
        )
    try:
        return ResponseTemplate.model_validate(template)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "response_template"
        raise ResponseTemplateError(f"response_template.{where}: {first['msg']}") from None


# ---------------------------------------------------------------- regex pieces


@dataclass(frozen=True)
class Lit:
    """Literal text: one of `texts` (a `(?:a|b)` choice), possibly `optional` (`(?:…)?`)."""

    texts: tuple[str, ...]
    optional: bool = False


@dataclass(frozen=True)
class Group:
    """A named group `(?P<name>body)`."""

    name: str
    body: str


@dataclass(frozen=True)
class Ahead:
    """A lookahead `(?=a|b)`: one of `texts` comes next and is not consumed."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Either:
    """`(?:LIT|(?=LIT2))`: a closer consumed, or a marker that ends without being consumed."""

    texts: tuple[str, ...]
    ahead: tuple[str, ...]


@dataclass(frozen=True)
class Space:
    """`\\s*` (or `\\s+`): a run of whitespace."""


Piece = Union[Lit, Group, Ahead, Either, Space]

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}


class _Unsupported(Exception):
    """A regex construct with no grammar counterpart (reported with its field)."""


def _top_level(pattern: str, start: int) -> Iterator[tuple[int, str, int]]:
    """Each character of `pattern` from `start` outside escapes and classes, with the group
    depth after it: what both readers of a group's structure need."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        else:
            depth += (ch == "(") - (ch == ")")
            yield i, ch, depth
        i += 1


def _closing_paren(pattern: str, start: int) -> int:
    """The index of the `)` that closes the group opened at `start`."""
    for i, ch, depth in _top_level(pattern, start):
        if ch == ")" and depth == 0:
            return i
    raise _Unsupported(f"an unbalanced group in /{pattern}/")


def _split_alternatives(body: str) -> list[str]:
    """`body` split at its top-level `|`."""
    parts, start = [], 0
    for i, ch, depth in _top_level(body, 0):
        if ch == "|" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return parts


def literal_choices(pattern: str, depth: int = 0) -> tuple[str, ...]:
    """The texts a literal-only pattern matches (`a|b`, `(?:a|b)c`, `\\|`, a leading `^`
    dropped); `_Unsupported` for anything else (groups nested deeper than `MAX_DEPTH`
    included: runtime/limits.py)."""
    texts: list[str] = []
    for branch in _split_alternatives(pattern):
        pieces = pattern_pieces(branch.removeprefix("^"), depth)
        if not all(isinstance(p, Lit) for p in pieces):
            raise _Unsupported(f"/{pattern}/ is not a literal or a choice of literals")
        options = [p.texts + (("",) if p.optional else ()) for p in pieces]  # type: ignore[union-attr]
        texts += ["".join(parts) for parts in product(*options)]
    texts = [t for t in dict.fromkeys(texts) if t]
    if not texts or len(texts) > 64:
        raise _Unsupported(f"/{pattern}/ matches no literal or too many")
    return tuple(texts)


def pattern_pieces(pattern: str, depth: int = 0) -> list[Piece]:
    """A pattern as a sequence of literals, named groups, lookaheads and whitespace runs.

    Runs of plain and escaped characters merge into one literal; `(?:…)` must be a choice
    of literals (`?` after it makes it optional) or a literal-or-lookahead closer. `depth`:
    the groups around it; deeper than `MAX_DEPTH`, `_Unsupported`."""
    if depth > MAX_DEPTH or (
        depth == 0 and max((d for _, _, d in _top_level(pattern, 0)), default=0) > MAX_DEPTH
    ):  # (said at once, in one pass: each level read would pass over the rest again)
        raise _Unsupported(f"groups nested deeper than {MAX_DEPTH} levels in a pattern")
    pieces: list[Piece] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "s" and pattern[i + 2 : i + 3] in ("*", "+"):
                pieces.append(Space())
                i += 3
                continue
            if nxt.isalnum() and nxt not in _ESCAPES:
                raise _Unsupported(f"the class `\\{nxt}` outside a named group in /{pattern}/")
            i = _char_piece(pieces, _ESCAPES.get(nxt, nxt), pattern, i + 2)
        elif ch == "(":
            end = _closing_paren(pattern, i)
            i = _group_piece(pattern, i, end, pieces, depth + 1)
        elif ch in ".[]{}*+?|^$)":
            raise _Unsupported(f"`{ch}` at {i} in /{pattern}/")
        else:
            i = _char_piece(pieces, ch, pattern, i + 1)
    return pieces


def _char_piece(pieces: list[Piece], char: str, pattern: str, after: int) -> int:
    """One literal character, or an optional one (`x?`; optional whitespace is a `ws`)."""
    if pattern[after : after + 1] != "?":
        _append_text(pieces, char)
        return after
    pieces.append(Space() if char.isspace() else Lit((char,), optional=True))
    return after + 1


def _append_text(pieces: list[Piece], text: str) -> None:
    """Append literal text, merged with a plain literal before it."""
    last = pieces[-1] if pieces else None
    if isinstance(last, Lit) and len(last.texts) == 1 and not last.optional:
        pieces[-1] = Lit((last.texts[0] + text,))
    else:
        pieces.append(Lit((text,)))


def _group_piece(pattern: str, start: int, end: int, pieces: list[Piece], depth: int = 1) -> int:
    """Read the group `pattern[start:end+1]` into `pieces`; the index after it."""
    inner = pattern[start + 1 : end]
    after = end + 1
    optional = pattern[after : after + 1] == "?"
    named = re.match(r"\?P<(\w+)>", inner)
    if named:
        if optional:
            raise _Unsupported(f"an optional named group in /{pattern}/")
        pieces.append(Group(named.group(1), inner[named.end() :]))
        return after
    if inner.startswith("?="):
        pieces.append(Ahead(literal_choices(inner[2:], depth)))
        return after + optional
    if not inner.startswith("?:"):
        if inner.startswith("?"):
            raise _Unsupported(f"the group `({inner})` in /{pattern}/")
        inner = "?:" + inner  # a plain group reads as a non-capturing one
    branches = _split_alternatives(inner[2:])
    ahead = [b for b in branches if b.startswith("(?=") and b.endswith(")")]
    if ahead and not optional:
        consumed = [b for b in branches if b not in ahead]
        texts = tuple(t for b in consumed for t in literal_choices(b, depth))
        looks = tuple(t for b in ahead for t in literal_choices(b[3:-1], depth))
        pieces.append(Either(texts, looks))
        return after
    pieces.append(Lit(literal_choices(inner[2:], depth), optional=optional))
    return after + optional


# ---------------------------------------------------------------- grammar nodes


def _lit(texts: tuple[str, ...], optional: bool = False) -> ir.Literal:
    return ir.Literal(text=texts[0], alternatives=texts[1:], optional=optional)


def _value(value: Any) -> ir.Value:
    """An element argument from a Python value."""
    if isinstance(value, bool):
        return ir.Bool(value=value)
    if isinstance(value, str):
        return ir.Str(value=value)
    if isinstance(value, re.Pattern):
        return ir.Regex(pattern=value.pattern)
    return ir.StrList(items=tuple(ir.Str(value=v) for v in value))


def _element(word: str, /, **args: Any) -> ir.Element:
    """An element with the given arguments; `None` ones are left out."""
    return ir.Element(
        name=word,
        args=tuple(ir.Arg(name=k, value=_value(v)) for k, v in args.items() if v is not None),
    )


def _markers(
    field: str, key: str, literal: Markers | None, pattern: str | None, check: bool = True
) -> tuple[str, ...]:
    """The literal texts of an opener or closer given as literals or as a literal pattern."""
    if literal is not None and pattern is not None:
        raise ResponseTemplateError(f"field {field!r}: both `{key}` and `{key}_pattern`")
    if literal is not None:
        texts = (literal,) if isinstance(literal, str) else tuple(dict.fromkeys(literal))
        if not texts or "" in texts:
            raise ResponseTemplateError(f"field {field!r}: `{key}` holds an empty marker")
    elif pattern is None:
        return ()
    else:
        try:
            texts = literal_choices(pattern)
        except _Unsupported as why:
            raise ResponseTemplateError(
                f"field {field!r}: `{key}_pattern` must be literal text or a choice of literals "
                f"(named groups only in the tool_calls opener): {why}"
            ) from None
        key += "_pattern"
    if check and field != "start_anchor":
        for text in texts:
            _a_marker(field, key, text)
    return texts


def _a_marker(field: str, key: str, text: str) -> None:
    """A marker is markup wherever it comes: one character, or only whitespace, is text
    any answer writes (`start_anchor: "a"` would delete every `a`)."""
    if len(text.strip()) < 2:
        raise ResponseTemplateError(
            f"field {field!r}: `{key}` {json.dumps(text)} is not a marker (one character or "
            "only whitespace is text any answer writes)"
        )


# ---------------------------------------------------------------- transforms

_PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")


@dataclass(frozen=True)
class CallSources:
    """Where a tool_calls transform takes the function's name and arguments from: a
    placeholder path each (`("name",)` a capture or element key, `("content",)` the whole
    parsed body, `("content", "arguments")` a key of it)."""

    name: tuple[str, ...]
    arguments: tuple[str, ...]


def call_sources(name: str, field: TemplateField) -> CallSources:
    """The name and arguments placeholders of a tool_calls transform."""
    where = f"field {name!r}"
    transform = field.transform
    function = transform.get("function") if isinstance(transform, dict) else None
    if not isinstance(function, dict):
        raise ResponseTemplateError(
            f'{where}: `transform` must write {{"function": {{"name": …, "arguments": …}}}}'
            " (a template without one is not supported)"
        )
    paths = []
    for key in ("name", "arguments"):
        found = (
            _PLACEHOLDER.fullmatch(function.get(key))
            if isinstance(function.get(key), str)
            else None
        )
        if found is None:
            raise ResponseTemplateError(
                f"{where}: `transform` function.{key} must be one placeholder such as "
                f'"{{name}}" (a literal or a mixed string is not supported)'
            )
        paths.append(tuple(found.group(1).split(".")))
    return CallSources(name=paths[0], arguments=paths[1])


# ---------------------------------------------------------------- fields -> statements


def _reasoning(field: TemplateField) -> ir.ReasoningStmt:
    """`thinking` → `reasoning OPENS CLOSES`."""
    _text_only(THINKING, field)
    opens = _markers(THINKING, "open", field.open, field.open_pattern)
    closes = _markers(THINKING, "close", field.close, field.close_pattern)
    if not opens:
        raise ResponseTemplateError(
            "field 'thinking': an implicit reasoning field (no `open`) is not supported; "
            "give its opener (the prompt's, read with reasoning_open=True)"
        )
    if not closes:
        raise ResponseTemplateError("field 'thinking': a reasoning field needs `close`")
    return ir.ReasoningStmt(opens=_strs(opens), closes=_strs(closes))


def _strs(texts: tuple[str, ...]) -> ir.Str | ir.StrList:
    return (
        ir.Str(value=texts[0])
        if len(texts) == 1
        else ir.StrList(items=tuple(ir.Str(value=t) for t in texts))
    )


def _text_only(name: str, field: TemplateField) -> None:
    """Reasoning and content are streamed text: other parsers, transforms and joins are
    refused (vLLM's serving adapter refuses them too)."""
    for bad, construct in (
        (field.content != "text", f"content {field.content!r}"),
        (field.transform is not None, "`transform`"),
        (field.join not in (None, ""), "`join`"),
        (bool(field.content_args) and field.content_args != {"strip": False}, "`content_args`"),
    ):
        if bad:
            raise ResponseTemplateError(
                f"field {name!r}: {construct} is not supported on a streamed text field"
            )


def _content_markers(field: TemplateField) -> list[ir.IgnoreStmt]:
    """`content` → its opener and closers are markup (`ignore`); its text is content, as is
    any text outside the other fields."""
    _text_only(CONTENT, field)
    stmts = []
    for key, literal, pattern in (
        ("open", field.open, field.open_pattern),
        ("close", field.close, field.close_pattern),
    ):
        texts = _markers(CONTENT, key, literal, pattern)
        if texts:
            stmts.append(ir.IgnoreStmt(markers=_strs(texts)))
    return stmts


def _anchor_markers(template: ResponseTemplate, others: list[str]) -> list[ir.IgnoreStmt]:
    """The start anchor, when literal, is markup wherever the output writes it (the next
    message's start); a pattern that is not literal only concerns the prompt, and so does
    an anchor that could not be read as markup: one character or whitespace, or text that
    holds another marker of the template or lies inside one (`others`)."""
    try:
        texts = _markers(
            "start_anchor", "start_anchor", template.start_anchor, template.start_anchor_pattern
        )
    except ResponseTemplateError:
        return []
    texts = tuple(
        text
        for text in texts
        if len(text.strip()) >= 2
        and not any(_inside(text, other) or _inside(other, text) for other in others)
    )
    return [ir.IgnoreStmt(markers=_strs(texts))] if texts else []


def _inside(outer: str, inner: str) -> bool:
    """Whether `inner` lies strictly inside `outer` (neither at its start nor at its end):
    streamed, it would be whole before `outer` is, and read first."""
    at = outer.find(inner, 1)
    while at > 0 and at + len(inner) == len(outer):
        at = outer.find(inner, at + 1)
    return at > 0


def _labelled_markers(template: ResponseTemplate, call: ir.CallStmt) -> list[tuple[str, str]]:
    """The markers read in content, each with the field and key it comes from."""
    found = []
    for name in (THINKING, CONTENT):
        field = template.fields.get(name)
        for key in ("open", "close") if field is not None else ():
            literal, pattern = getattr(field, key), getattr(field, key + "_pattern")
            label = (
                f"field {name!r}: `{key}`"
                if pattern is None
                else f"field {name!r}: `{key}_pattern`"
            )
            found += [(label, text) for text in _markers(name, key, literal, pattern)]
    opener = call.items[0]
    key = "open" if template.fields[TOOL_CALLS].open is not None else "open_pattern"
    if isinstance(opener, ir.Literal):
        found += [(f"field 'tool_calls': `{key}`", text) for text in opener.texts]
    return found


def _no_nested_markers(markers: list[tuple[str, str]]) -> None:
    """Refuse two markers one of which holds the other strictly inside it: a stream that
    has read up to the inner one cannot yet tell it from the outer one still arriving."""
    for label, outer in markers:
        for inner_label, inner in markers:
            if inner != outer and _inside(outer, inner):
                raise ResponseTemplateError(
                    f"{label} {json.dumps(outer)} holds {inner_label.split(': ')[1]} "
                    f"{json.dumps(inner)} of {inner_label.split(': ')[0]} inside it (a stream "
                    "could not tell them apart)"
                )


def _call(field: TemplateField) -> ir.CallStmt:
    """`tool_calls` → a `call`: the opener's pieces, the content's dialect, the closers."""
    where = "field 'tool_calls'"
    if field.join is not None:
        raise ResponseTemplateError(f"{where}: `join` is not supported on tool calls")
    if field.open is None and field.open_pattern is None:
        raise ResponseTemplateError(
            f"{where}: an implicit tool_calls field (no `open`) is not supported"
        )
    sources = call_sources(TOOL_CALLS, field)
    if field.open_pattern is not None:
        if field.open is not None:
            raise ResponseTemplateError(f"{where}: both `open` and `open_pattern`")
        try:
            pieces = pattern_pieces(field.open_pattern)
        except _Unsupported as why:
            raise ResponseTemplateError(
                f"{where}: `open_pattern` is not supported: {why}"
            ) from None
    else:
        pieces = [Lit(_markers(TOOL_CALLS, "open", field.open, None, check=False))]
    captures = {p.name for p in pieces if isinstance(p, Group)}
    items = [_on_line(item, 1) for item in _opener_items(pieces, sources)]
    body = _body_items(field, sources, captures)
    if field.content == "json":
        items = _json_opener(items, body)
    opener = items[0]
    if isinstance(opener, ir.Literal) and not opener.peek:
        key = "open" if field.open is not None else "open_pattern"
        for text in opener.texts:  # (the start of a JSON body may be one character: `{`)
            _a_marker(TOOL_CALLS, key, text)
    if items and body and _is_ws(items[-1]) and _is_ws(body[0]):
        body = body[1:]  # one run of whitespace between the opener and the body
    items += [_on_line(item, 2) for item in body]
    closes = _markers(TOOL_CALLS, "close", field.close, field.close_pattern)
    if closes:
        items += [_on_line(ir.Element(name="ws"), 3), _on_line(_lit(closes), 3)]
    return ir.CallStmt(items=tuple(items))


def _begins_json(text: str) -> bool:
    """Whether `text` is the start of a JSON object or array (`{`, `{"tool"`, `[{`; not
    `[TOOL_CALLS]`)."""
    text = text.lstrip()
    if text[:1] not in ("{", "["):
        return False
    scanner = JsonScanner(lambda _: None)
    scanner.read(text, 0, len(text))
    return not scanner.failed


def _json_opener(items: list[ir.Item], body: list[ir.Item]) -> list[ir.Item]:
    """A call opener that begins JSON (`{`, `{"tool"`, `[`) before a `json` body: written
    alone, it is the start of a body that names the call (an object, or a list for
    `transform_each`) and is read as a lookahead on that bracket, `&"{"`, as llama3_json
    reads bare call objects (the body's keys, not their order, say it is a call); anything
    else would end the body at its own brackets, and is refused."""
    opener = items[0]
    assert isinstance(opener, ir.Literal)
    if not any(_begins_json(text) for text in opener.texts):
        return items
    dialect = body[-1].name if isinstance(body[-1], ir.Element) else ""
    start = "[" if dialect == "json_call_array" else "{"
    texts = tuple(dict.fromkeys(text.lstrip() for text in opener.texts))
    if (
        len(items) == 1
        and dialect in ("json_call", "json_call_array")
        and all(_begins_json(text) and text.startswith(start) for text in texts)
    ):
        return [_on_line(_lit((start,)).model_copy(update={"peek": True}), opener.line)]
    raise ResponseTemplateError(
        f"field 'tool_calls': the opener {json.dumps(opener.texts[0])} begins JSON, so it must "
        "begin the body too: a call object (or a `transform_each` list) that names the call"
    )


def _is_ws(item: ir.Item) -> bool:
    return isinstance(item, ir.Element) and item.name == "ws"


def _on_line(item: ir.Item, line: int) -> ir.Item:
    """`item` placed on a line of its own group, so the printed call reads as opener, body
    and closer lines."""
    return item.model_copy(update={"line": line})


def _opener_items(pieces: list[Piece], sources: CallSources) -> list[ir.Item]:
    """The opener's literals and whitespace, and `name(...)` for its `name` group."""
    where = "field 'tool_calls'"
    if not pieces or not isinstance(pieces[0], Lit) or pieces[0].optional:
        raise ResponseTemplateError(f"{where}: `open_pattern` must start with literal text")
    first = pieces[0]
    stripped = tuple(text.lstrip() for text in first.texts)  # type: ignore[union-attr]
    if all(stripped):  # whitespace touching markup is markup: the opener starts at its text
        pieces = [Lit(tuple(dict.fromkeys(stripped))), *pieces[1:]]
    items: list[ir.Item] = []
    for index, piece in enumerate(pieces):
        if isinstance(piece, Lit):
            items.append(_lit(piece.texts, piece.optional))
        elif isinstance(piece, Space):
            items.append(ir.Element(name="ws"))
        elif isinstance(piece, Group):
            items += _name_items(piece, pieces[index + 1 :], sources)
        else:
            raise ResponseTemplateError(f"{where}: a lookahead in `open_pattern` is not supported")
    return items


def _name_items(group: Group, rest: list[Piece], sources: CallSources) -> list[ir.Item]:
    """`(?P<name>BODY)` → `name(until=NEXT, pattern=/(?P<name>BODY)/)`; other groups must
    not reach the function (they reach no output field vLLM serves either)."""
    where = "field 'tool_calls'"
    if group.name != "name" or sources.name != ("name",):
        if group.name in sources.name or group.name in sources.arguments:
            raise ResponseTemplateError(
                f"{where}: the capture {group.name!r} may only be the function name"
            )
        raise ResponseTemplateError(
            f"{where}: the capture {group.name!r} of `open_pattern` is not supported"
            " (only `name`, the function name)"
        )
    after = rest[0] if rest else None
    if not isinstance(after, Lit) or after.optional:
        raise ResponseTemplateError(
            f"{where}: the `name` group of `open_pattern` must be followed by literal text"
        )
    pattern = _linear_group("name", group.body, "`open_pattern`")
    return [_element("name", until=list(after.texts), pattern=pattern)]


def _linear_group(name: str, body: str, where: str) -> re.Pattern:
    """`(?P<name>BODY)` compiled, when it matches in time linear in the text: the model
    writes what it is matched against (docs/response_templates.md, "Not supported")."""
    pattern = f"(?P<{name}>{body})"
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ResponseTemplateError(
            f"field 'tool_calls': the `{name}` group of {where} is not a regex: {error}"
        ) from None
    risk = linear_risk(pattern)
    if risk:
        raise ResponseTemplateError(
            f"field 'tool_calls': the `{name}` group of {where} could take time beyond linear "
            f"on a model's output: {risk} in /{pattern}/"
        )
    return compiled


def _body_items(field: TemplateField, sources: CallSources, captures: set[str]) -> list[ir.Item]:
    """The content parser as an argument dialect."""
    where = "field 'tool_calls'"
    named_by_opener = sources.name == ("name",) and "name" in captures
    if field.content == "json":
        return _json_items(field, sources, named_by_opener)
    if field.content in ("xml-inline", "kv-lines"):
        if not named_by_opener or sources.arguments != ("content",) or field.transform_each:
            raise ResponseTemplateError(
                f"{where}: content {field.content!r} needs the name from `open_pattern`'s "
                '`name` group and `arguments` = "{content}"'
            )
        if field.content == "xml-inline":
            return [_xml_inline(field.content_args)]
        return [_kv_lines(field.content_args)]
    raise ResponseTemplateError(f"{where}: content {field.content!r} cannot carry tool calls")


def _json_items(field: TemplateField, sources: CallSources, named_by_opener: bool) -> list[ir.Item]:
    """`json` → `json_args` (name from the opener), `json_call` (name and arguments keys of
    the body) or `json_call_array` (`transform_each` over a list)."""
    where = "field 'tool_calls'"
    _json_args_supported(field.content_args)
    if named_by_opener:
        if sources.arguments != ("content",) or field.transform_each:
            raise ResponseTemplateError(
                f'{where}: with the name from `open_pattern`, `arguments` must be "{{content}}"'
            )
        return [ir.Element(name="ws"), ir.Element(name="json_args")]
    if field.transform_each:
        if len(sources.name) != 1 or len(sources.arguments) != 1:
            raise ResponseTemplateError(
                f'{where}: `transform_each` must name one key of each element, as "{{name}}"'
            )
        keys = {"name": [sources.name[0]], "arguments": [sources.arguments[0]]}
        return [ir.Element(name="ws"), _element("json_call_array", **keys)]
    if len(sources.name) != 2 or len(sources.arguments) != 2 or sources.name[0] != "content":
        raise ResponseTemplateError(
            f"{where}: `transform` must take the name and arguments from keys of the body, "
            'as "{content.name}" and "{content.arguments}"'
        )
    keys = {"name": [sources.name[1]], "arguments": [sources.arguments[1]]}
    return [ir.Element(name="ws"), _element("json_call", **keys)]


def _json_args_supported(args: dict[str, Any]) -> None:
    """JSON's dialect knobs: `allow_non_json` is the runtime's own tolerance; bare keys and
    custom string delimiters have no counterpart."""
    for key in args:
        if key != "allow_non_json":
            raise ResponseTemplateError(
                f"field 'tool_calls': json content_args {key!r} is not supported"
            )


def _xml_inline(args: dict[str, Any]) -> ir.Element:
    """`xml-inline` with a `tag_pattern` of the shape OPEN (?P<key>…) KEY_END [\\n]
    (?P<value>.*?) [\\n] CLOSE → `xml_params`."""
    where = "field 'tool_calls'"
    unknown = set(args) - {"tag_pattern", "value_parser", "merge_duplicates"}
    if unknown:
        raise ResponseTemplateError(
            f"{where}: xml-inline content_args {sorted(unknown)} not supported"
        )
    pattern = args.get("tag_pattern")
    if not isinstance(pattern, str):
        raise ResponseTemplateError(f"{where}: xml-inline needs a `tag_pattern` string")
    try:
        pieces = pattern_pieces(pattern)
    except _Unsupported as why:
        raise ResponseTemplateError(
            f"{where}: xml-inline `tag_pattern` is not supported: {why}"
        ) from None
    shape = [type(p).__name__ for p in pieces]
    lits = [p for p in pieces if isinstance(p, Lit)]
    groups = [p for p in pieces if isinstance(p, Group)]
    if [g.name for g in groups] != ["key", "value"] or shape[0] != "Lit" or shape[1] != "Group":
        raise ResponseTemplateError(
            f"{where}: xml-inline `tag_pattern` must read OPEN (?P<key>…) KEY_END (?P<value>…) CLOSE"
        )
    value_at = pieces.index(groups[1])
    between, after = pieces[2:value_at], pieces[value_at + 1 :]
    if not between or not all(isinstance(p, Lit) and not p.optional for p in between):
        raise ResponseTemplateError(f"{where}: xml-inline needs literal text between key and value")
    if not re.fullmatch(r"\.\*\??|\[\\s\\S\]\*\??|\(\?s:\.\*\??\)", groups[1].body):
        raise ResponseTemplateError(f"{where}: xml-inline value group must be `.*?`")
    key_end, newline_after_key = _strip_newline_end("".join(p.texts[0] for p in between))  # type: ignore[union-attr]
    newline_before_close, close, ahead = _closer(after)
    if lits[0].optional or len(lits[0].texts) != 1:
        raise ResponseTemplateError(f"{where}: xml-inline opener must be literal text")
    trim = newline_after_key or newline_before_close
    element = _element(
        "xml_params",
        open=lits[0].texts[0],
        key_end=key_end,
        value_end=list(close) if len(close) > 1 else close[0],
        implicit_end=list(ahead) or None,
        trim_newline=True if trim else None,
        keep_last_newline=True if newline_after_key and not newline_before_close else None,
        key_pattern=_key_pattern(groups[0].body, key_end),
        strip=True if _strips(args.get("value_parser")) else None,
    )
    return element


def _strip_newline_end(text: str) -> tuple[str, bool]:
    """`text` without one trailing newline, and whether it had one."""
    return (text[:-1], True) if text.endswith("\n") and len(text) > 1 else (text, False)


def _closer(after: list[Piece]) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """What follows the value group: an optional leading newline, the closers, the
    lookahead markers that end a value without being consumed."""
    where = "field 'tool_calls'"
    newline = False
    if (
        after
        and isinstance(after[0], Lit)
        and not after[0].optional
        and after[0].texts[0].startswith("\n")
    ):
        rest = after[0].texts[0][1:]
        newline = True
        after = ([Lit((rest,))] if rest else []) + after[1:]
    if len(after) != 1:
        raise ResponseTemplateError(f"{where}: xml-inline `tag_pattern` must end with its closer")
    last = after[0]
    if isinstance(last, Lit) and not last.optional:
        return newline, last.texts, ()
    if isinstance(last, Either) and last.texts:
        return newline, last.texts, last.ahead
    raise ResponseTemplateError(f"{where}: xml-inline `tag_pattern` must end with a literal closer")


def _key_pattern(body: str, key_end: str) -> re.Pattern | None:
    """A `key_pattern` only when the key group says more than "anything up to KEY_END"."""
    generic = {r"\w+", r".+?", r".*?", r"[^>]+", r"[^\"]+", r'[^"]+', r"[^']+", r"[^<]+"}
    if body in generic or body == f"[^{re.escape(key_end[:1])}]+":
        return None
    return _linear_group("key", body, "the xml-inline `tag_pattern`")


def _strips(value_parser: Any) -> bool:
    """Whether the value parser strips its text; only `text` parsers are supported (the
    runtime types every value from the tool's schema instead of `int`/`json` parsers)."""
    if value_parser is None:
        return False
    if not isinstance(value_parser, dict) or value_parser.get("name", "text") != "text":
        name = value_parser.get("name") if isinstance(value_parser, dict) else value_parser
        raise ResponseTemplateError(
            f"field 'tool_calls': value_parser {name!r} is not supported (values are typed by "
            "the tool's schema)"
        )
    args = value_parser.get("args") or {}
    return bool(args.get("strip", True))


def _kv_lines(args: dict[str, Any]) -> ir.Element:
    """`kv-lines` → `kv_lines(line_sep=, kv_sep=)`."""
    unknown = set(args) - {"line_sep", "kv_sep", "value_parser", "strip"}
    if unknown:
        raise ResponseTemplateError(
            f"field 'tool_calls': kv-lines content_args {sorted(unknown)} not supported"
        )
    if args.get("strip", True) is not True or not _strips(
        args.get("value_parser") or {"name": "text"}
    ):
        raise ResponseTemplateError(
            "field 'tool_calls': kv-lines without stripping is not supported"
        )
    line_sep, kv_sep = args.get("line_sep", "\n"), args.get("kv_sep", ":")
    if not isinstance(line_sep, str) or not isinstance(kv_sep, str) or not line_sep or not kv_sep:
        raise ResponseTemplateError(
            "field 'tool_calls': kv-lines separators must be non-empty strings"
        )
    return _element("kv_lines", line_sep=line_sep, kv_sep=kv_sep)


# ---------------------------------------------------------------- the whole template


def template_grammar(template: Any, name: str = "hf") -> ir.Grammar:
    """The grammar IR that reads what `template` describes."""
    loaded = load(template)
    unsupported = set(loaded.fields) - {THINKING, CONTENT, TOOL_CALLS}
    if unsupported:
        raise ResponseTemplateError(
            f"field {sorted(unsupported)[0]!r}: only thinking, content and tool_calls fields "
            "are supported"
        )
    if set(loaded.defaults) - {"role"}:
        raise ResponseTemplateError(
            f"defaults: {sorted(set(loaded.defaults) - {'role'})[0]!r} is not supported (only role)"
        )
    if loaded.start_anchor is None and loaded.start_anchor_pattern is None:
        raise ResponseTemplateError(
            "response_template: needs `start_anchor` or `start_anchor_pattern`"
        )
    if TOOL_CALLS not in loaded.fields:
        raise ResponseTemplateError("response_template: a `tool_calls` field is needed")
    statements: list[Any] = [ir.FamilyStmt(name=ir.Ident(name=name))]
    if THINKING in loaded.fields:
        statements.append(_reasoning(loaded.fields[THINKING]))
    if CONTENT in loaded.fields:
        statements += _content_markers(loaded.fields[CONTENT])
    call = _call(loaded.fields[TOOL_CALLS])
    markers = _labelled_markers(loaded, call)
    _no_nested_markers(markers)
    statements += _anchor_markers(loaded, [text for _, text in markers])
    statements.append(call)
    return ir.Grammar(doc=_doc(name), statements=tuple(statements))


def _doc(name: str) -> tuple[str, ...]:
    return (
        f"{name}: printed by `toolgrammar import-template` from a response_template.",
        "Text outside the template's fields is content (the template's reader drops it).",
    )


def template_text(template: Any, name: str = "hf") -> str:
    """The `.tg` grammar equivalent to `template`, checked by the compiler's validation."""
    grammar = template_grammar(template, name)
    text = str(grammar)
    _check(grammar, text)
    return text


def _check(grammar: ir.Grammar, text: str) -> None:
    """The compiler's static checks on the IR; their first message as one error line."""
    report = validate.Report(SOURCE, text)
    validate.validate_grammar(grammar, text, SOURCE, report)
    validate.validate_params(grammar, report)
    if report.errors:
        raise ResponseTemplateError(f"response_template: {report.errors[0].message}")


_CACHE: OrderedDict[str, FamilySpec] = OrderedDict()
CACHE_SIZE = 32


def template_spec(template: Any, name: str = "hf") -> FamilySpec:
    """The runtime spec of `template`, compiled once per distinct template (by value; the
    last `CACHE_SIZE` are kept)."""
    key = name + "\0" + _canonical(template)
    spec = _CACHE.get(key)
    if spec is not None:
        _CACHE.move_to_end(key)
        return spec
    grammar = template_grammar(template, name)
    text = str(grammar)
    _check(grammar, text)
    spec = lower.lower(grammar, SOURCE, hashlib.sha256(text.encode("utf-8")).hexdigest())
    _CACHE[key] = spec
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return spec


def _canonical(template: Any) -> str:
    """The cache key of a template: its JSON with sorted keys."""
    if isinstance(template, BaseModel):
        template = template.model_dump(exclude_unset=True)
    try:
        return json.dumps(template, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        raise ResponseTemplateError("response_template: must be JSON data") from None
