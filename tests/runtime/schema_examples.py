"""Schemas the schema and coercion tests share, and how they compare typed values."""

from __future__ import annotations

import json


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

# A tool whose parameters use every kind of `$ref`: chained, anchored, legacy, recursive,
# looping, missing, remote, and beside other keywords.
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
