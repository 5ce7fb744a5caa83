"""Response templates (docs/response_templates.md): compiled into the family model, printed
as a grammar that builds and reads the same, refused in one line where the language cannot
say them, and read by family `hf` with every invariant holding."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import toolgrammar
from support.response_templates import OUTPUTS, TEMPLATES
from toolgrammar.check import check
from toolgrammar.cli import main
from toolgrammar.compiler import compile_grammar_text
from toolgrammar.compiler import response_template as rt
from toolgrammar.compiler.frontend import parse_grammar
from toolgrammar.check.exports import accepts
from toolgrammar.check.invariants import check_text
from toolgrammar.runtime.registry import registered

TOOLS = json.loads((Path(__file__).parent / "corpus" / "tools.json").read_text(encoding="utf-8"))
NAMES = sorted(TEMPLATES)
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "one two"}},
]


def _printed_spec(name: str) -> Any:
    """The spec of the grammar import-template prints, built by the whole compiler."""
    code = compile_grammar_text(rt.template_text(TEMPLATES[name], name), f"{name}.tg")
    namespace: dict[str, Any] = {}
    exec(compile(code, f"{name}.py", "exec"), namespace)
    return namespace["SPEC"]


@pytest.mark.parametrize("name", NAMES)
def test_printed_grammar_parses_back_to_the_same_ir(name: str) -> None:
    grammar = rt.template_grammar(TEMPLATES[name], name)
    again = parse_grammar(rt.template_text(TEMPLATES[name], name), f"{name}.tg")
    assert again.shape() == grammar.shape()


@pytest.mark.parametrize("name", NAMES)
def test_printed_grammar_reads_as_the_template(name: str) -> None:
    """The grammar import-template prints, built, gives the same messages as the template
    compiled at parser creation, on hand-written outputs and rendered calls."""
    template = TEMPLATES[name]
    rendered = toolgrammar.render("hf", CALLS, TOOLS, content="Sure.", response_template=template)
    with registered(_printed_spec(name)):
        for text in [*OUTPUTS[name], rendered]:
            for finish in ("stop", "length"):
                want = toolgrammar.parse(
                    "hf", text, TOOLS, finish, response_template=template, ids="sequential"
                )
                got = toolgrammar.parse(name, text, TOOLS, finish, ids="sequential")
                assert got.to_dict() == want.to_dict(), text


@pytest.mark.parametrize("name", NAMES)
def test_rendered_calls_read_back(name: str) -> None:
    template = TEMPLATES[name]
    for calls in (CALLS[:1], CALLS):
        text = toolgrammar.render("hf", calls, TOOLS, response_template=template)
        message = toolgrammar.parse("hf", text, TOOLS, response_template=template)
        got = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        assert got == [(c["name"], c["arguments"]) for c in calls]


@pytest.mark.parametrize("name", NAMES)
def test_every_cut_every_split(name: str) -> None:
    template = TEMPLATES[name]
    texts = [*OUTPUTS[name], toolgrammar.render("hf", CALLS, TOOLS, response_template=template)]
    for seed, text in enumerate(texts):
        for finish in ("stop", "length"):
            violations = check_text(
                "hf", text, TOOLS, {"response_template": template}, finish=finish, seed=seed
            )
            assert not violations, "\n".join(map(str, violations[:3]))


@pytest.mark.parametrize("name", NAMES)
def test_random_outputs_keep_the_invariants(name: str) -> None:
    """`toolgrammar check` over the template's family: random calls, cuts and mutants."""
    with registered(rt.template_spec(TEMPLATES[name], f"tpl_{name}")):
        report = check(f"tpl_{name}", budget=2.0, seed=21)
    assert report.ok, report.summary()


def _set(path: str, value: Any) -> Callable[[dict], None]:
    """A mutation that sets `path` (dotted) to `value`; `...` deletes it."""

    def apply(template: dict) -> None:
        *parents, last = path.split(".")
        node = template
        for part in parents:
            node = node[part]
        if value is ...:
            del node[last]
        else:
            node[last] = value

    return apply


