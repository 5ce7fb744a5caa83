"""`toolgrammar import-template --chat-template`: a first grammar found from a chat template's
renderings, on small hand-written templates of the three common shapes (no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgrammar.cli import main
from toolgrammar.import_template import ImportProblem, check_imported, import_chat_template

pytest.importorskip("lark")  # the compiler extra: the grammar is built to be checked

CHATML_HEAD = """{%- for message in messages %}
{%- if message.role == 'assistant' %}<|im_start|>assistant
"""
CHATML_TAIL = """<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

# Hermes' markup: JSON in <tool_call> tags, reasoning in <think>
JSON_IN_TAGS = CHATML_HEAD + """{%- if message.reasoning_content %}<think>
{{ message.reasoning_content }}
</think>

{% endif %}{{ message.content }}
{%- for call in message.tool_calls or [] %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
</tool_call>
{%- endfor %}""" + CHATML_TAIL

# Qwen3-Coder's markup: <function=NAME> with one <parameter=KEY> element per argument
XML_PARAMS = CHATML_HEAD + """{{ message.content }}
{%- for call in message.tool_calls or [] %}
<tool_call>
<function={{ call.function.name }}>
{% for key, value in call.function.arguments.items() %}<parameter={{ key }}>
{{ value if value is string else value | tojson }}
</parameter>
{% endfor %}</function>
</tool_call>
{%- endfor %}""" + CHATML_TAIL

# Kimi K2's markup: special tokens, a section, and a header that numbers the call
SECTION = CHATML_HEAD + """{{ message.content }}
{%- if message.tool_calls %}<|tool_calls_section_begin|>
{%- for call in message.tool_calls %}<|tool_call_begin|>functions.{{ call.function.name }}:{{ loop.index0 }}<|tool_call_argument_begin|>{{ call.function.arguments | tojson }}<|tool_call_end|>
{%- endfor %}<|tool_calls_section_end|>
{%- endif %}""" + CHATML_TAIL

NO_CALLS = CHATML_HEAD + "{{ message.content }}" + CHATML_TAIL


def _imported(tmp_path: Path, source: str, name: str) -> tuple[str, Path]:
    path = tmp_path / f"{name}.jinja"
    path.write_text(source, encoding="utf-8")
    text, _ = import_chat_template(source, name, path.name)
    return text, path


def test_json_in_tags(tmp_path: Path) -> None:
    text, path = _imported(tmp_path, JSON_IN_TAGS, "probe_json")
    assert 'reasoning "<think>" "</think>"' in text
    assert 'ignore ["<|im_end|>"]' in text
    assert '"<tool_call>"' in text and '"</tool_call>"' in text
    assert 'json_call(name="name", arguments=["arguments", "parameters"])' in text
    assert "# guess: " in text  # every guess is said
    checked = check_imported(text, "probe_json", path, budget=2.0)
    assert checked.ok, checked.report


def test_xml_params(tmp_path: Path) -> None:
    text, path = _imported(tmp_path, XML_PARAMS, "probe_xml")
    assert '"<function="' in text and 'name(until=[">", "</function>"])' in text
    assert 'open="<parameter=", key_end=">", value_end="</parameter>", trim_newline=true' in text
    assert "reasoning" not in text.split("family", 1)[1]  # the template writes none
    checked = check_imported(text, "probe_xml", path, budget=2.0)
    assert checked.ok, checked.report


def test_section_and_numbered_header(tmp_path: Path) -> None:
    text, path = _imported(tmp_path, SECTION, "probe_section")
    assert 'section "<|tool_calls_section_begin|>" "<|tool_calls_section_end|>"' in text
    assert "pattern=/functions\\.(?P<name>[^\\s:]+):\\d+/, id=header" in text
    assert "json_args" in text
    checked = check_imported(text, "probe_section", path, budget=2.0)
    assert checked.ok, checked.report


def test_a_template_without_calls_is_refused() -> None:
    with pytest.raises(ImportProblem, match="writes no tool calls"):
        import_chat_template(NO_CALLS, "probe_none")


