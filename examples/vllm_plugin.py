"""Drive the toolgrammar vLLM plugin through vLLM's own serving classes, with no GPU and no model.

    python examples/vllm_plugin.py [FAMILY] [OUTPUT.txt] [--tools tools.json] [--chunk N] [--cut N]

Does per request what `vllm serve MODEL --enable-auto-tool-choice --tool-parser-plugin
toolgrammar.adapters.vllm --tool-call-parser tg-FAMILY --reasoning-parser tg-FAMILY` does
around the engine: vLLM composes its parser, adjusts the request, streams the model output
through its chat stream processor (one step per engine output, the last one with the
finish reason), and parses it whole for a non-streaming response. The model output is read
from a file; the tokenizer is a character-level one built here in which the family's
markers are special tokens. Needs vLLM's Python packages (see docs/vllm.md).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from vllm.entrypoints.openai.chat_completion.message_assembly import (
    assemble_chat_message_fields,
)
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser.parser_manager import ParserManager
from vllm.tool_parsers import ToolParserManager

from toolgrammar.adapters.markup import nonblank_markup_literals
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec

HERE = Path(__file__).parent


def char_tokenizer(family: str) -> PreTrainedTokenizerFast:
    """One token per character, and the family's markers as special tokens."""
    vocab = {"[UNK]": 0, **{chr(c): c - 31 for c in range(32, 127)}, "\n": 96, "\t": 97}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens(
        [
            AddedToken(m, special=True, normalized=False)
            for m in sorted(nonblank_markup_literals(with_params(get_spec(family))))
        ]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("family", nargs="?", default="qwen3_coder")
    ap.add_argument("output", nargs="?", default=str(HERE / "qwen3_coder.txt"))
    ap.add_argument("--tools", default=str(HERE / "tools.json"))
    ap.add_argument("--chunk", type=int, default=7, help="characters per engine output")
    ap.add_argument("--cut", type=int, help="stop the output after N characters (length)")
    args = ap.parse_args()

    # what --tool-parser-plugin does at server start
    ToolParserManager.import_tool_parser("toolgrammar.adapters.vllm")
    name = "tg-" + args.family
    text = Path(args.output).read_text(encoding="utf-8")
    finish = "stop"
    if args.cut is not None:
        text, finish = text[: args.cut], "length"
    tools = json.loads(Path(args.tools).read_text(encoding="utf-8"))
    tokenizer = char_tokenizer(args.family)
    parser_cls = ParserManager.get_parser(
        tool_parser_name=name,
        reasoning_parser_name=name,
        enable_auto_tools=True,
        model_name="example",
        tokenizer=tokenizer,
    )
    assert parser_cls is not None

    def request(stream: bool) -> tuple[ChatCompletionRequest, object]:
        req = ChatCompletionRequest(
            model="example",
            messages=[{"role": "user", "content": "Weather in Paris, then save a note."}],
            tools=tools,
            tool_choice="auto",
            stream=stream,
        )
        parser = parser_cls(tokenizer, req.tools, chat_template_kwargs={}, model_config=None)
        return parser.adjust_request(req), parser

    print(f"== streaming {args.family}, {args.chunk} characters per engine output, {finish}")
    req, parser = request(stream=True)
    print(f"adjust_request: skip_special_tokens={req.skip_special_tokens}")
    processor = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=parser_cls)
    pieces = [text[i : i + args.chunk] for i in range(0, len(text), args.chunk)]
    arguments: dict[int, str] = {}
    for piece, reason in [(p, None) for p in pieces] + [("", finish)]:
        ids = tokenizer.encode(piece, add_special_tokens=False)
        step = processor.step(piece, ids, reason, [0])
        if step.delta is not None:
            chunk = step.delta.model_dump(exclude_none=True)
            print(json.dumps(chunk, ensure_ascii=False))
            for call in chunk.get("tool_calls", []):
                part = (call.get("function") or {}).get("arguments") or ""
                arguments[call["index"]] = arguments.get(call["index"], "") + part
        if step.finish_reason is not None:
            print(f"finish_reason: {step.finish_reason}")
    for index, text_args in sorted(arguments.items()):
        print(f"call {index} arguments, accumulated: {json.loads(text_args)}")

    print(f"\n== non-streaming {args.family}")
    req, parser = request(stream=False)
    reasoning, content, calls = parser.parse(text, req, enable_auto_tools=True)
    fields = assemble_chat_message_fields(
        req, reasoning, content, calls, enable_auto_tools=True, parser_cls=parser_cls
    )
    print(f"reasoning: {fields.reasoning!r}\ncontent: {fields.content!r}")
    for call in fields.tool_calls:
        print(f"tool call {call.function.name}: {call.function.arguments}")


if __name__ == "__main__":
    main()
