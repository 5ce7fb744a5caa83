"""Exported constrained-decoding grammars, checked with llguidance on a byte vocabulary.

What the model may write under an exported grammar must be what the family's parser reads:
corpus outputs in the grammar are accepted, renders of random schema-valid calls are
accepted, mutants are rejected, and random walks through the grammar parse to valid calls
that survive a round trip through the renderer. Every family, both formats.
"""

from __future__ import annotations

import collections
import io
import json
import random
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import toolgrammar
from support.corpus_format import CORPUS, TOOLS, all_cases
from support.export_corpus import in_grammar, strict_deep
from support.export_helpers import (
    accepts,
    closing_markers,
    closing_walk,
    compiled,
    random_value,
    walk_problem,
)
from toolgrammar.cli import main
from toolgrammar.export import ExportError
from toolgrammar.export.schema import load_tools
from toolgrammar.runtime.registry import get_spec

FAMILIES = sorted({get_spec(name).name for name in toolgrammar.families()})
SCHEMAS = {t.name: strict_deep(t.parameters) for t in load_tools(TOOLS)}
# one family per dialect and region kind, for the slower GBNF walks
GBNF_WALKED = [
    "qwen3_coder",
    "glm45",
    "deepseek_v4",
    "minimax_m3",
    "kimi_k3",
    "gemma4",
    "pythonic",
    "olmo3",
    "hermes",
    "kimi_k2",
    "mistral",
    "apertus",
    "muse",
    "openai",
    "inkling",
    "llama3_json",
]


def _calls(family: str, text: str, **options: Any) -> list[tuple[str, Any]]:
    message = toolgrammar.parse(family, text, TOOLS, **options)
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]


# -- every family exports, in every mode, and compiles -------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_exports_and_compiles(family: str) -> None:
    for mode in ("auto", "required", "named:configure"):
        compiled(toolgrammar.export_grammar(family, TOOLS, "lark", mode))
        compiled(toolgrammar.export_grammar(family, TOOLS, "lark", mode, json="rules"))
    for mode in ("auto", "named:get_weather"):
        compiled(toolgrammar.export_grammar(family, TOOLS, "gbnf", mode), "gbnf")


def test_export_is_deterministic_and_names_its_source() -> None:
    first = toolgrammar.export_grammar("qwen3_coder", TOOLS, "gbnf")
    assert first == toolgrammar.export_grammar("qwen3_coder", TOOLS, "gbnf")
    assert first.startswith("# toolgrammar export: family qwen3_coder, mode auto")
    assert "grammars/qwen3_coder.tg" in first.splitlines()[1]


# -- the golden corpus ---------------------------------------------------------------------


def corpus_counts(fmt: str) -> tuple[dict[str, list[int]], list[str]]:
    """Per family [in and accepted, in and rejected, out]; and the in-grammar cases the
    grammar rejects (which must be none)."""
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    failures = []
    for case in all_cases():
        ok, _ = in_grammar(case)
        if not ok:
            counts[case.family][2] += 1
            continue
        grammar = toolgrammar.export_grammar(
            case.family,
            case.tools,
            fmt,
            params=case.options.get("params"),
            reasoning_open=case.options.get("reasoning_open"),
        )
        if accepts(grammar, case.text, fmt):
            counts[case.family][0] += 1
        else:
            counts[case.family][1] += 1
            failures.append(case.id)
    return dict(counts), failures


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_corpus_cases_in_the_grammar_are_accepted(fmt: str) -> None:
    counts, failures = corpus_counts(fmt)
    print(f"\n{fmt}: family: in-grammar accepted / rejected, out of grammar")
    for family, (yes, no, out) in sorted(counts.items()):
        print(f"  {family}: {yes} / {no}, {out}")
    assert failures == []
    total_in = sum(c[0] for c in counts.values())
    assert total_in >= 250  # the rule keeps a real share of the corpus in
    assert sum(1 for c in counts.values() if c[0]) >= 45  # and most families have cases


def test_the_in_grammar_rule() -> None:
    cases = {c.id: c for c in all_cases()}
    assert in_grammar(cases["qwen3_coder:canonical upstream example: get_weather then write_file"])[
        0
    ]
    # malformed, truncated, off-schema and non-canonical cases are out, with a reason
    assert in_grammar(cases["qwen3_coder:garbage after the opener gives the text back"]) == (
        False,
        "markup given back as text",
    )
    assert in_grammar(cases["qwen3_coder:truncated right after the opener"]) == (
        False,
        "truncated, or tools/call-switch options",  # (a `finish=length` case)
    )
    assert in_grammar(cases["hermes:seed 001: a middle integer field given as a string"]) == (
        False,
        "not canonical",
    )


