"""Resolving tool schemas: `$ref`s, the tool index, and what a schema declares
(docs/policies.md, 'Schema coercion').

A resolved `$ref` is observed through typing: the value is typed as its target says.
"""

from __future__ import annotations

import json

import pytest

from schema_examples import A, B, DEFS_TOOL, I, N, NULL, O, S, same
from toolgrammar.runtime.coerce import coerce_json, coerce_text
from toolgrammar.runtime.schemas import ToolSchemas, schema_types, streams_as_text

# --------------------------------------------------------------------------- streams_as_text

STREAMS = [
    (None, True),
    ({}, True),
    (42, True),
    ({"type": 42}, True),
    ({"description": "no type"}, True),
    (S, True),
    ({"type": "str"}, True),
    ({"type": "text"}, True),
    ({"type": "enum", "enum": ["a"]}, True),
    ({"type": ["string"]}, True),
    ({"type": ["string", "str"]}, True),
    ({"enum": ["a", "b"]}, True),
    ({"const": "x"}, True),
    ({"anyOf": [S, {"type": "text"}]}, True),
    ({"oneOf": [S, {"enum": ["x"]}]}, True),
    ({"allOf": [S, I]}, True),
    ({"anyOf": [{}, I]}, True),
    ({"$ref": "#/$defs/S", "$defs": {"S": S}}, True),
    ({"$ref": "#/$defs/gone"}, True),
    ({"anyOf": [{}, {"properties": {"n": I}}]}, True),
    ({"properties": "junk"}, True),
    (I, False),
    (N, False),
    ({"properties": {"n": I}}, False),
    ({"items": S}, False),
    (B, False),
    (NULL, False),
    (O, False),
    (A, False),
    ({"type": ["string", "null"]}, False),
    ({"type": "string", "nullable": True}, False),
    ({"enum": ["a", 1]}, False),
    ({"enum": ["a", None]}, False),
    ({"const": 1}, False),
    ({"anyOf": [S, I]}, False),
    ({"allOf": [{"title": "t"}, I]}, False),
    ({"$ref": "#/$defs/I", "$defs": {"I": I}}, False),
]


@pytest.mark.parametrize(("schema", "expected"), STREAMS)
def test_streams_as_text(schema: object, expected: bool) -> None:
    assert streams_as_text(schema) is expected


# --------------------------------------------------------------------------- $ref resolution


@pytest.fixture(scope="module")
def demo() -> ToolSchemas:
    return ToolSchemas([DEFS_TOOL])


REF_CASES = [
    ("count", "3", 3),
    ("legacy", "2.5", 2.5),
    ("alias", "3", 3),
    ("flag", "TRUE", True),
    ("maybe", "null", None),
    ("maybe", "8", 8),
    ("nullable_ref", "null", None),
    ("nullable_ref", "8", 8),
    (
        "tree",
        '{"value": "1", "children": [{"value": "2", "children": []}]}',
        {"value": 1, "children": [{"value": 2, "children": []}]},
    ),
    ("json", '[["1", 2], "3", [[["4"]]]]', [[1, 2], 3, [[[4]]]]),
    ("json", "5", 5),
    ("ping", "true", True),
    ("ping", "4", 4),
    ("plain", "null", "null"),
]


@pytest.mark.parametrize(("key", "text", "expected"), REF_CASES)
def test_ref_resolution(demo: ToolSchemas, key: str, text: str, expected: object) -> None:
    schema = demo.param_schema("demo", key)
    assert schema is not None
    assert same(coerce_text(text, schema), expected)


@pytest.mark.parametrize("key", ["loop", "self", "missing", "remote", "junk", "anything", "nope"])
def test_unusable_property_schemas_are_none(demo: ToolSchemas, key: str) -> None:
    assert demo.param_schema("demo", key) is None
    assert coerce_text("3", demo.param_schema("demo", key)) == "3"


