"""The invariants of docs/invariants.md, checked on one output text at every cut and split.

Used by the test suite over every corpus case of every grammar. Each check returns
`Violation`s that carry the exact text, the split and what was expected, so a failure
reads as a reproduction.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from .. import StreamParser, parse
from ..runtime.deltas import Delta, Message, assemble
from ..runtime.engine import NORMAL_STOPS


@dataclass
class Violation:
    invariant: str
    text: str
    split: list[int] = field(default_factory=list)
    detail: str = ""

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.detail}\n  text={self.text!r}\n  split at={self.split}"


def run(
    family: str,
    pieces: list[str],
    tools: list[dict[str, Any]] | None,
    options: dict[str, Any],
    finish: str = "stop",
) -> tuple[list[list[Delta]], Message]:
    """Feed `pieces` one by one; the deltas of each feed (the finish's last) and the message."""
    parser = StreamParser(family, tools, ids="sequential", **options)
    per_feed = [parser.feed(piece) for piece in pieces]
    per_feed.append(parser.finish(finish))
    message = assemble([d for feed in per_feed for d in feed], parser.finish_reason)
    return per_feed, message


def comparable(message: Message) -> dict[str, Any]:
    """A message without ids (parity does not cover them)."""
    return {
        "content": message.content,
        "reasoning": message.reasoning,
        "calls": [(c.function.name, c.function.arguments) for c in message.tool_calls],
        "finish_reason": message.finish_reason,
    }


def split_at(text: str, points: list[int]) -> list[str]:
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def random_points(text: str, rng: random.Random) -> list[int]:
    points: list[int] = []
    at = 0
    while True:
        at += rng.randint(1, 12)
        if at >= len(text):
            return points
        points.append(at)


def check_text(
    family: str,
    text: str,
    tools: list[dict[str, Any]] | None = None,
    options: dict[str, Any] | None = None,
    *,
    seed: int = 0,
    cuts: list[int] | None = None,
    finish: str = "stop",
    lost: bool = False,
    splittings: bool | str = True,
    final: Message | None = None,
) -> list[Violation]:
    """Prefix, termination, parity and UTF-8 at every cut (or the given ones),
    1-char/random/whole.

    With `lost`, also "nothing lost": the output cut short (a `length` cut) reads as the
    start of the whole output's reading (content, reasoning, the calls' names), and ended
    at a normal stop it reads as that and more (a stop only adds what was held back).
    Without `splittings`, each cut is parsed whole only; with "1-char" or "random", it is
    streamed in that splitting only (the fuzzer streams each input one way, and checks
    "nothing lost" alone at its extra cut).

    `final`: the message of the whole `text` read in one feed with these tools, options and
    finish, when the caller has it already (the fuzzer checks one text at two cuts): not
    read again.
    """
    options = options or {}
    rng = random.Random(seed)
    found: list[Violation] = []
    if lost and final is None:
        final = run(family, [text], tools, options, finish)[1]
    elif not lost:
        final = None
    # what the policy in force may legitimately do to a cut (docs/policies.md, "Partial and
    # malformed calls"): partial_calls="text" gives the call the cut ends in back as its
    # markup, which the whole output may read as a call; malformed_calls="drop" or "text"
    # drops (or gives back) a call the text after the cut makes malformed, which the cut
    # (read before that) has as a call. Nothing else is let through, and only where the
    # reading with that switch at "keep" shows it is that switch's doing.
    effects = _policy_effects(family, tools, options) if final is not None else NO_EFFECTS
    cut_with = finish if finish not in NORMAL_STOPS else "length"
    for cut in range(len(text) + 1) if cuts is None else cuts:
        prefix = text[:cut]
        if final is not None and cut == len(text):
            whole = final  # the same text, parsed the same way
        else:
            _, whole = run(family, [prefix], tools, options, finish)
        one_shot = parse(family, prefix, tools, finish, ids="sequential", **options)
        problem = _unsendable([], one_shot) or _unsendable([], whole)
        if problem:
            found.append(Violation(UTF8, prefix, [], problem))
        expect = comparable(whole)
        if final is not None:
            cut_short = (
                whole
                if finish not in NORMAL_STOPS
                else run(family, [prefix], tools, options, "length")[1]
            )
            problem = _nothing_lost(
                family, text, prefix, tools, options, finish, cut_short, final, whole, effects,
                cut_with,
            )  # fmt: skip
            if problem:
                found.append(Violation("nothing lost", prefix, [], problem))
        for call in whole.tool_calls:
            try:
                value = json.loads(call.function.arguments)
            except (ValueError, RecursionError) as error:
                found.append(
                    Violation("termination", prefix, [], f"{call.function.arguments!r}: {error}")
                )
                continue
            if not isinstance(value, dict):
                found.append(Violation("termination", prefix, [], f"not an object: {value!r}"))
        for points in _splittings(prefix, rng, splittings):
            per_feed, message = run(family, split_at(prefix, points), tools, options, finish)
            got = comparable(message)
            if got != expect:
                found.append(Violation("parity", prefix, points, f"expected {expect}, got {got}"))
            found.extend(_prefix_violations(prefix, points, per_feed, message))
            problem = _unsendable(per_feed, message)
            if problem:
                found.append(Violation(UTF8, prefix, points, problem))
    return found


UTF8 = "utf-8"  # every string the parser hands out encodes as UTF-8 (runtime/unicode.py)


def _strings(delta: Delta) -> list[str | None]:
    """Every string a delta carries: its text and each call fragment's id, name, arguments."""
    out = [delta.content, delta.reasoning]
    for part in delta.tool_calls:
        out += [part.id, part.function.name, part.function.arguments]
    return out


def _unsendable(per_feed: list[list[Delta]], message: Message) -> str | None:
    """The first string of the deltas or the message that UTF-8 cannot carry (a lone
    surrogate: a server that encodes the chunk fails), said with where it was."""
    strings = [
        (f"feed {n}", s) for n, feed in enumerate(per_feed) for d in feed for s in _strings(d)
    ]
    strings += [("message content", message.content), ("message reasoning", message.reasoning)]
    for call in message.tool_calls:
        strings += [("message call id", call.id), ("message call name", call.function.name)]
        strings.append(("message call arguments", call.function.arguments))
    for where, string in strings:
        if string is None or string.isascii():
            continue
        try:
            string.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"{where}: {string!r} does not encode as UTF-8 ({error.reason})"
    return None


def _splittings(text: str, rng: random.Random, which: bool | str) -> list[list[int]]:
    """The split points of each splitting asked for: 1-char and random (True), none
    (False), or the one named."""
    out = []
    if which is True or which == "1-char":
        out.append(list(range(1, len(text))))
    if which is True or which == "random":
        out.append(random_points(text, rng))
    return out


_LAST_WORD = re.compile(r"[^\W_]+\Z")


def _lost(cut: Message, final: Message) -> str | None:
    """What the output cut short reads as must start what the whole output reads as.

    Whitespace at the very end may differ (next to markup it is markup), so may a last
    word (`f` may start phi4's `functools[`, and a cut-off marker that reads as a word
    stays text), and the last call of the cut may still change (a name or an open value
    is its own invariant).
    """
    for kind in ("content", "reasoning"):
        short, full = getattr(cut, kind) or "", getattr(final, kind) or ""
        if not full.startswith(_LAST_WORD.sub("", short.rstrip()).rstrip()):
            return f"{kind} {short!r} when cut, but {full!r} for the whole output"
    names = [c.function.name for c in cut.tool_calls]
    full_names = [c.function.name for c in final.tool_calls]
    if len(names) > len(full_names) or names[:-1] != full_names[: max(0, len(names) - 1)]:
        return f"calls {names} when cut, but {full_names} for the whole output"
    return None


class Effects(NamedTuple):
    """What the policies in force may legitimately do to an output cut short."""

    # `partial_calls="text"` gives the cut call back: the family's call openers, and the
    # markers of the content it goes back to (a tail that begins one ends it, dropped)
    openers: tuple[str, ...]
    literals: tuple[str, ...]
    # `malformed_calls` drops or gives back a call that more text makes malformed
    malformed: bool


NO_EFFECTS = Effects((), (), False)


def _policy_effects(family: str, tools: Any, options: dict[str, Any]) -> Effects:
    """What the policies `options` resolve to for the family may do to a cut."""
    parser = StreamParser(family, tools, **options)
    policies, compiled = parser.policies, parser._engine.family
    malformed = policies.malformed_calls != "keep"
    if policies.partial_calls != "text":
        return Effects((), (), malformed)
    literals = (*compiled.content_markers.literals, *compiled.section_markers.literals)
    return Effects(tuple(compiled.openers), literals, malformed)


def _nothing_lost(
    family: str,
    text: str,
    prefix: str,
    tools: Any,
    options: dict[str, Any],
    finish: str,
    cut_short: Message,
    final: Message,
    stopped: Message,
    effects: Effects,
    cut_with: str,
) -> str | None:
    """Nothing lost at the cut `prefix` of `text`: read cut short (`cut_short`), it is the
    start of the whole reading (`final`) and of the same prefix ended at `finish`
    (`stopped`: a stop only adds what was held back), but for what the policy in force
    does (`effects`), shown by the reading with that switch at "keep"."""
    openers, literals, malformed = effects
    readings: dict[tuple[str, str, str], Message] = {}

    def read(what: str, switch: str, reason: str) -> Message:
        key = (what, switch, reason)
        if key not in readings:
            source = text if what == "text" else prefix
            readings[key] = run(family, [source], tools, {**options, switch: "keep"}, reason)[1]
        return readings[key]

    for other, compare, what, reason in (
        (final, _lost, "text", finish),
        (stopped, _only_adds, "prefix", finish),
    ):
        problem = compare(cut_short, other)
        if problem and malformed:
            problem = _dropped_as_malformed(
                cut_short, other, read(what, "malformed_calls", reason), compare, problem
            )
        if problem and openers:

            def against(kept: Message) -> str | None:
                why = compare(kept, other)
                if why and malformed:
                    keep = read(what, "malformed_calls", reason)
                    why = _dropped_as_malformed(kept, other, keep, compare, why)
                return why

            kept = read("prefix", "partial_calls", cut_with)
            problem = _given_back(
                prefix, cut_short, kept, other, problem, openers, against, literals
            )
        if problem:
            return problem
    return None


def _names(message: Message) -> list[str]:
    return [c.function.name for c in message.tool_calls]


def _dropped_as_malformed(
    cut: Message,
    other: Message,
    other_keep: Message,
    compare: Callable[[Message, Message], str | None],
    problem: str,
) -> str | None:
    """Nothing lost under `malformed_calls="drop"` or `"text"`, where the cut reading (`cut`)
    is not the start of the other one (`other`, by `compare`) for its calls alone: the cut's
    last call, its arguments cut before they went wrong, is one that the other reading
    drops or gives back as malformed (`other_keep`: that reading with malformed_calls at
    "keep", which has the calls `other` lacks). Every call decided before it is there.
    `problem`: `compare`'s answer."""
    bare = {"tool_calls": []}
    if compare(cut.model_copy(update=bare), other.model_copy(update=bare)):
        return problem  # content or reasoning: no call's outcome explains it
    names, others, kept = _names(cut), _names(other), _names(other_keep)
    last = len(names) - 1
    if (
        last < 0
        or others[:last] != names[:last]
        or len(kept) <= len(others)
        or not _subsequence(others, kept)
    ):
        return f"{problem}, and not the cut's last call dropped as malformed ({others}; {kept} with malformed_calls='keep')"
    return None


def _subsequence(short: list[str], long: list[str]) -> bool:
    rest = iter(long)
    return all(any(item == other for other in rest) for item in short)


def _ends_with(
    text: str, given: str, openers: tuple[str, ...], literals: tuple[str, ...] = ()
) -> bool:
    """Whether `given` ends `text`, but for what a cut leaves unread: whitespace, a last
    word that may begin a marker, a call opener (whole or begun) that both readings drop
    (one inside the given call's value, at the cut), or one of `literals` begun, which ends
    the text given back as markup cut inside its spelling, or whole: in stray text after
    the call's name, before the marker it awaits, a marker of where the text goes back to
    is undecided at `length` (the call's text had its marker come, markup at a normal stop)
    and dropped with what follows (`Engine._undecided_from`)."""
    ends = (text, text.rstrip(), _LAST_WORD.sub("", text.rstrip()).rstrip())
    if any(end.endswith(given) for end in ends):
        return True
    at = text.rfind(given)
    if at < 0:
        return False
    rest = text[at + len(given) :].lstrip()
    return any(rest.startswith(o) or o.startswith(rest) for o in openers) or any(
        lit.startswith(rest) or rest.startswith(lit) for lit in literals
    )


def _given_back(
    text: str,
    cut: Message,
    kept: Message,
    final: Message,
    problem: str,
    openers: tuple[str, ...],
    against: Callable[[Message], str | None] | None = None,
    literals: tuple[str, ...] = (),
) -> str | None:
    """Nothing lost under `partial_calls="text"`, where the cut reading (`cut`) is not the
    start of the whole one: it must be the default policy's reading of the same cut (`kept`,
    itself the start of the whole reading) with its last call given back as content, the
    call's markup as the model wrote it (the end of `text`, but for whitespace and a last word
    that may begin a marker still held at the cut), prose that the kept reading has as
    content between the call's opener and the call within it. `problem`: `_lost`'s answer;
    `against`:
    how `kept` is checked instead of `_lost(kept, final)`."""
    why = _lost(kept, final) if against is None else against(kept)
    if why:
        return f"{why} (read with partial_calls='keep'; with 'text': {problem})"
    calls = [(c.function.name, c.function.arguments) for c in cut.tool_calls]
    kept_calls = [(c.function.name, c.function.arguments) for c in kept.tool_calls]
    content, before = cut.content or "", (kept.content or "").rstrip()
    # the kept reading's content past what the two share is prose a `skip(keep=true)` read
    # between the call's opener and its call: content when the call is kept, and inside the
    # call's text, as written, when it goes back (`[TOOL_CALLS]u[{…` gives back `u` in it)
    common = len(os.path.commonprefix([content, before]))
    given, inside = content[common:], before[common:].strip()
    if (
        cut.reasoning != kept.reasoning
        or kept_calls[:-1] != calls
        or len(kept_calls) != len(calls) + 1
        or inside not in given
        or not given.strip()
        or not _ends_with(text, given.strip(), openers, literals)
    ):
        return f"{problem}, and not the cut call given back as text ({cut.content!r}, {kept.content!r})"
    return None


def _only_adds(cut: Message, stopped: Message) -> str | None:
    """Ended at a normal stop instead of cut, an output reads as the cut reading and more:
    what the stop gives back (held text, a lone name's call) comes after it."""
    for kind in ("content", "reasoning"):
        short, more = getattr(cut, kind) or "", getattr(stopped, kind) or ""
        if not more.startswith(short.rstrip()):
            return f"{kind} {short!r} when cut, but {more!r} at a normal stop"
    names = [c.function.name for c in cut.tool_calls]
    more_names = [c.function.name for c in stopped.tool_calls]
    if more_names[: len(names)] != names:
        return f"calls {names} when cut, but {more_names} at a normal stop"
    return None


def _prefix_violations(
    text: str, points: list[int], per_feed: list[list[Delta]], final: Message
) -> list[Violation]:
    """What was streamed for each call, at every feed, is a prefix of its final arguments."""
    streamed: dict[int, str] = {}
    finals = [call.function.arguments for call in final.tool_calls]
    out: list[Violation] = []
    for feed_no, deltas in enumerate(per_feed):
        for delta in deltas:
            for part in delta.tool_calls:
                streamed[part.index] = streamed.get(part.index, "") + part.function.arguments
        for index, sent in streamed.items():
            if index >= len(finals) or not finals[index].startswith(sent):
                got = finals[index] if index < len(finals) else None
                out.append(
                    Violation(
                        "prefix",
                        text,
                        points,
                        f"after feed {feed_no}, call {index} streamed {sent!r}, final {got!r}",
                    )
                )
                return out
    return out


def shrink(
    fails: Callable[[str, int], bool], text: str, cut: int, deadline: float
) -> tuple[str, int]:
    """`text` with chunks removed while `fails(text, cut)` still holds (ddmin, bounded in
    time), and where the cut point moved to.

    The cut is where the output stopped in the failing reading; a chunk removed before it
    moves it back, so a "nothing lost" finding (a cut compared with the whole output)
    shrinks both the text before the cut and the text after it.
    """
    chunk = max(1, len(text) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        at, smaller = 0, False
        while at < len(text) and time.monotonic() < deadline:
            candidate = text[:at] + text[at + chunk :]
            moved = cut - max(0, min(cut, at + chunk) - at)
            if candidate != text and fails(candidate, moved):
                text, cut, smaller = candidate, moved, True
            else:
                at += chunk
        if not smaller:
            chunk //= 2
    return text, cut
