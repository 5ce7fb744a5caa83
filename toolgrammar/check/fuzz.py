"""`toolgrammar fuzz`: the project's own adversary, hostile outputs against every invariant.

`toolgrammar check` writes well-formed calls and cuts them; the fuzzer writes what no
grammar expects and every grammar must survive (docs/fuzzing.md):
- markup soup: the family's own markers (`dialects.markup_literals`), pieces of them, JSON
  punctuation, quotes, backslashes, names and whitespace in random order;
- mutated corpus cases (`tests/corpus/<family>.txt`, when the source tree is there):
  spans inserted, deleted, doubled, swapped or cut off, their ends often on a marker's
  boundary; a marker stuttered; a name or key stretched past the 256-character cap;
- rendered samples: random calls for random tools written in the family's markup
  (`runtime/render.py`), mutated the same way; now and then among a catalogue of
  thousands of tools;
- byte-level noise: bytes flipped, inserted or dropped in the UTF-8 of a sample, or
  random bytes read as Latin-1 or as UTF-8 with replacement characters;
- CRLF and Unicode edge cases: line endings rewritten, astral characters, combining
  marks, NUL, U+2028, a BOM, confusables of marker characters put anywhere;
- CRLF around closers: `\r\n`, `\r` or mixed line ends before and after the markers, and
  closers drifted to a line end (`</parameter` then `\r\n`);
- hostile response templates (family `hf`, `check/hostile_templates.py`): each must be
  refused in one line or read with every invariant;
- lone surrogate escapes (`\\ud83d`, reversed pairs, pairs) where names, keys and values
  begin, and keys or names written as Unicode whitespace (U+2028, U+3000, NEL).

Each input is read under its own policies: a `compat` value (None half the time, else a
stack's profile) and, a third of the time, explicit switches of any value
(`with_policies`, docs/policies.md), drawn from a stream of their own; a finding prints them.

Each input is checked by the invariant checker the test suite uses
(`invariants.check_text`): nothing raises (or warns) from the whole parse or the
streaming API; every string handed out encodes as UTF-8; whole and stream agree,
streamed one character at a time or in random chunks (one of the two per input, by its
seed); streamed arguments are a prefix of the final ones, which `json.loads` to an object; nothing is lost (the output
cut at a random point reads as the start of the whole reading, and ended at a normal
stop as that and more). Then the fast paths against the slow ones (`fast_paths.py`):
streamed with the shortcuts on and off, the same deltas and message; parse()'s whole-output
route and the engine, the same message. A failure is shrunk (ddmin on characters) and reported with the
family, the invariant, the minimal text, its split and the seed that replays it:
input k of a run draws everything from its own seed, and `toolgrammar fuzz FAMILY
--seed SEED --inputs 1` replays exactly that input.
"""

from __future__ import annotations

import importlib.util
import random
import re
import sys
import time
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from .fast_paths import coarse_points, disagreement
from .family import ALPHABET, make_sample, many_tools, random_tools
from .helpers import clip
from .hostile_templates import clean_refusal, hostile_template
from .invariants import Violation, check_text, random_points, run, shrink, split_at
from ..runtime.params import with_params
from ..runtime.policies import COMPAT, SWITCHES
from ..runtime.registry import families, get_spec
from ..runtime.dialects import markup_literals

