"""`toolgrammar check`: a grammar proves the invariants of docs/invariants.md on itself.

The checker writes random outputs for random tools in the family's own markup (the
renderer, `runtime/render.py`), then checks, for each:
- round trip: the written calls parse back to the same names and arguments, and the
  content written around them comes back; coercion: every value comes back with the
  JSON type written (a string parameter holding "42" stays a string);
- prefix, termination, parity and nothing lost at cut points of the output, each under
  1-char, random and whole splittings (`toolgrammar.check.invariants.check_text`);
- kept and promptness: one watched value per family (`probes.py`);
- bad input: mutated outputs (spans deleted, doubled, swapped), markup soup, a 10 MB
  value (bounded state) and JSON nested 10,000 deep never raise, stay at parity and
  terminate;
- export: every sample is accepted by the family's exported grammar (lark with native and
  rule JSON, GBNF; every mode that admits it: `auto`, `required` when it has no content,
  `named:TOOL` when it calls only that tool), and random walks of the export through
  llguidance (`exports.py`, shared with tests/test_export.py) end, parse back to calls
  that are schema-valid and survive a render (export walks). One round of walks always runs,
  more while the budget lasts. Without llguidance (the test extra) the export is not
  checked and the run fails saying so, with the install that has it.

A violation is reported with the exact text, the split, the invariant and a replay
seed, after shrinking the text while the violation persists. An export's rejection shrinks
to a smaller output the renderer writes for the request's tools, and names the grammar line
the parser reads where the export stops and the export rules made from it that refuse the
byte there (`rule  = …`); a walk shrinks while the export accepts it and the parser reads it
with the same problem.
- template: the family's rows of `grammars/templates.toml` round-trip through the model's
  own chat templates (`templates.py`), each finding exactly what its row declares
  `known`; skipped, and said why, when the templates were not fetched
  (`python scripts/fetch_templates.py`) or the family has no row.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import parse
from ..export import ExportError, export_grammar
from .helpers import clip, mutate_span
from .invariants import Violation, check_text, run, shrink
from .probes import (
    deep_json_outputs,
    hold_allowance,
    probe_big_value,
    probe_kept,
    probe_promptness,
    probe_prose_endings,
    random_soup,
    survives,
    value_site,
)
from ..runtime.params import with_params
from ..runtime.registry import get_spec
from ..runtime.render import RenderError, render_output
from ..runtime.dialects import markup_literals
from ..runtime.spec import FamilySpec
from .templates import (
    TemplateReport,
    check_row,
    family_rows,
    missing_row,
    no_template_reason,
    row_holds,
    row_problems,
)

try:  # llguidance (the test extra) runs the exported grammars; without it the proof is skipped
    from .exports import (
        accepts,
        closing_markers,
        closing_walk,
        faulty_rules,
        grammar_line_at,
        matcher,
        rejection,
        validates,
        walk_problem,
    )
except ImportError as missing:
    EXPORT_MISSING: ImportError | None = missing
else:
    EXPORT_MISSING = None
# what to do about it: the authoring install (README, "Adding a family")
EXPORT_UNCHECKED = (
    "llguidance is not installed; the authoring install has it: pip install -e '.[compiler,test]'"
)

# samples the renderer fails on in a row, none written yet, before the run stops and says why
GIVE_UP = 200
ALPHABET = list("abcxyz XYZ019.,:;-_/") + [
    '"', "\\", "'", "<", ">", "{", "}", "[", "]", "\n", "\t", "é", "中", "😀", "\u2028", "&", "=",
]  # fmt: skip
INVARIANTS = (
    "round trip",
    "coercion",
    "prefix",
    "termination",
    "parity",
    "utf-8",
    "nothing lost",
    "kept",
    "promptness",
    "bad input",
    "export",
    "export walks",
    "template",
)
# strings a careless coercion would type: a string parameter must keep them as strings
COERCION_BAIT = ["42", "-1.5", "true", "false", "null", "[1, 2]", '{"a": 1}', " 7 ", "0x1F", ""]
DEEP = 10_000  # nesting of the deep-JSON inputs
BIG = 10 * 1024 * 1024  # characters of the big value


@dataclass
class Finding:
    """One violation, shrunk, with what replays it."""

    invariant: str
    text: str
    split: list[int]
    detail: str
    seed: int  # the run's seed: the same seed writes the same samples in the same order
    sample: int = 0  # which sample of that run
    rule: str = ""  # an export finding: the export rules at fault and their grammar line

    def __str__(self) -> str:
        rule = f"  rule  = {self.rule}\n" if self.rule else ""
        return (
            f"[{self.invariant}] {clip(self.detail)}\n  text  = {clip(repr(self.text))}\n"
            f"  split = {clip(str(self.split))}\n{rule}"
            f"  replay: --seed {self.seed} (sample {self.sample})"
        )


@dataclass
class CheckReport:
    family: str
    seed: int
    samples: int = 0
    cuts: int = 0
    inputs: int = 0  # bad inputs tried (mutants, soup, the big value, deep JSON)
    seconds: float = 0.0
    checked: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INVARIANTS, 0))
    failed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INVARIANTS, 0))
    findings: dict[str, Finding] = field(default_factory=dict)
    # why the template round trip did not run (None: it ran, or the family has rows to run)
    template_skipped: str | None = None
    unwritten: str = ""  # why the renderer could not write the last sample it failed on
    no_samples: str | None = None  # why no sample at all was written: a failed check

    @property
    def ok(self) -> bool:
        """Every proof ran and held: a proof that could not run (no llguidance for the
        export) is not a pass."""
        return not any(self.failed.values()) and self.no_samples is None and not self.incomplete

    @property
    def incomplete(self) -> bool:
        return EXPORT_MISSING is not None

    def summary(self) -> str:
        lines = [
            f"{self.family}: {self.samples} samples, {self.cuts} cut points "
            f"(x 3 splittings), {self.inputs} bad inputs, {self.seconds:.1f} s, seed {self.seed}"
        ]
        if self.no_samples is not None:
            lines.append(
                "  FAILED: the renderer wrote no sample of this family's markup, so the "
                f"invariants had nothing to run on: {self.no_samples}"
            )
        for name in INVARIANTS:
            if self.failed[name]:
                state = f"{self.failed[name]} FAILED"
            elif name.startswith("export") and EXPORT_MISSING is not None:
                state = f"NOT CHECKED: {EXPORT_UNCHECKED} ({EXPORT_MISSING})"
            elif name == "template" and self.template_skipped is not None:
                state = f"skipped ({self.template_skipped})"
            else:  # nothing checked is not a pass: the probe found nothing to run on
                state = "ok" if self.checked[name] else "skipped (nothing to check)"
            lines.append(f"  {name:<12} {self.checked[name]:>7} checked  {state}")
        for finding in self.findings.values():
            lines.append(str(finding))
        if self.incomplete:
            lines.append(f"FAILED: the export was not checked: {EXPORT_UNCHECKED}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- samples


def random_tools(rng: random.Random) -> list[dict[str, Any]]:
    """Three tools with properties of every schema kind (unions and `$ref` included)."""
    kinds: list[dict[str, Any]] = [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
        {"type": "string", "enum": ["red", "green", "blue"]},
        {"type": "array", "items": {"type": "string"}},
        {"type": "array", "items": {"type": "integer"}},
        {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}},
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        {"$ref": "#/$defs/level"},
    ]
    tools = []
    for number in range(3):
        props = {f"p{i}": rng.choice(kinds) for i in range(rng.randint(1, 5))}
        parameters = {
            "type": "object",
            "properties": props,
            "$defs": {"level": {"type": "integer", "minimum": 0}},
        }
        name = rng.choice(["get_weather", "write_file", "run.cmd", "t"]) + f"_{number}"
        tools.append({"type": "function", "function": {"name": name, "parameters": parameters}})
    return tools


def many_tools(rng: random.Random, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools` among hundreds to thousands more: names that share a prefix with theirs
    (a name still arriving matches many), and others; a serving stack sends whole
    catalogues, and a check against the list must not cost its length per character."""
    count = rng.choice([200, 1000, 3000])
    prefixes = [tool["function"]["name"] for tool in tools] + ["tool", "get", "x"]
    extra = [
        {
            "type": "function",
            "function": {
                "name": f"{rng.choice(prefixes)}_{number}",
                "parameters": {"type": "object", "properties": {"v": {"type": "integer"}}},
            },
        }
        for number in range(count)
    ]
    at = rng.randint(0, len(extra))
    return extra[:at] + tools + extra[at:]


