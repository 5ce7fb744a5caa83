"""The model outputs of vLLM's own tool-parser tests, read by vLLM's parser and by ours.

`agreement.py` measures on our corpus; this script measures on the peer's own test files,
which the project does not keep (vLLM's sdist has them under `tests/`: `pip download
vllm==VERSION --no-deps --no-binary :all: --no-build-isolation --no-clean` leaves the unpacked
sdist in pip's build directory). Nothing of them is copied: each run reads the test files of
`TEST_FILES`, takes every string constant they hold (implicit concatenations, `+` of constants
and lists of chunks joined as well), and keeps as a model output each one that holds a marker
of the family (a literal of its grammar two characters or longer) or in which either side
reads a call. Each goes through vLLM's parser (whole output, as `agreement.py` drives it) and
through `toolgrammar.parse(..., compat="vllm")`, with the tools the test file defines (every
`{"name": ..., "parameters": ...}` dict it holds; stubs for the called names when it defines
none). Calls agree when names and arguments (as JSON) are equal in order; content agrees with
every run of whitespace read as one space (`--exact`: byte for byte), and is not compared when
ours reads reasoning or the output writes a reasoning opener or starts with a closer (vLLM's
reasoning parser, which the bench does not run, would take those off first).

    VPY=.cache/vllm-0.34.0/venv/bin/python
    PYTHONPATH=$PWD $VPY bench/vllm_tests.py --tests /tmp/vllm-sdist/src/tests [--json PATH]
        [--families ...] [--show]

It is a proxy for "vLLM's test cases": a test asserts one property of a parse, this script
compares the whole parse, and a string that is a fragment of a streamed test is read whole.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from agreement import Worker, compare_calls, holds_reasoning_marker


import streams
import toolgrammar
from peer_vllm import PEER
from toolgrammar.adapters.markup import nonblank_markup_literals

# vLLM's test files (under its tests/) and the family of ours each exercises
TEST_FILES: dict[str, tuple[str, ...]] = {
    "apertus": ("tool_parsers/test_apertus_tool_parser.py",),
    "deepseek_v3": ("tool_parsers/test_deepseekv3_tool_parser.py",),
    "deepseek_v31": ("tool_parsers/test_deepseekv31_tool_parser.py",),
    "deepseek_v32": (
        "tool_parsers/test_deepseekv32_tool_parser.py",
        "parser/engine/test_deepseek_v32.py",
    ),
    "deepseek_v4": (
        "tool_parsers/test_deepseekv4_tool_parser.py",
        "parser/engine/test_deepseek_v4.py",
    ),
    "deepseek_v41": ("parser/engine/test_deepseek_v41.py",),
    "dots": ("tool_parsers/test_dots_tool_parser.py",),
    "ernie45": ("tool_parsers/test_ernie45_moe_tool_parser.py",),
    "functiongemma": (
        "tool_parsers/test_functiongemma_tool_parser.py",
        "entrypoints/tool_parsers/test_functiongemma_tool_parser.py",
    ),
    "gemma4": ("tool_parsers/test_gemma4_tool_parser.py",),
    "gigachat3": ("tool_parsers/test_gigachat3_tool_parser.py",),
    "glm45": ("tool_parsers/test_glm4_moe_tool_parser.py",),
    "glm47": ("tool_parsers/test_glm47_moe_tool_parser.py", "parser/engine/test_glm47_moe.py"),
    "granite": ("tool_parsers/test_granite_tool_parser.py", "parser/engine/test_granite.py"),
    "granite4": (
        "tool_parsers/test_granite4_tool_parser.py",
        "entrypoints/tool_parsers/test_granite4_tool_parser.py",
    ),
    "granite-20b-fc": ("tool_parsers/test_granite_20b_fc_tool_parser.py",),
    "hermes": (
        "tool_parsers/test_hermes_tool_parser.py",
        "entrypoints/tool_parsers/test_hermes_tool_parser.py",
    ),
    "hunyuan_a13b": ("tool_parsers/test_hunyuan_a13b_tool_parser.py",),
    "hy_v3": ("tool_parsers/test_hy_v3_tool_parser.py",),
    "hy_v4": ("tool_parsers/test_hy_v4_tool_parser.py",),
    "inkling": ("parser/engine/test_inkling.py",),
    "internlm": ("tool_parsers/test_internlm2_tool_parser.py",),
    "jamba": ("tool_parsers/test_jamba_tool_parser.py",),
    "k2_horizon": ("tool_parsers/test_k2_horizon_tool_parser.py",),
    "kimi_k2": ("tool_parsers/test_kimi_k2_tool_parser.py",),
    "kimi_k3": (
        "tool_parsers/test_kimi_k3_named_tool_choice.py",
        "tool_use/test_kimi_k3_tool_parser.py",
    ),
    "lfm2": ("tool_parsers/test_lfm2_tool_parser.py",),
    "ling3": ("parser/engine/test_ling3.py",),
    "llama3_json": ("parser/engine/test_llama_json.py",),
    "llama4_pythonic": ("tool_parsers/test_llama4_pythonic_tool_parser.py",),
    "longcat": ("tool_parsers/test_longcat_tool_parser.py",),
    "minicpm5": ("tool_parsers/test_minicpm5xml_tool_parser.py",),
    "minimax_m2": (
        "tool_parsers/test_minimax_m2_tool_parser.py",
        "parser/engine/test_minimax_m2.py",
    ),
    "minimax_m3": (
        "tool_parsers/test_minimax_m3_tool_parser.py",
        "parser/engine/test_minimax_m3.py",
    ),
    "mistral": ("parser/mistral/test_tool_calls.py",),
    "muse": ("tool_use/test_muse.py", "tool_use/test_muse_parse_delta.py"),
    "muse_glimmer": ("tool_use/test_muse_glimmer.py", "tool_use/test_muse_glimmer_parse_delta.py"),
    "nemotron_v3": (
        "tool_parsers/test_granite_toolcall_parser.py",
        "parser/engine/test_nemotron_v3.py",
    ),
    "olmo3": ("tool_parsers/test_olmo3_tool_parser.py",),
    "phi4_mini_json": ("tool_parsers/test_phi4mini_tool_parser.py",),
    "plamo3": ("parser/engine/test_plamo3.py",),
    "poolside_v1": ("tool_parsers/test_poolside_v1_tool_parser.py",),
    "pythonic": ("tool_parsers/test_pythonic_tool_parser.py",),
    "qwen3_coder": ("tool_parsers/test_qwen3coder_tool_parser.py",),
    "ripple": ("parser/engine/test_ripple.py",),
    "seed_oss": ("parser/engine/test_seed_oss.py",),
    "step3": ("tool_parsers/test_step3_tool_parser.py",),
    "step3p5": ("tool_parsers/test_step3p5_tool_parser.py", "parser/engine/test_step3p5.py"),
    "xlam": ("tool_parsers/test_xlam_tool_parser.py",),
    "zaya": ("tool_parsers/test_zaya_tool_parser.py",),
}


def _fold(node: ast.AST, names: dict[str, str] | None = None) -> str | None:
    """The string a constant expression spells: a literal, a name bound to one at module
    level, an f-string of such, or `+` of such."""
    names = names or {}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold(node.left, names), _fold(node.right, names)
        if left is not None and right is not None:
            return left + right
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.format_spec is not None or value.conversion != -1:
                    return None
                value = value.value
            part = _fold(value, names)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    return None


def module_names(tree: ast.Module) -> dict[str, str]:
    """The module-level names bound to a constant string (`SECTION_BEGIN = "<|...|>"`)."""
    names: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                value = _fold(statement.value, names)
                if value is not None:
                    names[target.id] = value
    return names


def fragments_of(tree: ast.Module, names: dict[str, str]) -> set[int]:
    """The values of the module-level constants the file uses only inside other strings
    (OLMo 3's `SIMPLE_FUNCTION_OUTPUT`, only ever fed as `f"<function_calls>{...}</function_calls>"`):
    a part of a test's model output, never one itself."""
    composed: set[str] = set()
    direct: set[str] = set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if (
                isinstance(child, ast.Name)
                and isinstance(child.ctx, ast.Load)
                and child.id in names
            ):
                inside = isinstance(node, ast.FormattedValue) or (
                    isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
                )
                (composed if inside else direct).add(child.id)
    only_parts = composed - direct
    values: set[int] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and target.id in only_parts:
                values.add(id(statement.value))
    return values


def strings_of(tree: ast.Module) -> list[str]:
    """Every string constant of a test file, and each list of string constants joined, but
    the module-level constants the file only uses as parts of other strings."""
    names = module_names(tree)
    out: list[str] = []
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    docstrings |= fragments_of(tree, names)
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.Name):
            continue  # a module-level constant: read where it is bound
        text = _fold(node, names)
        if text is not None:
            out.append(text)
        elif isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) > 1:
            parts = [_fold(e, names) for e in node.elts]
            if all(p is not None for p in parts):
                out.append("".join(parts))  # type: ignore[arg-type]
    return out


