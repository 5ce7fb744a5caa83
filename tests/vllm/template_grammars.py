"""Constrained decoding from a response template: toolgrammar's export against the structural
tag vLLM 0.33's `vllm/parser/response_template_grammar.py` derives, for the same template and
tools. Run in vLLM's environment (`scripts/vllm_env.sh`):

    $VLLM_PYTHON tests/vllm/template_grammars.py          # prints the table of
                                                            # docs/response_templates.md

Each grammar is run by the engine its stack hands it to, on a byte-level vocabulary (256
one-byte tokens and an end-of-sequence token, so every string is a token sequence): ours (lark)
by llguidance, vLLM's structural tag by xgrammar, vLLM's default structured-output backend.
vLLM's tag is derived as its only caller (`vllm/parser/beam.py`) derives it: strict arguments,
arguments also in sorted order, `required` without the answer field, `auto` with it.

Samples per template and mode (all seeded, so the table is the same on every run):
- rendered: random schema-valid calls written by `toolgrammar.render("hf", …)` (and, in
  `auto`, answers without calls), checked against both grammars;
- our walks: random walks through our grammar (`toolgrammar.check.exports.closing_walk`), checked against
  vLLM's;
- vLLM's walks: random walks through vLLM's tag (xgrammar's token mask, steered to an end the
  same way), checked against ours.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import xgrammar as xgr
from vllm.parser.chat_parsing.response_templates import load_response_template
from vllm.parser.response_template_grammar import tool_call_structural_tag

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

from support.export_helpers import closing_markers, closing_walk, random_value  # noqa: E402
from support.response_templates import TEMPLATES  # noqa: E402

import toolgrammar  # noqa: E402
from toolgrammar.check.exports import rejection  # noqa: E402

TOOLS: list[dict[str, Any]] = json.loads((TESTS / "corpus" / "tools.json").read_text("utf-8"))
SAMPLES = 20  # per kind, template and mode
MODES = ("required", "auto")

# The template vLLM's own grammar tests build on (tests/parser/test_response_template_grammar.py
# in vLLM 0.33: xml-inline arguments named by the opener), and its variant with an answer field.
VLLM_XML: dict[str, Any] = {
    "start_anchor": "<assistant>",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "content": {"content": "text"},
        "tool_calls": {
            "open_pattern": r'<call name="(?P<name>[\w.-]+)">',
            "close": "</call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r'<arg name="(?P<key>[^"]+)">(?P<value>.*?)</arg>'},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}
VLLM_ANSWER = copy.deepcopy(VLLM_XML)
VLLM_ANSWER["fields"]["content"] = {"open": "<answer>", "close": "</answer>", "content": "text"}
# Our json_args without `content_args`: vLLM derives JSON arguments only then.
JSON_ARGS_STRICT = copy.deepcopy(TEMPLATES["json_args"])
del JSON_ARGS_STRICT["fields"]["tool_calls"]["content_args"]

COMPARED: dict[str, dict[str, Any]] = {
    "vllm_xml": VLLM_XML,
    "vllm_answer": VLLM_ANSWER,
    **TEMPLATES,
    "json_args_strict": JSON_ARGS_STRICT,
}

EOS = 256


@lru_cache(maxsize=1)
def _compiler() -> xgr.GrammarCompiler:
    vocab = [bytes([i]) for i in range(256)] + [b"</eos>"]
    info = xgr.TokenizerInfo(vocab, xgr.VocabType.RAW, vocab_size=len(vocab), stop_token_ids=[EOS])
    return xgr.GrammarCompiler(info)


def ours(name: str, mode: str) -> str:
    """Our export of the template (lark, llguidance's syntax)."""
    return toolgrammar.export_grammar("hf", TOOLS, "lark", mode, response_template=COMPARED[name])


def theirs(name: str, mode: str) -> dict[str, Any] | None:
    """vLLM's structural tag for the template, or None where vLLM derives none."""
    fields = load_response_template(COMPARED[name]).fields
    return tool_call_structural_tag(
        fields.get("tool_calls"),
        [tool["function"] for tool in TOOLS],
        parallel_tool_calls=True,
        thinking=fields.get("thinking"),
        answer=fields.get("content") if mode == "auto" else None,
        sorted_arguments=True,
        strict_arguments=True,
    )


class XgrammarGrammar:
    """vLLM's structural tag compiled by xgrammar on the byte vocabulary."""

    def __init__(self, tag: dict[str, Any]) -> None:
        self.compiled = _compiler().compile_structural_tag(json.dumps(tag))

    def accepts(self, text: str) -> bool:
        return self.rejection(text) is None

    def rejection(self, text: str) -> str | None:
        """Where the grammar stops taking the text (None: accepted, the end included)."""
        matcher = xgr.GrammarMatcher(self.compiled)
        data = text.encode("utf-8")
        for i, b in enumerate(data):
            if not matcher.accept_token(b):
                before = data[max(0, i - 40) : i].decode("utf-8", "replace")
                return f"rejected at byte {i}: after {before!r}, at {data[i : i + 20]!r}"
        return None if matcher.accept_token(EOS) else "rejected at the end"

    def walk(
        self, rng: random.Random, markers: list[str], budget: int = 300, limit: int = 4000
    ) -> tuple[bytes, bool]:
        """A random walk as `toolgrammar.check.exports.closing_walk` makes one: random allowed bytes for
        `budget` bytes, then towards an end (the end when allowed, else a whole marker the
        grammar takes, a random byte when none fits)."""
        matcher = xgr.GrammarMatcher(self.compiled)
        mask = xgr.allocate_token_bitmask(1, EOS + 1)
        encoded = [m.encode("utf-8") for m in markers]
        out = bytearray()
        while len(out) < limit:
            matcher.fill_next_token_bitmask(mask)
            words = [w & 0xFFFFFFFF for w in mask[0].tolist()]
            allowed = [i for i in range(EOS + 1) if words[i // 32] >> (i % 32) & 1]
            if not allowed:
                break
            late = len(out) >= budget
            if EOS in allowed and (len(allowed) == 1 or late or rng.random() < 0.02):
                return bytes(out), True
            step = None
            if late:
                closers = [b'"', b"]", b"}"] if len(out) >= 2 * budget else []
                for marker in [*closers, *rng.sample(encoded, len(encoded))]:
                    if marker[0] in allowed and _takes(matcher, marker):
                        step = marker
                        break
            if step is None:
                # ASCII only where the grammar allows it: a lone byte of a multi-byte
                # character could start text that is no UTF-8 (xgrammar's free text is bytes)
                choices = [b for b in allowed if b != EOS]
                ascii_ = [b for b in choices if b < 128]
                printable = [b for b in ascii_ if 32 <= b < 127 or b == 10]
                pick = printable if printable and rng.random() < 0.9 else ascii_ or choices
                step = bytes([rng.choice(pick)])
                assert matcher.accept_token(step[0])
            out += step
        return bytes(out), matcher.accept_token(EOS)


def _takes(matcher: xgr.GrammarMatcher, marker: bytes) -> bool:
    """Accept the whole marker, or nothing of it."""
    for i, b in enumerate(marker):
        if not matcher.accept_token(b):
            if i:
                matcher.rollback(i)
            return False
    return True


def rendered(name: str, mode: str, rng: random.Random) -> list[str]:
    """Random schema-valid calls written in the template's markup, drawn again where the markup
    cannot write a value so that it reads back (a string "1" in `kv-lines`); in `auto`, a
    third of the samples an answer without calls."""
    template = COMPARED[name]
    samples = []
    for i in range(SAMPLES):
        if mode == "auto" and i % 3 == 2:
            samples.append(
                toolgrammar.render(
                    "hf", [], TOOLS, content="The answer.", response_template=template
                )
            )
            continue
        while True:  # calls the markup can write so that they read back the same
            calls = []
            for _ in range(rng.randint(1, 2)):
                tool = rng.choice(TOOLS)["function"]
                arguments = random_value(_inlined(tool["parameters"]), rng)
                calls.append({"name": tool["name"], "arguments": arguments})
            try:
                samples.append(toolgrammar.render("hf", calls, TOOLS, response_template=template))
                break
            except toolgrammar.RenderError:
                continue
    return samples


def _inlined(schema: Any, root: Any = None) -> Any:
    """The schema with its local `$ref`s (`#/$defs/NAME`) replaced by what they name, as
    `random_value` reads schemas without references."""
    root = schema if root is None else root
    if isinstance(schema, list):
        return [_inlined(item, root) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("$ref"), str):
        node = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        return _inlined(node, root)
    return {key: _inlined(value, root) for key, value in schema.items() if key != "$defs"}


@dataclass
class Row:
    """One template and mode: how many of each kind of sample each grammar accepts."""

    name: str
    mode: str
    derived: bool
    rendered_ours: int = 0
    rendered_theirs: int = 0
    # walks that ended where their own grammar lets the output end, and how many of those
    # the other grammar accepts
    our_walks: int = 0
    ours_in_theirs: int = 0
    their_walks: int = 0
    theirs_in_ours: int = 0
    # the first sample of each kind one grammar accepts and the other does not, with where
    # the other stops taking it
    examples: dict[str, tuple[str, str]] = field(default_factory=dict)

    def cells(self) -> list[str]:
        rendered = f"{self.rendered_ours}/{SAMPLES}"
        if not self.derived:
            return [self.name, self.mode, rendered, "not derived", "–", "–"]
        return [
            self.name,
            self.mode,
            rendered,
            f"{self.rendered_theirs}/{SAMPLES}",
            f"{self.ours_in_theirs}/{self.our_walks}",
            f"{self.theirs_in_ours}/{self.their_walks}",
        ]


def compare(name: str, mode: str, seed: int = 21) -> Row:
    rng = random.Random(f"{seed}:{name}:{mode}")
    grammar = ours(name, mode)
    tag = theirs(name, mode)
    row = Row(name, mode, tag is not None)
    xg = XgrammarGrammar(tag) if tag is not None else None
    for text in rendered(name, mode, rng):
        here = rejection(grammar, text)
        row.rendered_ours += here is None
        if xg is not None:
            there = xg.rejection(text)
            row.rendered_theirs += there is None
            if here is None and there is not None:
                row.examples.setdefault("rendered, vLLM's rejects", (text, there))
            elif here is not None and there is None:
                row.examples.setdefault("rendered, ours rejects", (text, here))
        elif here is not None:
            row.examples.setdefault("rendered, ours rejects", (text, here))
    if xg is None:
        return row
    # markup to steer walks to an end with: our grammar's literals that hold markup characters
    markers = [m for m in closing_markers(grammar) if any(c in m for c in "<>[]{}|/")]
    for _ in range(SAMPLES):
        out, ended = closing_walk(grammar, rng)
        if ended:
            text = out.decode("utf-8")
            row.our_walks += 1
            there = xg.rejection(text)
            row.ours_in_theirs += there is None
            if there is not None:
                row.examples.setdefault("our walk, vLLM's rejects", (text, there))
        out, ended = xg.walk(rng, markers)
        if ended:
            text = out.decode("utf-8", "replace")
            row.their_walks += 1
            here = rejection(grammar, text)
            row.theirs_in_ours += here is None
            if here is not None:
                row.examples.setdefault("vLLM's walk, ours rejects", (text, here))
    return row


HEADER = [
    "template",
    "mode",
    "rendered: ours",
    "rendered: vLLM's",
    "our walks in vLLM's",
    "vLLM's walks in ours",
]


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def rows() -> list[Row]:
    return [compare(name, mode) for name in COMPARED for mode in MODES]


def main() -> None:
    measured = rows()
    sys.stdout.write(table(measured))
    if "-v" in sys.argv[1:]:
        for row in measured:
            for kind, (text, why) in row.examples.items():
                print(f"\n{row.name} {row.mode}: {kind}: {why}\n{text[:400]!r}")


if __name__ == "__main__":
    main()
