"""The `toolgrammar` command: build the generated parsers, list families, parse outputs.

Every failure a user can cause (a missing file, bad JSON, an unknown family, a grammar
error) ends as one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Sequence

import toolgrammar

from .check import check
from .compiler.response_template import ResponseTemplateError, template_text
from .check.fuzz import fuzz
from .check.templates import TOOLS_AS, add_row, check_template, fetched_templates, row_text
from .export import ExportError, export_grammar
from .runtime.params import UnknownParam, with_params
from .runtime.policies import COMPAT, SWITCHES
from .runtime.registry import UnknownFamily, families, get_spec, registered
from .runtime.tables import compiled

try:  # the compiler extra (lark, jinja2, black): only `build` and checking a .tg file need it
    from .compiler.build import build, compile_grammar_text, default_paths
    from .compiler.errors import CompileErrors
except ImportError as missing:
    COMPILER_MISSING: ImportError | None = missing
else:
    COMPILER_MISSING = None

EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise CliError(f"{path} is not UTF-8 text: {error.reason} at byte {error.start}") from None


def _read_tools(path: str | None) -> list[dict[str, Any]] | None:
    if path is None:
        return None
    text = _read_text(path)
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None
    except RecursionError:
        raise CliError(f"{path}: JSON nested too deep to read") from None
    if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
        tools = tools["tools"]  # a whole request body
    if not isinstance(tools, list):
        raise CliError(f"{path}: expected a JSON list of tools (OpenAI 'tools' shape)")
    return tools


def _chunks(text: str, chunk: str) -> list[str]:
    if chunk == "whole":
        return [text]
    if chunk == "char":
        size = 1
    else:
        try:
            size = int(chunk)
        except ValueError:
            raise CliError(f"--chunk takes a number, 'char' or 'whole', not {chunk!r}") from None
        if size < 1:
            raise CliError("--chunk must be at least 1")
    return [text[i : i + size] for i in range(0, len(text), size)]


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _read_params(given: list[str]) -> dict[str, str]:
    params = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--param takes NAME=VALUE, got {item!r}")
        params[name] = value
    return params


def _read_template(path: str | None) -> dict[str, Any] | None:
    """A response template file: the template itself, or a tokenizer_config.json that holds
    one under `response_template`."""
    if path is None:
        return None
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise CliError(f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None
    except RecursionError:
        raise CliError(f"{path}: JSON nested too deep to read") from None
    if isinstance(data, dict) and isinstance(data.get("response_template"), dict):
        data = data["response_template"]  # a whole tokenizer_config.json
    if not isinstance(data, dict):
        raise CliError(f"{path}: expected a JSON object (a response_template)")
    return data


def cmd_import_template(args: argparse.Namespace) -> int:
    """Print the grammar that reads what the template describes, to commit and refine."""
    if args.chat_template is not None:
        if args.template is not None:
            raise CliError("give a response template or --chat-template, not both")
        return _import_chat_template(args)
    if args.template is None:
        raise CliError("import-template needs a response template file or --chat-template FILE")
    template = _read_template(args.template)
    try:
        sys.stdout.write(template_text(template, args.name))
    except ResponseTemplateError as error:
        raise CliError(f"{args.template}: {error}") from None
    return 0


def _import_chat_template(args: argparse.Namespace) -> int:
    """A first grammar from a chat template's renderings, written, then checked."""
    from .import_template import ImportProblem, check_imported, import_chat_template

    if args.name == "hf" or not re.fullmatch(r"[a-z][a-z0-9_-]*", args.name):
        raise CliError("--chat-template needs --name FAMILY ([a-z][a-z0-9_-]*, not hf)")
    path = Path(args.chat_template)
    variables = _template_vars(args.template_var)
    try:
        text, found = import_chat_template(
            _read_text(args.chat_template), args.name, path.name, variables
        )
    except ImportProblem as problem:
        raise CliError(f"{args.chat_template}: {problem}") from None
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CliError(f"cannot write {args.output}: {error.strerror or error}") from None
    else:
        sys.stdout.write(text)
    if args.no_check:
        return 0
    if COMPILER_MISSING is not None:
        raise CliError(f"checking the grammar needs the compiler extra ({COMPILER_MISSING})")
    checked = check_imported(
        text,
        args.name,
        path,
        args.budget,
        variables,
        found.mutable,
        found.as_text,
        tuple(found.ignore),
    )
    print(checked.report, file=sys.stderr)
    return 0 if checked.ok else 1


