"""An SGLang tool-call detector run by toolgrammar's StreamParser, one class per family name.

How SGLang 0.5.23's serving layer drives a detector (facts read from its source):
- `FunctionCallParser` builds one detector per request and choice (and throwaway ones to ask
  for constraints); it bypasses the detector when the request declares no tools;
- streaming: `parse_streaming_increment(new_text, tools)` per engine output; on the output that
  carries the finish reason (not an abort) `finish(tools)` follows, then the serving layer's
  `_check_for_unstreamed_tool_args` compares, for the last call, `prev_tool_call_arr[-1]
  ["arguments"]` (a string is taken as is, anything else is `json.dumps`-ed) with
  `streamed_args_for_tool[-1]` and sends what the first holds beyond the second;
- non-streaming: `has_tool_call(text)`; if True, `detect_and_parse(text, tools)` gives the
  content and the calls, else the text is content as it is.

So this detector records, for every call, the exact argument text it sent, in both lists: the
serving layer's end-of-stream check finds nothing left to send and never adds to arguments
that `finish` has already closed.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.runtime_context import get_serving
from xgrammar import StructuralTag
from xgrammar.structural_tag import GrammarFormat

import toolgrammar
from toolgrammar.adapters.env_params import params_from_env
from toolgrammar.adapters.env_policies import policies_from_env
from toolgrammar.adapters.markup import nonblank_markup_literals
from toolgrammar.adapters.response_template import template_for
from toolgrammar.adapters.sglang_pairing import PARAMS_ENV, PREFIX, take
from toolgrammar.adapters.sglang_reasoning import ToolgrammarReasoningDetector
from toolgrammar.runtime.params import with_params

logger = logging.getLogger(__name__)


def tool_dicts(tools: list[Any] | None) -> list[dict[str, Any]] | None:
    """SGLang's `Tool` models as the plain OpenAI dicts toolgrammar reads."""
    if tools is None:
        return None
    return [t.model_dump(exclude_none=True) if hasattr(t, "model_dump") else t for t in tools]


def tool_positions(tools: list[Any] | None) -> dict[str, int]:
    """Each declared tool's position in the request, which SGLang's whole-output calls carry."""
    return {
        tool["function"]["name"]: i
        for i, tool in enumerate(tool_dicts(tools) or [])
        if isinstance(tool.get("function"), dict) and "name" in tool["function"]
    }


