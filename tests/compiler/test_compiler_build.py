"""Build, --check, determinism, and the generated modules themselves."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolgrammar.compiler import CompileErrors, build, compile_grammar_text, default_paths
from toolgrammar.compiler import ir
from toolgrammar.compiler.build import expected_outputs
from toolgrammar.compiler.frontend import parse_grammar
from toolgrammar.compiler.lower import GENERATED_MARK, lower

from compiler_paths import FAMILIES, GENERATED, GRAMMARS, MODULES, module_of


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_generated_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_paths_are_the_installed_packages() -> None:
    import toolgrammar.generated
    import toolgrammar.grammars

    assert default_paths() == (
        Path(toolgrammar.grammars.__path__[0]),
        Path(toolgrammar.generated.__path__[0]),
    )
    assert FAMILIES and {"qwen3_coder", "hermes", "kimi_k2"} <= set(FAMILIES)


def test_checked_in_output_is_current() -> None:
    result = build(GRAMMARS, GENERATED, compare_only=True)
    assert result.clean, "generated/ is stale; run `toolgrammar build`\n" + result.diff


def names(paths: list[str]) -> list[str]:
    return [Path(p).name for p in paths]


def test_build_then_compare_is_clean(grammar_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    result = build(grammar_copy, out)
    assert sorted(names(result.written)) == ["__init__.py", *(f"{m}.py" for m in MODULES)]
    assert sorted(s.name for s in result.specs) == list(FAMILIES)
    again = build(grammar_copy, out, compare_only=True)
    assert (
        again.clean
        and again.stale == []
        and again.diff == ""
        and len(again.unchanged) == len(FAMILIES) + 1
    )
    rebuilt = build(grammar_copy, out)
    assert rebuilt.written == [] and rebuilt.deleted == []
    for name in ("__init__.py", *(f"{m}.py" for m in MODULES)):  # same as the repo's
        assert (out / name).read_bytes() == (GENERATED / name).read_bytes()


def test_compare_reports_stale_missing_and_extra(grammar_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    build(grammar_copy, out)
    grammar = grammar_copy / "hermes.tg"
    grammar.write_text(
        grammar.read_text().replace(
            "aliases qwen3_json, qwen, qwen25", "aliases qwen3_json, qwen, qwen25, hj"
        )
    )
    (out / "kimi_k2.py").unlink()
    (out / "old_family.py").write_text(f"{GENERATED_MARK} from grammars/old.tg. DO NOT EDIT.\n")
    (out / "helper.py").write_text("# hand-written, not ours\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    result = build(grammar_copy, out, compare_only=True)
    assert not result.clean
    assert names(result.stale) == ["__init__.py", "hermes.py", "kimi_k2.py", "old_family.py"]
    assert names(result.missing) == ["kimi_k2.py"]
    assert names(result.extra) == ["old_family.py"]
    assert '+    aliases=("qwen3_json", "qwen", "qwen25", "hj"),' in result.diff
    assert '-    aliases=("qwen3_json", "qwen", "qwen25"),' in result.diff
    assert "hermes.py (fresh build)" in result.diff
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # compare writes nothing

    result = build(grammar_copy, out)
    assert names(result.written) == ["__init__.py", "hermes.py", "kimi_k2.py"]
    assert names(result.deleted) == ["old_family.py"]
    assert (out / "helper.py").exists()  # not generated: never deleted
    assert build(grammar_copy, out, compare_only=True).clean


def test_hand_edit_of_generated_file_is_stale(grammar_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    build(grammar_copy, out)
    path = out / "qwen3_coder.py"
    path.write_text(path.read_text().replace("line=", "line=1", 1))
    result = build(grammar_copy, out, compare_only=True)
    assert names(result.stale) == ["qwen3_coder.py"] and result.missing == result.extra == []


def test_output_is_identical_under_any_hash_seed(tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"seed{seed}"
        code = f"from pathlib import Path; from toolgrammar.compiler import build; build(Path({str(GRAMMARS)!r}), Path({str(out)!r}))"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == len(FAMILIES) + 1


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_module_spec_equals_lowering(family: str) -> None:
    module = importlib.import_module(f"toolgrammar.generated.{module_of(family)}")
    path = GRAMMARS / f"{family}.tg"
    text = path.read_text(encoding="utf-8")
    grammar = parse_grammar(text, "x.tg")
    if grammar.of(ir.ExtendsStmt):  # lowered with what it inherits
        _, specs = expected_outputs(GRAMMARS, GENERATED)
        expected = next(s for s in specs if s.name == family)
    else:
        expected = lower(
            grammar, f"grammars/{family}.tg", hashlib.sha256(path.read_bytes()).hexdigest()
        )
    assert module.SPEC == expected


def test_generated_module_layout() -> None:
    text = (GENERATED / "qwen3_coder.py").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0].startswith("# @generated by toolgrammar from grammars/qwen3_coder.tg (sha256 ")
    assert lines[0].endswith("). DO NOT EDIT.")
    assert lines[1] == "# Regenerate with: toolgrammar build"
    assert lines[2].startswith('r"""Qwen3-Coder XML tool calls (Qwen3-Coder, Qwen3.5;')
    grammar = (GRAMMARS / "qwen3_coder.tg").read_text(encoding="utf-8").splitlines()
    function_line = next(
        i for i, line in enumerate(grammar, 1) if line.lstrip().startswith('"<function="')
    )
    reasoning_line = next(i for i, line in enumerate(grammar, 1) if line.startswith("reasoning"))
    assert (
        f'        # grammars/qwen3_coder.tg:{function_line}: "<function=" name(until=">") ">" ws(write="\\n")'
        in lines
    )
    assert (
        f'        # grammars/qwen3_coder.tg:{reasoning_line}: reasoning "<think>" "</think>"'
        in lines
    )
    module = importlib.import_module("toolgrammar.generated.qwen3_coder")
    assert module.__doc__.startswith("Qwen3-Coder XML tool calls")
    assert "<tool_call>\\n<function=NAME>" in module.__doc__


def test_generated_package_index() -> None:
    import toolgrammar.generated as generated

    assert generated.FAMILY_MODULES == MODULES
    assert generated.ALIASES["qwen3_json"] == "hermes"
    assert generated.ALIASES["qwen3_xml"] == "qwen3_coder"
    for alias, family in generated.ALIASES.items():
        assert family in FAMILIES and alias not in FAMILIES
    first = (GENERATED / "__init__.py").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# @generated by toolgrammar from grammars/*.tg (sha256 ")


def test_compile_grammar_text_matches_the_build() -> None:
    text = (GRAMMARS / "hermes.tg").read_text(encoding="utf-8")
    code = compile_grammar_text(text, "grammars/hermes.tg")
    assert code == (GENERATED / "hermes.py").read_text(encoding="utf-8")


def test_family_names_with_dashes_become_module_names(grammar_copy: Path, tmp_path: Path) -> None:
    (grammar_copy / "demo-7b-fc.tg").write_text(
        'family demo-7b-fc\ncall "<function_call>" ws json_call\n'
    )
    out = tmp_path / "generated"
    build(grammar_copy, out)
    module = load(out / "demo_7b_fc.py")
    assert module.SPEC.name == "demo-7b-fc"
    assert module.SPEC.follows == ((), (), ())
    assert '"demo_7b_fc"' in (out / "__init__.py").read_text()


def test_names_registered_twice_across_files(tmp_path: Path, monkeypatch) -> None:
    grammars = tmp_path / "grammars"
    grammars.mkdir()
    (grammars / "alpha.tg").write_text('family alpha\naliases a1, a2\ncall "<a>" json_call\n')
    (grammars / "a-b.tg").write_text('family a-b\ncall "<b>" json_call\n')
    (grammars / "a_b.tg").write_text('family a_b\ncall "<c>" json_call\n')
    (grammars / "zeta.tg").write_text(
        '# zeta\nfamily zeta\naliases zz, a2, alpha\ncall "<z>" json_call\n'
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileErrors) as info:
        build(Path("grammars"), tmp_path / "out")
    assert [line for line in str(info.value).splitlines() if line.startswith("grammars/")] == [
        "grammars/a_b.tg:1:8: family `a_b` generates the same module `a_b.py` as `a-b` "
        "(grammars/a-b.tg:1:8)",
        "grammars/zeta.tg:3:13: `a2` is already registered by grammars/alpha.tg:2:13",
        "grammars/zeta.tg:3:17: `alpha` is already registered by grammars/alpha.tg:1:8",
    ]
    assert not (tmp_path / "out").exists()  # nothing written when anything fails


def test_errors_of_every_file_are_reported_together(grammar_copy: Path, tmp_path: Path) -> None:
    (grammar_copy / "a.tg").write_text("family a\ncall 'x'\n")
    (grammar_copy / "b.tg").write_text('family b\ncall "<b>"\n')
    with pytest.raises(CompileErrors) as info:
        build(grammar_copy, tmp_path / "out")
    assert [Path(e.path).name for e in info.value.errors] == ["a.tg", "b.tg", "b.tg"]


def test_error_paths_are_relative_to_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    grammars = tmp_path / "grammars"
    grammars.mkdir()
    (grammars / "x.tg").write_text("family x\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileErrors) as info:
        build(grammars.resolve(), tmp_path / "out")
    assert str(info.value).startswith("grammars/x.tg:1:1: missing `call` statement")


def test_cli_build_check_is_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolgrammar", "build", "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_extends_inherits_and_replaces_by_statement_kind(tmp_path: Path) -> None:
    grammars = tmp_path / "grammars"
    grammars.mkdir()
    (grammars / "base.tg").write_text(
        'family base\nparam tag = "a"\nreasoning "<r>" "</r>"\nignore "<x>"\n'
        'call "<${tag}>" name(until=">") ">" json_args "</${tag}>"\n',
        encoding="utf-8",
    )
    (grammars / "child.tg").write_text(
        'family child\nextends base\nparam tag = "b"\nreasoning "<t>" "</t>" prompt_opened\n',
        encoding="utf-8",
    )
    result = build(grammars, tmp_path / "out")
    child = next(s for s in result.specs if s.name == "child")
    assert child.params == (("tag", "b"),)  # overridden default
    assert [r.opens for r in child.reasoning] == [("<t>",)] and child.reasoning[0].prompt_opened
    assert child.ignore == ("<x>",) and child.call[0].text == "<${tag}>"  # inherited
    code = (tmp_path / "out" / "child.py").read_text(encoding="utf-8")
    assert '# grammars/base.tg:5: "<${tag}>"' in code  # inherited items cite their own file


def test_extends_loop_is_reported(tmp_path: Path) -> None:
    grammars = tmp_path / "grammars"
    grammars.mkdir()
    (grammars / "a.tg").write_text("family a\nextends b\n", encoding="utf-8")
    (grammars / "b.tg").write_text("family b\nextends a\n", encoding="utf-8")
    with pytest.raises(CompileErrors) as info:
        build(grammars, tmp_path / "out")
    assert "`extends` loops: a -> b -> a" in str(info.value)


def test_the_build_warns_on_a_name_pattern_the_renderer_cannot_fill(tmp_path: Path) -> None:
    from toolgrammar.compiler.build import build, compile_grammar_text

    text = (
        "family demo\n"
        'call "<c>" name(until="<a>", pattern=/(?P<id>\\w+)<n>(?P<name>\\w+)/) "<a>" json_args\n'
    )
    warnings: list = []
    compile_grammar_text(text, "demo.tg", None, warnings)
    (warning,) = warnings
    assert str(warning).startswith("demo.tg:2:12: warning: `render` cannot write a name")
    assert "skip(until=…, id=true)" in str(warning)
    # a shape render can write: no warning; a whole build reports them too
    compile_grammar_text(text.replace("(?P<id>\\w+)<n>", ""), "demo.tg", None, warnings)
    assert len(warnings) == 1
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "demo.tg").write_text(text, encoding="utf-8")
    result = build(tmp_path / "g", tmp_path / "out")
    assert [w.line for w in result.warnings] == [2]
