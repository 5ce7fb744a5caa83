"""Per-delta cost of `StreamParser.feed` as one model output grows.

What it measures
----------------
For every family and every stream shape below, one output text is built up to the
largest size (default 256K chars) in the family's own markup, then fed to a fresh
`StreamParser` in fixed-size deltas (default 16 chars), timing each `feed` with
`time.perf_counter_ns`. The cost "at size N" is the median time of the deltas that end
in the last 1K chars before the N-char mark (64 deltas at 16 chars), so one stream
gives every size bucket. A parser whose work per delta is independent of what came
before shows the same number in every column; one that re-reads what it has already
parsed (seed 004: vLLM's Qwen3 converter re-scanning every closed parameter) shows a
cost that grows with the column.

Shapes (each rendered in the family's markup):

  loop         one call repeating two short string parameters (seed 004's
               old_string/new_string); for JSON families one arguments object that
               keeps adding short string members ("k123": "total = 1")
  long_string  one write_file call whose `content` string grows to the size
  many_params  one call with many distinct short parameters p0, p1, ...
  many_calls   many small complete calls back to back (get_weather, Paris, 3 days)

Noise control: a warm-up pass, `gc.disable()` during timed loops, and the best (lowest)
of --repeat runs for each bucket. Peak memory is taken in a separate tracemalloc pass
(tracemalloc slows allocation, so it never runs during timings). Every run's streamed
result is checked against the whole-output `parse()` and the arguments the stream was
built from; any mismatch aborts.

How to read the output
----------------------
One table per family; a row per shape. The size columns are the median µs per delta at
that output size; `p99@N` is the 99th percentile over the deltas of the last 16K chars
before the largest mark; `ratio` is last size / first size (about 1.0 means flat, > 1.5
is flagged `!`); `parse ms` is one `parse()` of the whole largest text; `peak MB` is the
tracemalloc peak while streaming it. A cell marked `*` is a median above 20 µs. The
summary line per family gives the worst ratio and the median over all its buckets.

    python bench/per_delta.py [--families ...] [--sizes 1K,4K,16K,64K,256K] [--delta 16]
                              [--repeat 3] [--json out.json] [--profile FAMILY:SHAPE]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable
from xml.sax.saxutils import escape as xml_escape

import toolgrammar

ROOT = Path(__file__).resolve().parent.parent
WINDOW = 1024  # chars before a size mark whose deltas make that bucket
P99_WINDOW = 16 * 1024  # chars before the largest mark whose deltas make the p99
FLAG_RATIO = 1.5
FLAG_MEDIAN_US = 20.0
# one family per argument dialect and region kind: XML params (newline-trimmed, pairs with a
# value opener, flagged keys), JSON, JSON carrying the name, nested elements, channel messages,
# key:value, Python calls, JSON arrays of calls
FAMILIES = (
    "qwen3_coder", "hermes", "kimi_k2", "glm45", "deepseek_v4", "minimax_m3", "muse",
    "gemma4", "pythonic", "jamba",
)  # fmt: skip
SHAPES = ("loop", "long_string", "many_params", "many_calls")

# Tools the shapes call beyond the corpus ones (Claude Code's Edit, an open-ended one).
BENCH_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "edit",
            "parameters": {
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_options",
            "parameters": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    },
]


def load_tools() -> list[dict[str, Any]]:
    corpus = json.loads((ROOT / "tests" / "corpus" / "tools.json").read_text(encoding="utf-8"))
    return corpus + BENCH_TOOLS


# --------------------------------------------------------------------------- markup


Value = str | int


class Markup:
    """How one family writes calls; the shapes are built from these pieces."""

    json_args = True  # arguments are a JSON object (else XML-like parameters)

    def section_open(self) -> str:
        return ""

    def section_close(self) -> str:
        return ""

    def call_open(self, name: str, index: int) -> str:
        raise NotImplementedError

    def param(self, key: str, value: Value, first: bool) -> str:
        """One argument; `first` says whether it is the call's first."""
        sep = "" if first else ", "
        return f"{sep}{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"

    def call_close(self) -> str:
        raise NotImplementedError


class Qwen3CoderMarkup(Markup):
    json_args = False

    def call_open(self, name: str, index: int) -> str:
        return f"<tool_call>\n<function={name}>\n"

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"<parameter={key}>\n{value}\n</parameter>\n"

    def call_close(self) -> str:
        return "</function>\n</tool_call>\n"