REFUSED = [
    ("beam", _set("fields.answer", {"open": "<a>"}), "field 'answer'"),
    ("beam", _set("defaults.tone", "dry"), "defaults: 'tone'"),
    ("beam", _set("version", 2), "response_template.version"),
    ("beam", _set("fields.content.content", "json"), "field 'content': content 'json'"),
    ("beam", _set("fields.thinking.content", "int"), "field 'thinking': content 'int'"),
    ("beam", _set("fields.content.join", "\n"), "field 'content': `join`"),
    (
        "beam",
        _set("fields.thinking.transform", {"x": "{content}"}),
        "field 'thinking': `transform`",
    ),
    ("beam", _set("fields.thinking.open", ...), "implicit reasoning field"),
    (
        "json_array",
        _set("fields.thinking.open_pattern", r"<a>.*"),
        "field 'thinking': `open_pattern`",
    ),
    ("beam", _set("fields.tool_calls.transform", ...), "`transform` must write"),
    ("beam", _set("fields.tool_calls.join", ","), "`join` is not supported on tool calls"),
    ("beam", _set("fields.tool_calls.content", "text"), "content 'text' cannot carry"),
    ("beam", _set("fields.tool_calls.open_pattern", r" to=(?P<tool>\w+)>"), "capture 'tool'"),
    ("beam", _set("fields.tool_calls.open_pattern", r"(?P<name>\w+)>"), "start with literal"),
    ("beam", _set("fields.tool_calls.open_pattern", r" to=(?P<name>\w+)"), "followed by literal"),
    ("beam", _set("fields.tool_calls.open_pattern", r" to=\w+"), "the class"),
    (
        "beam",
        _set("fields.tool_calls.content_args.value_parser", {"name": "json"}),
        "value_parser 'json'",
    ),
    (
        "beam",
        _set("fields.tool_calls.content_args.tag_pattern", r"<p>(?P<value>.*?)</p>"),
        "tag_pattern",
    ),
    ("beam", _set("fields.tool_calls.content_args", {}), "needs a `tag_pattern`"),
    ("beam", _set("start_anchor_pattern", ...), "start_anchor"),
    ("beam", _set("fields.tool_calls.open", "<x>"), "both `open` and `open_pattern`"),
    (
        "json_args",
        _set("fields.tool_calls.content_args", {"unquoted_keys": True}),
        "'unquoted_keys'",
    ),
    ("json_args", _set("fields.tool_calls.transform.function.name", "fixed"), "function.name"),
    (
        "json_call",
        _set("fields.tool_calls.transform.function.name", "{content.a.b}"),
        "keys of the body",
    ),
    ("json_array", _set("fields.tool_calls.transform_each", False), "keys of the body"),
    ("kv_lines", _set("fields.tool_calls.content_args", {"strip": False}), "without stripping"),
    ("kv_lines", _set("fields.tool_calls.content_args", {"kv_sep": ""}), "non-empty"),
    ("kv_lines", _set("fields", {}), "response_template.fields"),
    ("kv_lines", _set("fields.tool_calls.repeats", "often"), "fields.tool_calls.repeats"),
    # a pattern quoted with its newline stays one line (the fuzzer's `template` found it)
    ("json_args", _set("fields.tool_calls.open_pattern", '<t n="(?P<name>[)">\r\n'), "unbalanced"),
]


@pytest.mark.parametrize("name, mutate, message", REFUSED, ids=[m for _, _, m in REFUSED])
def test_what_the_language_cannot_say_is_refused_in_one_line(
    name: str, mutate: Callable[[dict], None], message: str
) -> None:
    template = copy.deepcopy(TEMPLATES[name])
    mutate(template)
    with pytest.raises(rt.ResponseTemplateError) as error:
        rt.template_spec(template)
    assert message in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ValueError):  # the API's error for a bad option
        toolgrammar.parse("hf", "x", response_template=template)


