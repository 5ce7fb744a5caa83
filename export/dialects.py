"""The exporter's rules per argument dialect: spec class -> the rule tree of its arguments.

The runtime's table (`runtime/dialects.py`) cannot hold these (the runtime does not import
the exporter), so this is its counterpart: one rule per dialect, given the export builder
(its grammar, tools, mode), the item, the tool whose call it is (None for a dialect that
names its calls: it covers every tool itself) and the markers that end it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..runtime.protocol import RenderError, render_value_text
from ..runtime.spec import (
    JsonArgs,
    JsonCall,
    JsonCallArray,
    KeyValueArgs,
    KvLines,
    PythonCalls,
    XmlElements,
    XmlParams,
)
from ..runtime.xml_params import closers, render_key
from .schema import ExportError, Tool, branches, schema_text
from .tree import EMPTY, Json, Lit, Node, Opt, Pat, Rep, Text, alt, seq
from .values import WS, Values, ordered

if TYPE_CHECKING:
    from .build import Builder

_SAMPLES = {
    "string": "",
    "integer": 0,
    "number": 0.5,
    "boolean": True,
    "null": None,
    "object": {},
    "array": [],
}


def xml_params(
    builder: Builder, item: XmlParams, tool: Tool | None, stops: tuple[str, ...]
) -> Node:
    assert tool is not None  # a dialect that names no calls is exported per tool
    # the markers are written in their first spelling; a value avoids every spelling that
    # would end it
    ends = closers(item)
    avoid = tuple(sorted({*stops, *ends.own, *ends.implicit}))
    json_avoid = avoid
    pad = WS  # around a typed value, whitespace is trimmed by the parser
    params = []
    for key, schema in tool.properties.items():
        options = []
        for b in branches(schema):
            samples = b["enum"] if "enum" in b else [_SAMPLES[b["type"]]]
            for sample in samples:
                try:
                    key_text = render_key(item, key, sample)
                except RenderError as e:
                    raise ExportError(f"{builder.spec.name}: {e}") from None
                head = seq(
                    Lit(item.open),
                    WS,  # a key render writes after a space (` name="city"`) starts past it:
                    Lit(key_text.lstrip()),  # one whitespace lexeme, never a space of its own
                    WS,
                    Lit(item.key_end),
                    seq(WS, Lit(item.value_open)) if item.value_open else EMPTY,
                )
                if "enum" in b:
                    value: Node = Lit(render_value_text(sample, item.xml_unescape))
                    if isinstance(sample, str):  # kept verbatim: only what the parser trims
                        before, after = _string_padding(item)
                        options.append(seq(head, before, value, after, Lit(item.value_end)))
                        continue
                elif b["type"] == "string":
                    options.append(seq(head, Text("raw", avoid, end=item.value_end)))
                    continue
                elif item.write_python and b["type"] in ("object", "array"):
                    # a container as `render` writes it: Python's str (`['a', 'b']`)
                    value = Values(builder.g, "python", json_avoid).value(_strict_value(b))
                else:
                    strict = schema_text(_strict_value(b))
                    value = _scalar(b) or Json(strict, json_avoid, in_markup=True)
                options.append(seq(head, pad, value, pad, Lit(item.value_end)))
        params.append((seq(WS, alt(*options)), key in tool.required))
    return ordered(builder.g, f"{tool.name}_params", params, EMPTY)


def _string_padding(item: XmlParams) -> tuple[Node, Node]:
    """The whitespace the parser trims around a string value (`strip`: any; `trim_newline`:
    one newline after KEY_END and, unless `keep_last_newline`, one before the closer): a
    string enum member padded with more would read as another string, not the member."""
    if item.strip:
        return WS, WS
    if not item.trim_newline:
        return EMPTY, EMPTY
    newline = Opt(alt(Lit("\n"), Lit("\r\n")))
    return newline, EMPTY if item.keep_last_newline else newline


# nesting of elements an export spells out: past it an element's value is its text (an array
# with no `items` schema has items of every type, arrays among them, without end)
ELEMENT_DEPTH = 8


def xml_elements(
    builder: Builder, item: XmlElements, tool: Tool | None, stops: tuple[str, ...]
) -> Node:
    assert tool is not None
    prefix = item.prefix
    avoid = tuple(sorted({*stops, prefix + "<"} if prefix else {*stops, "<"}))

    def element(key: str, schema: Any, depth: int = 0) -> Node:
        open_, close = Lit(f"{prefix}<{key}>"), f"{prefix}</{key}>"
        if depth >= ELEMENT_DEPTH:  # an untyped array's items are every type, arrays too
            return seq(open_, Text("raw", avoid, end=close))
        options = []
        for b in branches(schema):
            if "enum" in b:
                options += [seq(open_, Lit(render_value_text(v)), Lit(close)) for v in b["enum"]]
            elif b["type"] == "string":
                options.append(seq(open_, Text("raw", avoid, end=close)))
            elif b["type"] == "object":
                options.append(seq(open_, children(b, depth + 1), WS, Lit(close)))
            elif b["type"] == "array":
                one = element("item", b.get("items", {}), depth + 1)
                options.append(seq(open_, Rep(seq(WS, one)), WS, Lit(close)))
            else:
                options.append(seq(open_, _scalar(b) or EMPTY, Lit(close)))
        return alt(*options)

    def children(schema: dict[str, Any], depth: int = 0) -> Node:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = set(schema.get("required") or ())
        entries = [(seq(WS, element(k, v, depth)), k in required) for k, v in props.items()]
        return ordered(builder.g, f"{tool.name}_elements", entries, EMPTY)

    return children(tool.parameters)


def keyvalue_args(
    builder: Builder, item: KeyValueArgs, tool: Tool | None, stops: tuple[str, ...]
) -> Node:
    assert tool is not None
    values = Values(builder.g, "keyvalue", stops, delim=item.string)
    return values.object(tool.parameters)


def kv_lines(
    builder: Builder,
    item: KvLines,
    tool: Tool | None,
    stops: tuple[str, ...],
    closers: tuple[str, ...] = (),
) -> Node:
    """`key: value` lines, one per parameter: a string value is raw text that holds no line
    separator or stop, any other value its literal syntax or compact JSON on one line.

    `closers`: the literal after the lines (and the whitespace before it), written here:
    a string value on the last line runs up to it, and llguidance's greedy lexer must see
    the closer in that text's lexeme (a separate one would never start: the text takes
    `</call` and then cannot take `>`)."""
    assert tool is not None
    avoid = tuple(sorted({*stops, item.line_sep}))
    space = "" if item.kv_sep[-1:].isspace() else " "
    close = seq(WS, alt(*(Lit(c) for c in closers))) if closers else EMPTY
    params = []
    for key, schema in tool.properties.items():
        options, last = [], []
        for b in branches(schema):
            head = Lit(f"{key}{item.kv_sep}")
            if "enum" in b:
                values = [seq(head, Lit(space + render_value_text(v))) for v in b["enum"]]
                options += values
                last += [seq(v, close) for v in values]
            elif b["type"] == "string":
                options.append(seq(head, Text("raw", avoid)))
                ends = closers or ("",)
                last += [seq(head, Text("raw", avoid, end=c)) for c in ends]
            else:
                value = _scalar(b) or Json(schema_text(_strict_value(b)), avoid, in_markup=True)
                options.append(seq(head, Lit(space), value))
                last.append(seq(head, Lit(space), value, close))
        params.append((alt(*options), alt(*last), key in tool.required))
    if not closers:
        lines = [(line, required) for line, _, required in params]
        return ordered(builder.g, f"{tool.name}_lines", lines, Lit(item.line_sep))
    return _lines_then_close(builder, f"{tool.name}_lines", params, Lit(item.line_sep), close)


def _lines_then_close(
    builder: Builder, name: str, params: list[tuple[Node, Node, bool]], sep: Node, close: Node
) -> Node:
    """The lines in order, each present or not (required ones always), `sep` between them,
    the last one in its closing form (`params`: each line, its form as the last one, whether
    it is required), or `close` alone when no line is written. One rule per (position,
    anything written yet), as `values.ordered`, made from the last line back in a loop."""
    n = len(params)
    optional = [True] * (n + 1)  # optional[i]: no line from `i` on is required
    for i in range(n - 1, -1, -1):
        optional[i] = optional[i + 1] and not params[i][2]

    def lines(i: int, first: bool, more: Node | None, skipped: Node | None) -> Node | None:
        """At least one line from `i` on, then the close (`more`: from `i + 1` on, a line
        written; `skipped`: from `i + 1` on, as `first`); None when none can be."""
        line, last, required = params[i]
        pre = EMPTY if first else sep
        options = []
        if more is not None:
            options.append(seq(pre, line, more))
        if optional[i + 1]:
            options.append(seq(pre, last))
        if not required and skipped is not None:
            options.append(skipped)
        if not options:
            return None
        return builder.g.rule(f"{name}_{i}{'f' if first else ''}", alt(*options))

    later: list[Node | None] = [None] * (n + 1)
    for i in range(n - 1, 0, -1):
        later[i] = lines(i, False, later[i + 1], later[i + 1])
    stop = next((i for i, (_, _, required) in enumerate(params) if required), n)
    some = None if stop == n else lines(stop, True, later[stop + 1], None)
    for i in range(stop - 1, -1, -1):
        some = lines(i, True, later[i + 1], some)
    if some is None:
        return close
    return alt(some, close) if optional[0] else some


def python_calls(
    builder: Builder, item: PythonCalls, tool: Tool | None, stops: tuple[str, ...]
) -> Node:
    # the values as `render` writes them: Python literals, or JSON with `write_json`
    values = Values(builder.g, "json" if item.write_json else "python", stops)
    calls = []
    for tool in builder.tools:
        kwargs = [
            (seq(Lit(f"{key}="), values.value(schema)), key in tool.required)
            for key, schema in tool.properties.items()
        ]
        args = ordered(builder.g, f"{tool.name}_kwargs", kwargs, seq(Lit(","), WS))
        calls.append(builder.g.rule(f"py_{tool.name}", seq(Lit(f"{tool.name}("), args, Lit(")"))))
    one = alt(*calls)
    many = builder.mode.kind != "named"
    if item.list:
        more = Rep(seq(Lit(","), WS, one)) if many else EMPTY
        return seq(Lit("["), one, more, Lit("]"))
    return seq(one, Rep(seq(WS, one)) if many else EMPTY)


def json_args(builder: Builder, item: JsonArgs, tool: Tool | None, stops: tuple[str, ...]) -> Node:
    assert tool is not None
    return Json(schema_text(_strict(tool.parameters)), stops)


def json_call(builder: Builder, item: JsonCall, tool: Tool | None, stops: tuple[str, ...]) -> Node:
    return Json(schema_text(_call_schema(builder, item, array=False)), stops)


def json_call_array(
    builder: Builder, item: JsonCallArray, tool: Tool | None, stops: tuple[str, ...]
) -> Node:
    array = Json(schema_text(_call_schema(builder, item, array=True)), stops)
    if not item.bare:
        return array
    # `bare`: the same objects without the brackets, `{…}` or `{…}, {…}`
    one = Json(schema_text(_call_schema(builder, item, array=False)), stops)
    more = Rep(seq(WS, Lit(","), WS, one)) if builder.mode.kind != "named" else EMPTY
    return alt(array, seq(one, more))


def _call_schema(builder: Builder, item: JsonCall | JsonCallArray, array: bool) -> dict[str, Any]:
    """The JSON schema of one call object, or of the array of them."""
    objects = []
    for tool in builder.tools:
        args = _strict(tool.parameters)
        if item.name_is_key:
            obj = {
                "type": "object",
                "properties": {tool.name: args},
                "required": [tool.name],
                "additionalProperties": False,
            }
            objects.append(obj)
            continue
        for name_key in item.name:  # every spelling of the keys the parser reads
            for args_key in item.arguments:
                props: dict[str, Any] = {}
                last_id = getattr(item, "write_call_id", False)  # after the arguments
                if item.id and not last_id:
                    props[item.id[0]] = {"type": "string"}
                props[name_key] = {"const": tool.name}
                props[args_key] = args
                if item.id and last_id:
                    props[item.id[0]] = {"type": "string"}
                objects.append(
                    {
                        "type": "object",
                        "properties": props,
                        "required": [name_key, args_key],
                        "additionalProperties": False,
                    }
                )
    one = objects[0] if len(objects) == 1 else {"anyOf": objects}
    if not array:
        return one
    array: dict[str, Any] = {"type": "array", "items": one, "minItems": 1}
    if builder.mode.kind == "named":
        array["maxItems"] = 1
    return array


def _scalar(b: dict[str, Any]) -> Node | None:
    """Integers, numbers, booleans and null in their literal syntax."""
    kind = b.get("type")
    if kind == "integer":
        minimum = b.get("minimum")
        return Pat("uint" if isinstance(minimum, (int, float)) and minimum >= 0 else "int")
    if kind == "number":
        return Pat("number")
    if kind == "boolean":
        return alt(Lit("true"), Lit("false"))
    if kind == "null":
        return Lit("null")
    return None


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the export writes them: an object with no keys beyond the declared ones
    (at every level that declares some)."""
    out = _strict_value(schema)
    out.setdefault("type", "object")
    return out


def _strict_value(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict_value(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: (v if k in ("enum", "const", "default", "examples") else _strict_value(v))
        for k, v in schema.items()
    }
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


# dialects whose last value is free text: they write the literal after them too (`closers`)
TAKE_CLOSER: frozenset[type] = frozenset({KvLines})

EXPORT_RULES: dict[type, Callable[..., Node]] = {
    XmlParams: xml_params,
    XmlElements: xml_elements,
    KeyValueArgs: keyvalue_args,
    KvLines: kv_lines,
    PythonCalls: python_calls,
    JsonArgs: json_args,
    JsonCall: json_call,
    JsonCallArray: json_call_array,
}
"""One rule per argument dialect; a test keeps it in step with the runtime's table."""
