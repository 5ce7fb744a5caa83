"""toolgrammar: one grammar per model family, one streaming runtime for every family.

>>> import toolgrammar
>>> msg = toolgrammar.parse("hermes", text, tools=tools)
>>> parser = toolgrammar.StreamParser("qwen3_coder", tools=tools)
>>> for delta in parser.feed(chunk): ...
>>> parser.finish("stop")
>>> toolgrammar.export_grammar("qwen3_coder", tools, format="lark")  # for constrained decoding
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any, Literal, Mapping

from .runtime.deltas import (
    Delta,
    Function,
    FunctionDelta,
    Message,
    ToolCall,
    ToolCallDelta,
    assemble,
    message_of,
    random_call_id,
    sequential_call_id,
)
from .runtime import whole_output
from .runtime.engine import Engine
from .runtime.limits import MAX_DEPTH, deeper_than
from .runtime.modes import REASONING
from .runtime.params import UnknownParam, with_params
from .runtime.policies import Policies
from .runtime.policies import resolve as resolve_policies
from .runtime.render import RenderError, render_output
from .runtime.registry import UnknownFamily, families, get_spec
from .runtime.schemas import ToolSchemas
from .runtime.trace import Trace, TraceEvent, format_event, print_trace, tracing_engine
from .specs import TEMPLATE_FAMILIES, family_spec

if TYPE_CHECKING:  # for type checkers only; at run time `__getattr__` loads them on first use
    from .export import ExportError, export_grammar

__all__ = [
    "Delta",
    "ExportError",
    "Policies",
    "Function",
    "TEMPLATE_FAMILIES",
    "FunctionDelta",
    "Message",
    "StreamParser",
    "ToolCall",
    "ToolCallDelta",
    "TraceEvent",
    "UnknownFamily",
    "UnknownParam",
    "assemble",
    "export_grammar",
    "families",
    "family_spec",
    "format_event",
    "parse",
    "print_trace",
    "render",
    "RenderError",
]

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")


class StreamParser:
    """Feed text deltas of one model output; get OpenAI chunk deltas back.

    `reasoning_open=True` says the prompt already opened the reasoning block, so the
    output starts inside it; the default (None) is the grammar's (`prompt_opened`).
    `block_open=False` says the prompt did not end with the opener of the call, section or
    message the grammar flags `prompt_opened` (Inkling's `<|message_model|>`), so the output
    starts outside it; the default (None) is the grammar's. A reasoning block the prompt
    opened comes first: the output then starts inside it.
    `params` fills the grammar's `param`s (e.g. `{"suffix": ":6124c78e"}`).
    The policies (docs/policies.md): `compat="vllm"`, `"sglang"` or `"llama.cpp"` reads the
    output as that stack does (docs/compat.md's table; None: the project's own answers), and
    each switch given wins over it: `whitespace="verbatim"` (every character outside markup
    is content) or `"trim"`; `unknown_tools="keep"` (a call to a tool not in `tools` is
    reported), `"drop"` or `"text"` (its markup given back as content); `partial_calls` (a
    call whose arguments the end of the output cut) and `malformed_calls` (arguments that
    never form an object): `"keep"` (closed), `"drop"` or `"text"`; anything but `"keep"`
    holds each call until its arguments end; `citations="keep"` or `"strip"` (a grammar's
    citation spans, Cohere's `<co>…</co: 0:[1]>`: the text kept, the markup dropped);
    `text_after_calls="keep"` or `"drop"` (content written after a call is dropped: content
    is the text before the first call); `untyped_values="text"` or `"json"` (a markup
    parameter's value no schema types is its JSON value when it is one, held until whole);
    `required_params="keep"` or `"check"` (a call lacking a property its schema requires is
    malformed, for `malformed_calls` to decide; holds each call until its arguments end);
    `undeclared_params="keep"` or `"drop"` (a markup parameter its tool's schema does not
    declare is dropped with its value); `json_typing="schema"` or `"as_written"` (JSON
    arguments passed on as the model wrote them, not typed by the schema);
    `section_text="whole"` or `"call"` (a call given back as text that opened its section
    takes the section's markers with it, or leaves them markup).
    `ids="sequential"` makes tool-call
    ids `call_0`, `call_1`, ... (for tests); the default is random
    `chatcmpl-tool-<32 hex>`, and a family whose markup carries an id uses that.
    `trace` receives an event for every step the parser takes (`runtime/trace.py`,
    `docs/debugging.md`); `toolgrammar.print_trace()` makes one that prints them.
    `response_template` is the checkpoint's `response_template` (a dict) that family `hf`
    reads its output with (docs/response_templates.md); no other family takes one.
    """

    def __init__(
        self,
        family: str,
        tools: list[dict[str, Any]] | None = None,
        *,
        reasoning_open: bool | None = None,
        block_open: bool | None = None,
        compat: Literal["vllm", "sglang", "llama.cpp"] | None = None,
        whitespace: Literal["verbatim", "trim"] | None = None,
        unknown_tools: Literal["keep", "drop", "text"] | None = None,
        partial_calls: Literal["keep", "drop", "text"] | None = None,
        malformed_calls: Literal["keep", "drop", "text"] | None = None,
        citations: Literal["keep", "strip"] | None = None,
        text_after_calls: Literal["keep", "drop"] | None = None,
        untyped_values: Literal["text", "json"] | None = None,
        required_params: Literal["keep", "check"] | None = None,
        undeclared_params: Literal["keep", "drop"] | None = None,
        json_typing: Literal["schema", "as_written"] | None = None,
        section_text: Literal["whole", "call"] | None = None,
        ids: Literal["random", "sequential"] = "random",
        params: Mapping[str, str] | None = None,
        trace: Trace | None = None,
        response_template: Mapping[str, Any] | None = None,
    ) -> None:
        self.family = family
        self._engine, self.policies = _new_engine(
            family,
            tools,
            reasoning_open=reasoning_open,
            block_open=block_open,
            compat=compat,
            whitespace=whitespace,
            unknown_tools=unknown_tools,
            partial_calls=partial_calls,
            malformed_calls=malformed_calls,
            citations=citations,
            text_after_calls=text_after_calls,
            untyped_values=untyped_values,
            required_params=required_params,
            undeclared_params=undeclared_params,
            json_typing=json_typing,
            section_text=section_text,
            ids=ids,
            params=params,
            trace=trace,
            response_template=response_template,
        )
        self.finish_reason: str | None = None
        if type(self).feed is StreamParser.feed:  # (a subclass's own `feed` is kept)
            # the engine's own `feed` (which checks its argument): no call through this
            # class on every delta
            self.feed = self._engine.feed  # type: ignore[method-assign]

    def feed(self, text: str) -> list[Delta]:
        """The deltas that `text`, appended to what came before, makes safe to send.
        (An instance's `feed` is its engine's, `Engine.feed`, which this one calls.)"""
        return self._engine.feed(text)

    def finish(self, reason: str = "stop") -> list[Delta]:
        """End of output: flush, close every open call. Sets `finish_reason`.

        A `stop` with calls emitted becomes `tool_calls`; `length` stays `length`. The reason
        also decides what the end held back (docs/policies.md, "Unfinished output").
        """
        _check_finish_reason(reason)
        if self.finish_reason is not None:
            raise RuntimeError(
                f"finish() was already called (finish_reason {self.finish_reason!r}): "
                "a StreamParser reads one output; make a new one for the next"
            )
        deltas = self._engine.finish(reason)
        self._finish_reason(reason)
        return deltas

    @property
    def finished(self) -> bool:
        """Whether `finish()` has been called: then neither `feed` nor `finish` may follow."""
        return self.finish_reason is not None

    def _finish_reason(self, reason: str) -> str:
        if reason == "stop" and self._engine.calls_emitted:
            reason = "tool_calls"
        self.finish_reason = reason
        return reason

    @property
    def calls_emitted(self) -> int:
        return self._engine.calls_emitted

    @property
    def in_reasoning(self) -> bool:
        """Whether the text fed so far leaves the output inside reasoning: a reader that only
        separates reasoning (vLLM's reasoning-parser slot) hands the rest on once it is not."""
        return self._engine.mode == REASONING


_OPTIONS = frozenset(
    (
        "reasoning_open", "block_open", "compat", "whitespace", "unknown_tools",
        "partial_calls", "malformed_calls", "citations", "text_after_calls", "untyped_values",
        "required_params", "undeclared_params", "json_typing", "section_text", "ids", "params",
        "trace", "response_template",
    )
)  # fmt: skip
"""`StreamParser`'s keyword options: what `parse()` passes on to `_new_engine` itself."""


def _new_engine(
    family: str,
    tools: list[dict[str, Any]] | None = None,
    *,
    reasoning_open: bool | None = None,
    block_open: bool | None = None,
    compat: Literal["vllm", "sglang", "llama.cpp"] | None = None,
    whitespace: Literal["verbatim", "trim"] | None = None,
    unknown_tools: Literal["keep", "drop", "text"] | None = None,
    partial_calls: Literal["keep", "drop", "text"] | None = None,
    malformed_calls: Literal["keep", "drop", "text"] | None = None,
    citations: Literal["keep", "strip"] | None = None,
    text_after_calls: Literal["keep", "drop"] | None = None,
    untyped_values: Literal["text", "json"] | None = None,
    required_params: Literal["keep", "check"] | None = None,
    undeclared_params: Literal["keep", "drop"] | None = None,
    json_typing: Literal["schema", "as_written"] | None = None,
    section_text: Literal["whole", "call"] | None = None,
    ids: Literal["random", "sequential"] = "random",
    params: Mapping[str, str] | None = None,
    trace: Trace | None = None,
    response_template: Mapping[str, Any] | None = None,
) -> tuple[Engine, Policies]:
    """The engine a `StreamParser` with these options reads with, and its policies: made
    here for `parse()` too, which needs no parser object around the engine (a whole parse
    runs cold: every object it makes and every function it runs costs a cache miss)."""
    _check_options(family, reasoning_open, ids, params)
    if block_open is not None and not isinstance(block_open, bool):
        raise TypeError(f"block_open must be True, False or None, not {block_open!r}")
    if trace is not None and not callable(trace):
        raise TypeError(
            f"trace must be a callable that takes each TraceEvent (or None), not {trace!r}"
        )
    spec = with_params(family_spec(family, response_template), params)
    switches = {
        "whitespace": whitespace,
        "unknown_tools": unknown_tools,
        "partial_calls": partial_calls,
        "malformed_calls": malformed_calls,
        "citations": citations,
        "text_after_calls": text_after_calls,
        "untyped_values": untyped_values,
        "required_params": required_params,
        "undeclared_params": undeclared_params,
        "json_typing": json_typing,
        "section_text": section_text,
    }
    policies = resolve_policies(compat, family, switches, spec.name)
    options: dict[str, Any] = {
        "reasoning_open": reasoning_open,
        "block_open": block_open,
        "policies": policies,
        "call_id": sequential_call_id if ids == "sequential" else random_call_id,
    }
    if trace is None:
        return Engine(spec, ToolSchemas(tools), **options), policies
    return tracing_engine(spec, ToolSchemas(tools), trace=trace, **options), policies


def parse(
    family: str,
    text: str,
    tools: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    **options: Any,
) -> Message:
    """The whole output at once: the same core as streaming, fed in one piece. Runs of
    whole calls are read in one step each where the engine would read them the same
    (`runtime/whole_output.py`; `TOOLGRAMMAR_NO_WHOLE_ROUTE=1` turns that off)."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes str, not {type(text).__name__}")
    _check_finish_reason(finish_reason)
    if options.keys() <= _OPTIONS:  # (the engine alone: no `StreamParser` around it)
        engine = _new_engine(family, tools, **options)[0]
    else:  # (an option no parser takes: the parser's own error says which)
        engine = StreamParser(family, tools, **options)._engine
    content, reasoning, calls = whole_output.whole(engine, text, finish_reason)
    if finish_reason == "stop" and engine.calls_emitted:  # (`StreamParser._finish_reason`)
        finish_reason = "tool_calls"
    return message_of(content, reasoning, calls, finish_reason)


def _check_options(family: Any, reasoning_open: Any, ids: Any, params: Any) -> None:
    """Options a caller got wrong fail here in one line, not deep inside the engine."""
    if not isinstance(family, str):
        raise TypeError(f"family must be a family name (str), not {type(family).__name__}")
    if reasoning_open is not None and not isinstance(reasoning_open, bool):
        raise TypeError(f"reasoning_open must be True, False or None, not {reasoning_open!r}")
    if ids not in ("random", "sequential"):
        raise ValueError(f"ids must be 'random' or 'sequential', not {ids!r}")
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping of param name to string, not {params!r}")


def _check_finish_reason(reason: Any) -> None:
    if reason not in FINISH_REASONS:
        raise ValueError(
            f"finish reason must be one of {', '.join(FINISH_REASONS)}, not {reason!r}"
        )


def render(
    family: str,
    calls: list[Any],
    tools: list[dict[str, Any]] | None = None,
    *,
    content: str | None = None,
    reasoning: str | None = None,
    after: str | None = None,
    params: Mapping[str, str] | None = None,
    response_template: Mapping[str, Any] | None = None,
) -> str:
    """The text a model of `family` writes for `calls` (each `{"name": …, "arguments": {…}}`,
    with an `"id"` for a markup that carries the call's id, or a `(name, arguments)` pair),
    with optional reasoning before and content around them.

    The text is parsed back with `tools`; if the family's markup cannot carry a value so that
    it reads back the same (a string holding the family's own closing marker, `"3"` for an
    integer parameter), `RenderError` says which.
    """
    spec = with_params(family_spec(family, response_template), params)
    if isinstance(calls, (str, bytes, Mapping)) or not isinstance(calls, (list, tuple)):
        raise RenderError(f"calls must be a list of calls, not {type(calls).__name__}")
    for label, text in (("content", content), ("reasoning", reasoning), ("after", after)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{label} must be a str or None, not {type(text).__name__}")
    pairs = [_call_pair(call) for call in calls]  # (none nested deeper than MAX_DEPTH)
    ids = [call.get("id") if isinstance(call, dict) else None for call in calls]
    text = render_output(spec, pairs, content=content, reasoning=reasoning, after=after, ids=ids)
    message = parse(
        family,
        text,
        tools,
        params=params,
        reasoning_open=False if reasoning is None else None,
        response_template=response_template,
    )
    got = [(c.function.name, _json_value_or_text(c.function.arguments)) for c in message.tool_calls]
    if got != pairs:
        for index, (want, have) in enumerate(zip(pairs, got + [None] * len(pairs))):
            if want != have:
                raise RenderError(
                    f"{family} cannot write call {index} so that it reads back the same: "
                    f"wrote {want!r}, it reads as {have!r}"
                )
    return text


def _call_pair(call: Any) -> tuple[str, dict[str, Any]]:
    """A call as (name, arguments), or `RenderError` for any other shape: a caller's bad
    call is told as such, never as an unpacking or recursion error from inside."""
    if isinstance(call, Mapping):
        name, args = call.get("name"), call.get("arguments", {})
    elif isinstance(call, (list, tuple)) and len(call) == 2:
        name, args = call
    else:
        raise RenderError(f"a call is a name and an arguments object, got {_short(call)}")
    if isinstance(args, str):
        args = _json_value_or_text(args)
    if not isinstance(name, str) or not isinstance(args, dict):
        raise RenderError(f"a call is a name and an arguments object, got {_short(call)}")
    if deeper_than(args, MAX_DEPTH):  # the parser reads no deeper (runtime/limits.py)
        raise RenderError(
            f"the arguments of {name!r} nest too deep to write (deeper than {MAX_DEPTH} "
            "levels, the deepest read)"
        )
    try:  # a model writes JSON: no NaN or Infinity (json.loads reads 1e999 as inf), no sets
        json.dumps(args, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise RenderError(f"the arguments of {name!r} are not JSON: {error}") from None
    return name, args


def _short(value: Any) -> str:
    """A caller's value in an error message, cut to a line (it may be huge or deep)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= 200 else text[:200] + "…"


def _json_value_or_text(text: str) -> Any:
    """The value JSON `text` holds; other text stays text (then the caller reports it)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


_EXPORT_NAMES = ("export_grammar", "ExportError", "export")


def __getattr__(name: str) -> Any:
    """`export_grammar` and `ExportError`, loaded on first use (PEP 562): `import
    toolgrammar` does not import the export package, which parsing never needs.

    `export` is the package (`toolgrammar.export`); calling it is the deprecated spelling of
    `export_grammar` (see `export/__init__.py`).
    """
    if name not in _EXPORT_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    package = importlib.import_module(".export", __name__)  # also binds `toolgrammar.export`
    return package if name == "export" else getattr(package, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORT_NAMES})