def _steps(*mutations: Callable[[dict], None]) -> Callable[[dict], None]:
    def apply(template: dict) -> None:
        for mutation in mutations:
            mutation(template)

    return apply


_PLAIN_OPENER = r"<tool_call name=\"(?P<name>[\w.\-]+)\">"
_XML_TAG = r"<arg name=\"(?P<key>[^\"]+)\">(?P<value>.*?)</arg>"
# What of the template format is not supported: one template per construct, and the exact line
# the compiler refuses it with, which docs/response_templates.md ("Not supported") lists.
UNSUPPORTED: list[tuple[str, Callable[[dict], None], str]] = [
    (
        "beam",
        _set("fields.answer", {"open": "<a>"}),
        "field 'answer': only thinking, content and tool_calls fields are supported",
    ),
    ("beam", _set("defaults.tone", "dry"), "defaults: 'tone' is not supported (only role)"),
    (
        "beam",
        _set("fields.content.content", "json"),
        "field 'content': content 'json' is not supported on a streamed text field",
    ),
    (
        "beam",
        _set("fields.thinking.content", "int"),
        "field 'thinking': content 'int' is not supported on a streamed text field",
    ),
    (
        "beam",
        _set("fields.thinking.transform", {"x": "{content}"}),
        "field 'thinking': `transform` is not supported on a streamed text field",
    ),
    (
        "beam",
        _set("fields.content.join", "\n"),
        "field 'content': `join` is not supported on a streamed text field",
    ),
    (
        "json_args",
        _set("fields.content.content_args", {"strip": True}),
        "field 'content': `content_args` is not supported on a streamed text field",
    ),
    (
        "beam",
        _set("fields.thinking.open", ...),
        "field 'thinking': an implicit reasoning field (no `open`) is not supported; give its "
        "opener (the prompt's, read with reasoning_open=True)",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", ...),
        "field 'tool_calls': an implicit tool_calls field (no `open`) is not supported",
    ),
    (
        "json_args",
        _set("fields.tool_calls", ...),
        "response_template: a `tool_calls` field is needed",
    ),
    (
        "beam",
        _set("fields.tool_calls.join", ","),
        "field 'tool_calls': `join` is not supported on tool calls",
    ),
    *[
        (
            "json_args",
            _set("fields.tool_calls.content", kind),
            f"field 'tool_calls': content '{kind}' cannot carry tool calls",
        )
        for kind in ("text", "int", "float", "bool")
    ],
    (
        "beam",
        _set("fields.tool_calls.transform", ...),
        "field 'tool_calls': `transform` must write "
        '{"function": {"name": …, "arguments": …}} (a template without one is not supported)',
    ),
    (
        "json_args",
        _set("fields.tool_calls.transform.function.name", "fixed"),
        "field 'tool_calls': `transform` function.name must be one placeholder such as "
        '"{name}" (a literal or a mixed string is not supported)',
    ),
    (
        "json_call",
        _set("fields.tool_calls.transform.function.name", "{content.a.b}"),
        "field 'tool_calls': `transform` must take the name and arguments from keys of the "
        'body, as "{content.name}" and "{content.arguments}"',
    ),
    *[
        (
            "json_args",
            _set("fields.tool_calls.content_args", {option: value}),
            f"field 'tool_calls': json content_args '{option}' is not supported",
        )
        for option, value in (("unquoted_keys", True), ("string_delims", ["'"]))
    ],
    *[
        (
            "xml_inline",
            _set("fields.tool_calls.content_args.value_parser", {"name": kind}),
            f"field 'tool_calls': value_parser '{kind}' is not supported (values are typed by "
            "the tool's schema)",
        )
        for kind in ("int", "json")
    ],
    (
        "beam",
        _set("fields.tool_calls.content_args.tag_pattern", r"<p>(?P<value>.*?)</p>"),
        "field 'tool_calls': xml-inline `tag_pattern` must read OPEN (?P<key>…) KEY_END "
        "(?P<value>…) CLOSE",
    ),
    (
        "kv_lines",
        _set("fields.tool_calls.content_args", {"strip": False}),
        "field 'tool_calls': kv-lines without stripping is not supported",
    ),
    (
        "beam",
        _set("fields.tool_calls.open_pattern", r" to=\w+"),
        r"field 'tool_calls': `open_pattern` is not supported: the class `\w` outside a named "
        r"group in / to=\w+/",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", "(?<=x)" + _PLAIN_OPENER),
        "field 'tool_calls': `open_pattern` is not supported: the group `(?<=x)` in "
        f"/(?<=x){_PLAIN_OPENER}/",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", _PLAIN_OPENER + "(?P=name)"),
        "field 'tool_calls': `open_pattern` is not supported: the group `(?P=name)` in "
        f"/{_PLAIN_OPENER}(?P=name)/",
    ),
    (
        "json_args",
        _set(
            "fields.tool_calls.open_pattern", r"<tool_call id=\"(?P<id>\d+)\" " + _PLAIN_OPENER[11:]
        ),
        "field 'tool_calls': the capture 'id' of `open_pattern` is not supported (only `name`, "
        "the function name)",
    ),
    (
        "beam",
        _set("fields.tool_calls.open_pattern", r"(?P<name>\w+)>"),
        "field 'tool_calls': `open_pattern` must start with literal text",
    ),
    (
        "beam",
        _set("fields.tool_calls.open_pattern", r" to=(?P<name>\w+)"),
        "field 'tool_calls': the `name` group of `open_pattern` must be followed by literal text",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", _PLAIN_OPENER + "(?=\\{)"),
        "field 'tool_calls': a lookahead in `open_pattern` is not supported",
    ),
    (
        "json_args",
        _set("fields.tool_calls.transform.function.arguments", "{content.args}"),
        "field 'tool_calls': with the name from `open_pattern`, `arguments` must be " '"{content}"',
    ),
    (
        "json_array",
        _set("fields.tool_calls.transform.function.name", "{fn.name}"),
        "field 'tool_calls': `transform_each` must name one key of each element, as \"{name}\"",
    ),
    (
        "xml_inline",
        _set("fields.tool_calls.content_args.strip_values", True),
        "field 'tool_calls': xml-inline content_args ['strip_values'] not supported",
    ),
    (
        "xml_inline",
        _set("fields.tool_calls.content_args.tag_pattern", _XML_TAG.replace('">(', '">\\s*(')),
        "field 'tool_calls': xml-inline needs literal text between key and value",
    ),
    (
        "xml_inline",
        _set("fields.tool_calls.content_args.tag_pattern", _XML_TAG.replace(".*?", "[^<]*")),
        "field 'tool_calls': xml-inline value group must be `.*?`",
    ),
    (
        "xml_inline",
        _set(
            "fields.tool_calls.content_args.tag_pattern",
            _XML_TAG.replace("</arg>", "(?=</invoke>)"),
        ),
        "field 'tool_calls': xml-inline `tag_pattern` must end with a literal closer",
    ),
    (
        "xml_inline",
        _set("fields.tool_calls.content_args.tag_pattern", _XML_TAG + "\\d"),
        "field 'tool_calls': xml-inline `tag_pattern` is not supported: the class `\\d` outside "
        f"a named group in /{_XML_TAG}\\d/",
    ),
    (
        "kv_lines",
        _set("fields.tool_calls.content_args.comment", "#"),
        "field 'tool_calls': kv-lines content_args ['comment'] not supported",
    ),
    (
        "json_array",
        _set("fields.thinking.open_pattern", r"<a>.*"),
        "field 'thinking': `open_pattern` must be literal text or a choice of literals (named "
        "groups only in the tool_calls opener): `.` at 3 in /<a>.*/",
    ),
    # markers the runtime could not read with parity (docs: "Markers")
    (
        "json_args",
        _set("fields.content.close", "a"),
        "field 'content': `close` \"a\" is not a marker (one character or only whitespace is "
        "text any answer writes)",
    ),
    (
        "json_args",
        _set("fields.thinking.open", "\n"),
        "field 'thinking': `open` \"\\n\" is not a marker (one character or only whitespace is "
        "text any answer writes)",
    ),
    (
        "json_args",
        _set("fields.thinking.open", "ool"),
        'field \'tool_calls\': `open_pattern` "<tool_call name=\\"" holds `open` "ool" of field '
        "'thinking' inside it (a stream could not tell them apart)",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", r"\{(?P<name>[\w.\-]+)>"),
        "field 'tool_calls': the opener \"{\" begins JSON, so it must begin the body too: a call "
        "object (or a `transform_each` list) that names the call",
    ),
    # patterns matched against the model's text in time beyond linear (docs: "Patterns")
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", r'<tool_call name="(?P<name>(a+)+)">'),
        "field 'tool_calls': the `name` group of `open_pattern` could take time beyond linear on "
        "a model's output: a quantifier inside a quantified group in /(?P<name>(a+)+)/",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", r'<tool_call name="(?P<name>\w*\w*\w*!)">'),
        "field 'tool_calls': the `name` group of `open_pattern` could take time beyond linear on "
        "a model's output: more than one unbounded quantifier (write one class: `[\\w.\\-]+`) "
        "in /(?P<name>\\w*\\w*\\w*!)/",
    ),
    (
        "xml_inline",
        _set(
            "fields.tool_calls.content_args.tag_pattern",
            _XML_TAG.replace(r"[^\"]+", r"(?!x)\w+"),
        ),
        "field 'tool_calls': the `key` group of the xml-inline `tag_pattern` could take time "
        "beyond linear on a model's output: a lookaround in /(?P<key>(?!x)\\w+)/",
    ),
    (
        "json_args",
        _set("fields.tool_calls.open_pattern", r'<tool_call name="(?P<name>a{2,1})">'),
        "field 'tool_calls': the `name` group of `open_pattern` is not a regex: min repeat "
        "greater than max repeat at position 11",
    ),
]


@pytest.mark.parametrize(
    "name, mutate, line", UNSUPPORTED, ids=[line[:60] for _, _, line in UNSUPPORTED]
)
def test_each_unsupported_construct_is_refused_with_its_documented_line(
    name: str, mutate: Callable[[dict], None], line: str
) -> None:
    template = copy.deepcopy(TEMPLATES[name])
    mutate(template)
    with pytest.raises(rt.ResponseTemplateError) as error:
        rt.template_spec(template)
    assert str(error.value) == line
    assert line in _listed()


def test_the_docs_list_no_refusal_the_compiler_does_not_give() -> None:
    listed = _listed()
    assert listed and sorted(listed) == sorted(line for _, _, line in UNSUPPORTED)


def _listed() -> list[str]:
    """The error lines docs/response_templates.md's "Not supported" lists, as ``code`` (a line
    that ends with a backtick is written with a space before the closing ``)."""
    text = (Path(__file__).parents[1] / "docs" / "response_templates.md").read_text("utf-8")
    start = text.index("## Not supported")
    section = text[start : text.index("\n## ", start + 1)]
    return re.findall(r"``(.+?) ?``(?!`)", section)


def test_not_a_template_is_refused() -> None:
    for bad in ([], "x", None):
        with pytest.raises(rt.ResponseTemplateError):
            rt.template_spec(bad)


def test_compiled_templates_are_cached_by_value_and_bounded() -> None:
    first = rt.template_spec(TEMPLATES["beam"])
    assert rt.template_spec(copy.deepcopy(TEMPLATES["beam"])) is first
    for size in range(rt.CACHE_SIZE + 1):
        template = copy.deepcopy(TEMPLATES["json_args"])
        template["fields"]["tool_calls"]["close"] = f"</tool_call{size}>"
        rt.template_spec(template)
    assert len(rt._CACHE) <= rt.CACHE_SIZE
    assert rt.template_spec(TEMPLATES["beam"]) is not first  # it was evicted, then rebuilt


def test_hf_needs_a_template_and_only_hf_takes_one() -> None:
    with pytest.raises(ValueError, match="response_template"):
        toolgrammar.parse("hf", "text")
    with pytest.raises(ValueError, match="hf only"):
        toolgrammar.parse("hermes", "text", response_template=TEMPLATES["beam"])
    assert "hf" in toolgrammar.TEMPLATE_FAMILIES and "hf" not in toolgrammar.families()


def test_beam_grammar_reads_as_beams_template() -> None:
    """The committed grammar, refined by hand, reads the outputs as the template does."""
    for text in OUTPUTS["beam"]:
        want = toolgrammar.parse(
            "hf", text, TOOLS, response_template=TEMPLATES["beam"], ids="sequential"
        )
        assert toolgrammar.parse("beam", text, TOOLS, ids="sequential").to_dict() == want.to_dict()


def test_cli_import_template_and_parse(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps({"response_template": TEMPLATES["kv_lines"]}), encoding="utf-8")
    assert main(["import-template", str(path), "--name", "mine"]) == 0
    printed = capsys.readouterr().out
    assert printed == rt.template_text(TEMPLATES["kv_lines"], "mine")
    output = tmp_path / "out.txt"
    output.write_text(OUTPUTS["kv_lines"][0], encoding="utf-8")
    assert main(["parse", "hf", str(output), "--response-template", str(path)]) == 0
    message = json.loads(capsys.readouterr().out)["message"]
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    assert main(["parse", "hf", str(output)]) == 2
    assert "response_template" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"fields": {"x": {}}}', encoding="utf-8")
    assert main(["import-template", str(bad)]) == 2
    assert "field 'x'" in capsys.readouterr().err