# the shared tests of `tests/tool_parsers/common_tests.py` and the output each reads
COMMON_TESTS = {
    "test_no_tool_calls": "no_tool_calls_output",
    "test_single_tool_call_simple_args": "single_tool_call_output",
    "test_parallel_tool_calls": "parallel_tool_calls_output",
    "test_various_data_types": "various_data_types_output",
    "test_empty_arguments": "empty_arguments_output",
    "test_surrounding_text": "surrounding_text_output",
    "test_escaped_strings": "escaped_strings_output",
    "test_malformed_input": "malformed_input_outputs",
}


def xfailed_outputs(tree: ast.Module) -> set[str]:
    """The outputs a `ToolParserTestConfig` gives to a shared test it marks as failing on
    the whole-output path (`xfail_nonstreaming`, strict): vLLM's own test says that what
    its parser reads there is not what the test expects, so its reading is no reference."""
    names = module_names(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ToolParserTestConfig"
        ):
            continue
        given = {k.arg: k.value for k in node.keywords if k.arg}
        marks = given.get("xfail_nonstreaming")
        if not isinstance(marks, ast.Dict):
            continue
        for key in marks.keys:
            field = COMMON_TESTS.get(_fold(key, names) or "") if key is not None else None
            value = given.get(field or "")
            if value is None:
                continue
            for part in value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]:
                text = _fold(part, names)
                if text is not None:
                    out.add(text)
    return out