GENERATORS = ("soup", "corpus", "rendered", "noise", "unicode", "crlf", "surrogates", "space_keys")
HF = "hf"  # the family of a response template: its inputs carry a hostile template each
TEMPLATE = "template"  # the generator of those inputs
EXCEPTION = "exception"  # the invariant of an error (or a warning) raised out of the parser
MAX_LENGTH = 1500  # longer inputs are cut to a window: 1-char streaming costs per character
SHRINK_SECONDS = 10.0  # per finding: a report must come back even on a busy machine
CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"
# characters that break naive text handling: astral, combining, NUL, line and paragraph
# separators (str.splitlines splits on them), a BOM, bidi and zero-width marks, lookalikes
# of marker characters (DeepSeek's `｜` and `▁`), a full-width `<`, a lone CR
UNICODE_EDGES = [
    "😀", "𝔘", "\U0010ffff", "e\u0301", "\u0301", "\x00", "\u2028", "\u2029", "\ufeff",
    "\x85", "\u200b", "\u200d", "\u202e", "\xa0", "\u3000", "\r", "\r\n", "\x0b", "\x0c",
    "\x1c", "｜", "▁", "＜", "\ufffd", "\U000e0041", "\U0001f468\u200d\U0001f469", "\t",
]  # fmt: skip
# JSON and Python escapes of lone surrogates (high, low, reversed, a high one before a plain
# escape, Python's 8-digit spelling) and of a pair: decoded, a lone one cannot be UTF-8
SURROGATE_ESCAPES = [
    "\\ud83d", "\\udc00", "\\uDBFF", "\\ud83d\\ude00", "\\ude00\\ud83d", "\\ud83d\\u0041",
    "\\ud83d\\", "\\U0000d83d", "\\ud83d\\ud83d\\ude00",
]  # fmt: skip
# whitespace no template writes as layout (str.strip() strips it): a key of only these
UNICODE_SPACES = ["\u2028", "\u2029", "\u3000", "\x85", "\xa0", "\u2028 \u3000", "\x1c"]
PUNCTUATION = [
    "{", "}", "[", "]", ":", ",", '"', "'", "\\", '\\"', "\\u", "\\u00", "\\n", "=", "==",
    "(", ")", "<", ">", "/", " ", "  ", "\n", "\n\n", "\r\n", "\t", '"name": ', '"arguments": ',
    '"parameters": ', "true", "null", "12", "-1.5e3", "'''", '"""',
    *SURROGATE_ESCAPES,
]  # fmt: skip
NAMES = ["get_weather", "city", "name", "arguments", "functions.get_weather:0", "f", "x" * 300]
# the policies an input is read with (docs/policies.md): a `compat` profile, the project's own
# (None) as often as the three stacks together, and a third of the time explicit switches on
# top, each switch drawn from all of its values
COMPATS: tuple[str | None, ...] = (None, None, None, *COMPAT)
SWITCH_SHARE = 1 / 3


@dataclass
class FuzzInput:
    """One hostile output and how it is parsed; everything in it comes from `seed`."""

    family: str
    text: str
    tools: list[dict[str, Any]] | None
    options: dict[str, Any]
    finish: str
    generator: str
    seed: int
    cut: int  # where the output is also cut short, for "nothing lost"
    note: str = ""  # what a hostile template's edits were (family `hf`)
    refused: bool = False  # the hostile template was refused cleanly; its base reads the text


@dataclass
class FuzzFinding:
    """One broken invariant, shrunk to a minimal reproduction."""

    family: str
    invariant: str
    text: str
    split: list[int]
    detail: str
    seed: int
    generator: str
    finish: str
    options: dict[str, Any]
    tools: str  # which tools the parser was given: "corpus", "none", "random"
    original: int  # length of the input before shrinking
    policies: str = ""  # the switches in force, as `compat` and the options resolved them

    def __str__(self) -> str:
        return (
            f"{self.family} [{self.invariant}] {clip(self.detail, 800)}\n"
            f"  text     = {clip(repr(self.text), 800)} (shrunk from {self.original} characters)\n"
            f"  split    = {describe_split(self.text, self.split)}\n"
            f"  parse    = finish {self.finish!r}, options {self.options}, tools {self.tools}, "
            f"generator {self.generator}\n"
            f"  policies = {self.policies}\n"
            f"  replay: toolgrammar fuzz {self.family} --seed {self.seed} --inputs 1"
        )


def describe_split(text: str, split: list[int]) -> str:
    """Where the stream was cut into deltas, said briefly: whole, 1-char, or the points."""
    if not split:
        return "whole (one feed)"
    if split == list(range(1, len(text))):
        return "1-char (one feed per character)"
    return clip(str(split), 800)


