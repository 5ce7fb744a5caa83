"""Model outputs for property tests, written from a family's compiled grammar.

Nothing here knows a family: it walks the `FamilySpec` (section, reasoning, the call's
items) and writes what a model would, with hypothesis choosing the layout (optional
literals, whitespace), the calls and their values. Values a markup cannot carry (a
string holding the family's own closing marker) are not generated for that family.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from toolgrammar.runtime.render import (
    render_element,
    render_header,
    render_key,
    render_keyvalue,
    render_python,
    render_value_text,
)
from toolgrammar.runtime.dialects import markup_literals
from toolgrammar.runtime.spec import (
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

# characters that make values interesting: quotes, escapes, markup-ish, non-ASCII, astral
TEXT_ALPHABET = st.sampled_from(
    list("abcxyz XYZ019.,:;-_/")
    + [
        '"',
        "\\",
        "'",
        "<",
        ">",
        "{",
        "}",
        "[",
        "]",
        "\n",
        "\t",
        "é",
        "中",
        "文",
        "😀",
        "\u2028",
        "&",
        "=",
        "|",
    ]
)


def carries(spec: FamilySpec, text: str) -> bool:
    """Whether `text` can stand as a value or as prose in this family's output.

    A lookahead opener (`{`, `[`) is left out too: prose ending in `{"` is, by policy, a call
    cut short by the end of output, so the text could not come back as written."""
    peeks = {t for item in spec.call if isinstance(item, Lit) and item.peek for t in item.texts}
    return not any(
        m in text for m in markup_literals(spec, header=False) if len(m) > 1 or m in peeks
    )


def ends_in_partial_marker(spec: FamilySpec, text: str) -> bool:
    """An output ending so may be a marker cut short, or a call opener with nothing after
    it (a lookahead `{` or `[`): both are dropped at the end, by policy."""
    if any(text.endswith(opener) for opener, _ in spec.openers):
        return True
    return any(
        m[:k] and text.endswith(m[:k])
        for m in markup_literals(spec, header=False)
        for k in range(1, len(m))
    )


def plain_text(spec: FamilySpec, min_size: int = 0, max_size: int = 30) -> st.SearchStrategy[str]:
    return st.text(TEXT_ALPHABET, min_size=min_size, max_size=max_size).filter(
        lambda t: carries(spec, t) and not ends_in_partial_marker(spec, t.strip())
    )


def _strips(spec: FamilySpec) -> bool:
    return any(isinstance(i, XmlParams) and i.strip for i in spec.call)


def value_for(schema: dict[str, Any], spec: FamilySpec) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if kind == "integer":
        return st.integers(-(10**12), 10**12)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=64)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(value_for(schema.get("items", {"type": "string"}), spec), max_size=3)
    if kind == "object":
        props = schema.get("properties", {})
        return st.fixed_dictionaries({}, optional={k: value_for(v, spec) for k, v in props.items()})
    if _strips(spec):  # the markup's own whitespace around a value is not the value's
        return plain_text(spec).map(str.strip)
    return plain_text(spec)


def call_for(tool: dict[str, Any], spec: FamilySpec) -> st.SearchStrategy[tuple[str, dict]]:
    function = tool["function"]
    props = function["parameters"].get("properties", {})
    strategies = {}
    for key, schema in props.items():
        if "$ref" in schema:
            continue  # resolved refs are the coercion tests' business
        if "anyOf" in schema or isinstance(schema.get("type"), list):
            continue
        strategies[key] = value_for(schema, spec)
    return st.tuples(st.just(function["name"]), st.fixed_dictionaries({}, optional=strategies))


def render_call(
    spec: FamilySpec, name: str, args: dict[str, Any], index: int, layout: st.DataObject
) -> str:
    out: list[str] = []
    for item in spec.call:
        if isinstance(item, Lit):
            if item.peek:
                continue  # a lookahead: the next item writes it
            if not item.optional or layout.draw(st.booleans(), label="optional literal"):
                out.append(layout.draw(st.sampled_from(item.texts), label="spelling"))
        elif isinstance(item, Skip):
            out.append(layout.draw(st.sampled_from(["", name]), label="header"))
        elif isinstance(item, Ws):
            out.append(layout.draw(st.sampled_from(["", "\n", " "]), label="whitespace"))
        elif isinstance(item, Name):
            out.append(render_header(item, name, index))
        elif isinstance(item, XmlParams):
            newline = "\n" if item.trim_newline else ""
            last_newline = "" if item.keep_last_newline else newline
            for key, value in args.items():
                key_text = render_key(item, key, value)
                gap = (
                    layout.draw(st.sampled_from(["", "\n"]), label="gap") if item.value_open else ""
                )
                out.append(
                    f"{item.open}{key_text}{item.key_end}{gap}{item.value_open}{newline}"
                    f"{render_value_text(value, item.xml_unescape)}{last_newline}{item.value_end}\n"
                )
        elif isinstance(item, XmlElements):
            for key, value in args.items():
                gap = layout.draw(st.sampled_from(["", "\n"]), label="gap")
                out.append(render_element(item.prefix, key, value) + gap)
        elif isinstance(item, JsonArgs):
            out.append(json.dumps(args, ensure_ascii=False))
        elif isinstance(item, JsonCall):
            body = {item.name[0]: name, item.arguments[0]: args}
            out.append(json.dumps(body, ensure_ascii=False))
        elif isinstance(item, JsonCallArray):
            element = {name: args} if item.name_is_key else {item.name[0]: name}
            if not item.name_is_key:
                element[item.arguments[0]] = args
            out.append(json.dumps([element], ensure_ascii=False))
        elif isinstance(item, KeyValueArgs):
            out.append(render_keyvalue(args, item.string))
        elif isinstance(item, PythonCalls):
            body = ", ".join(f"{k}={render_python(v)}" for k, v in args.items())
            out.append(f"[{name}({body})]" if item.list else f"{name}({body})")
    return "".join(out)


def render_output(
    spec: FamilySpec,
    calls: list[tuple[str, dict[str, Any]]],
    layout: st.DataObject,
    before: str = "",
    after: str = "",
    reasoning: str | None = None,
) -> str:
    """The whole output: reasoning, content, the calls (in the section if any), content."""
    parts: list[str] = []
    if reasoning is not None and spec.reasoning:
        parts.append(spec.reasoning[0].opens[0] + reasoning + spec.reasoning[0].closes[0])
    parts.append(before + "\n")
    body = "\n".join(render_call(spec, n, a, i, layout) for i, (n, a) in enumerate(calls))
    if spec.section and calls:
        body = spec.section.opens[0] + body + spec.section.closes[0]
    parts.append(body)
    parts.append("\n" + after)
    return "".join(parts)
