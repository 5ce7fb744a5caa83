"""Drive a toolgrammar family through vLLM's own serving classes (scripts/vllm_env.sh), no model.

What a `vllm serve ... --tool-parser-plugin toolgrammar.adapters.vllm --tool-call-parser
tg-F` server does per chat request, minus the engine: the parser class composed by vLLM's
`ParserManager`, `adjust_request`, then either one `ChatStreamProcessor.step` per engine
output and a last step carrying the finish reason (streaming), or `Parser.parse` and
`assemble_chat_message_fields` (non-streaming). The tokenizer is a character-level one
built in code, in which every marker of the family is one special token.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from vllm.entrypoints.openai.chat_completion.message_assembly import (
    assemble_chat_message_fields,
)
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.entrypoints.serve.utils.tool_calls_utils import resolve_finish_reason
from vllm.parser.parser_manager import ParserManager

import toolgrammar.adapters.vllm as plugin
from toolgrammar.adapters.markup import nonblank_markup_literals
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec

_ASCII = [chr(c) for c in range(32, 127)] + ["\n", "\t", "\r"]


@lru_cache(maxsize=None)
def tokenizer(family: str, with_specials: bool = True) -> PreTrainedTokenizerFast:
    """A character-level tokenizer; the family's markers are single special tokens."""
    vocab = {"[UNK]": 0}
    for char in _ASCII:
        vocab.setdefault(char, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    if with_specials:
        tok.add_special_tokens(
            [
                AddedToken(m, special=True, normalized=False)
                for m in sorted(nonblank_markup_literals(with_params(get_spec(family))))
            ]
        )
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")


def token_ids(tok: PreTrainedTokenizerFast, text: str) -> list[int]:
    """Ids for a delta's text (character-level; unknown characters are [UNK], never none)."""
    return tok.encode(text, add_special_tokens=False) if text else []


def token_deltas(tok: PreTrainedTokenizerFast, text: str) -> list[str]:
    """The text cut at the tokenizer's token boundaries: one token per engine output."""
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    cuts = sorted({end for _, end in enc["offset_mapping"]} | {len(text)})
    out, start = [], 0
    for end in cuts:
        if end > start:
            out.append(text[start:end])
            start = end
    return out


def request(
    tools: list[dict[str, Any]] | None, stream: bool, **extra: Any
) -> ChatCompletionRequest:
    kwargs: dict[str, Any] = {
        "model": "toolgrammar-test",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
    }
    if tools:  # vLLM refuses an empty tools array: a client sends none instead
        kwargs["tools"] = tools
        kwargs["tool_choice"] = "auto"
    return ChatCompletionRequest(**{**kwargs, **extra})


Names = tuple[str | None, str | None]  # --tool-call-parser, --reasoning-parser


def parser_names(family: str, paired: bool, names: Names | None) -> Names:
    """The server's flags: `tg-F` for both (or the tool parser alone), or `names` as given."""
    if names is not None:
        return names
    name = plugin.PREFIX + family
    return name, (name if paired else None)


def parser_class(family: str, paired: bool, tok: Any, names: Names | None = None) -> type:
    """The unified parser class vLLM composes for the server's flags (`--enable-auto-tool-
    choice` with a tool parser)."""
    tool, reasoning = parser_names(family, paired, names)
    cls = ParserManager.get_parser(
        tool_parser_name=tool,
        reasoning_parser_name=reasoning,
        enable_auto_tools=tool is not None,
        model_name="toolgrammar-test",
        tokenizer=tok,
    )
    assert cls is not None
    return cls


@dataclass
class Result:
    """What a client holds at the end: accumulated content, reasoning, calls, finish reason."""

    content: str | None
    reasoning: str | None
    calls: list[tuple[str, str]]
    finish_reason: str
    ids: list[str] = field(default_factory=list)
    chunks: int = 0
    # each call's accumulated arguments before the last step (the one with the finish reason)
    before_finish: list[str] = field(default_factory=list)


PROMPT = [1, 2, 3]


def stream(
    family: str,
    deltas: Iterable[str],
    tools: list[dict[str, Any]] | None,
    finish: str,
    *,
    paired: bool = True,
    names: Names | None = None,
    prompt: list[int] = PROMPT,
    **extra: Any,
) -> Result:
    """One streamed chat choice: a step per delta, then the last step with the finish reason
    (its text empty, as when the engine's last output brought no new text)."""
    tok = tokenizer(family)
    req = request(tools, stream=True, **extra)
    cls = parser_class(family, paired, tok, names)
    auto = parser_names(family, paired, names)[0] is not None
    parser = cls(tok, req.tools, chat_template_kwargs={}, model_config=None)
    req = parser.adjust_request(req)
    processor = ChatStreamProcessor(req, parser, enable_auto_tools=auto, parser_cls=cls)
    content, reasoning = [], []
    calls: dict[int, dict[str, Any]] = {}
    finish_reason = None
    chunks = 0
    steps = [(d, None) for d in deltas if d] + [("", finish)]
    before_finish: list[str] = []
    for text, reason in steps:
        if reason is not None:
            before_finish = ["".join(c["args"]) for _, c in sorted(calls.items())]
        step = processor.step(text, token_ids(tok, text), reason, prompt)
        finish_reason = step.finish_reason
        delta = step.delta
        if delta is None:
            continue
        chunks += 1
        # what a client receives: the chunk's JSON
        data = json.loads(delta.model_dump_json(exclude_none=True))
        if data.get("content"):
            content.append(data["content"])
        if data.get("reasoning"):
            reasoning.append(data["reasoning"])
        for part in data.get("tool_calls", []):
            call = calls.setdefault(part["index"], {"id": None, "name": "", "args": []})
            if part.get("id"):
                assert call["id"] is None, f"second id for call {part['index']}"
                call["id"] = part["id"]
            function = part.get("function") or {}
            if function.get("name"):
                call["name"] += function["name"]
            call["args"].append(function.get("arguments") or "")
    assert finish_reason is not None
    return Result(
        "".join(content) or None,
        "".join(reasoning) or None,
        [(c["name"], "".join(c["args"])) for _, c in sorted(calls.items())],
        finish_reason,
        [c["id"] for _, c in sorted(calls.items())],
        chunks,
        before_finish,
    )


def whole(
    family: str,
    text: str,
    tools: list[dict[str, Any]] | None,
    finish: str,
    *,
    paired: bool = True,
    names: Names | None = None,
    prompt: list[int] = PROMPT,
    **extra: Any,
) -> Result:
    """One non-streaming chat choice: `Parser.parse`, then the message fields and finish
    reason as the serving layer assembles them."""
    tok = tokenizer(family)
    req = request(tools, stream=False, **extra)
    cls = parser_class(family, paired, tok, names)
    auto = parser_names(family, paired, names)[0] is not None
    parser = cls(tok, req.tools, chat_template_kwargs={}, model_config=None)
    req = parser.adjust_request(req)
    parser.set_prompt_token_ids(prompt)
    reasoning, content, tool_calls = parser.parse(
        text, req, enable_auto_tools=auto, model_output_token_ids=token_ids(tok, text)
    )
    fields = assemble_chat_message_fields(
        req, reasoning, content, tool_calls, enable_auto_tools=auto, parser_cls=cls
    )
    return Result(
        fields.content,
        fields.reasoning,
        [(c.function.name, c.function.arguments) for c in fields.tool_calls],
        resolve_finish_reason(finish, req, bool(fields.tool_calls)),
        [c.id for c in fields.tool_calls],
    )