def tools_of(tree: ast.AST) -> dict[str, dict[str, Any]]:
    """Every function definition a test file spells as a literal dict, by name."""
    tools: dict[str, dict[str, Any]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) >= 2:  # `_tool("name", {props})`
            callee = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            name = _fold(node.args[0])
            if "tool" in callee.lower() and name is not None:
                try:
                    props = ast.literal_eval(node.args[1])
                except (ValueError, SyntaxError, TypeError):
                    props = None
                if isinstance(props, dict):
                    params = (
                        props if "properties" in props else {"type": "object", "properties": props}
                    )
                    if _is_schema(params):  # not `build_tool_call("f", {"city": "SF"})`
                        tools.setdefault(name, {"name": name, "parameters": params})
        if isinstance(node, ast.Call) and not node.args:  # `FunctionDefinition(name=, parameters=)`
            given = {k.arg: k.value for k in node.keywords if k.arg}
            if "name" in given and "parameters" in given:
                name = _fold(given["name"])
                try:
                    params = ast.literal_eval(given["parameters"])
                except (ValueError, SyntaxError, TypeError):
                    params = None
                if name is not None and _is_schema(params):
                    tools.setdefault(name, {"name": name, "parameters": params})
        if not isinstance(node, ast.Dict):
            continue
        try:
            value = ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError):
            continue
        if isinstance(value.get("function"), dict):
            value = value["function"]
        if isinstance(value.get("name"), str) and _is_schema(value.get("parameters")):
            tools.setdefault(value["name"], value)
    return tools


def _is_schema(params: Any) -> bool:
    """Whether a dict is a tool's parameters schema, not a call's arguments
    (`{"name": "get_weather", "parameters": {"location": "Beijing"}}` is a call)."""
    if not isinstance(params, dict):
        return False
    props = params.get("properties")
    if props is None:
        return params.get("type") == "object"
    return isinstance(props, dict) and all(isinstance(p, (dict, bool)) for p in props.values())


# per family, the outputs left out because vLLM's own test marks its reading of them wrong
XFAILED: dict[str, int] = defaultdict(int)


def markers_of(family: str) -> list[str]:
    literals = nonblank_markup_literals(streams.spec_of(family))
    return [m for m in literals if len(m.strip()) >= 2 and any(ch.isalnum() for ch in m)]


def ours(family: str, text: str, tools: list[dict[str, Any]] | None) -> tuple[str, list[Any], str]:
    """(content, calls, reasoning) as `parse` reads the output with vLLM's profile."""
    try:
        message = toolgrammar.parse(family, text, tools, "stop", ids="sequential", compat="vllm")
    except Exception as error:  # noqa: BLE001  (a raise is a disagreement, reported)
        return f"RAISED {type(error).__name__}: {error}", [], ""
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
    return message.content or "", calls, message.reasoning or ""


