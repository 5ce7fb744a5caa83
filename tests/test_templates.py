"""Every family against the chat templates it serves (`grammars/templates.toml`), and the
template round trip's own behaviour on small templates written here.

The real templates come from the llama-cpp-python and vLLM sdists (a row's `source`),
fetched once into `.cache/` by `scripts/fetch_templates.py`; a failed fetch fails the test
with its reason (CI runs on a clean clone, so a skip would hide that nothing was checked).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.template_fetcher import fetcher as template_fetcher

from toolgrammar.cli import main
from toolgrammar.check.templates import (
    DEFAULT_SOURCE,
    FINDING_KINDS,
    TEMPLATE_SOURCES,
    fetched_templates,
    check_row,
    check_template,
    row_holds,
    row_problems,
    row_template,
    template_table,
)

ROWS = template_table()


def _row_id(row: dict[str, Any]) -> str:
    variables = ",".join(f"{k}={v}" for k, v in sorted(row.get("variables", {}).items()))
    variables = "".join(c for c in variables if c.isascii())  # test ids stay readable
    return f"{row['family']}/{row['file']}" + (f"[{variables}]" if variables else "")


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(row) for row in ROWS])
def test_family_round_trips_through_its_chat_template(
    row: dict[str, Any], template_folder: Path
) -> None:
    report = check_row(row, template_folder)
    assert row_holds(row, report), row_problems(row, report) + "\n" + report.summary()


def test_the_table_is_well_formed(template_folder: Path) -> None:
    """Every row names a fetched template of a known source, known findings are findings
    with a reason, and no (family, template, options) row is there twice."""
    seen = set()
    for row in ROWS:
        assert row.get("source", DEFAULT_SOURCE) in TEMPLATE_SOURCES, row
        assert row_template(row, template_folder).is_file(), row
        for key in row.get("known", ()):  # exact findings, by key: never a bare kind
            kind = key.split(" (")[0].split(": ")[0]
            assert kind in FINDING_KINDS and key != kind and ": " in key, (row, key)
        assert bool(row.get("known")) == bool(row.get("why")), row
        key = json.dumps(row, sort_keys=True, ensure_ascii=False)
        assert key not in seen, row
        seen.add(key)


# --------------------------------------------------------------------------- small templates

CHATML = """{%- for message in messages -%}
<|im_start|>{{ message.role }}
{%- if message.content %}
{{ message.content }}{% endif %}
{%- for call in message.tool_calls or [] %}
{{- '\n' if message.content or not loop.first }}<tool_call>
{{ {"name": call.function.name, "arguments": call.function.arguments} | tojson }}
</tool_call>
{%- endfor %}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}"""


def test_a_chatml_template_round_trips_hermes() -> None:
    report = check_template("hermes", CHATML, name="chatml")
    assert report.ok, report.summary()
    assert report.conversations == 4
    assert report.prompt_end.endswith("<|im_start|>assistant\n")


def test_tojson_keeps_non_ascii_and_takes_hf_keywords() -> None:
    """HF's tojson: no HTML escaping, no sorting, ensure_ascii/indent/sort_keys as given."""
    from toolgrammar.check.templates import load_template, render

    template = load_template(
        "{{ messages[0] | tojson }}|{{ messages[0] | tojson(indent=1, sort_keys=true) }}"
        "|{{ messages[0] | tojson(ensure_ascii=true) }}"
    )
    text = render(template, [{"z": "é<&>", "a": 1}], add_generation_prompt=False, variables={})
    plain, indented, ascii_only = text.split("|")
    assert plain == '{"z": "é<&>", "a": 1}'
    assert indented == '{\n "a": 1,\n "z": "é<&>"\n}'
    assert ascii_only == '{"z": "\\u00e9<&>", "a": 1}'


def test_a_prompt_that_opens_reasoning_the_grammar_does_not_is_a_prompt_finding() -> None:
    """Qwen3.5's shape: the prompt ends in `<think>\\n`, the turn goes on inside reasoning; the
    grammar's default (outside) reads the reasoning as content."""
    thinking = CHATML.replace(
        "<|im_start|>assistant\n{% endif -%}", "<|im_start|>assistant\n<think>\n{% endif -%}"
    ).replace(
        "{%- if message.content %}",
        "{%- if message.reasoning_content %}{{ '\\n<think>\\n' + message.reasoning_content }}"
        "{{ '\\n</think>\\n\\n' }}{% endif %}{%- if message.content %}",
    )
    report = check_template("hermes", thinking, name="thinking")
    assert report.kinds == {"prompt"}, report.summary()
    assert "does not open reasoning" in report.summary()


