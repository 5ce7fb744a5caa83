"""toolgrammar and a serving stack's own tool parsers on the same streams, in the same run.

The measuring and the correctness sweep every peer shares; a peer (`peer_vllm.py`,
`peer_sglang.py`) adds only how to import its stack and how to drive one of its parsers on
deltas and on a whole output, the way its serving layer does. `vs_vllm.py` and `vs_sglang.py`
run one peer each, in that stack's environment; `vs_peers.py` runs both and joins them.

What it measures, per family both projects support (our name <-> the peer's parser name):

- speed: each stream shape of `streams.py` (written from the family's grammar) at the largest
  size, cut into deltas of about 16 characters at token boundaries, and fed to a fresh parser on
  each side: `toolgrammar.StreamParser.feed` on ours, the peer's streaming step on theirs, then
  one end-of-stream step with the finish reason. µs per delta at a size is the median over the
  deltas that end in the 1K chars before it. A peer's stream that runs past `--budget` seconds
  is cut there and its later sizes print `> budget`. Whole-output parse: `toolgrammar.parse`
  against the peer's whole-output path. Peak memory: tracemalloc while streaming the
  `--mem-size` text.
- correctness, on both: the output ending at every token boundary of a call (cuts whose
  streamed arguments do not `json.loads` to an object), 1-token streaming against the
  whole-output parse (names, arguments as JSON, content), and a string parameter whose value
  is 42 in the middle of a call (it must stay the string "42").

Each family's text is cut into tokens as a model's tokenizer would cut it: every whole tag its
grammar names is one token, everything else one character per token (`Tokens`); both sides get
exactly the same deltas.
"""

from __future__ import annotations

import argparse
import bisect
import gc
import json
import os
import platform
import re
import signal
import statistics
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import per_delta  # noqa: E402  (sizes, labels, load average)
import streams  # noqa: E402  (the shapes, written from the grammars)
import toolgrammar  # noqa: E402
import toolgrammar.runtime  # noqa: E402  (which build runs: docs/compiled.md)
from killable import run_killable  # noqa: E402  (the peer's measurements, killable)
from toolgrammar.adapters.markup import nonblank_markup_literals  # noqa: E402

WINDOW = per_delta.WINDOW  # chars before a size mark whose deltas make that bucket
DELTA_CHARS = 16
WARM_CHARS = 2048  # stream fed untimed before each timed run (see `timed`)


TAG = re.compile(r"<[^<>]+>|\[[^\[\]]+\]")
"""A marker a tokenizer has as one special token: a whole tag (`<tool_call>`, `<｜tool▁sep｜>`,
`[TOOL_CALLS]`). Markup that is ordinary text (`[`, `{`, "```json", `function`, `<parameter=`)
is characters, as in the model's tokenizer; vLLM matches ids only for special tokens."""


def special_tokens(family: str) -> tuple[str, ...]:
    """The family's markers that are one token each: the whole tags its grammar names."""
    markers = nonblank_markup_literals(streams.spec_of(family))
    return tuple(sorted(m for m in markers if TAG.fullmatch(m)))


def peer_release(package: str, env_script: str) -> tuple[str, str]:
    """(the release installed for this python, the tested one): the tested one is the
    `TESTED` of the peer's environment script, and names the release when none is installed
    (the message that says to build the environment)."""
    text = (ROOT / "scripts" / env_script).read_text(encoding="utf-8")
    tested = re.search(r'^TESTED="(.+)"$', text, re.M)[1]  # type: ignore[index]
    try:
        from importlib.metadata import version

        return version(package), tested
    except Exception:  # not installed here
        return tested, tested


class EnvMissing(SystemExit):
    """The peer's modules or its environment's packages are not there."""


# --------------------------------------------------------------------------- tokens


class Tokens:
    """A character-level vocabulary whose special tokens are single tokens.

    Every character of the texts it will see gets an id (sorted, from 0), then each family
    marker listed in `special` one id of its own, in that order, as in the model's tokenizer.
    A peer that matches markers by token id (vLLM) builds its tokenizer from `vocab`; one that
    reads text only (SGLang) still gets its deltas cut at these token boundaries.
    """

    def __init__(self, special: tuple[str, ...], texts: list[str]) -> None:
        chars = {chr(c) for c in range(32, 127)} | {"\n", "\t"}
        for text in texts:
            chars.update(text)
        self.chars: dict[str, int] = {ch: i for i, ch in enumerate(sorted(chars))}
        self.vocab: dict[str, int] = {**self.chars}
        for token in special:
            self.vocab.setdefault(token, len(self.vocab))
        self.special = special
        ordered = sorted(special, key=len, reverse=True)
        self._split = re.compile("(" + "|".join(map(re.escape, ordered)) + ")") if special else None

    def tokens(self, text: str) -> list[tuple[str, int]]:
        """(text, id) of each token: a special marker whole, every other character alone."""
        vocab = self.vocab
        out: list[tuple[str, int]] = []
        pieces = self._split.split(text) if self._split else [text]
        for n, piece in enumerate(pieces):
            if n % 2:
                out.append((piece, vocab[piece]))
            else:
                out.extend((ch, vocab[ch]) for ch in piece)
        return out


@dataclass
class Chunk:
    text: str
    ids: list[int]
    end: int  # char offset where this delta ends


def chunks_of(tokens: list[tuple[str, int]], chars: int) -> list[Chunk]:
    """Deltas of at least `chars` characters, cut only between tokens (as an engine sends)."""
    out: list[Chunk] = []
    text: list[str] = []
    ids: list[int] = []
    length = offset = 0
    for piece, tid in tokens:
        text.append(piece)
        ids.append(tid)
        length += len(piece)
        if length >= chars:
            offset += length
            out.append(Chunk("".join(text), ids, offset))
            text, ids, length = [], [], 0
    if text:
        out.append(Chunk("".join(text), ids, offset + length))
    return out


# --------------------------------------------------------------------------- outcomes


@dataclass
class Outcome:
    """What a client ends up with: content, and each call's name and arguments text."""

    content: str
    calls: list[tuple[str, str]]
    error: str | None = None
    reasoning: str | None = None  # only a peer that splits reasoning off itself (llama.cpp)

    def normalized(self) -> tuple[str, list[tuple[str, Any]]]:
        calls = []
        for name, args in self.calls:
            try:
                calls.append((name, json.loads(args)))
            except ValueError:
                calls.append((name, args))
        return (self.content or "").strip(), calls

    def unparsable(self) -> bool:
        """An error, or a call whose arguments do not json.loads to an object."""
        if self.error:
            return True
        for _, args in self.calls:
            try:
                if not isinstance(json.loads(args), dict):
                    return True
            except ValueError:
                return True
        return False


class Budget(BaseException):
    """A run went past its time budget (a BaseException: parsers' `except Exception` must
    not swallow it)."""


class Side:
    """One parser implementation driven on chunks and on whole texts."""

    label = ""

    def run(
        self,
        chunks: list[Chunk],
        finish: str | None = "stop",
        clock: list[int] | None = None,
        budget_s: float | None = None,
    ) -> tuple[Outcome, int]:
        """Stream the chunks with a fresh parser, timing each delta's step into `clock[i]`,
        then end the stream with `finish` (None: leave it open); the outcome and the count of
        chunks fed. Past `budget_s` it stops with Outcome error "budget"; a parser that raises
        gives an Outcome with the error."""
        raise NotImplementedError

    def parse(self, text: str) -> Outcome:
        return self.parser_of(text)()

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        """The whole-output parse of `text`, with what the serving layer has before the output
        is done (its token ids) made beforehand, so the timing covers the parse alone."""
        raise NotImplementedError


