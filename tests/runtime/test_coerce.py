"""Schema coercion: docs/policies.md, 'Schema coercion'; docs/invariants.md, 'Open trailing
parameters are kept' and 'Coercion'."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolgrammar.runtime.coerce import coerce_json, coerce_text
from toolgrammar.runtime.schemas import ToolSchemas, streams_as_text


def same(actual: object, expected: object) -> bool:
    """Equal *and* of the same JSON types (3 vs 3.0 vs True vs "3")."""
    return type(actual) is type(expected) and json.dumps(actual) == json.dumps(expected)


S = {"type": "string"}
I = {"type": "integer"}
N = {"type": "number"}
B = {"type": "boolean"}
NULL = {"type": "null"}
O = {"type": "object"}
A = {"type": "array"}

# --------------------------------------------------------------------------- coerce_text

TEXT_CASES = [
    # no schema, junk schemas, schemas without a type: the text as written
    ("3", None, "3"),
    ("3", {}, "3"),
    ("3", 42, "3"),
    ("3", "integer", "3"),
    ("3", ["integer"], "3"),
    ("3", {"type": 42}, "3"),
    ("3", {"type": "any"}, "3"),
    ("3", {"type": ["whatever", None]}, "3"),
    ("3", {"description": "a count"}, "3"),
    ("null", {"nullable": True}, "null"),
    # string and its aliases keep the raw text, whatever it looks like
    ("null", S, "null"),
    ("NULL", S, "NULL"),
    ('"3"', S, '"3"'),
    ("3", S, "3"),
    ("  padded\n", S, "  padded\n"),
    ('{"a": 1}', S, '{"a": 1}'),
    ("true", {"type": "str"}, "true"),
    ("1", {"type": "text"}, "1"),
    ("1", {"type": "enum", "enum": [1, 2]}, "1"),
    ("3", {"type": "String"}, "3"),
    # integer: Python int()
    ("3", I, 3),
    (" 3\n", I, 3),
    ("-7", I, -7),
    ("+7", I, 7),
    ("1_000", I, 1000),
    ("007", I, 7),
    ("3", {"type": "int"}, 3),
    ("3", {"type": "long"}, 3),
    ("3", {"type": " Integer "}, 3),
    ("3.0", I, 3.0),  # not an integer text: falls back to JSON
    ("1e3", I, 1000.0),
    ("abc", I, "abc"),
    ("", I, ""),
    ("true", I, True),  # not an integer: JSON fallback
    ("9" * 5000, I, "9" * 5000),  # beyond int()'s digit limit: text, never an error
    # number: int when integral without '.'/'e', else float; NaN and infinities are not numbers
    ("1e3", N, 1000.0),
    ("3", N, 3),
    ("3.5", N, 3.5),
    (" 2.50 ", N, 2.5),
    ("-0.5", N, -0.5),
    ("1_000", N, 1000),
    ("1_000.5", N, 1000.5),
    ("3.5", {"type": "float"}, 3.5),
    ("3.5", {"type": "double"}, 3.5),
    ("nan", N, "nan"),
    ("NaN", N, "NaN"),
    ("inf", N, "inf"),
    ("-Infinity", N, "-Infinity"),
    ("1e400", N, "1e400"),
    ("0x10", N, "0x10"),
    ("three", N, "three"),
    # boolean
    ("TRUE", B, True),
    ("true", B, True),
    (" False ", B, False),
    ("1", B, True),
    ("0", B, False),
    ("yes", B, "yes"),
    ("2", B, 2),  # JSON fallback
    ("true", {"type": "bool"}, True),
    # null
    ("null", NULL, None),
    (" NULL\n", NULL, None),
    ("Null", NULL, None),
    ("none", NULL, "none"),
    # object / array: JSON of that type, then typed inside
    ('{"a": 1}', O, {"a": 1}),
    ('  {"a": 1}\n', O, {"a": 1}),
    ('{"a": 1}', {"type": "dict"}, {"a": 1}),
    ("[1, 2]", O, [1, 2]),  # not an object: JSON fallback
    ("{not json", O, "{not json"),
    ("[1, 2]", A, [1, 2]),
    ("[1, 2]", {"type": "list"}, [1, 2]),
    ("[1, NaN]", A, "[1, NaN]"),
    ('{"a": 1}', A, {"a": 1}),
    (
        '{"n": "3", "s": "4"}',
        {"type": "object", "properties": {"n": I, "s": S}},
        {"n": 3, "s": "4"},
    ),
    ('["1", "2", "x"]', {"type": "array", "items": I}, [1, 2, "x"]),
    ('["1", "1", "1"]', {"type": "array", "prefixItems": [I, B], "items": N}, [1, True, 1]),
    (
        '{"rows": [{"id": "7", "ok": "true"}]}',
        {
            "type": "object",
            "properties": {
                "rows": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": I, "ok": B}},
                }
            },
        },
        {"rows": [{"id": 7, "ok": True}]},
    ),
    ('{"x": "5"}', {"type": "object", "additionalProperties": I}, {"x": 5}),
    # no declared type: properties / items imply object / array
    ('{"n": "3"}', {"properties": {"n": I}}, {"n": 3}),
    ('{"n": "3"}', {"additionalProperties": I}, {"n": 3}),
    ('["1"]', {"items": I}, [1]),
    ('["1"]', {"prefixItems": [B]}, [True]),
    ("abc", {"properties": {}}, "abc"),
    ("3", {"properties": "junk"}, "3"),
    ('{"n": "3"}', {"properties": {"n": I}, "anyOf": [{"required": ["n"]}]}, {"n": 3}),
    # type lists and unions: only declared types, in the order null, integer, number, boolean,
    # object, array, string
    ("3", {"type": ["integer", "string"]}, 3),
    ("x", {"type": ["integer", "string"]}, "x"),
    ("3.5", {"type": ["string", "integer"]}, "3.5"),
    ("null", {"type": ["integer", "null"]}, None),
    ("5", {"type": ["integer", "null"]}, 5),
    ("1", {"type": ["boolean", "integer"]}, 1),
    ("1", {"type": ["boolean", "string"]}, True),
    ("1", {"type": ["boolean", "number"]}, 1),
    ("1.5", {"type": ["integer", "number"]}, 1.5),
    ("[1]", {"type": ["string", "array"]}, [1]),
    ("3", {"type": ["integer", 42]}, 3),
    ("true", {"anyOf": [I, B]}, True),
    ("7", {"anyOf": [B, I]}, 7),
    ("null", {"oneOf": [N, NULL]}, None),
    ("2.5", {"oneOf": [N, NULL]}, 2.5),
    ("x", {"anyOf": [I, S]}, "x"),
    ("3", {"anyOf": [{"anyOf": [I]}, S]}, 3),
    ("3", {"anyOf": [{"description": "anything"}, I]}, "3"),  # a member admits anything
    ('{"a": "1"}', {"anyOf": [NULL, {"type": "object", "properties": {"a": I}}]}, {"a": 1}),
    ("3", {"anyOf": [42, None, I]}, 3),
    ("3", {"anyOf": "junk", "type": "integer"}, 3),
    # allOf: the first member that declares a type
    ("3", {"allOf": [{"description": "d"}, I, S]}, 3),
    ("3", {"allOf": [S, I]}, "3"),
    # enum / const: the JSON types of their values
    ("a", {"enum": ["a", "b"]}, "a"),
    ("null", {"enum": ["a", "null"]}, "null"),
    ("2", {"enum": [1, 2, 3]}, 2),
    ("1", {"enum": ["a", 1]}, 1),
    ("a", {"enum": ["a", 1]}, "a"),
    ("null", {"enum": [None, "x"]}, None),
    ("true", {"enum": [True, False]}, True),
    ("5", {"const": 5}, 5),
    ("5", {"const": "5"}, "5"),
    ("2", {"type": "integer", "enum": [1, 2]}, 2),
    ("a", {"enum": "junk"}, "a"),
    # nullable (OpenAPI)
    ("null", {"type": "string", "nullable": True}, None),
    ("x", {"type": "string", "nullable": True}, "x"),
    ("NULL", {"type": "integer", "nullable": True}, None),
    ("4", {"type": "integer", "nullable": True}, 4),
    ("null", {"type": "string", "nullable": "yes"}, "null"),
    # $ref inside a schema passed directly resolves against that schema
    ("3", {"$ref": "#/$defs/I", "$defs": {"I": I}}, 3),
    ("3", {"$ref": "#/definitions/I", "definitions": {"I": I}}, 3),
    ("3", {"$ref": "#/$defs/missing"}, "3"),
    ("3", {"$ref": "#"}, "3"),
    ("3", {"$ref": 42, "type": "integer"}, 3),
    ("3", {"$ref": "#/$defs/S", "type": "integer", "$defs": {"S": S}}, 3),
    ("3", {"$ref": "#/$defs/I", "nullable": True, "$defs": {"I": I}}, 3),
    ("null", {"$ref": "#/$defs/I", "nullable": True, "$defs": {"I": I}}, None),
]


@pytest.mark.parametrize(("text", "schema", "expected"), TEXT_CASES)
def test_coerce_text(text: str, schema: object, expected: object) -> None:
    assert same(coerce_text(text, schema), expected)


def test_coerce_text_keeps_the_very_string_when_untyped() -> None:
    text = "hello world"
    assert coerce_text(text, S) is text
    assert coerce_text(text, None) is text
    assert coerce_text(text, I) is text


def test_coerce_text_non_text_input_is_returned() -> None:
    assert coerce_text(None, I) is None  # type: ignore[arg-type]


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


# --------------------------------------------------------------------------- coerce_json

JSON_CASES = [
    ("3", I, 3),
    ("3", N, 3),
    ("2.5", N, 2.5),
    ("true", B, True),
    ("null", NULL, None),
    ("null", {"type": ["null", "integer"]}, None),
    ("[1, 2]", A, [1, 2]),
    ('{"n": "3"}', {"type": "object", "properties": {"n": I}}, {"n": 3}),
    ('"3"', I, "3"),  # JSON fallback: the string inside
    ({"a": "1", "b": "x"}, {"type": "object", "properties": {"a": I, "b": S}}, {"a": 1, "b": "x"}),
    ({"a": ["1", "2"]}, {"properties": {"a": {"type": "array", "items": I}}}, {"a": [1, 2]}),
    (["1", "true"], {"type": "array", "prefixItems": [I, B]}, [1, True]),
    (["1", "true", "2"], {"type": "array", "items": [I, B], "additionalItems": N}, [1, True, 2]),
    (
        {"x": "1", "y": "2"},
        {"type": "object", "properties": {"x": S}, "additionalProperties": I},
        {"x": "1", "y": 2},
    ),
    (
        {"a": {"b": "false"}},
        {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": B}}}},
        {"a": {"b": False}},
    ),
    ({"a": "1"}, {"allOf": [{"properties": {"b": S}}, {"properties": {"a": I}}]}, {"a": 1}),
    ({"a": "1"}, {"anyOf": [NULL, {"type": "object", "properties": {"a": I}}]}, {"a": 1}),
    ({"a": "1"}, {"anyOf": [{"type": "array", "items": S}, {"properties": {"a": I}}]}, {"a": 1}),
    ({"a": "2"}, {"type": ["object", "null"], "properties": {"a": N}}, {"a": 2}),
]


@pytest.mark.parametrize(("value", "schema", "expected"), JSON_CASES)
def test_coerce_json(value: object, schema: object, expected: object) -> None:
    assert same(coerce_json(value, schema), expected)


UNCHANGED = [
    (3, I),
    (3, S),  # a JSON number for a string property is left as the model wrote it
    (3, N),
    (3.0, I),
    (True, I),
    (None, I),
    ("3", S),
    ("3", {"type": ["integer", "string"]}),
    ("3", None),
    ("3", {}),
    ("abc", I),
    ("nan", N),
    ({"a": 1}, S),
    ([1], B),
    ({"a": "1"}, {"type": "object"}),
    ({"a": "1"}, {"type": "object", "properties": {"a": S}}),
    ({"a": "1"}, {"type": "object", "properties": {"b": I}}),
    ({"a": "1"}, {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}),
    ({"a": [1, {"b": True}]}, {"properties": {"a": {"items": {"properties": {"b": B}}}}}),
    ({"a": "1"}, {"properties": [1, 2]}),
    ({"a": "1"}, {"properties": {"a": 42}}),
    (["1"], {"items": "junk"}),
    (["1"], {"type": "array", "items": True}),
    (["1"], {"prefixItems": "junk", "items": S}),
    ("1", {"anyOf": None}),
    ({"a": "1"}, {"anyOf": [{}, {"properties": {"a": I}}]}),  # declares nothing: as written
    ({"a": "1"}, {"type": "object", "properties": {"a": {"description": "any"}}}),
    (object(), I),
]


@pytest.mark.parametrize(("value", "schema"), UNCHANGED)
def test_coerce_json_returns_the_same_object_when_unchanged(value: object, schema: object) -> None:
    assert coerce_json(value, schema) is value


def test_coerce_json_copies_only_the_changed_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "deep": {"type": "object", "properties": {"n": I}},
            "other": {"type": "object", "properties": {"s": S}},
            "list": {"type": "array", "items": S},
        },
    }
    value = {"first": 1, "deep": {"n": "4", "keep": [1]}, "other": {"s": "x"}, "list": ["a"]}
    snapshot = json.dumps(value)
    out = coerce_json(value, schema)
    assert out == {"first": 1, "deep": {"n": 4, "keep": [1]}, "other": {"s": "x"}, "list": ["a"]}
    assert list(out) == list(value)  # key order kept
    assert out is not value and out["deep"] is not value["deep"]
    assert out["other"] is value["other"]
    assert out["list"] is value["list"]
    assert out["deep"]["keep"] is value["deep"]["keep"]
    assert json.dumps(value) == snapshot  # the input is never mutated


# --------------------------------------------------------------------------- ToolSchemas and $ref

DEFS_TOOL = {
    "type": "function",
    "function": {
        "name": "demo",
        "parameters": {
            "type": "object",
            "$defs": {
                "Count": {"$ref": "#/$defs/Int"},
                "Int": {"type": "integer"},
                "Flag": {"$anchor": "flag", "type": "boolean"},
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"$ref": "#/$defs/Int"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                },
                "Json": {"anyOf": [I, {"type": "array", "items": {"$ref": "#/$defs/Json"}}]},
                "Ping": {"anyOf": [{"$ref": "#/$defs/Pong"}, B]},
                "Pong": {"anyOf": [{"$ref": "#/$defs/Ping"}, I]},
                "Loop1": {"$ref": "#/$defs/Loop2"},
                "Loop2": {"$ref": "#/$defs/Loop1"},
                "Self": {"$ref": "#/$defs/Self"},
                "MaybeInt": {"anyOf": [{"$ref": "#/$defs/Count"}, NULL]},
            },
            "definitions": {"Legacy": {"type": "number"}},
            "properties": {
                "count": {"$ref": "#/$defs/Count"},
                "legacy": {"$ref": "#/definitions/Legacy"},
                "alias": {"$ref": "#/properties/count"},
                "flag": {"$ref": "#flag", "description": "an anchor"},
                "tree": {"$ref": "#/$defs/Node"},
                "json": {"$ref": "#/$defs/Json"},
                "ping": {"$ref": "#/$defs/Ping"},
                "loop": {"$ref": "#/$defs/Loop1"},
                "self": {"$ref": "#/$defs/Self"},
                "missing": {"$ref": "#/$defs/Nope"},
                "remote": {"$ref": "https://example.com/schema.json"},
                "maybe": {"$ref": "#/$defs/MaybeInt"},
                "nullable_ref": {"$ref": "#/$defs/Int", "nullable": True},
                "junk": 42,
                "anything": True,
                "plain": {"type": "string"},
            },
        },
    },
}


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


# --------------------------------------------------------------------------- deep and hostile input


def test_deep_text_falls_back_to_text() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert coerce_text(text, A) is text
    assert coerce_text(text, {"type": ["integer", "array"]}) is text


def test_deep_json_value_is_returned_unchanged() -> None:
    value: list = []
    for _ in range(100_000):
        value = [value]
    recursive = {
        "$defs": {"L": {"type": "array", "items": {"$ref": "#/$defs/L"}}},
        "$ref": "#/$defs/L",
    }
    assert coerce_json(value, recursive) is value


def test_deep_schema_is_no_schema() -> None:
    schema: dict = {"type": "integer"}
    for _ in range(100_000):
        schema = {"anyOf": [schema]}
    assert streams_as_text(schema)
    assert coerce_text("3", schema) == "3"
    assert coerce_json("3", schema) == "3"
    tools = ToolSchemas([{"name": "f", "parameters": {"properties": {"x": schema}}}])
    assert tools.param_schema("f", "x") is None


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


# --------------------------------------------------------------------------- properties

_RECURSIVE = {
    "$defs": {
        "V": {
            "anyOf": [
                NULL,
                B,
                I,
                N,
                {"type": "array", "items": {"$ref": "#/$defs/V"}},
                {"type": "object", "additionalProperties": {"$ref": "#/$defs/V"}},
            ]
        }
    },
    "$ref": "#/$defs/V",
}

FIXED_SCHEMAS = [
    None,
    {},
    42,
    "string",
    [I],
    {"type": 42},
    S,
    I,
    N,
    B,
    NULL,
    O,
    A,
    {"type": "str"},
    {"type": "int"},
    {"type": "float"},
    {"type": "bool"},
    {"type": "dict"},
    {"type": "list"},
    {"type": ["integer", "string"]},
    {"type": ["null", "number", "boolean"]},
    {"anyOf": [I, B, NULL]},
    {"oneOf": [O, A]},
    {"allOf": [{}, N]},
    {"enum": ["a", 1, None]},
    {"const": True},
    {"type": "string", "nullable": True},
    {"type": "object", "properties": {"n": I, "b": B, "l": {"type": "array", "items": N}}},
    {"type": "array", "prefixItems": [I, B], "items": S},
    {"$ref": "#/$defs/gone"},
    {"$ref": "#"},
    _RECURSIVE,
    ToolSchemas([DEFS_TOOL]).param_schema("demo", "tree"),
    ToolSchemas([DEFS_TOOL]).param_schema("demo", "json"),
]

_type_names = st.sampled_from(
    [
        "null",
        "integer",
        "int",
        "number",
        "double",
        "boolean",
        "bool",
        "object",
        "dict",
        "array",
        "list",
        "string",
        "str",
        "text",
        "enum",
        "bogus",
        42,
    ]
)
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
_generated_schemas = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": _type_names | st.lists(_type_names, max_size=3),
            "enum": st.lists(_json_scalars, max_size=3),
            "nullable": st.booleans(),
            "$ref": st.sampled_from(["#", "#/properties", "#/nope", "x.json", "#/anyOf/0"]),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": _type_names | st.lists(_type_names, max_size=3),
            "anyOf": st.lists(inner, max_size=3),
            "oneOf": st.lists(inner, max_size=3),
            "allOf": st.lists(inner, max_size=3),
            "properties": st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
            "additionalProperties": inner | st.booleans(),
            "items": inner | st.lists(inner, max_size=2),
            "prefixItems": st.lists(inner, max_size=2),
        },
    ),
    max_leaves=8,
)
SCHEMAS = st.sampled_from(FIXED_SCHEMAS) | _generated_schemas

TEXTS = st.text() | st.sampled_from(
    [
        "null",
        " NULL ",
        "3",
        " 3\n",
        "1_000",
        "3.0",
        "1e3",
        "1e400",
        "nan",
        "-Infinity",
        "TRUE",
        "0",
        '[1, "2", [null]]',
        '{"n": "3", "b": "true", "l": ["1.5"]}',
        '"3"',
        "",
        " ",
        "{",
    ]
)

JSON_VALUES = st.recursive(
    _json_scalars | st.sampled_from(["3", "true", "null", "1.5", "[1]", '{"a": "1"}']),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.sampled_from(["n", "b", "l", "a", "value", "children"]) | st.text(max_size=3),
        inner,
        max_size=4,
    ),
    max_leaves=20,
)

_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(text=TEXTS, schema=SCHEMAS)
def test_coerce_text_never_raises_and_gives_strict_json(text: str, schema: object) -> None:
    result = coerce_text(text, schema)
    json.dumps(result, allow_nan=False)  # every result is a value a client can read


@_SETTINGS
@given(text=TEXTS, schema=SCHEMAS)
def test_text_streamed_schemas_keep_the_text(text: str, schema: object) -> None:
    if streams_as_text(schema):
        assert coerce_text(text, schema) == text


@_SETTINGS
@given(value=JSON_VALUES, schema=SCHEMAS)
def test_text_streamed_schemas_keep_json_values(value: object, schema: object) -> None:
    # json_args streams a value's bytes when streams_as_text says so: typing must not rewrite them
    if streams_as_text(schema):
        assert coerce_json(value, schema) is value


@_SETTINGS
@given(value=JSON_VALUES, schema=SCHEMAS)
def test_coerce_json_never_raises_nor_mutates(value: object, schema: object) -> None:
    value = json.loads(json.dumps(value))
    snapshot = json.dumps(value)
    result = coerce_json(value, schema)
    json.dumps(result, allow_nan=False)
    assert json.dumps(value) == snapshot
    if json.dumps(result) == snapshot and same(result, value):
        assert result is value  # unchanged means the very same object
