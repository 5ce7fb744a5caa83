"""Static validation: every mistake in a grammar, found before a line is emitted.

Each validation appends to one `Report`, so a file's errors all come out together. The
parser is permissive on purpose (see grammar.lark); this module is where the language
rules live. `validate_registry` is the one cross-file validation: registered names are global.
"""

from __future__ import annotations

import difflib
import keyword
import re
from dataclasses import dataclass, field
from typing import Iterator

from . import ir
from .errors import CompileError, error_at
from .regex_cost import exponential_risk

NAME_RE = re.compile(r"[a-z][a-z0-9_-]*")  # as grammars/README.md states it
PARAM_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*")
PARAM_REF = re.compile(r"\$\{([^}]*)\}")
NAME_RULE = "use lowercase letters, digits, `_` and `-`, starting with a letter"


@dataclass
class Report:
    """The errors of one file, with what is needed to show them."""

    path: str
    text: str
    errors: list[CompileError] = field(default_factory=list)

    def error(self, node: ir.Node, message: str) -> None:
        self.errors.append(error_at(self.path, self.text, node.line, node.column, message))


def validate_grammar(
    grammar: ir.Grammar, text: str, path: str, report: Report | None = None
) -> list[CompileError]:
    """All errors of one parsed grammar file (empty when it is fine). Errors go into
    `report` when one is given, so later validations can add to the same file's list."""
    report = report if report is not None else Report(path, text)
    _validate_statements(grammar, report)
    for stmt in grammar.of(ir.AliasesStmt):
        _validate_aliases(grammar, stmt, report)
    for stmt in grammar.of(ir.ReasoningStmt) + grammar.of(ir.SectionStmt):
        _validate_markers(stmt, report)
    _validate_prompt_opened(grammar, report)
    for content in grammar.of(ir.ContentStmt):
        _validate_content(grammar, content, report)
    _validate_messages(grammar, report)
    for call in grammar.of(ir.CallStmt):
        _validate_call(call, report)
    _validate_recipient_calls(grammar, report)
    _validate_render(grammar, report)
    _validate_emptystrings(grammar, report)
    _validate_nested_markers(grammar, report)
    return report.errors


# --------------------------------------------------------------------------- statements


def _validate_render(grammar: ir.Grammar, report: Report) -> None:
    """`render`'s arguments: known, once each, whitespace only (after the reasoning, also the
    grammar's `ignore` markers, markup the model writes there: Solar Open's
    `<|begin|>assistant`, the header of its next message), of the right shape, and a block's
    only where the grammar has that block."""
    ignored = sorted(
        {getattr(n, "value", "") for s in grammar.of(ir.IgnoreStmt) for n in strings(s)},
        key=len,
        reverse=True,
    )
    for stmt in grammar.of(ir.RenderStmt):
        seen: set[str] = set()
        for arg in stmt.args:
            takes = ir.RENDER_ARGS.get(arg.name)
            if takes is None:
                valid = sorted(ir.RENDER_ARGS)
                report.error(
                    arg,
                    f"unknown argument `{arg.name}` of `render`{_suggest(arg.name, valid)} "
                    f"(valid: {', '.join(valid)})",
                )
                continue
            if arg.name in seen:
                report.error(arg, f"argument `{arg.name}` is given twice")
            seen.add(arg.name)
            pair = takes.startswith("a list")
            value = arg.value
            if takes == "true or false":
                if not isinstance(value, ir.Bool):
                    report.error(
                        arg, f"`{arg.name}` of `render` takes {takes}, got {ir.describe(value)}"
                    )
                elif arg.name == "content_always" and not grammar.of(ir.ContentStmt):
                    report.error(arg, "`render content_always=…` needs a `content` statement")
                continue
            if (
                pair != isinstance(value, ir.StrList)
                or not isinstance(value, (ir.Str, ir.StrList))
                or (pair and len(value.items) != 2)
            ):
                report.error(
                    arg, f"`{arg.name}` of `render` takes {takes}, got {ir.describe(value)}"
                )
                continue
            for node in value.items if isinstance(value, ir.StrList) else (value,):
                text = node.value
                if arg.name == "after_reasoning":
                    for marker in ignored:
                        text = text.replace(marker, "") if marker else text
                if not _whitespace(text) and arg.name == "after_reasoning":
                    report.error(
                        node,
                        f"`render after_reasoning` writes whitespace and `ignore`d markers "
                        f"only, not {node}",
                    )
                elif not _whitespace(text):
                    report.error(node, f"`render` writes whitespace only, not {node}")
            block = {"in_reasoning": ir.ReasoningStmt, "in_section": ir.SectionStmt}.get(arg.name)
            if block is not None and not grammar.of(block):
                report.error(arg, f"`render {arg.name}=…` needs a `{arg.name[3:]}` statement")


