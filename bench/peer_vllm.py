"""vLLM's tool parsers (the tested release or another) as a peer of `side_by_side.py`.

vLLM's chat serving path without the engine: the parser class comes from
`ParserManager.get_parser(tool_parser_name=..., enable_auto_tools=True)`, the request is
adjusted by a parser of its own as vLLM's renderer does, and each stream gets a fresh parser
inside a `ChatStreamProcessor`: one `step(delta_text, delta_token_ids, None, prompt_ids)` per
delta, then one `step("", [], finish, ...)`. Whole output: `Parser.parse(text, request,
model_output_token_ids=...)` then `assemble_chat_message_fields`, a fresh parser per parse.

vLLM's modules come unzipped from its wheel (`bench/vllm_env.sh`); vLLM matches special tokens
by id, so each family gets a character-level HF tokenizer built in code from the bench's
`Tokens`, every marker its grammar names one token.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

from side_by_side import Chunk, EnvMissing, Outcome, Peer, Side, Tokens, peer_release

# the release on this python's path, and the one the adapter is tested against
VLLM_VERSION, TESTED = peer_release("vllm", "vllm_env.sh")

# Our families paired with vLLM's tool parser of the same markup: the same name, but
# nemotron_v3, whose markup vLLM 0.34.0 reads as `granite_toolcall_parser`. Left out: vLLM's
# other names for a grammar paired here (aliases: llama4_json, qwen3_json, qwen3_xml, step5,
# musespark, zaya_xml), `beam` and `hf` (vLLM reads them from the checkpoint's response
# template, which the bench's tokenizer has not), cohere_command3 and cohere_command4 (vLLM's
# parser needs the `cohere_melody` package, not in the lock), `openai` (a stub: vLLM reads
# Harmony only through its HarmonyParser, for gpt-oss checkpoints), and our families vLLM has
# no parser for (solar_open, minimax_m1, apriel, ...).
PAIRS: dict[str, str] = {
    name: name
    for name in (
        "qwen3_coder", "hermes", "kimi_k2", "glm45", "deepseek_v4", "minimax_m3", "muse",
        "gemma4", "pythonic", "jamba", "deepseek_v31", "mistral", "llama3_json", "granite",
        "xlam", "minimax_m2", "seed_oss", "granite4", "longcat", "internlm", "phi4_mini_json",
        "hunyuan_a13b", "apertus", "deepseek_v3", "deepseek_v32", "step3", "ernie45", "olmo3",
        "glm47", "functiongemma", "lfm2", "gigachat3", "minicpm5", "hy_v3", "kimi_k3",
        "llama4_pythonic", "mimo", "ling3", "poolside_v1", "plamo3",
        "deepseek_v41", "dots", "granite-20b-fc", "hy_v4", "inkling", "k2_horizon",
        "muse_glimmer", "ripple", "step3p5", "zaya",
    )
} | {"nemotron_v3": "granite_toolcall_parser"}  # fmt: skip


def load() -> dict[str, Any]:
    """Import vLLM's parser and serving modules (the unzipped wheel on this python's path)."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from transformers import PreTrainedTokenizerFast
        from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

        from vllm.entrypoints.openai.chat_completion.message_assembly import (
            assemble_chat_message_fields,
        )
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.entrypoints.openai.chat_completion.stream_processor import (
            ChatStreamProcessor,
        )
        from vllm.parser import ParserManager
        from vllm.tool_parsers import ToolParserManager
    except ImportError as error:
        raise EnvMissing(
            f"cannot import vLLM's parsers ({error}): run this script with the python "
            f"`bash bench/vllm_env.sh` prints (vLLM {TESTED}; another release: `bash "
            "scripts/vllm_env.sh VERSION`)"
        ) from None
    import vllm

    if vllm.__version__ != VLLM_VERSION:
        raise EnvMissing(f"vLLM {vllm.__version__} imported, its metadata says {VLLM_VERSION}")
    return {
        "PreTrainedTokenizerFast": PreTrainedTokenizerFast,
        "AddedToken": AddedToken,
        "Regex": Regex,
        "Tokenizer": Tokenizer,
        "decoders": decoders,
        "models": models,
        "pre_tokenizers": pre_tokenizers,
        "assemble_chat_message_fields": assemble_chat_message_fields,
        "ChatCompletionRequest": ChatCompletionRequest,
        "ChatStreamProcessor": ChatStreamProcessor,
        "ParserManager": ParserManager,
        "ToolParserManager": ToolParserManager,
    }


