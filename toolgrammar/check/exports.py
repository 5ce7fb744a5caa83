"""The export's proof, shared by `toolgrammar check` and tests/test_export.py: what the
exported grammar lets a model write is what the parser reads, and what the parser reads, the
renderer writes inside the export.

llguidance checks the grammars the way serving stacks run them, on a byte-level vocabulary: 256
one-byte tokens plus an end-of-sequence token make every string a token sequence, and the
matcher's token mask is then exactly the set of bytes the grammar allows next. No model
tokenizer is needed. llguidance is in the test extra: `check` says the export proof was skipped
when it is not installed.

- `rejection`: where an exported grammar stops accepting a rendered output (None: accepted);
- `closing_walk`: a random walk through the grammar that steers to an end once long enough;
- `walk_problem`: what is wrong with a walk's text (no calls where the mode requires them,
  another tool than the named one, arguments that are not schema-valid, calls that do not
  survive a render and a parse), or None;
- `faulty_rules`: the rules of an export being matched where it rejects an output, with the
  grammar line each came from (the export writes it as a comment above the rule).
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from functools import lru_cache
from typing import Any, Mapping

import jsonschema
import llguidance
from llguidance import LLMatcher, LLTokenizer, TokenizerWrapper

from .. import RenderError, StreamParser, parse, render

EOS = 256


class _ByteVocabulary:
    eos_token_id = EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [EOS]

    def __call__(self, text: Any) -> list[int]:
        return list(text if isinstance(text, bytes) else text.encode("utf-8"))


TOKENIZER = LLTokenizer(TokenizerWrapper(_ByteVocabulary()))


@lru_cache(maxsize=512)
def compiled(text: str, fmt: str = "lark") -> str:
    """The grammar in llguidance's form; raises ValueError with llguidance's message when
    the grammar does not compile."""
    grammar = llguidance.grammar_from(fmt, text)
    error = LLMatcher.validate_grammar(grammar, TOKENIZER)
    if error:
        raise ValueError(error)
    return grammar


def matcher(text: str, fmt: str = "lark") -> LLMatcher:
    return LLMatcher(TOKENIZER, compiled(text, fmt), log_level=0)


def accepts(grammar: str, output: str, fmt: str = "lark") -> bool:
    """Whether the whole output is a complete sentence of the grammar."""
    m = matcher(grammar, fmt)
    return m.consume_tokens(list(output.encode("utf-8"))) and m.is_accepting()


def allowed_bytes(m: LLMatcher) -> list[int]:
    mask = m.compute_bitmask()
    return [i for i in range(257) if mask[i // 8] >> (i % 8) & 1]


def take_forced(m: Any, out: bytearray) -> bool:
    """Write the bytes the grammar forces next, if any (whether it forced some)."""
    forced = m.compute_ff_bytes()
    if forced:
        assert m.consume_tokens(list(forced)), m.get_error()
        out += forced
    return bool(forced)


def validates(value: Any, schema: Any) -> bool:
    """Whether `value` is valid against `schema`, by `jsonschema` (the validator its `$schema`
    names, Draft 2020-12 by default); `$ref`s resolve within the schema itself."""
    return jsonschema.validators.validator_for(schema)(schema).is_valid(value)


def _strings(line: str) -> list[str]:
    """The quoted strings of one lark line, skipping /regexes/."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c in '"/':
            j = i + 1
            while j < len(line) and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            if c == '"':
                out.append(json.loads(line[i : j + 1]))
            i = j + 1
        else:
            i += 1
    return out


def closing_markers(lark_grammar: str) -> list[str]:
    """Every literal of an exported lark grammar but whitespace, plus the characters that
    close JSON and Python values: what a walk that has used up its budget writes to finish."""
    found = set()
    for line in lark_grammar.splitlines():
        if line.startswith("//"):
            continue
        found |= set(_strings(line.split("%json")[0]))  # a JSON schema holds quotes too
    found |= {'"', "'", "}", "]", ")"}
    # whitespace alone closes nothing, and after it only more whitespace is ever smaller
    return sorted((m for m in found if m.strip()), key=lambda m: (-len(m), m))  # no set order