def _validate_statements(grammar: ir.Grammar, report: Report) -> None:
    families = grammar.of(ir.FamilyStmt)
    if not families:
        report.error(grammar, "missing `family` statement: a grammar starts with `family NAME`")
    elif grammar.statements[0] is not families[0]:
        report.error(families[0], "`family` must be the first statement")
    for stmt in families:
        if not NAME_RE.fullmatch(stmt.name.name):
            report.error(stmt.name, f"invalid family name `{stmt.name}`: {NAME_RULE}")
        elif keyword.iskeyword(module_name(stmt.name.name)):
            report.error(stmt.name, f"family name `{stmt.name}` is a Python keyword")
    for kind, word in (
        (ir.FamilyStmt, "family"),
        (ir.AliasesStmt, "aliases"),
        (ir.ExtendsStmt, "extends"),
        (ir.SectionStmt, "section"),
        (ir.ContentStmt, "content"),
        (ir.RenderStmt, "render"),
        (ir.CitationStmt, "citation"),
    ):
        first, *more = grammar.of(kind) or [None]
        for stmt in more:
            report.error(stmt, f"duplicate `{word}` statement (first at line {first.line})")
    if not grammar.of(ir.CallStmt) and not grammar.of(ir.ExtendsStmt):
        report.error(grammar, "missing `call` statement: a grammar describes one call")
    for stmt in grammar.of(ir.ExtendsStmt):
        if stmt.name.name in {f.name.name for f in families}:
            report.error(stmt.name, f"family `{stmt.name}` cannot extend itself")
    seen: dict[str, ir.ParamStmt] = {}
    for param in grammar.of(ir.ParamStmt):
        name = param.name.name
        if not PARAM_NAME_RE.fullmatch(name):
            report.error(
                param.name, f"invalid param name `{name}`: use lowercase letters, digits and `_`"
            )
        if name in seen:
            report.error(param.name, f"param `{name}` is declared twice (line {seen[name].line})")
        seen.setdefault(name, param)
        if PARAM_REF.search(param.default.value):
            report.error(param.default, "a param default cannot refer to a param")


def _whitespace(text: str) -> bool:
    """A string `render` may write: whitespace, and `${NAME}` params whose defaults are
    whitespace (`validate_params` checks those on the grammar as built)."""
    return not PARAM_REF.sub("", text).strip()


WRITE_ARGS = ("write", "write_between", "write_before_value")  # item arguments render writes


def _writtenstrings(grammar: ir.Grammar) -> Iterator[ir.Node]:
    """The strings that say what `render` writes: the `render` statement's, and the
    items' `write=`, `write_between=`, `write_before_value=`."""
    for stmt in grammar.of(ir.RenderStmt):
        yield from strings(stmt)
    for call in grammar.of(ir.CallStmt):
        for item in call.items:
            if isinstance(item, ir.Element):
                for word in WRITE_ARGS:
                    if (value := item.arg(word)) is not None:
                        yield from strings(value)