def hf_tokenizer(V: dict[str, Any], tokens: Tokens) -> Any:
    """An HF tokenizer (WordLevel over single characters, the markers added as special tokens)
    with exactly the ids of `tokens`, so the ids the bench hands vLLM are the ones it decodes."""
    model = V["Tokenizer"](V["models"].WordLevel(tokens.chars, unk_token=None))
    model.pre_tokenizer = V["pre_tokenizers"].Split(V["Regex"](r"[\s\S]"), "isolated")
    model.decoder = V["decoders"].Fuse()
    model.add_special_tokens([V["AddedToken"](t, normalized=False) for t in tokens.special])
    hf = V["PreTrainedTokenizerFast"](tokenizer_object=model)
    if hf.get_vocab() != tokens.vocab:
        raise AssertionError("the HF tokenizer's ids are not the bench's token ids")
    return hf


class Vllm(Side):
    label = "vLLM"

    def __init__(
        self,
        V: dict[str, Any],
        name: str,
        tokens: Tokens,
        tools: list[dict[str, Any]],
        template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.V = V
        self.tokens = tokens
        self.hf = hf_tokenizer(V, tokens)
        self.parser_cls = V["ParserManager"].get_parser(
            tool_parser_name=name, enable_auto_tools=True, tokenizer=self.hf
        )
        request = V["ChatCompletionRequest"](
            model="bench",
            messages=[{"role": "user", "content": "go"}],
            tools=tools,
            tool_choice="auto",
            chat_template_kwargs=template_kwargs or None,
        )
        # the renderer adjusts each request with a parser of its own before generation
        self.request = self._parser(request).adjust_request(request=request)
        self.prompt_ids = [tid for _, tid in tokens.tokens("go")]

    def _parser(self, request: Any = None) -> Any:
        request = request or self.request
        return self.parser_cls(
            self.hf,
            request.tools,
            chat_template_kwargs=request.chat_template_kwargs or {},
            model_config=None,
        )

    def run(
        self,
        chunks: list[Chunk],
        finish: str | None = "stop",
        clock: list[int] | None = None,
        budget_s: float | None = None,
    ) -> tuple[Outcome, int]:
        processor = self.V["ChatStreamProcessor"](
            self.request, self._parser(), enable_auto_tools=True, parser_cls=self.parser_cls
        )
        content: list[str] = []
        calls: dict[int, list[Any]] = {}
        now = time.perf_counter_ns
        deadline = now() + int(budget_s * 1e9) if budget_s else None
        fed = 0

        def take(delta: Any) -> None:
            if delta is None:
                return
            if delta.content:
                content.append(delta.content)
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, ["", []])
                if call.function is not None:
                    if call.function.name:
                        entry[0] += call.function.name
                    if call.function.arguments:
                        entry[1].append(call.function.arguments)

        try:
            for i, chunk in enumerate(chunks):
                start = now()
                step = processor.step(chunk.text, chunk.ids, None, self.prompt_ids)
                end = now()
                if clock is not None:
                    clock[i] = end - start
                take(step.delta)
                fed = i + 1
                if deadline and end > deadline:
                    return Outcome("", [], "budget"), fed
            if finish is not None:
                take(processor.step("", [], finish, self.prompt_ids).delta)
        except Exception as error:
            return Outcome("", [], f"{type(error).__name__}: {error}"), fed
        ordered = [calls[i] for i in sorted(calls)]
        return Outcome("".join(content), [(n, "".join(a)) for n, a in ordered]), fed

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        """The whole-output parse of `text`, its token ids made beforehand: the engine hands
        them over with the text, so tokenizing is not part of the parse's time."""
        ids = [tid for _, tid in self.tokens.tokens(text)]
        return lambda: self._parse_with(self._parser(), text, ids)

    def _parse_with(self, parser: Any, text: str, ids: list[int]) -> Outcome:
        try:
            reasoning, content, tool_calls = parser.parse(
                text, self.request, enable_auto_tools=True, model_output_token_ids=ids
            )
            fields = self.V["assemble_chat_message_fields"](
                self.request,
                reasoning,
                content,
                tool_calls,
                enable_auto_tools=True,
                parser_cls=self.parser_cls,
            )
        except Exception as error:
            return Outcome("", [], f"{type(error).__name__}: {error}")
        calls = [(c.function.name, c.function.arguments) for c in fields.tool_calls]
        return Outcome(fields.content or "", calls)


def registered(V: dict[str, Any]) -> list[str]:
    return list(V["ToolParserManager"].list_registered())


PEER = Peer(
    name="vLLM",
    version=VLLM_VERSION,
    pairs=PAIRS,
    load=load,
    side=Vllm,
    registered=registered,
    env_script="bench/vllm_env.sh",
    beforehand="token ids",
    # vLLM reads Mistral's pre-v11 shapes (`[TOOL_CALLS] ` then JSON or text) only when the
    # tokenizer has no `[ARGS]` (`_is_pre_v11_tokeniser`); the v11+ models write a name at once
    generation_markers={"mistral": ("[ARGS]", r"^[^\[]*(\[TOOL_CALLS\])+(\s|[\[{])")},
    # K2 Horizon's parser reads the JSON call format only when the request asks for it
    template_kwargs={"k2_horizon": (r"<ifm\|tool_call>\s*\{", {"tool_call_format": "json"})},
)