@dataclass
class FuzzReport:
    """What a run tried and what it found, per family."""

    seed: int
    inputs: dict[str, int] = field(default_factory=dict)
    by_generator: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys((*GENERATORS, TEMPLATE), 0)
    )
    # inputs per policy setting: the compat profile (`ours`: None), `+switches` with explicit
    # switches on top
    by_policy: dict[str, int] = field(default_factory=dict)
    refused: int = 0  # hostile templates refused in one clear line (family `hf`)
    exceptions: int = 0
    violations: int = 0  # inputs that broke an invariant other than raising
    findings: list[FuzzFinding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.exceptions and not self.violations

    @property
    def total(self) -> int:
        return sum(self.inputs.values())

    def summary(self) -> str:
        generators = ", ".join(f"{name} {count}" for name, count in self.by_generator.items())
        lines = [
            f"fuzz: {self.total} inputs over {len(self.inputs)} families in "
            f"{self.seconds:.1f} s, seed {self.seed} ({generators})",
            "  policies: "
            + ", ".join(f"{name} {count}" for name, count in sorted(self.by_policy.items())),
            f"  exceptions {self.exceptions}, violations {self.violations}"
            + (f", templates refused {self.refused}" if self.refused else ""),
        ]
        lines.extend(str(finding) for finding in self.findings)
        return "\n".join(lines)


# --------------------------------------------------------------------------- material


@dataclass
class Material:
    """What a family's inputs are made of: its markers, pieces, corpus cases and tools."""

    family: str
    literals: list[str]
    pieces: list[str]  # soup: markers, their fragments, punctuation, names, edge characters
    cases: list[Any]  # corpus cases (tests/support/corpus_format.Case), possibly none
    tools: list[dict[str, Any]] | None  # the corpus tools, or None outside the source tree


@lru_cache(maxsize=None)
def material(family: str) -> Material:
    """The family's markers and corpus, read once per process."""
    spec = with_params(get_spec(family))
    literals = sorted(markup_literals(spec))
    fragments = {lit[:k] for lit in literals for k in range(1, len(lit))}
    fragments |= {lit[k:] for lit in literals for k in range(1, len(lit))}
    pieces = literals * 3 + sorted(fragments) + PUNCTUATION + NAMES + UNICODE_EDGES
    corpus = _corpus_module()
    cases: list[Any] = []
    tools = None
    if corpus is not None:
        tools = corpus.TOOLS
        path = CORPUS / f"{family}.txt"
        if path.exists():
            cases = corpus.load(path)
    return Material(family, literals, pieces, cases, tools)


@lru_cache(maxsize=1)
def _corpus_module() -> Any:
    """The corpus reader of the test suite (tests/support/corpus_format.py), when the source
    tree is there: the fuzzer mutates the same cases the tests pin, read by the same code."""
    path = CORPUS.parent / "support" / "corpus_format.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("toolgrammar_corpus_format", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- generators


def soup(mat: Material, rng: random.Random) -> str:
    """The family's markers, pieces of them and JSON punctuation in random order."""
    out = []
    for _ in range(rng.randint(1, 60)):
        if rng.random() < 0.7:
            out.append(rng.choice(mat.pieces))
        else:
            out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8))))
    return "".join(out)


def boundaries(text: str, literals: list[str]) -> list[int]:
    """Where a marker starts or ends in `text`: mutations cut there to split, join and
    stutter markers rather than only the text between them."""
    points = set()
    for lit in literals:
        at = text.find(lit)
        while at >= 0 and len(points) < 200:
            points.update((at, at + len(lit)))
            at = text.find(lit, at + 1)
    return sorted(points)


def _point(text: str, marks: list[int], rng: random.Random) -> int:
    """A position in `text`, on a marker boundary half the time."""
    if marks and rng.random() < 0.5:
        return rng.choice(marks)
    return rng.randint(0, len(text))