# -- renders of random schema-valid calls --------------------------------------------------


def _random_calls(rng: random.Random) -> list[dict[str, Any]]:
    tools = load_tools(TOOLS)
    return [
        {"name": t.name, "arguments": random_value(t.parameters, rng)}
        for t in rng.sample(tools, rng.randint(1, 3))
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_renders_of_random_valid_calls_are_accepted(family: str) -> None:
    rng = random.Random(family)
    spec = get_spec(family)
    grammars = {
        (fmt, json_mode, mode): toolgrammar.export_grammar(
            family, TOOLS, fmt, mode, reasoning_open=False, json=json_mode
        )
        for fmt, json_mode in (("lark", "native"), ("lark", "rules"), ("gbnf", "native"))
        for mode in ("auto", "required")
    }
    written = 0
    for attempt in range(40):
        calls = _random_calls(rng)
        content = rng.choice([None, "Sure, let me check that."])
        reasoning = None
        if spec.reasoning and spec.messages is None and rng.random() < 0.5:
            reasoning = "The user asked; I will call the tools."
        try:
            text = toolgrammar.render(family, calls, TOOLS, content=content, reasoning=reasoning)
        except toolgrammar.RenderError:
            continue  # the markup cannot carry one of the random values
        written += 1
        for (fmt, json_mode, mode), grammar in grammars.items():
            if (mode == "required" and content) or (fmt == "gbnf" and written > 3):
                continue  # GBNF is matched character by character: slower, fewer checks
            assert accepts(grammar, text, fmt), (fmt, json_mode, mode, text)
        if len(calls) == 1 and not content:
            named = toolgrammar.export_grammar(
                family, TOOLS, "lark", f"named:{calls[0]['name']}", reasoning_open=False
            )
            assert accepts(named, text)
        if written == 6:
            break
    assert written >= 4


# -- mutants -------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_mutants_are_rejected(family: str) -> None:
    good = {"city": "Paris", "days": 987654}
    text = toolgrammar.render(family, [{"name": "get_weather", "arguments": good}], TOOLS)
    missing = toolgrammar.render(
        family, [{"name": "get_weather", "arguments": {"days": 987654}}], TOOLS
    )
    last = text.rstrip()[-1]
    mutants = {
        "wrong tool name": text.replace("get_weather", "get_wether"),
        "integer written as a word": text.replace("987654", "three"),
        "missing required parameter": missing,
        "broken closer": text.rstrip()[:-1] + ("X" if last != "X" else "Y"),
        "cut closer": text.rstrip()[:-1],
    }
    for fmt, mode in (
        ("lark", "required"),
        ("lark", "auto"),
        ("lark", "named:get_weather"),
        ("gbnf", "required"),
    ):
        grammar = toolgrammar.export_grammar(family, TOOLS, fmt, mode, reasoning_open=False)
        assert accepts(grammar, text, fmt), (fmt, mode)
        for name, mutant in mutants.items():
            assert not accepts(grammar, mutant, fmt), (fmt, mode, name, mutant)
    other = toolgrammar.export_grammar(
        family, TOOLS, "lark", "named:write_file", reasoning_open=False
    )
    assert not accepts(other, text)  # named: only that tool


# -- random walks: what the grammar lets a model write, the parser reads back --------------


def _check_walk(family: str, text: str, mode: str) -> None:
    problem = walk_problem(family, text, mode, TOOLS, SCHEMAS)
    assert problem is None, (problem, text)


@pytest.mark.parametrize("family", FAMILIES)
def test_random_walks_parse_to_the_calls_they_wrote(family: str) -> None:
    rng = random.Random(f"walk:{family}")
    for mode, json_mode in (
        ("required", "native"),
        ("required", "rules"),
        ("auto", "native"),
        ("named:configure", "native"),
    ):
        grammar = toolgrammar.export_grammar(family, TOOLS, "lark", mode, json=json_mode)
        for _ in range(2):
            data, accepted = closing_walk(grammar, rng, budget=250)
            assert accepted, data[-200:]
            _check_walk(family, data.decode("utf-8"), mode)


@pytest.mark.parametrize("family", GBNF_WALKED)
def test_random_walks_through_gbnf(family: str) -> None:
    rng = random.Random(f"gbnf:{family}")
    markers = closing_markers(
        toolgrammar.export_grammar(family, TOOLS, "lark", "required", json="rules")
    )
    grammar = toolgrammar.export_grammar(family, TOOLS, "gbnf", "required")
    data, accepted = closing_walk(grammar, rng, budget=150, fmt="gbnf", markers=markers)
    assert accepted, data[-200:]
    _check_walk(family, data.decode("utf-8"), "required")


def test_markers_cannot_appear_inside_values() -> None:
    """A string value may not hold the marker that would end it early (markers win)."""
    grammar = toolgrammar.export_grammar("qwen3_coder", TOOLS, "lark", "required")
    good = toolgrammar.render("qwen3_coder", [("write_file", {"path": "a", "content": "x"})], TOOLS)
    assert accepts(grammar, good)
    assert not accepts(grammar, good.replace(">\nx\n<", ">\nx</function>y\n<"))
    hermes = toolgrammar.export_grammar("hermes", TOOLS, "gbnf", "required")
    call = '<tool_call>\n{"name": "write_file", "arguments": {"path": "%s"}}\n</tool_call>'
    assert accepts(hermes, call % "a", "gbnf")
    assert not accepts(hermes, call % "a</tool_call>b", "gbnf")
    assert accepts(hermes, call % "a\\u003c/tool_call>b", "gbnf")  # escaped, it is fine


LONG_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"s": {"type": "string"}, "b": {"type": "boolean"}},
            },
        },
    }
]