def validate_params(grammar: ir.Grammar, report: Report) -> None:
    """Every `${NAME}` names a declared param and every param is used. Run on the grammar
    as built, inherited statements included, so a child may use its parent's params. A
    param written by `render` (a checkpoint's layout: GLM-4.7 writes no newlines where
    GLM-4.5 does) has a whitespace default."""
    declared = {p.name.name: p for p in grammar.of(ir.ParamStmt)}
    for node in _writtenstrings(grammar):
        for found in PARAM_REF.finditer(getattr(node, "value", "")):
            param = declared.get(found.group(1))
            if param is not None and param.default.value.strip():
                report.error(
                    node,
                    f"`render` writes whitespace only: param `{param.name.name}`'s default "
                    f"{param.default} is not",
                )
    defaults = {id(p.default) for p in grammar.of(ir.ParamStmt)}
    used: set[str] = set()
    for node in strings(grammar):
        if id(node) in defaults:
            continue
        text = node.text if isinstance(node, ir.Literal) else getattr(node, "value", "")
        for found in PARAM_REF.finditer(text):
            name = found.group(1)
            used.add(name)
            if name not in declared:
                report.error(
                    node, f'unknown param `${{{name}}}`: declare it with `param {name} = "..."`'
                )
    for name, param in declared.items():
        if name not in used:
            report.error(param.name, f"param `{name}` is never used as `${{{name}}}`")


def _validate_aliases(grammar: ir.Grammar, stmt: ir.AliasesStmt, report: Report) -> None:
    family = {f.name.name for f in grammar.of(ir.FamilyStmt)}
    seen: set[str] = set()
    for alias in stmt.names:
        if not NAME_RE.fullmatch(alias.name):
            report.error(alias, f"invalid alias `{alias}`: {NAME_RULE}")
        if alias.name in family:
            report.error(alias, f"alias `{alias}` is the family name")
        elif alias.name in seen:
            report.error(alias, f"alias `{alias}` is listed twice")
        seen.add(alias.name)


def _validate_content(grammar: ir.Grammar, stmt: ir.ContentStmt, report: Report) -> None:
    """A content block's openers are markup that must say one thing: none may also be a call
    literal, a section marker or a reasoning opener (a reasoning closer may be one: Command A's
    `<|START_TEXT|>` ends the plan and opens the answer; a closer may end other blocks too)."""
    opens = stmt.opens.items if isinstance(stmt.opens, ir.StrList) else (stmt.opens,)
    closes: tuple[ir.Str, ...] = ()
    if stmt.closes is not None:
        closes = stmt.closes.items if isinstance(stmt.closes, ir.StrList) else (stmt.closes,)
    for close in closes:
        if close.value and close.value in {o.value for o in opens}:
            report.error(close, f"content closer {close} is also an opener")
    taken: set[str] = set()
    for reasoning in grammar.of(ir.ReasoningStmt):
        taken |= set(ir.strings(reasoning.opens))
    for section in grammar.of(ir.SectionStmt):
        taken |= {*ir.strings(section.opens), *ir.strings(section.closes)}
    for call in grammar.of(ir.CallStmt):
        for item in call.items:
            if isinstance(item, ir.Literal) and not item.peek:
                taken |= set(item.texts)
    for node in opens:
        if node.value in taken:
            report.error(node, f"content opener {node} is also a call or block marker")


def _content_markers(grammar: ir.Grammar) -> list[tuple[ir.Node, str, str]]:
    """The markers read in content and reasoning (node, text, what): blocks, `ignore`, and
    the literals that open a call. A message header is read by its own rule."""
    found: list[tuple[ir.Node, str, str]] = []

    def add(value: ir.Markers | None, what: str) -> None:
        if value is not None:
            items = value.items if isinstance(value, ir.StrList) else (value,)
            found.extend((node, node.value, what) for node in items)

    for stmt in grammar.of(ir.ReasoningStmt):
        add(stmt.opens, "reasoning opener")
        add(stmt.closes, "reasoning closer")
    for stmt in grammar.of(ir.SectionStmt):
        add(stmt.opens, "section opener")
        add(stmt.closes, "section closer")
    for stmt in grammar.of(ir.ContentStmt):
        add(stmt.opens, "content opener")
        add(stmt.closes, "content closer")
    for stmt in grammar.of(ir.IgnoreStmt):
        add(stmt.markers, "ignored marker")
    for call in grammar.of(ir.CallStmt):
        for item in call.items:
            if _is_ws(item):
                continue
            if not isinstance(item, ir.Literal):
                break
            found.extend((item, text, "call opener") for text in item.texts)
            if not item.optional:
                break
    return found


