"""llama.cpp's chat-output parsing as a peer of `side_by_side.py` and `agreement.py`.

llama.cpp is C++: `scripts/llamacpp_env.sh` builds its `common/` chat parsing (the sources
llama-cpp-python 0.3.36 vendors) with our harness `bench/llamacpp_harness.cpp`, which reads
JSON lines and answers each with the parsed message. A request is driven as llama-server
drives one, without the model: the family's chat template (one of llama.cpp's own test
templates, `models/templates/`) is rendered for one user message and the request's tools, which
yields the parser llama-server would use for that request (`common_chat_templates_apply`), and
the output is parsed with it (`common_chat_parse`, reasoning format `auto`, the server's
default). Thinking is enabled in the request when the case says the prompt opened the
reasoning block (`reasoning_open`, else the grammar's own default: then the family's template
whose prompt does so is used) or the output writes one of the family's reasoning openers, and
disabled otherwise (a template
that opens the thinking block in the prompt would read a plain answer as reasoning). A case cut
by the end of output (`finish=length`) is parsed as partial, as the server parses mid-stream.

Streaming (`run`): llama-server parses the whole text so far after each token, as partial
output, and once more whole at the end; the outcome is the last parse's message (the diffs it
sends add up to it: llama.cpp's tests check that).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import tomllib
from typing import Any, Callable

from side_by_side import ROOT, Chunk, EnvMissing, Outcome, Peer, Side, Tokens

from toolgrammar.runtime.registry import get_spec

VERSION = "0.3.36"  # the llama-cpp-python sdist whose vendored llama.cpp is built
HARNESS_ENV = "TOOLGRAMMAR_LLAMACPP_HARNESS"
TEMPLATES = ROOT / ".cache" / f"llama.cpp-{VERSION}" / "src" / "models" / "templates"

# Our families paired with the llama.cpp test template whose model writes that markup (every
# family grammars/templates.toml pairs with a llama.cpp template; where it lists several, the
# one llama.cpp's own parser tests use for that markup). A template is what selects llama.cpp's
# parser: its specialised parser when it has one for the template, else the auto parser
# generated from the template's own rendering of a call. Left out: our families with no
# llama.cpp template of their markup (MiMo-VL's template writes Hermes calls, not `mimo`'s).
PAIRS: dict[str, str] = {
    "qwen3_coder": "Qwen3-Coder.jinja",
    "hermes": "Qwen-Qwen3-0.6B.jinja",  # Hermes-2-Pro's cannot render a `type` list
    "kimi_k2": "moonshotai-Kimi-K2.jinja",
    "kimi_k3": "Kimi-K3.jinja",
    "glm45": "GLM-4.6.jinja",
    "deepseek_v3": "llama-cpp-deepseek-r1.jinja",
    "deepseek_v31": "deepseek-ai-DeepSeek-V3.1.jinja",
    "deepseek_v32": "deepseek-ai-DeepSeek-V3.2.jinja",
    "deepseek_v4": "deepseek-ai-DeepSeek-V4.jinja",
    "minimax_m1": "MiniMax-M1.jinja",
    "minimax_m2": "MiniMax-M2.jinja",
    "minimax_m3": "MiniMax-M3.jinja",
    "gemma4": "google-gemma-4-31B-it.jinja",
    "seed_oss": "ByteDance-Seed-OSS.jinja",
    "openai": "openai-gpt-oss-120b.jinja",
    "llama3_json": "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "mistral": "Mistral-Small-3.2-24B-Instruct-2506.jinja",
    "lfm2": "LFM2-8B-A1B.jinja",
    "apertus": "Apertus-8B-Instruct.jinja",
    "granite": "ibm-granite-granite-3.3-2B-Instruct.jinja",
    "granite4": "ibm-granite-granite-4.0.jinja",
    "cohere_command3": "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
    "cohere_command4": "Cohere2MoE.jinja",
    "gigachat3": "GigaChat3-10B-A1.8B.jinja",
    "minicpm5": "openbmb-MiniCPM5-1B.jinja",
    "muse_glimmer": "muse-glimmer.jinja",
    "poolside_v1": "poolside-Laguna-XS.2.jinja",
    "hy_v3": "tencent-Hy3.jinja",
    "ling3": "inclusionai-ling-3.0-flash.jinja",
    "spark25": "Spark2.5.jinja",
    "step3p5": "StepFun3.5-Flash.jinja",
    "nemotron_v3": "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
    "nemotron_nano_v2": "NVIDIA-Nemotron-Nano-v2.jinja",
    "functionary_v31": "meetkai-functionary-medium-v3.1.jinja",
    "functionary_v32": "meetkai-functionary-medium-v3.2.jinja",
    "firefunction_v2": "fireworks-ai-llama-3-firefunction-v2.jinja",
    "apriel": "Apriel-1.6-15b-Thinker-fixed.jinja",
    "solar_open": "upstage-Solar-Open-100B.jinja",
    "command_r_plus": "CohereForAI-c4ai-command-r-plus-tool_use.jinja",
}
FAMILY_OF = {template: family for family, template in PAIRS.items()}


def templates_of(family: str) -> list[str]:
    """Every llama.cpp template grammars/templates.toml pairs with the family, PAIRS's first."""
    rows = tomllib.loads((ROOT / "grammars" / "templates.toml").read_text(encoding="utf-8"))
    files = [
        row["file"]
        for row in rows.get("template", [])
        if row["family"] == family and row.get("source", "llama.cpp") == "llama.cpp"
    ]
    return list(dict.fromkeys([PAIRS[family], *files]))