class Ours(Side):
    label = "toolgrammar"

    def __init__(self, family: str, tools: list[dict[str, Any]]) -> None:
        self.family = family
        self.tools = tools

    def run(
        self,
        chunks: list[Chunk],
        finish: str | None = "stop",
        clock: list[int] | None = None,
        budget_s: float | None = None,
    ) -> tuple[Outcome, int]:
        """Stream the chunks (timing each feed into `clock`); the outcome and deltas fed."""
        parser = toolgrammar.StreamParser(
            self.family, self.tools, ids="sequential", reasoning_open=False
        )
        out: list[toolgrammar.Delta] = []
        now = time.perf_counter_ns
        deadline = now() + int(budget_s * 1e9) if budget_s else None
        fed = 0
        try:
            for i, chunk in enumerate(chunks):
                start = now()
                got = parser.feed(chunk.text)
                end = now()
                if clock is not None:
                    clock[i] = end - start
                out += got
                fed = i + 1
                if deadline and end > deadline:
                    return Outcome("", [], "budget"), fed
            if finish is not None:
                out += parser.finish(finish)
        except Exception as error:  # bad input must never raise; count it as a failure
            return Outcome("", [], f"{type(error).__name__}: {error}"), fed
        message = toolgrammar.assemble(out, parser.finish_reason)
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
        return Outcome(message.content or "", calls), fed

    def parser_of(self, text: str) -> Callable[[], Outcome]:
        return lambda: self.parse(text)

    def parse(self, text: str) -> Outcome:
        message = toolgrammar.parse(
            self.family, text, self.tools, ids="sequential", reasoning_open=False
        )
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
        return Outcome(message.content or "", calls)


# --------------------------------------------------------------------------- speed


def parse_size(text: str) -> int:
    return per_delta.parse_size(text)


def label(size: int) -> str:
    return per_delta.label(size)


@dataclass
class Speed:
    """One side's numbers on one stream."""

    median_us: dict[str, float | None]  # size label -> µs per delta (None: past the budget)
    sampled: dict[str, bool]  # size labels measured by a sample past the stream's budget
    reached: int  # chars streamed before the budget ran out (all of them when it did not)
    parse_ms: float | None
    peak_mb: float | None
    ok: bool  # the streamed calls are the ones the text was built from
    note: str = ""
    parse_note: str = ""  # why the whole-output parse's calls differ ("" when they do not)


def merged(chunks: list[Chunk], chars: int) -> list[Chunk]:
    """Consecutive chunks joined into deltas of at least `chars` (still at token boundaries)."""
    out: list[Chunk] = []
    text: list[str] = []
    ids: list[int] = []
    length = 0
    for chunk in chunks:
        text.append(chunk.text)
        ids += chunk.ids
        length += len(chunk.text)
        if length >= chars:
            out.append(Chunk("".join(text), ids, chunk.end))
            text, ids, length = [], [], 0
    if text:
        out.append(Chunk("".join(text), ids, chunks[-1].end))
    return out


def timed(
    side: Side,
    chunks: list[Chunk],
    marks: list[int],
    repeat: int,
    budget_s: float,
    progress: Callable[[Any], None] | None = None,
) -> tuple[dict[str, float | None], dict[str, bool], int, Outcome]:
    """Best-of-`repeat` median µs per delta at every mark; which marks were sampled; the
    chars the full stream reached within the budget; the full stream's outcome.

    A mark the full stream did not reach within the budget is sampled: the text up to the
    1K chars before it goes in untimed 4K-char deltas, then the window's deltas are timed
    as usual. A sample that runs past half the budget leaves that mark and the larger ones
    at None. `progress` is handed the answer so far after the full runs and after each
    sampled mark (a worker killed later keeps what it measured).
    """
    ends = [c.end for c in chunks]
    best: dict[int, float] = {}
    sampled: dict[int, bool] = {}
    reached = 0
    outcome = Outcome("", [])

    def record(mark: int, clock: list[int], offset: int) -> None:
        lo = bisect.bisect_right(ends, mark - WINDOW)
        hi = bisect.bisect_right(ends, mark)
        window = clock[lo - offset : hi - offset]
        if window:
            value = statistics.median(window)
            best[mark] = min(best.get(mark, value), value)

    # a full collection walks every object of the process (the peer's and torch's included) and
    # leaves the caches cold; the stream's first 2K, fed untimed to a parser of their own,
    # warm them again, as a server's other requests keep its parser's code warm
    warm = chunks[: bisect.bisect_right(ends, WARM_CHARS)]
    for _ in range(repeat):
        clock = [0] * len(chunks)
        gc.collect()
        gc.disable()
        try:
            side.run(warm, None, None, budget_s)
            outcome, fed = side.run(chunks, "stop", clock, budget_s)
        finally:
            gc.enable()
        end = ends[fed - 1] if fed else 0
        if outcome.error == "budget":
            end = ends[fed - 2] if fed > 1 else 0  # the delta that ran out is not a full one
        reached = max(reached, end)
        for mark in marks:
            if mark <= end:
                record(mark, clock, 0)
        if outcome.error == "budget":
            break  # one run past the budget is enough to know

    def answer() -> tuple[dict[str, float | None], dict[str, bool], int, Outcome]:
        medians = {label(m): (best[m] / 1e3 if m in best else None) for m in marks}
        return medians, {label(m): True for m in sampled}, reached, outcome

    if progress is not None:
        progress(answer())
    for mark in marks:
        if mark <= reached:
            continue
        lo = bisect.bisect_right(ends, mark - WINDOW)
        hi = bisect.bisect_right(ends, mark)
        head, window = merged(chunks[:lo], 4096), chunks[lo:hi]
        clock = [0] * (len(head) + len(window))
        gc.collect()
        gc.disable()
        try:
            side.run(warm, None, None, budget_s)
            got, fed = side.run(head + window, None, clock, budget_s / 2)
        finally:
            gc.enable()
        if got.error == "budget" or fed < len(head) + len(window):
            break
        sampled[mark] = True
        window_clock = clock[len(head) :]
        best[mark] = statistics.median(window_clock)
        if progress is not None:
            progress(answer())
    return answer()


class _Alarm:
    """SIGALRM after `seconds`, raising Budget in whatever Python code is running."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        def ring(signum: int, frame: Any) -> None:
            raise Budget()

        self.previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: Any) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)


def parse_times_ms(
    sides: list[Side], text: str, repeat: int, budget_s: float
) -> list[tuple[float | None, Outcome | None]]:
    """Best time of a whole-output parse on each side (the parser made per request, as each
    side does), and what the parse found (None past the budget). The sides take turns, one
    parse each per round: this machine's speed drifts by 1.5x within a minute, and turns
    let both sides meet the same drift."""
    parses = [side.parser_of(text) for side in sides]
    best: list[float | None] = [None] * len(sides)
    found: list[Outcome | None] = [None] * len(sides)
    over = [False] * len(sides)
    for _ in range(repeat):
        for i, parse in enumerate(parses):
            if over[i]:
                continue
            gc.collect()
            gc.disable()
            try:
                with _Alarm(budget_s):
                    start = time.perf_counter_ns()
                    found[i] = parse()
                    took = (time.perf_counter_ns() - start) / 1e6
            except Budget:
                over[i], best[i], found[i] = True, None, None
                continue
            finally:
                gc.enable()
            best[i] = took if best[i] is None else min(best[i], took)  # type: ignore[type-var]
    return list(zip(best, found))


def peak_mb(side: Side, chunks: list[Chunk], budget_s: float) -> float | None:
    """tracemalloc peak while streaming (deltas dropped as a server sends them)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        outcome, _ = side.run(chunks, "stop", None, budget_s)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return None if outcome.error == "budget" else peak / 1e6


