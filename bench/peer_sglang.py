"""SGLang's detectors (the tested release or another) as a peer of `side_by_side.py`.

Driven the way SGLang's OpenAI chat serving layer drives them, without the engine (facts read
from its serving_chat.py, as `docs/sglang.md` and `tests/sglang/harness.py` record them):

- streaming: one `FunctionCallParser(tools, name)` per choice; `parse_stream_chunk(delta)` per
  engine output (the detector's `parse_streaming_increment`); the output that carries a finish
  reason other than abort is followed by `parse_stream_end()` (the detector's `finish`) in the
  same step, then by the serving layer's `_check_for_unstreamed_tool_args`, whose top-up of
  the last call's arguments reaches the client too (SGLang's own method, compiled from its
  source by the tests' harness: serving_chat.py cannot be imported without torchvision);
- whole output: `FunctionCallParser(tools, name, tool_choice="auto")`, `has_tool_call(text)`,
  then `parse_non_stream(text)` (the detector's `detect_and_parse`), a fresh parser per parse.

SGLang's detectors read text, not token ids: they get the same deltas as the other sides (cut
at the family's token boundaries), and no tokenizer (the one detector that takes one, hunyuan,
reads markers from its vocabulary and falls back to its defaults).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any, Callable

from side_by_side import ROOT, Chunk, EnvMissing, Outcome, Peer, Side, Tokens, peer_release

# the release on this python's path, and the one the adapter is tested against
SGLANG_VERSION, TESTED = peer_release("sglang", "sglang_env.sh")
OVERRIDE_ENV = "TOOLGRAMMAR_SGLANG_OVERRIDE"

# Our family names paired with SGLang's tool-call parser name for the same markup: every name
# of `FunctionCallParser.ToolCallParserEnum` that is one of our names, one per detector class
# and markup (qwen = qwen25, nanbeige = qwen3_coder). Left out: glm45 and glm (SGLang's GLM-4.5
# detector wants a newline after the name, which the streams, written in the grammar's
# canonical GLM-4.7 spelling, do not have: glm47 is their pairing), dots (values are stripped,
# so long_string cannot keep its content, as for vLLM), gpt-oss (Harmony, which our `openai`
# reads with the real encoding's tokens), beam and response_template (no grammar here).
PAIRS: dict[str, str] = {
    "qwen3_coder": "qwen3_coder", "hermes": "hermes", "qwen25": "qwen25", "kimi_k2": "kimi_k2",
    "glm47": "glm47", "deepseek_v3": "deepseekv3",
    "deepseek_v31": "deepseekv31", "deepseek_v32": "deepseekv32", "deepseek_v4": "deepseekv4",
    "deepseek_v41": "deepseekv41", "minimax_m2": "minimax-m2", "minimax_m3": "minimax-m3",
    "muse": "muse", "gemma4": "gemma4", "pythonic": "pythonic", "mistral": "mistral",
    "llama3_json": "llama3", "internlm": "interns1", "hy_v3": "hunyuan", "apertus": "apertus2509",
    "step3": "step3", "step3p5": "step3p5", "lfm2": "lfm2", "gigachat3": "gigachat3",
    "gigachat35": "gigachat35", "minicpm5": "minicpm5", "kimi_k3": "kimi_k3",
    "k2_horizon": "k2_horizon", "mimo": "mimo", "ling3": "ling3", "poolside_v1": "poolside_v1",
    "cohere_command4": "cohere_command4", "spark25": "spark25", "trinity": "trinity",
    "inkling": "inkling", "iquest_q1": "iquest_q1",
}  # fmt: skip


def load() -> dict[str, Any]:
    """Import SGLang's function-call parser and the serving layer's end-of-stream check."""
    if os.environ.get(OVERRIDE_ENV, "") not in ("", "0"):
        raise EnvMissing(f"unset {OVERRIDE_ENV}: it makes SGLang's own parser names ours")
    sys.path.insert(0, str(ROOT / "tests" / "sglang"))
    try:
        import sglang
        from sglang.srt.entrypoints.openai.protocol import Tool
        from sglang.srt.function_call.function_call_parser import FunctionCallParser

        from harness import unstreamed_args_check  # SGLang's own, compiled from its source
    except ImportError as error:
        raise EnvMissing(
            f"cannot import SGLang {SGLANG_VERSION}'s parsers ({error}): run "
            "bash scripts/sglang_env.sh and this script with the python it prints"
        ) from None
    if sglang.__version__ != SGLANG_VERSION:
        raise EnvMissing(
            f"SGLang {sglang.__version__} imported, its metadata says {SGLANG_VERSION}"
        )
    # its detectors warn per parameter they cannot type (as vLLM's bench side runs with
    # VLLM_LOGGING_LEVEL=ERROR): a timed step would measure the terminal
    logging.getLogger("sglang").setLevel(logging.ERROR)
    return {
        "Tool": Tool,
        "FunctionCallParser": FunctionCallParser,
        "unstreamed_args_check": unstreamed_args_check(),
    }


class Sglang(Side):
    label = "SGLang"

    def __init__(
        self, S: dict[str, Any], name: str, tokens: Tokens, tools: list[dict[str, Any]]
    ) -> None:
        self.S = S
        self.name = name
        # the request's tools as the serving layer holds them, validated once per request
        self.tools = [S["Tool"].model_validate(tool) for tool in tools]

    def run(
        self,
        chunks: list[Chunk],
        finish: str | None = "stop",
        clock: list[int] | None = None,
        budget_s: float | None = None,
    ) -> tuple[Outcome, int]:
        parser = self.S["FunctionCallParser"](self.tools, self.name)
        content: list[str] = []
        calls: dict[int, list[Any]] = {}
        now = time.perf_counter_ns
        deadline = now() + int(budget_s * 1e9) if budget_s else None
        steps = chunks or [Chunk("", [], 0)]
        fed = 0

        def take(normal: str | None, items: list[Any]) -> None:
            if normal:
                content.append(normal)
            for item in items:
                entry = calls.setdefault(item.tool_index, ["", []])
                if item.name:
                    entry[0] += item.name
                if item.parameters:
                    entry[1].append(item.parameters)

        try:
            for i, chunk in enumerate(steps):
                # the engine output that carries the finish reason flushes the parser with it
                flush = finish is not None and i == len(steps) - 1
                start = now()
                normal, items = parser.parse_stream_chunk(chunk.text)
                if flush:
                    end_normal, end_items = parser.parse_stream_end()
                    normal, items = (normal or "") + end_normal, list(items) + end_items
                end = now()
                if clock is not None and i < len(clock):
                    clock[i] = end - start
                take(normal, items)
                fed = i + 1
                if deadline and end > deadline:
                    return Outcome("", [], "budget"), fed
            if finish is not None:
                self._top_up(parser, calls)
        except Exception as error:  # a parser that raises is counted, never hidden
            return Outcome("", [], f"{type(error).__name__}: {error}"), fed
        ordered = [calls[i] for i in sorted(calls)]
        return Outcome("".join(content), [(n, "".join(a)) for n, a in ordered]), min(
            fed, len(chunks)
        )

    def _top_up(self, parser: Any, calls: dict[int, list[Any]]) -> None:
        """What the serving layer's end-of-stream check sends after the parser's own end: the
        last call's arguments as the detector recorded them, past what it streamed."""
        chunk = self.S["unstreamed_args_check"](
            None, parser, {"meta_info": {"id": "bench"}}, _Request(), 0, 0
        )
        if chunk is None:
            return
        data = json.loads(chunk.removeprefix("data: "))
        for part in data["choices"][0]["delta"]["tool_calls"]:
            calls.setdefault(part["index"], ["", []])[1].append(part["function"]["arguments"])

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        return lambda: self._parse(text)

    def _parse(self, text: str) -> Outcome:
        """The serving layer's non-streamed tool step (`_process_tool_calls`, tool_choice auto)."""
        try:
            parser = self.S["FunctionCallParser"](self.tools, self.name, tool_choice="auto")
            calls: list[tuple[str, str]] = []
            if parser.has_tool_call(text):
                text, items = parser.parse_non_stream(text)
                calls = [(item.name, item.parameters) for item in items]
        except Exception as error:
            return Outcome("", [], f"{type(error).__name__}: {error}")
        return Outcome(text or "", calls)


class _Request:
    """The one field of a chat request the end-of-stream check reads."""

    model = "bench"


def registered(S: dict[str, Any]) -> list[str]:
    """SGLang's own names (the harness's import also registers ours as `tg-NAME`)."""
    return [n for n in S["FunctionCallParser"].ToolCallParserEnum if not n.startswith("tg-")]


PEER = Peer(
    name="SGLang",
    version=SGLANG_VERSION,
    pairs=PAIRS,
    load=load,
    side=Sglang,
    registered=registered,
    env_script="scripts/sglang_env.sh",
    beforehand="the request's tools validated",
)
