"""SGLang integration: every toolgrammar family as an SGLang tool-call and reasoning parser.

    python -m toolgrammar.adapters.sglang --model-path MODEL \\
        --tool-call-parser tg-qwen3_coder --reasoning-parser tg-qwen3_coder

registers the parsers, then runs SGLang's own launcher (`sglang.launch_server`) with the same
arguments. Installing toolgrammar next to SGLang also declares an SGLang plugin (entry point
group `sglang.srt.plugins`), which SGLang loads in every process it starts, scheduler
included; so `python -m sglang.launch_server --tool-call-parser tg-...` works as well, as long
as `SGLANG_PLUGINS`, if set, names `toolgrammar` (the launcher adds it). See docs/sglang.md.

Importing this module registers, for every name of `toolgrammar.families()` and
`toolgrammar.TEMPLATE_FAMILIES` (`hf`: the tokenizer's `response_template`), a detector class
as `tg-NAME` in `FunctionCallParser.ToolCallParserEnum` and a companion reasoning detector as
`tg-NAME` in `ReasoningParser.DetectorMap`. With `TOOLGRAMMAR_SGLANG_OVERRIDE=1` the tool
detectors also take SGLang's own parser names that are toolgrammar family names
(`--tool-call-parser qwen3_coder`), but for the ones SGLang's serving layer reaches into.
Grammar params per name come from `TOOLGRAMMAR_SGLANG_PARAMS` (JSON, as for vLLM).
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

import toolgrammar
from toolgrammar.adapters.sglang_pairing import PARAMS_ENV, PREFIX
from toolgrammar.adapters.sglang_reasoning import ToolgrammarReasoningDetector
from toolgrammar.adapters.sglang_tools import ToolgrammarDetector

__all__ = [
    "OVERRIDE_ENV",
    "PARAMS_ENV",
    "PREFIX",
    "ToolgrammarDetector",
    "ToolgrammarReasoningDetector",
    "main",
    "plugin",
    "reasoning_detector_class",
    "register",
    "tool_detector_class",
]

# SGLang's allow-list of general plugins, and this package's entry in it (pyproject.toml)
PLUGINS_ENV = "SGLANG_PLUGINS"
PLUGIN_NAME = "toolgrammar"
OVERRIDE_ENV = "TOOLGRAMMAR_SGLANG_OVERRIDE"
# SGLang's serving layer reads detector internals by parser name for these (kimi_k3's chat
# encoding takes the detector's end-of-turn token as a stop string; beam's Responses tools
# and structural tags come from its response-template detector), so they stay SGLang's.
_REACHED_INTO_BY_SGLANG = frozenset({"kimi_k3", "beam"})


def _class_name(family: str, kind: str) -> str:
    return "Tg_" + "".join(c if c.isalnum() else "_" for c in family) + kind


_tool_classes: dict[str, type[ToolgrammarDetector]] = {}
# SGLang's own tool-parser names, remembered before an override replaces their classes
_sglang_names: set[str] = set()
_reasoning_classes: dict[str, type[ToolgrammarReasoningDetector]] = {}


def _known(family: str) -> None:
    """UnknownFamily for a name that is neither a grammar nor a template family."""
    if family not in toolgrammar.TEMPLATE_FAMILIES:
        toolgrammar.StreamParser(family)


def tool_detector_class(family: str) -> type[ToolgrammarDetector]:
    """The detector class of one registered family name (UnknownFamily if none)."""
    _known(family)
    if family not in _tool_classes:
        name = _class_name(family, "Detector")
        cls = type(name, (ToolgrammarDetector,), {"family": family, "__module__": __name__})
        globals()[name] = cls  # importable by name, like SGLang's own detectors
        _tool_classes[family] = cls
    return _tool_classes[family]


def reasoning_detector_class(family: str) -> type[ToolgrammarReasoningDetector]:
    """The companion reasoning detector class of one registered family name."""
    _known(family)
    if family not in _reasoning_classes:
        name = _class_name(family, "ReasoningDetector")
        cls = type(
            name, (ToolgrammarReasoningDetector,), {"family": family, "__module__": __name__}
        )
        globals()[name] = cls
        _reasoning_classes[family] = cls
    return _reasoning_classes[family]


def register(override: bool = False) -> list[str]:
    """Register every family (and template family) as `tg-NAME` (tool and reasoning detector);
    with `override`, the tool detectors also under SGLang's own names that are family names.
    Returns the tool-parser names registered. Idempotent."""
    tool_parsers = FunctionCallParser.ToolCallParserEnum
    _sglang_names.update(
        n for n, c in tool_parsers.items() if not issubclass(c, ToolgrammarDetector)
    )
    names: list[str] = []
    for family in (*toolgrammar.families(), *toolgrammar.TEMPLATE_FAMILIES):
        tool_parsers[PREFIX + family] = tool_detector_class(family)
        # SGLang looks reasoning parsers up lower-cased
        ReasoningParser.DetectorMap[(PREFIX + family).lower()] = reasoning_detector_class(family)
        names.append(PREFIX + family)
        if override and family in _sglang_names and family not in _REACHED_INTO_BY_SGLANG:
            tool_parsers[family] = tool_detector_class(family)
            names.append(family)
    return names


def _override_requested() -> bool:
    return os.environ.get(OVERRIDE_ENV, "") not in ("", "0")


def plugin() -> list[str]:
    """SGLang's general-plugin hook (entry point `sglang.srt.plugins: toolgrammar`)."""
    return register(override=_override_requested())


def main(
    argv: Sequence[str] | None = None,
    run: Callable[..., Any] = runpy.run_module,
) -> None:
    """Register, then run SGLang's launcher as `python -m sglang.launch_server ARGV` would.

    SGLang's other processes (the scheduler builds the reasoning parser) register through the
    plugin: a `SGLANG_PLUGINS` allow-list that leaves it out is extended with it."""
    args = list(sys.argv[1:] if argv is None else argv)
    register(override=_override_requested())
    allowed = os.environ.get(PLUGINS_ENV, "")
    if allowed and PLUGIN_NAME not in {name.strip() for name in allowed.split(",")}:
        os.environ[PLUGINS_ENV] = f"{allowed},{PLUGIN_NAME}"
    sys.argv = ["sglang.launch_server", *args]
    run("sglang.launch_server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    # `python -m` runs this file as __main__: launch through the importable module, whose
    # classes are the ones registered
    from toolgrammar.adapters.sglang import main as _main

    _main()
else:
    REGISTERED = register(override=_override_requested())