def mutate(text: str, mat: Material, rng: random.Random) -> str:
    """One to four edits: insert, delete, double, swap, cut off, stutter a marker,
    stretch a word past the name cap, rewrite line endings or insert an edge character."""
    for _ in range(rng.randint(1, 4)):
        marks = boundaries(text, mat.literals)
        a, b = sorted((_point(text, marks, rng), _point(text, marks, rng)))
        kind = rng.randrange(9)
        if kind == 0:
            text = text[:a] + text[b:]
        elif kind == 1:
            text = text[:b] + text[a:b] + text[b:]
        elif kind == 2:
            text = text[a:b] + text[:a] + text[b:]
        elif kind == 3:
            text = text[:b]
        elif kind == 4:
            text = text[:a] + rng.choice(mat.pieces) + text[a:]
        elif kind == 5:
            text = _stutter(text, mat.literals, rng)
        elif kind == 6:
            text = _stretch(text, rng)
        elif kind == 7:
            text = _line_endings(text, rng)
        else:
            text = text[:a] + rng.choice(UNICODE_EDGES) + text[a:]
    return text


def _stutter(text: str, literals: list[str], rng: random.Random) -> str:
    """A marker written twice or more (`[TOOL_CALLS][TOOL_CALLS]get_weather`)."""
    present = [lit for lit in literals if lit in text]
    if not present:
        return text
    lit = rng.choice(present)
    return text.replace(lit, lit * rng.randint(2, 4), 1)


def _stretch(text: str, rng: random.Random) -> str:
    """A word (a name, a key) made 255 to 257 characters or far longer: the name cap's edge."""
    words = [
        i for i in range(len(text)) if text[i].isalpha() and (i == 0 or not text[i - 1].isalnum())
    ]
    if not words:
        return text
    at = rng.choice(words)
    return text[:at] + text[at] * rng.choice([254, 255, 256, 257, 600]) + text[at:]


NEWLINES = ["\r\n", "\r", "\n", "\r\r\n", "\n\r", "\r\n\r\n", " \r\n"]


def crlf_closers(text: str, literals: list[str], rng: random.Random) -> str:
    """Line ends around markers, CRLF, a lone CR or mixed: before a closer (`c\r\n</parameter>`),
    after it, or the closer drifted to a line end (its last character dropped, or its own
    `\n` written `\r\n` or `\r`: `</parameter\r\n`); CRLF everywhere a third of the time."""
    for _ in range(rng.randint(1, 4)):
        found = [(text.find(lit), lit) for lit in literals if lit in text]
        if not found:
            break
        at, lit = rng.choice(found)
        newline = rng.choice(NEWLINES)
        kind = rng.randrange(3)
        if kind == 0:
            text = text[:at] + newline + text[at:]
        elif kind == 1:
            text = text[: at + len(lit)] + newline + text[at + len(lit) :]
        else:
            drifted = lit.replace("\n", newline) if "\n" in lit else lit[:-1] + newline
            text = text[:at] + drifted + text[at + len(lit) :]
    if rng.random() < 0.3:
        text = _line_endings(text, rng)
    return text


def _line_endings(text: str, rng: random.Random) -> str:
    """CRLF everywhere, a lone CR, or CRs doubled: Windows and broken tokenizers."""
    choice = rng.randrange(3)
    if choice == 0:
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    if choice == 1:
        return text.replace("\n", "\r", 1)
    return text.replace("\n", "\r\r\n")


def byte_noise(text: str, rng: random.Random) -> str:
    """Bytes flipped, inserted or dropped in the UTF-8 of `text`, read back with
    replacement characters; or random bytes read as Latin-1 (every control character)."""
    if not text or rng.random() < 0.2:
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(1, 120)))
        return raw.decode("latin-1") if rng.random() < 0.5 else raw.decode("utf-8", "replace")
    data = bytearray(text.encode("utf-8"))
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(data) + 1)
        kind = rng.randrange(3)
        if kind == 0 and at < len(data):
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[at:at] = bytes([rng.randrange(256)])
        elif at < len(data):
            del data[at]
    return data.decode("utf-8", "replace")


def unicode_edges(text: str, rng: random.Random) -> str:
    """Edge characters put at random places, line endings rewritten half the time."""
    if rng.random() < 0.5:
        text = _line_endings(text, rng)
    for _ in range(rng.randint(1, 5)):
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice(UNICODE_EDGES) + text[at:]
    return text