def _validate_nested_markers(grammar: ir.Grammar, report: Report) -> None:
    """No marker read in content holds another strictly inside it (neither at its start
    nor at its end): streamed, the inner one is whole while the outer one is still
    arriving and would be read first, where the whole text reads the outer one."""
    markers = [m for m in _content_markers(grammar) if m[1] and "${" not in m[1]]
    seen: set[tuple[str, str]] = set()
    for node, outer, what in markers:
        for _, inner, inner_what in markers:
            at = outer.find(inner, 1) if inner != outer else -1
            while 0 < at and at + len(inner) == len(outer):
                at = outer.find(inner, at + 1)
            if at > 0 and (outer, inner) not in seen:
                seen.add((outer, inner))
                report.error(
                    node,
                    f"{what} {ir.quote(outer)} holds the {inner_what} {ir.quote(inner)} inside "
                    f"it: streamed, {ir.quote(inner)} would be read before {ir.quote(outer)} is "
                    "whole; respell one of them",
                )


def _validate_markers(stmt: ir.ReasoningStmt | ir.SectionStmt, report: Report) -> None:
    word = "reasoning" if isinstance(stmt, ir.ReasoningStmt) else "section"
    opens = set(ir.strings(stmt.opens))
    closes = stmt.closes.items if isinstance(stmt.closes, ir.StrList) else (stmt.closes,)
    for close in closes:
        if close.value and close.value in opens:
            report.error(close, f"{word} closer {close} is also an opener")


def _validate_messages(grammar: ir.Grammar, report: Report) -> None:
    messages = grammar.of(ir.MessagesStmt)
    for extra in messages[1:]:
        report.error(extra, f"duplicate `messages` statement (first at line {messages[0].line})")
    for stmt in messages:
        try:
            re.compile(stmt.recipient.pattern)
        except re.error as exc:
            report.error(stmt.recipient, f"invalid regex {stmt.recipient}: {exc}")
            continue
        risk = exponential_risk(stmt.recipient.pattern)
        if risk:
            report.error(
                stmt.recipient,
                f"regex {stmt.recipient} can backtrack without bound on model output: {risk}",
            )
    routes = grammar.of(ir.RouteStmt)
    if routes and not messages and not grammar.of(ir.ExtendsStmt):
        report.error(routes[0], "`route` needs a `messages` statement that says what a header is")
    seen: dict[str, ir.RouteStmt] = {}
    default: ir.RouteStmt | None = None
    for route in routes:
        if route.to.name not in ir.ROUTE_KINDS:
            choices = ", ".join(ir.ROUTE_KINDS)
            report.error(
                route.to,
                f"unknown route `{route.to}`{_suggest(route.to.name, list(ir.ROUTE_KINDS))} "
                f"(routes: {choices})",
            )
        if route.recipients is None:
            if default is not None:
                report.error(route, f"duplicate `route default` (first at line {default.line})")
            default = route
            continue
        for who in ir.strings(route.recipients):
            if who in seen:
                report.error(
                    route, f"recipient {ir.quote(who)} is routed twice (line {seen[who].line})"
                )
            seen.setdefault(who, route)


PROMPT_OPENABLE = (ir.ReasoningStmt, ir.SectionStmt, ir.MessagesStmt, ir.CallStmt)
"""The statements `prompt_opened` may flag: the prompt ends with their opener."""


def _validate_prompt_opened(grammar: ir.Grammar, report: Report) -> None:
    """One statement at most: a prompt ends in one place. A flagged call must open with a
    literal the prompt can have written (a lookahead is the model's own text)."""
    flagged = sorted(
        (s for kind in PROMPT_OPENABLE for s in grammar.of(kind) if s.prompt_opened),
        key=lambda s: (s.line, s.column),
    )
    for extra in flagged[1:]:
        report.error(
            extra, f"`prompt_opened` is a family default; give it once (line {flagged[0].line})"
        )
    for call in grammar.of(ir.CallStmt):
        first = next((i for i in call.items if not _is_ws(i)), None)
        if call.prompt_opened and isinstance(first, ir.Literal) and first.peek:
            report.error(
                call,
                "a `call prompt_opened` must open with a literal the prompt writes, "
                "not a lookahead",
            )


