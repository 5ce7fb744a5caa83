"""Lowering: the exact openers/follows of the real grammars, and the element tables."""

from __future__ import annotations

import dataclasses

import pytest

from toolgrammar.compiler import ir
from toolgrammar.compiler.validate import validate_grammar
from toolgrammar.compiler.frontend import parse_grammar
from toolgrammar.compiler.lower import LOWER_VALUE, docstring, lower, py_expr
from toolgrammar.runtime import spec as rt

from compiler_paths import FAMILIES, GRAMMARS
from toolgrammar.compiler.build import expected_outputs


def lower_file(family: str) -> rt.FamilySpec:
    """One grammar lowered on its own (a family that `extends` another needs the build)."""
    path = GRAMMARS / f"{family}.tg"
    text = path.read_text(encoding="utf-8")
    grammar = parse_grammar(text, f"grammars/{family}.tg")
    assert validate_grammar(grammar, text, f"grammars/{family}.tg") == []
    if grammar.of(ir.ExtendsStmt):
        _, specs = expected_outputs(GRAMMARS, GRAMMARS)
        return next(s for s in specs if s.name == family)
    return lower(grammar, f"grammars/{family}.tg", "0" * 64)


def line_of(family: str, needle: str) -> int:
    """The grammar line (1-based) of the first non-comment line holding `needle`."""
    lines = (GRAMMARS / f"{family}.tg").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if needle in line and not line.lstrip().startswith("#"):
            return number
    raise AssertionError(f"{needle!r} not in grammars/{family}.tg")


def lower_text(text: str) -> rt.FamilySpec:
    grammar = parse_grammar(text, "x.tg")
    assert validate_grammar(grammar, text, "x.tg") == []
    return lower(grammar, "x.tg", "0" * 64)


def test_qwen3_coder() -> None:
    spec = lower_file("qwen3_coder")
    assert spec.call == (
        rt.Lit("<tool_call>", optional=True, line=line_of("qwen3_coder", '"<tool_call>"?')),
        rt.Ws(write="\n", line=line_of("qwen3_coder", '"<tool_call>"?')),
        rt.Lit("<function=", line=line_of("qwen3_coder", '"<function="')),
        rt.Name(until=(">",), line=line_of("qwen3_coder", '"<function="')),
        rt.Lit(">", line=line_of("qwen3_coder", '"<function="')),
        rt.Ws(write="\n", line=line_of("qwen3_coder", '"<function="')),
        rt.XmlParams(
            open="<parameter=",
            key_end=">",
            value_end="</parameter>",
            implicit_end=(
                "<parameter=",
                "</function>",
                "</parameter1>",
                "</parameter_function>",
                "</parameter\n",
            ),
            trim_newline=True,
            write_between="\n",
            line=line_of("qwen3_coder", "xml_params("),
        ),
        rt.Ws(write="\n", line=line_of("qwen3_coder", 'ws(write="\\n") "</function>"')),
        rt.Lit("</function>", line=line_of("qwen3_coder", 'ws(write="\\n") "</function>"')),
        rt.Ws(write="\n", line=line_of("qwen3_coder", 'ws(write="\\n") "</function>"')),
        rt.Lit(
            "</tool_call>",
            optional=True,
            line=line_of("qwen3_coder", 'ws(write="\\n") "</function>"'),
        ),
    )
    assert spec.openers == (("<tool_call>", 1), ("<function=", 3))
    assert spec.follows == ((), (), (), (">",), (), (), ("</function>",), (), (), (), ())
    assert spec.aliases == ("qwen3_xml", "step5", "nanbeige")
    assert spec.reasoning == (
        rt.Reasoning(("<think>",), ("</think>",), line=line_of("qwen3_coder", "reasoning")),
    )
    assert spec.section is None