class HermesMarkup(Markup):
    def call_open(self, name: str, index: int) -> str:
        return f'<tool_call>\n{{"name": {json.dumps(name)}, "arguments": {{'

    def call_close(self) -> str:
        return "}}\n</tool_call>\n"


class KimiK2Markup(Markup):
    def section_open(self) -> str:
        return "<|tool_calls_section_begin|>"

    def section_close(self) -> str:
        return "<|tool_calls_section_end|>"

    def call_open(self, name: str, index: int) -> str:
        return f"<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>{{"

    def call_close(self) -> str:
        return "}<|tool_call_end|>"


class Glm45Markup(Markup):
    json_args = False

    def call_open(self, name: str, index: int) -> str:
        return f"<tool_call>{name}"

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>"

    def call_close(self) -> str:
        return "</tool_call>"


class DeepSeekV4Markup(Markup):
    json_args = False
    bar = "\uff5cDSML\uff5c"

    def section_open(self) -> str:
        return f"<{self.bar}tool_calls>\n"

    def section_close(self) -> str:
        return f"</{self.bar}tool_calls>"

    def call_open(self, name: str, index: int) -> str:
        return f'<{self.bar}invoke name="{name}">\n'

    def param(self, key: str, value: Value, first: bool) -> str:
        flag = "true" if isinstance(value, str) else "false"
        return f'<{self.bar}parameter name="{key}" string="{flag}">{value}</{self.bar}parameter>\n'

    def call_close(self) -> str:
        return f"</{self.bar}invoke>\n"


class MiniMaxM3Markup(Markup):
    json_args = False
    p = "]<]minimax[>["

    def section_open(self) -> str:
        return f"{self.p}<tool_call>\n"

    def section_close(self) -> str:
        return f"{self.p}</tool_call>"

    def call_open(self, name: str, index: int) -> str:
        return f'{self.p}<invoke name="{name}">\n'

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"{self.p}<{key}>{value}{self.p}</{key}>\n"

    def call_close(self) -> str:
        return f"{self.p}</invoke>\n"


class MuseMarkup(Markup):
    json_args = False

    def call_open(self, name: str, index: int) -> str:
        return f' to={name}<|message|><atem:function_calls>\n<atem:invoke name="{name}">\n'

    def param(self, key: str, value: Value, first: bool) -> str:
        return f'<atem:parameter name="{key}">{value}</atem:parameter>\n'

    def call_close(self) -> str:
        return "</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant"


class Gemma4Markup(Markup):
    json_args = False

    def call_open(self, name: str, index: int) -> str:
        return f"<|tool_call>call:{name}{{"

    def param(self, key: str, value: Value, first: bool) -> str:
        sep = "" if first else ","
        text = f'<|"|>{value}<|"|>' if isinstance(value, str) else json.dumps(value)
        return f"{sep}{key}:{text}"

    def call_close(self) -> str:
        return "}<tool_call|>"


class PythonicMarkup(Markup):
    json_args = False

    def section_open(self) -> str:
        return "["

    def section_close(self) -> str:
        return "]"

    def call_open(self, name: str, index: int) -> str:
        return f"{', ' if index else ''}{name}("

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"{'' if first else ', '}{key}={value!r}"

    def call_close(self) -> str:
        return ")"


class JambaMarkup(Markup):
    def section_open(self) -> str:
        return "<tool_calls>["

    def section_close(self) -> str:
        return "]</tool_calls>"

    def call_open(self, name: str, index: int) -> str:
        return f'{", " if index else ""}{{"name": {json.dumps(name)}, "arguments": {{'

    def call_close(self) -> str:
        return "}}"


class DeepSeekV31Markup(Markup):
    def section_open(self) -> str:
        return "<\uff5ctool\u2581calls\u2581begin\uff5c>"

    def section_close(self) -> str:
        return "<\uff5ctool\u2581calls\u2581end\uff5c>"

    def call_open(self, name: str, index: int) -> str:
        return f"<\uff5ctool\u2581call\u2581begin\uff5c>{name}<\uff5ctool\u2581sep\uff5c>{{"

    def call_close(self) -> str:
        return "}<\uff5ctool\u2581call\u2581end\uff5c>"


class MistralMarkup(Markup):
    def call_open(self, name: str, index: int) -> str:
        return f"[TOOL_CALLS]{name}[ARGS]{{"

    def call_close(self) -> str:
        return "}"


