"""Targeted probes of `toolgrammar check`: one string value watched character by character.

The random samples of `family.py` test whole outputs at cut points; these probes test
what a cut point alone cannot see. Each one writes a single call in the family's markup
with one string parameter whose value is known, finds where the value sits in the text,
and then watches that value:
- kept: the output ends at every character of the value, and at every character of
  the marker after it; the parameter survives with exactly the text written so far, and
  no piece of the closing marker leaks into it (invariant 4, and the classic leak of
  `</param` into a value);
- promptness: fed one character at a time, each character of the value goes out within
  a marker's length of arriving (invariant 8);
- nothing lost at a normal stop: prose that ends in the start of a marker (`Plan f` for
  phi4's `functools[`, `if a <`) reads back whole;
- bad input at scale: a 10 MB value streams with bounded state (tracemalloc), JSON
  nested 10,000 deep and random markup soup never raise (invariant 9).
"""

from __future__ import annotations

import json
import random
import re
import tracemalloc
from dataclasses import dataclass
from typing import Any

from .. import StreamParser
from .invariants import Violation, check_text, comparable, random_points, run, split_at
from ..runtime.render import RenderError, render_output
from ..runtime.spec import FamilySpec
from ..runtime.tables import compiled

SENTINEL = "QzSENTINELzQ"  # letters only: every dialect writes it verbatim


@dataclass
class ValueSite:
    """A call written with one string value, and where that value sits in the text."""

    name: str
    key: str
    head: str  # the text before the value
    tail: str  # the text after it

    def text(self, value: str) -> str:
        return self.head + value + self.tail


def params_of_type(tools: list[dict[str, Any]], kind: str) -> list[tuple[str, str]]:
    return [
        (tool["function"]["name"], key)
        for tool in tools
        for key, schema in tool["function"]["parameters"]["properties"].items()
        if schema.get("type") == kind and "enum" not in schema
    ]


def value_site(spec: FamilySpec, tools: list[dict[str, Any]], kind: str) -> ValueSite | None:
    """The first parameter of JSON type `kind` written in the family's markup, or None.

    The sentinel stands for a string value; an integer's site is found by writing a
    marked number and locating its digits.
    """
    marked = SENTINEL if kind == "string" else 987654321
    for name, key in params_of_type(tools, kind):
        try:
            text = render_output(spec, [(name, {key: marked})])
        except RenderError:
            continue
        needle = str(marked)
        at = text.find(needle)
        if at >= 0 and text.count(needle) == 1:
            return ValueSite(name, key, text[:at], text[at + len(needle) :])
    return None


def hold_allowance(markers: frozenset[str]) -> int:
    """How many characters a parser may hold back: the longest marker, less one."""
    return max((len(m) for m in markers), default=1)


def _arguments(family: str, text: str, tools: list) -> list[Any]:
    _, message = run(family, [text], tools, {"reasoning_open": False})
    out = []
    for call in message.tool_calls:
        try:
            out.append(json.loads(call.function.arguments))
        except ValueError:
            out.append(call.function.arguments)
    return out


def probe_kept(
    family: str, site: ValueSite, tools: list, value: str, hold: int
) -> tuple[int, tuple[str, str] | None]:
    """Cut inside the value and inside the marker after it: the value is kept, unleaked.

    `value` is letters and spaces for a string site, digits for an integer site.

    Returns the number of cuts tried and the first problem: (the output, what went wrong).
    """
    cuts = 0
    for end in range(1 if value.isdigit() else 0, len(value) + 1):
        cuts += 1
        text = site.head + value[:end]
        args = _arguments(family, text, tools)
        got = args[-1].get(site.key) if args and isinstance(args[-1], dict) else None
        read = str(got) if value.isdigit() and isinstance(got, int) else got
        if not isinstance(read, str) or not value[:end].startswith(read) or len(read) < end - hold:
            return cuts, (text, f"the open value {value[:end]!r} reads as {got!r}")
    closer = site.tail[: hold + 1]
    for end in range(1, len(closer) + 1):
        cuts += 1
        text = site.head + value + closer[:end]
        args = _arguments(family, text, tools)
        got = args[-1].get(site.key) if args and isinstance(args[-1], dict) else None
        if got != (int(value) if value.isdigit() else value):
            return cuts, (text, f"{value!r} followed by part of its closer reads as {got!r}")
    return cuts, None


def probe_promptness(
    family: str, site: ValueSite, tools: list, value: str, hold: int
) -> tuple[int, tuple[str, str] | None]:
    """Fed one character at a time, the value goes out at most `hold` characters late."""
    parser = StreamParser(family, tools, reasoning_open=False)
    sent = "".join(p.function.arguments for d in parser.feed(site.head) for p in d.tool_calls)
    for end in range(1, len(value) + 1):
        sent += "".join(
            p.function.arguments for d in parser.feed(value[end - 1]) for p in d.tool_calls
        )
        due = json.dumps(value[: max(0, end - hold)], ensure_ascii=False)[1:-1]
        if due and due not in sent:
            detail = f"fed one character at a time, {due!r} is due; streamed so far {sent!r}"
            return end, (site.head + value[:end], detail)
    return len(value), None