@pytest.mark.parametrize("family", ["nemotron_v3", "hermes", "gemma4", "pythonic"])
def test_gbnf_reads_text_longer_than_llguidances_row_limit(family: str) -> None:
    """llguidance's Earley parser holds at most 2000 items in a row: text written as a
    right-recursive rule stopped a little after 2000 characters (content and string values)."""
    value = 'a<b<<|x\\y"z ' * 400
    text = toolgrammar.render(family, [{"name": "f", "arguments": {"s": value}}], LONG_TOOLS)
    grammar = toolgrammar.export_grammar(family, LONG_TOOLS, "gbnf", "auto")
    assert accepts(grammar, "prose " * 600 + text, "gbnf")
    assert accepts(grammar, " " * 2500 + text, "gbnf")


@pytest.mark.parametrize("family", ["gemma4", "functiongemma"])
def test_gbnf_rules_of_literals_are_read_a_character_at_a_time(family: str) -> None:
    """llguidance's GBNF reader makes a rule of terminals alone one greedy lexeme: the
    optional `,b:true` took the `,` of `,s:` and rejected a call with both parameters."""
    call = {"name": "f", "arguments": {"s": "x", "b": True}}
    grammar = toolgrammar.export_grammar(family, LONG_TOOLS, "gbnf", "required")
    assert accepts(grammar, toolgrammar.render(family, [call], LONG_TOOLS), "gbnf")
    assert "no-lexeme ::=" in grammar  # the empty recursive rule that keeps rules off the lexer


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_python_strings_escape_no_code_point_past_unicode(fmt: str) -> None:
    """`\\U2D23e2cf` is not a Python literal: the parser reads the whole value as text, so a
    walk that wrote it in an object argument gave a string where the schema asked for one."""
    grammar = toolgrammar.export_grammar("pythonic", LONG_TOOLS, fmt, "required")
    assert accepts(grammar, "[f(s='a\\U0001f600\\U0010FFFF')]", fmt)
    assert not accepts(grammar, "[f(s='a\\U2D23e2cf')]", fmt)
    assert not accepts(grammar, "[f(s='a\\U00110000')]", fmt)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"family": "nope"}, "unknown family 'nope'"),
        ({"mode": "named:nope"}, "named:nope: no such tool"),
        ({"mode": "sometimes"}, "mode must be auto, required or named:NAME"),
        ({"format": "ebnf"}, "format must be one of lark, gbnf"),
        ({"tools": {"a": 1}}, "tools must be a non-empty JSON list"),
        ({"tools": [{"type": "function", "function": {}}]}, "tool 0 has no function name"),
        ({"tools": [{"name": "a b"}]}, "cannot be written as a function name"),
        ({"tools": [{"name": "f", "parameters": {"$ref": "#/nowhere"}}]}, "points nowhere"),
        ({"params": {"nope": "x"}}, "has no param 'nope'"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs: dict[str, Any], message: str) -> None:
    args = {"family": "hy_v3", "tools": TOOLS, **kwargs}
    with pytest.raises(ExportError, match=message.replace("(", r"\(").replace("$", r"\$")):
        toolgrammar.export_grammar(args.pop("family"), args.pop("tools"), **args)


