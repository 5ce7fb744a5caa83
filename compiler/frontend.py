"""Grammar text -> IR, with syntax errors labelled from a table of common mistakes.

lark parses (LALR, contextual lexer, positions kept) and a transformer builds the IR.
Every syntax error of a file is reported (the parse resumes at the next statement), at its
line and column with a caret and,
when it matches one of `MISTAKES`, that entry's plain-words explanation (lark's
`match_examples` idea, keyed on what the parser expected and what it found rather than
on raw parser states, so one example covers every context with the same expectations).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Hashable

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from . import ir
from .errors import CompileError, CompileErrors, error_at

STATEMENTS = (
    "family",
    "aliases",
    "extends",
    "param",
    "reasoning",
    "section",
    "ignore",
    "special",
    "content",
    "citation",
    "messages",
    "route",
    "call",
    "render",
)
KEYWORDS = STATEMENTS + (
    "true",
    "false",
    "prompt_opened",
    "optional",
    "default",
    "calls_inside",
    "join",
)


@dataclass(frozen=True)
class Mistake:
    """A common syntax mistake: its message, and bad snippets that make the parser fail
    the same way. `{token}` in the message is replaced by the offending text."""

    message: str
    examples: tuple[str, ...]
    anywhere: bool = False  # the found token alone decides, whatever was expected
    suggest: tuple[str, ...] = ()  # words to offer for a misspelt `{token}`


UNKNOWN_STATEMENT = Mistake(
    "unknown statement `{token}`: statements are family, aliases, extends, param, "
    "reasoning, section, ignore, special, content, citation, messages, route, call and render",
    ("alias x", "family x alias y", 'family x reasoning "a" "b" sections'),
    suggest=STATEMENTS
    + ("prompt_opened", "optional", "calls_inside"),  # the flags that end a statement
)

MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "single-quoted string: grammar strings use double quotes",
        ("family x call 'a'", "family x reasoning '<think>' \"</think>\""),
    ),
    Mistake(
        'unterminated string: close it with `"` on the same line',
        ('family x call "<a>', 'family x reasoning "<think>'),
    ),
    Mistake(
        "unterminated regex: close it with `/` on the same line (write `\\/` for a slash)",
        ('family x call name(until=">", pattern=/abc',),
    ),
    Mistake(
        'unquoted marker: write literal markers as double-quoted strings, e.g. "<tool_call>"',
        ("family x call <a>", "family x call {", "family x call ws <|a|>"),
    ),
    Mistake(
        "missing `call`: call items must follow the `call` keyword",
        (
            '"<a>"',
            'family x "<a>"',
            "family x ws",
            'family x aliases y "<a>"',
            'family x reasoning "a" "b" "<a>"',
            'family x reasoning ["a"] ["b"] "<a>"',
            'family x section "a" "b" json_args',
        ),
    ),
    UNKNOWN_STATEMENT,
    Mistake(
        "a regex is only allowed as the `pattern=` argument of `name(...)`",
        ("family x call /a/",),
        anywhere=True,
    ),
    Mistake(
        "missing `,` between aliases",
        ("family x aliases a b",),
    ),
    Mistake(
        '`?` can only follow a string literal, to make it optional: "<tool_call>"?',
        (
            "family x call ws?",
            'family x call "a" name(until=">")?',
            'family x call "a"???',
            "family x call json_args ?",
        ),
        anywhere=True,
    ),
    Mistake(
        "keyword arguments are written `key=value`",
        ('family x call name(until ">")', 'family x call name(until: ">")'),
    ),
    Mistake(
        "positional argument: arguments are keyword arguments, written `key=value`",
        ('family x call name(">")', 'family x call name(until=">", "x")'),
    ),
    Mistake(
        "missing `,` between keyword arguments",
        ('family x call name(until=">" pattern=/a/)', 'family x call name(until=">" max_len=3'),
    ),
    Mistake(
        "missing `)`: close the argument list",
        (
            'family x call "<a>" name(until=">" ">"',
            'family x call "<a>" name(until=">"',
            'family x call "<a>" name(until=">", max_len=3 call',
        ),
    ),
    Mistake(
        "missing value after `=`",
        ("family x call name(until=)", "family x call name(until=, max_len=3)"),
    ),
    Mistake(
        "incomplete marker pair: write the opener(s), then the closer(s), "
        'e.g. reasoning "<think>" "</think>"',
        (
            'family x reasoning "a" call',
            'family x section "a"',
            'family x reasoning ["a", "b"] family',
        ),
    ),
)

# --------------------------------------------------------------------------- parser


@cache
def _parser() -> Lark:
    text = resources.files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(
        text,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
    )


def _key(error: UnexpectedInput, anywhere: bool = False) -> Hashable:
    """What makes two syntax errors 'the same mistake': the unexpected character, or the
    unexpected token and (unless `anywhere`) the set of tokens the parser expected."""
    if isinstance(error, UnexpectedCharacters):
        return ("char", error.char)
    assert isinstance(error, UnexpectedToken)
    token = error.token
    is_item_word = token.type == "NAME" and token.value in ir.ELEMENTS
    expected = () if anywhere else tuple(sorted(error.accepts or error.expected))
    return ("token", expected, token.type, is_item_word)


@cache
def _mistake_index() -> dict[Hashable, Mistake]:
    index: dict[Hashable, Mistake] = {}
    for mistake in MISTAKES:
        for example in mistake.examples:
            try:
                _parser().parse(example)
            except UnexpectedInput as error:
                index.setdefault(_key(error, mistake.anywhere), mistake)
            else:  # pragma: no cover - guarded by a test over the table
                raise AssertionError(f"mistake example parses: {example!r}")
    return index


def classify(error: UnexpectedInput) -> Mistake | None:
    """The table entry that matches a syntax error, if any."""
    index = _mistake_index()
    return index.get(_key(error)) or index.get(_key(error, anywhere=True))


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "STRING":
        return f"string {token.value}"
    return f"`{token.value}`"


def _describe_terminal(name: str) -> str:
    names = {"STRING": "a string", "NAME": "a name", "REGEX": "a regex", "INT": "an integer"}
    if name in names:
        return names[name]
    if name == "$END":
        return "end of file"
    if name.lower() in KEYWORDS:
        return f"`{name.lower()}`"
    pattern = _parser().get_terminal(name).pattern
    return f"`{pattern.value}`"


_STATEMENT_START = re.compile(r"[ \t]*(?:" + "|".join(STATEMENTS) + r")(?![\w\-])")


def syntax_errors(text: str, path: str, first: UnexpectedInput) -> list[CompileError]:
    """Every syntax error of the file, the parser resuming after each one where it can: at
    the next line that begins a statement (a statement keyword first on its line). The lines
    before that point are blanked, so the positions stay those of the file."""
    errors = [_syntax_error(first, text, path)]
    lines = text.split("\n")
    error: UnexpectedInput | None = first
    while error is not None:
        resume = _resume_line(lines, error)
        if resume is None:
            break
        rest = "\n" * resume + "\n".join(lines[resume:])
        try:
            _parser().parse(rest)
        except UnexpectedInput as again:
            if (again.line, again.column) <= (error.line, error.column):
                break  # no progress: nothing more to say
            errors.append(_syntax_error(again, text, path))
            error = again
        else:
            error = None
    return errors


def _resume_line(lines: list[str], error: UnexpectedInput) -> int | None:
    """The 0-based index of the line to resume on after `error`: the next line that begins a
    statement; the error's own line when the error is that line's statement keyword (the
    statement before it was unfinished: `reasoning "a"` then `call …`)."""
    here = error.line - 1
    start = _STATEMENT_START.match(lines[here]) if 0 <= here < len(lines) else None
    if start is not None and error.column - 1 <= len(start[0]) - len(start[0].lstrip()):
        return here
    return next(
        (i for i in range(max(here + 1, 0), len(lines)) if _STATEMENT_START.match(lines[i])), None
    )


def _name_rule(error: UnexpectedInput, text: str) -> tuple[int, str] | None:
    """A name after `family`, `aliases` or `extends` that holds what no name may
    (`family Solar.Open`, `family 9x`): the word's column and the naming rule, said with
    the whole word."""
    from .validate import NAME_RULE

    lines = text.split("\n")
    line = lines[error.line - 1] if 0 < error.line <= len(lines) else ""
    head = re.match(r"[ \t]*(family|aliases|extends)[ \t]+", line)
    at = error.column - 1
    if head is None or at < head.end():
        return None
    start = max(line.rfind(c, 0, at) for c in " \t,") + 1
    end = min((i for i in (line.find(c, at) for c in " \t,#") if i >= 0), default=len(line))
    word = line[start:end]
    bad_char = isinstance(error, UnexpectedCharacters) or (
        isinstance(error, UnexpectedToken) and error.token.type == "INT"
    )
    # the name itself: the word right after the keyword, or an item of the alias list
    listed = re.fullmatch(r"(?:[A-Za-z0-9_\-]+[ \t]*,[ \t]*)*", line[head.end() : start])
    if not word or not bad_char or listed is None or (head[1] != "aliases" and start != head.end()):
        return None
    what = {"family": "family name", "aliases": "alias", "extends": "family name"}[head[1]]
    return start + 1, f"invalid {what} `{word}`: {NAME_RULE}"


def _syntax_error(error: UnexpectedInput, text: str, path: str) -> CompileError:
    line, column = error.line, error.column
    rule = _name_rule(error, text)
    if rule is not None:
        return error_at(path, text, max(line, 1), *rule)
    if isinstance(error, UnexpectedToken):
        token = error.token
        found = _describe_token(token)
        if token.type == "$END":  # lark borrows the last token's position; point after it
            line, column = token.end_line or 1, token.end_column or 1
        expected = sorted(_describe_terminal(t) for t in (error.accepts or error.expected))
        generic = f"unexpected {found}; expected " + ", ".join(expected)
        word = token.value if token.type == "NAME" else ""
    else:
        assert isinstance(error, UnexpectedCharacters)
        found = repr(error.char)
        generic = f"unexpected character {found}"
        word = ""
    mistake = classify(error)
    if word and column == 1 and word not in KEYWORDS:
        mistake = UNKNOWN_STATEMENT  # a word that starts a line starts a statement
    if mistake is None:
        return error_at(path, text, max(line, 1), max(column, 1), generic)
    message = mistake.message.replace("{token}", word or found)
    close = difflib.get_close_matches(word, mistake.suggest, n=1) if word else []
    if close and mistake is UNKNOWN_STATEMENT and close[0] not in STATEMENTS:
        message = f"unexpected `{word}`; did you mean `{close[0]}`?"  # a misspelt flag
    elif close:
        message += f"; did you mean `{close[0]}`?"
    return error_at(path, text, max(line, 1), max(column, 1), message)


# --------------------------------------------------------------------------- IR building


class _BadToken(Exception):
    """A token that lexed but does not decode (bad escape, lone surrogate)."""

    def __init__(self, token: Token, offset: int, message: str) -> None:
        super().__init__(message)
        self.token, self.offset, self.message = token, offset, message


def _decode_string(token: Token) -> str:
    try:
        value = json.loads(token.value, strict=False)  # strict=False: raw tabs are fine
    except json.JSONDecodeError as exc:
        raise _BadToken(token, exc.pos, f"invalid string escape: {exc.msg.lower()}") from None
    for ch in value:
        if "\ud800" <= ch <= "\udfff":
            raise _BadToken(token, 0, f"string contains a lone surrogate \\u{ord(ch):04x}")
    return value


def _optional(qmark: tuple[Token | None, ...]) -> dict[str, bool]:
    """A literal's `?` (optional) or `??` (optional, left out by render)."""
    mark = next((q for q in qmark if q is not None), None)
    return {"optional": mark is not None, "lazy": mark is not None and mark.type == "LAZY"}


