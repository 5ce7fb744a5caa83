"""The library never needs a serving stack: only an adapter module imports one."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import toolgrammar, toolgrammar.adapters, toolgrammar.adapters.markup
toolgrammar.families()
toolgrammar.parse("qwen3_coder", "<tool_call><function=f></function></tool_call>", [])
stacks = sorted(m for m in sys.modules if m.split(".")[0] in ("vllm", "sglang", "torch"))
assert not stacks, stacks
"""


RUNTIME_ALONE = """
import pkgutil, sys
import toolgrammar.runtime
for module in pkgutil.walk_packages(toolgrammar.runtime.__path__, "toolgrammar.runtime."):
    __import__(module.name)
adapters = sorted(m for m in sys.modules if m.split(".")[:2] == ["toolgrammar", "adapters"])
assert not adapters, adapters
print(len([m for m in sys.modules if m.startswith("toolgrammar.runtime.")]))
"""


def test_importing_toolgrammar_imports_no_serving_stack() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_runtime_never_imports_an_adapter() -> None:
    """Adapters sit on top of the runtime (`adapters/`, beside it), never under it."""
    done = subprocess.run([sys.executable, "-c", RUNTIME_ALONE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 10  # every runtime module was imported, not none


def test_family_markers_are_read_from_the_grammar() -> None:
    from toolgrammar.adapters.markup import nonblank_markup_literals, special_markers
    from toolgrammar.runtime.registry import get_spec

    qwen = nonblank_markup_literals(get_spec("qwen3_coder"))
    assert {"<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter="} <= qwen
    assert {"<think>", "</think>", "</parameter>"} <= qwen
    assert "qwen3_coder" not in qwen  # names are not markup
    assert special_markers(get_spec("qwen3_coder"), ["<tool_call>", "<|fim_prefix|>", ""]) == {
        "<tool_call>"
    }
    # an ignored turn token is markup too: the parser must see it to drop it
    assert special_markers(get_spec("qwen3_coder"), ["<|im_end|>"]) == {"<|im_end|>"}
    # a special token inside a longer marker counts (Harmony's channel headers)
    openai = nonblank_markup_literals(get_spec("openai"))
    assert any("<|channel|>" in m for m in openai)
    assert special_markers(get_spec("openai"), ["<|channel|>"]) == {"<|channel|>"}