# where a name, a key or a value begins in most markups: after a quote, `=`, `>`, `:`, `(`
_STARTS = "\"'=>:(,{"
_WORD = re.compile(r"[A-Za-z_][\w.\-]*")


def _starts(text: str) -> list[int]:
    return [i + 1 for i, ch in enumerate(text) if ch in _STARTS]


def surrogates(text: str, rng: random.Random) -> str:
    """Lone surrogate escapes (and pairs, reversed pairs) written where names, keys and
    values begin, or anywhere: decoded, they must still leave as UTF-8 (the checker
    streams 1-char or in random chunks, so a pair is split across deltas too)."""
    for _ in range(rng.randint(1, 4)):
        starts = _starts(text)
        at = rng.choice(starts) if starts and rng.random() < 0.8 else rng.randint(0, len(text))
        text = text[:at] + rng.choice(SURROGATE_ESCAPES) + text[at:]
    return text


def space_keys(text: str, rng: random.Random) -> str:
    """A word (a key, a name) replaced by Unicode whitespace, or with it at its edges:
    a key written as U+2028 is that key, not the empty one."""
    for _ in range(rng.randint(1, 3)):
        words = [found.span() for found in _WORD.finditer(text)]
        if not words:
            break
        a, b = rng.choice(words)
        space = rng.choice(UNICODE_SPACES)
        kind = rng.randrange(3)
        if kind == 0:
            text = text[:a] + space + text[b:]
        elif kind == 1:
            text = text[:a] + space + text[a:b] + space + text[b:]
        else:
            text = text[:a] + space + text[a:]
    return text


def _base(mat: Material, rng: random.Random) -> tuple[str, Any, dict[str, Any], str]:
    """A well-formed output to start from: a corpus case or a rendered sample, with its
    tools ("corpus" or random ones), options and finish reason."""
    if mat.cases and rng.random() < 0.6:
        case = rng.choice(mat.cases)
        return case.text, case.tools, dict(case.options), case.finish
    tools = random_tools(rng)
    for _ in range(4):
        sample = make_sample(with_params(get_spec(mat.family)), tools, rng.randrange(2**32))
        if sample is not None:
            return sample.text, tools, dict(sample.options), "stop"
    return soup(mat, rng), tools, {}, "stop"


def make_input(family: str, seed: int) -> FuzzInput:
    """Input number `seed` of the family: everything about it comes from the seed."""
    if family == HF:
        return template_input(seed)
    mat = material(family)
    rng = random.Random(f"{family}:{seed}")
    generator = rng.choice(GENERATORS)
    text, tools, options, finish = _base(mat, rng)
    if generator == "soup":
        text, options = soup(mat, rng), {}
        tools = rng.choice([mat.tools, None, random_tools(rng)])
    elif generator in ("corpus", "rendered"):
        if generator == "rendered" or not mat.cases:
            tools = random_tools(rng)
            sample = make_sample(with_params(get_spec(family)), tools, rng.randrange(2**32))
            text, options = (sample.text, dict(sample.options)) if sample else (text, options)
        if rng.random() < 0.9:
            text = mutate(text, mat, rng)
    elif generator == "noise":
        text = byte_noise(text, rng)
    elif generator == "crlf":
        text = crlf_closers(text, mat.literals, rng)
    elif generator == "surrogates":
        text = surrogates(text, rng)
    elif generator == "space_keys":
        text = space_keys(text, rng)
    else:
        text = unicode_edges(text, rng)
    if tools is not None and tools is not mat.tools and rng.random() < 0.03:
        tools = many_tools(rng, tools)  # a whole catalogue, the sample's tools among it
    if not options and rng.random() < 0.3:
        options = {"reasoning_open": rng.random() < 0.5}
    if rng.random() < 0.25:
        finish = "length" if finish != "length" else "stop"
    if len(text) > MAX_LENGTH:
        start = rng.randrange(len(text) - MAX_LENGTH)
        text = text[start : start + MAX_LENGTH]
    return FuzzInput(
        family,
        text,
        tools,
        with_policies(options, family, seed),
        finish,
        generator,
        seed,
        rng.randint(0, len(text)),
    )