WITHOUT_COMPILER_EXTRA = """
import sys
for name in ("lark", "jinja2", "black"):
    sys.modules[name] = None  # as in an environment without the compiler extra
import json, toolgrammar
template = json.loads(sys.argv[1])
message = toolgrammar.parse("hf", sys.argv[2], response_template=template)
assert message.tool_calls[0].function.name == "get_weather", message
"""


def test_hf_needs_no_compiler_extra() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_COMPILER_EXTRA,
            json.dumps(TEMPLATES["beam"]),
            OUTPUTS["beam"][0],
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_export_from_a_template_accepts_its_renders(name: str) -> None:
    """`toolgrammar.export_grammar("hf", …, response_template=T)` is the grammar of the template's
    family: rendered calls are in it, in lark and GBNF, and bare content is not a call."""
    template = TEMPLATES[name]
    text = toolgrammar.render("hf", CALLS, TOOLS, response_template=template)
    for fmt in ("lark", "gbnf"):
        grammar = toolgrammar.export_grammar(
            "hf", TOOLS, format=fmt, mode="required", response_template=template
        )
        assert "from the checkpoint's response_template" in grammar
        assert accepts(grammar, text, fmt), (fmt, text)
        assert not accepts(grammar, "Just text.", fmt)


def test_export_cli_reads_the_template(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text(json.dumps({"response_template": TEMPLATES["json_args"]}), encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    assert main(["export", "hf", "--tools", str(tools), "--response-template", str(path)]) == 0
    printed = capsys.readouterr().out
    assert printed == toolgrammar.export_grammar(
        "hf", TOOLS, response_template=TEMPLATES["json_args"]
    )
    assert main(["export", "hf", "--tools", str(tools)]) == 2
    assert "response_template" in capsys.readouterr().err
    assert main(["export", "hermes", "--tools", str(tools), "--response-template", str(path)]) == 2
    assert "hf only" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"fields": {"answer": {"open": "<a>"}}}), encoding="utf-8")
    assert main(["export", "hf", "--tools", str(tools), "--response-template", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "field 'answer'" in err and err.count("\n") == 1


KV_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "items": {"type": "string"}},
                    "s": {"type": "string"},
                },
            },
        },
    }
]


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_kv_lines_export_reads_values_as_the_parser_does(fmt: str) -> None:
    """The export proof's kv_lines findings: a raw value on the last line runs into the
    call's closer (`x</call` then `</call>`: the text's lexeme took `</call` and never let
    the closer start), and a JSON value cannot hold a marker, not even one its closing quote
    completes (`["x<call name="]`: the parser cuts the value at the call opener), nor a line
    break between its tokens."""
    from support.export_helpers import accepts

    with registered(rt.template_spec(TEMPLATES["kv_lines"], "tpl_kv_lines")):
        grammar = toolgrammar.export_grammar("tpl_kv_lines", KV_TOOLS, fmt, "required")
        call = {"name": "f", "arguments": {"a": ["y"], "s": "x</call"}}
        assert accepts(grammar, toolgrammar.render("tpl_kv_lines", [call], KV_TOOLS), fmt)
        assert accepts(grammar, '<call name="f">a: ["x<call name"]</call>', fmt)
        assert not accepts(grammar, '<call name="f">a: ["x<call name="]</call>', fmt)
        # and a JSON value stays on its line: the line separator ends it
        assert accepts(grammar, '<call name="f">a: [ "x",\t"y" ]</call>', fmt)
        assert not accepts(grammar, '<call name="f">a: ["x",\n"y"]</call>', fmt)


