"""vLLM tool-parser plugin: every toolgrammar family as a vLLM tool parser, vLLM unchanged.

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin toolgrammar.adapters.vllm --tool-call-parser tg-qwen3_coder

Importing this module registers, for every name of `toolgrammar.families()`, a `ToolParser`
subclass as `tg-NAME` in vLLM's tool-parser manager, and a companion reasoning parser under
the same name in its reasoning-parser manager (`--reasoning-parser tg-NAME`, see below).
With `TOOLGRAMMAR_VLLM_OVERRIDE=1` in the environment both are also registered under vLLM's
own names (`--tool-call-parser glm45 --reasoning-parser glm45`), replacing vLLM's parsers:
the managers look up eagerly registered classes before their lazily imported built-ins.

How vLLM drives a tool parser (read from vLLM 0.33.0's serving layer, unchanged in 0.34.0):
- one parser instance per request and choice; `adjust_request` runs before sampling
  parameters are made, so it is where `skip_special_tokens` is turned off;
- streaming: `extract_tool_calls_streaming` once per engine output with that output's
  text (any number of tokens); the chat stream processor's last step carries the finish
  reason, and only then does the unified parser flush: it calls `finish_streaming()` on
  every parser that sets `engine_based_streaming`. That is where a cut call's arguments
  are closed, so the client's accumulated arguments always `json.loads`;
- non-streaming: `extract_tool_calls` on the whole text;
- the serving layer itself maps the engine's finish reason: `stop` with tool calls
  streamed becomes `tool_calls`, `length` stays `length` (the same rule as
  `StreamParser.finish`);
- the unified parser sets `skip_reasoning_parsing = True` on a tool parser that has the
  attribute when no reasoning parser is configured.

Reasoning. The tool-parser interface can return reasoning only while streaming; a
non-streaming result has content and calls, nothing else. So:
- `--tool-call-parser tg-F` alone: the family's reasoning text is returned as content, in
  both paths (vLLM's own rule when no reasoning parser is configured), in output order;
- `--tool-call-parser tg-F --reasoning-parser tg-F` (and `--reasoning-parser-plugin
  toolgrammar.adapters.vllm`, which the engine process needs to find the name): reasoning
  is returned as reasoning in both paths. The companion reasoning parser leaves the whole
  output to the tool parser (one toolgrammar parser reads reasoning, content and calls
  together, so a call opened inside reasoning is not lost), and in the non-streaming path
  reports the reasoning that the same parse finds;
- with one of vLLM's reasoning parsers: it takes the reasoning first; reasoning markup
  the tool parser still finds after that is returned as content;
- our reasoning parser without our tool parser of the same grammar (none, or another
  family's): it is a reasoning parser of its own, takes the reasoning out and hands the
  rest on as written (`ReasoningSplit`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning import ReasoningParser, ReasoningParserManager
from vllm.tool_parsers import ToolParser, ToolParserManager

import toolgrammar
from toolgrammar.adapters.env_params import params_from_env
from toolgrammar.adapters.env_policies import policies_from_env
from toolgrammar.adapters.markup import special_markers
from toolgrammar.adapters.reasoning_split import ReasoningSplit, last_reasoning_marker
from toolgrammar.adapters.response_template import response_template_of, template_for
from toolgrammar.runtime.deltas import Delta
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec

__all__ = [
    "PARAMS_ENV",
    "PREFIX",
    "REASONING_TAKEN",
    "ToolgrammarReasoningParser",
    "ToolgrammarToolParser",
    "params",
    "reasoning_parser_class",
    "register",
    "response_template_of",
    "tool_parser_class",
]

PREFIX = "tg-"
# Grammar params per registered name, e.g. '{"hy_v4": {"suffix": ":6124c78e"}}': a marker
# spelling that varies per checkpoint cannot come from the command line of a tool parser.
PARAMS_ENV = "TOOLGRAMMAR_VLLM_PARAMS"
# vLLM wraps the parsers registered under these names in model-specific unified parsers
# that expect vLLM's own classes, so toolgrammar never takes these names over (`beam` is
# vLLM's response-template parser: its tool and reasoning parsers stand for one unified
# parser together, and `--reasoning-parser beam` refuses any other tool parser; so is `hf`,
# whose toolgrammar counterpart is `tg-hf`).
_WRAPPED_BY_VLLM = frozenset(
    {"kimi_k3", "cohere_command3", "cohere_command4", "minicpmv", "beam", "hf"}
)

# A unified vLLM parser builds its reasoning parser, then its tool parser, in one call on
# one thread: a companion reasoning parser announces its family here and the tool parser
# built next takes the announcement, so it knows reasoning is its to report.
_announced = threading.local()


# tokens before a step's new ones that a reasoning closer spelled over several tokens may
# start in (`is_reasoning_end_streaming`)
_CLOSER_TOKENS = 32


def _reasoning_parser_beside() -> ToolgrammarReasoningParser | None:
    """The reasoning parser built with the tool parser being built (called from its
    `__init__`). vLLM's unified parser builds its reasoning parser, stores it, then builds the
    tool parser: the builder's own reasoning parser is the answer when the builder can be
    seen (so a reasoning parser built alone earlier on this thread never pairs), else the one
    announced last on this thread."""
    announced = getattr(_announced, "parser", None)
    _announced.parser = None
    builder = sys._getframe(2).f_locals.get("self")  # _beside <- __init__ <- the builder
    if builder is not None and hasattr(builder, "_reasoning_parser"):
        own = builder._reasoning_parser
        return own if isinstance(own, ToolgrammarReasoningParser) else None
    return announced


def _special_tokens(tokenizer: Any) -> list[str]:
    """The tokenizer's special tokens: the named ones and every added token marked special."""
    tokens: set[str] = set(getattr(tokenizer, "all_special_tokens", None) or ())
    decoder = getattr(tokenizer, "added_tokens_decoder", None)
    if isinstance(decoder, dict):
        tokens.update(str(t) for t in decoder.values() if getattr(t, "special", False))
    return sorted(tokens)