class Llama3JsonMarkup(Markup):
    def section_open(self) -> str:
        return "<|python_tag|>"

    def call_open(self, name: str, index: int) -> str:
        return f'{"; " if index else ""}{{"name": {json.dumps(name)}, "parameters": {{'

    def call_close(self) -> str:
        return "}}"


class GraniteMarkup(JambaMarkup):
    def section_open(self) -> str:
        return "<|tool_call|>["

    def section_close(self) -> str:
        return "]"


class XlamMarkup(JambaMarkup):
    def section_open(self) -> str:
        return "["

    def section_close(self) -> str:
        return "]"


class MiniMaxM2Markup(Markup):
    json_args = False

    def section_open(self) -> str:
        return "<minimax:tool_call>\n"

    def section_close(self) -> str:
        return "</minimax:tool_call>"

    def call_open(self, name: str, index: int) -> str:
        return f'<invoke name="{name}">\n'

    def param(self, key: str, value: Value, first: bool) -> str:
        return f'<parameter name="{key}">{value}</parameter>\n'

    def call_close(self) -> str:
        return "</invoke>\n"


class SeedOssMarkup(Qwen3CoderMarkup):
    def call_open(self, name: str, index: int) -> str:
        return f"<seed:tool_call>\n<function={name}>\n"

    def call_close(self) -> str:
        return "</function>\n</seed:tool_call>\n"


class LongcatMarkup(HermesMarkup):
    def call_open(self, name: str, index: int) -> str:
        return f'<longcat_tool_call>\n{{"name": {json.dumps(name)}, "arguments": {{'

    def call_close(self) -> str:
        return "}}\n</longcat_tool_call>\n"


class InternLMMarkup(Markup):
    def call_open(self, name: str, index: int) -> str:
        return f'<|action_start|><|plugin|>\n{{"name": {json.dumps(name)}, "parameters": {{'

    def call_close(self) -> str:
        return "}}<|action_end|>"


class Phi4MiniJsonMarkup(JambaMarkup):
    def section_open(self) -> str:
        return "functools["

    def section_close(self) -> str:
        return "]"


class HunyuanA13bMarkup(JambaMarkup):
    pass


class ApertusMarkup(JambaMarkup):
    def section_open(self) -> str:
        return "<|tools_prefix|>["

    def section_close(self) -> str:
        return "]<|tools_suffix|>"

    def call_open(self, name: str, index: int) -> str:
        return f'{", " if index else ""}{{{json.dumps(name)}: {{'


class DeepSeekV3Markup(DeepSeekV31Markup):
    """`function<｜tool▁sep｜>NAME` and a ```json fenced object in DeepSeek's call tokens."""

    def call_open(self, name: str, index: int) -> str:
        begin, sep = "<\uff5ctool\u2581call\u2581begin\uff5c>", "<\uff5ctool\u2581sep\uff5c>"
        return f"{begin}function{sep}{name}\n```json\n{{"

    def call_close(self) -> str:
        return "}\n```<\uff5ctool\u2581call\u2581end\uff5c>"


class DeepSeekV32Markup(DeepSeekV4Markup):
    """The DSML invokes of deepseek_v4 in a `<｜DSML｜function_calls>` block."""

    def section_open(self) -> str:
        return f"<{self.bar}function_calls>\n"

    def section_close(self) -> str:
        return f"</{self.bar}function_calls>"


class Step3Markup(Markup):
    """`<steptml:invoke>` calls with `<steptml:parameter>`s between Step's call tokens."""

    json_args = False

    def section_open(self) -> str:
        return "<\uff5ctool_calls_begin\uff5c>\n"

    def section_close(self) -> str:
        return "<\uff5ctool_calls_end\uff5c>"

    def call_open(self, name: str, index: int) -> str:
        begin, sep = "<\uff5ctool_call_begin\uff5c>", "<\uff5ctool_sep\uff5c>"
        return f'{begin}function{sep}<steptml:invoke name="{name}">\n'

    def param(self, key: str, value: Value, first: bool) -> str:
        return f'<steptml:parameter name="{key}">{value}</steptml:parameter>\n'

    def call_close(self) -> str:
        return "</steptml:invoke><\uff5ctool_call_end\uff5c>\n"


class Olmo3Markup(Markup):
    """Python calls with JSON literal values, one a line, in `<function_calls>`."""

    json_args = False

    def section_open(self) -> str:
        return "<function_calls>"

    def section_close(self) -> str:
        return "</function_calls>"

    def call_open(self, name: str, index: int) -> str:
        return f"{chr(10) if index else ''}{name}("

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"{'' if first else ', '}{key}={json.dumps(value, ensure_ascii=False)}"

    def call_close(self) -> str:
        return ")"