# --------------------------------------------------------------------------- correctness


def probe_call(family: str) -> str:
    """One complete call with a string and an integer parameter, in the family's markup."""
    return streams.write(family, [("get_weather", [("city", 'Paris, "FR"'), ("days", 3)])])


def forty_two_call(family: str) -> str:
    """A call whose middle parameter is a string (by the schema) written as 42."""
    pairs = [("file_path", "src/app.py"), ("old_string", "42"), ("new_string", "x = 1")]
    return streams.write(family, [("edit", pairs)])


@dataclass
class Correctness:
    cuts: int
    unparsable: int
    crashes: int
    parity_cases: int
    parity_equal: int
    parity_diffs: list[str]
    forty_two: str  # "ok" or what came out
    over_budget: int = 0  # streams or parses stopped by the budget (counted as failures)

    def cells(self) -> tuple[str, str, str]:
        unparsable = f"{self.unparsable}/{self.cuts}"
        if self.crashes:
            unparsable += f" ({self.crashes} raised)"
        parity = f"{self.parity_equal}/{self.parity_cases}"
        if self.over_budget:
            parity += f" ({self.over_budget} past budget)"
        return unparsable, parity, self.forty_two


def bounded(work: Callable[[], Outcome], budget_s: float | None) -> Outcome:
    """`work`'s outcome, or an error "budget" when it runs past `budget_s`: one step of a
    peer's parser can run for minutes (a regex backtracking over the buffer), and the sweep,
    unlike the timed streams, has no deadline of its own between steps."""
    if budget_s is None:
        return work()
    try:
        with _Alarm(budget_s):
            return work()
    except Budget:
        return Outcome("", [], "budget")


def correctness(side: Side, tok: Tokens, family: str, budget_s: float | None = None) -> Correctness:
    """The three sweeps on one side; a stream or parse past `budget_s` counts as failed."""
    call = probe_call(family)
    tokens = tok.tokens(call)
    unparsable = crashes = over = 0

    def stream(text_tokens: list[tuple[str, int]], chars: int, finish: str) -> Outcome:
        nonlocal over
        got = bounded(lambda: side.run(chunks_of(text_tokens, chars), finish)[0], budget_s)
        over += got.error == "budget"
        return got

    def parse(text: str) -> Outcome:
        nonlocal over
        got = bounded(lambda: side.parse(text), budget_s)
        over += got.error == "budget"
        return got

    for k in range(1, len(tokens) + 1):
        outcome = stream(tokens[:k], DELTA_CHARS, "length")
        if outcome.unparsable():
            unparsable += 1
            crashes += bool(outcome.error) and outcome.error != "budget"

    cases = {"probe call": call, '"42" call': forty_two_call(family)}
    for shape, written in writable_streams(family, streams.SHAPES, 1024).items():
        cases[f"{shape} 1K"] = written.text
    equal = 0
    diffs = []
    for name, text in cases.items():
        streamed = stream(tok.tokens(text), 1, "stop")
        whole = parse(text)
        if not streamed.error and not whole.error and streamed.normalized() == whole.normalized():
            equal += 1
        else:
            diffs.append(name)

    forty = forty_two_call(family)
    verdicts = []
    for how, outcome in (
        ("stream", stream(tok.tokens(forty), DELTA_CHARS, "stop")),
        ("whole", parse(forty)),
    ):
        value: Any = "<missing>"
        if outcome.error:
            value = f"error {outcome.error[:40]}"
        else:
            for name, args in outcome.calls:
                try:
                    value = json.loads(args).get("old_string", "<missing>")
                except (ValueError, AttributeError):
                    value = f"unparsable {args[:30]!r}"
        if value != "42":
            shown = (
                "number 42" if value == 42 else (value if isinstance(value, str) else repr(value))
            )
            verdicts.append(f"{how}: {shown[:24]}")
    return Correctness(
        cuts=len(tokens),
        unparsable=unparsable,
        crashes=crashes,
        parity_cases=len(cases),
        parity_equal=equal,
        parity_diffs=diffs,
        forty_two="ok" if not verdicts else "; ".join(verdicts),
        over_budget=over,
    )


# --------------------------------------------------------------------------- driving


@dataclass(frozen=True)
class Peer:
    """A serving stack whose own tool parsers run beside ours (`peer_vllm`, `peer_sglang`).

    What differs between stacks is only how to import one and how to drive one of its parsers;
    everything measured around that is this module's, the same for every peer."""

    name: str  # as the tables show it: "vLLM"
    version: str
    pairs: dict[str, str]  # our family name -> the peer's parser name for that markup
    load: Callable[[], Any]  # imports the stack (EnvMissing when its environment is not there)
    # (what `load` gave, the peer's parser name, the family's tokens, the request's tools)
    side: Callable[[Any, str, Tokens, list[dict[str, Any]]], Side]
    registered: Callable[[Any], list[str]]  # every tool-parser name the stack registers
    env_script: str  # builds the stack's environment and prints its python
    beforehand: str  # what its whole-output parse is handed ready, as the serving layer has it
    # family -> (a marker whose presence in the tokenizer's vocabulary tells the peer's parser
    # which generation of the model it serves, a pattern of the outputs only the generation
    # without it writes): `agreement.py` leaves the marker out of the tokenizer for an output
    # that matches the pattern and does not write the marker, as that model's tokenizer has
    generation_markers: dict[str, tuple[str, str]] = field(default_factory=dict)

    # family -> (a pattern of outputs, the request's `chat_template_kwargs` under which the
    # model writes them): a parser that reads one format per request reads that one
    template_kwargs: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    # corpus case options the peer's side takes as keyword arguments (`reasoning_open`, and
    # `finish` for a case cut by the end of output): `agreement.py` keeps such cases and hands
    # the options on; a peer that takes none leaves those cases out
    options: tuple[str, ...] = ()

    # whether the peer's parser splits the reasoning off itself (llama.cpp's chat parser does;
    # vLLM's and SGLang's tool parsers leave it to their serving layer's reasoning parser):
    # `agreement.py` then compares content always, and the reasoning with it
    reads_reasoning: bool = False

    def kwargs_for(self, family: str, text: str) -> dict[str, Any]:
        """The `chat_template_kwargs` of the request the model answered with `text`."""
        if family not in self.template_kwargs:
            return {}
        pattern, kwargs = self.template_kwargs[family]
        return dict(kwargs) if re.search(pattern, text) else {}

    def absent_markers(self, family: str, text: str) -> list[str]:
        """The generation markers the tokenizer of the model that wrote `text` lacks."""
        if family not in self.generation_markers:
            return []
        marker, older = self.generation_markers[family]
        return [marker] if marker not in text and re.search(older, text) else []

    def request_key(self, family: str, text: str, tools: list[dict[str, Any]]) -> str:
        """The request `text` answers (tools, absent markers, template kwargs) as one key:
        outputs of one request share one of the peer's parsers (`side_for`)."""
        absent = self.absent_markers(family, text)
        return json.dumps([tools, absent, self.kwargs_for(family, text)])

    def side_for(
        self, modules: Any, family: str, key: str, texts: list[str], **options: Any
    ) -> Side:
        """The peer's parser of `family` for the request `key` (`request_key`), its tokenizer
        holding the family's special tokens but the absent ones; `options`: the case options
        the peer takes (`Peer.options`)."""
        tools, absent, kwargs = json.loads(key)
        special = tuple(t for t in special_tokens(family) if t not in absent)
        extra = {"template_kwargs": kwargs} if kwargs else {}
        return self.side(
            modules, self.pairs[family], Tokens(special, texts), tools, **extra, **options
        )

    @property
    def title(self) -> str:
        return f"{self.name} {self.version}"