def _text(rng: random.Random, markers: frozenset[str], size: int = 30) -> str:
    """Text with quotes, escapes, non-ASCII and markup-like characters, but no marker."""
    while True:
        length = rng.choice([0, 1, 5, size, size]) if size else 0
        if rng.random() < 0.05:
            length = rng.randint(200, 2000)
        text = "".join(rng.choice(ALPHABET) for _ in range(length))
        if not any(m in text for m in markers if len(m) > 1):
            return text


def _value(schema: dict[str, Any], rng: random.Random, markers: frozenset[str]) -> Any:
    if "$ref" in schema:
        return rng.randint(0, 10**6)
    if "anyOf" in schema:  # a string that cannot be read as an integer
        return rng.randint(-99, 99) if rng.random() < 0.5 else "v" + _text(rng, markers, 8)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        return rng.randint(-(10**12), 10**12)
    if kind == "number":
        return rng.choice([0.5, -1.25, 3.0, 1e-07, 12345.678])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        return [_value(schema["items"], rng, markers) for _ in range(rng.randint(0, 3))]
    if kind == "object":
        props = schema["properties"]
        return {k: _value(v, rng, markers) for k, v in props.items() if rng.random() < 0.7}
    if rng.random() < 0.15:
        return rng.choice(COERCION_BAIT)
    return _text(rng, markers)