def _template_vars(given: list[str]) -> dict[str, Any]:
    """`--template-var NAME=VALUE`: JSON, or a bare string (`eos_token=<|im_end|>`)."""
    variables: dict[str, Any] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--template-var takes NAME=VALUE, got {item!r}")
        try:
            variables[name] = json.loads(value)
        except (ValueError, RecursionError):
            variables[name] = value  # a bare word is a string: eos_token=<|im_end|>
    return variables


def cmd_families(args: argparse.Namespace) -> int:
    for name in families():
        spec = get_spec(name)
        alias = "" if name == spec.name else f"  (alias of {spec.name})"
        print(f"{name}{alias}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Which build of the runtime runs: pure Python or the compiled one (docs/compiled.md)."""
    from .runtime import compiled

    build = compiled()
    print(f"runtime: {build['build']} ({build['why']})")
    if build["directory"]:
        print(f"compiled modules: {', '.join(build['modules'])} from {build['directory']}")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    tools = _read_tools(args.tools)
    text = _read_text(args.file)
    options = {
        "reasoning_open": args.reasoning_open,
        "block_open": args.block_open,
        "compat": args.compat,
        "whitespace": args.whitespace,
        "unknown_tools": args.unknown_tools,
        "partial_calls": args.partial_calls,
        "malformed_calls": args.malformed_calls,
        "citations": args.citations,
        "text_after_calls": args.text_after_calls,
        "untyped_values": args.untyped_values,
        "required_params": args.required_params,
        "undeclared_params": args.undeclared_params,
        "json_typing": args.json_typing,
        "section_text": args.section_text,
        "ids": args.ids,
        "params": _read_params(args.param),
        "response_template": _read_template(args.response_template),
    }
    if args.trace:
        options["trace"] = toolgrammar.print_trace(sys.stderr)
    try:
        parser = toolgrammar.StreamParser(args.family, tools, **options)
    except (toolgrammar.UnknownFamily, ValueError) as error:
        raise CliError(str(error)) from None
    deltas: list[toolgrammar.Delta] = []
    out = sys.stdout
    for piece in _chunks(text, args.chunk if args.stream else "whole"):
        for delta in parser.feed(piece):
            deltas.append(delta)
            if args.stream:
                out.write(_dump({"delta": delta.to_dict()}) + "\n")
    for delta in parser.finish(args.finish):
        deltas.append(delta)
        if args.stream:
            out.write(_dump({"delta": delta.to_dict()}) + "\n")
    message = toolgrammar.assemble(deltas, parser.finish_reason)
    out.write(_dump({"message": message.to_dict(), "finish_reason": parser.finish_reason}) + "\n")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    tools = _read_tools(args.tools)
    try:
        calls = json.loads(_read_text(args.calls))
    except ValueError as error:
        raise CliError(f"{args.calls}: not JSON: {error}") from None
    except RecursionError:
        raise CliError(f"{args.calls}: JSON nested too deep to read") from None
    if not isinstance(calls, list):
        raise CliError(f"{args.calls}: expected a JSON list of calls")
    try:
        text = toolgrammar.render(
            args.family,
            calls,
            tools,
            content=args.content,
            reasoning=args.reasoning,
            after=args.after,
            params=_read_params(args.param),
            response_template=_read_template(args.response_template),
        )
    except (toolgrammar.UnknownFamily, ValueError) as error:
        raise CliError(str(error)) from None
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.tools is None:
        raise CliError("export needs --tools FILE (the request's tools list)")
    tools = _read_tools(args.tools)
    try:
        text = export_grammar(
            args.family,
            tools,
            args.format,
            args.mode,
            params=_read_params(args.param),
            reasoning_open=args.reasoning_open,
            block_open=args.block_open,
            json=args.json,
            response_template=_read_template(args.response_template),
        )
    except ExportError as error:
        raise CliError(str(error)) from None
    sys.stdout.write(text)
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    """Print the tables the runtime compiles from the family's grammar (`CompiledFamily`)."""
    try:
        spec = with_params(
            toolgrammar.family_spec(args.family, _read_template(args.response_template)),
            _read_params(args.param),
        )
    except (toolgrammar.UnknownFamily, UnknownParam, ValueError) as error:
        raise CliError(str(error)) from None
    print(compiled(spec).pretty())
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    family = args.family
    scope: Any = nullcontext()
    if family.endswith(".tg"):  # a grammar file: compiled in memory, checked under its name
        if COMPILER_MISSING is not None:
            raise CliError(f"checking a grammar file needs the compiler extra ({COMPILER_MISSING})")
        path = Path(family)
        warnings: list[Any] = []
        try:
            code = compile_grammar_text(path.read_text(encoding="utf-8"), family, None, warnings)
        except OSError as error:
            raise CliError(f"{family}: {error.strerror}") from None
        except CompileErrors as errors:
            print(str(errors), file=sys.stderr)
            return 1
        for warning in warnings:
            print(warning, file=sys.stderr)
        namespace: dict[str, Any] = {}
        exec(compile(code, family, "exec"), namespace)
        scope = registered(namespace["SPEC"])
        family = namespace["SPEC"].name

    started = time.monotonic()
    live = sys.stderr.isatty()

    def dot(samples: int) -> None:
        """Progress: a live counter on a terminal, a dot per 10 samples in a log."""
        if live:
            elapsed = time.monotonic() - started
            line = f"\r{family}: {samples} samples, {elapsed:.0f}/{args.budget:.0f} s"
            print(line, end="", file=sys.stderr, flush=True)
        elif samples % 10 == 0:
            print(".", end="", file=sys.stderr, flush=True)

    with scope:
        try:
            get_spec(family)
        except UnknownFamily as error:
            raise CliError(str(error)) from None
        template_ok = _check_template(family, args)
        # and the family's rows of grammars/templates.toml, when the templates were fetched
        report = check(
            family,
            budget=args.budget,
            seed=args.seed,
            progress=dot,
            templates=fetched_templates(),
        )
    print(file=sys.stderr)
    print(report.summary())
    return 0 if report.ok and template_ok else 1


def _check_template(family: str, args: argparse.Namespace) -> bool:
    """`--template FILE`: the round trip through the model's chat template, printed first."""
    if args.template is None:
        if args.add_row:
            raise CliError("--add-row needs --template FILE.jinja: the template the row runs")
        return True
    variables = _template_vars(args.template_var)
    tools_variables = {}
    for item in args.tools_variable:
        name, sep, form = item.partition("=")
        if not sep or not name or form not in TOOLS_AS:
            raise CliError(f"--tools-variable takes NAME=list or NAME=json, got {item!r}")
        tools_variables[name] = form
    options: dict[str, Any] = {
        "variables": variables,
        "stop": args.stop,
        "params": _read_params(args.param),
        "mutable": args.mutable,
        "arguments": "text" if args.text_arguments else "object",
        "tools_variables": tools_variables,
    }
    report = check_template(family, Path(args.template), **options)
    print(report.summary())
    if args.add_row:
        if not report.ok:
            print(
                "no row added: fix the findings, or add the row by hand with each finding's "
                "key under `known` and `why` (grammars/templates.toml)",
                file=sys.stderr,
            )
            return False
        try:
            text = row_text(family, Path(args.template), options)
        except ValueError as error:
            raise CliError(str(error)) from None
        print(f"added to {add_row(text)}:\n{text}", file=sys.stderr)
    return report.ok


def cmd_fuzz(args: argparse.Namespace) -> int:
    if args.family not in ("all", "hf"):
        try:
            get_spec(args.family)
        except UnknownFamily as error:
            raise CliError(str(error)) from None
    if args.inputs is not None and args.inputs < 1:
        raise CliError("--inputs must be at least 1")
    started = time.monotonic()
    live = sys.stderr.isatty()

    def progress(report: Any) -> None:
        """A live count on a terminal; a line every 10,000 inputs in a log."""
        elapsed = time.monotonic() - started
        line = (
            f"{report.total} inputs, {report.exceptions} exceptions, "
            f"{report.violations} violations, {elapsed:.0f} s"
        )
        if live:
            print("\r" + line, end="", file=sys.stderr, flush=True)
        elif report.total // 10_000 != (report.total - len(report.inputs)) // 10_000:
            print(line, file=sys.stderr, flush=True)

    if args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    report = fuzz(
        args.family,
        inputs=args.inputs,
        budget=args.budget,
        seed=args.seed,
        progress=progress,
        jobs=args.jobs,
    )
    if live:
        print(file=sys.stderr)
    print(report.summary())
    return 0 if report.ok else 1


def cmd_build(args: argparse.Namespace) -> int:
    if COMPILER_MISSING is not None:
        raise CliError(
            f"the compiler needs its extra: pip install 'toolgrammar[compiler]' ({COMPILER_MISSING})"
        )
    grammars, out_dir = default_paths()
    if args.grammars:
        grammars = Path(args.grammars)
    if args.out:
        out_dir = Path(args.out)
    try:
        result = build(grammars, out_dir, compare_only=args.compare_only)
    except CompileErrors as errors:
        print(str(errors), file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(warning, file=sys.stderr)
    if args.compare_only:
        if result.stale:
            print(result.diff, end="" if result.diff.endswith("\n") else "\n")
            print(
                f"generated/ is stale: {', '.join(result.stale)}; run 'toolgrammar build'",
                file=sys.stderr,
            )
            return 1
        print(f"generated/ is current ({len(result.specs)} families)")
        return 0
    print(f"built {len(result.specs)} families into {out_dir}")
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolgrammar",
        description="Grammar-compiled streaming parsers for LLM tool-call markup.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    build_command = sub.add_parser("build", help="compile grammars/ into generated/")
    build_command.add_argument(
        "--check",
        dest="compare_only",
        action="store_true",
        help="write nothing; exit 1 with a diff if generated/ differs from a fresh build",
    )
    build_command.add_argument("--grammars", help="grammar folder (default: the package's)")
    build_command.add_argument("--out", help="output folder (default: the package's generated/)")
    build_command.set_defaults(func=cmd_build)

    families_command = sub.add_parser("families", help="list registered family names and aliases")
    families_command.set_defaults(func=cmd_families)

    info_command = sub.add_parser("info", help="say which build of the runtime runs")
    info_command.set_defaults(func=cmd_info)

    parse_command = sub.add_parser("parse", help="parse a model output, whole or as a stream")
    parse_command.add_argument("family")
    parse_command.add_argument("file", nargs="?", default="-", help="the output text (- for stdin)")
    parse_command.add_argument("--tools", help="JSON file with the request's tools list")
    parse_command.add_argument("--stream", action="store_true", help="print one delta per line")
    parse_command.add_argument(
        "--chunk", default="16", help="delta size when streaming: N or 'char'"
    )
    parse_command.add_argument("--finish", default="stop", choices=["stop", "length"])
    parse_command.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value for one of the grammar's params (repeatable)",
    )
    parse_command.add_argument(
        "--reasoning-open",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the prompt opened the reasoning block (default: the grammar says)",
    )
    parse_command.add_argument(
        "--block-open",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the prompt ended with the opener of the grammar's `prompt_opened` call, section "
        "or message (default: the grammar says)",
    )
    parse_command.add_argument(
        "--compat",
        choices=COMPAT,
        help="read the output as this stack does (docs/compat.md; default: the project's policies)",
    )
    parse_command.add_argument(
        "--whitespace",
        choices=SWITCHES["whitespace"],
        help="verbatim: every character outside markup is content; trim: whitespace at the "
        "ends of content and next to markup is dropped (default: --compat's, else verbatim)",
    )
    parse_command.add_argument(
        "--unknown-tools",
        choices=SWITCHES["unknown_tools"],
        help="a call to a tool not in --tools: keep, drop, or text (its markup as content) "
        "(default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--partial-calls",
        choices=SWITCHES["partial_calls"],
        help="a call whose arguments the end of the output cut: keep (closed), drop or text; "
        "drop and text hold each call until its arguments end (default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--malformed-calls",
        choices=SWITCHES["malformed_calls"],
        help="a call whose arguments never form an object: keep (closed), drop or text; drop "
        "and text hold each call until its arguments end (default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--citations",
        choices=SWITCHES["citations"],
        help="citation spans the grammar declares (Cohere's <co>...</co: 0:[1]>): keep as "
        "written, or strip the markup and keep the text (default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--text-after-calls",
        choices=SWITCHES["text_after_calls"],
        help="content written after a call: keep, or drop (content is then the text before "
        "the first call) (default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--untyped-values",
        choices=SWITCHES["untyped_values"],
        help="a markup parameter's value no schema types: text, or json (its JSON value when "
        "it is one, held until whole) (default: --compat's, else text)",
    )
    parse_command.add_argument(
        "--required-params",
        choices=SWITCHES["required_params"],
        help="a call lacking a property its schema requires: keep, or check (it is malformed, "
        "for --malformed-calls to decide; holds each call until its arguments end) "
        "(default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--undeclared-params",
        choices=SWITCHES["undeclared_params"],
        help="a markup parameter its tool's schema does not declare: keep, or drop it with its "
        "value (default: --compat's, else keep)",
    )
    parse_command.add_argument(
        "--json-typing",
        choices=SWITCHES["json_typing"],
        help="JSON arguments: schema (each member typed by its schema) or as_written "
        "(default: --compat's, else schema)",
    )
    parse_command.add_argument(
        "--section-text",
        choices=SWITCHES["section_text"],
        help="a call given back as text that opened its section: whole (the section's "
        "markers go back with it) or call (they stay markup) (default: --compat's, else whole)",
    )
    parse_command.add_argument(
        "--response-template",
        metavar="FILE",
        help="family hf: the checkpoint's response_template (JSON, or its tokenizer_config.json)",
    )
    parse_command.add_argument("--ids", default="random", choices=["random", "sequential"])
    parse_command.add_argument(
        "--trace",
        action="store_true",
        help="print every step to stderr: mode, grammar items (file:line), held text, output",
    )
    parse_command.set_defaults(func=cmd_parse)

    check_command = sub.add_parser("check", help="check a grammar's invariants on random outputs")
    check_command.add_argument("family", help="a registered family, or a grammar file (.tg)")
    check_command.add_argument("--budget", type=float, default=60.0, help="seconds (default 60)")
    check_command.add_argument("--seed", type=int, default=0, help="replay a run (default 0)")
    check_command.add_argument(
        "--template",
        metavar="FILE.jinja",
        help="also round-trip conversations through the model's chat template",
    )
    check_command.add_argument(
        "--template-var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a variable for the template, VALUE as JSON or a bare string "
        "(enable_thinking=true, eos_token=<|im_end|>; repeatable)",
    )
    check_command.add_argument(
        "--stop",
        action="append",
        default=[],
        metavar="TEXT",
        help="a stop string of the model besides eos_token and the template's turn end",
    )
    check_command.add_argument(
        "--mutable",
        action="store_true",
        help="let the template change lists, as llama.cpp does (transformers refuses)",
    )
    check_command.add_argument(
        "--text-arguments",
        action="store_true",
        help="hand the template every call's arguments as JSON text, not a dict",
    )
    check_command.add_argument(
        "--tools-variable",
        action="append",
        default=[],
        metavar="NAME=list|json",
        help="also give the template the tools as NAME, the list or JSON text (repeatable)",
    )
    check_command.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="a grammar param"
    )
    check_command.add_argument(
        "--add-row",
        action="store_true",
        help="with --template: when it holds, add its row to grammars/templates.toml",
    )
    check_command.set_defaults(func=cmd_check)

    fuzz_command = sub.add_parser(
        "fuzz", help="hostile outputs against every invariant, failures shrunk with a seed"
    )
    fuzz_command.add_argument(
        "family",
        help="a registered family, 'hf' (hostile response templates), or 'all' (every grammar "
        "and hf)",
    )
    fuzz_command.add_argument(
        "--budget", type=float, help="seconds in all (default: no limit but --inputs)"
    )
    fuzz_command.add_argument(
        "--inputs",
        type=int,
        help="inputs in all, shared between the families (default: 1000 a family "
        "without --budget)",
    )
    fuzz_command.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes that split the families between them; the same inputs (default 1)",
    )
    fuzz_command.add_argument(
        "--seed", type=int, default=0, help="replay a run, or a finding's input (default 0)"
    )
    fuzz_command.set_defaults(func=cmd_fuzz)

    render_command = sub.add_parser("render", help="write calls in a family's markup")
    render_command.add_argument("family")
    render_command.add_argument(
        "calls", help='JSON list of {"name": ..., "arguments": {...}} (- for stdin)'
    )
    render_command.add_argument("--tools", help="JSON file with the request's tools list")
    render_command.add_argument("--content", help="content before the calls")
    render_command.add_argument("--after", help="content after the calls")
    render_command.add_argument("--reasoning", help="a reasoning block before everything")
    render_command.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="a grammar param"
    )
    render_command.add_argument(
        "--response-template", metavar="FILE", help="family hf: the response_template (JSON)"
    )
    render_command.set_defaults(func=cmd_render)

    import_command = sub.add_parser(
        "import-template",
        help="print the grammar (.tg) equivalent to a checkpoint's response_template, or a "
        "first grammar found from a chat template's renderings (--chat-template)",
    )
    import_command.add_argument(
        "template",
        nargs="?",
        help="the response_template JSON, or a tokenizer_config.json holding one",
    )
    import_command.add_argument("--name", default="hf", help="the family name (default hf)")
    import_command.add_argument(
        "--chat-template",
        metavar="FILE",
        help="a model's chat template (.jinja): probe conversations rendered through it give "
        "the markers; the grammar is written with a `# guess:` comment for every guess, then "
        "checked (the round trip through the same template first)",
    )
    import_command.add_argument("--output", "-o", metavar="FILE", help="write the grammar here")
    import_command.add_argument(
        "--budget", type=float, default=20.0, help="--chat-template: check's seconds (default 20)"
    )
    import_command.add_argument(
        "--no-check", action="store_true", help="--chat-template: write the grammar only"
    )
    import_command.add_argument(
        "--template-var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="--chat-template: a variable for the template (JSON or a bare string)",
    )
    import_command.set_defaults(func=cmd_import_template)

    export_command = sub.add_parser(
        "export", help="the grammar of a family's output for constrained decoding"
    )
    export_command.add_argument("family")
    export_command.add_argument(
        "--tools", help="JSON file with the request's tools list (required)"
    )
    export_command.add_argument("--format", default="lark", choices=["lark", "gbnf"])
    export_command.add_argument(
        "--mode", default="auto", help="auto, required (at least one call) or named:NAME"
    )
    export_command.add_argument(
        "--json",
        default="native",
        choices=["native", "rules"],
        help="lark: JSON arguments as llguidance %%json (native) or as rules whose strings "
        "cannot hold the family's markers (rules; always so in gbnf)",
    )
    export_command.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="a grammar param"
    )
    export_command.add_argument(
        "--reasoning-open",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the prompt opened the reasoning block (default: the grammar says)",
    )
    export_command.add_argument(
        "--block-open",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the prompt ended with the opener of the grammar's `prompt_opened` call, section "
        "or message (default: the grammar says)",
    )
    export_command.add_argument(
        "--response-template",
        metavar="FILE",
        help="family hf: the response_template (JSON, or its tokenizer_config.json)",
    )
    export_command.set_defaults(func=cmd_export)

    tables_command = sub.add_parser(
        "tables", help="print the tables the runtime compiles from a family's grammar"
    )
    tables_command.add_argument("family")
    tables_command.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="a grammar param"
    )
    tables_command.add_argument(
        "--response-template", metavar="FILE", help="family hf: the response_template (JSON)"
    )
    tables_command.set_defaults(func=cmd_tables)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as error:
        print(f"toolgrammar: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
