"""`toolgrammar check`: every grammar passes, and broken grammars are caught with a repro."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import toolgrammar
from toolgrammar.check import check
from toolgrammar.cli import main
from toolgrammar.check import INVARIANTS, CheckReport
from toolgrammar.check import templates as template_check
from toolgrammar.runtime.registry import get_spec
from toolgrammar.check.templates import family_rows, template_table

sys.path.insert(0, str(Path(__file__).parent / "check_fixtures"))
from broken_runtimes import MUTANTS  # noqa: E402

FAMILIES = sorted({get_spec(name).name for name in toolgrammar.families()})
BROKEN = sorted((Path(__file__).parent / "check_fixtures").glob("*.tg"))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_grammar_passes_its_own_check(family: str, template_folder: Path) -> None:
    # a bounded budget in CI; `toolgrammar check FAMILY --budget 60` runs deeper
    report = check(family, budget=0.3, seed=FAMILIES.index(family), templates=template_folder)
    assert report.samples >= 1 and report.cuts >= 1
    assert report.checked["export"] >= 1 and report.checked["export walks"] >= 5
    # every row of grammars/templates.toml for the family, through its chat template
    assert report.checked["template"] == len(family_rows(family))
    assert report.ok, report.summary()


def test_check_runs_the_template_rows_and_says_why_not(
    template_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert check("hermes", budget=0.0, templates=template_folder).checked["template"] >= 1
    # not fetched, or no row: skipped, and the summary says why (never "ok")
    unfetched = check("hermes", budget=0.0).summary()
    assert "template           0 checked  skipped (chat templates not fetched" in unfetched
    assert "python scripts/fetch_templates.py" in unfetched
    without = check("beam", budget=0.0, templates=template_folder).summary()
    assert "skipped (no chat template: Beam's checkpoint describes its output" in without
    # a row whose findings are not the ones it declares fails the check, naming the template
    rows = [row for row in template_table() if row["family"] == "hermes"]
    planted = "calls (one call): wrote [], read []"
    wrong = [{**rows[0], "known": [planted], "why": "planted"}]
    monkeypatch.setattr(template_check, "template_table", lambda: wrong)
    report = check("hermes", budget=0.0, templates=template_folder)
    assert report.failed["template"] == 1
    assert f"[template] {rows[0]['file']}: known finding no longer occurs: {planted}" in (
        report.summary()
    )


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_grammars_are_caught_with_a_reproduction(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the export proof takes the first seconds of the budget: 15 s reach the faulty samples
    # on a busy machine
    assert main(["check", str(path), "--budget", "15", "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "round trip" in out and "FAILED" in out
    assert "  text  = " in out and "replay: --seed 1 (sample " in out


def test_cli_check_reports_every_invariant(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "hermes", "--budget", "0.5"]) == 0
    out = capsys.readouterr().out
    for name in INVARIANTS:
        assert f"  {name}" in out
    assert main(["check", "no_such_family"]) == 2
    assert "unknown family" in capsys.readouterr().err


def test_same_seed_same_samples() -> None:
    first = check("kimi_k2", budget=0.0, seed=5)
    second = check("kimi_k2", budget=0.0, seed=5)
    assert (first.samples, first.cuts) == (second.samples, second.cuts) == (1, first.cuts)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_runtime_bugs_are_caught_with_a_reproduction(
    mutant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the classes of bug a grammar cannot say (the runtime rules them out for every family):
    # the checker still catches each, on an unchanged grammar over a broken runtime
    breaks, invariant = MUTANTS[mutant]
    with breaks(monkeypatch):
        report = check("qwen3_coder", budget=2, seed=1)
    monkeypatch.undo()
    assert report.failed[invariant] >= 1, report.summary()
    finding = report.findings[invariant]
    assert finding.text and finding.detail and "replay: --seed 1" in str(finding)
    assert len(finding.text) < 200  # shrunk, or a single watched value: readable
    assert check("qwen3_coder", budget=0.2, seed=1).ok  # the runtime is whole again


def test_bad_input_counts_the_big_value_and_deep_json() -> None:
    report = check("hermes", budget=0.0, seed=2)
    # one mutant and one soup per sample, a 10 MB value, JSON nested 10,000 deep
    assert report.inputs >= 2 * report.samples + 2, report.summary()
    assert report.checked["kept"] > 0 and report.checked["promptness"] > 0
    assert report.ok, report.summary()


SPACE_LED = """family space_led
call
    " functools" ws
    json_call_array(name="name", arguments=["arguments", "parameters"])