def probe_big_value(family: str, site: ValueSite, tools: list, size: int) -> str | None:
    """A `size`-character value streams with no error and bounded state."""
    chunk = 1 << 16
    block = "x" * chunk
    parser = StreamParser(family, tools, reasoning_open=False)
    try:
        parser.feed(site.head)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(size // chunk):
            parser.feed(block)
            held = len(parser._engine._state.pending)
            if held > 4096:
                return f"holds {held} characters back inside a value"
        grown = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        # the parser's state may hold a delta or two, never the value itself
        if grown > 8 * chunk:
            return f"state grew by {grown} bytes while streaming a {size}-character value"
        parser.feed(site.tail)
        parser.finish()
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
    return None


def deep_json_outputs(spec: FamilySpec, tools: list, depth: int) -> list[str]:
    """Outputs with JSON nested `depth` deep where the family writes JSON (or any value)."""
    deep = "[" * depth + "]" * depth
    outputs = []
    for tool in tools:
        name = tool["function"]["name"]
        for key, schema in tool["function"]["parameters"]["properties"].items():
            try:
                text = render_output(spec, [(name, {key: SENTINEL})])
            except RenderError:
                continue
            quoted = json.dumps(SENTINEL)
            if quoted in text:  # a JSON value: the nesting replaces it, quotes and all
                outputs.append(text.replace(quoted, deep))
            if SENTINEL in text:
                outputs.append(text.replace(SENTINEL, deep))
                outputs.append(text.replace(SENTINEL, "[" * depth))  # never closed
            if len(outputs) >= 3:
                return outputs
    return outputs


def random_soup(markers: frozenset[str], rng: random.Random, alphabet: list[str]) -> str:
    """Markers and text in random order: nothing a grammar expects, everything it knows."""
    pieces = sorted(markers) + ["{", "}", '"', ":", ",", "[", "]", "\\", "=", "\n"]
    out = []
    for _ in range(rng.randint(1, 60)):
        if rng.random() < 0.5:
            out.append(rng.choice(pieces))
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))))
    return "".join(out)


def survives(family: str, text: str, tools: list, rng: random.Random) -> str | None:
    """No exception, parity of whole and random splits, terminated arguments."""
    try:
        _, whole = run(family, [text], tools, {})
        _, split = run(family, split_at(text, random_points(text, rng)), tools, {})
    except Exception as error:  # the finding itself: nothing may raise out of the parser
        return f"raised {type(error).__name__}: {error}"
    if comparable(whole) != comparable(split):
        return f"whole {comparable(whole)} != split {comparable(split)}"
    for call in whole.tool_calls:
        try:
            value = json.loads(call.function.arguments)
        except (ValueError, RecursionError) as error:
            return f"arguments {call.function.arguments[:200]!r}… do not load: {error}"
        if not isinstance(value, dict):
            return f"arguments {call.function.arguments[:200]!r} are not a JSON object"
    return None


_WORD_PREFIX = re.compile(r"\s*[^\W_]+(?:\s+[^\W_]+)*")


def prose_endings(spec: FamilySpec) -> list[str]:
    """Prose that ends in the start of one of the family's content markers: a word that
    begins a marker of words (`Plan f`, `Let's have fun` for an opener ` functools`,
    whitespace and all), or one character that may begin any other (`Plan <`)."""
    endings = set()
    for marker in compiled(spec).content_markers.literals:
        if len(marker) < 2:
            continue
        space = "" if marker[0].isspace() else " "
        words = [marker[:k] for k in range(1, len(marker)) if _WORD_PREFIX.fullmatch(marker[:k])]
        if words:
            endings.update("Plan" + space + word for word in words)
            endings.add("Let's have" + space + words[-1])
        elif not marker[0].isspace():
            endings.add("Plan " + marker[0])
    return sorted(endings)


def probe_prose_endings(family: str, spec: FamilySpec, tools: list) -> tuple[int, Violation | None]:
    """Nothing lost: prose that ends in the start of a marker, ended at a normal stop,
    reads back as that prose whole, streamed or not (docs/policies.md, "Unfinished
    output"). Each is also checked at every cut, whatever the text reads as."""
    texts = prose_endings(spec)
    options = {"reasoning_open": False}
    for text in texts:
        _, message = run(family, [text], tools, options)
        if message.content != text or message.tool_calls or message.reasoning:
            detail = f"the prose {text!r}, ended at a normal stop, reads as {comparable(message)}"
            return len(texts), Violation("nothing lost", text, [], detail)
        found = check_text(family, text, tools, options, lost=True)
        if found:
            return len(texts), found[0]
    return len(texts), None
