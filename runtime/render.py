"""Writing calls in a family's markup: the text a model would write, from the grammar.

`render_output` walks a family's `FamilySpec` (reasoning, section, the first call shape)
and writes each call as the family's model writes it: the canonical spelling of every
marker, optional literals included unless the grammar marks them lazy (`"…"??`), the
whitespace the grammar's `ws(write=…)` says (none by default), values in the dialect's own
syntax.
A name or key read through a pattern (Kimi's `functions.NAME:IDX`, DSML's
`name="KEY" string="true"`) is written in the first shape the pattern reads back.

The result is checked by parsing it back: a value the markup cannot carry (a string
holding the family's own closing marker) raises `RenderError` instead of producing text
that would parse to something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .dialects import DIALECTS
from .keyvalue_args import render_keyvalue
from .limits import MAX_DEPTH, deeper_than
from .protocol import Arguments, Call, RenderError, argument_pairs, render_value_text
from .protocol import too_deep_to_write
from .python_calls import render_python
from .spec import FamilySpec, Lit, Name, Skip, Ws, where
from .xml_elements import render_element
from .xml_params import KEY_SHAPES, render_key

__all__ = [  # the writers of values each dialect module keeps, gathered for callers
    "Arguments",
    "HEADER_SHAPES",
    "KEY_SHAPES",
    "RenderError",
    "Piece",
    "call_pieces",
    "lists_calls",
    "output_pieces",
    "content_block",
    "render_call",
    "render_element",
    "render_header",
    "render_key",
    "render_keyvalue",
    "render_output",
    "render_python",
    "render_value_text",
    "written_id",
]

HEADER_SHAPES = (
    '"{name}"',
    "{name}",
    "functions.{name}:{index}",
    "{name}:{index}",
    "functions.{name}",
    'tool="{name}" index="{index}"',
)


def render_header(item: Name, name: str, index: int) -> str:
    """A name (or header) that the item's pattern reads back as `name`."""
    if item.fixed:
        if name != item.fixed:
            raise RenderError(f"this call shape calls {item.fixed!r} only, not {name!r}")
        return ""
    if item.pattern is None:
        return name
    for shape in HEADER_SHAPES:
        text = shape.format(name=name, index=index)
        found = re.fullmatch(item.pattern, text)
        if found and found.group("name") == name:
            return " " + text if shape.startswith("tool=") else text
    raise RenderError(f"cannot write the name {name!r} in the shape /{item.pattern}/ reads")


def written_id(index: int) -> str:
    """The id `render` writes where the markup carries the model's own (`skip(id=true)`) and
    the caller gave none: ten lowercase letters and digits (Solar Open's template asks for
    that shape), from the call's position so that a rendering is reproducible."""
    return f"call{index:06d}"


def lists_calls(spec: FamilySpec) -> bool:
    """The family's dialect writes every call of an output in one item (`[a(), b()]`)."""
    return any((row := DIALECTS.get(type(item))) and row.lists_calls for item in spec.call)


@dataclass(frozen=True)
class Piece:
    """A stretch of rendered text and the grammar part that wrote it (`where` is its
    `file:line`, `what` names it), so a difference from the model's own text is told with
    the grammar line to change."""

    text: str
    where: str
    what: str


def render_call(
    spec: FamilySpec,
    name: str,
    args: Arguments,
    index: int,
    more: Sequence[tuple[str, Arguments]] = (),
    call_id: str | None = None,
) -> str:
    """One call in the family's first call shape, every marker in its canonical spelling;
    the arguments (and a name the dialect carries) in the dialect's own syntax. `more` calls
    join it in the item of a dialect that lists calls, as a model writes them. Where the
    markup carries the call's id, `call_id` is written (by default `written_id(index)`)."""
    return "".join(p.text for p in call_pieces(spec, name, args, index, more, call_id))


def call_pieces(
    spec: FamilySpec,
    name: str,
    args: Arguments,
    index: int,
    more: Sequence[tuple[str, Arguments]] = (),
    call_id: str | None = None,
    more_ids: Sequence[str | None] = (),
) -> list[Piece]:
    """`render_call`'s text, item by item. `more_ids` are the ids of the `more` calls, for
    a dialect whose row `takes_ids` (the call's own id in its JSON: Mistral's `"id": …`)."""
    calls: list[Call] = [(n, argument_pairs(a)) for n, a in [(name, args), *more]]
    for call_name, pairs in calls:  # the arguments object is 1 level: its values get the rest
        if any(deeper_than(value, MAX_DEPTH - 1) for _, value in pairs):
            raise RenderError(f"{spec.name}: call {call_name!r}: {too_deep_to_write()}")
    given = [call_id, *more_ids, *[None] * (len(more) - len(more_ids))]
    ids = [i or written_id(n) for n, i in enumerate(given)]
    out: list[Piece] = []
    for item in spec.call:
        at = where(spec, item)
        if isinstance(item, Lit):
            # a lookahead is written by the item that reads it; a lazy one not at all
            if not (item.peek or item.lazy):
                out.append(Piece(item.text, at, f"literal {item.text!r}"))
        elif isinstance(item, Ws):
            out.append(Piece(item.write, at, f"ws(write={item.write!r})"))
        elif isinstance(item, Name):
            try:
                header = render_header(item, name, index + item.write_index_from)
                out.append(Piece(header, at, "name"))
            except RenderError as error:  # said with the grammar line the shape comes from
                raise RenderError(f"{spec.source}:{item.line}: {error}") from None
        elif isinstance(item, Skip) and item.id:
            out.append(Piece(call_id or written_id(index), at, "skip(id=true)"))
        elif (row := DIALECTS.get(type(item))) is not None:
            try:
                chosen = calls if row.lists_calls else calls[:1]
                if row.takes_ids:
                    text = row.render(item, chosen, ids[: len(chosen)])
                else:
                    text = row.render(item, chosen)
            except RenderError as error:
                raise RenderError(f"{spec.name}: {error}") from None
            out.append(Piece(text, at, type(item).__name__))
        # other skipped headers need no text
    return out