def test_kimi_k2() -> None:
    spec = lower_file("kimi_k2")
    assert spec.openers == (("<|tool_call_begin|>", 1),)
    assert spec.follows == (
        (),
        (),
        ("<|tool_call_argument_begin|>",),
        (),
        (),
        ("<|tool_call_end|>",),
        (),
        (),
    )
    assert spec.call[2] == rt.Name(
        until=("<|tool_call_argument_begin|>",),
        pattern=r"(?:functions\.)?(?P<name>[^:\s]+):\d+",
        id=True,
        line=line_of("kimi_k2", "name(until="),
    )
    assert spec.call[5] == rt.JsonArgs(line=line_of("kimi_k2", "json_args"))
    assert spec.section == rt.Section(
        opens=("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
        closes=("<|tool_calls_section_end|>", "<|tool_call_section_end|>"),
        optional=True,
        line=line_of("kimi_k2", "section ["),
    )
    assert spec.aliases == ()


def test_hermes() -> None:
    spec = lower_file("hermes")
    assert spec.openers == (("<tool_call>", 1),)
    assert spec.follows == ((), (), ("</tool_call>",), (), ())
    assert spec.call[2] == rt.JsonCall(
        ("name",), ("arguments", "parameters"), line=line_of("hermes", "json_call(")
    )
    assert spec.aliases == ("qwen3_json", "qwen", "qwen25")
    assert spec.reasoning == (
        rt.Reasoning(("<think>",), ("</think>",), line=line_of("hermes", "reasoning")),
    )


def test_optional_literals_are_collected_until_the_first_required_one() -> None:
    spec = lower_text(
        'family x call "<a>"? ws "<b>"? "<c>" "<d>" name(until=">") "x"? ws "y"? "z" "w" json_args'
    )
    assert spec.openers == (("<a>", 1), ("<b>", 3), ("<c>", 4))
    assert spec.follows[5] == ("x", "y", "z")
    assert spec.follows[11] == ()  # json_args at the end: the runtime adds closers itself


def test_element_defaults() -> None:
    spec = lower_text('family x call "<a>" json_call "</a>"')
    assert spec.call[1] == rt.JsonCall(("name",), ("arguments", "parameters"), line=1)
    spec = lower_text(
        'family x call "<a>" name(until=[">", "("], max_len=9) xml_params(open="<p=", key_end=">", value_end="</p>")'
    )
    assert spec.call[1] == rt.Name(until=(">", "("), max_len=9, line=1)
    assert spec.call[2] == rt.XmlParams("<p=", ">", "</p>", (), False, line=1)


def test_json_call_array_layout_lowers_and_render_writes_it() -> None:
    """`write_indent`, `write_indent_depth`, `write_id`: how render lays out the array (a
    template's `tojson(indent=4)`, Cohere's one call a line with its number first); the
    parser reads the layout back, as it reads the compact one."""
    from toolgrammar import parse
    from toolgrammar.runtime.registry import registered
    from toolgrammar.runtime.render import render_output

    head = 'family x call "<a>" ws json_call_array(name="tool_name", id="tool_call_id"'
    assert lower_text(head + ') ws "</a>"').call[2] == rt.JsonCallArray(
        ("tool_name",), ("arguments", "parameters"), id=("tool_call_id",), line=1
    )
    calls = [("f", {"a": 1, "b": [1, "x, y"]}), ("g", {})]
    full = lower_text(head + ', write_indent=2) ws "</a>"')
    assert full.call[2].write_indent == 2 and not full.call[2].write_id
    assert render_output(full, calls) == (
        '<a>[\n  {\n    "tool_name": "f",\n    "arguments": {\n      "a": 1,\n      "b": [\n'
        '        1,\n        "x, y"\n      ]\n    }\n  },\n  {\n    "tool_name": "g",\n'
        '    "arguments": {}\n  }\n]</a>'
    )
    lines = lower_text(head + ', write_indent=4, write_indent_depth=1, write_id=true) ws "</a>"')
    text = render_output(lines, calls)
    assert text == (
        '<a>[\n    {"tool_call_id": "0", "tool_name": "f", "arguments": {"a": 1, "b": [1, "x, y"]}},'
        '\n    {"tool_call_id": "1", "tool_name": "g", "arguments": {}}\n]</a>'
    )
    with registered(lines):
        message = parse("x", text)
    assert [(c.id, c.function.name) for c in message.tool_calls] == [("0", "f"), ("1", "g")]
    # `write_call_id`: each call's own id after its arguments (Mistral's pre-v11 list)
    own = lower_text(
        'family x call "<a>" ws json_call_array(id="id", write_call_id=true) ws "</a>"'
    )
    text = render_output(own, calls, ids=["aB3dE6gH9"])
    assert text == (
        '<a>[{"name": "f", "arguments": {"a": 1, "b": [1, "x, y"]}, "id": "aB3dE6gH9"}, '
        '{"name": "g", "arguments": {}, "id": "call000001"}]</a>'
    )
    with registered(own):
        message = parse("x", text)  # an id after the name is markup to the reader
    assert [c.function.name for c in message.tool_calls] == ["f", "g"]


@pytest.mark.parametrize("keep_last", [False, True])
def test_xml_params_write_flush_writes_values_against_their_markers(keep_last: bool) -> None:
    """`write_flush=true`: render writes no markup newline around a value (Seed-OSS's
    template), except beside a value's own newline that the reading would trim."""
    from toolgrammar import parse
    from toolgrammar.runtime.registry import registered
    from toolgrammar.runtime.render import render_output

    keep = ", keep_last_newline=true" if keep_last else ""
    spec = lower_text(
        'family x call "<f=" name(until=">") ">" xml_params(open="<p=", key_end=">", '
        f'value_end="</p>", trim_newline=true{keep}, write_flush=true) "</f>"'
    )
    assert spec.call[3].write_flush
    calls = [("f", {"a": "x", "b": "\nlines\n", "c": 3})]
    last = "" if keep_last else "\n"
    assert render_output(spec, calls) == (
        f"<f=f><p=a>x</p><p=b>\n\nlines\n{last}</p><p=c>3</p></f>"
    )
    with registered(spec):
        [call] = parse("x", render_output(spec, calls)).tool_calls
    assert call.function.arguments == '{"a": "x", "b": "\\nlines\\n", "c": "3"}'


def test_a_param_says_a_checkpoints_layout_and_a_child_that_replaces_its_uses_drops_it() -> None:
    """GLM-4.5 writes newlines in its markup, GLM-4.7 none: `param newline` is written by
    `render` and `ws(write=)`, and a row (a caller) gives another value. A child whose own
    statements use it no more (spark25 replaces `render` and `call`) does not take it."""
    from toolgrammar.runtime.params import with_params
    from toolgrammar.runtime.render import render_output

    glm = lower_file("glm45")
    assert glm.params == (("newline", "\n"),)
    calls = [("f", {"a": "x"})]
    assert render_output(with_params(glm), calls, content="Hi") == (
        "Hi\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\n</tool_call>"
    )
    assert render_output(with_params(glm, {"newline": ""}), calls, content="Hi") == (
        "Hi<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value></tool_call>"
    )
    assert lower_file("iquest_q1").params == (("newline", "\n"),)  # its render is glm45's
    assert lower_file("spark25").params == ()


def test_render_content_after_calls_writes_the_calls_first() -> None:
    """`render content_after_calls=true`: Gemma 4's template writes a turn's content after
    its calls; the parser reads that text as content as it reads content before them."""
    from toolgrammar import parse
    from toolgrammar.compiler.build import compile_grammar_text
    from toolgrammar.compiler.errors import CompileErrors
    from toolgrammar.runtime.registry import registered
    from toolgrammar.runtime.render import render_output

    text = 'family x\nrender content_after_calls=true\ncall "<a>" json_call "</a>"\n'
    spec = lower_text(text)
    assert spec.write.content_after_calls
    assert not lower_text('family x\ncall "<a>" json_call "</a>"\n').write.content_after_calls
    output = render_output(spec, [("f", {"k": 1})], content="Done.")
    assert output == '<a>{"name": "f", "arguments": {"k": 1}}</a>Done.'
    assert render_output(spec, [], content="Done.") == "Done."
    with registered(spec):
        message = parse("x", output)
    assert message.content == "Done." and message.tool_calls[0].function.name == "f"
    with pytest.raises(CompileErrors, match="takes true or false"):
        compile_grammar_text(text.replace("=true", '="yes"'), "x.tg")


def test_render_content_always_and_the_index_calls_are_numbered_from() -> None:
    """Kimi K3's template writes its response element in every turn (empty before calls
    without text) and numbers calls from 1: `render content_always=true`,
    `name(write_index_from=1)`. The parser reads both as it reads the layout without them."""
    from toolgrammar import parse
    from toolgrammar.compiler.build import compile_grammar_text
    from toolgrammar.compiler.errors import CompileErrors
    from toolgrammar.runtime.registry import registered
    from toolgrammar.runtime.render import render_output

    text = (
        'family x\ncontent "<r>" "</r>"\nrender content_always=true\n'
        'call "<c " name(until=">", pattern=/(?P<name>\\w+):(?P<i>\\d+)/, write_index_from=1)'
        ' ">" json_args "</c>"\n'
    )
    spec = lower_text(text)
    assert spec.write.content_always and spec.call[1].write_index_from == 1
    calls = [("f", {}), ("g", {})]
    output = render_output(spec, calls)
    assert output == "<r></r><c f:1>{}</c><c g:2>{}</c>"
    assert render_output(spec, calls, content="Hi") == "<r>Hi</r><c f:1>{}</c><c g:2>{}</c>"
    assert render_output(spec, [], content="Hi") == "<r>Hi</r>"
    with registered(spec):
        message = parse("x", output)
    assert message.content is None and [c.function.name for c in message.tool_calls] == ["f", "g"]
    with pytest.raises(CompileErrors, match="needs a `content` statement"):
        compile_grammar_text(text.replace('content "<r>" "</r>"\n', ""), "x.tg")


def test_xml_params_write_python_writes_containers_as_pythons_str() -> None:
    """`write_python=true`: a list or an object is written as Python's str prints it (a
    template's `{{ value }}`: Seed-OSS's, MiniCPM5's); the schema reads it back."""
    import json

    from toolgrammar import parse
    from toolgrammar.runtime.registry import registered
    from toolgrammar.runtime.render import render_output

    spec = lower_text(
        'family x call "<f=" name(until=">") ">" xml_params(open="<p=", key_end=">", '
        'value_end="</p>", write_python=true) "</f>"'
    )
    args = {"tags": ["rain", "it's"], "opts": {"on": True, "n": None}, "city": "Zürich", "k": 3}
    text = render_output(spec, [("f", args)])
    assert text == (
        "<f=f><p=tags>['rain', \"it's\"]</p><p=opts>{'on': True, 'n': None}</p>"
        "<p=city>Zürich</p><p=k>3</p></f>"
    )
    properties = {
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object"},
        "city": {"type": "string"},
        "k": {"type": "integer"},
    }
    tools = [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": properties}},
        }
    ]
    with registered(spec):
        [call] = parse("x", text, tools).tool_calls
    assert json.loads(call.function.arguments) == args


