"""`tg-hf` through SGLang 0.5.23's own classes: the response template comes from the tokenizer
SGLang hands the detectors (its `response_template` attribute or its init kwargs) or from the
caller, and every template of tests/support/response_templates.py streams, cut or whole, to what the
library reads; no template is a clear error where SGLang builds the detector.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as h  # noqa: E402
from support.corpus_format import TOOLS  # noqa: E402
from support.response_templates import OUTPUTS, TEMPLATES  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402
from test_sglang_constraints import EOS, backend, constraint, tokenizer  # noqa: E402

import toolgrammar  # noqa: E402
import toolgrammar.adapters.sglang as adapter  # noqa: E402

NAME = adapter.PREFIX + "hf"
NAMES = sorted(TEMPLATES)
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "one two"}},
]


def served(template: dict[str, Any] | None) -> Any:
    """A real tokenizer (the constraint tests' character-level one) whose init kwargs hold the
    template, as `tokenizer_config.json` gives them."""
    tok = copy.copy(tokenizer())
    tok.init_kwargs = dict(tok.init_kwargs)
    if template is not None:
        tok.init_kwargs["response_template"] = template
    else:
        tok.init_kwargs.pop("response_template", None)
    return tok


def texts(name: str) -> list[str]:
    template = TEMPLATES[name]
    rendered = toolgrammar.render("hf", CALLS, TOOLS, content="Sure.", response_template=template)
    return [*OUTPUTS[name], rendered]


def library(text: str, template: dict[str, Any], paired: bool) -> h.Result:
    """What SGLang must give: the library's message (reasoning as content when unpaired)."""
    message = toolgrammar.parse("hf", text, TOOLS, response_template=template, compat="sglang")
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
    if paired:
        reasoning = toolgrammar.parse(
            "hf", text, None, response_template=template, compat="sglang"
        ).reasoning
        return h.Result(message.content, reasoning, calls)
    parser = toolgrammar.StreamParser("hf", TOOLS, response_template=template, compat="sglang")
    deltas = parser.feed(text) + parser.finish("stop")
    content = "".join((d.reasoning or "") + (d.content or "") for d in deltas)
    return h.Result(content or None, None, calls)


def test_tg_hf_is_registered_in_both_tables() -> None:
    cls = FunctionCallParser.ToolCallParserEnum[NAME]
    assert issubclass(cls, adapter.ToolgrammarDetector) and cls.family == "hf"
    rcls = ReasoningParser.DetectorMap[NAME]
    assert issubclass(rcls, adapter.ToolgrammarReasoningDetector) and rcls.family == "hf"
    assert NAME in adapter.REGISTERED and adapter.PREFIX + "beam" in adapter.REGISTERED


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("paired", [False, True], ids=["tool-only", "paired"])
def test_every_template_streams_through_sglangs_parsers(name: str, paired: bool) -> None:
    """The template from the tokenizer's init kwargs; 1-char, 7-char and whole deltas, and the
    non-streaming path, equal the library's `hf` with that template."""
    template = TEMPLATES[name]
    tok = served(template)
    failures = []
    for text in texts(name):
        want = library(text, template, paired)
        for size in (1, 7, len(text)):
            deltas = [text[i : i + size] for i in range(0, len(text), size)]
            got = h.stream(NAME, deltas, TOOLS, paired=paired, tokenizer=tok)
            if not h.same(got, want):
                failures.append((size, text, got, want))
        got = h.whole(NAME, text, TOOLS, paired=paired, tokenizer=tok)
        if not h.same(got, want):
            failures.append(("whole", text, got, want))
    assert failures == []


@pytest.mark.parametrize("name", NAMES)
def test_a_call_cut_anywhere_ends_with_arguments_that_load(name: str) -> None:
    """Rendered calls cut after every character: after SGLang's end-of-stream steps the
    client's arguments are JSON, equal to the library's, and SGLang sent nothing of its own."""
    template = TEMPLATES[name]
    tok = served(template)
    text = texts(name)[-1]

    def want(part: str) -> Any:
        return library(part, template, paired=False)

    assert h.cut_failures(NAME, text, TOOLS, want, tokenizer=tok) == []


def test_the_template_comes_from_the_attribute_or_the_caller() -> None:
    """The tokenizer's `response_template` attribute is read before its init kwargs; a
    template passed to the detector class is read before both."""
    beam, kv = TEMPLATES["beam"], TEMPLATES["kv_lines"]
    text = OUTPUTS["beam"][0]
    want = toolgrammar.parse("beam", text, TOOLS, compat="sglang")
    want_calls = [(c.function.name, c.function.arguments) for c in want.tool_calls]
    tok = SimpleNamespace(response_template=beam, init_kwargs={"response_template": kv})
    assert h.whole(NAME, text, TOOLS, paired=True, tokenizer=tok).calls == want_calls
    cls = FunctionCallParser.ToolCallParserEnum[NAME]
    detector = cls(tokenizer=served(kv), response_template=beam)
    result = detector.detect_and_parse(text, h.sglang_tools(TOOLS))
    assert [(c.name, c.parameters) for c in result.calls] == want_calls
    reasoning = ReasoningParser.DetectorMap[NAME](response_template=beam)
    assert reasoning.detect_and_parse(text).reasoning_text == want.reasoning


def test_no_template_is_a_clear_error_where_sglang_builds_the_detector() -> None:
    tools = h.sglang_tools(TOOLS)
    for tok, said in ((served(None), "the tokenizer has none"), (None, "no tokenizer")):
        with pytest.raises(
            ValueError, match=f"tg-hf needs the checkpoint's `response_template`.*{said}"
        ):
            FunctionCallParser(tools, NAME, tokenizer=tok)
        # the scheduler builds the reasoning parser at server start, with the tokenizer
        with pytest.raises(ValueError, match="tg-hf needs the checkpoint's `response_template`"):
            ReasoningParser(NAME, stream_reasoning=False, tokenizer=tok)
    # a template the compiler refuses: its one line, naming the field and the construct
    bad = copy.deepcopy(TEMPLATES["beam"])
    bad["fields"]["answer"] = {"open": "<a>"}
    with pytest.raises(ValueError, match="field 'answer'"):
        FunctionCallParser(tools, NAME, tokenizer=served(bad))


def test_the_scheduler_builds_the_reasoning_parser_from_the_tokenizer() -> None:
    """As SGLang's scheduler does at start (`stream_reasoning=False`, the tokenizer): no
    think-end token ids (toolgrammar reads the markers itself)."""
    tok = served(TEMPLATES["json_args"])
    parser = ReasoningParser(NAME, stream_reasoning=False, tokenizer=tok)
    assert parser.detector.get_think_end_token_ids(tok) == []


@pytest.mark.parametrize("name", NAMES)
def test_required_tool_choice_constrains_to_the_templates_calls(name: str) -> None:
    """SGLang asks the detector for a structural tag: the template's export, compiled by
    SGLang's xgrammar backend, takes the rendered calls and refuses plain text."""
    tok = served(TEMPLATES[name])
    required = constraint("hf", "required", tokenizer=tok)
    for calls in (CALLS[:1], CALLS[1:]):
        text = toolgrammar.render("hf", calls, TOOLS, response_template=TEMPLATES[name])
        assert accepts(required, text), text
    assert not accepts(required, "Hello there.")


def accepts(key: str, text: str) -> bool:
    """Whether the grammar takes the text written one character token at a time, then the
    end of sequence. Character by character: the test tokenizer's end-of-sequence token is
    `</s>`, which json_array's template closes its calls with as text."""
    matcher = backend().dispatch_structural_tag(key).matcher
    vocab = tokenizer().get_vocab()
    return all(matcher.accept_token(vocab[c]) for c in text) and matcher.accept_token(EOS)