def render_output(
    spec: FamilySpec,
    calls: Sequence[tuple[str, Arguments]],
    *,
    content: str | None = None,
    reasoning: str | None = None,
    after: str | None = None,
    ids: Sequence[str | None] = (),
) -> str:
    """The whole output: reasoning, content, the calls (in the section, if any), then text.
    `ids` are the calls' ids, for a markup that carries them (`skip(id=true)`).
    Content (and the text after the calls) is written as the grammar's `content` statement
    spells it (`>>>all\nTEXT`), else as bare text; between the parts, only what the
    grammar's `write` statement says."""
    pieces = output_pieces(spec, calls, content=content, reasoning=reasoning, after=after, ids=ids)
    return "".join(p.text for p in pieces)


def output_pieces(
    spec: FamilySpec,
    calls: Sequence[tuple[str, Arguments]],
    *,
    content: str | None = None,
    reasoning: str | None = None,
    after: str | None = None,
    ids: Sequence[str | None] = (),
) -> list[Piece]:
    """`render_output`'s text, each piece with the grammar line that wrote it."""
    write = spec.write
    at_write = where(spec, write) if write.line else spec.source
    if write.content_after_calls and calls and content:  # the template's order: calls first
        after, content = content + (after or ""), None

    def sep(key: str, text: str) -> Piece:
        said = f"render {key}={text!r}" if write.line else f"no `render` statement: {key}=''"
        return Piece(text, at_write, said)

    parts: list[tuple[str, list[Piece]]] = []  # (the write key that follows it, its text)
    if reasoning is not None:
        if not spec.reasoning:
            raise RenderError(f"family {spec.name!r} has no reasoning markers")
        block, at = spec.reasoning[0], where(spec, spec.reasoning[0])
        text = [
            Piece(block.opens[0], at, f"reasoning opener {block.opens[0]!r}"),
            sep("in_reasoning[0]", write.in_reasoning[0]),
            Piece(reasoning, at, "the reasoning"),
            sep("in_reasoning[1]", write.in_reasoning[1]),
            Piece(block.closes[0], at, f"reasoning closer {block.closes[0]!r}"),
        ]
        parts.append(("after_reasoning", text))
    if content or (write.content_always and calls and spec.content is not None):
        parts.append(("after_content", _content_pieces(spec, content or "")))
    body: list[Piece] = []
    given = list(ids) + [None] * (len(calls) - len(ids))
    if calls and lists_calls(spec):  # one list holds every call
        body = call_pieces(spec, *calls[0], 0, more=calls[1:], call_id=given[0], more_ids=given[1:])
    else:
        for i, (n, a) in enumerate(calls):
            if i:
                body.append(sep("between", write.between))
            body += call_pieces(spec, n, a, i, call_id=given[i])
    if spec.section is not None and calls:
        section, at = spec.section, where(spec, spec.section)
        body = [
            Piece(section.opens[0], at, f"section opener {section.opens[0]!r}"),
            sep("in_section[0]", write.in_section[0]),
            *body,
            sep("in_section[1]", write.in_section[1]),
            Piece(section.closes[0], at, f"section closer {section.closes[0]!r}"),
        ]
    if body:
        if parts and write.before_calls is not None:
            parts.append(("after_calls", [sep("before_calls", write.before_calls), *body]))
            parts[-2] = ("", parts[-2][1])  # written instead of what follows the part before
        else:
            parts.append(("after_calls", body))
    if after:
        parts.append(("", _content_pieces(spec, after)))
    out: list[Piece] = []
    for number, (_, part) in enumerate(parts):
        key = parts[number - 1][0] if number else ""
        if key:
            out.append(sep(key, getattr(write, key)))
        out += part
    return out


def _content_pieces(spec: FamilySpec, text: str) -> list[Piece]:
    """Content as the grammar's `content` statement writes it, else bare."""
    if spec.content is None:
        return [Piece(text, spec.source, "the content")]
    at = where(spec, spec.content)
    closes = spec.content.closes
    return [
        Piece(spec.content.opens[0], at, f"content opener {spec.content.opens[0]!r}"),
        Piece(text, at, "the content"),
        Piece(closes[0] if closes else "", at, "content closer"),
    ]


def content_block(spec: FamilySpec, text: str) -> str:
    """`text` in the family's content block: its first opener and closer spellings."""
    assert spec.content is not None
    closes = spec.content.closes
    return spec.content.opens[0] + text + (closes[0] if closes else "")