def with_policies(options: dict[str, Any], family: str, seed: int) -> dict[str, Any]:
    """`options` with the policies input `seed` is read with: a `compat` value (None, the
    project's own, or a stack's profile) and, a third of the time, explicit switches, each
    of any of its values. Drawn from a stream of their own, so that the text of an input
    is the same with or without them; a corpus case's own policies stay as it sets them."""
    rng = random.Random(f"{family}:{seed}:policies")
    options = dict(options)
    compat = rng.choice(COMPATS)
    if "compat" not in options and compat is not None:
        options["compat"] = compat
    if rng.random() < SWITCH_SHARE:
        for name, values in SWITCHES.items():
            if name not in options and rng.random() < 0.5:
                options[name] = rng.choice(values)
    return options


def policy_key(options: dict[str, Any]) -> str:
    """How a report counts an input's policies: its compat profile (`ours`: None), with
    `+switches` when it sets any switch explicitly."""
    key = str(options.get("compat") or "ours")
    return key + ("+switches" if any(name in options for name in SWITCHES) else "")


def resolved(family: str, options: dict[str, Any]) -> str:
    """The switches in force for `options` (its compat profile for the family, explicit
    switches over it), those away from the project's default: what a finding was read with."""
    from .. import StreamParser

    try:
        policies = StreamParser(family, None, **options).policies
    except Exception as error:  # (a template refused: its finding says why)
        return f"not resolved ({type(error).__name__})"
    changed = [
        f"{name}={getattr(policies, name)}"
        for name, values in SWITCHES.items()
        if getattr(policies, name) != values[0]
    ]
    return ", ".join(changed) or "the project's defaults"


def template_input(seed: int) -> FuzzInput:
    """Input number `seed` of family `hf`: a hostile template and an output for it. A
    template the compiler refuses cleanly (`clean_refusal`) is counted as refused and its
    base template reads the output; any other error stays in the input, whose parse then
    raises it as the finding."""
    from ..compiler.response_template import template_spec

    rng = random.Random(f"{HF}:{seed}")
    base, template, edits = hostile_template(rng)
    refused = False
    try:
        spec = template_spec(template)
    except Exception as error:  # the finding, unless a clean refusal
        if not clean_refusal(error):
            options = {"response_template": template}
            return FuzzInput(HF, "x", None, options, "stop", TEMPLATE, seed, 0, note=edits)
        refused, template, spec = True, base, template_spec(base)
    literals = sorted(markup_literals(spec))
    pieces = literals * 3 + PUNCTUATION + NAMES + UNICODE_EDGES
    mat = Material(HF, literals, pieces, [], None)
    tools = random_tools(rng)
    sample = make_sample(spec, tools, rng.randrange(2**32))
    text = sample.text if sample is not None else soup(mat, rng)
    kind = rng.randrange(4)
    if kind == 0:
        text = mutate(text, mat, rng)
    elif kind == 1:
        text = crlf_closers(text, literals, rng)
    elif kind == 2:
        text = soup(mat, rng)
    options: dict[str, Any] = {"response_template": template}
    if rng.random() < 0.3:
        options["reasoning_open"] = rng.random() < 0.5
    finish = rng.choice(["stop", "stop", "length"])
    text = text[:MAX_LENGTH]
    cut = rng.randint(0, len(text))
    options = with_policies(options, HF, seed)
    return FuzzInput(HF, text, tools, options, finish, TEMPLATE, seed, cut, edits, refused)


# --------------------------------------------------------------------------- checking

Checker = Callable[[FuzzInput, str, int], Violation | None]