@dataclass
class Sample:
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    content: str
    reasoning: str | None
    options: dict[str, Any]
    seed: int


def make_sample(spec: FamilySpec, tools: list[dict[str, Any]], seed: int) -> Sample | None:
    """One random output in the family's markup, or None when the markup cannot write it."""
    sample = sample_or_why(spec, tools, seed)
    return sample if isinstance(sample, Sample) else None


def sample_or_why(spec: FamilySpec, tools: list[dict[str, Any]], seed: int) -> Sample | str:
    """One random output in the family's markup, or why the renderer cannot write it (the
    `RenderError`, which names the grammar line of an item it cannot fill)."""
    rng = random.Random(seed)
    markers = markup_literals(spec)
    calls = []
    for _ in range(rng.randint(1, 3)):
        tool = rng.choice(tools)["function"]
        props = tool["parameters"]["properties"]
        args = {k: _value(v, rng, markers) for k, v in props.items() if rng.random() < 0.8}
        calls.append((tool["name"], args))
    # prose is a sentence: whitespace next to markup is markup, a trailing `{` may open a call
    content = rng.choice(["", "Sure, checking.", "Let me see: a < b & c > d."])
    reasoning = rng.choice([None, None, "I should call the tool.", ""]) if spec.reasoning else None
    try:
        text = render_output(spec, calls, content=content or None, reasoning=reasoning)
    except RenderError as error:
        return str(error)
    options = {"reasoning_open": False} if reasoning is None else {}
    return Sample(text, calls, content, reasoning, options, seed)


# --------------------------------------------------------------------------- checking