# ---------------------------------------------------------------- hostile templates (issue 28)


def _with(name: str, *mutations: Callable[[dict], None]) -> dict:
    template = copy.deepcopy(TEMPLATES[name])
    for mutation in mutations:
        mutation(template)
    return template


def _streamed(template: dict, text: str) -> tuple[str, list[tuple[str, str]]]:
    """Content and calls of `text` fed one character at a time."""
    parser = toolgrammar.StreamParser("hf", TOOLS, response_template=template)
    deltas = [d for ch in text for d in parser.feed(ch)] + list(parser.finish("stop"))
    message = toolgrammar.assemble(deltas)
    return message.content, [(c.function.name, c.function.arguments) for c in message.tool_calls]


@pytest.mark.parametrize("anchor", ["a", " ", ["\n", "<|im_start|>assistant"]])
def test_an_anchor_that_cannot_be_markup_leaves_the_answer_alone(anchor: Any) -> None:
    """`start_anchor: "a"` deleted every `a` streamed (and no call opened: its opener holds
    an `a`) while the whole parse found the call; the anchor concerns the prompt only."""
    template = _with("json_args", _set("start_anchor", anchor))
    text = 'a banana <tool_call name="get_weather">{"city": "Paris"}</tool_call>'
    message = toolgrammar.parse("hf", text, TOOLS, response_template=template)
    calls = [("get_weather", '{"city": "Paris"}')]
    assert message.content == "a banana "  # (verbatim whitespace: the space is the model's)
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == calls
    assert _streamed(template, text) == ("a banana ", calls)
    for finish in ("stop", "length"):
        violations = check_text("hf", text, TOOLS, {"response_template": template}, finish=finish)
        assert not violations, "\n".join(map(str, violations[:3]))