def test_the_grammars_opened_block_against_a_prompt_that_does_not_open_it() -> None:
    """glm45 says the prompt opens `<think>`; a prompt that does not is noted, and it is a
    finding only where the grammar's default then reads the turn differently."""
    glm = (
        "{%- for m in messages %}<|{{ m.role }}|>{% if m.role == 'assistant' %}\n"
        "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
        "{{ m.content }}{% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}"
        "{% for k, v in c.function.arguments.items() %}<arg_key>{{ k }}</arg_key><arg_value>"
        "{{ v | tojson if v is not string else v }}</arg_value>{% endfor %}</tool_call>"
        "{% endfor %}{% else %}{{ m.content }}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    report = check_template("glm45", glm, name="glm")
    assert "prompt" in report.kinds, report.summary()
    assert "the grammar says the prompt opens reasoning" in report.summary()


def test_a_template_without_tool_calls_is_one_clear_line() -> None:
    report = check_template("hermes", "{% for m in messages %}{{ m.content }}{% endfor %}")
    assert report.kinds == {"no tool calls"}
    assert report.summary().count("\n") == 0
    assert "does not write tool calls" in report.summary()


@pytest.mark.parametrize(
    "source, said",
    [
        ("{% if x %}", "cannot load: line 1"),
        ("{{ messages[0].nope.deeper }}", "cannot render: UndefinedError"),
        ("{{ raise_exception('no tools here') }}", "refuses every conversation"),
        ("{{ raise_exception('no tools here') if add_generation_prompt }}", "refuses every"),
        ("{% set _ = messages.append(1) %}", "cannot render: SecurityError"),
    ],
)
def test_a_template_that_cannot_render_is_one_line(source: str, said: str) -> None:
    report = check_template("hermes", source)
    assert report.kinds == {"render"}
    assert said in report.summary() and report.summary().count("\n") == 0, report.summary()


def test_mutable_renders_templates_that_append_as_llama_cpp_does() -> None:
    source = "{% set seen = [] %}{% set _ = seen.append(1) %}" + CHATML
    assert check_template("hermes", source, mutable=True).ok


def test_arguments_printed_as_they_are_get_json_text() -> None:
    """A template that prints `arguments` without `tojson` wants JSON text (Kimi K2's)."""
    source = CHATML.replace(
        '{{ {"name": call.function.name, "arguments": call.function.arguments} | tojson }}',
        '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments }}}',
    )
    report = check_template("hermes", source)
    assert report.ok, report.summary()
    assert any("JSON text" in note for note in report.notes)


def test_cli_check_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chatml.jinja"
    path.write_text(CHATML, encoding="utf-8")
    assert main(["check", "hermes", "--template", str(path), "--budget", "0.2"]) == 0
    assert "hermes: template chatml.jinja: 4 conversations" in capsys.readouterr().out
    path.write_text("{% for m in messages %}{{ m.content }}{% endfor %}", encoding="utf-8")
    assert main(["check", "hermes", "--template", str(path), "--budget", "0.2"]) == 1
    assert "does not write tool calls" in capsys.readouterr().out


def test_cli_template_var_reaches_the_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gated.jinja"
    path.write_text("{% if not ok %}{{ raise_exception('set ok') }}{% endif %}" + CHATML)
    argv = ["check", "hermes", "--template", str(path), "--budget", "0.2"]
    assert main(argv) == 1
    assert main([*argv, "--template-var", "ok=true"]) == 0
    capsys.readouterr()


# a template as FireFunction v2's and Functionary v3.2's are written: the tools as JSON text in
# `functions`, each call's arguments concatenated as a string
CONCATENATING = """{{ 'Tools: ' + functions + '\\n' }}{%- for message in messages -%}
<|im_start|>{{ message.role }}
{{ message.content or '' }}
{%- for call in message.tool_calls or [] %}
{{- '\n' if message.content or not loop.first }}<tool_call>
{{ '{"name": "' + call.function.name + '", "arguments": ' + call.function.arguments + '}' }}
</tool_call>
{%- endfor %}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}"""


def test_text_arguments_and_tools_under_another_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The adaptations serving stacks make by convention: a row (or the CLI) says them."""
    assert check_template("hermes", CONCATENATING).kinds == {"render"}
    report = check_template(
        "hermes", CONCATENATING, arguments="text", tools_variables={"functions": "json"}
    )
    assert report.ok, report.summary()
    path = tmp_path / "concat.jinja"
    path.write_text(CONCATENATING, encoding="utf-8")
    argv = ["check", "hermes", "--template", str(path), "--budget", "0.2"]
    assert main(argv) == 1
    assert main([*argv, "--text-arguments", "--tools-variable", "functions=json"]) == 0
    assert main([*argv, "--tools-variable", "functions"]) == 2
    assert "NAME=list or NAME=json" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not one of"):
        check_template("hermes", CHATML, tools_variables={"functions": "yaml"})


def test_a_template_that_writes_instructions_after_the_history() -> None:
    """Command R+'s shape: an instruction turn after the last message, then the generation
    header; the answer is cut after that header, not where the renderings part."""
    source = (
        "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + (m.content or '') }}"
        "{% for c in m.tool_calls or [] %}{{ '\\n' if m.content or not loop.first }}"
        "{{ '<tool_call>\\n' }}"
        "{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}"
        "{{ '\\n</tool_call>' }}{% endfor %}{{ '<|im_end|>\\n' }}{% endfor %}"
        "{{ '<|im_start|>system\\nAnswer with tool calls.<|im_end|>\\n' }}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    )
    report = check_template("hermes", source, name="instructed", stop=["<|im_end|>"])
    assert report.ok, report.summary()
    assert not any("replaces the prompt" in note for note in report.notes), report.notes


# --------------------------------------------------------------------------- the fetcher


def test_the_fetcher_keeps_only_each_sources_templates() -> None:
    fetcher = template_fetcher()
    llama_cpp, vllm = (next(s for s in fetcher.SOURCES if s.name == n) for n in TEMPLATE_SOURCES)
    assert llama_cpp.keeps("vendor/llama.cpp/models/templates/Qwen-QwQ-32B.jinja")
    assert not llama_cpp.keeps("examples/tool_chat_template_hermes.jinja")
    assert vllm.keeps("examples/tool_chat_template_hermes.jinja")
    # vLLM's own test copies of the same files, and the other examples, stay out
    assert not vllm.keeps("rust/src/chat/tests/templates/vllm_examples/tool_chat_template_x.jinja")
    assert not vllm.keeps("examples/template_chatml.jinja")
    assert not vllm.keeps("examples/tool_chat_template_hermes.py")


def test_a_failed_fetch_says_why(tmp_path: Path) -> None:
    fetcher = template_fetcher()
    source = fetcher.SOURCES[1]
    unreachable = fetcher.Source(
        source.name, "http://127.0.0.1:9/vllm-0.33.0.tar.gz", source.sha256, source.keeps, "x"
    )
    with pytest.raises(fetcher.FetchError, match=r"cannot download http://127\.0\.0\.1:9/"):
        fetcher.source_dir(unreachable, tmp_path)
    assert not (tmp_path / "templates" / source.folder / ".complete").exists()


def test_the_templates_count_as_fetched_only_with_every_source(tmp_path: Path) -> None:
    """`check` runs the rows only when every source's folder is complete, and otherwise says
    to run the fetcher, which fetches them all."""
    folders = list(TEMPLATE_SOURCES.values())
    for folder in folders[:-1]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / ".complete").write_text("", encoding="utf-8")
    assert fetched_templates(tmp_path) is None
    (tmp_path / folders[-1]).mkdir()
    (tmp_path / folders[-1] / ".complete").write_text("", encoding="utf-8")
    assert fetched_templates(tmp_path) == tmp_path


def test_a_row_of_an_unknown_source_is_a_clear_error(template_folder: Path) -> None:
    row = {"family": "hermes", "file": "x.jinja", "source": "sglang"}
    with pytest.raises(ValueError, match=r"x\.jinja: unknown template source 'sglang'"):
        row_template(row, template_folder)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "thinking"])
def test_every_reasoning_field_a_template_reads_gets_the_reasoning(field: str) -> None:
    """vLLM's newer `message.reasoning` (Solar Open's template), the older
    `reasoning_content` and gpt-oss's `thinking`: each reaches a template that reads it (a
    template reading `reasoning` used to get none, and the round trip only noted it)."""
    chatml = CHATML.replace(
        "{%- if message.content %}",
        f"{{%- if message.{field} %}}{{{{ '<think>\\n' + message.{field} + '\\n</think>\\n\\n' }}}}"
        "{% endif %}{%- if message.content %}",
    )
    assert f"message.{field}" in chatml
    report = check_template("hermes", chatml, name=field)
    assert report.ok, report.summary()
    assert not any("does not write the turn's reasoning" in n for n in report.notes), report.notes


def test_the_reasoning_fields_a_template_reads() -> None:
    from toolgrammar.check.templates import reasoning_fields

    assert reasoning_fields("{{ message.reasoning }}") == ("reasoning",)
    assert reasoning_fields("{{ m['thinking'] }}{{ m.get('reasoning_content') }}") == (
        "reasoning_content",
        "thinking",
    )
    assert reasoning_fields("{% set reasoning_effort = 'high' %}") == ("reasoning_content",)


def test_a_history_that_drops_the_prompts_opener_but_closes_the_reasoning() -> None:
    """Apriel 1.6's shape: the prompt ends with the reasoning opener, the history writes the
    reasoning and its closer without it: the turn is read from inside the reasoning."""
    apriel = (
        "{%- for m in messages %}<|{{ m.role }}|>\n{% if m.role == 'assistant' %}"
        "{% if m.reasoning_content %}{{ m.reasoning_content }}\n[BEGIN FINAL RESPONSE]\n"
        "{% endif %}{{ m.content }}{% if m.tool_calls %}{{ '\\n' }}<tool_calls>["
        '{% for c in m.tool_calls %}{"name": "{{ c.function.name }}", "arguments": '
        "{{ c.function.arguments | tojson }}}{% if not loop.last %}, {% endif %}{% endfor %}"
        "]</tool_calls>{% endif %}{% else %}{{ m.content }}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\nHere are my reasoning steps:\n{% endif %}"
    )
    report = check_template("apriel", apriel, name="apriel")
    assert report.ok, report.summary()


def test_a_known_finding_masks_no_other_of_its_kind() -> None:
    """`known` names exact findings: a second finding of a listed kind (a wrong reasoning
    closer under a row that knows another reasoning finding) fails the row, by its key."""
    closer = CHATML.replace(
        "{%- if message.content %}",
        "{%- if message.reasoning_content %}{{ '<think>' + message.reasoning_content + '</end>' }}"
        "{% endif %}{%- if message.content %}",
    )
    report = check_template("hermes", closer, name="closer")
    keys = [finding.key for finding in report.findings]
    # and render ≡ template parts at the reasoning the grammar writes otherwise (`markup`)
    kinds = ("reasoning (", "content (", "markup (")
    assert keys and all(key.startswith(kinds) for key in keys), keys
    row = {"file": "closer", "known": ["reasoning (one call): wrote 'x', read None"]}
    assert not row_holds(row, report)
    problems = row_problems(row, report)
    for key in keys:
        assert f"closer: unexpected finding: {key}" in problems
    assert row_holds({"file": "closer", "known": keys}, report)


def test_a_known_finding_that_no_longer_occurs_is_named() -> None:
    report = check_template("hermes", CHATML, name="chatml")
    assert report.ok
    gone = "content (one call): wrote '', read 'x'"
    row = {"file": "chatml", "known": [gone]}
    assert not row_holds(row, report)
    assert row_problems(row, report) == f"chatml: known finding no longer occurs: {gone}"


SOLAR_LIKE = (
    "{%- for m in messages %}<|begin|>{{ m.role }}{% if m.role == 'assistant' %}"
    "{% if m.tool_calls %}<|tool_calls|>{% for c in m.tool_calls %}<|tool_call:begin|>"
    "{{ c.id }}{{ suffix }}<|tool_call:name|>{{ c.function.name }}<|tool_call:args|>"
    "{{ c.function.arguments | tojson }}<|tool_call:end|>{% endfor %}<|calls|>"
    "{% else %}<|content|>{{ m.content }}<|end|>{% endif %}"
    "{% else %}<|content|>{{ m.content }}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|begin|>assistant{% endif %}"
)


def test_a_markup_that_carries_call_ids_reads_back_the_ids_the_template_wrote() -> None:
    """Solar Open's `skip(id=true)`: the round trip compares the ids too."""
    assert check_template("solar_open", SOLAR_LIKE, name="solar").ok
    report = check_template("solar_open", SOLAR_LIKE, variables={"suffix": "x"}, name="solar")
    keys = [finding.key for finding in report.findings]
    assert "calls (one call): wrote the ids ['aB3dE6gH9'], read ['aB3dE6gH9x']" in keys, keys