def _request_tools(request: Any) -> list[dict[str, Any]] | None:
    """The request's tools as plain OpenAI dicts (chat's wrapped shape or Responses' flat one)."""
    tools = getattr(request, "tools", None)
    if tools is None:
        return None
    out: list[dict[str, Any]] = []
    for tool in tools:
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump(exclude_none=True)
        if isinstance(tool, dict):
            out.append(tool)
    return out


def _template_for(family: str, tokenizer: Any, given: Any) -> dict[str, Any] | None:
    """The template of a template family (`hf`), or None for a grammar family; a template
    family without one is a clear error at server start, where vLLM builds the parser."""
    return template_for(PREFIX + family, family, tokenizer, given)


def params(family: str) -> dict[str, str] | None:
    """The grammar params the environment gives for `family` (None: the grammar's defaults)."""
    return params_from_env(PARAMS_ENV, family)


class _Collected:
    """Deltas of toolgrammar folded into one vLLM message (one chunk or one whole output)."""

    __slots__ = ("content", "reasoning", "calls")

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[DeltaToolCall] = []

    def add(self, deltas: list[Delta], reasoning_as_content: bool) -> None:
        for delta in deltas:
            if delta.reasoning:
                (self.content if reasoning_as_content else self.reasoning).append(delta.reasoning)
            if delta.content:
                self.content.append(delta.content)
            for part in delta.tool_calls:
                last = self.calls[-1] if self.calls else None
                if (
                    last is not None
                    and last.index == part.index
                    and part.id is None
                    and part.function.name is None
                    and last.function is not None
                ):
                    last.function.arguments = (last.function.arguments or "") + (
                        part.function.arguments
                    )
                    continue
                self.calls.append(
                    DeltaToolCall(
                        index=part.index,
                        id=part.id,
                        type="function" if part.id is not None else None,
                        function=DeltaFunctionCall(
                            name=part.function.name, arguments=part.function.arguments
                        ),
                    )
                )

    def message(self) -> DeltaMessage | None:
        if not (self.content or self.reasoning or self.calls):
            return None
        return DeltaMessage(
            content="".join(self.content) or None,
            reasoning="".join(self.reasoning) or None,
            tool_calls=self.calls,
        )