@pytest.mark.parametrize(
    "name, opener, text",
    [
        ("json_call", "{", 'Hi {"tool": "get_weather", "args": {"city": "Paris"}}</tool_call>'),
        ("json_call", '{"tool"', 'Hi {"tool": "get_weather", "args": {"city": "Paris"}}'),
        ("json_array", "[", 'Hi [{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>'),
    ],
)
def test_an_opener_that_begins_the_json_body_is_read_as_its_start(
    name: str, opener: str, text: str
) -> None:
    """An `open` of `{` before a call object raised an AssertionError from deep in the JSON
    reader (the opener was a stop right at the object's own `{`); it is the body's start."""
    template = _with(name, _set("fields.tool_calls.open", opener))
    if name == "json_array":
        template["fields"]["tool_calls"]["close_pattern"] = "</s>"
    calls = [("get_weather", '{"city": "Paris"}')]
    message = toolgrammar.parse("hf", text, TOOLS, response_template=template)
    assert message.content == "Hi "  # (verbatim whitespace: the space is the model's)
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == calls
    assert _streamed(template, text) == ("Hi ", calls)
    rendered = toolgrammar.render("hf", CALLS, TOOLS, response_template=template)
    for seed, sample in enumerate([text, rendered, "{not a call} and [1, 2]"]):
        for finish in ("stop", "length"):
            violations = check_text(
                "hf", sample, TOOLS, {"response_template": template}, finish=finish, seed=seed
            )
            assert not violations, "\n".join(map(str, violations[:3]))
    with registered(rt.template_spec(template, "tpl_json_open")):
        assert check("tpl_json_open", budget=1.0, seed=28).ok