class FunctionGemmaMarkup(Markup):
    """`<start_function_call>call:NAME{key:<escape>VALUE<escape>,…}<end_function_call>`."""

    json_args = False

    def call_open(self, name: str, index: int) -> str:
        return f"<start_function_call>call:{name}{{"

    def param(self, key: str, value: Value, first: bool) -> str:
        # every value escaped: vLLM reads only `<escape>` values (JSON-decoding them)
        return f"{'' if first else ','}{key}:<escape>{value}<escape>"

    def call_close(self) -> str:
        return "}<end_function_call>"


class Lfm2Markup(PythonicMarkup):
    """The pythonic call list between `<|tool_call_start|>` and `<|tool_call_end|>`."""

    def section_open(self) -> str:
        return "<|tool_call_start|>["

    def section_close(self) -> str:
        return "]<|tool_call_end|>"


class GigaChat3Markup(Markup):
    """`<|function_call|>` and a JSON call object, for each call."""

    def call_open(self, name: str, index: int) -> str:
        return f'<|function_call|>{{"name": {json.dumps(name)}, "arguments": {{'

    def call_close(self) -> str:
        return "}}"


class MiniCPM5Markup(Markup):
    """`<function name="NAME">` calls of `<param name="KEY">VALUE</param>`, values XML-escaped."""

    json_args = False

    def call_open(self, name: str, index: int) -> str:
        return f'<function name="{name}">'

    def param(self, key: str, value: Value, first: bool) -> str:
        return f'<param name="{key}">{xml_escape(str(value))}</param>'

    def call_close(self) -> str:
        return "</function>\n"


class HyV3Markup(Markup):
    """`<tool_call>NAME<tool_sep>` and `<arg_key>`/`<arg_value>` pairs in `<tool_calls>`."""

    json_args = False

    def section_open(self) -> str:
        return "<tool_calls>\n"

    def section_close(self) -> str:
        return "</tool_calls>"

    def call_open(self, name: str, index: int) -> str:
        return f"<tool_call>{name}<tool_sep>\n"

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n"

    def call_close(self) -> str:
        return "</tool_call>\n"


class KimiK3Markup(Markup):
    """Kimi K3's `<|open|>TAG ATTRS<|sep|>`…`<|close|>TAG<|sep|>` call and argument elements."""

    json_args = False

    def section_open(self) -> str:
        return "<|open|>tools<|sep|>"

    def section_close(self) -> str:
        return "<|close|>tools<|sep|>"

    def call_open(self, name: str, index: int) -> str:
        return f'<|open|>call tool="{name}" index="{index}"<|sep|>'

    def param(self, key: str, value: Value, first: bool) -> str:
        kind = "string" if isinstance(value, str) else "integer"
        return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>'

    def call_close(self) -> str:
        return "<|close|>call<|sep|>"


class Llama4PythonicMarkup(PythonicMarkup):
    """The pythonic call list between `<|python_start|>` and `<|python_end|>`."""

    def section_open(self) -> str:
        return "<|python_start|>["

    def section_close(self) -> str:
        return "]<|python_end|>"


class MiMoMarkup(Qwen3CoderMarkup):
    """The Qwen3-Coder XML calls with values flush against their parameter tags."""

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"<parameter={key}>{value}</parameter>\n"


class PoolsideV1Markup(Glm45Markup):
    """The GLM-4.5 layout with a newline after the name and after each key and value."""

    def call_open(self, name: str, index: int) -> str:
        return f"<tool_call>{name}\n"

    def param(self, key: str, value: Value, first: bool) -> str:
        return f"<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n"

    def call_close(self) -> str:
        return "</tool_call>\n"


class Plamo3Markup(Markup):
    """PLaMo 3's `<|plamo:…:plamo|>` framed tool requests with JSON arguments."""

    def section_open(self) -> str:
        return "<|plamo:begin_tool_requests:plamo|>"

    def section_close(self) -> str:
        return "<|plamo:end_tool_requests:plamo|>"

    def call_open(self, name: str, index: int) -> str:
        return (
            "<|plamo:begin_tool_request:plamo|>"
            f"<|plamo:begin_tool_name:plamo|>{name}<|plamo:end_tool_name:plamo|>"
            "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"
        )

    def call_close(self) -> str:
        return "}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"