class ToolgrammarDetector(BaseFormatDetector):
    """SGLang detector for `family`; subclassed once per registered name (`tool_detector_class`).

    Reasoning the family's markup holds is returned as normal text, in output order, unless the
    companion reasoning detector (`--reasoning-parser tg-NAME`) announced itself: it reports it.
    A template family (`hf`) reads the `response_template` passed here, else the tokenizer's
    (SGLang passes its tokenizer to a detector whose signature names `tokenizer`).
    """

    family: ClassVar[str] = ""

    def __init__(self, tokenizer: Any = None, response_template: Any = None) -> None:
        if not self.family:
            raise TypeError("use tool_detector_class(family) for a detector of one family")
        super().__init__()
        self._params = params_from_env(PARAMS_ENV, self.family)
        self._template = template_for(
            PREFIX + self.family, self.family, tokenizer, response_template
        )
        self._policies = policies_from_env("sglang")
        # a bad param, template or policy fails here: SGLang builds a detector at the first
        # request's constraints
        toolgrammar.StreamParser(
            self.family, params=self._params, response_template=self._template, **self._policies
        )
        # decided when the first text arrives (`_pair`): SGLang's chat endpoint builds the
        # reasoning parser first, its Responses endpoint builds it second
        self._paired: bool | None = None
        self._reasoning_open: bool | None = None
        self._stream: toolgrammar.StreamParser | None = None
        self._checked: tuple[str, bool] | None = None

    def _pair(self) -> None:
        """Take the companion reasoning detector's announcement, if one was made, once."""
        if self._paired is None:
            pairing = take(self.family)
            self._paired = pairing is not None
            if pairing is not None:
                self._reasoning_open = pairing.reasoning_open

    @property
    def _reasoning_as_content(self) -> bool:
        return not self._paired

    def _parser(self, tools: list[Any] | None) -> toolgrammar.StreamParser:
        self._pair()
        return toolgrammar.StreamParser(
            self.family,
            tool_dicts(tools),
            reasoning_open=self._reasoning_open,
            params=self._params,
            response_template=self._template,
            **self._policies,
        )

    def _normal_text(self, deltas: list[toolgrammar.Delta]) -> str:
        parts: list[str] = []
        for delta in deltas:
            if delta.reasoning and self._reasoning_as_content:
                parts.append(delta.reasoning)
            if delta.content:
                parts.append(delta.content)
        return "".join(parts)

    # ------------------------------------------------------------------ whole output

    def has_tool_call(self, text: str) -> bool:
        """Whether parsing may change the text: a call, or markup that is not content. When
        False SGLang keeps the text as content unparsed, which is then exactly what parsing
        gives. SGLang does not pass the tools here, and with tools a name item may read more
        (`name(requested=true)`): text holding any of the family's markers says True, and
        `detect_and_parse`, which has the tools, gives the exact content."""
        if self._checked is None or self._checked[0] != text:
            parser = self._parser(None)
            deltas = parser.feed(text) + parser.finish("stop")
            changed = any(d.tool_calls for d in deltas) or self._normal_text(deltas) != text
            if not changed:
                changed = any(marker in text for marker in self._markers())
            self._checked = (text, changed)
        return self._checked[1]

    def _markers(self) -> frozenset[str]:
        """The family's non-blank markup literals, its params filled."""
        spec = with_params(toolgrammar.family_spec(self.family, self._template), self._params)
        return nonblank_markup_literals(spec)

    def detect_and_parse(self, text: str, tools: list[Any]) -> StreamingParseResult:
        parser = self._parser(tools)
        deltas = parser.feed(text) + parser.finish("stop")
        positions = tool_positions(tools)
        calls = [
            ToolCallItem(
                tool_index=positions.get(call.function.name, -1),
                name=call.function.name,
                parameters=call.function.arguments,
            )
            for call in toolgrammar.assemble(deltas).tool_calls
        ]
        return StreamingParseResult(normal_text=self._normal_text(deltas), calls=calls)

    # ------------------------------------------------------------------ streaming

    def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> StreamingParseResult:
        if self._stream is None:
            self._stream = self._parser(tools)
        return self._streamed(self._stream.feed(new_text))

    def finish(self, tools: list[Any]) -> StreamingParseResult:
        """End of stream: close a cut call's arguments, release text held for a marker."""
        if self._stream is None or self._stream.finished:  # nothing streamed, or said already
            return StreamingParseResult()
        return self._streamed(self._stream.finish("stop"))

    def _streamed(self, deltas: list[toolgrammar.Delta]) -> StreamingParseResult:
        """The deltas as one SGLang result; every argument byte sent is recorded as sent."""
        calls: list[ToolCallItem] = []
        for delta in deltas:
            for part in delta.tool_calls:
                index, name, arguments = part.index, part.function.name, part.function.arguments
                if name is not None:
                    self._open_call(index, name)
                if arguments:
                    self.streamed_args_for_tool[index] += arguments
                    self.prev_tool_call_arr[index]["arguments"] = self.streamed_args_for_tool[index]
                last = calls[-1] if calls else None
                if last is not None and last.tool_index == index and name is None:
                    last.parameters += arguments
                elif name is not None or arguments:
                    calls.append(ToolCallItem(tool_index=index, name=name, parameters=arguments))
        return StreamingParseResult(normal_text=self._normal_text(deltas), calls=calls)

    def _open_call(self, index: int, name: str) -> None:
        while len(self.streamed_args_for_tool) <= index:
            self.streamed_args_for_tool.append("")
            self.prev_tool_call_arr.append({"name": None, "arguments": ""})
        self.prev_tool_call_arr[index] = {"name": name, "arguments": ""}
        self.current_tool_id = index
        self.current_tool_name_sent = True

    # ------------------------------------------------------------------ constraints

    def supports_structural_tag(self) -> bool:
        # SGLang's legacy structural tag wants one begin/end pair per tool; a family's markup is
        # a grammar, not such a pair (the whole-output grammar comes from get_structural_tag).
        return False

    def parses_required_natively(self) -> bool:
        # tool_choice="required" or a named tool: the model writes its own markup (under the
        # family's grammar) and this detector reads it, instead of SGLang forcing a bare JSON
        # array the model never saw.
        return True

    def get_structural_tag(
        self,
        tools: list[Any] | None = None,
        tool_choice: Any = "auto",
        thinking_mode: bool = False,
        parallel_tool_calls: bool = True,
        **_: Any,
    ) -> Any:
        """The family's whole-output grammar for these tools (`toolgrammar.export_grammar`, GBNF, which
        xgrammar reads as EBNF), as an xgrammar structural tag. SGLang asks for it for
        `tool_choice="required"`, a named tool, and "auto" with strict tools. None (no
        constraint, the output is still parsed natively) when the tools cannot be exported."""
        mode = export_mode(tool_choice)
        try:
            grammar = toolgrammar.export_grammar(
                self.family,
                tool_dicts(tools) or [],
                format="gbnf",
                mode=mode,
                params=self._params,
                response_template=self._template,
                reasoning_open=export_reasoning_open(
                    configured_reasoning_parser(), self._reasoning_open
                ),
            )
        except toolgrammar.ExportError as exc:
            logger.warning("toolgrammar: no %s grammar for %s: %s", mode, self.family, exc)
            return None
        return StructuralTag(format=GrammarFormat(grammar=grammar))

    def structure_info(self) -> Any:
        raise NotImplementedError(
            "toolgrammar detectors have no per-tool begin/end pair (supports_structural_tag is "
            "False); their constraint is a whole-output grammar (get_structural_tag)"
        )


def export_mode(tool_choice: Any) -> str:
    """toolgrammar's export mode for an SGLang tool choice ("required", a named tool, "auto")."""
    function = getattr(tool_choice, "function", None)
    if function is not None and getattr(function, "name", None):
        return f"named:{function.name}"
    return "required" if tool_choice == "required" else "auto"


def configured_reasoning_parser() -> str | None:
    """The server's `--reasoning-parser` (None outside a server, or when none is set)."""
    try:
        return get_serving().reasoning_parser or None
    except Exception:  # the serving config is published only in a server process
        return None


def export_reasoning_open(reasoning_parser: str | None, paired_open: bool | None) -> bool | None:
    """Where the grammar starts. With one of SGLang's own reasoning parsers SGLang applies the
    grammar after the reasoning ends (its reasoner grammar backend), so the grammar starts
    outside reasoning; with none or the companion one it starts at the first output token,
    where the grammar's default (or what the companion announced) holds."""
    if reasoning_parser is None:
        return paired_open
    detector = ReasoningParser.DetectorMap.get(reasoning_parser.lower())
    if detector is None or issubclass(detector, ToolgrammarReasoningDetector):
        return paired_open
    return False