def test_name_doubled_lowers_to_its_separator() -> None:
    spec = lower_text(
        'family x call "<a " name(until=">", doubled=".") ">" xml_params(open="<p=", key_end=">", value_end="</p>")'
    )
    assert spec.call[1] == rt.Name(until=(">",), doubled=".", line=1)
    assert lower_text('family x call "<a " name(until=">") ">" json_args').call[1].doubled == ""


def test_a_list_of_spellings_lowers_to_the_first_and_its_alternatives() -> None:
    spec = lower_text(
        'family x call "<a>" name(until=">", requested=true) ">"'
        ' xml_params(open=["<p=", "<p ", "<p"], key_end=[">", "\\n"], value_end="</p>", cdata=true)'
    )
    assert spec.call[1] == rt.Name(until=(">",), requested=True, line=1)
    assert spec.call[3] == rt.XmlParams(
        "<p=",
        ">",
        "</p>",
        open_alternatives=("<p ", "<p"),
        key_end_alternatives=("\n",),
        cdata=True,
        line=1,
    )
    assert spec.call[3].value_ends == ("</p>",)


@pytest.mark.parametrize("word", sorted(ir.ELEMENTS))
def test_every_element_argument_is_a_spec_field_with_the_same_default(word: str) -> None:
    sig = ir.ELEMENTS[word]
    fields = {
        f.name: f for f in dataclasses.fields(sig.item_class) if f.name not in ("line", "file")
    }
    spellings = [
        f"{n}_alternatives" for n, p in sig.params.items() if p.type is ir.ArgType.SPELLINGS
    ]
    assert sorted(fields) == sorted([*sig.params, *spellings])
    for name in spellings:
        assert fields[name].default == ()
    for name, param in sig.params.items():
        assert param.type in LOWER_VALUE
        default = fields[name].default
        if param.required:
            continue
        if param.default is None:  # an optional regex or word: absent is the field's "none"
            assert default in (None, False), (word, name)
        else:
            want = tuple(param.default) if isinstance(param.default, tuple) else param.default
            assert default == want, (word, name)