MARKUP: dict[str, Markup] = {
    "qwen3_coder": Qwen3CoderMarkup(),
    "hermes": HermesMarkup(),
    "kimi_k2": KimiK2Markup(),
    "glm45": Glm45Markup(),
    "deepseek_v4": DeepSeekV4Markup(),
    "minimax_m3": MiniMaxM3Markup(),
    "muse": MuseMarkup(),
    "gemma4": Gemma4Markup(),
    "pythonic": PythonicMarkup(),
    "jamba": JambaMarkup(),
    "deepseek_v31": DeepSeekV31Markup(),
    "mistral": MistralMarkup(),
    "llama3_json": Llama3JsonMarkup(),
    "granite": GraniteMarkup(),
    "xlam": XlamMarkup(),
    "minimax_m2": MiniMaxM2Markup(),
    "seed_oss": SeedOssMarkup(),
    "granite4": HermesMarkup(),
    "longcat": LongcatMarkup(),
    "internlm": InternLMMarkup(),
    "phi4_mini_json": Phi4MiniJsonMarkup(),
    "hunyuan_a13b": HunyuanA13bMarkup(),
    "apertus": ApertusMarkup(),
    "deepseek_v3": DeepSeekV3Markup(),
    "deepseek_v32": DeepSeekV32Markup(),
    "step3": Step3Markup(),
    "ernie45": HermesMarkup(),
    "olmo3": Olmo3Markup(),
    "glm47": Glm45Markup(),
    "functiongemma": FunctionGemmaMarkup(),
    "lfm2": Lfm2Markup(),
    "gigachat3": GigaChat3Markup(),
    "minicpm5": MiniCPM5Markup(),
    "hy_v3": HyV3Markup(),
    "kimi_k3": KimiK3Markup(),
    "llama4_pythonic": Llama4PythonicMarkup(),
    "mimo": MiMoMarkup(),
    "ling3": Glm45Markup(),
    "poolside_v1": PoolsideV1Markup(),
    "plamo3": Plamo3Markup(),
}


# --------------------------------------------------------------------------- shapes


@dataclass
class Stream:
    """One output text, and the calls (name, arguments) it must parse to."""

    family: str
    shape: str
    text: str
    expected: list[tuple[str, dict[str, Any]]]


def _one_call(
    markup: Markup, name: str, params: Callable[[int], tuple[str, Value]], size: int
) -> tuple[str, dict[str, Any]]:
    """One call whose parameters params(0), params(1), ... run until the text reaches size."""
    head = markup.section_open() + markup.call_open(name, 0)
    tail = markup.call_close() + markup.section_close()
    parts = [head]
    length = len(head) + len(tail)
    args: dict[str, Any] = {}
    index = 0
    while length < size:
        key, value = params(index)
        piece = markup.param(key, value, first=index == 0)
        parts.append(piece)
        length += len(piece)
        args[key] = value  # a repeated key keeps its first position and its last value
        index += 1
    parts.append(tail)
    return "".join(parts), args


def shape_loop(markup: Markup, size: int) -> tuple[str, list]:
    def params(i: int) -> tuple[str, Value]:
        if i == 0:
            return "file_path", "src/app.py"
        if markup.json_args:
            return f"k{i}", "total = 1"
        return ("old_string", "total = 0") if i % 2 else ("new_string", "total = 1")

    text, args = _one_call(markup, "edit", params, size)
    return text, [("edit", args)]


def _source_line(i: int) -> str:
    return f'    print("row", {i}, total)  # keep <going>\n'


def shape_long_string(markup: Markup, size: int) -> tuple[str, list]:
    head = markup.section_open() + markup.call_open("write_file", 0)
    head += markup.param("path", "big.py", first=True)
    tail = markup.call_close() + markup.section_close()
    lines: list[str] = []
    length = len(head) + len(tail) + len(markup.param("content", "", first=False))
    i = 0
    while length < size:
        line = _source_line(i)
        lines.append(line)
        # a JSON string grows by the escaped line: two quotes -> \", the newline -> \n
        length += len(json.dumps(line)) - 2 if markup.json_args else len(line)
        i += 1
    content = "".join(lines)
    text = head + markup.param("content", content, first=False) + tail
    return text, [("write_file", {"path": "big.py", "content": content})]


