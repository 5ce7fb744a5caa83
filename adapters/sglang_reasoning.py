"""The companion reasoning detector of a family, for `--reasoning-parser tg-NAME`.

SGLang runs its reasoning parser on the output first and hands the normal text on to the tool
detector. Two cases, told apart by SGLang's `tool_call_parser_active` (True when the request's
output goes through a tool parser):
- tool parsing active: the reasoning is reported here and the whole output is passed on
  unchanged, so the tool detector (announced to, `sglang_pairing`) reads reasoning, content and
  calls together (a call opened inside reasoning is not lost) and leaves the reasoning out;
- no tool parsing (no tools, `tool_choice="none"`): the reasoning is reported here and only the
  family's content is passed on, its markup left out.

SGLang's `force_reasoning` (the chat template or the request turned thinking on) says the
prompt opened the reasoning block; otherwise the grammar's default (`prompt_opened`) holds.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector, StreamingParseResult

import toolgrammar
from toolgrammar.adapters.env_params import params_from_env
from toolgrammar.adapters.env_policies import policies_from_env
from toolgrammar.adapters.response_template import template_for
from toolgrammar.adapters.sglang_pairing import PARAMS_ENV, PREFIX, Pairing, announce


class ToolgrammarReasoningDetector(BaseReasoningFormatDetector):
    """Reasoning of `family` read by toolgrammar; subclassed once per registered name."""

    family: ClassVar[str] = ""

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        tool_call_parser_active: bool = False,
        tokenizer: Any = None,
        response_template: Any = None,
        **options: Any,
    ) -> None:
        if not self.family:
            raise TypeError("use reasoning_detector_class(family) for a detector of one family")
        # No think tokens: toolgrammar reads the family's markers itself. SGLang's scheduler then
        # finds no think-end token ids and leaves grammar-gated reasoning off.
        super().__init__("", "", stream_reasoning=stream_reasoning)
        self._params = params_from_env(PARAMS_ENV, self.family)
        # SGLang passes its tokenizer because this signature names it (a template family's
        # template; the scheduler builds this detector at server start)
        self._template = template_for(
            PREFIX + self.family, self.family, tokenizer, response_template
        )
        self._reasoning_open = True if force_reasoning else None
        self._passes_output = tool_call_parser_active
        # the text it gives as content reads as the tool detector's would (SGLang's profile:
        # a cut call given back as text stays content here too)
        self._policies = policies_from_env("sglang")
        self._stream = toolgrammar.StreamParser(
            self.family,
            None,
            reasoning_open=self._reasoning_open,
            params=self._params,
            response_template=self._template,
            **self._policies,
        )
        self._held: list[str] = []
        if tool_call_parser_active:
            announce(Pairing(self.family, self._reasoning_open))

    def get_think_end_token_ids(self, tokenizer: Any) -> list[int]:
        return []

    def detect_and_parse(self, text: str) -> StreamingParseResult:
        message = toolgrammar.parse(
            self.family,
            text,
            None,
            reasoning_open=self._reasoning_open,
            params=self._params,
            response_template=self._template,
            **self._policies,
        )
        normal = text if self._passes_output else (message.content or "")
        return StreamingParseResult(normal_text=normal, reasoning_text=message.reasoning)

    def parse_streaming_increment(self, new_text: str) -> StreamingParseResult:
        return self._result(self._stream.feed(new_text), new_text, final=False)

    def finish(self) -> StreamingParseResult:
        if self._stream.finished:  # said already
            return StreamingParseResult()
        return self._result(self._stream.finish("stop"), "", final=True)

    def _result(
        self, deltas: list[toolgrammar.Delta], new_text: str, final: bool
    ) -> StreamingParseResult:
        """Reasoning as it comes (or, with `stream_reasoning=False`, held until it ends)."""
        self._held.extend(d.reasoning for d in deltas if d.reasoning)
        ended = any(d.content or d.tool_calls for d in deltas)
        reasoning = ""
        if self.stream_reasoning or ended or final:
            reasoning, self._held = "".join(self._held), []
        if self._passes_output:
            normal = new_text
        else:
            normal = "".join(d.content for d in deltas if d.content)
        return StreamingParseResult(normal_text=normal, reasoning_text=reasoning)