def run_family(family: str, tests: Path, modules: Any, exact: bool) -> list[dict[str, Any]]:
    texts: list[str] = []
    defined: dict[str, dict[str, Any]] = {}
    xfailed: set[str] = set()
    for rel in TEST_FILES[family]:
        path = tests / rel
        if not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        texts += strings_of(tree)
        xfailed |= xfailed_outputs(tree)
        for name, tool in tools_of(tree).items():
            defined.setdefault(name, tool)
    markers = markers_of(family)
    seen: set[str] = set()
    candidates = []
    for text in texts:
        if text in seen or len(text.strip()) < 2 or text.strip() in markers:
            continue
        if text in xfailed:  # not compared: counted as `xfail`
            XFAILED[family] += 1
            continue
        seen.add(text)
        candidates.append(text)
    if not candidates:
        return []
    tools_json: list[dict[str, Any]] = [
        {"type": "function", "function": t} for t in defined.values()
    ]
    sides: dict[str, Any] = {}

    def parse(key: str, text: str) -> Any:
        if key not in sides:
            sides[key] = PEER.side_for(modules, family, key, candidates)
        return sides[key].parse(text)

    worker = Worker(parse)
    rows = []
    try:
        for text in candidates:
            tools = tools_json
            if not defined:
                _, named, _ = ours(family, text, None)
                names = dict.fromkeys(n for n, _ in named)
                tools = [
                    {
                        "type": "function",
                        "function": {"name": n, "parameters": {"type": "object", "properties": {}}},
                    }
                    for n in names
                ] or [
                    {
                        "type": "function",
                        "function": {
                            "name": "stub",
                            "parameters": {"type": "object", "properties": {}},
                        },
                    }
                ]
            content, calls, reasoning = ours(family, text, tools)
            marked = any(m in text for m in markers)
            theirs = worker.ask(PEER.request_key(family, text, tools), text)
            if not marked and not calls and not theirs.calls:
                continue
            why_calls = (
                f"raised {theirs.error[:100]}"
                if theirs.error
                else compare_calls(theirs.calls, [list(c) for c in calls])
            )
            # vLLM's tool parser alone does not split reasoning off: content is not compared
            same_content: bool | None
            if reasoning or holds_reasoning_marker(family, text):
                same_content = None
            elif exact:
                same_content = (theirs.content or "") == content
            else:
                same_content = " ".join((theirs.content or "").split()) == " ".join(content.split())
            rows.append(
                {
                    "family": family,
                    "text": text,
                    "calls": not why_calls,
                    "content": None if same_content is None else same_content and not theirs.error,
                    "why": why_calls,
                    "vllm": {
                        "content": theirs.content,
                        "calls": theirs.calls,
                        "error": theirs.error,
                    },
                    "ours": {"content": content, "calls": calls, "reasoning": reasoning},
                }
            )
    finally:
        worker.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=Path, required=True, help="vLLM's tests/ directory")
    parser.add_argument("--families", nargs="+")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--exact", action="store_true", help="compare content byte for byte")
    parser.add_argument("--show", action="store_true", help="print every disagreement")
    args = parser.parse_args(argv)
    modules = PEER.load()
    families = args.families or sorted(TEST_FILES)
    rows: list[dict[str, Any]] = []
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for family in families:
        got = run_family(family, args.tests, modules, args.exact)
        rows += got
        calls = sum(r["calls"] for r in got)
        content = sum(r["content"] is True for r in got)
        compared = sum(r["content"] is not None for r in got)
        per[family] = [calls, content, len(got)]
        xfail = f"  (xfail {XFAILED[family]})" if XFAILED[family] else ""
        print(
            f"{family:18} calls {calls}/{len(got)}  content {content}/{compared}{xfail}",
            flush=True,
        )
        if args.show:
            for r in got:
                if not r["calls"] or r["content"] is False:
                    print(f"   {r['text'][:160]!r}\n      vllm {r['vllm']}\n      ours {r['ours']}")
    n = len(rows) or 1
    calls = sum(r["calls"] for r in rows)
    content = sum(r["content"] is True for r in rows)
    compared = sum(r["content"] is not None for r in rows) or 1
    print(
        f"all: calls {calls}/{len(rows)} ({100 * calls / n:.1f}%)  "
        f"content {content}/{compared} ({100 * content / compared:.1f}%)"
        f"  (left out as xfail: {sum(XFAILED.values())})"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