def check_input(item: FuzzInput, text: str, cut: int) -> Violation | None:
    """The first invariant `text` breaks, by the test suite's checker: at its end, prefix,
    termination, parity (1-char or random chunks) and nothing lost; cut short at `cut`,
    nothing lost. An exception or a warning out of the parser is a violation of its own."""
    # one streaming per input, 1-char or random chunks (the seed picks), keeps a run of a
    # million inputs within an hour; the whole parse is checked against it either way
    streaming = "1-char" if item.seed % 2 else "random"
    final = None  # the whole text in one feed: read once, for both cuts
    for at, splittings in ((len(text), streaming), (cut, False)):
        if at == len(text) and not splittings:
            continue
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")  # a warning on stderr is raised text too
                if final is None:
                    final = run(item.family, [text], item.tools, item.options, item.finish)[1]
                found = check_text(
                    item.family,
                    text,
                    item.tools,
                    item.options,
                    seed=item.seed,
                    cuts=[at],
                    finish=item.finish,
                    lost=True,
                    splittings=splittings,
                    final=final,
                )
        except Exception as error:  # the finding itself: nothing may raise out of a parser
            return Violation(EXCEPTION, text[:at], [], _describe(error))
        if caught:
            return Violation(EXCEPTION, text[:at], [], f"warned: {caught[0].message}")
        if found:
            return found[0]
    # the fast paths against the slow ones (`fast_paths`): no invariant sees a shortcut
    # that decides otherwise than its state machine, both readings being well-formed
    splits = [[], coarse_points(text, random.Random(f"{item.seed}:coarse"))]
    try:
        return disagreement(item.family, text, item.tools, item.options, item.finish, splits)
    except Exception as error:  # (each reading catches its own: this is the checker's)
        return Violation(EXCEPTION, text, [], _describe(error))


