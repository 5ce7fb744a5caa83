"""Tool definitions for tests, in the OpenAI `tools` shape, made from a name and its
parameters' JSON Schema properties (the shape every test would otherwise spell out)."""

from __future__ import annotations

from typing import Any


def function_tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    """One `{"type": "function", ...}` tool whose parameters are an object of `properties`."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties},
        },
    }