def _is_ws(item: ir.Item) -> bool:
    return isinstance(item, ir.Element) and item.name == "ws"


# --------------------------------------------------------------------------- call


def _validate_call(call: ir.CallStmt, report: Report) -> None:
    if not call.items:
        report.error(call, "`call` has no items")
        return
    known: list[tuple[ir.Element, ir.ElementSig]] = []
    unknown = 0
    for item in call.items:
        if isinstance(item, ir.Element):
            sig = _validate_element(item, report)
            if sig is None:
                unknown += 1
            else:
                known.append((item, sig))
    _validate_opener(call, report)
    _validate_roles(call, known, report, complete=not unknown)
    _validate_repeats(call, report)
    _validate_read_ids(call, known, report)


def _flag(element: ir.Element, word: str) -> bool:
    value = element.arg(word)
    return isinstance(value, ir.Bool) and value.value


def _validate_read_ids(
    call: ir.CallStmt, known: list[tuple[ir.Element, ir.ElementSig]], report: Report
) -> None:
    """`skip(id=true)`: the model's own id of the call, read before its name (the call is
    handed out once its name is known, with its id), once per call, and markup, not prose."""
    ids = [
        e for e in call.items if isinstance(e, ir.Element) and e.name == "skip" and _flag(e, "id")
    ]
    for element in ids:
        if _flag(element, "keep"):
            report.error(
                element, "`skip(id=true)` reads markup, the call's id: it cannot be `keep=true`"
            )
    for extra in ids[1:]:
        report.error(extra, f"a call has one id; another `skip(id=true)` is on line {ids[0].line}")
    names = [e for e, sig in known if sig.gives_name]
    if ids and names:
        position = {id(item): i for i, item in enumerate(call.items)}
        if position[id(ids[0])] > position[id(names[0])]:
            report.error(
                ids[0],
                f"`skip(id=true)` must come before the call's name `{names[0].name}` "
                f"(line {names[0].line}): a call is handed out with its id once its name is known",
            )


def _is_recipient_name(item: ir.Item) -> bool:
    """`name(recipient=true)`: the call's name is its message's recipient."""
    if not (isinstance(item, ir.Element) and item.name == "name"):
        return False
    flag = item.arg("recipient")
    return isinstance(flag, ir.Bool) and flag.value


def _validate_name(element: ir.Element, seen: set[str], report: Report) -> None:
    if "fixed" in seen:
        for word in sorted(seen - {"fixed"}):
            report.error(
                element, f"`{word}=` does not apply to `name(fixed=…)`: the name is not read"
            )
        return
    if not _is_recipient_name(element):
        if "until" not in seen:
            report.error(element, "`name` needs the argument `until=`")
        if "after_last" in seen:
            report.error(element, "`after_last=` applies to `name(recipient=true)` only")
        return
    for word in ("until", "pattern", "id", "doubled", "requested"):
        if word in seen:
            report.error(
                element,
                f"`{word}=` does not apply to `name(recipient=true)`: "
                "the name is the message header's recipient",
            )


def _validate_recipient_calls(grammar: ir.Grammar, report: Report) -> None:
    """A call named by its recipient: opened by a message header, so the family has
    messages, and it is not the family's first `call` (whose opener the text shows)."""
    calls = grammar.of(ir.CallStmt)
    named = [c for c in calls if c.items and _is_recipient_name(c.items[0])]
    for call in named:
        if not grammar.of(ir.MessagesStmt) and not grammar.of(ir.ExtendsStmt):
            report.error(call, "`name(recipient=true)` needs a `messages` statement")
        if call is calls[0]:
            report.error(
                call,
                "a call named by its recipient cannot be the first `call`: "
                "write the call its opener starts first",
            )
        if call.prompt_opened:
            report.error(call, "a call named by its recipient has no opener the prompt can open")
    for call in named[1:]:
        report.error(call, f"a second call named by its recipient (first at line {named[0].line})")