def load() -> dict[str, Any]:
    """The harness's path (scripts/llamacpp_env.sh builds it and prints it)."""
    harness = os.environ.get(HARNESS_ENV) or str(
        ROOT / ".cache" / f"llama.cpp-{VERSION}" / "build" / "llamacpp_harness"
    )
    if not (os.access(harness, os.X_OK) and TEMPLATES.is_dir()):
        raise EnvMissing(
            f"no llama.cpp harness at {harness}: run bash scripts/llamacpp_env.sh (it prints "
            f"the harness's path; {HARNESS_ENV} names another)"
        )
    return {"harness": harness}


class _Harness:
    """One running harness per process (agreement.py forks workers: each starts its own)."""

    def __init__(self, path: str) -> None:
        self.pid = os.getpid()
        self.proc = subprocess.Popen(
            [path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the harness died (exit {self.proc.wait()})")
        return json.loads(line)


_running: dict[str, _Harness] = {}
_RENDERABLE: dict[tuple[str, str], list[dict[str, Any]]] = {}


def _harness(path: str) -> _Harness:
    running = _running.get(path)
    if running is None or running.pid != os.getpid() or running.proc.poll() is not None:
        running = _running[path] = _Harness(path)
    return running


def holds_reasoning_marker(family: str, text: str) -> bool:
    """Whether the output writes one of the family's reasoning openers or closers."""
    return any(
        marker in text
        for reasoning in get_spec(family).reasoning
        for marker in (*reasoning.opens, *reasoning.closes)
    )


def thinking(family: str, text: str) -> bool:
    """Whether the output writes one of the family's reasoning openers."""
    return any(
        marker in text for reasoning in get_spec(family).reasoning for marker in reasoning.opens
    )


class Llamacpp(Side):
    label = "llama.cpp"

    def __init__(
        self,
        M: dict[str, Any],
        template: str,
        tokens: Tokens,
        tools: list[dict[str, Any]],
        reasoning_open: bool | None = None,
        finish: str = "stop",
    ) -> None:
        self.harness = M["harness"]
        self.family = FAMILY_OF[template]
        self.template = str(TEMPLATES / template)
        self.tools = tools or []  # `tools=none`: a request without tools
        if reasoning_open is None:  # the grammar's default, as our parser takes it
            reasoning_open = any(r.prompt_opened for r in get_spec(self.family).reasoning)
        self.reasoning_open = reasoning_open
        self.partial = finish == "length"  # a cut output: what the server parses mid-stream
        if reasoning_open:
            # the prompt opened the thinking block: the family's template that does so
            self.template = str(TEMPLATES / self._opening_template())

    def _opening_template(self) -> str:
        """The first of the family's templates whose prompt, thinking enabled, ends with one of
        the family's reasoning openers (PAIRS's own when none does)."""
        opens = [o.rstrip() for r in get_spec(self.family).reasoning for o in r.opens]
        for template in templates_of(self.family):
            answer = _harness(self.harness).ask(
                {"template": str(TEMPLATES / template), "render_only": True,
                 "tools": self._renderable(str(TEMPLATES / template))}  # fmt: skip
            )
            prompt = answer.get("generation_prompt", "").rstrip()
            if any(prompt.endswith(o) for o in opens if o):
                return template
        return PAIRS[self.family]

    def request(self, template: str, text: str, partial: bool) -> dict[str, Any]:
        thinks = self.reasoning_open or thinking(self.family, text)
        return {
            "template": template,
            "tools": self._renderable(template),
            "text": text,
            "partial": partial,
            "reasoning_format": "auto",
            "enable_thinking": thinks,
            "parallel_tool_calls": True,
        }

    def _renderable(self, template: str) -> list[dict[str, Any]]:
        """The request's tools the template can render: some templates fail on a schema they
        do not expect (a `type` list, say), which fails the whole request in llama-server; the
        corpus's tools are a superset of the ones each llama.cpp test passes, so a tool the
        template cannot render is left out of the request rather than failing it."""
        key = (template, json.dumps(self.tools, sort_keys=True))
        if key not in _RENDERABLE:
            ask = _harness(self.harness).ask
            if "error" not in ask({"template": template, "tools": self.tools, "render_only": True}):
                _RENDERABLE[key] = self.tools
            else:
                _RENDERABLE[key] = [
                    tool
                    for tool in self.tools
                    if "error"
                    not in ask({"template": template, "tools": [tool], "render_only": True})
                ]
        return _RENDERABLE[key]

    def _ask(self, text: str, partial: bool) -> Outcome:
        """The output read with the family's templates in turn (the corpus does not say which
        of the family's models wrote it): the first reading that finds calls and reads
        reasoning exactly when there is some to read (the prompt opened it or the output writes
        a reasoning marker), else the first that finds calls, else the first that reads
        reasoning so, else the first that does not fail, else the first failure."""
        templates = [self.template] + [
            str(TEMPLATES / t)
            for t in templates_of(self.family)
            if str(TEMPLATES / t) != self.template
        ]
        readings: list[Outcome] = []
        for template in templates:
            try:
                answer = _harness(self.harness).ask(self.request(template, text, partial))
            except Exception as error:  # a parser that fails is counted, never hidden
                return Outcome("", [], f"{type(error).__name__}: {error}")
            if "error" in answer:
                readings.append(Outcome("", [], answer["error"]))
                continue
            outcome = Outcome(
                answer["content"],
                [(n, a) for n, a in answer["tool_calls"]],
                reasoning=answer["reasoning_content"],
            )
            readings.append(outcome)
        expects_reasoning = bool(self.reasoning_open) or holds_reasoning_marker(self.family, text)

        def score(r: Outcome) -> tuple[bool, bool, bool]:
            return (not r.error, bool(r.calls), bool(r.reasoning) == expects_reasoning)

        best = max(map(score, readings))
        return next(r for r in readings if score(r) == best)

    def run(
        self,
        chunks: list[Chunk],
        finish: str | None = "stop",
        clock: list[int] | None = None,
        budget_s: float | None = None,
    ) -> tuple[Outcome, int]:
        now = time.perf_counter_ns
        deadline = now() + int(budget_s * 1e9) if budget_s else None
        text = ""
        outcome = Outcome("", [])
        fed = 0
        for i, chunk in enumerate(chunks):
            text += chunk.text
            last = finish is not None and i == len(chunks) - 1
            start = now()
            outcome = self._ask(text, partial=not last)
            end = now()
            if clock is not None and i < len(clock):
                clock[i] = end - start
            fed = i + 1
            if outcome.error:
                return outcome, fed
            if deadline and end > deadline:
                return Outcome("", [], "budget"), fed
        return outcome, fed

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        return lambda: self._ask(text, partial=self.partial)


def registered(M: dict[str, Any]) -> list[str]:
    """llama.cpp names no parsers: the templates it ships for its tests stand for them."""
    return sorted(p.name for p in TEMPLATES.glob("*.jinja"))


PEER = Peer(
    name="llama.cpp",
    version=f"(llama-cpp-python {VERSION})",
    pairs=PAIRS,
    load=load,
    side=Llamacpp,
    registered=registered,
    env_script="scripts/llamacpp_env.sh",
    beforehand="the chat template rendered for the request",
    options=("reasoning_open", "finish", "tools=none"),
    reads_reasoning=True,
)