def test_param_schema_shapes_and_cache(demo: ToolSchemas) -> None:
    count = demo.param_schema("demo", "count")
    assert count == {"type": "integer"}
    assert demo.param_schema("demo", "count") is count
    assert demo.param_schema("demo", "alias") is count  # a ref into a ref lands on the same node
    assert demo.param_schema("other", "count") is None
    assert demo.param_schema("demo", "plain") == {"type": "string"}
    assert not streams_as_text(demo.param_schema("demo", "tree"))
    assert streams_as_text(demo.param_schema("demo", "plain"))
    assert streams_as_text(demo.param_schema("demo", "loop"))


def test_same_tools_share_their_compiled_schemas() -> None:
    # Parsers are built per request; a tools list passed again is not resolved again.
    tools = [DEFS_TOOL]
    assert ToolSchemas(tools).param_schema("demo", "tree") is ToolSchemas(tools).param_schema(
        "demo", "tree"
    )


def test_a_schema_changed_in_place_is_read_anew() -> None:
    # the compiled-schema cache was keyed by the dict's id(): a caller that changed its
    # tools' schemas in place after a first request kept their first reading
    import toolgrammar

    schema = {"type": "object", "properties": {"count": {"type": "string"}}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    text = '<tool_call>{"name": "f", "arguments": {"count": "3"}}</tool_call>'

    def arguments() -> dict:
        (call,) = toolgrammar.parse("hermes", text, tools).tool_calls
        return json.loads(call.function.arguments)

    assert arguments() == {"count": "3"}
    schema["properties"]["count"]["type"] = "integer"
    assert arguments() == {"count": 3}
    schema["properties"]["count"]["type"] = "string"  # and back: the first reading again
    assert arguments() == {"count": "3"}


@pytest.mark.parametrize(
    "before, after",
    [
        ({"enum": [1]}, {"enum": [True]}),  # `1 == True`: equality would not tell them apart
        ({"enum": [1]}, {"enum": [1.5]}),
        ({"type": "integer", "nullable": 1}, {"type": "integer", "nullable": True}),
    ],
)
def test_a_cached_schema_is_told_apart_by_value_and_type(before: dict, after: dict) -> None:
    schema = {"properties": {"x": dict(before)}}
    first = schema_types(ToolSchemas([{"name": "f", "parameters": schema}]).param_schema("f", "x"))
    schema["properties"]["x"] = after
    second = ToolSchemas([{"name": "f", "parameters": schema}]).param_schema("f", "x")
    assert schema_types(second) == schema_types(after) != first


def test_a_cached_graph_is_not_the_callers_dict() -> None:
    # the graph is compiled from a copy: mutating the caller's lists later changes nothing
    # cached for the value it had
    enum = ["a", "b"]
    tools = [{"name": "f", "parameters": {"properties": {"x": {"enum": enum}}}}]
    node = ToolSchemas(tools).param_schema("f", "x")
    enum.append(3)
    assert node == {"enum": ["a", "b"]}
    assert schema_types(ToolSchemas(tools).param_schema("f", "x")) == ("integer", "string")


def test_the_schema_cache_is_bounded() -> None:
    from toolgrammar.runtime import schemas

    for n in range(schemas._ROOTS_LIMIT + 100):
        ToolSchemas([{"name": "f", "parameters": {"properties": {f"k{n}": S}}}]).param_schema(
            "f", "k"
        )
        assert len(schemas._ROOTS) <= schemas._ROOTS_LIMIT
    # one the cache cannot key (a dict subclass marshal refuses) is read, not cached
    odd = type("Odd", (dict,), {})(properties={"x": I})
    before = len(schemas._ROOTS)
    assert ToolSchemas([{"name": "f", "parameters": odd}]).param_schema("f", "x") == I
    assert len(schemas._ROOTS) == before


def test_coerce_json_through_recursive_schema(demo: ToolSchemas) -> None:
    tree = demo.param_schema("demo", "tree")
    value = {"value": "1", "children": [{"value": 2, "children": [{"value": "3", "children": []}]}]}
    out = coerce_json(value, tree)
    assert out == {
        "value": 1,
        "children": [{"value": 2, "children": [{"value": 3, "children": []}]}],
    }
    settled = {"value": 1, "children": []}
    assert coerce_json(settled, tree) is settled


def test_root_is_a_ref_and_properties_spread_over_all_of() -> None:
    tools = ToolSchemas(
        [
            {
                "name": "r",
                "parameters": {
                    "$ref": "#/$defs/Args",
                    "$defs": {"Args": {"type": "object", "properties": {"n": I}}},
                },
            },
            {
                "name": "m",
                "parameters": {
                    "allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"b": B}}],
                    "$defs": {"Base": {"properties": {"a": I}}},
                },
            },
        ]
    )
    assert coerce_text("2", tools.param_schema("r", "n")) == 2
    assert coerce_text("2", tools.param_schema("m", "a")) == 2
    assert coerce_text("0", tools.param_schema("m", "b")) is False


def test_ref_with_nested_id_resolves_against_the_subresource() -> None:
    params = {
        "$id": "https://example.com/root.json",
        "type": "object",
        "$defs": {
            "A": {
                "$id": "a.json",
                "type": "object",
                "$defs": {"B": {"type": "integer"}},
                "properties": {"b": {"$ref": "#/$defs/B"}},
            }
        },
        "properties": {"a": {"$ref": "a.json"}},
    }
    tools = ToolSchemas([{"type": "function", "function": {"name": "f", "parameters": params}}])
    assert coerce_text('{"b": "2"}', tools.param_schema("f", "a")) == {"b": 2}


def test_anchor_ref() -> None:
    schema = {"$defs": {"F": {"$anchor": "flag", "type": "boolean"}}, "$ref": "#flag"}
    assert coerce_text("0", schema) is False
    assert coerce_text("0", {"$ref": "#nowhere"}) == "0"


def test_draft_04_definitions() -> None:
    params = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "definitions": {"P": {"type": "array", "items": [I, B], "additionalItems": S}},
        "properties": {"p": {"$ref": "#/definitions/P"}},
    }
    tools = ToolSchemas([{"name": "f", "parameters": params}])
    assert coerce_text('["1", "0", "x"]', tools.param_schema("f", "p")) == [1, False, "x"]


