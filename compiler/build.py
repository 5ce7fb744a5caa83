"""Build glue: grammars/*.tg -> generated/*.py, or compare generated/ with a fresh build.

Every file is parsed and validated before anything is written, and errors of all files
are raised together. Writing only touches files whose bytes change, and deletes only
files that carry the @generated mark; compare mode writes nothing and reports a diff.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import toolgrammar.generated
import toolgrammar.grammars
from toolgrammar.runtime.spec import FamilySpec

from . import emit, ir, lower, validate
from .render_check import render_warnings
from .errors import CompileError, CompileErrors
from .frontend import parse_grammar
from .inherit import Source, resolve


@dataclass
class BuildResult:
    """What a build did (write mode) or found (compare mode).

    Files are output paths as `display_path` shows them. In compare mode `stale` lists
    every file that differs from a fresh build (changed, missing or extra), and
    `missing`/`extra` say which of them are absent or have no grammar any more.
    """

    specs: list[FamilySpec] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    diff: str = ""
    warnings: list[CompileError] = field(default_factory=list)  # built, but see these

    @property
    def clean(self) -> bool:
        """True when compare mode found the output current."""
        return not self.stale


@dataclass(frozen=True)
class _Unit:
    """One grammar file on its way through the pipeline."""

    shown: str  # the path in error messages
    source: str  # the path recorded in the spec: <grammars dir name>/<file>
    text: str
    sha256: str


def display_path(path: Path) -> str:
    """`path` as errors show it: relative to the working directory when below it."""
    if path.is_absolute():
        try:
            return path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return path.as_posix()
    return path.as_posix()


def compile_grammar_text(
    text: str,
    path: str,
    grammars_dir: Path | None = None,
    warnings: list[CompileError] | None = None,
) -> str:
    """Compile one grammar held in memory; `path` names it in errors and in the output.
    A grammar that `extends` another finds it in `grammars_dir` (default: the installed
    grammars). Warnings (the build goes on) are added to `warnings`, when given."""
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    library = _read_units(grammars_dir or default_paths()[0]) if "extends" in text else []
    ((spec, code),) = _compile([_Unit(path, path, text, sha)], library, warnings)
    return code


def _parse_and_validate(unit: _Unit, errors: list[CompileError]) -> Source | None:
    try:
        grammar = parse_grammar(unit.text, unit.shown)
    except CompileErrors as exc:
        errors.extend(exc.errors)
        return None
    report = validate.Report(unit.shown, unit.text)
    validate.validate_grammar(grammar, unit.text, unit.shown, report)
    if not grammar.of(ir.ExtendsStmt):  # a child's params are validated once merged
        validate.validate_params(grammar, report)
    errors.extend(report.errors)
    return None if report.errors else Source(unit.source, grammar, report)


def _compile(
    units: list[_Unit],
    library: Sequence[_Unit] = (),
    warnings: list[CompileError] | None = None,
) -> list[tuple[FamilySpec, str]]:
    """Parse and validate every unit, then emit them; raise all errors of all units at once.
    `library` units are only there to be extended: parsed, never emitted. Warnings go to
    `warnings`, when given."""
    errors: list[CompileError] = []
    parsed: list[tuple[_Unit, Source]] = []
    table: dict[str, Source] = {}
    for unit in library:
        source = _parse_and_validate(unit, [])
        if source is not None:
            table[source.grammar.of(ir.FamilyStmt)[0].name.name] = source
    registered: list[validate.Registered] = []
    for unit in units:
        source = _parse_and_validate(unit, errors)
        if source is not None:
            parsed.append((unit, source))
            table[source.grammar.of(ir.FamilyStmt)[0].name.name] = source
            registered += validate.registered_names(source.grammar, source.report)
    built = []
    before = {id(source): len(source.report.errors) for _, source in parsed}
    for unit, source in parsed:
        result = resolve(source, table)  # errors land in the report of the file they are in
        if result is not None and source.grammar.of(ir.ExtendsStmt):
            validate.validate_params(result.grammar, source.report)
        if result is not None:
            built.append((unit, source, result))
    for _, source in parsed:
        errors.extend(source.report.errors[before[id(source)] :])
    built = [(u, r) for u, source, r in built if len(source.report.errors) == before[id(source)]]
    errors.extend(validate.validate_registry(registered))
    if errors:
        raise CompileErrors(errors)
    results = []
    for unit, result in built:
        spec = lower.lower(result.grammar, unit.source, unit.sha256, result.origins)
        if warnings is not None:
            warnings += render_warnings(spec, unit.shown, unit.text)
        view = lower.family_view(result.grammar, spec, result.origins)
        results.append((spec, emit.render_family(view, unit.source)))
    return results


def _read_units(grammars_dir: Path) -> list[_Unit]:
    units, errors = [], []
    dir_name = grammars_dir.resolve().name
    for path in sorted(grammars_dir.glob("*.tg")):
        data = path.read_bytes()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            errors.append(CompileError(display_path(path), 1, 1, f"not UTF-8: {exc.reason}"))
            continue
        sha = hashlib.sha256(data).hexdigest()
        units.append(_Unit(display_path(path), f"{dir_name}/{path.name}", text, sha))
    if errors:
        raise CompileErrors(errors)
    return units


def expected_outputs(
    grammars_dir: Path, out_dir: Path, warnings: list[CompileError] | None = None
) -> tuple[dict[Path, str], list[FamilySpec]]:
    """Every file a fresh build would write, with its text, and the lowered specs."""
    compiled = _compile(_read_units(grammars_dir), warnings=warnings)
    outputs = {}
    for spec, code in compiled:
        outputs[out_dir / f"{validate.module_name(spec.name)}.py"] = code
    specs = [spec for spec, _ in compiled]
    init = lower.init_view(specs, grammars_dir.resolve().name)
    outputs[out_dir / "__init__.py"] = emit.render_init(init)
    return outputs, specs


def _is_generated(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as f:
            return f.readline().startswith(lower.GENERATED_MARK)
    except (OSError, UnicodeDecodeError):
        return False


def build(grammars_dir: Path, out_dir: Path, *, compare_only: bool = False) -> BuildResult:
    """Compile every grammar into `out_dir`, or (`compare_only`: `toolgrammar build --check`)
    compare a fresh build with it and report what is out of date, writing nothing."""
    grammars_dir, out_dir = Path(grammars_dir), Path(out_dir)
    warnings: list[CompileError] = []
    outputs, specs = expected_outputs(grammars_dir, out_dir, warnings)
    result = BuildResult(specs=specs, warnings=warnings)
    leftovers = sorted(p for p in out_dir.glob("*.py") if p not in outputs and _is_generated(p))
    diffs: list[str] = []
    for path, code in sorted(outputs.items()):
        shown, old = display_path(path), _read(path)
        if old == code:
            result.unchanged.append(shown)
        elif compare_only:
            result.stale.append(shown)
            if old is None:
                result.missing.append(shown)
            diffs.append(_diff(shown, old or "", code))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(code.encode("utf-8"))
            result.written.append(shown)
    for path in leftovers:
        shown = display_path(path)
        if compare_only:
            result.stale.append(shown)
            result.extra.append(shown)
            diffs.append(_diff(shown, _read(path) or "", ""))
        else:
            path.unlink()
            result.deleted.append(shown)
    result.diff = "".join(diffs)
    return result


def _read(path: Path) -> str | None:
    """The exact text of a file (no newline translation), or None when absent/unreadable."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _diff(name: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{name} (on disk)",
        tofile=f"{name} (fresh build)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def default_paths() -> tuple[Path, Path]:
    """(grammars dir, generated dir) of the installed toolgrammar package."""
    return Path(toolgrammar.grammars.__path__[0]), Path(toolgrammar.generated.__path__[0])