def test_recursive_ref_is_refused() -> None:
    tools = [
        {
            "name": "tree",
            "parameters": {
                "type": "object",
                "$defs": {
                    "node": {
                        "type": "object",
                        "properties": {
                            "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                        },
                    }
                },
                "properties": {"root": {"$ref": "#/$defs/node"}},
            },
        }
    ]
    with pytest.raises(ExportError, match="recursive"):
        toolgrammar.export_grammar("hermes", tools)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_cli_export(tmp_path: Path) -> None:
    tools = str(CORPUS / "tools.json")
    code, out, err = _run(
        "export",
        "hy_v3",
        "--tools",
        tools,
        "--format",
        "gbnf",
        "--mode",
        "named:get_weather",
        "--param",
        "suffix=:x",
        "--no-reasoning-open",
    )
    assert code == 0 and err == ""
    assert out == toolgrammar.export_grammar(
        "hy_v3", TOOLS, "gbnf", "named:get_weather", params={"suffix": ":x"}, reasoning_open=False
    )
    assert '"<" "t" "o" "o" "l" "_" "c" "a" "l" "l" ":" "x" ">"' in out
    compiled(out, "gbnf")
    code, out, _ = _run("export", "hermes", "--tools", tools)
    assert code == 0 and "%json" in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}')
    for argv, message in [
        (("export", "hermes"), "export needs --tools FILE"),
        (("export", "nope", "--tools", tools), "unknown family 'nope'"),
        (("export", "hermes", "--tools", tools, "--mode", "named:zz"), "named:zz: no such tool"),
        (("export", "hermes", "--tools", str(bad)), "expected a JSON list of tools"),
        (("export", "hermes", "--tools", str(tmp_path / "missing.json")), "cannot read"),
    ]:
        code, out, err = _run(*argv)
        assert code == 2 and out == "", argv
        assert err.startswith("toolgrammar: error: ") and message in err, err


# -- a block the prompt opened (`prompt_opened` on a call, section or messages) -------------


def _synthetic_export(grammar: str, fmt: str, **options: Any) -> str:
    """The export of an in-memory grammar (auto mode, the corpus tools)."""
    from toolgrammar.compiler.frontend import parse_grammar
    from toolgrammar.compiler.lower import lower
    from toolgrammar.export import gbnf, lark
    from toolgrammar.export.build import Mode, build

    spec = lower(parse_grammar(grammar, "x.tg"), "x.tg", "0" * 64)
    tree = build(
        spec,
        load_tools(TOOLS),
        Mode("auto"),
        options.get("reasoning_open"),
        options.get("block_open"),
    )
    return gbnf.write(tree) if fmt == "gbnf" else lark.write(tree)


CALL_OPENED = (
    'family x\ncall prompt_opened "<tool_call>" ws "<function=" name(until=">") ">" json_args'
    ' "</function>"\n'
)
SECTION_OPENED = (
    'family x\nsection "<calls>" "</calls>" prompt_opened\n' 'call "<c>" json_call "</c>"\n'
)
MESSAGES_OPENED = (
    'family x\nmessages "to=" /[a-z_]+/ "<m>" ["<e>"] prompt_opened\n'
    'route "self" reasoning\nroute "user" content\ncall "<c>" json_call "</c>"\n'
)
CALL_JSON = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
FUNCTION = '<function=get_weather>{"city": "Paris"}</function>'


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
@pytest.mark.parametrize(
    ("grammar", "inside", "outside", "closed_rejects"),
    [
        (CALL_OPENED, FUNCTION, "<tool_call>" + FUNCTION, False),
        (SECTION_OPENED, f"<c>{CALL_JSON}</c></calls>", f"<calls><c>{CALL_JSON}</c></calls>", True),
        (MESSAGES_OPENED, "user<m>Hi<e>", "to=user<m>Hi<e>", True),
        (MESSAGES_OPENED, f"get_weather<m><c>{CALL_JSON}</c><e>", "to=self<m>plan<e>", True),
    ],
)
def test_a_block_the_prompt_opened_exports_its_rest(
    grammar: str, inside: str, outside: str, closed_rejects: bool, fmt: str
) -> None:
    """The output begun inside the block is accepted, and so is one with the opener written
    again (the parser reads both the same); with `block_open=False` the first is not, unless
    it is also plain content there."""
    opened = _synthetic_export(grammar, fmt)
    assert accepts(opened, inside, fmt) and accepts(opened, outside, fmt)
    closed = _synthetic_export(grammar, fmt, block_open=False)
    assert accepts(closed, outside, fmt)
    if closed_rejects:
        assert not accepts(closed, inside, fmt)