@pytest.mark.parametrize("family", FAMILIES)
def test_py_expr_evaluates_to_the_spec(family: str) -> None:
    spec = lower_file(family)
    names = {name: getattr(rt, name) for name in rt.__all__} if hasattr(rt, "__all__") else vars(rt)
    assert eval(py_expr(spec), dict(names)) == spec


def test_py_expr_keeps_unicode_readable_and_regexes_raw() -> None:
    assert py_expr("<｜DSML｜") == "'<｜DSML｜'"
    assert py_expr(r"(?P<name>\w+)") == r'r"(?P<name>\w+)"'
    assert py_expr(("a",)) == "('a',)"
    assert py_expr(()) == "()"


@pytest.mark.parametrize(
    "lines",
    [
        ("plain",),
        ("a", "", "b"),
        ('ends with "',),
        ("back\\slash",),
        ('has """ inside',),
        ("tab\there",),
    ],
)
def test_docstring_literal_evaluates_to_its_text(lines: tuple[str, ...]) -> None:
    literal = docstring(lines)
    assert eval(literal).rstrip("\n") == "\n".join(lines)


MESSAGES_DEMO = """
family messages_demo
messages ["to=", "<ch>x to="] /[a-z.]+/ ["<ch>", " <type>"] "<msg>" ["<end>", "<start>"]
route "" calls
route "me" reasoning
route default drop
call
    "to=fn." name(until="<msg>") "<msg>" json_args "<end>"?
"""