def test_unknown_dialect_falls_back_to_2020_12() -> None:
    params = {
        "$schema": "https://example.com/nope",
        "$defs": {"I": I},
        "properties": {"n": {"$ref": "#/$defs/I"}},
    }
    tools = ToolSchemas([{"name": "f", "parameters": params}])
    assert coerce_text("2", tools.param_schema("f", "n")) == 2


# --------------------------------------------------------------------------- ToolSchemas itself


def test_tools_not_given() -> None:
    tools = ToolSchemas(None)
    assert not tools.given
    assert tools.known("anything")
    assert tools.param_schema("anything", "x") is None


def test_empty_tools_list_is_given() -> None:
    tools = ToolSchemas([])
    assert tools.given
    assert not tools.known("anything")


def test_tool_entry_shapes() -> None:
    tools = ToolSchemas(
        [
            {"type": "function", "function": {"name": "a", "parameters": {"properties": {"x": I}}}},
            {"function": {"name": "b", "parameters": {"properties": {"x": I}}}},
            {"name": "c", "parameters": {"properties": {"x": I}}},
            {"type": "function", "name": "d", "parameters": {"properties": {"x": I}}},
            {"type": "custom", "custom": {"name": "e"}},
            {"name": "f"},
            {"name": "g", "parameters": "junk"},
            {"name": "a", "parameters": {"properties": {"x": S}}},  # duplicate: the first wins
        ]
    )
    for name in "abcd":
        assert tools.known(name)
        assert tools.param_schema(name, "x") == {"type": "integer"}
    for name in "efg":
        assert tools.known(name)
        assert tools.param_schema(name, "x") is None
    assert not tools.known("h")


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([42], r"tools\[0\] is not an object"),
        ([{"name": "ok"}, "x"], r"tools\[1\] is not an object"),
        ([{"type": "function", "function": {}}], r"tools\[0\] has no function name"),
        ([{"name": "ok"}, {"parameters": {}}], r"tools\[1\] has no function name"),
        ([{"function": {"name": 3}}], r"tools\[0\] has no function name"),
        ([{"function": {"name": ""}}], r"tools\[0\] has no function name"),
        (
            [{"type": "function", "function": "get_weather"}],
            r"tools\[0\]\.function is not an object",
        ),
        ({"name": "x"}, r"tools must be a list"),
    ],
)
def test_malformed_tools(tools: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolSchemas(tools)  # type: ignore[arg-type]


def test_param_schema_junk_keys() -> None:
    tools = ToolSchemas([{"name": "f", "parameters": {"properties": {"x": I}}}])
    assert tools.param_schema("f", ["unhashable"]) is None  # type: ignore[arg-type]
    assert tools.param_schema(["unhashable"], "x") is None  # type: ignore[arg-type]


# --------------------------------------------------------------------------- deep and hostile schemas


def test_deep_schema_is_no_schema() -> None:
    schema: dict = {"type": "integer"}
    for _ in range(100_000):
        schema = {"anyOf": [schema]}
    assert streams_as_text(schema)
    assert coerce_text("3", schema) == "3"
    assert coerce_json("3", schema) == "3"
    tools = ToolSchemas([{"name": "f", "parameters": {"properties": {"x": schema, "n": I}}}])
    # read down to MAX_DEPTH levels (runtime/limits.py), where its members declare nothing:
    # no type, as no schema has; the tool's other properties are still read
    assert schema_types(tools.param_schema("f", "x")) == ()
    assert tools.param_schema("f", "n") == I


def test_all_of_and_any_of_cycles_terminate() -> None:
    schema = {
        "$defs": {
            "X": {"allOf": [{"$ref": "#/$defs/Y"}], "properties": {"a": {"$ref": "#/$defs/X"}}},
            "Y": {"allOf": [{"$ref": "#/$defs/X"}], "type": "object"},
        },
        "$ref": "#/$defs/X",
    }
    assert not streams_as_text(schema)
    assert coerce_text('{"a": {"a": {}}}', schema) == {"a": {"a": {}}}
    assert coerce_json({"a": "x"}, schema) == {"a": "x"}


def test_a_tool_schema_typing_cannot_read_gets_one_clear_warning() -> None:
    import warnings

    from toolgrammar.runtime.schema_check import ToolSchemaWarning

    good = {"name": "ok", "parameters": {"type": "object", "properties": {"n": {"type": "Int"}}}}
    bad = {
        "name": "f",
        "parameters": {"type": "object", "properties": {"days": {"type": "integr"}}},
    }
    tools = ToolSchemas(
        [{"type": "function", "function": good}, {"type": "function", "function": bad}]
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tools.param_schema("ok", "n")  # `Int` is a spelling typing reads: no warning
        tools.param_schema("f", "days")
        tools.param_schema("f", "days")  # once per tool and parser
    assert [str(w.message) for w in caught if w.category is ToolSchemaWarning] == [
        "tool 'f': parameters are not a valid JSON Schema: at /properties/days/type: "
        "'integr' is not valid under any of the given schemas; values it describes are not "
        "typed by it"
    ]
    for junk, where in (([1], "/properties"), ("city", "/required")):
        key = "properties" if where == "/properties" else "required"
        tools = ToolSchemas([{"name": "g", "parameters": {"type": "object", key: junk}}])
        with pytest.warns(ToolSchemaWarning, match=f"'g': .* at {where}: "):
            tools.param_schema("g", "city")


def test_a_schema_warning_quotes_this_request_schema_not_an_earlier_one() -> None:
    """The message is remembered by the schema's value and place, never by the tool's name:
    two requests (two tenants) with a tool of the same name and different bad schemas each
    hear about their own schema's value."""
    import warnings

    from toolgrammar.runtime.schema_check import ToolSchemaWarning

    heard = []
    for secret in ("tenant-one-secret", "tenant-two-secret", "tenant-one-secret"):
        params = {"type": "object", "properties": {"days": {"type": secret}}}
        tools = ToolSchemas([{"name": "lookup", "parameters": params}])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tools.param_schema("lookup", "days")
        [warning] = [w for w in caught if w.category is ToolSchemaWarning]
        heard.append(str(warning.message))
    assert "'tenant-one-secret'" in heard[0] and "tenant-two" not in heard[0]
    assert "'tenant-two-secret'" in heard[1] and "tenant-one" not in heard[1]
    assert heard[2] == heard[0]