def _validate_opener(call: ir.CallStmt, report: Report) -> None:
    first = call.items[0]
    if _is_recipient_name(first):  # the message header opens it
        return
    for item in call.items[1:]:
        if _is_recipient_name(item):
            report.error(
                item, "`name(recipient=true)` must be the call's first item: the header opens it"
            )
    if not isinstance(first, ir.Literal):
        report.error(first, f"a call must start with a literal marker, not `{first}`")
        return
    for item in call.items:
        if isinstance(item, ir.Literal) and not item.optional:
            return
        if not (isinstance(item, ir.Literal) or _is_ws(item)):
            break
    report.error(
        first,
        "the call has no required opener: its leading literals are all optional; "
        "make one of them required",
    )


def _validate_roles(
    call: ir.CallStmt,
    known: list[tuple[ir.Element, ir.ElementSig]],
    report: Report,
    complete: bool,
) -> None:
    """One arguments item, one name source, name first. When an item word is unknown
    (`complete` False) a missing role is not reported: that word was probably it."""
    dialects = [e for e, sig in known if sig.is_dialect]
    names = [e for e, sig in known if sig.gives_name]
    choices = ", ".join(n for n in sorted(ir.ELEMENTS) if ir.ELEMENTS[n].is_dialect)
    if not dialects and complete:
        report.error(call, f"the call has no arguments item: add one of {choices}")
    for extra in dialects[1:]:
        report.error(
            extra,
            f"a call has one arguments item; `{extra.name}` comes after "
            f"`{dialects[0].name}` (line {dialects[0].line})",
        )
    if not names and complete:
        report.error(
            call, "the call has no function name: add `name(until=...)` or use `json_call`"
        )
    for extra in names[1:]:
        if any(extra is d for d in dialects[1:]):
            continue  # already reported as a second arguments item
        report.error(
            extra,
            f"a call has one name source; `{extra.name}` comes after "
            f"`{names[0].name}` (line {names[0].line})",
        )
    name_items = [e for e in names if e.name == "name"]
    if name_items and dialects:
        first_name, first_dialect = name_items[0], dialects[0]
        position = {id(item): i for i, item in enumerate(call.items)}
        if position[id(first_name)] > position[id(first_dialect)]:
            report.error(
                first_name,
                f"`name(...)` must come before the arguments item `{first_dialect.name}` "
                f"(line {first_dialect.line})",
            )


def _validate_repeats(call: ir.CallStmt, report: Report) -> None:
    for before, item in zip(call.items, call.items[1:]):
        if (
            isinstance(before, ir.Literal)
            and isinstance(item, ir.Literal)
            and not before.optional
            and not item.optional
            and before.texts == item.texts
            and not before.peek
            and not item.peek
            and item.text
        ):
            report.error(item, f"{item} repeats the literal right before it (a typo?)")


def _is_ws(item: ir.Item) -> bool:
    return isinstance(item, ir.Element) and item.name == "ws"