def test_messages_lowers_header_spellings_fields_and_the_drop_route() -> None:
    messages = lower_text(MESSAGES_DEMO).messages
    assert messages is not None
    assert messages.header == ("to=", "<ch>x to=")
    assert messages.fields == ("<ch>", " <type>")
    assert messages.routes == (("", "calls"), ("me", "reasoning"))
    assert messages.default == "drop"


@pytest.mark.parametrize(
    ("text", "content", "reasoning"),
    [
        # a field after the recipient begins more header, up to the header's end
        (
            "Hi<end>to=me<ch>anything<msg>think<end>to=tool.x <type>code<msg>secret<end>Bye",
            "HiBye",
            "think",
        ),
        # another spelling of the opener; a dropped message ends at the next message's end
        ("<ch>x to=python<msg>print(1)<start>to=me<msg>ok", "", "ok"),
        # prose: a space that begins no field, a line break inside the fields
        ("set to=5 now and to=a <type>\nb<msg>c", "set to=5 now and to=a <type>\nbc", ""),
    ],
)
def test_messages_fields_and_drop_route_read_whole_and_streamed(
    text: str, content: str, reasoning: str
) -> None:
    from toolgrammar.runtime.engine import Engine
    from toolgrammar.runtime.schemas import ToolSchemas

    spec = lower_text(MESSAGES_DEMO)
    seen = []
    for pieces in ([text], list(text)):
        engine = Engine(spec, ToolSchemas([]))
        deltas = [d for piece in pieces for d in engine.feed(piece)] + engine.finish("stop")
        got_content = "".join(d.content or "" for d in deltas)
        got_reasoning = "".join(d.reasoning or "" for d in deltas)
        seen.append((got_content, got_reasoning))
    assert seen == [(content, reasoning)] * 2