def _closer_is_a_prefix(name: str) -> dict:
    """XML_INLINE and KV_LINES with the call's closer `</`, which the value's `</arg>` (and
    KV_LINES' opener, moved to `</call name="…">`) begin with (the fuzzer's `template`)."""
    template = copy.deepcopy(TEMPLATES[name])
    template["fields"]["tool_calls"]["close"] = "</"
    if name == "kv_lines":
        template["fields"]["tool_calls"]["open_pattern"] = r"</call name=\"(?P<name>[\w.\-]+)\">\n?"
    return template


CUT_INSIDE_A_LONGER_MARKER = [
    # (template, output, the content the call goes back as with partial_calls="text")
    ("xml_inline", '<invoke name="get_weather"><arg name="city">Paris</a', None),
    (
        "kv_lines",
        '</call name="get_weather">\ncity: Paris</ca',
        '</call name="get_weather">\ncity: Paris',
    ),
]


@pytest.mark.parametrize("name, text, given", CUT_INSIDE_A_LONGER_MARKER)
def test_a_marker_the_output_ends_inside_a_longer_one_of_is_that_one_cut(
    name: str, text: str, given: str | None
) -> None:
    """In a call's arguments, `</` (the call's closer) followed at the very end by `a` is
    `</arg>` cut inside its spelling: markup, as outside a call, at either finish reason;
    the call's arguments were cut, so `partial_calls="text"` gives it back, and `a` is no
    content after a closer (fuzz seed 3121375822638002938). With text after it that no
    longer marker has, `</` is the closer and the rest content."""
    template = _closer_is_a_prefix(name)
    for finish in ("length", "stop"):
        kept = toolgrammar.parse("hf", text, TOOLS, finish, response_template=template)
        assert kept.content is None
        assert [(c.function.name, c.function.arguments) for c in kept.tool_calls] == [
            ("get_weather", '{"city": "Paris"}')
        ]
        back = toolgrammar.parse(
            "hf", text, TOOLS, finish, response_template=template, partial_calls="text"
        )
        assert (back.content, back.tool_calls) == (given or text, [])
        more = toolgrammar.parse("hf", text + "<", TOOLS, "stop", response_template=template)
        assert more.content == text[text.rindex("</") + 2 :] + "<" and len(more.tool_calls) == 1
    for options in ({}, {"partial_calls": "text", "compat": "sglang"}):
        for finish in ("length", "stop"):
            found = check_text(
                "hf", text + "<", TOOLS, {"response_template": template, **options},
                finish=finish, lost=True,
            )  # fmt: skip
            assert not found, "\n".join(map(str, found[:3]))