class ToolgrammarToolParser(ToolParser):
    """A vLLM tool parser run by toolgrammar's StreamParser for `family`; one per request.

    Subclassed once per registered name by `tool_parser_class`.
    """

    family: ClassVar[str] = ""
    # vLLM calls finish_streaming() at the end of the stream only on parsers that set this,
    # and then feeds it the new text alone, not the text so far.
    engine_based_streaming: bool = True
    # vLLM sets it to True on the instance when no reasoning parser is configured.
    skip_reasoning_parsing: bool = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, **kwargs: Any) -> None:
        if not self.family:
            raise TypeError("use tool_parser_class(family) for a parser of one family")
        super().__init__(tokenizer, tools)
        self._params = params(self.family)
        # vLLM's answers to what is content and what is a call (docs/compat.md's profile),
        # checked here: vLLM builds the parser at server start
        self._policies = policies_from_env("vllm")
        self._template = _template_for(self.family, tokenizer, kwargs.get("response_template"))
        toolgrammar.StreamParser(
            self.family, params=self._params, response_template=self._template, **self._policies
        )
        self._spec = with_params(toolgrammar.family_spec(self.family, self._template), self._params)
        self._stream: toolgrammar.StreamParser | None = None
        # reasoning is reported as reasoning only next to our reasoning parser of the same
        # grammar, which then leaves the whole output to this parser
        beside = _reasoning_parser_beside()
        self._reports_reasoning = beside is not None and beside.pair_with(self._spec)
        self._specials = special_markers(self._spec, _special_tokens(tokenizer))

    @property
    def _reasoning_as_content(self) -> bool:
        return self.skip_reasoning_parsing or not self._reports_reasoning

    def _parser(self, request: Any) -> toolgrammar.StreamParser:
        return toolgrammar.StreamParser(
            self.family,
            _request_tools(request),
            params=self._params,
            response_template=self._template,
            **self._policies,
        )

    def adjust_request(self, request: Any) -> Any:
        """vLLM's request adjustment, then keep the family's special-token markers in the
        text: with `skip_special_tokens` they are deleted before any parser sees them."""
        request = super().adjust_request(request)
        if self._specials:
            if hasattr(request, "skip_special_tokens"):
                request.skip_special_tokens = False
            if hasattr(request, "spaces_between_special_tokens"):
                request.spaces_between_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        """The whole output: the same parser as streaming, fed once and finished."""
        parser = self._parser(request)
        deltas = parser.feed(model_output) + parser.finish("stop")
        collected = _Collected()
        collected.add(deltas, self._reasoning_as_content)
        calls = [
            ToolCall(
                id=call.id,
                type="function",
                function=FunctionCall(
                    id=call.id, name=call.function.name, arguments=call.function.arguments
                ),
            )
            for call in toolgrammar.assemble(deltas).tool_calls
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(calls),
            tool_calls=calls,
            content="".join(collected.content) or None,
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        """One engine output, whatever it holds (part of a token, several calls)."""
        if self._stream is None:
            self._stream = self._parser(request)
        collected = _Collected()
        collected.add(self._stream.feed(delta_text), self._reasoning_as_content)
        return collected.message()

    def finish_streaming(self, finish_reason: str | None = None) -> DeltaMessage | None:
        """End of stream: close what was streamed, release held text.

        vLLM calls it without the reason; the reason decides what the end held back
        (docs/policies.md, "Unfinished output"), so a caller that knows it may pass it."""
        if self._stream is None or self._stream.finished:  # nothing streamed, or said already
            return None
        collected = _Collected()
        collected.add(self._stream.finish(finish_reason or "stop"), self._reasoning_as_content)
        return collected.message()


class ToolgrammarReasoningParser(ReasoningParser):
    """`--reasoning-parser tg-NAME` (and, with the override, vLLM's own NAME).

    Beside toolgrammar's tool parser of the same grammar (built right after it, by the same
    unified parser) it is the companion: it leaves every token to the tool parser (reasoning
    has ended before the output starts, from vLLM's point of view), which reads reasoning,
    content and calls together, and for the non-streaming path it reports the reasoning the
    same parse finds. Otherwise (no tool parser, or one of another family) it is a reasoning
    parser of its own (`ReasoningSplit`): it takes the family's reasoning out and hands the
    rest on as written, to that tool parser or to the client as content.
    """

    family: ClassVar[str] = ""
    engine_based_streaming: bool = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        if not self.family:
            raise TypeError("use reasoning_parser_class(family) for a parser of one family")
        super().__init__(tokenizer, *args, **kwargs)
        self._template = _template_for(self.family, tokenizer, kwargs.get("response_template"))
        self._params = params(self.family)
        self._spec = with_params(toolgrammar.family_spec(self.family, self._template), self._params)
        self._paired = False
        # the prompt's last reasoning marker, "open" or "close" (None: none, the grammar's
        # default; a closed one leaves no reasoning to the output, as vLLM's own parsers read)
        self._prompt_said: str | None = None
        self._split: ReasoningSplit | None = None
        self._specials = special_markers(
            self._spec, _special_tokens(tokenizer), reasoning_only=True
        )
        _announced.parser = self

    def pair_with(self, spec: Any) -> bool:
        """Called by the tool parser built next: the same grammar makes the pair."""
        self._paired = spec is self._spec or spec == self._spec
        return self._paired

    # -- what the prompt says

    def _prompt_says(self, input_ids: Sequence[int]) -> str | None:
        try:
            text = self.model_tokenizer.decode(list(input_ids), skip_special_tokens=False)
        except Exception:  # a tokenizer that cannot decode them: the grammar's default
            return None
        return last_reasoning_marker(self._spec, text)

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._prompt_said = self._prompt_says(prompt_token_ids)

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        if self._paired or not self._spec.reasoning:
            return True
        return self._prompt_says(input_ids) == "close"

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Any) -> bool:
        """Called at every decode step while reasoning (structured outputs): only the new
        tokens and a few before them, which a closer split over tokens may start in, are
        read, so a step costs the same at any length."""
        if self._paired or not self._spec.reasoning:
            return True
        size = len(input_ids)
        start = max(0, size - len(list(delta_ids)) - _CLOSER_TOKENS)
        return self._prompt_says([input_ids[i] for i in range(start, size)]) == "close"

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._paired or (self._split is not None and self._split.ended)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return list(input_ids)

    def adjust_request(self, request: Any) -> Any:
        """Keep the reasoning markers that are special tokens in the text (alone: beside
        our tool parser, it keeps every marker)."""
        request = super().adjust_request(request)
        if self._specials and not self._paired:
            if hasattr(request, "skip_special_tokens"):
                request.skip_special_tokens = False
            if hasattr(request, "spaces_between_special_tokens"):
                request.spaces_between_special_tokens = False
        return request

    # -- alone: a reasoning parser of its own

    def _new_split(self) -> ReasoningSplit:
        return ReasoningSplit(
            self.family,
            reasoning_open=True if self._prompt_said == "open" else None,
            params=self._params,
            response_template=self._template,
            policies=policies_from_env("vllm"),
        )

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        if not self._paired:
            if self._prompt_said == "close":
                return None, model_output
            split = self._new_split()
            reasoning, rest = split.feed(model_output)
            more, tail = split.finish()
            return (reasoning + more) or None, (rest + tail) or None
        message = toolgrammar.parse(
            self.family,
            model_output,
            _request_tools(request),
            params=self._params,
            response_template=self._template,
        )
        return message.reasoning, model_output

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self._paired:  # vLLM asked before it knew reasoning had ended: hand it on
            return DeltaMessage(content=delta_text) if delta_text else None
        if self._split is None:
            self._split = self._new_split()
        return _message(*self._split.feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        if self._paired or self._split is None:
            return None
        return _message(*self._split.finish())


def _message(reasoning: str, content: str) -> DeltaMessage | None:
    if not (reasoning or content):
        return None
    return DeltaMessage(reasoning=reasoning or None, content=content or None)


def _class_name(family: str, kind: str) -> str:
    return "Tg_" + "".join(c if c.isalnum() else "_" for c in family) + kind


_tool_classes: dict[str, type[ToolgrammarToolParser]] = {}
_reasoning_classes: dict[str, type[ToolgrammarReasoningParser]] = {}


def tool_parser_class(family: str) -> type[ToolgrammarToolParser]:
    """The tool-parser class of one registered family name (UnknownFamily if none)."""
    if family not in toolgrammar.TEMPLATE_FAMILIES:
        get_spec(family)
    if family not in _tool_classes:
        name = _class_name(family, "ToolParser")
        cls = type(name, (ToolgrammarToolParser,), {"family": family, "__module__": __name__})
        globals()[name] = cls  # importable by name, so vLLM can pickle it
        _tool_classes[family] = cls
    return _tool_classes[family]


def reasoning_parser_class(family: str) -> type[ToolgrammarReasoningParser]:
    """The companion reasoning-parser class of one registered family name."""
    if family not in toolgrammar.TEMPLATE_FAMILIES:
        get_spec(family)
    if family not in _reasoning_classes:
        name = _class_name(family, "ReasoningParser")
        cls = type(name, (ToolgrammarReasoningParser,), {"family": family, "__module__": __name__})
        globals()[name] = cls
        _reasoning_classes[family] = cls
    return _reasoning_classes[family]


def register(override: bool = False) -> list[str]:
    """Register every family as `tg-NAME` (tool and reasoning parser); with `override`, also
    under vLLM's own tool- and reasoning-parser names for the same families (but those vLLM
    wraps, `_WRAPPED_BY_VLLM`). Returns the tool-parser names registered; the reasoning-parser
    names taken over are in `REASONING_TAKEN`."""
    vllm_names = set(ToolParserManager.list_registered())
    vllm_reasoning = set(ReasoningParserManager.list_registered())
    names: list[str] = []
    REASONING_TAKEN.clear()
    for family in (*toolgrammar.families(), *toolgrammar.TEMPLATE_FAMILIES):
        ToolParserManager.register_module(PREFIX + family, module=tool_parser_class(family))
        ReasoningParserManager.register_module(
            PREFIX + family, module=reasoning_parser_class(family)
        )
        names.append(PREFIX + family)
        if not override or family in _WRAPPED_BY_VLLM:
            continue
        if family in vllm_names:
            ToolParserManager.register_module(family, module=tool_parser_class(family))
            names.append(family)
        if family in vllm_reasoning:
            ReasoningParserManager.register_module(family, module=reasoning_parser_class(family))
            REASONING_TAKEN.append(family)
    return names


# vLLM's reasoning-parser names the last `register(override=True)` took over
REASONING_TAKEN: list[str] = []
REGISTERED = register(override=os.environ.get("TOOLGRAMMAR_VLLM_OVERRIDE", "") not in ("", "0"))