# --------------------------------------------------------------------------- elements


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _validate_element(element: ir.Element, report: Report) -> ir.ElementSig | None:
    """Validate one item's word and arguments; return its signature when the word is known."""
    sig = ir.ELEMENTS.get(element.name)
    if sig is None:
        valid = sorted(ir.ELEMENTS)
        report.error(
            element,
            f"unknown item `{element.name}`{_suggest(element.name, valid)} "
            f"(items: {', '.join(valid)})",
        )
        return None
    seen: set[str] = set()
    for arg in element.args:
        param = sig.params.get(arg.name)
        if param is None:
            if not sig.params:
                report.error(arg, f"`{element.name}` takes no arguments")
                continue
            valid = list(sig.params)
            report.error(
                arg,
                f"unknown argument `{arg.name}` of `{element.name}`{_suggest(arg.name, valid)} "
                f"(arguments: {', '.join(valid)})",
            )
            continue
        if arg.name in seen:
            report.error(arg, f"argument `{arg.name}` is given twice")
        seen.add(arg.name)
        _validate_value(element, arg, param, report)
    for name, param in sig.params.items():
        if param.required and name not in seen:
            report.error(element, f"`{element.name}` needs the argument `{name}=`")
    if element.name == "name":
        _validate_name(element, seen, report)
    if element.name == "xml_params":
        _validate_xml_params(element, report)
    write = element.arg("write")
    if element.name == "ws" and isinstance(write, ir.Str) and not _whitespace(write.value):
        report.error(write, f"`ws(write=...)` writes whitespace only, not {write}")
    for word in ("write_between", "write_before_value"):
        between = element.arg(word)
        if isinstance(between, ir.Str) and not _whitespace(between.value):
            report.error(between, f"`{word}` writes whitespace only, not {between}")
    before = element.arg("write_before_value")
    if before is not None and element.arg("value_open") is None:
        report.error(before, "`write_before_value` needs a `value_open` (else it is the value's)")
    return sig


def _validate_value(element: ir.Element, arg: ir.Arg, param: ir.Param, report: Report) -> None:
    value, t = arg.value, param.type
    accepted = {
        ir.ArgType.STRING: (ir.Str,),
        ir.ArgType.STRINGS: (ir.Str, ir.StrList),
        ir.ArgType.SPELLINGS: (ir.Str, ir.StrList),
        ir.ArgType.REGEX: (ir.Regex,),
        ir.ArgType.BOOL: (ir.Bool,),
        ir.ArgType.INT: (ir.Int,),
        ir.ArgType.HEADER: (ir.Word,),
    }[t]
    if not isinstance(value, accepted):
        report.error(
            value,
            f"`{arg.name}` of `{element.name}` takes {t.value}, got {ir.describe(value)}",
        )
    elif isinstance(value, ir.Word) and value.word != "header":
        report.error(
            value, f"`{arg.name}` of `{element.name}` only accepts `header`, got `{value}`"
        )
    elif isinstance(value, ir.Int) and value.value <= 0:
        report.error(value, f"`{arg.name}` of `{element.name}` must be a positive integer")
    elif isinstance(value, ir.Regex):
        _validate_regex(element, value, param.groups, report)


def _validate_regex(
    element: ir.Element, value: ir.Regex, groups: tuple[str, ...], report: Report
) -> None:
    try:
        compiled = re.compile(value.pattern)
    except re.error as exc:
        report.error(value, f"invalid regex {value}: {exc}")
        return
    for group in groups:
        if group not in compiled.groupindex:
            report.error(value, f"regex {value} needs a group named `{group}`: (?P<{group}>...)")
    if PARAM_REF.search(value.pattern):
        report.error(value, f"regex {value}: `${{...}}` parameters work in strings, not regexes")
    risk = exponential_risk(value.pattern)
    if risk:
        report.error(value, f"regex {value} can backtrack without bound on model output: {risk}")
    if element.name == "xml_params":
        has_text = "text" in compiled.groupindex
        if has_text and element.arg("text_when") is None:
            report.error(
                value,
                "the `text` group needs `text_when=[...]`: the group values that mean raw text",
            )


def _validate_xml_params(element: ir.Element, report: Report) -> None:
    text_when = element.arg("text_when")
    pattern = element.arg("key_pattern")
    if text_when is not None and not (
        isinstance(pattern, ir.Regex) and "(?P<text>" in pattern.pattern
    ):
        report.error(
            text_when, "`text_when` needs a `key_pattern` with a group named `text`: (?P<text>...)"
        )
    trim, strip = element.arg("trim_newline"), element.arg("strip")
    if isinstance(trim, ir.Bool) and isinstance(strip, ir.Bool) and trim.value and strip.value:
        report.error(strip, "`strip=true` already trims newlines; drop `trim_newline`")
    keep = element.arg("keep_last_newline")
    trims = isinstance(trim, ir.Bool) and trim.value
    if isinstance(keep, ir.Bool) and keep.value and not trims:
        report.error(keep, "`keep_last_newline=true` qualifies `trim_newline=true`: add that")


