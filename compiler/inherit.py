"""`extends NAME`: a grammar built on another family's grammar.

Families that share a markup differ in a marker or two (seed_oss wraps Qwen3's calls in
`<seed:tool_call>`, step3p5's prompt opens the reasoning). A child grammar states only
what differs: each `reasoning`, `section`, `ignore`, `special`, `content`, `messages`, `route` or `call` statement
it gives replaces
every inherited statement of that kind, a `param` overrides the parent's param of the
same name (an inherited param no statement of the result uses any more is left out), and
`family`/`aliases` are never inherited. The result is an ordinary grammar
that lowers like any other; `origins` remembers which file each inherited statement
came from, so generated comments cite the right grammar line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from . import ir
from .validate import PARAM_REF, Report, strings

REPLACED = (
    ir.ReasoningStmt,
    ir.SectionStmt,
    ir.IgnoreStmt,
    ir.SpecialStmt,
    ir.ContentStmt,
    ir.CitationStmt,
    ir.MessagesStmt,
    ir.RouteStmt,
    ir.CallStmt,
    ir.RenderStmt,
)


@dataclass(frozen=True)
class Source:
    """A parsed, checked grammar file and where it lives."""

    path: str  # as recorded in specs: <grammars dir name>/<file>
    grammar: ir.Grammar
    report: Report


@dataclass
class Built:
    """A grammar with everything it inherits, and the file of each inherited statement."""

    grammar: ir.Grammar
    origins: dict[int, str] = field(default_factory=dict)  # id(statement) -> source path

    def origin(self, stmt: ir.Node, default: str) -> str:
        return self.origins.get(id(stmt), default)


def resolve(source: Source, table: dict[str, Source]) -> Built | None:
    """`source` with its ancestors merged in; None (errors in its report) when a parent
    is unknown or the chain loops."""
    chain = [source]
    while True:
        extends = chain[-1].grammar.of(ir.ExtendsStmt)
        if not extends:
            break
        stmt = extends[0]
        parent = table.get(stmt.name.name)
        if parent is None:
            close = difflib.get_close_matches(stmt.name.name, sorted(table), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            chain[-1].report.error(stmt.name, f"`extends {stmt.name}`: no such family{hint}")
            return None
        if any(parent is seen for seen in chain):
            names = " -> ".join(_family(s) for s in (*chain, parent))
            chain[-1].report.error(stmt.name, f"`extends` loops: {names}")
            return None
        chain.append(parent)
    built = Built(chain[-1].grammar)
    for parent, child in zip(reversed(chain), list(reversed(chain))[1:]):
        built = _merge(child.grammar, built, parent.path)
    return built


def _family(source: Source) -> str:
    return source.grammar.of(ir.FamilyStmt)[0].name.name


def _merge(child: ir.Grammar, parent: Built, parent_path: str) -> Built:
    origins: dict[int, str] = {}

    def inherit(stmts: list[ir.Node]) -> list[ir.Node]:
        for stmt in stmts:
            origins[id(stmt)] = parent.origin(stmt, parent_path)
        return stmts

    own = [s for s in child.statements if isinstance(s, (ir.FamilyStmt, ir.AliasesStmt))]
    own += child.of(ir.ExtendsStmt)
    params = {p.name.name: p for p in inherit(parent.grammar.of(ir.ParamStmt))}
    for param in child.of(ir.ParamStmt):
        origins.pop(id(params.get(param.name.name)), None)
        params[param.name.name] = param
    statements: list[ir.Node] = []
    for kind in REPLACED:
        statements += child.of(kind) or inherit(parent.grammar.of(kind))
    used = {
        name
        for stmt in statements
        for node in strings(stmt)
        for name in PARAM_REF.findall(getattr(node, "text", None) or getattr(node, "value", ""))
    }
    # a param the child's own statements replaced every use of is the parent's alone
    kept = [p for p in params.values() if p.name.name in used or id(p) not in origins]
    statements = own + kept + statements
    merged = ir.Grammar.model_construct(
        doc=child.doc, statements=tuple(statements), line=1, column=1
    )
    return Built(merged, origins)