"""


def test_prose_ending_in_a_space_led_openers_start_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an opener led by a space held ` fun` of `Let's have fun` back and dropped it: the
    # word before the end of the output vanished and no invariant fired
    path = tmp_path / "space_led.tg"
    path.write_text(SPACE_LED, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:  # a made-up family: no chat template exists
        absent = {**template_check.template_absences(), "space_led": "made up"}
        patch.setattr(template_check, "template_absences", lambda: absent)
        assert main(["check", str(path), "--budget", "0.3"]) == 0, capsys.readouterr().out


def test_a_probe_with_nothing_to_check_says_skipped_not_ok() -> None:
    report = CheckReport(family="demo", seed=0)
    report.checked["round trip"] = 3
    lines = report.summary().splitlines()
    assert any(line.split() == ["round", "trip", "3", "checked", "ok"] for line in lines)
    promptness = next(line for line in lines if line.split()[0] == "promptness")
    assert promptness.split()[1:] == ["0", "checked", "skipped", "(nothing", "to", "check)"]


def test_an_export_that_disagrees_with_the_parser_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """qwen3_coder's samples under Hermes' export: the export rejects what the renderer
    writes (shown with the byte where it stops), and its walks write what the parser does not
    read as calls (shown with the walk's seed)."""
    from toolgrammar.check import family as check_module

    def hermes_export(self: Any, fmt: str, mode: str, json_form: str, reasoning_open: Any) -> str:
        options = {"json": json_form} if fmt == "lark" else {}
        return toolgrammar.export_grammar("hermes", self.tools, fmt, mode, **options)

    monkeypatch.setattr(check_module._Exports, "grammar", hermes_export)
    report = check("qwen3_coder", budget=0.0, seed=3)
    assert report.failed["export"] and report.failed["export walks"], report.summary()
    assert "rejected at byte" in report.findings["export"].detail
    assert "walk seed" in report.findings["export walks"].detail


def test_without_llguidance_the_export_proof_fails_loudly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolgrammar.check import family as check_module

    monkeypatch.setattr(check_module, "EXPORT_MISSING", ImportError("no llguidance"))
    report = check("hermes", budget=0.0, seed=0)
    assert report.checked["export"] == report.checked["export walks"] == 0
    # said loudly, never "skipped … ok": the run fails and names the install that has it
    assert not report.ok
    summary = report.summary()
    assert "export             0 checked  NOT CHECKED: llguidance is not installed" in summary
    assert "skipped" not in summary.split("export  ")[1].split("\n")[0]
    assert summary.endswith(
        "FAILED: the export was not checked: llguidance is not installed; the authoring "
        "install has it: pip install -e '.[compiler,test]'"
    )


def test_a_broken_export_is_shown_shrunk_with_its_rule_and_grammar_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted export bug (JSON rules that separate members with `;`): the finding is the
    smallest rendered output the export still rejects, with the export rules refusing the
    byte there, the grammar line they were made from and the replay seed."""
    from toolgrammar.export import values
    from toolgrammar.export.tree import Lit

    plain = values.Values._sep

    def semicolon(self: Any) -> Any:
        return Lit(";") if self.style == "json" else plain(self)

    monkeypatch.setattr(values.Values, "_sep", semicolon)
    report = check("hermes", budget=3.0, seed=4)
    assert report.failed["export"], report.summary()
    finding = report.findings["export"]
    assert "rejected at byte" in finding.detail and "rules" in finding.detail
    assert "(grammar line grammars/hermes.tg:38)" in finding.rule  # the json_call line
    assert finding.rule.startswith("json_"), finding.rule
    text = finding.text  # shrunk: one call of two arguments, as the renderer writes it
    assert text.count("<tool_call>") == 1 and len(text) < 160, text
    assert "replay: --seed 4 (sample " in str(finding) and "  rule  = json_" in str(finding)


UNFILLABLE = (
    "family unfillable\n"
    'call "<c>" name(until="<a>", pattern=/(?P<id>[a-z0-9]+)<n>(?P<name>[a-z_.0-9]+)/)\n'
    '    "<a>" json_args "</c>"\n'
)


def test_a_name_pattern_the_renderer_cannot_fill_ends_the_run_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sampler writes nothing for such a grammar; `check` used to wait for a first sample
    past its budget forever, printing nothing."""
    import signal

    def hung(signum: int, frame: Any) -> None:
        raise TimeoutError("check did not end: it waits for a sample the renderer never writes")

    path = tmp_path / "unfillable.tg"
    path.write_text(UNFILLABLE, encoding="utf-8")
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        assert main(["check", str(path), "--budget", "1"]) == 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    assert "FAILED: the renderer wrote no sample of this family's markup" in captured.out
    assert f"{path}:2: cannot write the name" in captured.out  # the grammar line of the item
    # and the build of the file warned first, with the line and column of the item
    assert f"{path}:2:12: warning: `render` cannot write a name" in captured.err


# Mistakes planted in a grammar whose family has a template row: (family, the row's template,
# text in the grammar, what it becomes). Each makes the row fail with the grammar line.
PLANTED = {
    "wrong call closer": (
        "hermes",
        "Qwen-Qwen2.5-7B-Instruct.jinja",
        '"</tool_call>"',
        '"</toolcall>"',
    ),
    "wrong reasoning closer": (
        "hermes",
        "Qwen-Qwen3-0.6B.jinja",
        '"<think>" "</think>"',
        '"<think>" "</thinking>"',
    ),
    "wrong separator": (
        "hermes",
        "Qwen-Qwen2.5-7B-Instruct.jinja",
        'after_content="\\n"',
        'after_content=" "',
    ),
    "whitespace not written": (
        "hermes",
        "Qwen-Qwen2.5-7B-Instruct.jinja",
        '"<tool_call>" ws(write="\\n")',
        '"<tool_call>" ws',
    ),
    "arguments key not the template's": (
        "hermes",
        "Qwen-Qwen2.5-7B-Instruct.jinja",
        'arguments=["arguments", "parameters"]',
        'arguments=["parameters", "arguments"]',
    ),
    "missing trim_newline": (  # the line of `xml_params(`, where the item starts
        "qwen3_coder",
        "Qwen3-Coder.jinja",
        "trim_newline=true, write_between",
        "write_between",
        "xml_params(",
    ),
    "wrong section closer": (
        "minimax_m1",
        "MiniMax-M1.jinja",
        '"<tool_calls>" "</tool_calls>"',
        '"<tool_calls>" "</tool_call>"',
    ),
    "wrong call literal": (
        "kimi_k2",
        "Kimi-K2-Instruct.jinja",
        'ws "<|tool_call_end|>"',
        'ws "<|tool_calls_end|>"',
    ),
    "missing prompt_opened": (
        "deepseek_v4",
        "deepseek-ai-DeepSeek-V4-Flash-0731.jinja",
        '"<think>" "</think>" prompt_opened',
        '"<think>" "</think>"',
    ),
    "missing ignore of the turn end": (  # the stop cuts it off: only the turn end check sees it
        "hermes",
        "Qwen-Qwen2.5-7B-Instruct.jinja",
        'ignore "<|im_end|>"\n',
        "",
        "family hermes",
    ),
    "double escape": (  # `\\n` in a grammar string: a backslash and an n, not a newline
        "functionary_v32",
        "meetkai-functionary-medium-v3.2.jinja",
        'content [">>>all\\n"',
        'content [">>>all\\\\n"',
    ),
    "missing content": (  # bare content where the template writes its block's opener
        "functionary_v32",
        "meetkai-functionary-medium-v3.2.jinja",
        'content [">>>all\\n", ">>>all\\r\\n"]\n',
        "",
        "family functionary_v32",
    ),
    "missing section": (  # calls where the template writes the section opener first
        "deepseek_v3",
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        'section "<｜tool▁calls▁begin｜>" "<｜tool▁calls▁end｜>"\n',
        "",
        "family deepseek_v3",
    ),
}
# what the failing row must also name, beside the grammar line
NAMED = {
    "missing ignore of the turn end": ("[turn end]", "'<|im_end|>'", 'no `ignore "<|im_end|>"`'),
    "missing content": ("no `content` statement", "the template writes 'all\\n' first"),
    "missing section": (
        "the template writes '<｜tool▁calls▁begin｜>' first, which no statement of the grammar",
    ),
}


@pytest.mark.parametrize("mistake", sorted(PLANTED))
def test_a_mistake_planted_in_a_family_with_a_row_fails_check_with_the_grammar_line(
    mistake: str, template_folder: Path
) -> None:
    from toolgrammar.compiler.build import compile_grammar_text
    from toolgrammar.runtime.registry import registered

    family, file, old, new, *at = PLANTED[mistake]
    path = f"grammars/{family}.tg"
    text = (Path(__file__).parents[1] / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path} no longer holds {old!r}"
    planted = text.replace(old, new)
    line = planted[: planted.index(at[0] if at else new)].count("\n") + 1
    namespace: dict[str, Any] = {}
    exec(compile(compile_grammar_text(planted, path), path, "exec"), namespace)
    [row] = [r for r in template_table() if r["family"] == family and r["file"] == file]
    with registered(namespace["SPEC"]):
        report = template_check.check_row(row, template_folder)
    assert not template_check.row_holds(row, report)
    problems = template_check.row_problems(row, report)
    assert f"{path}:{line}" in problems
    for named in NAMED.get(mistake, ()):
        assert named in problems


def test_a_family_without_a_template_row_fails_check_with_the_command_that_adds_one(
    template_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(template_check, "template_absences", lambda: {})
    report = check("beam", budget=0.0, templates=template_folder)
    assert report.failed["template"] == 1 and not report.ok
    said = report.summary()
    assert "no row of beam in grammars/templates.toml" in said
    assert "toolgrammar check beam --template .cache/templates/SOURCE/FILE.jinja --add-row" in said


def test_check_add_row_writes_the_row_that_holds(
    tmp_path: Path, template_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "templates.toml"
    table.write_text(template_check.table_path().read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(template_check, "table_path", lambda: table)
    source = template_check.TEMPLATE_SOURCES["vllm"]
    hermes = template_folder / source / "tool_chat_template_hermes.jinja"
    before = len(template_table())
    command = ["check", "hermes", "--budget", "0", "--template", str(hermes), "--add-row"]
    assert main(command) == 0
    rows = template_table()
    assert len(rows) == before + 1 and template_check.template_absences()
    assert rows[-1] == {"family": "hermes", "file": hermes.name, "source": "vllm"}
    # a template outside the pinned sources has no row
    outside = tmp_path / "mine.jinja"
    outside.write_text(hermes.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["check", "hermes", "--budget", "0", "--template", str(outside), "--add-row"]) == 2