def _round_trip(family: str, sample: Sample, tools: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The written calls read back the same: (invariant, detail) of the first difference.

    A value that reads back with the wrong JSON type ("42" as 42) is a coercion finding.
    """
    _, message = run(family, [sample.text], tools, sample.options)
    got = [(c.function.name, _arguments_value(c.function.arguments)) for c in message.tool_calls]
    if got != sample.calls:
        return _which(sample.calls, got), f"wrote calls {sample.calls!r}, they read as {got!r}"
    # the renderer lays content out on a line of its own: with verbatim whitespace the line
    # break it writes around the text comes back with it
    if sample.content and (message.content or "").strip() != sample.content:
        detail = f"wrote content {sample.content!r}, it reads as {message.content!r}"
        return "round trip", detail
    # and the whitespace the grammar's `render in_reasoning=[…]` writes inside the block is
    # the model's text too (Qwen3's `<think>\nR\n</think>` reads as "\nR\n")
    before, after = with_params(get_spec(family)).write.in_reasoning
    wanted = before + sample.reasoning + after if sample.reasoning else None
    if wanted and (message.reasoning or "") != wanted:
        detail = f"wrote reasoning {wanted!r}, it reads as {message.reasoning!r}"
        return "round trip", detail
    return None


def written_parts(
    spec: FamilySpec, content: str | None, reasoning: str | None
) -> tuple[str | None, str | None]:
    """The content and reasoning `render` was given for an output that reads as `content`
    and `reasoning`: without the whitespace the grammar's `render` statement wrote around
    them, which verbatim reading keeps."""
    before, after = spec.write.in_reasoning
    if reasoning is not None and reasoning.startswith(before) and reasoning.endswith(after):
        reasoning = reasoning[len(before) : len(reasoning) - len(after)]
    return (content or "").strip() or None, reasoning


def _which(wrote: list[tuple[str, Any]], got: list[tuple[str, Any]]) -> str:
    """ "coercion" when the calls differ only in the JSON types of some values."""
    if [n for n, _ in wrote] != [n for n, _ in got]:
        return "round trip"
    for (_, a), (_, b) in zip(wrote, got):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return "round trip"
        for key, value in a.items():
            if value != b[key] or type(value) is not type(b[key]):
                if json.dumps(value) == json.dumps(b[key]) or _as_text(value) == _as_text(b[key]):
                    continue
                return "round trip"
    return "coercion"


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _arguments_value(text: str) -> Any:
    """What a parsed call's arguments text holds: its JSON value, or the text itself when it
    is not JSON (then the round trip reports it instead of the checker raising)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _mutate(text: str, rng: random.Random) -> str:
    """Spans deleted, doubled or swapped: markers end up cut, repeated, nested, reordered."""
    for _ in range(rng.randint(1, 4)):
        if not text:
            break
        a, b = rng.randint(0, len(text)), rng.randint(0, len(text))
        text = mutate_span(text, rng.randrange(3), a, b)
    return text


def check(
    family: str,
    *,
    budget: float = 60.0,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    templates: Path | None = None,
    template_trip: TemplateReport | None = None,
) -> CheckReport:
    """Check `family` (a registered name) for `budget` seconds from `seed`.

    `template_trip`: the round trip already run through the chat template the grammar was
    written from (`import-template`); it stands for the family's `templates.toml` rows, which
    a grammar not yet in the repository cannot have.

    The probes of one watched value (kept, promptness, the 10 MB value, deep JSON) and the
    family's chat-template rows (from the fetched templates in `templates`, when given) run
    once; random samples, their cut points and their mutants fill the rest of the budget.
    """
    spec = with_params(get_spec(family))
    rng = random.Random(seed)
    tools = random_tools(rng)
    markers = markup_literals(spec)
    report = CheckReport(family, seed)
    start = time.monotonic()
    deadline = start + budget
    _probes(family, spec, tools, markers, report, random.Random(seed))
    if template_trip is not None:
        _record_trip(template_trip, report)
    else:
        _check_templates(family, templates, report)
    exports = _Exports(family, tools)
    walks = _walk_plan(tools)
    walk_rng = random.Random(f"walks:{seed}")  # its own: the samples stay those of the seed
    failed_in_a_row = 0
    # the budget ends the run; past it, one sample is still written if the renderer can
    while time.monotonic() < deadline or (report.samples == 0 and failed_in_a_row < GIVE_UP):
        sample_seed = rng.randrange(2**32)
        sample = sample_or_why(spec, tools, sample_seed)
        if isinstance(sample, str):
            failed_in_a_row += 1
            if report.samples == 0 and failed_in_a_row >= GIVE_UP:
                break  # the renderer writes none: said below, not waited on
            report.unwritten = sample
            continue
        failed_in_a_row = 0
        report.samples += 1
        _check_sample(family, sample, tools, markers, report, deadline)
        _check_sample_exports(exports, sample, report, deadline)
        # one round of walks always, then one walk per sample while the budget lasts
        first_round = report.checked["export walks"] < len(walks)
        for plan in walks if first_round else [walks[report.samples % len(walks)]]:
            _check_walk(exports, plan, walk_rng.randrange(2**32), report)
        if progress is not None:
            progress(report.samples)
    report.seconds = time.monotonic() - start
    if report.samples == 0:
        report.no_samples = report.unwritten or "no sample was tried within the budget"
    return report


def _check_sample(
    family: str,
    sample: Sample,
    tools: list,
    markers: frozenset[str],
    report: CheckReport,
    deadline: float,
) -> None:
    srng = random.Random(sample.seed)
    seed, number = report.seed, report.samples
    problem = _round_trip(family, sample, tools)
    report.checked["round trip"] += 1
    report.checked["coercion"] += 1
    if problem:
        _record(report, Finding(problem[0], sample.text, [], problem[1], seed, number))
    text = sample.text
    cuts = list(range(len(text) + 1))
    if len(cuts) > 60:
        cuts = sorted(set(srng.sample(cuts, 60)) | {len(text)})
    violations = check_text(
        family, text, tools, sample.options, seed=sample.seed, cuts=cuts, lost=True
    )
    report.cuts += len(cuts)
    for name in ("prefix", "termination", "parity", "utf-8", "nothing lost"):
        report.checked[name] += len(cuts)
    seen: set[str] = set()
    for violation in violations:  # each invariant broken by this sample counts once
        if violation.invariant in seen:
            continue
        seen.add(violation.invariant)
        if violation.invariant in report.findings:  # shrink only the first of its kind
            report.failed[violation.invariant] += 1
            continue
        finding = _finding(family, violation, tools, sample, deadline)
        finding.seed, finding.sample = seed, number
        _record(report, finding)
    # bad input: a mutant of this sample, and markup soup
    for bad in (_mutate(text, srng), random_soup(markers, srng, ALPHABET)):
        report.checked["bad input"] += 1
        report.inputs += 1
        problem_text = survives(family, bad, tools, srng)
        if problem_text:
            _record(report, Finding("bad input", bad, [], problem_text, seed, number))


# --------------------------------------------------------------------------- the export


class _Exports:
    """The family's exported grammars for the check's tools, made once per (format, mode,
    JSON form, reasoning_open)."""

    def __init__(self, family: str, tools: list[dict[str, Any]]) -> None:
        self.family, self.tools = family, tools
        self.schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
        self._made: dict[tuple, str] = {}

    def grammar(self, fmt: str, mode: str, json_form: str, reasoning_open: bool | None) -> str:
        key = (fmt, mode, json_form, reasoning_open)
        if key not in self._made:
            options: dict[str, Any] = {"reasoning_open": reasoning_open}
            if fmt == "lark":
                options["json"] = json_form
            self._made[key] = export_grammar(self.family, self.tools, fmt, mode, **options)
        return self._made[key]


def _modes(sample: Sample) -> list[str]:
    """The export modes whose grammar must accept the sample: `required` takes no content,
    `named:TOOL` exactly one call to that tool."""
    modes = ["auto"]
    if not sample.content:
        modes.append("required")
        if len(sample.calls) == 1:
            modes.append(f"named:{sample.calls[0][0]}")
    return modes


FORMATS = (("lark", "native"), ("lark", "rules"), ("gbnf", "rules"))


def _check_sample_exports(
    exports: _Exports, sample: Sample, report: CheckReport, deadline: float = 0.0
) -> None:
    """Every export that admits the sample accepts it: what the renderer writes (what the
    parser reads) a constrained model may write. The first rejection is shrunk and told
    with the export rules at fault (`_export_finding`)."""
    if EXPORT_MISSING is not None:
        return
    reasoning_open = sample.options.get("reasoning_open")
    for mode in _modes(sample):
        for fmt, json_form in FORMATS:
            report.checked["export"] += 1
            where = f"{fmt}{'/' + json_form if fmt == 'lark' else ''} --mode {mode}"
            try:
                grammar = exports.grammar(fmt, mode, json_form, reasoning_open)
                problem = rejection(grammar, sample.text, fmt)
            except (ExportError, ValueError) as error:
                problem = f"the export fails: {error}"
            if problem:
                detail = f"export {where}: {problem}"
                finding = Finding("export", sample.text, [], detail, report.seed, report.samples)
                if "export" not in report.findings and problem.startswith("rejected at byte"):
                    finding = _export_finding(exports, sample, finding, grammar, fmt, deadline)
                    finding.detail = f"export {where}: {finding.detail}"
                _record(report, finding)
                return  # one finding per sample: the first export that rejects it


def _export_finding(
    exports: _Exports, sample: Sample, finding: Finding, grammar: str, fmt: str, deadline: float
) -> Finding:
    """An export's rejection of a rendered output, shrunk to a smaller output the renderer
    also writes and the export still rejects, with the grammar line the parser reads where
    the export stops and the export rules made from it that refuse the byte there."""
    spec = with_params(get_spec(exports.family))

    def fails(text: str, cut: int) -> bool:
        if not (rejection(grammar, text, fmt) or "").startswith("rejected at byte"):
            return False
        message = parse(exports.family, text, exports.tools, **sample.options)
        calls = [
            (c.function.name, _arguments_value(c.function.arguments)) for c in message.tool_calls
        ]
        if any(
            name not in exports.schemas
            or not validates(args, {**exports.schemas[name], "additionalProperties": False})
            for name, args in calls
        ):  # the request's tools, declared parameters, schema-valid: a sample still
            return False
        try:  # still an output the renderer writes: the same calls, content and reasoning
            content, reasoning = written_parts(spec, message.content, message.reasoning)
            again = render_output(spec, calls, content=content, reasoning=reasoning)
        except RenderError:
            return False
        return again == text

    end = min(deadline, time.monotonic() + 5.0) if deadline else time.monotonic() + 5.0
    text, _ = shrink(fails, finding.text, len(finding.text), end)
    offset = matcher(grammar, fmt).try_consume_tokens(list(text.encode("utf-8")))
    line = grammar_line_at(exports.family, text, offset, exports.tools, sample.options)
    rules = faulty_rules(grammar, text, fmt, time.monotonic() + 10.0, line)
    names = ", ".join(name for name, _ in rules) or "(none found)"
    shown = f"{names} (grammar line {line or 'unknown'})"
    detail = rejection(grammar, text, fmt) or finding.detail
    return Finding("export", text, [], detail, finding.seed, finding.sample, rule=shown)


def _walk_plan(tools: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(format, mode, JSON form) of one round of walks."""
    named = f"named:{tools[0]['function']['name']}"
    return [
        ("lark", "required", "native"),
        ("lark", "required", "rules"),
        ("lark", "auto", "native"),
        ("lark", named, "native"),
        ("gbnf", "required", "rules"),
    ]


def _check_walk(
    exports: _Exports, plan: tuple[str, str, str], walk_seed: int, report: CheckReport
) -> None:
    """A random walk of one export ends, and parses back to valid calls that render."""
    if EXPORT_MISSING is not None:
        return
    fmt, mode, json_form = plan
    report.checked["export walks"] += 1
    where = f"{fmt}{'/' + json_form if fmt == 'lark' else ''} --mode {mode}"
    try:
        grammar = exports.grammar(fmt, mode, json_form, None)
        options: dict[str, Any] = {"budget": 250}
        if fmt == "gbnf":  # the closing markers are read from the same export in lark
            lark = exports.grammar("lark", mode, "rules", None)
            options.update(budget=150, fmt="gbnf", markers=closing_markers(lark))
        data, ended = closing_walk(grammar, random.Random(walk_seed), **options)
    except (ExportError, ValueError, AssertionError) as error:
        detail = f"export {where}: the walk fails: {error}"
        _record(report, Finding("export walks", "", [], detail, walk_seed, report.samples))
        return
    text = data.decode("utf-8", "replace")
    if not ended:
        problem = "a dead end: the grammar allows no byte, and no end, after this text"
    else:
        problem = walk_problem(exports.family, text, mode, exports.tools, exports.schemas)
    if problem and ended and "export walks" not in report.findings:
        text, problem = _shrunk_walk(exports, text, problem, grammar, fmt, mode)
    if problem:
        detail = f"export {where} (walk seed {walk_seed}): {problem}"
        _record(report, Finding("export walks", text, [], detail, report.seed, report.samples))


def _shrunk_walk(
    exports: _Exports, text: str, problem: str, grammar: str, fmt: str, mode: str
) -> tuple[str, str]:
    """A walk's text made smaller while the export still accepts it and the parser still
    reads it with the same kind of problem (what it says before its first `:`)."""
    kind = problem.split(":")[0]
    found = {text: problem}

    def fails(candidate: str, cut: int) -> bool:
        if not accepts(grammar, candidate, fmt):
            return False
        again = walk_problem(exports.family, candidate, mode, exports.tools, exports.schemas)
        if again is None or again.split(":")[0] != kind:
            return False
        found[candidate] = again
        return True

    smaller, _ = shrink(fails, text, len(text), time.monotonic() + 5.0)
    return smaller, found[smaller]


def _probes(
    family: str,
    spec: FamilySpec,
    tools: list,
    markers: frozenset[str],
    report: CheckReport,
    rng: random.Random,
) -> None:
    """One watched value per family: kept at every cut, prompt, 10 MB, nested deep."""
    hold = hold_allowance(markers)
    words = "".join(rng.choice("abcdefghij  ") for _ in range(40)).strip() or "value"
    for kind, value in (("string", "a" + words + "z"), ("integer", "1234567")):
        site = value_site(spec, tools, kind)
        if site is None:
            continue
        cuts, problem = probe_kept(family, site, tools, value, hold)
        report.checked["kept"] += cuts
        report.cuts += cuts
        if problem:
            _record(report, Finding("kept", problem[0], [], problem[1], report.seed))
        if kind == "string":
            steps, problem = probe_promptness(family, site, tools, value, hold)
            report.checked["promptness"] += steps
            if problem:
                split = list(range(len(site.head), len(problem[0])))
                finding = Finding("promptness", problem[0], split, problem[1], report.seed)
                _record(report, finding)
            report.checked["bad input"] += 1
            report.inputs += 1
            problem = probe_big_value(family, site, tools, BIG)
            if problem:
                _record(report, Finding("bad input", "<10 MB value>", [], problem, report.seed))
    count, violation = probe_prose_endings(family, spec, tools)
    report.checked["nothing lost"] += count
    if violation is not None:
        detail = violation.detail
        _record(report, Finding("nothing lost", violation.text, [], detail, report.seed))
    for deep in deep_json_outputs(spec, tools, DEEP):
        report.checked["bad input"] += 1
        report.inputs += 1
        problem = survives(family, deep, tools, rng)
        if problem:
            shown = deep[:120] + f"… ({len(deep)} characters)"
            _record(report, Finding("bad input", shown, [], problem, report.seed))


def _finding(
    family: str, violation: Violation, tools: list, sample: Sample, deadline: float
) -> Finding:
    def fails(text: str) -> bool:
        found = check_text(family, text, tools, sample.options, seed=sample.seed, cuts=[len(text)])
        return any(v.invariant == violation.invariant for v in found)

    end = min(deadline, time.monotonic() + 5.0)
    text, _ = shrink(lambda text, cut: fails(text), violation.text, len(violation.text), end)
    found = check_text(family, text, tools, sample.options, seed=sample.seed, cuts=[len(text)])
    best = next((v for v in found if v.invariant == violation.invariant), violation)
    return Finding(violation.invariant, best.text, best.split, best.detail, sample.seed)


def _check_templates(family: str, folder: Path | None, report: CheckReport) -> None:
    """The family's rows of the template table, each through its own chat template."""
    rows = family_rows(family)
    if not rows:
        missing = missing_row(family)
        if missing is not None:  # a family's chat template is proven, or said to be absent
            _record(report, Finding("template", "", [], missing, report.seed))
            return
        why = no_template_reason(family) or "a response template's family, no grammar's"
        report.template_skipped = f"no chat template: {why}"
        return
    if folder is None:
        report.template_skipped = "chat templates not fetched: python scripts/fetch_templates.py"
        return
    for row in rows:
        report.checked["template"] += 1
        found = check_row(row, folder)
        if not row_holds(row, found):
            detail = f"{row_problems(row, found)}\n{found.summary()}"
            _record(report, Finding("template", "", [], detail, report.seed))


def _record_trip(trip: TemplateReport, report: CheckReport) -> None:
    """A round trip run by the caller, counted as the family's one template row: every
    finding is a fault (an imported grammar declares no `known` limits of its template)."""
    report.checked["template"] += 1
    if not trip.ok:
        _record(report, Finding("template", "", [], trip.summary(), report.seed))


def _record(report: CheckReport, finding: Finding) -> None:
    report.failed[finding.invariant] += 1
    report.findings.setdefault(finding.invariant, finding)