def closing_walk(
    grammar: str,
    rng: random.Random,
    budget: int = 300,
    limit: int = 4000,
    fmt: str = "lark",
    markers: list[str] | None = None,
) -> tuple[bytes, bool]:
    """A random walk through the grammar: every byte chosen at random among the ones the
    matcher allows, for `budget` bytes. After that the walk steers towards an end: it ends
    as soon as the grammar allows, otherwise writes a whole marker the grammar accepts next
    (preferring one after which it may end, then a closing one), a random byte only when no
    marker fits. Returns the bytes and whether the grammar accepted them."""
    found = markers if markers is not None else closing_markers(grammar)
    encoded = [mk.encode("utf-8") for mk in found]
    m = matcher(grammar, fmt)
    out = bytearray()
    while len(out) < limit:
        if take_forced(m, out):
            continue
        allowed = allowed_bytes(m)
        if not allowed:
            break
        late = len(out) >= budget
        if EOS in allowed and (len(allowed) == 1 or late or rng.random() < 0.02):
            return bytes(out), True
        step = None
        if late:  # long enough: towards the end, and past twice the budget, closers first
            closers = [b'"', b"'", b"]", b"}", b")"] if len(out) >= 2 * budget else []
            step = _closing_marker(m, closers + encoded, allowed, rng, prefer=closers)
        if step is None:
            choices = [b for b in allowed if b != EOS]
            printable = [b for b in choices if 32 <= b < 127 or b == 10]
            step = bytes([rng.choice(printable if printable and rng.random() < 0.9 else choices)])
        assert m.consume_tokens(list(step)), m.get_error()
        out += step
    return bytes(out), m.is_accepting()


def _closing_marker(
    m: LLMatcher,
    markers: list[bytes],
    allowed: list[int],
    rng: random.Random,
    prefer: list[bytes] = (),
) -> bytes | None:
    """A whole marker the grammar takes next: one after which the output may end, else the
    one that leaves the fewest bytes allowed (an opener leaves free text for markup, a
    closer leaves a value for what follows it), ties broken at random."""
    best: list[bytes] = []
    best_size = 10**9
    firsts = set(allowed)
    for marker in markers:
        if marker[0] not in firsts:
            continue
        trial = m.deep_copy()
        if trial.try_consume_tokens(list(marker)) != len(marker):
            continue
        after = allowed_bytes(trial)
        if EOS in after:
            size = -2
        elif marker in prefer and len(after) < 64:  # a closer that leaves free text
            size = -1
        else:
            size = len(after)
        if size < best_size:
            best, best_size = [marker], size
        elif size == best_size:
            best.append(marker)
    return rng.choice(best) if best else None


def rejection(grammar: str, output: str, fmt: str = "lark") -> str | None:
    """None when the whole output is a complete sentence of the grammar; else where and why
    the grammar stops taking it (the byte offset, the text before it, llguidance's word)."""
    m = matcher(grammar, fmt)
    data = output.encode("utf-8")
    for offset, byte in enumerate(data):
        if m.try_consume_tokens([byte]) != 1:
            before = data[max(0, offset - 60) : offset].decode("utf-8", "replace")
            after = data[offset : offset + 30].decode("utf-8", "replace")
            reason = m.get_error() or "the byte is not allowed there"
            return f"rejected at byte {offset}: after {before!r}, at {after!r} ({reason})"
    if not m.is_accepting():
        return (
            f"the output is a prefix, not a sentence: the grammar wants more after {output[-60:]!r}"
        )
    return None


def walk_problem(
    family: str,
    text: str,
    mode: str,
    tools: list[dict[str, Any]],
    schemas: Mapping[str, Any],
) -> str | None:
    """What is wrong with a walk's text under `mode`, or None: the calls it parses to exist
    where the mode requires them, name the named tool, are valid against their tool's schema
    (`schemas`: tool name to parameters schema), and read back the same after a render."""
    message = parse(family, text, tools)
    calls = []
    for call in message.tool_calls:
        try:
            calls.append((call.function.name, json.loads(call.function.arguments)))
        except ValueError:
            return (
                f"the arguments of {call.function.name!r} are not JSON: {call.function.arguments!r}"
            )
    if mode != "auto" and not calls:
        return f"mode {mode} wrote no call the parser reads"
    if mode.startswith("named:") and [n for n, _ in calls] != [mode[len("named:") :]]:
        return f"mode {mode} wrote calls to {[n for n, _ in calls]}"
    for name, args in calls:
        if name not in schemas:
            return f"a call to {name!r}, which is not a tool of the request"
        if not validates(args, schemas[name]):
            return f"the arguments of {name!r} are not valid against its schema: {args!r}"
    if any(_overflows(args) for _, args in calls):  # 1e999 is JSON; Python reads it as inf
        return None
    written = [{"name": n, "arguments": a} for n, a in calls]
    try:
        again = render(family, written, tools)
    except RenderError as error:
        return f"the calls it parses to do not render: {error}"
    message = parse(family, again, tools, reasoning_open=False)
    back = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    if back != calls:
        return f"the calls it parses to render as {again!r}, which reads {back!r}"
    return None


def _overflows(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_overflows(v) for v in value.values())
    if isinstance(value, list):
        return any(_overflows(v) for v in value)
    return False


_RULE = {"lark": re.compile(r"([a-z_][a-z0-9_]*): "), "gbnf": re.compile(r"([a-z][a-z0-9-]*) ::= ")}
_SOURCE = re.compile(r"(?://|#) (\S+:\d+|made by the exporter)$")
# what a rule is relaxed with: any text from where it starts
_ANYTHING = {
    "lark": ("RELAXED_ANYTHING", "RELAXED_ANYTHING: /(?s:.)+/"),
    "gbnf": ("relaxed-anything", "relaxed-anything ::= [^\\x00] relaxed-anything | [^\\x00]"),
}