def _describe(error: BaseException) -> str:
    """An exception in one line: its type, message and the innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"raised {type(error).__name__}: {error}{where}"


def _raising_split(item: FuzzInput, text: str) -> list[int]:
    """Which feeding of `text` raises: whole ([]), 1-char, or the random splitting."""
    rng = random.Random(item.seed)
    for points in ([], list(range(1, len(text))), random_points(text, rng)):
        try:
            run(item.family, split_at(text, points), item.tools, item.options, item.finish)
        except Exception:
            return points
    return []


def shrink_finding(
    item: FuzzInput, violation: Violation, checker: Checker, seconds: float
) -> FuzzFinding:
    """The violation on the smallest text that still breaks the same invariant."""

    def fails(text: str, cut: int) -> bool:
        found = checker(item, text, cut)
        return found is not None and found.invariant == violation.invariant

    # every invariant but "nothing lost" is about the prefix the violation was found on;
    # "nothing lost" compares that prefix with the whole output, so both shrink
    lost = violation.invariant == "nothing lost"
    text, cut = (item.text, len(violation.text)) if lost else (violation.text, len(violation.text))
    if not fails(text, cut):  # a checker that does not reproduce: report it as found
        text, cut = violation.text, len(violation.text)
    else:
        text, cut = shrink(fails, text, cut, time.monotonic() + seconds)
    final = checker(item, text, cut) or violation
    split = final.split
    if final.invariant == EXCEPTION:
        split = _raising_split(item, final.text)
    shown = text if lost else final.text
    tools = (
        "none"
        if item.tools is None
        else (
            "random"
            if item.family == HF
            else "corpus" if item.tools is material(item.family).tools else "random"
        )
    )
    return FuzzFinding(
        item.family,
        final.invariant,
        shown,
        split,
        final.detail
        + (f" (cut at {cut})" if lost else "")
        + (f" [{item.note}]" if item.note else ""),
        item.seed,
        item.generator,
        item.finish,
        item.options,
        tools,
        len(item.text),
        resolved(item.family, item.options),
    )


# --------------------------------------------------------------------------- running


def grammars() -> list[str]:
    """Every grammar once (aliases read the same markup)."""
    return sorted({get_spec(name).name for name in families()})


def input_seeds(seed: int) -> Iterator[int]:
    """The seeds of a run's inputs: the run's own seed first, so that a finding's seed,
    given as `--seed`, replays that input as the first of a run."""
    yield seed
    rng = random.Random(seed)
    while True:
        yield rng.randrange(2**63)


def fuzz(
    target: str | list[str],
    *,
    inputs: int | None = None,
    budget: float | None = None,
    seed: int = 0,
    checker: Checker = check_input,
    shrink_seconds: float = SHRINK_SECONDS,
    progress: Callable[[FuzzReport], None] | None = None,
    jobs: int = 1,
) -> FuzzReport:
    """Fuzz one family, a list of them or `"all"`: `inputs` in total (shared evenly between the families),
    or as many as `budget` seconds allow (shared the same way), whichever ends first; with
    neither, 1000 inputs per family.

    Families take turns one input at a time, so a budget covers every family. `jobs`
    processes split the families between them; each family draws the same inputs from its
    own stream of the seed, so the run checks what one process would (`progress` is not
    called then).
    """
    if target == "all":
        names = [*grammars(), HF]
    else:
        wanted = [target] if isinstance(target, str) else target
        names = [name if name == HF else get_spec(name).name for name in wanted]
    if inputs is None and budget is None:
        inputs = 1000 * len(names)
    if jobs > 1 and len(names) > 1:
        return _fuzz_in_processes(names, jobs, inputs, budget, seed, checker, shrink_seconds)
    report = FuzzReport(seed, dict.fromkeys(names, 0))
    seen: set[tuple[str, str]] = set()
    streams = {name: input_seeds(seed) for name in names}
    start = time.monotonic()
    deadline = None if budget is None else start + budget
    while inputs is None or report.total < inputs:
        for name in names:
            if inputs is not None and report.total >= inputs:
                break
            item = make_input(name, next(streams[name]))
            _run_one(item, checker, report, seen, shrink_seconds)
        if progress is not None:
            progress(report)
        if deadline is not None and time.monotonic() >= deadline:
            break
    report.seconds = time.monotonic() - start
    return report


def _fuzz_in_processes(
    names: list[str],
    jobs: int,
    inputs: int | None,
    budget: float | None,
    seed: int,
    checker: Checker,
    shrink_seconds: float,
) -> FuzzReport:
    """One run split between `jobs` processes: family k of the run gets the inputs it would
    get in one process (the first `inputs % len(names)` families one more), and a part's
    total is its families' sum, so its turns hand them out the same way."""
    parts = [names[k::jobs] for k in range(min(jobs, len(names)))]
    index = {name: k for k, name in enumerate(names)}

    def share(name: str) -> int:
        assert inputs is not None
        return inputs // len(names) + (index[name] < inputs % len(names))

    start = time.monotonic()
    with ProcessPoolExecutor(len(parts)) as pool:
        runs = [
            pool.submit(
                fuzz,
                part,
                inputs=None if inputs is None else sum(map(share, part)),
                budget=budget,
                seed=seed,
                checker=checker,
                shrink_seconds=shrink_seconds,
            )
            for part in parts
        ]
        reports = [run.result() for run in runs]
    merged = FuzzReport(seed, {name: 0 for name in names})
    for report in reports:
        merged.inputs.update(report.inputs)
        for generator, count in report.by_generator.items():
            merged.by_generator[generator] += count
        for key, count in report.by_policy.items():
            merged.by_policy[key] = merged.by_policy.get(key, 0) + count
        merged.exceptions += report.exceptions
        merged.violations += report.violations
        merged.refused += report.refused
        merged.findings.extend(report.findings)
    merged.seconds = time.monotonic() - start
    return merged


def _run_one(
    item: FuzzInput,
    checker: Checker,
    report: FuzzReport,
    seen: set[tuple[str, str]],
    shrink_seconds: float,
) -> None:
    """Check one input; count it; shrink the first finding of each (family, invariant)."""
    report.inputs[item.family] += 1
    report.by_generator[item.generator] += 1
    key = policy_key(item.options)
    report.by_policy[key] = report.by_policy.get(key, 0) + 1
    report.refused += item.refused
    violation = checker(item, item.text, item.cut)
    if violation is None:
        return
    if violation.invariant == EXCEPTION:
        report.exceptions += 1
    else:
        report.violations += 1
    if (item.family, violation.invariant) not in seen:
        seen.add((item.family, violation.invariant))
        report.findings.append(shrink_finding(item, violation, checker, shrink_seconds))
