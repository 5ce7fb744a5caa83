"""Writing calls in a family's markup: the text a model would write, from the grammar.

`render_output` walks a family's `FamilySpec` (reasoning, section, the first call shape)
and writes each call with the canonical spelling of every marker: optional literals
included, no whitespace the grammar does not need, values in the dialect's own syntax.
A name or key read through a pattern (Kimi's `functions.NAME:IDX`, DSML's
`name="KEY" string="true"`) is written in the first shape the pattern reads back.

The result is checked by parsing it back: a value the markup cannot carry (a string
holding the family's own closing marker) raises `RenderError` instead of producing text
that would parse to something else.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .spec import (
    FamilySpec,
    JsonArgs,
    JsonCall,
    JsonCallArray,
    KeyValueArgs,
    Lit,
    Name,
    PythonCalls,
    Skip,
    Ws,
    XmlElements,
    XmlParams,
)


class RenderError(ValueError):
    """Calls this family's markup cannot write so that they parse back the same."""


HEADER_SHAPES = (
    '"{name}"',
    "{name}",
    "functions.{name}:{index}",
    "{name}:{index}",
    "functions.{name}",
    'tool="{name}" index="{index}"',
)
# key shapes, each with the flag it writes for a raw-text value and for a JSON value
KEY_SHAPES = (
    ('name="{key}" string="{flag}"', "true", "false"),
    ('key="{key}" type="{flag}"', "string", "{type}"),
    ('"{key}"', "", ""),
    ('name="{key}"', "", ""),
    ("{key}", "", ""),
)
_JSON_TYPES = {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}


def render_header(item: Name, name: str, index: int) -> str:
    """A name (or header) that the item's pattern reads back as `name`."""
    if item.pattern is None:
        return name
    for shape in HEADER_SHAPES:
        text = shape.format(name=name, index=index)
        found = re.fullmatch(item.pattern, text)
        if found and found.group("name") == name:
            return " " + text if shape.startswith("tool=") else text
    raise RenderError(f"cannot write the name {name!r} in the shape /{item.pattern}/ reads")


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
        found = re.fullmatch(item.key_pattern, text)
        if not found or found.group("key") != key:
            continue
        if "text" in found.re.groupindex:
            if ((found.group("text") or "") in item.text_when) != is_text:
                continue
        return (" " if item.open[-1:].isalpha() else "") + text
    raise RenderError(f"cannot write the key {key!r} in the shape /{item.key_pattern}/ reads")


def render_value_text(value: Any, item: XmlParams | None = None) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if item is not None and item.xml_unescape:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text


def render_element(prefix: str, key: str, value: Any) -> str:
    if isinstance(value, dict):
        body = "".join(render_element(prefix, k, v) for k, v in value.items())
    elif isinstance(value, list):
        body = "".join(render_element(prefix, "item", v) for v in value)
    else:
        body = render_value_text(value)
    return f"{prefix}<{key}>{body}{prefix}</{key}>"


def render_keyvalue(value: Any, delim: str) -> str:
    if isinstance(value, str):
        return f"{delim}{value}{delim}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{render_keyvalue(v, delim)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render_keyvalue(v, delim) for v in value) + "]"
    return json.dumps(value)


def render_python(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {render_python(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(render_python(v) for v in value) + "]"
    return repr(value)


def render_call(spec: FamilySpec, name: str, args: dict[str, Any], index: int) -> str:
    """One call in the family's first call shape, every marker in its canonical spelling."""
    out: list[str] = []
    for item in spec.call:
        if isinstance(item, Lit):
            if not item.peek:  # a lookahead is written by the item that reads it
                out.append(item.text)
        elif isinstance(item, (Ws, Skip)):
            continue
        elif isinstance(item, Name):
            out.append(render_header(item, name, index))
        elif isinstance(item, XmlParams):
            newline = "\n" if item.trim_newline else ""
            for key, value in args.items():
                if item.strip and isinstance(value, str) and value != value.strip():
                    raise RenderError(f"{spec.name} strips values: {value!r} cannot be written")
                out.append(
                    f"{item.open}{render_key(item, key, value)}{item.key_end}"
                    f"{item.value_open}{newline}{render_value_text(value, item)}{newline}"
                    f"{item.value_end}"
                )
        elif isinstance(item, XmlElements):
            out.extend(render_element(item.prefix, key, value) for key, value in args.items())
        elif isinstance(item, KeyValueArgs):
            out.append(render_keyvalue(args, item.string))
        elif isinstance(item, PythonCalls):
            body = ", ".join(f"{k}={render_python(v)}" for k, v in args.items())
            out.append(f"[{name}({body})]" if item.list else f"{name}({body})")
        elif isinstance(item, JsonArgs):
            out.append(json.dumps(args, ensure_ascii=False))
        elif isinstance(item, JsonCall):
            call_object = {item.name[0]: name, item.arguments[0]: args}
            out.append(json.dumps(call_object, ensure_ascii=False))
        elif isinstance(item, JsonCallArray):
            element: dict[str, Any] = (
                {name: args} if item.name_is_key else {item.name[0]: name}
            )
            if not item.name_is_key:
                element[item.arguments[0]] = args
            out.append(json.dumps([element], ensure_ascii=False))
    return "".join(out)


def render_output(
    spec: FamilySpec,
    calls: Sequence[tuple[str, dict[str, Any]]],
    *,
    content: str | None = None,
    reasoning: str | None = None,
    after: str | None = None,
) -> str:
    """The whole output: reasoning, content, the calls (in the section, if any), then text."""
    parts: list[str] = []
    if reasoning is not None:
        if not spec.reasoning:
            raise RenderError(f"family {spec.name!r} has no reasoning markers")
        parts.append(spec.reasoning[0].opens[0] + reasoning + spec.reasoning[0].closes[0])
    if content:
        parts.append(content + "\n")
    body = "\n".join(render_call(spec, n, a, i) for i, (n, a) in enumerate(calls))
    if spec.section is not None and calls:
        body = spec.section.opens[0] + body + spec.section.closes[0]
    parts.append(body)
    if after:
        parts.append("\n" + after)
    return "".join(parts)