@pytest.mark.parametrize(
    ("grammar", "marker"),
    [
        ('call prompt_opened "<a>"? ws "<b>" name(until=">") ">" json_args', "<a>"),
        ('section ["<s>", "<S>"] "</s>" optional prompt_opened\ncall "<c>" json_call', "<s>"),
        (
            'messages "to=" /[a-z]+/ "<m>" ["<e>"] prompt_opened\ncall "<c>" json_call',
            "to=",
        ),
        ('reasoning "<t>" "</t>" prompt_opened\ncall "<c>" json_call', ""),
        ('call "<c>" json_call', ""),
    ],
)
def test_prompt_opened_names_the_marker_the_prompt_ends_with(grammar: str, marker: str) -> None:
    """A flagged call gives its first opener (first spelling), a section its first opener, a
    messages statement its header; reasoning keeps its own flag and the field stays empty."""
    spec = lower_text(f"family x\n{grammar}\n")
    assert spec.prompt_opens == marker
    parsed = parse_grammar(f"family x\n{grammar}\n", "x.tg")
    flagged = [s for s in parsed.statements if getattr(s, "prompt_opened", False)]
    assert all("prompt_opened" in str(s) for s in flagged)  # printed back as written


@pytest.mark.parametrize(
    ("grammar", "field", "value"),
    [
        (
            'reasoning "<t>" "</t>" prompt_opened calls_inside\ncall "<c>" json_call',
            "reasoning",
            True,
        ),
        ('reasoning "<t>" "</t>"\ncall "<c>" json_call', "reasoning", False),
        ('messages "to=" /[a-z]+/ "<m>" ["<e>"] join "\\n"\ncall "<c>" json_call', "join", "\n"),
        ('messages "to=" /[a-z]+/ "<m>" ["<e>"]\ncall "<c>" json_call', "join", ""),
        ('special ["<c>", "<e>"]\ncall "<c>" json_call "<e>"', "special", ("<c>", "<e>")),
    ],
)
def test_rules_for_everyone_are_said_in_the_grammar(
    grammar: str, field: str, value: object
) -> None:
    """`calls_inside` on reasoning, `join` on messages and `special` reach the spec, and each
    statement prints back as written (docs/policies.md: the rules the runtime applies)."""
    spec = lower_text(f"family x\n{grammar}\n")
    if field == "reasoning":
        assert spec.reasoning[0].calls_inside is value
    elif field == "join":
        assert spec.messages is not None and spec.messages.join == value
    else:
        assert spec.special == value
    parsed = parse_grammar(f"family x\n{grammar}\n", "x.tg")
    again = parse_grammar("family x\n" + "\n".join(map(str, parsed.statements[1:])) + "\n", "x.tg")
    assert [str(s) for s in again.statements] == [str(s) for s in parsed.statements]
