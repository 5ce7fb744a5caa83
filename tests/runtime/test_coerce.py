"""Schema coercion: docs/policies.md, 'Schema coercion'; docs/invariants.md, 'Open trailing
parameters are kept' and 'Coercion'."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schema_examples import A, B, DEFS_TOOL, I, N, NULL, O, S, same
from toolgrammar.runtime.coerce import coerce_bare, coerce_flagged_json, coerce_json, coerce_text
from toolgrammar.runtime.schemas import ToolSchemas, streams_as_text

# --------------------------------------------------------------------------- coerce_text


def _CHAIN(combinator: str) -> dict:  # noqa: N802  (a schema table, read as one)
    """$defs D0..D40, each a `combinator` of the next one twice, D40 a string."""
    defs: dict = {f"D{i}": {combinator: [{"$ref": f"#/$defs/D{i + 1}"}] * 2} for i in range(40)}
    return {**defs, "D40": S}


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
    # allOf: the types every member that declares one admits; the first's when none is shared
    ("3", {"allOf": [{"description": "d"}, I, S]}, 3),
    ("3", {"allOf": [{"description": "d"}, I]}, 3),
    ("3", {"allOf": [S, I]}, "3"),
    ("null", {"allOf": [{"anyOf": [S, NULL]}, S]}, "null"),
    ("null", {"allOf": [{"anyOf": [S, NULL]}, {"anyOf": [I, NULL]}]}, None),
    ("1", {"allOf": [{"type": ["number", "string"]}, {"enum": [1, "x"]}]}, 1),
    ("1.5", {"allOf": [N, {"anyOf": [I, S]}]}, 1.5),  # integer only: no type fits, JSON
    # shared definitions, each used twice by the one before: 2**40 paths, walked once each
    ("1.10", {"$ref": "#/$defs/D0", "$defs": _CHAIN("anyOf")}, "1.10"),
    ("1.10", {"$ref": "#/$defs/D0", "$defs": _CHAIN("allOf")}, "1.10"),
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


FIDELITY_CASES = [
    # a quoted JSON string: the schema decides what the quotes hold
    ('"7"', N, 7),
    ('"7.5"', N, 7.5),
    ('"3"', I, 3),
    (' "true" ', B, True),
    ('"x"', I, "x"),
    ('"7"', S, '"7"'),
    ('"7"', {"anyOf": [I, S]}, '"7"'),
    ('"4"', {"type": ["integer", "null"]}, 4),
    # leading zeros for an integer
    ("08", I, 8),
    ("08", N, 8),
    # containers: over-escaped JSON, Python literals made of JSON's values
    ('[{\\"a\\": 1}]', A, [{"a": 1}]),
    ('{\\"k\\": \\"v w\\"}', O, {"k": "v w"}),
    ("{'k': True, 'n': None, 'f': -1.5}", O, {"k": True, "n": None, "f": -1.5}),
    ("('a', 'b')", A, ["a", "b"]),
    ("['a', ('b', 1)]", A, ["a", ["b", 1]]),
    ("{'max': '5'}", {"type": "object", "properties": {"max": I}}, {"max": 5}),
    ("{1: 2}", O, "{1: 2}"),
    ("{'a': 1e999}", O, "{'a': 1e999}"),
    ("{'a': f(1)}", O, "{'a': f(1)}"),
    ("{'a': 1}", S, "{'a': 1}"),
    ("{'a': 1}", A, "{'a': 1}"),
    ("('a', 'b')", O, "('a', 'b')"),
]


@pytest.mark.parametrize(("text", "schema", "expected"), FIDELITY_CASES)
def test_coerce_text_reads_what_peers_read(text: str, schema: object, expected: object) -> None:
    assert same(coerce_text(text, schema), expected)


BARE_CASES = [
    ("3", None, 3),
    ("-0.5", None, -0.5),
    ("1e3", {}, 1000.0),
    ("true", None, True),
    ("false", None, False),
    ("null", None, None),
    ("007", None, "007"),
    ("True", None, "True"),
    ("abc", None, "abc"),
    ("1e999", None, "1e999"),
    ("3", S, "3"),  # a schema decides
    ("3", I, 3),
    ("true", {"anyOf": [S, B]}, True),
]


@pytest.mark.parametrize(("text", "schema", "expected"), BARE_CASES)
def test_coerce_bare(text: str, schema: object, expected: object) -> None:
    assert same(coerce_bare(text, schema), expected)


FLAGGED_CASES = [
    ("null", S, "null"),
    ("null", {"type": "string", "nullable": True}, None),
    ("null", {"anyOf": [I, S]}, "null"),
    ("null", NULL, None),
    ("null", None, None),
    ('"x"', S, "x"),
    ("3", I, 3),
    ('"3"', I, 3),
    ("3", S, 3),  # a JSON number for a string stays a number, as in the JSON dialects
]


@pytest.mark.parametrize(("text", "schema", "expected"), FLAGGED_CASES)
def test_coerce_flagged_json(text: str, schema: object, expected: object) -> None:
    assert same(coerce_flagged_json(text, schema), expected)


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


# --------------------------------------------------------------------------- deep and hostile values


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