# --------------------------------------------------------------------------- strings


def strings(node: ir.Node) -> Iterator[ir.Node]:
    """Every string-bearing node (Literal, Str) below `node`, in file order."""
    if isinstance(node, (ir.Literal, ir.Str)):
        yield node
    for name in type(node).model_fields:
        value = getattr(node, name)
        children = value if isinstance(value, tuple) else (value,)
        for child in children:
            if isinstance(child, ir.Node):
                yield from strings(child)


def _validate_emptystrings(grammar: ir.Grammar, report: Report) -> None:
    # "" is a fine param default, a fine `text_when` value (an absent flag reads as ""), and
    # a fine route recipient (a header without one)
    allowed = {id(p.default) for p in grammar.of(ir.ParamStmt)}
    for route in grammar.of(ir.RouteStmt):
        if route.recipients is not None:
            allowed |= {id(node) for node in strings(route.recipients)}
    for stmt in grammar.of(ir.RenderStmt):  # "" writes nothing there, as by default
        allowed |= {id(node) for node in strings(stmt)}
    for call in grammar.of(ir.CallStmt):
        for item in call.items:
            value = item.arg("text_when") if isinstance(item, ir.Element) else None
            if value is not None:
                allowed |= {id(node) for node in strings(value)}
    for node in strings(grammar):
        if id(node) in allowed:
            continue
        if isinstance(node, ir.Literal) and not all(node.texts):
            report.error(node, "empty string literal")
        elif isinstance(node, ir.Str) and not node.value:
            report.error(node, "empty string")
    for node in _lists(grammar):
        if not node.items:
            report.error(node, "empty list: give at least one string")


def _lists(node: ir.Node) -> Iterator[ir.StrList]:
    if isinstance(node, ir.StrList):
        yield node
    for name in type(node).model_fields:
        value = getattr(node, name)
        for child in value if isinstance(value, tuple) else (value,):
            if isinstance(child, ir.Node):
                yield from _lists(child)


# --------------------------------------------------------------------------- cross-file


@dataclass(frozen=True)
class Registered:
    """A name a grammar registers (its family or an alias), where it was declared."""

    name: str
    module: str | None  # the module a family generates; None for an alias
    node: ir.Ident
    report: Report


def registered_names(grammar: ir.Grammar, report: Report) -> list[Registered]:
    names = []
    for stmt in grammar.of(ir.FamilyStmt):
        names.append(Registered(stmt.name.name, module_name(stmt.name.name), stmt.name, report))
    for stmt in grammar.of(ir.AliasesStmt):
        names.extend(Registered(a.name, None, a, report) for a in stmt.names)
    return names


def module_name(family: str) -> str:
    """The generated module of a family: `granite-20b-fc` -> `granite_20b_fc`."""
    return family.replace("-", "_")


def validate_registry(names: list[Registered]) -> list[CompileError]:
    """Names registered twice across grammar files (reported at the second one)."""
    errors: list[CompileError] = []
    by_name: dict[str, Registered] = {}
    by_module: dict[str, Registered] = {}
    for entry in names:
        first = by_name.get(entry.name)
        if first is not None and first.report.path != entry.report.path:
            where = f"{first.report.path}:{first.node.line}:{first.node.column}"
            entry.report.error(entry.node, f"`{entry.name}` is already registered by {where}")
            errors.append(entry.report.errors[-1])
        by_name.setdefault(entry.name, entry)
        if entry.module is None:
            continue
        other = by_module.get(entry.module)
        if other is not None and other.name != entry.name:
            where = f"{other.report.path}:{other.node.line}:{other.node.column}"
            entry.report.error(
                entry.node,
                f"family `{entry.name}` generates the same module `{entry.module}.py` "
                f"as `{other.name}` ({where})",
            )
            errors.append(entry.report.errors[-1])
        by_module.setdefault(entry.module, entry)
    return errors
