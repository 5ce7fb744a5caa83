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
from typing import Sequence

from .dialects import DIALECTS
from .keyvalue_args import render_keyvalue
from .protocol import Arguments, Call, RenderError, argument_pairs, render_value_text
from .python_calls import render_python
from .spec import FamilySpec, Lit, Name, Skip, Ws
from .xml_elements import render_element
from .xml_params import KEY_SHAPES, render_key

__all__ = [  # the writers of values each dialect module keeps, gathered for callers
    "Arguments",
    "HEADER_SHAPES",
    "KEY_SHAPES",
    "RenderError",
    "lists_calls",
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
    calls: list[Call] = [(n, argument_pairs(a)) for n, a in [(name, args), *more]]
    out: list[str] = []
    for item in spec.call:
        if isinstance(item, Lit):
            # a lookahead is written by the item that reads it; a lazy one not at all
            if not (item.peek or item.lazy):
                out.append(item.text)
        elif isinstance(item, Ws):
            out.append(item.write)
        elif isinstance(item, Name):
            try:
                out.append(render_header(item, name, index))
            except RenderError as error:  # said with the grammar line the shape comes from
                raise RenderError(f"{spec.source}:{item.line}: {error}") from None
        elif isinstance(item, Skip) and item.id:
            out.append(call_id or written_id(index))
        elif (row := DIALECTS.get(type(item))) is not None:
            try:
                out.append(row.render(item, calls if row.lists_calls else calls[:1]))
            except RenderError as error:
                raise RenderError(f"{spec.name}: {error}") from None
        # other skipped headers need no text
    return "".join(out)


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
    spells it (`>>>all\nTEXT`), else as bare text on its own line."""
    parts: list[str] = []
    if reasoning is not None:
        if not spec.reasoning:
            raise RenderError(f"family {spec.name!r} has no reasoning markers")
        parts.append(spec.reasoning[0].opens[0] + reasoning + spec.reasoning[0].closes[0])
    if content:
        parts.append(content_block(spec, content) if spec.content else content + "\n")
    if calls and lists_calls(spec):  # one list holds every call
        body = render_call(spec, *calls[0], 0, more=calls[1:])
    else:
        given = list(ids) + [None] * (len(calls) - len(ids))
        body = "\n".join(
            render_call(spec, n, a, i, call_id=given[i]) for i, (n, a) in enumerate(calls)
        )
    if spec.section is not None and calls:
        body = spec.section.opens[0] + body + spec.section.closes[0]
    parts.append(body)
    if after:
        parts.append(content_block(spec, after) if spec.content else "\n" + after)
    return "".join(parts)


def content_block(spec: FamilySpec, text: str) -> str:
    """`text` in the family's content block: its first opener and closer spellings."""
    assert spec.content is not None
    closes = spec.content.closes
    return spec.content.opens[0] + text + (closes[0] if closes else "")