def shape_many_params(markup: Markup, size: int) -> tuple[str, list]:
    text, args = _one_call(markup, "set_options", lambda i: (f"p{i}", f"v{i}"), size)
    return text, [("set_options", args)]


def shape_many_calls(markup: Markup, size: int) -> tuple[str, list]:
    parts = [markup.section_open()]
    tail = markup.section_close()
    length = len(parts[0]) + len(tail)
    calls: list[tuple[str, dict[str, Any]]] = []
    while length < size:
        call = markup.call_open("get_weather", len(calls))
        call += markup.param("city", "Paris", first=True)
        call += markup.param("days", 3, first=False)
        call += markup.call_close()
        parts.append(call)
        length += len(call)
        calls.append(("get_weather", {"city": "Paris", "days": 3}))
    parts.append(tail)
    return "".join(parts), calls


SHAPE_BUILDERS: dict[str, Callable[[Markup, int], tuple[str, list]]] = {
    "loop": shape_loop,
    "long_string": shape_long_string,
    "many_params": shape_many_params,
    "many_calls": shape_many_calls,
}


def build_stream(family: str, shape: str, size: int) -> Stream:
    text, expected = SHAPE_BUILDERS[shape](MARKUP[family], size)
    return Stream(family, shape, text, expected)


# --------------------------------------------------------------------------- correctness


class Mismatch(Exception):
    """The streamed result is not the whole-output result, or not what was written."""


def check(stream: Stream, deltas: list[toolgrammar.Delta], finish: str | None, tools: list) -> None:
    streamed = toolgrammar.assemble(deltas, finish)
    whole = toolgrammar.parse(stream.family, stream.text, tools, ids="sequential")
    where = f"{stream.family}/{stream.shape} ({len(stream.text)} chars)"
    if streamed.model_dump() != whole.model_dump():
        raise Mismatch(f"{where}: streamed message differs from parse()")
    if streamed.content or streamed.reasoning:
        raise Mismatch(f"{where}: unexpected content/reasoning {streamed.content!r:.80}")
    got = []
    for call in streamed.tool_calls:
        try:
            args = json.loads(call.function.arguments)
        except ValueError as error:
            raise Mismatch(f"{where}: call {call.id} arguments are not JSON: {error}") from None
        if not isinstance(args, dict):
            raise Mismatch(f"{where}: call {call.id} arguments are not an object")
        got.append((call.function.name, args))
    if got != stream.expected:
        raise Mismatch(
            f"{where}: parsed {len(got)} calls, expected {len(stream.expected)}; "
            f"first difference: {_first_difference(got, stream.expected)}"
        )


def _first_difference(got: list, expected: list) -> str:
    for index, ((name, args), (want_name, want)) in enumerate(zip(got, expected)):
        if name != want_name:
            return f"call {index}: name {name!r}, expected {want_name!r}"
        if args != want:
            keys = [k for k in {**args, **want} if args.get(k, None) != want.get(k, None)]
            key = keys[0] if keys else "?"
            return (
                f"call {index}: {len(keys)} argument(s) differ, first {key!r}: "
                f"got {str(args.get(key, '<missing>'))[:80]!r}, "
                f"expected {str(want.get(key, '<missing>'))[:80]!r}"
            )
    return "the number of calls"


# --------------------------------------------------------------------------- measuring


def chunks_of(text: str, delta: int) -> list[str]:
    return [text[i : i + delta] for i in range(0, len(text), delta)]


def timed_run(
    stream: Stream, tools: list, delta: int
) -> tuple[list[int], list[toolgrammar.Delta], str | None]:
    """Stream the text once; the ns of every feed, the deltas, the finish reason."""
    chunks = chunks_of(stream.text, delta)
    times = [0] * len(chunks)
    out: list[toolgrammar.Delta] = []
    parser = toolgrammar.StreamParser(stream.family, tools, ids="sequential")
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for i, chunk in enumerate(chunks):
            start = clock()
            got = parser.feed(chunk)
            times[i] = clock() - start
            out += got
        out += parser.finish("stop")
    finally:
        gc.enable()
    return times, out, parser.finish_reason


