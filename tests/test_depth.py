"""Input nested 10^5 deep, in every family and every walk: the documented result of
docs/policies.md, "Values nested too deep" (runtime/limits.py), never a RecursionError.

The walks count their own levels, so these results hold whatever Python's recursion limit is
(compiled code has none); each test asserts what comes out, not only that nothing raised."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

import toolgrammar
from toolgrammar.runtime.coerce import coerce_json, coerce_text
from toolgrammar.runtime.limits import MAX_DEPTH, deeper_than
from toolgrammar.runtime.schemas import ToolSchemas, schema_types

DEEP = 100_000
FAMILIES = toolgrammar.families()


def _tools(properties: dict[str, Any], name: str = "get_weather") -> list[dict[str, Any]]:
    parameters = {"type": "object", "properties": properties}
    return [{"type": "function", "function": {"name": name, "parameters": parameters}}]


def _levels(value: Any) -> int:
    """How many containers deep `value` nests, along its first members (a walk in a loop)."""
    levels = 0
    while isinstance(value, (dict, list)):
        levels += 1
        if not value:
            break
        value = next(iter(value.values())) if isinstance(value, dict) else value[0]
    return levels


def _nested(levels: int, kind: str = "dict") -> Any:
    value: Any = {} if kind == "dict" else []
    for _ in range(levels - 1):
        value = {"a": value} if kind == "dict" else [value]
    return value


def _read_both(family: str, text: str, tools: Any) -> toolgrammar.Message:
    """The whole parse, after checking that a stream of 8K deltas reads the same."""
    whole = toolgrammar.parse(family, text, tools, ids="sequential")
    parser = toolgrammar.StreamParser(family, tools, ids="sequential")
    deltas = [d for i in range(0, len(text), 8192) for d in parser.feed(text[i : i + 8192])]
    streamed = toolgrammar.assemble(deltas + parser.finish())
    assert streamed.content == whole.content and streamed.reasoning == whole.reasoning
    assert [(c.function.name, c.function.arguments) for c in streamed.tool_calls] == [
        (c.function.name, c.function.arguments) for c in whole.tool_calls
    ]
    json.dumps([d.to_dict() for d in deltas])  # the public shapes are flat at any depth
    whole.model_dump_json()
    return whole


def _kind(family: str) -> str:
    names = {type(item).__name__ for item in toolgrammar.get_spec(family).call}
    json_args = names & {"JsonArgs", "JsonCall", "JsonCallArray"}
    return "json" if json_args else "markup"


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("family", FAMILIES)
def test_values_nested_ten_to_the_five_deep_read_as_the_policy_says(family: str) -> None:
    """A call whose value is 10^5 brackets (or objects) deep, with an array (or object)
    schema: a JSON family's arguments are closed at MAX_DEPTH levels (the rest of the call
    is markup); in every other dialect the value is not read as a container and stays the
    text the model wrote. Whole and streamed alike, and nothing returned nests deeper."""
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    rendered = toolgrammar.render(family, [call])
    quoted = '"Paris"' in rendered and _kind(family) == "json"
    deep = {
        "array": "[" * DEEP + "]" * DEEP,
        "object": '{"a": ' * DEEP + "1" + "}" * DEEP,
        "cut": "[" * DEEP,
    }
    for kind, value in deep.items():
        text = rendered.replace('"Paris"' if quoted else "Paris", value)
        tools = _tools({"city": {"type": "object" if kind == "object" else "array"}})
        message = _read_both(family, text, tools)
        assert [c.function.name for c in message.tool_calls] == ["get_weather"], kind
        args = json.loads(message.tool_calls[0].function.arguments)
        assert not deeper_than(args, MAX_DEPTH), kind
        if _kind(family) == "json":  # closed at the limit: the arguments object is level 1
            assert _levels(args) == MAX_DEPTH, kind
            inner = args["city"]
            assert isinstance(inner, list if kind != "object" else dict), kind
        elif kind != "cut" or "Paris<" in rendered:  # a cut value a closer still ends
            assert args == {"city": value}, kind  # too deep to be a container: its text


@pytest.mark.parametrize("family", ["qwen3_coder", "glm47", "minimax_m2", "deepseek_v32"])
def test_a_markup_value_is_a_container_up_to_the_limit(family: str) -> None:
    """The arguments object is level 1: a value of MAX_DEPTH - 1 levels is read as JSON,
    one level more stays text (whatever Python's json would still read)."""
    call = {"name": "get_weather", "arguments": {"city": "PLACE"}}
    rendered = toolgrammar.render(family, [call])
    tools = _tools({"city": {"type": "array"}})
    for levels, read in ((MAX_DEPTH - 1, True), (MAX_DEPTH, False), (500, False)):
        value = "[" * levels + "]" * levels
        message = _read_both(family, rendered.replace("PLACE", value), tools)
        city = json.loads(message.tool_calls[0].function.arguments)["city"]
        assert (city != value) is read, levels
        if read:
            assert _levels(city) == MAX_DEPTH - 1


@pytest.mark.parametrize("family", ["pythonic", "lfm2"])
def test_python_literals_past_the_limit_are_their_text(family: str) -> None:
    opener, closer = (
        ("[", "]") if family == "pythonic" else ("<|tool_call_start|>[", "]<|tool_call_end|>")
    )
    tools = _tools({"x": {"type": "array"}, "n": {"type": "integer"}}, name="f")
    for levels, read in ((MAX_DEPTH - 1, True), (MAX_DEPTH, False), (150, False), (DEEP, False)):
        value = "[" * levels + "]" * levels
        message = _read_both(family, f"{opener}f(n=1, x={value}){closer}", tools)
        args = json.loads(message.tool_calls[0].function.arguments)
        assert args["n"] == 1
        assert (args["x"] != value) is read, levels
    signs = "-" * DEEP + "1"  # any run of signs, read in a loop or refused by Python's parser
    message = _read_both(family, f"{opener}f(n={signs}){closer}", tools)
    assert json.loads(message.tool_calls[0].function.arguments) == {"n": signs}
    message = _read_both(family, f"{opener}f(n={'- ' * 51}1){closer}", tools)
    assert json.loads(message.tool_calls[0].function.arguments) == {"n": -1}


def test_key_value_brackets_past_the_limit_are_bare_text() -> None:
    tools = _tools({"x": {"type": "object"}, "n": {"type": "integer"}}, name="f")
    for levels in (MAX_DEPTH - 1, DEEP):
        text = "<|tool_call>call:f{n:1,x:" + "{a:" * levels + "1" + "}" * levels + "}<tool_call|>"
        message = _read_both("gemma4", text, tools)
        args = json.loads(message.tool_calls[0].function.arguments)
        assert args["n"] == 1 and not deeper_than(args, MAX_DEPTH)
        if levels < MAX_DEPTH:
            assert _levels(args["x"]) == levels and args["x"] == _nested_value(levels)
        else:  # brackets past the limit are the bare text of the value they are in
            assert _levels(args["x"]) == MAX_DEPTH - 1  # the arguments object is the other
            leaf = args["x"]
            while isinstance(leaf, dict):
                leaf = leaf["a"]
            assert isinstance(leaf, str) and leaf.startswith("{a:{a:") and leaf.endswith(":1")


def _nested_value(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def test_elements_past_the_limit_are_text_of_the_element_around_them() -> None:
    tools = _tools({"x": {"type": "object"}}, name="f")
    spec = toolgrammar.get_spec("minimax_m3")
    [prefix] = {item.prefix for item in spec.call if hasattr(item, "max_depth")}
    rendered = toolgrammar.render("minimax_m3", [("f", {"x": "PLACE"})])
    deep = f"{prefix}<a>" * DEEP + "1" + f"{prefix}</a>" * DEEP
    message = _read_both("minimax_m3", rendered.replace("PLACE", deep), tools)
    args = json.loads(message.tool_calls[0].function.arguments)
    assert not deeper_than(args, MAX_DEPTH)
    leaf, levels = args["x"], 1
    while isinstance(leaf, dict):
        leaf, levels = leaf["a"], levels + 1
    assert levels <= MAX_DEPTH  # the tags past the limit: text of the innermost element
    assert isinstance(leaf, str) and leaf.startswith(f"{prefix}<a>{prefix}<a>")
    assert leaf.endswith(f"{prefix}<a>1")
    # the closers of those tags close the elements read; the rest are the outer one's text
    surplus = args["x"]["$text"]
    closers = levels - 1  # the elements below `x`, each closed by one
    assert surplus == f"{prefix}</a>" * (DEEP - closers)


@pytest.mark.parametrize("family", ["mistral", "lfm2"])
def test_a_bare_run_of_ten_to_the_five_calls_is_read_in_a_loop(family: str) -> None:
    """`{…}, {…}, …` without brackets: each call used to be read one Python call deeper
    (3,000 raised RecursionError)."""
    opener = "[TOOL_CALLS]" if family == "mistral" else "<|tool_call_start|>"
    body = ", ".join('{"name": "f", "arguments": {"a": 1}}' for _ in range(DEEP))
    message = _read_both(family, opener + body + " done", None)
    assert len(message.tool_calls) == DEEP
    assert message.tool_calls[-1].function.arguments == '{"a": 1}'


# --------------------------------------------------------------------------- schemas


def _deep_schemas() -> dict[str, dict[str, Any]]:
    items: dict[str, Any] = {"type": "integer"}
    props: dict[str, Any] = {"type": "integer"}
    any_of: dict[str, Any] = {"type": "integer"}
    for _ in range(DEEP):
        items = {"type": "array", "items": items}
        props = {"type": "object", "properties": {"a": props}}
        any_of = {"anyOf": [any_of]}
    refs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(DEEP)}
    refs[f"d{DEEP}"] = {"type": "integer"}
    return {
        "items": items,
        "properties": props,
        "anyOf": any_of,
        "$ref chain": {"$ref": "#/$defs/d0", "$defs": refs},  # (its $defs go to the root)
    }


def _deep_tools(deep: dict[str, Any], **more: Any) -> list[dict[str, Any]]:
    """A tool with the property `deep` (and `more`); a `$defs` of `deep` at the root, where
    its `$ref`s point."""
    deep = dict(deep)
    tools = _tools({**more, "deep": deep})
    if "$defs" in deep:
        tools[0]["function"]["parameters"]["$defs"] = deep.pop("$defs")
    return tools


def test_schemas_nested_ten_to_the_five_deep_are_no_schema_past_the_limit() -> None:
    """Typing reads the levels above the limit; below it a schema says nothing (the value
    stays as written), and a schema is never refused for its depth."""
    for label, deep in _deep_schemas().items():
        tools = _deep_tools(deep, n={"type": "integer"})
        schemas = ToolSchemas(tools)
        assert schemas.param_schema("get_weather", "n") is not None
        sub = schemas.param_schema("get_weather", "deep")
        if label in ("anyOf", "$ref chain"):  # nothing to read before the limit: no type
            assert schema_types(sub) == (), label
        else:
            assert schema_types(sub) == (label == "items" and "array" or "object",), label
        value = {"items": "[[1]]", "properties": '{"a": {"a": 1}}'}.get(label, "5")
        text = toolgrammar.render("qwen3_coder", [("get_weather", {"n": "7", "deep": value})])
        message = _read_both("qwen3_coder", text, tools)
        args = json.loads(message.tool_calls[0].function.arguments)
        assert args["n"] == 7, label  # the shallow property is still typed
        if label in ("anyOf", "$ref chain"):
            assert args["deep"] == "5", label  # no type read for it: kept as written
        else:  # typed by the levels above the limit
            assert args["deep"] == json.loads(value), label


def test_typing_stops_at_the_limit() -> None:
    recursive = {
        "$defs": {"L": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/L"}}},
        "$ref": "#/$defs/L",
    }
    value: Any = "7"
    for _ in range(DEEP):
        value = [value]
    assert coerce_json(value, recursive) is value  # nothing above the limit to type
    shallow: Any = "7"
    for _ in range(MAX_DEPTH - 1):
        shallow = [shallow]
    typed = coerce_json(shallow, recursive)
    for _ in range(MAX_DEPTH - 1):
        typed = typed[0]
    assert typed == 7  # at the limit's last level: typed
    text = "[" * DEEP + "7" + "]" * DEEP
    assert coerce_text(text, recursive) == text


# --------------------------------------------------------------------------- render, export


@pytest.mark.parametrize("family", FAMILIES)
def test_render_refuses_arguments_past_the_limit_and_writes_them_at_it(family: str) -> None:
    recursive = {
        "$defs": {"V": {"type": "object", "additionalProperties": {"$ref": "#/$defs/V"}}},
        "$ref": "#/$defs/V",
    }
    tools = _tools({"x": recursive}, name="f")
    for kind in ("dict", "list"):
        with pytest.raises(toolgrammar.RenderError, match="nest too deep to write"):
            toolgrammar.render(family, [("f", {"x": _nested(DEEP, kind)})], tools)
        with pytest.raises(toolgrammar.RenderError, match="nest too deep to write"):
            toolgrammar.render(family, [("f", {"x": _nested(MAX_DEPTH, kind)})], tools)
    if _kind(family) == "json":  # (a markup family writes an object by its schema only)
        at_limit = {"x": _nested(MAX_DEPTH - 1, "dict")}
        text = toolgrammar.render(family, [("f", at_limit)], tools)
        call = toolgrammar.parse(family, text, tools).tool_calls[0]
        assert json.loads(call.function.arguments) == at_limit


@pytest.mark.parametrize("family", ["qwen3_coder", "minimax_m3", "pythonic", "gemma4"])
def test_markup_render_writes_values_at_the_limit(family: str) -> None:
    parameters = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/V"}},
        "$defs": {"V": {"type": "object", "properties": {"a": {"$ref": "#/$defs/V"}}}},
    }
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    at_limit = {"x": _nested(MAX_DEPTH - 1, "dict")}
    text = toolgrammar.render(family, [("f", at_limit)], tools)
    call = toolgrammar.parse(family, text, tools).tool_calls[0]
    assert json.loads(call.function.arguments) == at_limit


@pytest.mark.parametrize("family", ["hermes", "qwen3_coder", "minimax_m3", "pythonic", "gemma4"])
def test_export_refuses_schemas_past_the_limit_and_any_number_of_properties_exports(
    family: str,
) -> None:
    for label, deep in _deep_schemas().items():
        for fmt in ("lark", "gbnf"):
            with pytest.raises(toolgrammar.ExportError, match="too deeply nested schema"):
                toolgrammar.export_grammar(family, _deep_tools(deep), format=fmt)
    for key in ("properties", "items"):  # values at the limit export; one level more: not
        schema: dict[str, Any] = {"type": "integer"}
        for _ in range(MAX_DEPTH - 2):  # (the parameters object and `x` make the other two)
            schema = {"type": "object", "properties": {"a": schema}}
            if key == "items":
                schema = {"type": "array", "items": schema["properties"]["a"]}
        for fmt in ("lark", "gbnf"):
            assert "get_weather" in toolgrammar.export_grammar(family, _tools({"x": schema}), fmt)
            deeper = _tools({"x": {"type": "array", "items": schema}})
            with pytest.raises(toolgrammar.ExportError, match="too deeply nested schema"):
                toolgrammar.export_grammar(family, deeper, format=fmt)
    wide = {f"p{i}": {"type": "integer"} for i in range(3000)}  # one rule per property
    assert "p2999" in toolgrammar.export_grammar(family, _tools(wide), format="lark")


def test_no_walk_needs_the_recursion_limit() -> None:
    """With Python's limit as low as a compiled build's stack would allow nothing to rely
    on, the deep inputs above still read as documented (the walks count their levels)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        text = '<tool_call>\n{"name": "f", "arguments": {"x": ' + "[" * DEEP + "}}\n</tool_call>"
        args = json.loads(toolgrammar.parse("hermes", text).tool_calls[0].function.arguments)
        assert _levels(args) == MAX_DEPTH
        with pytest.raises(toolgrammar.RenderError, match="nest too deep"):
            toolgrammar.render("pythonic", [("f", {"x": _nested(DEEP)})])
    finally:
        sys.setrecursionlimit(old)


def test_the_command_line_says_deep_json_files_in_one_line(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolgrammar.cli import main

    output, deep = tmp_path / "out.txt", tmp_path / "deep.json"
    output.write_text("hi")
    deep.write_text("[" * DEEP + "]" * DEEP)
    for argv in (
        ["parse", "hermes", str(output), "--tools", str(deep)],
        ["render", "hermes", str(deep)],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "nested too deep to read" in err and err.count("\n") == 1, argv


def test_a_response_template_pattern_nested_past_the_limit_is_refused() -> None:
    import copy

    from support.response_templates import TEMPLATES
    from toolgrammar.compiler import response_template as rt

    template = copy.deepcopy(TEMPLATES["json_args"])
    opener = "(?:" * DEEP + "<tool_call" + ")" * DEEP + ' name="(?P<name>[^"]+)">'
    template["fields"]["tool_calls"]["open_pattern"] = opener
    with pytest.raises(rt.ResponseTemplateError, match="nested deeper than 128 levels"):
        rt.template_spec(template)
    with pytest.raises(ValueError, match="nested deeper"):
        toolgrammar.parse("hf", "x", response_template=template)


def test_repeated_elements_that_would_nest_past_the_limit_are_the_value_text() -> None:
    """Repeated names make lists, so elements nest up to twice as deep in JSON: a value
    that would make the arguments nest deeper than MAX_DEPTH is its text."""
    spec = toolgrammar.get_spec("minimax_m3")
    [prefix] = {item.prefix for item in spec.call if hasattr(item, "max_depth")}
    tools = _tools({"x": {"type": "object"}}, name="f")
    rendered = toolgrammar.render("minimax_m3", [("f", {"x": "PLACE"})])
    for levels, read in ((MAX_DEPTH // 2 - 1, True), (MAX_DEPTH // 2, False)):
        body = "1"
        for _ in range(levels):  # each level an object holding a list of two `a`s
            body = f"{prefix}<a>{body}{prefix}</a>{prefix}<a>2{prefix}</a>"
        message = _read_both("minimax_m3", rendered.replace("PLACE", body), tools)
        args = json.loads(message.tool_calls[0].function.arguments)
        assert not deeper_than(args, MAX_DEPTH)
        assert (args["x"] != body) is read, levels
        if read:  # (one level more of this shape would make it MAX_DEPTH + 1)
            assert _levels(args) == MAX_DEPTH - 1