def _pos(token_or_meta: Any) -> dict[str, int]:
    return {"line": token_or_meta.line, "column": token_or_meta.column}


@v_args(inline=True)
class _ToIR(Transformer):
    """lark tree -> IR nodes; each node takes the position of its first character."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[_BadToken] = []

    def _str(self, token: Token) -> ir.Str:
        try:
            value = _decode_string(token)
        except _BadToken as bad:
            self.errors.append(bad)
            value = ""
        return ir.Str(value=value, **_pos(token))

    # values
    def string(self, token: Token) -> ir.Str:
        return self._str(token)

    @v_args(meta=True)
    def string_list(self, meta: Any, children: list[Token | None]) -> ir.StrList:
        items = tuple(self._str(t) for t in children if t is not None)
        return ir.StrList(items=items, **_pos(meta))

    def regex(self, token: Token) -> ir.Regex:
        return ir.Regex(pattern=ir.unescape_regex(token.value[1:-1]), **_pos(token))

    def int(self, token: Token) -> ir.Int:
        return ir.Int(value=int(token.value), **_pos(token))

    @v_args(meta=True)
    def true(self, meta: Any, _: list[Any]) -> ir.Bool:
        return ir.Bool(value=True, **_pos(meta))

    @v_args(meta=True)
    def false(self, meta: Any, _: list[Any]) -> ir.Bool:
        return ir.Bool(value=False, **_pos(meta))

    def word(self, token: Token) -> ir.Word:
        return ir.Word(word=token.value, **_pos(token))

    # items
    def literal(self, token: Token, *qmark: Token | None) -> ir.Literal:
        text = self._str(token).value
        return ir.Literal(text=text, **_optional(qmark), **_pos(token))

    def literal_choice(self, choices: ir.StrList, *qmark: Token | None) -> ir.Literal:
        texts = [s.value for s in choices.items] or [""]
        return ir.Literal(
            text=texts[0],
            alternatives=tuple(texts[1:]),
            **_optional(qmark),
            lines=tuple(s.line for s in choices.items),
            line=choices.line,
            column=choices.column,
        )

    def peek(self, token: Token) -> ir.Literal:
        literal = self.literal(token)
        return literal.model_copy(update={"peek": True, "column": literal.column - 1})

    def peek_choice(self, choices: ir.StrList) -> ir.Literal:
        literal = self.literal_choice(choices)
        return literal.model_copy(update={"peek": True, "column": literal.column - 1})

    def bare_element(self, name: Token) -> ir.Element:
        return ir.Element(name=name.value, **_pos(name))

    def element(self, name: Token, *args: ir.Arg | None) -> ir.Element:
        given = tuple(a for a in args if a is not None)
        return ir.Element(name=name.value, args=given, **_pos(name))

    def arg(self, name: Token, value: ir.Node) -> ir.Arg:
        return ir.Arg(name=name.value, value=value, **_pos(name))

    # statements
    @v_args(meta=True)
    def family(self, meta: Any, children: list[Token]) -> ir.FamilyStmt:
        _, name = children
        return ir.FamilyStmt(name=ir.Ident(name=name.value, **_pos(name)), **_pos(meta))

    @v_args(meta=True)
    def aliases(self, meta: Any, children: list[Token]) -> ir.AliasesStmt:
        names = tuple(ir.Ident(name=t.value, **_pos(t)) for t in children[1:])
        return ir.AliasesStmt(names=names, **_pos(meta))

    @v_args(meta=True)
    def extends(self, meta: Any, children: list[Token]) -> ir.ExtendsStmt:
        _, name = children
        return ir.ExtendsStmt(name=ir.Ident(name=name.value, **_pos(name)), **_pos(meta))

    @v_args(meta=True)
    def param(self, meta: Any, children: list[Token]) -> ir.ParamStmt:
        _, name, default = children
        return ir.ParamStmt(
            name=ir.Ident(name=name.value, **_pos(name)), default=self._str(default), **_pos(meta)
        )

    @v_args(meta=True)
    def reasoning(self, meta: Any, children: list[Any]) -> ir.ReasoningStmt:
        _, opens, closes, flag, inside = children
        return ir.ReasoningStmt(
            opens=opens,
            closes=closes,
            prompt_opened=flag is not None,
            calls_inside=inside is not None,
            **_pos(meta),
        )

    @v_args(meta=True)
    def section(self, meta: Any, children: list[Any]) -> ir.SectionStmt:
        _, opens, closes, flag, opened = children
        return ir.SectionStmt(
            opens=opens,
            closes=closes,
            optional=flag is not None,
            prompt_opened=opened is not None,
            **_pos(meta),
        )

    @v_args(meta=True)
    def messages(self, meta: Any, children: list[Any]) -> ir.MessagesStmt:
        _, header, recipient, fields, header_end, ends, opened, _, join = children
        return ir.MessagesStmt(
            header=header,
            recipient=self.regex(recipient),
            fields=fields,
            header_end=self._str(header_end),
            ends=ends,
            prompt_opened=opened is not None,
            join=self._str(join) if join is not None else None,
            **_pos(meta),
        )

    @v_args(meta=True)
    def route(self, meta: Any, children: list[Any]) -> ir.RouteStmt:
        _, who, to = children
        recipients = None if isinstance(who, Token) and who.type == "DEFAULT" else who
        return ir.RouteStmt(
            recipients=recipients, to=ir.Ident(name=to.value, **_pos(to)), **_pos(meta)
        )

    @v_args(meta=True)
    def ignore(self, meta: Any, children: list[Any]) -> ir.IgnoreStmt:
        _, found = children
        return ir.IgnoreStmt(markers=found, **_pos(meta))

    @v_args(meta=True)
    def special(self, meta: Any, children: list[Any]) -> ir.SpecialStmt:
        _, found = children
        return ir.SpecialStmt(markers=found, **_pos(meta))

    @v_args(meta=True)
    def content(self, meta: Any, children: list[Any]) -> ir.ContentStmt:
        _, opens, *closes = children  # `[_markers]` leaves no placeholder when absent
        return ir.ContentStmt(opens=opens, closes=closes[0] if closes else None, **_pos(meta))

    @v_args(meta=True)
    def citation(self, meta: Any, children: list[Any]) -> ir.CitationStmt:
        _, opens, closes, end = children
        return ir.CitationStmt(opens=opens, closes=closes, end=end, **_pos(meta))

    @v_args(meta=True)
    def call(self, meta: Any, children: list[Any]) -> ir.CallStmt:
        _, opened, *items = children
        return ir.CallStmt(items=tuple(items), prompt_opened=opened is not None, **_pos(meta))

    @v_args(meta=True)
    def render(self, meta: Any, children: list[Any]) -> ir.RenderStmt:
        _, *args = children
        return ir.RenderStmt(args=tuple(args), **_pos(meta))

    def start(self, *statements: Any) -> tuple[Any, ...]:
        return statements


def leading_comments(text: str) -> tuple[str, ...]:
    """The comment block at the top of a file, without the `#` and one space."""
    doc = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line.startswith("#"):
            break
        body = line[1:]
        doc.append((body[1:] if body.startswith(" ") else body).rstrip())
    return tuple(doc)


def parse_grammar(text: str, path: str) -> ir.Grammar:
    """Parse one grammar file into IR; raise `CompileErrors` with every syntax error of
    the file (`syntax_errors`)."""
    text = text.removeprefix("\ufeff")
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        raise CompileErrors(syntax_errors(text, path, error)) from None
    builder = _ToIR()
    try:
        statements = builder.transform(tree)
    except VisitError as exc:  # pragma: no cover - a bug in the transformer, not in the grammar
        raise exc.orig_exc from exc
    if builder.errors:
        raise CompileErrors(
            error_at(path, text, bad.token.line, bad.token.column + bad.offset, bad.message)
            for bad in builder.errors
        )
    return ir.Grammar(doc=leading_comments(text), statements=statements, line=1, column=1)