@dataclass
class StreamResult:
    family: str
    peer_parser: str
    shape: str
    chars: int
    deltas: int
    ours: Speed
    theirs: Speed
    ours_compiled: Speed | None = None  # `--ours-build both`: ours on the compiled build


@dataclass
class FamilyResult:
    family: str
    peer_parser: str
    streams: list[StreamResult] = field(default_factory=list)
    ours_correct: Correctness | None = None
    theirs_correct: Correctness | None = None


def writable_streams(
    family: str, shapes: list[str], size: int, log: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Each shape's stream at `size`, but the shapes the family's markup cannot write (dots
    strips values: no long_string), which are left out with a note."""
    written = {}
    for shape in shapes:
        try:
            written[shape] = streams.build_stream(family, shape, size)
        except toolgrammar.RenderError as error:
            if log:
                log(f"  {family}/{shape} skipped, its markup cannot write it: {error!s:.100}")
    return written


def check_streamed(outcome: Outcome, expected: list[tuple[str, dict[str, Any]]]) -> str:
    """'' when the streamed calls are the expected ones, else a short reason."""
    if outcome.error:
        return outcome.error[:60]
    got = outcome.normalized()[1]
    if got == expected:
        return ""
    if len(got) != len(expected):
        return f"{len(got)} calls, expected {len(expected)}"
    for (name, args), (want_name, want) in zip(got, expected):
        if name != want_name:
            return f"name {name!r}, expected {want_name!r}"
        if args != want:
            if not isinstance(args, dict):
                return "arguments not JSON"
            keys = [k for k in {**args, **want} if args.get(k) != want.get(k)]
            return f"{len(keys)} argument(s) differ, e.g. {keys[0]!r}" if keys else "key order"
    return "differs"


@dataclass
class PeerMeasurement:
    """The peer's numbers on one stream, measured in a worker killed at a hard limit
    (`killable.py`): what the worker did not send in time is past the budget."""

    limit: float
    parses: list[tuple[float | None, Outcome | None]] | None = None  # both sides, in turns
    timed: tuple[Any, ...] = ()  # `timed`'s answer; when not sent, every mark past the budget
    peak: float | None = None
    killed: bool = False
    stage: str = ""  # what the worker was doing when it was killed


def hard_limit(args: argparse.Namespace, marks: list[int]) -> float:
    """Seconds the peer's measurement of one stream may take in all: 1.5 times what its budgets
    allow (the warm-up, each timed run and its warm-up, each sampled mark, the peak-memory
    run, each whole parse) and 30 s more. Only a step stuck where no budget reaches gets
    there."""
    if args.kill_after is not None:
        return float(args.kill_after)
    streams_s = args.budget * (2 + 2 * args.repeat + 1.5 * len(marks))
    return 30.0 + 1.5 * (streams_s + args.parse_repeat * args.parse_budget)


def measured_peer(
    ours: Side,
    theirs: Side,
    text: str,
    chunks: list[Chunk],
    warm: list[Chunk],
    mem_chunks: list[Chunk],
    marks: list[int],
    args: argparse.Namespace,
) -> PeerMeasurement:
    """The peer's warm-up, whole parses (taking turns with ours, as `parse_times_ms` does),
    timed stream and peak memory, in a worker killed at `hard_limit`: a peer step stuck
    inside C, which neither the budget nor SIGALRM interrupts, costs the limit, not the run.
    A stream that finishes is measured by the same code as before, in the worker."""

    def work(send: Callable[[Any], None]) -> None:
        send("warming up")
        theirs.run(warm[:64], budget_s=args.budget)
        send("parsing whole")
        send(parse_times_ms([ours, theirs], text, args.parse_repeat, args.parse_budget))
        send("streaming")
        send(timed(theirs, chunks, marks, args.repeat, args.budget, send))
        send("measuring peak memory")
        send(peak_mb(theirs, mem_chunks, args.budget))

    past = ({label(m): None for m in marks}, {}, 0, Outcome("", [], "budget"))
    result = PeerMeasurement(hard_limit(args, marks), timed=past)
    finished = run_killable(work, result.limit)
    stage = ""
    for item in finished.sent:
        if isinstance(item, str):
            stage = item
        elif stage == "parsing whole":
            result.parses = item
        elif stage == "streaming":
            result.timed = item
        elif stage == "measuring peak memory":
            result.peak = item
    if finished.error:
        raise RuntimeError(f"the peer's measurement raised in its worker:\n{finished.error}")
    result.killed, result.stage = finished.killed, stage
    return result


def killable_correctness(
    side: Side,
    tok: Tokens,
    family: str,
    budget_s: float,
    log: Callable[[str], None],
    limit: float | None = None,
) -> Correctness:
    """`correctness` on the peer in a worker killed at `limit` (default: twice what its
    budgets allow, each step bounded by SIGALRM, which a step stuck inside C does not hear,
    and 30 s): killed,
    every cut and case counts as failed, past the budget."""
    steps = len(tok.tokens(probe_call(family))) + 2 * (2 + len(streams.SHAPES)) + 2
    limit = 30.0 + 2 * budget_s * steps if limit is None else limit
    finished = run_killable(lambda send: send(correctness(side, tok, family, budget_s)), limit)
    if finished.error:
        raise RuntimeError(f"the peer's correctness sweep raised in its worker:\n{finished.error}")
    if finished.sent:
        return finished.sent[0]
    log(f"  {family} correctness of {side.label}: killed at the hard limit ({limit:.0f}s)")
    cuts = len(tok.tokens(probe_call(family)))
    return Correctness(
        cuts=cuts,
        unparsable=cuts,
        crashes=0,
        parity_cases=0,
        parity_equal=0,
        parity_diffs=["killed at the hard limit"],
        forty_two="killed at the hard limit",
        over_budget=1,
    )


_timing_warmed = False


def warm_up_timing(
    ours: Side, chunks: list[Chunk], marks: list[int], args: argparse.Namespace
) -> None:
    """One timed run of ours, thrown away, before the process's first measured one: the first
    stream a process times read 10 to 60% slower at 1K than the same stream timed later (the
    first family's many_calls 1K cell, whichever family came first), which made a row look
    behind only for being first."""
    global _timing_warmed
    if not _timing_warmed:
        timed(ours, chunks, marks, 1, args.budget)
        _timing_warmed = True


def run_family(
    peer: Peer,
    modules: Any,
    family: str,
    args: argparse.Namespace,
    tools: list,
    log: Callable[[str], None],
) -> FamilyResult:
    """Every shape's speed on both sides, then the correctness sweep on both."""
    top = max(args.sizes)
    texts = writable_streams(family, args.shapes, top, log)
    extra = [probe_call(family), forty_two_call(family)]
    tok = Tokens(special_tokens(family), [s.text for s in texts.values()] + extra)
    ours = Ours(family, tools)
    theirs = peer.side(modules, peer.pairs[family], tok, tools)
    result = FamilyResult(family, peer.pairs[family])
    marks = sorted(set(args.sizes) | set(args.plot_marks))

    for shape, stream in texts.items():
        tokens = tok.tokens(stream.text)
        chunks = chunks_of(tokens, DELTA_CHARS)
        mem_chunks = [c for c in chunks if c.end <= args.mem_size] or chunks[:1]
        warm = [c for c in chunks if c.end <= 16 * 1024]
        ours.run(warm)
        warm_up_timing(ours, chunks, marks, args)
        started = time.perf_counter()
        far = measured_peer(ours, theirs, stream.text, chunks, warm, mem_chunks, marks, args)
        peer_seconds = time.perf_counter() - started
        parses = far.parses or [
            *parse_times_ms([ours], stream.text, args.parse_repeat, args.parse_budget),
            (None, None),
        ]
        measured = {}
        started = time.perf_counter()
        measured[ours.label] = (*timed(ours, chunks, marks, args.repeat, args.budget), None)
        measured[ours.label] = (*measured[ours.label][:4], peak_mb(ours, mem_chunks, args.budget))
        ours_seconds = time.perf_counter() - started
        measured[theirs.label] = (*far.timed, far.peak)
        speeds = []
        for side, (parse_ms, parsed), seconds in zip(
            (ours, theirs), parses, (ours_seconds, peer_seconds)
        ):
            medians, sampled, reached, outcome, peak = measured[side.label]
            note = "" if outcome.error == "budget" else check_streamed(outcome, stream.expected)
            parse_note = "" if parsed is None else check_streamed(parsed, stream.expected)
            speeds.append(
                Speed(
                    median_us=medians,
                    sampled=sampled,
                    reached=reached,
                    parse_ms=parse_ms,
                    peak_mb=peak,
                    ok=not note,
                    note=note,
                    parse_note=parse_note,
                )
            )
            log(
                f"  {family}/{shape} {side.label}: {seconds:.1f}s"
                + (
                    f", cut at {label(reached)} by the budget"
                    if outcome.error == "budget" and not (side is theirs and far.killed)
                    else ""
                )
                + (
                    f", killed at the hard limit ({far.limit:.0f}s) while {far.stage}"
                    if side is theirs and far.killed
                    else ""
                )
                + (f", WRONG: {note}" if note else "")
                + (f", whole parse WRONG: {parse_note}" if parse_note else "")
            )
        result.streams.append(
            StreamResult(family, peer.pairs[family], shape, len(stream.text), len(chunks), *speeds)
        )
    if not args.no_correctness:
        result.ours_correct = correctness(ours, tok, family, args.budget)
        result.theirs_correct = killable_correctness(
            theirs, tok, family, args.budget, log, args.kill_after
        )
    return result


# --------------------------------------------------------------------------- reporting


@dataclass
class Run:
    """What one --json file holds: the machine, the peer it was run against, the results."""

    machine: dict[str, str]
    peer: str  # the peer's name as tables show it ("vLLM")
    version: str
    results: list[FamilyResult]
    beforehand: str = "token ids"  # what the whole-output parse gets made before its clock

    @property
    def title(self) -> str:
        return f"{self.peer} {self.version}"


def results_from_json(path: Path) -> Run:
    """The results a --json file holds, to print, tabulate or plot them again. Files written
    before the bench had more than one peer are vLLM's, with its keys ("vllm",
    "vllm_correct")."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    peer = payload.get("peer") or {"name": "vLLM", "version": payload["machine"]["vllm"]}
    beforehand = peer.get("beforehand", "token ids")
    results = []
    for r in payload["results"]:
        streams = [
            StreamResult(
                family=s["family"],
                peer_parser=s.get("peer_parser", s.get("vllm")),
                shape=s["shape"],
                chars=s["chars"],
                deltas=s["deltas"],
                ours=Speed(**s["ours"]),
                theirs=Speed(**s["theirs"]),
                ours_compiled=Speed(**s["ours_compiled"]) if s.get("ours_compiled") else None,
            )
            for s in r["streams"]
        ]
        ours, theirs = r.get("ours_correct"), r.get("theirs_correct", r.get("vllm_correct"))
        results.append(
            FamilyResult(
                r["family"],
                r.get("peer_parser", r.get("vllm")),
                streams,
                Correctness(**ours) if ours else None,
                Correctness(**theirs) if theirs else None,
            )
        )
    # a parse that ran as long as its budget was cut by it (runs before Budget became a
    # BaseException saw parsers swallow it and recorded the budget itself)
    limit = payload["args"].get("parse_budget", float("inf")) * 1000 * 0.99
    for r in results:
        for s in r.streams:
            for speed in (s.ours, s.theirs, s.ours_compiled):
                if speed is not None and speed.parse_ms is not None and speed.parse_ms >= limit:
                    speed.parse_ms = None
    return Run(payload["machine"], peer["name"], peer["version"], results, beforehand)


def fmt_us(us: float | None, sampled: bool = False) -> str:
    if us is None:
        return "> budget"
    return ("~" if sampled else "") + (f"{us:.0f}" if us >= 100 else f"{us:.1f}")


def fmt_ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None:
        return "?"
    if theirs is None:
        return "> budget"
    return f"{theirs / ours:.0f}x" if theirs / ours >= 10 else f"{theirs / ours:.1f}x"


def fmt_num(value: float | None, digits: int = 1) -> str:
    return "> budget" if value is None else f"{value:.{digits}f}"


def fmt_parse(speed: Speed) -> str:
    """A whole-output parse time, marked ≠ when that parse did not find the calls."""
    return fmt_num(speed.parse_ms) + (" ≠" if speed.parse_note else "")


def speed_rows(
    result: FamilyResult, sizes: list[int], who: str
) -> tuple[list[str], list[list[str]]]:
    """One family's table: a row per shape, our µs per delta, the peer's (`who`), the ratio."""
    both = any(s.ours_compiled for s in result.streams)
    header = ["shape"]
    for size in sizes:
        lab = label(size)
        header += [f"{lab} ours", f"{lab} {who}", f"{lab} x"]
        header += [f"{lab} compiled", f"{lab} x compiled"] if both else []
    header += ["parse ms ours", f"parse ms {who}", "peak MB ours", f"peak MB {who}"]
    header += ["parse ms compiled"] if both else []
    rows = []
    for s in result.streams:
        flags = ("" if s.theirs.ok else f" ({who}: calls differ)") + (
            "" if s.ours.ok else " (OURS: calls differ)"
        )
        row = [s.shape + flags]
        for size in sizes:
            lab = label(size)
            a, b = s.ours.median_us.get(lab), s.theirs.median_us.get(lab)
            row += [
                fmt_us(a, lab in s.ours.sampled),
                fmt_us(b, lab in s.theirs.sampled),
                fmt_ratio(a, b),
            ]
            if both:
                c = s.ours_compiled.median_us.get(lab) if s.ours_compiled else None
                sampled = bool(s.ours_compiled and lab in s.ours_compiled.sampled)
                row += [fmt_us(c, sampled), fmt_ratio(c, b)] if s.ours_compiled else ["-", "-"]
        row += [
            fmt_parse(s.ours),
            fmt_parse(s.theirs),
            fmt_num(s.ours.peak_mb, 2),
            fmt_num(s.theirs.peak_mb, 2),
        ]
        if both:
            row.append(fmt_parse(s.ours_compiled) if s.ours_compiled else "-")
        rows.append(row)
    return header, rows


def shape_rows(
    results: list[FamilyResult], shape: str, sizes: list[int], who: str
) -> tuple[list[str], list[list[str]]]:
    """One row per family for one shape: our µs per delta by size, the peer's (`who`), and the
    ratio at each size, whole-output parse and peak memory."""
    labels = [label(size) for size in sizes]
    both = any(s.ours_compiled for r in results for s in r.streams if s.shape == shape)
    header = ["family"] + [f"ours {lab}" for lab in labels] + [f"{who} {lab}" for lab in labels]
    header += [f"x {lab}" for lab in labels]
    header += [f"compiled {lab}" for lab in labels] if both else []
    header += [f"x compiled {lab}" for lab in labels] if both else []
    header += [f"parse ms ours / {who}", f"peak MB ours / {who}"]
    header += ["parse ms compiled"] if both else []
    rows = []
    for r in results:
        for s in r.streams:
            if s.shape != shape:
                continue
            name = r.family if r.family == r.peer_parser else f"{r.family} ({r.peer_parser})"
            if not s.theirs.ok:
                name += " ≠"
            row = [name]
            row += [fmt_us(s.ours.median_us.get(lab), lab in s.ours.sampled) for lab in labels]
            row += [fmt_us(s.theirs.median_us.get(lab), lab in s.theirs.sampled) for lab in labels]
            row += [
                fmt_ratio(s.ours.median_us.get(lab), s.theirs.median_us.get(lab)) for lab in labels
            ]
            if both:
                row += compiled_cells(s, labels)
            row.append(f"{fmt_parse(s.ours)} / {fmt_parse(s.theirs)}")
            row.append(f"{fmt_num(s.ours.peak_mb, 2)} / {fmt_num(s.theirs.peak_mb, 2)}")
            if both:
                row.append(fmt_parse(s.ours_compiled) if s.ours_compiled else "-")
            rows.append(row)
    return header, rows


def compiled_cells(s: StreamResult, labels: list[str]) -> list[str]:
    """Ours on the compiled build (`--ours-build both`): µs per delta at each size, then the
    ratio to the peer's time of the same (pure) run; "-" where that run has no such stream."""
    c = s.ours_compiled
    if c is None:
        return ["-"] * (2 * len(labels))
    cells = [fmt_us(c.median_us.get(lab), lab in c.sampled) for lab in labels]
    return cells + [fmt_ratio(c.median_us.get(lab), s.theirs.median_us.get(lab)) for lab in labels]


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for n, row in enumerate([header, *rows]):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  " + "  ".join(cells))
        if n == 0:
            lines.append("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(lines)


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def correctness_rows(results: list[FamilyResult], who: str) -> tuple[list[str], list[list[str]]]:
    header = [
        "family",
        "unparsable endings ours",
        who,
        "1-token = whole ours",
        who,
        '"42" ours',
        who,
    ]
    rows = []
    for r in results:
        if r.ours_correct is None or r.theirs_correct is None:
            continue
        a, b = r.ours_correct.cells(), r.theirs_correct.cells()
        rows.append([r.family, a[0], b[0], a[1], b[1], a[2], b[2]])
    return header, rows


def machine() -> dict[str, str]:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "ours_build": toolgrammar.runtime.build_name(),  # pure or compiled (docs/compiled.md)
    }


def plot(
    results: list[FamilyResult], path: Path, shapes: list[str], m: dict[str, str], title: str
) -> None:
    """µs per delta against output length, ours solid and the peer's (`title`) dashed, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    cols = 2 if len(shapes) > 1 else 1
    rows = (len(shapes) + 1) // 2
    legend_rows = -(-(len(results) + 2) // 7)  # the legend's rows, below the plots
    fig, axes = plt.subplots(
        rows, cols, figsize=(6.5 * cols, 4.6 * rows + 0.22 * legend_rows), squeeze=False
    )
    tab20 = plt.get_cmap("tab20").colors
    colors = [tab20[i] for i in (*range(0, 20, 2), *range(1, 20, 2))]  # the dark ones first
    for ax, shape in zip(axes.flat, shapes):
        for n, r in enumerate(results):
            color = colors[n % len(colors)]
            mark = "." if n < len(colors) else "x"  # past 20 families the colours repeat
            for s in r.streams:
                if s.shape != shape:
                    continue
                for speed, style in ((s.ours, "-"), (s.theirs, "--")):
                    points = [(parse_size(lab), us) for lab, us in speed.median_us.items() if us]
                    if points:
                        xs, ys = zip(*sorted(points))
                        ax.plot(xs, ys, style, color=color, marker=mark, linewidth=1.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: label(int(x))))
        ax.set_title(f"{shape}", fontsize=10)
        ax.set_xlabel("output length so far (chars)")
        ax.set_ylabel("µs per 16-char delta")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(shapes) :]:
        ax.axis("off")
    handles = [Line2D([], [], color="black", linestyle="-", label="toolgrammar")]
    handles.append(Line2D([], [], color="black", linestyle="--", label=title))
    handles += [
        Line2D(
            [],
            [],
            color=colors[n % len(colors)],
            marker="." if n < len(colors) else "x",
            label=r.family,
        )
        for n, r in enumerate(results)
    ]
    fig.legend(handles=handles, loc="lower center", ncol=7, fontsize=8, frameon=False)
    fig.suptitle(
        f"toolgrammar (solid) vs {title} (dashed): cost of one streamed delta as the "
        "output grows"
        f"\n{m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['date']}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.03 + 0.022 * legend_rows, 1, 0.95))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def parse_args(peer: Peer, argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=f"toolgrammar and {peer.title}'s tool parsers on the same streams, in the "
        "same run"
    )
    parser.add_argument("--families", nargs="+", default=list(peer.pairs))
    parser.add_argument("--shapes", nargs="+", default=list(streams.SHAPES))
    parser.add_argument("--sizes", default="1K,16K,64K,256K", help="table columns")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per side; best kept")
    parser.add_argument(
        "--budget",
        type=float,
        default=30.0,
        help=f"seconds one {peer.name} stream may take before it is cut (default 30)",
    )
    parser.add_argument(
        "--parse-budget",
        type=float,
        default=15.0,
        help="seconds one whole-output parse may take (default 15)",
    )
    parser.add_argument(
        "--parse-repeat",
        type=int,
        default=5,
        help="whole-output parses per side, taking turns, best kept (default 5; each within "
        "--parse-budget)",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        default=None,
        help=f"seconds after which {peer.name}'s measurement of one stream is killed, where no "
        "budget reaches (a step stuck inside C); default 1.5 times what its budgets allow, +30 s",
    )
    parser.add_argument("--mem-size", default="16K", help="text streamed for peak memory (16K)")
    parser.add_argument(
        "--ours-build",
        choices=("pure", "compiled", "both"),
        default=None,
        help="which build of ours runs (docs/compiled.md): pure (TOOLGRAMMAR_PURE_PYTHON=1), "
        "compiled (refused if no build runs; TOOLGRAMMAR_COMPILED_DIR points at one), or both: "
        "a pure run and a compiled run, one process each, joined into one report with "
        "compiled columns (the peer is measured in both runs; the tables show the pure run's). "
        "Default: the build this process runs",
    )
    parser.add_argument(
        "--process-per-family",
        action="store_true",
        help="measure each family in a fresh process of its own (the peer imported in each), "
        "so that no family is timed in a heap the earlier ones grew; the results joined",
    )
    parser.add_argument("--no-correctness", action="store_true")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--markdown", metavar="PATH", help="the tables as Markdown")
    parser.add_argument("--plot", metavar="PNG", help="µs per delta against length, log-log")
    parser.add_argument(
        "--check-env", action="store_true", help=f"import {peer.name}, list its parsers"
    )
    parser.add_argument(
        "--from-json",
        metavar="PATH",
        nargs="+",
        help="run nothing: print, --markdown and --plot the results of earlier --json files "
        "(a family measured again in a later file replaces its earlier result)",
    )
    args = parser.parse_args(argv)
    args.families = [f for item in args.families for f in item.split(",") if f]
    args.shapes = [s for item in args.shapes for s in item.split(",") if s]
    args.sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s.strip()})
    args.mem_size = parse_size(args.mem_size)
    top = max(args.sizes)
    args.plot_marks = [1024 << k for k in range(20) if 1024 << k <= top]
    unknown = [f for f in args.families if f not in peer.pairs]
    if unknown:
        parser.error(
            f"no {peer.name} pairing for {', '.join(unknown)}; known: {', '.join(peer.pairs)}"
        )
    bad = [s for s in args.shapes if s not in streams.SHAPES]
    if bad:
        parser.error(f"unknown shape(s) {', '.join(bad)}")
    if args.sizes[0] < WINDOW:
        parser.error(f"sizes must be at least {label(WINDOW)}")
    return args


def summary(results: list[FamilyResult], sizes: list[int], who: str) -> list[str]:
    """The targets, checked: flat cost, the loop at 64K, never slower than the peer (`who`),
    endings."""
    lines = []
    first, last = label(sizes[0]), label(sizes[-1])
    worst = []
    for r in results:
        ratios = [
            (s.ours.median_us[last] / s.ours.median_us[first], s.shape)
            for s in r.streams
            if s.ours.median_us.get(first) and s.ours.median_us.get(last)
        ]
        if ratios:
            worst.append((*max(ratios), r.family))
    flat = [w for w in worst if w[0] > 1.5]
    lines.append(
        f"flat cost (ours {last} / {first} <= 1.5 everywhere): "
        + ("met" if not flat else "NOT met: " + ", ".join(f"{f}/{sh} {x:.2f}" for x, sh, f in flat))
        + (f"; worst {max(worst)[0]:.2f} ({max(worst)[2]}/{max(worst)[1]})" if worst else "")
    )
    loop64 = []
    for r in results:
        for s in r.streams:
            if s.shape == "loop" and "64K" in s.ours.median_us:
                loop64.append(
                    (r.family, fmt_ratio(s.ours.median_us["64K"], s.theirs.median_us["64K"]))
                )
    if loop64:
        lines.append(f"loop at 64K, x over {who}: " + ", ".join(f"{f} {x}" for f, x in loop64))
    slower = []
    for r in results:
        for s in r.streams:
            for lab, ours in s.ours.median_us.items():
                theirs = s.theirs.median_us.get(lab)
                # (a stream whose calls the peer got wrong, phi4_mini_json's none at all, is
                # not a race: it is listed as wrong, not as faster)
                if ours and theirs and theirs < ours and s.theirs.ok:
                    slower.append(
                        f"{r.family}/{s.shape}@{lab} per delta {ours:.1f} vs {theirs:.1f} µs"
                    )
            a, b = s.ours.parse_ms, s.theirs.parse_ms
            if a is not None and b is not None and b < a and not s.theirs.parse_note:
                slower.append(f"{r.family}/{s.shape} whole parse {a:.1f} vs {b:.1f} ms")
    lines.append(
        f"slower than {who}: "
        + ("nowhere" if not slower else f"{len(slower)}: " + "; ".join(slower))
    )
    if any(s.ours_compiled for r in results for s in r.streams):
        compiled_slower = [
            f"{r.family}/{s.shape}@{lab} per delta {ours:.1f} vs {theirs:.1f} µs"
            for r in results
            for s in r.streams
            if s.ours_compiled and s.theirs.ok
            for lab, ours in s.ours_compiled.median_us.items()
            for theirs in [s.theirs.median_us.get(lab)]
            if ours and theirs and theirs < ours
        ]
        lines.append(
            f"compiled build slower than {who}: "
            + ("nowhere" if not compiled_slower else f"{len(compiled_slower)}: ")
            + "; ".join(compiled_slower)
        )
    wrong = [
        f"{r.family}/{s.shape} ({side}: {speed.parse_note})"
        for r in results
        for s in r.streams
        for side, speed in (("ours", s.ours), (who, s.theirs))
        if speed.parse_note
    ]
    if wrong:
        lines.append("whole parse wrong (not compared for speed): " + "; ".join(wrong))
    streamed_wrong = [
        f"{r.family}/{s.shape} ({s.theirs.note})"
        for r in results
        for s in r.streams
        if not s.theirs.ok
    ]
    if streamed_wrong:
        lines.append(
            f"{who} streamed other calls (not compared for speed): " + "; ".join(streamed_wrong)
        )
    ours_bad = sum(r.ours_correct.unparsable for r in results if r.ours_correct)
    theirs_bad = sum(r.theirs_correct.unparsable for r in results if r.theirs_correct)
    cuts = sum(r.ours_correct.cuts for r in results if r.ours_correct)
    if cuts:
        lines.append(f"unparsable endings: ours {ours_bad}/{cuts}, {who} {theirs_bad}/{cuts}")
    return lines


def report(run: Run, args: argparse.Namespace, sizes: list[int]) -> None:
    """Print the tables; write --markdown and --plot when asked."""
    results, m, who = run.results, run.machine, run.peer
    for r in results:
        header, rows = speed_rows(r, sizes, who)
        print()
        print(f"{r.family} <-> {who} {r.peer_parser}  (µs per delta; x = {who}'s time / ours)")
        print(text_table(header, rows))
        for s in r.streams:
            for side, speed in (("ours", s.ours), (who, s.theirs)):
                if speed.note:
                    print(f"  {s.shape} {side}: {speed.note}")
                if speed.parse_note:
                    print(f"  {s.shape} {side}, whole parse: {speed.parse_note}")
    correct = any(r.ours_correct for r in results)
    if correct:
        header, rows = correctness_rows(results, who)
        print()
        print("correctness (same streams, both sides)")
        print(text_table(header, rows))
        for r in results:
            for side, c in (("ours", r.ours_correct), (who, r.theirs_correct)):
                if c and c.parity_diffs:
                    print(
                        f"  {r.family} {side}: 1-token stream != whole: {', '.join(c.parity_diffs)}"
                    )
    lines = summary(results, sizes, who)
    print("\nsummary")
    for line in lines:
        print(f"  {line}")
    if args.markdown:
        parts = [
            f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['date']}; "
            f"{run.title}. µs per {DELTA_CHARS}-char delta (median over the 1K chars "
            f"before each size; `~` sampled past the budget); x = {who}'s time / ours. "
            f"A family marked ≠ streamed other calls than the text holds (on {who}'s side); a "
            "parse time marked ≠ is a whole-output parse that did not find them. Whole-output "
            "parse: best of --parse-repeat, the sides taking turns, the parser made per request, "
            f"{run.beforehand} made beforehand.\n"
        ]
        shapes = [s.shape for s in results[0].streams] if results else []
        for shape in shapes:
            parts.append(f"**{shape}**\n\n{md_table(*shape_rows(results, shape, sizes, who))}\n")
        if correct:
            parts.append("**correctness**\n\n" + md_table(*correctness_rows(results, who)) + "\n")
        parts.append("**summary**\n\n" + "\n".join(f"- {line}" for line in lines) + "\n")
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text("\n".join(parts), encoding="utf-8")
    if args.plot:
        shapes = [s.shape for s in results[0].streams] if results else []
        plot(results, Path(args.plot), shapes, m, run.title)


def joined(paths: list[str]) -> Run:
    """The runs of several --json files as one (against one peer): a family measured again in
    a later file replaces its earlier result, in place."""
    loaded = [results_from_json(Path(path)) for path in paths]
    peers = {run.title for run in loaded}
    if len(peers) > 1:
        raise SystemExit(f"--from-json joins runs against one peer; these are {sorted(peers)}")
    by_family: dict[str, FamilyResult] = {}
    for run in loaded:
        for r in run.results:
            by_family[r.family] = r
    first = loaded[0]
    return Run(first.machine, first.peer, first.version, list(by_family.values()), first.beforehand)


def check_env(peer: Peer, modules: Any) -> None:
    """The peer's registered tool parsers: which are our names too, and which are benched."""
    names = sorted(peer.registered(modules))
    ours = set(toolgrammar.families())
    print(f"{peer.title}: {len(names)} tool parsers registered")
    print("  also ours:    " + " ".join(n for n in names if n in ours))
    print("  not ours:     " + " ".join(n for n in names if n not in ours))
    print("  benched here: " + " ".join(f"{a}<->{b}" for a, b in peer.pairs.items()))


def write_json(path: str, run: Run, args: argparse.Namespace) -> None:
    """The raw results, with what they were measured on and against."""
    payload = {
        "machine": run.machine,
        "peer": {"name": run.peer, "version": run.version, "beforehand": run.beforehand},
        "args": {k: v for k, v in vars(args).items()},
        "load_after": per_delta.load_average(),
        "results": [asdict(r) for r in run.results],
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def with_compiled(pure: Run, compiled: Run) -> Run:
    """The pure run, each stream carrying ours from the compiled run as `ours_compiled`."""
    ours = {
        (r.family, s.shape): s.ours
        for r in compiled.results
        for s in r.streams
        if compiled.machine.get("ours_build") == "compiled"
    }
    for r in pure.results:
        for s in r.streams:
            s.ours_compiled = ours.get((r.family, s.shape))
    pure.machine["ours_build"] = "pure and compiled"
    return pure


FLAGS = ("--process-per-family",)  # options without a value, for `strip_options`


def run_both_builds(argv: list[str], args: argparse.Namespace) -> Run:
    """`--ours-build both`: this command twice, pure then compiled, each in a process of its
    own (one process runs one build), their results joined (`with_compiled`)."""
    import subprocess
    import tempfile

    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for build in ("pure", "compiled"):
            path = os.path.join(scratch, f"{build}.json")
            rest = strip_options(argv, ("--ours-build", "--json", "--markdown", "--plot"))
            command = [sys.executable, sys.argv[0], *rest, "--ours-build", build, "--json", path]
            print(f"--ours-build both: the {build} run", flush=True)
            subprocess.run(command, check=True)
            runs[build] = results_from_json(Path(path))
    return with_compiled(runs["pure"], runs["compiled"])


def run_each_family(argv: list[str], args: argparse.Namespace) -> Run:
    """`--process-per-family`: this command once per family, each in a process of its own,
    their results joined in the order of `--families` (`joined`)."""
    import subprocess
    import tempfile

    rest = strip_options(
        without_families(argv), ("--json", "--markdown", "--plot", "--process-per-family")
    )
    paths = []
    with tempfile.TemporaryDirectory() as scratch:
        for n, family in enumerate(args.families):
            path = os.path.join(scratch, f"{n}.json")
            command = [sys.executable, sys.argv[0], *rest, "--families", family, "--json", path]
            print(f"--process-per-family: {family}", flush=True)
            subprocess.run(command, check=True)
            paths.append(path)
        return joined(paths)


def without_families(argv: list[str]) -> list[str]:
    """argv without `--families` and its values (`--families a b`, `--families=a,b`)."""
    out, dropping = [], False
    for arg in argv:
        if arg == "--families":
            dropping = True
        elif arg.startswith("--families="):
            dropping = False
        elif dropping and not arg.startswith("-"):
            continue
        else:
            dropping = False
            out.append(arg)
    return out


def strip_options(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """argv without the options `names` (each with its one value, spelled `--x v` or `--x=v`)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in names:
            skip = arg not in FLAGS
        elif not arg.split("=", 1)[0] in names:
            out.append(arg)
    return out


def ensure_build(build: str | None) -> None:
    """Run on the build `--ours-build` asks for: pure re-runs this process with
    TOOLGRAMMAR_PURE_PYTHON=1 where a compiled build runs; compiled is refused without one."""
    running = toolgrammar.runtime.compiled()
    if build == "pure" and running["build"] != "pure":
        env = {**os.environ, toolgrammar.runtime.PURE_ENV: "1"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if build == "compiled" and running["build"] != "compiled":
        raise SystemExit(
            f"--ours-build compiled, but {running['why']} (python scripts/build_compiled.py, "
            "or TOOLGRAMMAR_COMPILED_DIR=the directory `build_compiled.py --no-install` prints)"
        )


def main(peer: Peer, argv: list[str] | None = None) -> int:
    """The command line of `vs_vllm.py` and `vs_sglang.py`, for one peer."""
    args = parse_args(peer, argv)
    if args.from_json:
        report(joined(args.from_json), args, args.sizes)
        return 0
    if args.ours_build == "both" and not args.check_env:
        run = run_both_builds(sys.argv[1:] if argv is None else argv, args)
        if args.json:
            write_json(args.json, run, args)
        report(run, args, args.sizes)
        return 0
    if args.process_per_family and not args.check_env and len(args.families) > 1:
        ensure_build(args.ours_build)
        run = run_each_family(sys.argv[1:] if argv is None else argv, args)
        if args.json:
            write_json(args.json, run, args)
        report(run, args, args.sizes)
        return 0
    ensure_build(args.ours_build)
    modules = peer.load()
    if args.check_env:
        check_env(peer, modules)
        return 0

    tools = streams.load_tools()
    run = Run(machine(), peer.name, peer.version, [], peer.beforehand)
    m = run.machine
    print(
        f"toolgrammar vs {peer.title}: {DELTA_CHARS}-char deltas at token boundaries, "
        f"best of {args.repeat}, {peer.name} budget {args.budget:g}s per stream; {m['cpu']}, "
        f"{m['cores']} cores, Python {m['python']}, {m['date']}, load {per_delta.load_average()}; "
        f"ours: {m['ours_build']} build",
        flush=True,
    )
    for family in args.families:
        log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
        run.results.append(run_family(peer, modules, family, args, tools, log))
        if args.json:  # after every family, so a long run that is stopped keeps what it did
            write_json(args.json, run, args)
    report(run, args, args.sizes)
    print(f"\nload after: {per_delta.load_average()}")
    return 0