def test_cli_writes_then_checks(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    template = tmp_path / "model.jinja"
    template.write_text(JSON_IN_TAGS, encoding="utf-8")
    out = tmp_path / "mine.tg"
    argv = ["import-template", "--chat-template", str(template), "--name", "mine"]
    assert main([*argv, "-o", str(out), "--budget", "1"]) == 0
    assert out.read_text(encoding="utf-8").count("family mine") == 1
    assert "mine: template model.jinja" in capsys.readouterr().err
    assert main([*argv, "--no-check"]) == 0
    assert "family mine" in capsys.readouterr().out


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    template = tmp_path / "plain.jinja"
    template.write_text(NO_CALLS, encoding="utf-8")
    assert main(["import-template", "--chat-template", str(template), "--name", "x"]) == 2
    assert "writes no tool calls" in capsys.readouterr().err
    assert main(["import-template", "--chat-template", str(template)]) == 2  # no --name
    assert "--name FAMILY" in capsys.readouterr().err
    assert main(["import-template"]) == 2
    assert "--chat-template FILE" in capsys.readouterr().err


# Jamba's markup: the calls as one JSON array in tags
JSON_ARRAY = CHATML_HEAD + """{{ message.content }}
{%- if message.tool_calls %}<tool_calls>[
{%- for call in message.tool_calls %}{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}{{ ", " if not loop.last }}
{%- endfor %}]</tool_calls>
{%- endif %}""" + CHATML_TAIL

# Llama 3.2's pythonic markup: a Python list of calls
PYTHONIC = CHATML_HEAD + """{{ message.content }}
{%- if message.tool_calls %}[
{%- for call in message.tool_calls %}{{ call.function.name }}(
{%- for key, value in call.function.arguments.items() %}{{ key }}={{ value | tojson }}{{ ", " if not loop.last }}
{%- endfor %}){{ ", " if not loop.last }}
{%- endfor %}]
{%- endif %}""" + CHATML_TAIL


# Granite's layout: the array printed with tojson(indent=4)
INDENTED_ARRAY = CHATML_HEAD + """{{ message.content }}
{%- if message.tool_calls %}<tool_calls>
{{- message.tool_calls | map(attribute='function') | list | tojson(indent=4) -}}
</tool_calls>
{%- endif %}""" + CHATML_TAIL

# Seed-OSS's and Gemma 4's habits: every value printed with {{ value }} (a list as Python's
# str), and the turn's content after its calls
PYTHON_VALUES_CONTENT_LAST = CHATML_HEAD + """
{%- for call in message.tool_calls or [] %}<tool_call><function={{ call.function.name }}>
{%- for key, value in call.function.arguments.items() %}<parameter={{ key }}>{{ value }}</parameter>
{%- endfor %}</function></tool_call>
{%- endfor %}{{ message.content }}""" + CHATML_TAIL


# DeepSeek's DSML: a flag after the key says whether the value is text or JSON
DSML = CHATML_HEAD + """{{ message.content }}
{%- if message.tool_calls %}<|DSML|calls>
{% for call in message.tool_calls %}<|DSML|invoke name="{{ call.function.name }}">
{% for key, value in call.function.arguments.items() %}<|DSML|parameter name="{{ key }}" string="
{{- "true" if value is string else "false" }}">{{ value if value is string else value | tojson }}</|DSML|parameter>
{% endfor %}</|DSML|invoke>
{% endfor %}</|DSML|calls>
{%- endif %}""" + CHATML_TAIL

# Gemma 4's markup: bare keys, strings between a delimiter token of its own
KEYVALUE = CHATML_HEAD + """{{ message.content }}
{%- macro value(v) %}{% if v is string %}<|"|>{{ v }}<|"|>{% elif v is mapping %}{
{%- for k, x in v.items() %}{{ k }}:{{ value(x) }}{{ "," if not loop.last }}{% endfor %}}
{%- elif v is sequence %}[{% for x in v %}{{ value(x) }}{{ "," if not loop.last }}{% endfor %}]
{%- else %}{{ v | tojson }}{% endif %}{% endmacro %}
{%- for call in message.tool_calls or [] %}<|tool_call>call:{{ call.function.name }}
{{- value(call.function.arguments) }}<tool_call|>
{%- endfor %}""" + CHATML_TAIL


@pytest.mark.parametrize(
    "source, expected",
    [
        (JSON_ARRAY, ['"<tool_calls>"', "json_call_array(", '"</tool_calls>"']),
        (PYTHONIC, ['&"["', "python_calls(list=true, write_json=true)"]),
        (
            INDENTED_ARRAY,
            ['json_call_array(name="name", arguments=["arguments", "parameters"], write_indent=4)'],
        ),
        (PYTHON_VALUES_CONTENT_LAST, ["write_python=true)", "render content_after_calls=true"]),
        (KEYVALUE, ['"<|tool_call>call:"', 'name(until=["{"])', 'keyvalue_args(string="<|\\"|>")']),
        (
            DSML,
            [
                'open="<|DSML|parameter", key_end=">"',
                'key_pattern=/name="(?P<key>[^"]*)"(?:\\s+string="(?P<text>[^"]*)")?/',
                'text_when=["true"]',
            ],
        ),
    ],
    ids=[
        "json array",
        "pythonic",
        "indented json array",
        "python values, content last",
        "keyvalue",
        "dsml flags",
    ],
)
def test_lists_of_calls(tmp_path: Path, source: str, expected: list[str]) -> None:
    text, path = _imported(tmp_path, source, "probe_list")
    for item in expected:
        assert item in text
    checked = check_imported(text, "probe_list", path, budget=2.0)
    assert checked.ok, checked.report