def rule_sources(grammar: str, fmt: str = "lark") -> dict[str, str]:
    """Each rule of an exported grammar (lark rules, not terminals; GBNF rules) and the
    grammar `file:line` it came from, read from the comments the export writes ("" for a
    rule the exporter made itself)."""
    out: dict[str, str] = {}
    where = ""
    for line in grammar.splitlines():
        source = _SOURCE.match(line)
        if source:
            where = "" if source.group(1) == "made by the exporter" else source.group(1)
            continue
        rule = _RULE[fmt].match(line)
        if rule:
            out[rule.group(1)] = where
    return out


def faulty_rules(
    grammar: str,
    output: str,
    fmt: str = "lark",
    deadline: float | None = None,
    line: str = "",
) -> list[tuple[str, str]]:
    """The rules being matched where the grammar rejects `output`: (rule, `file:line`).

    llguidance says only which byte it refuses, not in which rule, so each rule is tried
    relaxed (its body, or any text) on the output up to and with that byte: the rules whose
    relaxation takes the byte are the ones that could be matching there; of those, leaving
    out the ones that may start the whole output (relaxed, they take anything from its
    first byte) unless all may, the innermost (reaching none of the others) are at fault;
    `line` (the grammar's `file:line` the parser reads there, `grammar_line_at`) keeps those
    made from that line when there are some. Empty when the output is
    accepted, rejected only at its end, or `deadline` (a `time.monotonic()` value) passes."""
    data = output.encode("utf-8")
    m = matcher(grammar, fmt)
    taken = m.try_consume_tokens(list(data))
    if taken >= len(data):
        return []
    head = list(data[: taken + 1])
    sources = rule_sources(grammar, fmt)
    start = "start" if fmt == "lark" else "root"
    name, terminal = _ANYTHING[fmt]
    lines = grammar.splitlines()
    found: list[str] = []
    anywhere: set[str] = set()  # relaxed, they take any first byte: they may start the output
    for rule in sources:
        if rule == start or not sources[rule]:  # the exporter's own rules (text, numbers)
            continue
        if deadline is not None and time.monotonic() > deadline:
            break
        relaxed = [
            f"{line} | {name}" if (r := _RULE[fmt].match(line)) and r.group(1) == rule else line
            for line in lines
        ]
        try:
            trial = LLMatcher(TOKENIZER, compiled("\n".join([*relaxed, terminal, ""]), fmt))
        except ValueError:
            continue
        first = trial.deep_copy()
        if trial.try_consume_tokens(head) == len(head):
            found.append(rule)
            if first.try_consume_tokens([0]) == 1:  # no grammar writes a NUL byte
                anywhere.add(rule)
    if len(anywhere) < len(found):  # a rule the output opens with takes any text: not those
        found = [rule for rule in found if rule not in anywhere]
    refs = {rule: _referenced(grammar, fmt, rule) for rule in found}
    innermost = [r for r in found if not any(o != r and o in _reach(refs, r) for o in found)]
    if any(sources[r] == line for r in innermost):
        innermost = [r for r in innermost if sources[r] == line]
    return [(r, sources[r]) for r in innermost]


def grammar_line_at(
    family: str, text: str, offset: int, tools: list[dict[str, Any]], options: Mapping[str, Any]
) -> str:
    """The grammar `file:line` the family's parser is reading at byte `offset` of `text`
    (its trace, fed a character at a time), or "" when it reads no grammar item there."""
    from ..runtime.trace import Item, Marker

    at = len(text.encode("utf-8")[:offset].decode("utf-8", "ignore"))
    seen: list[tuple[int, str]] = []
    feeding = 0

    def note(event: Any) -> None:
        if isinstance(event, (Item, Marker)) and event.where is not None:
            seen.append((feeding, str(event.where)))

    parser = StreamParser(family, tools, trace=note, **dict(options))
    for feeding, char in enumerate(text[: at + 1]):
        parser.feed(char)
    feeding = at + 1
    parser.finish("stop")
    there = [where for index, where in seen if index == at]
    later = [where for index, where in seen if index > at]
    return (there or later or [""])[-1 if there else 0]


def _referenced(grammar: str, fmt: str, rule: str) -> set[str]:
    """The rules `rule`'s body names."""
    for line in grammar.splitlines():
        r = _RULE[fmt].match(line)
        if r and r.group(1) == rule:
            literals = r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|/(?:[^/\\]|\\.)*/'
            body = re.sub(literals, " ", line[r.end() :])
            return set(re.findall(r"[a-z][a-z0-9_-]*", body))
    return set()


def _reach(refs: dict[str, set[str]], rule: str) -> set[str]:
    """The rules among `refs` that `rule` reaches through the others (it names them, or a
    rule it names does)."""
    seen: set[str] = set()
    todo = [rule]
    while todo:
        for r in refs.get(todo.pop(), set()):
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return seen
