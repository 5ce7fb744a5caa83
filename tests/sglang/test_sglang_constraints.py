"""Constrained decoding through SGLang: the grammar a toolgrammar detector gives SGLang for
`tool_choice="required"`, a named tool and strict tools, compiled by SGLang's own xgrammar
backend and matched token by token (a character-level tokenizer, no model).
"""

from __future__ import annotations

import json

import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.corpus_format import TOOLS  # noqa: E402
from sglang.srt.constrained.xgrammar_backend import XGrammarGrammarBackend  # noqa: E402
from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

import toolgrammar  # noqa: E402
import toolgrammar.adapters.sglang as adapter  # noqa: E402
from toolgrammar.adapters.sglang_tools import export_reasoning_open  # noqa: E402

EOS = 0
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
WRITE = {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}


@lru_cache(maxsize=1)
def tokenizer() -> PreTrainedTokenizerFast:
    """One token per character (ASCII and every character of the families' markup), and an
    end-of-sequence token."""
    rendered = "".join(
        toolgrammar.render(name, [call], TOOLS)
        for name in toolgrammar.families()
        for call in (WEATHER, WRITE)
    )
    vocab = {"</s>": EOS}
    for char in [chr(c) for c in range(32, 127)] + ["\n", "\t"] + sorted(set(rendered)):
        vocab.setdefault(char, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="</s>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>")


@lru_cache(maxsize=1)
def backend() -> XGrammarGrammarBackend:
    tok = tokenizer()
    return XGrammarGrammarBackend(tok, vocab_size=len(tok), model_eos_token_ids=[EOS])


def constraint(
    name: str, tool_choice: Any, tools: list[dict[str, Any]] = TOOLS, tokenizer: Any = None
) -> Any:
    """The constraint SGLang's serving layer puts in the sampling params for the request
    (`tokenizer`: the served one, which SGLang hands the detector)."""
    request = ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        tool_choice=tool_choice,
    )
    parser = FunctionCallParser(request.tools, adapter.PREFIX + name, tokenizer=tokenizer)
    found = parser.get_structure_constraint(request.tool_choice)
    if found is None:
        return None
    params = request.to_sampling_params(
        stop=[], model_generation_config={}, tool_call_constraint=found
    )
    return params["structural_tag"]


def accepts(key: str, text: str) -> bool:
    """Whether the grammar takes the text, then the end of sequence."""
    matcher = backend().dispatch_structural_tag(key).matcher
    ids = tokenizer().encode(text, add_special_tokens=False)
    return all(matcher.accept_token(i) for i in ids) and matcher.accept_token(EOS)


@pytest.mark.parametrize("name", toolgrammar.families())
def test_required_and_named_tool_choice_constrain_to_the_familys_own_calls(name: str) -> None:
    required = constraint(name, "required")
    weather = toolgrammar.render(name, [WEATHER], TOOLS)
    write = toolgrammar.render(name, [WRITE], TOOLS)
    assert accepts(required, weather) and accepts(required, write)
    assert not accepts(required, "Hello there.")
    named = constraint(name, {"type": "function", "function": {"name": "write_file"}})
    assert accepts(named, write) and not accepts(named, weather)
    # what the model writes under the constraint is read back natively, as SGLang then does
    parser = FunctionCallParser(
        ChatCompletionRequest(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
        ).tools,
        adapter.PREFIX + name,
        tool_choice="required",
    )
    assert parser.owns_tool_format()
    _, calls = parser.parse_non_stream(weather)
    # the same call; its arguments keep the bytes render wrote (Cohere's and Granite's
    # templates indent the JSON)
    assert [(c.name, json.loads(c.parameters)) for c in calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
    assert [c.parameters for c in calls] == [
        toolgrammar.parse(name, weather, TOOLS).tool_calls[0].function.arguments
    ]


def test_auto_is_unconstrained_unless_a_tool_is_strict() -> None:
    assert constraint("hermes", "auto") is None
    strict = [dict(TOOLS[0], function=dict(TOOLS[0]["function"], strict=True)), *TOOLS[1:]]
    auto = constraint("hermes", "auto", strict)
    assert accepts(auto, "Hello there.")
    assert accepts(auto, toolgrammar.render("hermes", [WEATHER], TOOLS))
    # the strict tool's schema holds: days is an integer
    wrong = toolgrammar.render("hermes", [WEATHER], TOOLS).replace('"days": 3', '"days": "3"')
    assert '"days": "3"' in wrong and not accepts(auto, wrong)


def test_the_grammar_starts_after_reasoning_only_behind_sglangs_own_reasoning_parsers() -> None:
    assert export_reasoning_open(None, None) is None
    assert export_reasoning_open("tg-qwen3_coder", None) is None
    assert export_reasoning_open("tg-qwen3_coder", True) is True
    # SGLang's reasoner grammar backend releases the grammar at the reasoning's end
    assert export_reasoning_open("qwen3", None) is False
    assert export_reasoning_open("deepseek-r1", True) is False