def window(times: list[int], delta: int, first: int, last: int) -> list[int]:
    """The times of the deltas whose end offset lies in (first, last]."""
    lo = max(0, first // delta)  # delta i ends at (i + 1) * delta
    hi = min(len(times), last // delta)
    return times[lo:hi]


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def peak_memory_mb(stream: Stream, tools: list, delta: int) -> float:
    """tracemalloc peak while streaming the text (deltas dropped, as a server sends them)."""
    chunks = chunks_of(stream.text, delta)
    parser = toolgrammar.StreamParser(stream.family, tools, ids="sequential")
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish("stop")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


def parse_ms(stream: Stream, tools: list, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            toolgrammar.parse(stream.family, stream.text, tools, ids="sequential")
            best = min(best, time.perf_counter_ns() - start)
        finally:
            gc.enable()
    return best / 1e6


@dataclass
class ShapeResult:
    family: str
    shape: str
    chars: int
    deltas: int
    median_us: dict[str, float]  # size label -> best-of-runs median µs/delta
    p99_us: float
    ratio: float
    stream_ms: float  # best total feed time of the whole text
    parse_ms: float
    peak_mb: float
    flags: list[str] = field(default_factory=list)


def measure(
    family: str, shape: str, sizes: list[int], delta: int, repeat: int, tools: list
) -> ShapeResult:
    stream = build_stream(family, shape, max(sizes))
    # warm-up: imports, schema compilation, regex caches, branch paths
    warm = Stream(family, shape, stream.text[: min(len(stream.text), 16 * 1024)], [])
    timed_run(warm, tools, delta)

    best_median = {size: float("inf") for size in sizes}
    best_p99 = float("inf")
    best_total = float("inf")
    top = max(sizes)
    for _ in range(repeat):
        times, deltas, finish = timed_run(stream, tools, delta)
        check(stream, deltas, finish, tools)
        for size in sizes:
            best_median[size] = min(
                best_median[size], statistics.median(window(times, delta, size - WINDOW, size))
            )
        best_p99 = min(best_p99, percentile(window(times, delta, top - P99_WINDOW, top), 0.99))
        best_total = min(best_total, sum(times))
        del deltas

    medians = {label(size): best_median[size] / 1e3 for size in sizes}
    first, last = best_median[min(sizes)], best_median[top]
    result = ShapeResult(
        family=family,
        shape=shape,
        chars=len(stream.text),
        deltas=len(chunks_of(stream.text, delta)),
        median_us=medians,
        p99_us=best_p99 / 1e3,
        ratio=last / first if first else float("inf"),
        stream_ms=best_total / 1e6,
        parse_ms=parse_ms(stream, tools, repeat),
        peak_mb=peak_memory_mb(stream, tools, delta),
    )
    if result.ratio > FLAG_RATIO:
        result.flags.append(f"ratio {result.ratio:.2f} > {FLAG_RATIO}")
    slow = [size for size, us in medians.items() if us > FLAG_MEDIAN_US]
    if slow:
        result.flags.append(f"median > {FLAG_MEDIAN_US:g} µs at {', '.join(slow)}")
    return result


def profile(family: str, shape: str, size: int, delta: int, tools: list, top: int = 25) -> str:
    """cProfile of streaming one shape to `size`, the heaviest functions by own time."""
    stream = build_stream(family, shape, size)
    chunks = chunks_of(stream.text, delta)
    parser = toolgrammar.StreamParser(family, tools, ids="sequential")
    profiler = cProfile.Profile()
    profiler.enable()
    for chunk in chunks:
        parser.feed(chunk)
    parser.finish("stop")
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return f"== cProfile {family}/{shape}, {len(stream.text)} chars in {delta}-char deltas\n" + (
        out.getvalue()
    )


# --------------------------------------------------------------------------- reporting


def parse_size(text: str) -> int:
    text = text.strip().upper()
    if text.endswith("K"):
        return int(float(text[:-1]) * 1024)
    if text.endswith("M"):
        return int(float(text[:-1]) * 1024 * 1024)
    return int(text)


def label(size: int) -> str:
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)}M"
    if size % 1024 == 0:
        return f"{size // 1024}K"
    return str(size)


def format_table(family: str, results: list[ShapeResult], sizes: list[int]) -> str:
    labels = [label(size) for size in sizes]
    top = labels[-1]
    header = ["shape", *labels, f"p99@{top}", "ratio", "parse ms", "peak MB"]
    rows = [header]
    for r in results:
        cells = [r.shape]
        for lab in labels:
            us = r.median_us[lab]
            cells.append(f"{us:.1f}{'*' if us > FLAG_MEDIAN_US else ''}")
        cells.append(f"{r.p99_us:.1f}")
        cells.append(f"{r.ratio:.2f}{' !' if r.ratio > FLAG_RATIO else ''}")
        cells.append(f"{r.parse_ms:.1f}")
        cells.append(f"{r.peak_mb:.2f}")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        f"{family}  (µs per delta, median over the last {label(WINDOW)} chars before each size)"
    ]
    for n, row in enumerate(rows):
        first = row[0].ljust(widths[0])
        rest = "  ".join(cell.rjust(width) for cell, width in zip(row[1:], widths[1:]))
        lines.append(f"  {first}  {rest}")
        if n == 0:
            lines.append("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(lines)


def summary_line(family: str, results: list[ShapeResult]) -> str:
    worst = max(results, key=lambda r: r.ratio)
    overall = statistics.median(us for r in results for us in r.median_us.values())
    flags = [f"{r.shape}: {flag}" for r in results for flag in r.flags]
    if overall > FLAG_MEDIAN_US:
        flags.append(f"overall median > {FLAG_MEDIAN_US:g} µs")
    verdict = "FLAGGED: " + "; ".join(flags) if flags else "ok"
    return (
        f"{family}: worst ratio {worst.ratio:.2f} ({worst.shape}), "
        f"overall median {overall:.1f} µs/delta -- {verdict}"
    )


# --------------------------------------------------------------------------- main


def load_average() -> str:
    """The 1-minute load average: above the CPU count, timings are inflated."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Per-delta cost of toolgrammar's StreamParser.feed as an output grows.",
    )
    parser.add_argument(
        "--families", nargs="+", default=list(FAMILIES), help="families (space or comma separated)"
    )
    parser.add_argument(
        "--shapes", nargs="+", default=list(SHAPES), help=f"shapes, of {', '.join(SHAPES)}"
    )
    parser.add_argument("--sizes", default="1K,4K,16K,64K,256K", help="size marks, e.g. 1K,16K,64K")
    parser.add_argument("--delta", type=int, default=16, help="chars per feed (default 16)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per shape; best kept (3)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--profile",
        metavar="FAMILY:SHAPE",
        action="append",
        default=[],
        help="only print a cProfile of streaming this shape to the largest size",
    )
    args = parser.parse_args(argv)
    args.families = [f for item in args.families for f in item.split(",") if f]
    args.shapes = [s for item in args.shapes for s in item.split(",") if s]
    args.sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s.strip()})
    unknown = [s for s in args.shapes if s not in SHAPE_BUILDERS]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    unknown = [f for f in args.families if f not in MARKUP]
    if unknown:
        parser.error(f"no markup for {', '.join(unknown)}; known: {', '.join(MARKUP)}")
    for target in args.profile:
        family, _, shape = target.partition(":")
        if family not in MARKUP or shape not in SHAPE_BUILDERS:
            parser.error(f"--profile takes FAMILY:SHAPE, e.g. qwen3_coder:loop, not {target!r}")
    if args.delta < 1 or args.repeat < 1:
        parser.error("--delta and --repeat must be at least 1")
    if args.delta > WINDOW:
        parser.error(f"--delta must be at most {WINDOW} (the window of a size bucket)")
    if not args.sizes or args.sizes[0] < WINDOW:
        parser.error(f"sizes must be at least {label(WINDOW)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tools = load_tools()
    if args.profile:
        for target in args.profile:
            family, _, shape = target.partition(":")
            print(profile(family, shape, max(args.sizes), args.delta, tools))
        return 0

    print(
        f"toolgrammar per-delta cost: {args.delta}-char deltas, best of {args.repeat}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {load_average()}"
    )
    all_results: list[ShapeResult] = []
    summaries = []
    for family in args.families:
        results = []
        for shape in args.shapes:
            try:
                results.append(measure(family, shape, args.sizes, args.delta, args.repeat, tools))
            except Mismatch as error:
                print(f"\nABORT: correctness check failed: {error}", file=sys.stderr)
                return 1
        print()
        print(format_table(family, results, args.sizes))
        summaries.append(summary_line(family, results))
        all_results += results
    print()
    print(
        f"summary (load {load_average()}; `*` median > {FLAG_MEDIAN_US:g} µs, `!` ratio > {FLAG_RATIO})"
    )
    for line in summaries:
        print(f"  {line}")

    if args.json:
        payload = {
            "delta": args.delta,
            "repeat": args.repeat,
            "sizes": [label(s) for s in args.sizes],
            "window_chars": WINDOW,
            "p99_window_chars": P99_WINDOW,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_after": load_average(),
            "results": [asdict(r) for r in all_results],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