def test_inkling_exports_the_prompt_opened_message() -> None:
    """Inkling's first message is opened by its prompt: a call starts at its block kind (with
    the free name header in lark only), text is content, and the message opener may be
    written again."""
    call = '<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}'
    for fmt in ("lark", "gbnf"):
        grammar = toolgrammar.export_grammar("inkling", TOOLS, fmt)
        assert accepts(grammar, call + "<|end_message|>", fmt)
        assert accepts(grammar, "<|message_model|>" + call + "<|end_message|>", fmt)
        assert accepts(grammar, "Hello there.", fmt)
        closed = toolgrammar.export_grammar("inkling", TOOLS, fmt, block_open=False)
        assert not accepts(closed, call + "<|end_message|>", fmt)
    named = toolgrammar.export_grammar("inkling", TOOLS, "lark", "named:get_weather")
    assert accepts(named, "get_weather" + call + "<|end_message|>")


def test_harmony_exports_a_call_named_by_its_recipient() -> None:
    """A call named by its message's recipient (`name(recipient=true)`): a constrained model
    may address a requested tool by its bare name; any other recipient is no call there."""
    for fmt in ("lark", "gbnf"):
        grammar = toolgrammar.export_grammar("openai", TOOLS, fmt)
        bare = '<|channel|>commentary to=get_weather<|message|>{"city": "Paris"}<|call|>'
        assert accepts(grammar, bare, fmt)
        assert accepts(grammar, 'to=write_file<|message|>{"path": "a"}<|call|>', fmt)
        assert not accepts(grammar, "<|channel|>commentary to=get_time<|message|>{}<|call|>", fmt)
        assert _calls("openai", bare) == [("get_weather", {"city": "Paris"})]


ANSWER_BLOCKS = (
    'family x\ncontent ["<answer>", "<ans>"] "</answer>"\n'
    'call "<tool_call>" ws json_call ws "</tool_call>"\n'
)
TOOL_CALL = f"<tool_call>{CALL_JSON}</tool_call>"


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_content_comes_in_the_familys_own_block(fmt: str) -> None:
    """A `content` statement's block is content the export allows, before the calls or alone,
    in every opener spelling; its markers stay out of the text itself."""
    grammar = _synthetic_export(ANSWER_BLOCKS, fmt)
    assert accepts(grammar, "<answer>Let me check.</answer>" + TOOL_CALL, fmt)
    assert accepts(grammar, "<ans>Let me check.</answer>" + TOOL_CALL, fmt)
    assert accepts(grammar, "<answer>Hello there.</answer>", fmt)
    assert accepts(grammar, "Hello there." + TOOL_CALL, fmt)  # bare text stays content
    assert not accepts(grammar, "<answer>a <answer> b</answer>" + TOOL_CALL, fmt)
    assert not accepts(grammar, "<answer>Let me check." + TOOL_CALL, fmt)  # never closed
    text = '>>>all\nLet me check.>>>get_weather\n{"city": "Paris"}'
    assert accepts(toolgrammar.export_grammar("functionary_v32", TOOLS, fmt), text, fmt)
    assert accepts(toolgrammar.export_grammar("functionary_v32", TOOLS, fmt), ">>>all\nHello.", fmt)


def test_a_shape_for_one_name_exports_only_for_that_tool() -> None:
    """Functionary v3.2's raw-code shape reads only `python`: the export writes it for a
    requested `python` tool (as JSON: the canonical subset) and leaves it out otherwise."""
    python = {
        "type": "function",
        "function": {
            "name": "python",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
        },
    }
    for fmt in ("lark", "gbnf"):
        grammar = toolgrammar.export_grammar("functionary_v32", [*TOOLS, python], fmt)
        assert accepts(grammar, '>>>python\n{"code": "print(1)"}', fmt)
        assert not accepts(grammar, ">>>python\nprint(1)", fmt)
        without = toolgrammar.export_grammar("functionary_v32", TOOLS, fmt)
        assert not accepts(without, '>>>python\n{"code": "print(1)"}', fmt)
    for fmt in ("lark", "gbnf"):  # a fixed name: `<|python_tag|>` calls `python`
        grammar = toolgrammar.export_grammar("functionary_v31", [*TOOLS, python], fmt)
        assert accepts(grammar, '<|python_tag|>{"code": "print(1)"}', fmt)
        without = toolgrammar.export_grammar("functionary_v31", TOOLS, fmt)
        assert not accepts(without, '<|python_tag|>{"code": "print(1)"}', fmt)
