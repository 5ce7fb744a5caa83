"""How often a peer's own parser reads our corpus cases as our expectations say.

Fidelity with the field is measured on model outputs written the way the peers' tests write
them. This script takes the other direction too: every corpus case of every family the peer
pairs (`peer_vllm.PAIRS`, `peer_sglang.PAIRS`, `peer_llamacpp.PAIRS`) goes through the peer's
own tool parser, whole output, with the case's tools, and its calls and content are compared
with the case's `--- expect`. Each case falls in one of three classes by its title:

- `upstream PEER test: …`  the case transcribes the peer's own test: a disagreement means the
  transcription, or our reading of it, is wrong (or the test drives the parser differently);
- `differs from PEER: …` (and the general policies, `… as for every family`): a deliberate
  difference, listed in docs/compat.md: a disagreement is expected;
- `policy`: our own case whose title names a policy every family shares (unfinished output,
  schema coercion, markers win, unknown tools: docs/compat.md); a peer may answer it otherwise;
- anything else: our own case. A disagreement there is a difference nobody wrote down, the
  list to read first when hunting fidelity bugs.

Calls agree when names and arguments (as JSON values) are equal, in order; content agrees when
both sides' content is equal with every run of whitespace read as one space and the ends
stripped (how much whitespace touching markup a parser keeps is a policy: docs/compat.md), or
byte for byte with `--exact`.

An `upstream PEER test` case is a transcription of one of the peer's tests, and what that test
asserts is the reference (issue 26: the peer's own tests must agree with us), not what the
peer's release happens to read with its whole-output parse. `bench/upstream_tests.json` says,
for the cases where the two differ, how the test reads (each entry names the test):
- `"path": "stream"`: the test streams the output, so the peer's streaming path is compared
  (the output fed token by token, the end-of-stream flush included), not its whole parse;
- `"reference": "test"`: the peer's release fails this test (the test is newer than the
  release, or pins a fix the release lacks), or passes it only as the test drives it and
  neither the bench's whole parse nor its stream can (an extra empty increment), so the
  reference is what the test asserts, which the case's expectation transcribes (`"why"`
  says what the release reads instead);
- `"asserts": ["calls"]` or `["content"]`: the test asserts only that; the other is not
  compared for the case; `["names"]`: of the calls only their names (a cut call's
  arguments the test leaves unchecked), with `"content"` added when it asserts the content;
- `"content_has": [TEXT, …]`: the test asserts of the content only that it holds these
  (`assertIn`): our content is checked for them, not compared with the release's.
`--release` ignores the file: every case against the release's whole-output parse.

With `--compat`, the expectation of each case is not the one the
corpus holds but what `toolgrammar.parse` reads with `compat=` the peer (docs/compat.md's
profile): the agreement an operator who swaps the peer's parser for ours sees. Content is
not compared when the expectation has reasoning or the output writes a reasoning opener or
starts with a closer: a peer's tool parser alone does not split reasoning off (its serving
layer's reasoning parser does, before it); a peer whose parser does split it off itself
(`Peer.reads_reasoning`: llama.cpp) has its content always compared, and its reasoning with
it. Options a peer's parser cannot take (`reasoning_open`, `block_open`, `params`, a switch, a
`compat=` other than the peer's own; `Peer.options` lists those a peer takes: llama.cpp takes
`reasoning_open`, `tools=none` and the case's `finish`, a cut output being parsed as partial)
leave the case out, as does `tools=none` for a peer that does not take it: with no tools,
neither vLLM nor SGLang runs its tool parser. Per family, the bench's tokenizer and request
are set as the model that writes an output has them (`Peer.generation_markers`,
`Peer.template_kwargs`: bench/README.md).

Run it in the peer's environment (as `vs_vllm.py` / `vs_sglang.py`):

    VLLM_PYTHON="$(bash scripts/vllm_env.sh)"
    $VLLM_PYTHON bench/agreement.py vllm [--families ...] [--markdown PATH] [--json PATH]
    SGLANG_PYTHON="$(bash scripts/sglang_env.sh)"
    $SGLANG_PYTHON bench/agreement.py sglang [...]
    bash scripts/llamacpp_env.sh && python bench/agreement.py llama.cpp [...]  # this venv
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from side_by_side import ROOT, Outcome, Peer, Tokens, chunks_of, special_tokens

import toolgrammar
from toolgrammar.runtime.policies import SWITCHES
from toolgrammar.runtime.registry import get_spec

sys.path.insert(0, str(ROOT / "tests"))
from support.corpus_format import CORPUS, Case, load  # noqa: E402  (the tests' own corpus reader)

UNSUPPORTED = ("reasoning_open", "block_open", "params", "compat", *SWITCHES)
UPSTREAM_TESTS = Path(__file__).parent / "upstream_tests.json"  # how a transcribed test reads
BUDGET_S = 20.0  # per case: a peer's regex that backtracks for ever is a disagreement
COMPAT_OF = {
    "vLLM": "vllm",
    "SGLang": "sglang",
    "llama.cpp": "llama.cpp",
}  # a peer's `compat=` profile
POLICY_TITLE = "as for every family"  # the general policies' cases (docs/compat.md)
# Words in our own cases' titles that name a policy every family shares (docs/compat.md,
# "Policies every family shares"): a peer that answers it otherwise disagrees by design.
POLICY_WORDS = {
    "unfinished output": ("truncated", "cut ", "unfinished", "length limit", "end of output"),
    "schema coercion": ("coerce", "typed", "schema"),
    "markers win": ("markers win",),
    "unknown tools": ("unknown tool",),
    "ignored markers": ("end-of-turn", "turn token", "turn end"),
}


@dataclass
class Verdict:
    case: str
    kind: str  # "upstream", "documented", "policy", "ours"
    calls: bool | None  # None: not compared (the transcribed test asserts no call)
    content: bool | None  # None: not compared (the expectation has reasoning, or the test
    why: str = ""  # asserts none)
    reference: str = "release"  # "release", "stream" (its streaming path) or "test"

    @property
    def agrees(self) -> bool:
        return self.calls is not False and self.content is not False


@dataclass
class FamilyAgreement:
    family: str
    peer_parser: str
    verdicts: list[Verdict] = field(default_factory=list)
    left_out: int = 0

    def count(self, kind: str | None = None, agreeing: bool | None = None) -> int:
        return sum(
            1
            for v in self.verdicts
            if (kind is None or v.kind == kind) and (agreeing is None or v.agrees == agreeing)
        )


def peer_of(key: str) -> Peer:
    if key == "vllm":
        from peer_vllm import PEER
    elif key == "llama.cpp":
        from peer_llamacpp import PEER
    else:
        from peer_sglang import PEER
    return PEER


def kind_of(title: str, peer: Peer) -> str:
    lowered = title.lower()
    name = peer.name.lower()
    if lowered.startswith(f"upstream {name} test"):
        return "upstream"
    if f"differs from {name}" in lowered or POLICY_TITLE in lowered:
        return "documented"
    if any(word in lowered for words in POLICY_WORDS.values() for word in words):
        return "policy"
    return "ours"


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def compare_calls(
    got: list[tuple[str, str]], want: list[list[str]], cut: bool = False, names: bool = False
) -> str:
    """'' when the peer's calls are the expected ones, else a short reason. `cut`: the output
    was cut and the peer sends a cut call's arguments as read so far (llama.cpp's partial
    JSON), which are compared only when they are whole JSON (as llama.cpp's own tests do)."""
    if len(got) != len(want):
        return f"{len(got)} calls, expected {len(want)}"
    for n, ((name, args), (want_name, want_args)) in enumerate(zip(got, want)):
        if name != want_name:
            return f"call {n}: name {name!r}, expected {want_name!r}"
        if names or (cut and isinstance(_json_or_text(args), str)):
            continue
        if _json_or_text(args) != _json_or_text(want_args):
            return f"call {n}: arguments {args[:80]!r}, expected {want_args[:80]!r}"
    return ""


def ours_with_compat(case: Case, compat: str) -> dict[str, Any]:
    """What we read for the case with the peer's profile, in the corpus's expectation shape."""
    # the case's own options but its policies (a peer that takes `reasoning_open` gets it too)
    options = {k: v for k, v in case.options.items() if k != "compat" and k not in SWITCHES}
    message = toolgrammar.parse(
        case.family, case.text, case.tools, case.finish, ids="sequential", compat=compat, **options
    )
    return {
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [[c.function.name, c.function.arguments] for c in message.tool_calls],
    }


def holds_reasoning_marker(family: str, text: str) -> bool:
    """Whether the output writes a reasoning opener of the family, or starts with a closer
    (an empty block the prompt opened): the serving layer's reasoning parser takes those off
    before the tool parser, which alone the bench drives, reads the rest. (A closer after
    text is reasoning the expectation holds; a closer some grammars share with other blocks,
    Inkling's `<|end_message|>`, is not counted elsewhere.)"""
    start = text.lstrip()
    return any(
        any(marker in text for marker in reasoning.opens)
        or any(start.startswith(marker) for marker in reasoning.closes)
        for reasoning in get_spec(family).reasoning
    )


def judge(
    case: Case,
    outcome: Outcome,
    kind: str,
    expect: dict[str, Any] | None = None,
    exact: bool = False,
    cut: bool = False,
    asserts: tuple[str, ...] = ("calls", "content"),
) -> Verdict:
    expect = case.expect if expect is None else expect
    if outcome.error:
        return Verdict(case.name, kind, False, False, f"raised {outcome.error[:100]}")
    compared = "calls" in asserts or "names" in asserts
    why = (
        compare_calls(outcome.calls, expect["tool_calls"], cut, "names" in asserts)
        if compared
        else ""
    )
    calls: bool | None = not why if compared else None
    content: bool | None = None
    if "content" in asserts and (
        outcome.reasoning is not None
        or (not expect.get("reasoning") and not holds_reasoning_marker(case.family, case.text))
    ):
        content = same_text(outcome.content, expect["content"], exact)
        if not content and not why:
            why = f"content {outcome.content[:80]!r}, expected {(expect['content'] or '')[:80]!r}"
        # a peer that splits reasoning off itself: its reasoning is compared with the content
        if outcome.reasoning is not None and not same_text(
            outcome.reasoning, expect.get("reasoning"), exact
        ):
            content = False
            why = why or (
                f"reasoning {outcome.reasoning[:80]!r}, "
                f"expected {(expect.get('reasoning') or '')[:80]!r}"
            )
    return Verdict(case.name, kind, calls, content, why)


def same_text(got: str | None, want: str | None, exact: bool) -> bool:
    """Byte for byte with `exact`, else every run of whitespace read as one space, ends
    stripped."""
    if exact:
        return (got or "") == (want or "")
    return " ".join((got or "").split()) == " ".join((want or "").split())


def upstream_tests(peer: Peer) -> dict[str, dict[str, dict[str, Any]]]:
    """family -> case title -> how the peer's test the case transcribes reads
    (`bench/upstream_tests.json`, the module docstring says each key)."""
    table = json.loads(UPSTREAM_TESTS.read_text(encoding="utf-8")).get(peer.name, {})
    for family, entries in table.items():
        for title, entry in entries.items():
            unknown = set(entry) - {"path", "reference", "asserts", "content_has", "test", "why"}
            if (
                unknown
                or not entry.get("test")
                or not title.lower().startswith(f"upstream {peer.name.lower()} test")
            ):
                raise SystemExit(
                    f"{UPSTREAM_TESTS.name}: {family}: {title!r}: an entry names its test "
                    f"and an upstream case (unknown keys: {sorted(unknown)})"
                )
            if entry.get("reference") == "test" and not entry.get("why"):
                raise SystemExit(f"{UPSTREAM_TESTS.name}: {family}: {title!r}: say why")
    return table


def streamed(side: Any, family: str, text: str, finish: str) -> Outcome:
    """The peer's streaming path over `text` fed token by token (the family's special tokens
    whole), flushed at the end as its serving layer does."""
    tokens = Tokens(special_tokens(family), [text]).tokens(text)
    return side.run(chunks_of(tokens, 1), finish)[0]


def corpus_of(family: str) -> Path:
    """The corpus file of a registered name: its grammar's (an alias has none of its own)."""
    return CORPUS / f"{get_spec(family).name}.txt"


class Worker:
    """The peer's parses in a forked child, so that one past its budget can be killed (a
    regex stuck in C does not see signals) and the rest of the cases go on in a new child."""

    def __init__(self, parse: Any) -> None:
        self.parse = parse
        self.child: Any = None
        self.pipe: Any = None

    def _serve(self, pipe: Any) -> None:
        while True:
            key, text, path, finish = pipe.recv()
            outcome = self.parse(key, text, path, finish)
            pipe.send((outcome.content, outcome.calls, outcome.error, outcome.reasoning))

    def ask(self, key: str, text: str, path: str = "whole", finish: str = "stop") -> Outcome:
        if self.child is None:
            ours, theirs = multiprocessing.Pipe()
            self.child = multiprocessing.get_context("fork").Process(
                target=self._serve, args=(theirs,), daemon=True
            )
            self.child.start()
            self.pipe = ours
        try:
            self.pipe.send((key, text, path, finish))
            if not self.pipe.poll(BUDGET_S):
                self.close()
                return Outcome("", [], f"past the {BUDGET_S:.0f} s budget")
            content, calls, error, reasoning = self.pipe.recv()
        except (EOFError, OSError) as died:  # the peer took its process down
            self.close()
            return Outcome("", [], f"the peer's process died ({type(died).__name__})")
        return Outcome(content, calls, error, reasoning)

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.join()
            self.child = None


def run_family(
    peer: Peer,
    modules: Any,
    family: str,
    compat: bool = False,
    exact: bool = False,
    tests: dict[str, dict[str, Any]] | None = None,
) -> FamilyAgreement:
    """`tests`: how the peer's tests transcribed in the family's cases read (by title)."""
    tests = tests or {}
    cases = load(corpus_of(family))
    missing = set(tests) - {c.name for c in cases}
    if missing:
        raise SystemExit(f"{UPSTREAM_TESTS.name}: {family}: no case titled {sorted(missing)}")
    result = FamilyAgreement(family, peer.pairs[family])
    # a case read with the peer's own profile (`compat=sglang` for SGLang) is the peer's answer
    own = COMPAT_OF[peer.name]
    unsupported = [k for k in UNSUPPORTED if k != "compat" and k not in peer.options]
    usable = [
        c
        for c in cases
        if (c.tools is not None or "tools=none" in peer.options)
        and not any(k in c.options for k in unsupported)
        and c.options.get("compat", own) == own
    ]
    result.left_out = len(cases) - len(usable)
    texts = [c.text for c in usable]
    sides: dict[str, Any] = {}

    def parse(key: str, text: str, path: str, finish: str) -> Outcome:
        if key not in sides:
            request, options = json.loads(key)
            sides[key] = peer.side_for(modules, family, request, texts, **options)
        if path == "stream":
            return streamed(sides[key], family, text, finish)
        return sides[key].parse(text)

    def options_of(case: Case) -> dict[str, Any]:
        """The case's options the peer takes (`Peer.options`)."""
        taken = {k: v for k, v in case.options.items() if k in peer.options}
        if case.finish != "stop" and "finish" in peer.options:
            taken["finish"] = case.finish
        return taken

    worker = Worker(parse)
    try:
        for case in usable:
            test = tests.get(case.name, {})
            expect = ours_with_compat(case, COMPAT_OF[peer.name]) if compat else None
            if test.get("reference") == "test":
                # the test asserts what the case's expectation transcribes
                want = case.expect
                outcome = Outcome(
                    want["content"] or "", [(n, a) for n, a in want["tool_calls"]], None
                )
                reference = "test"
            else:
                path = test.get("path", "whole")
                key = json.dumps(
                    [peer.request_key(family, case.text, case.tools), options_of(case)]
                )
                outcome = worker.ask(key, case.text, path, case.finish)
                reference = "stream" if path == "stream" else "release"
            asserts = tuple(test.get("asserts", ("calls", "content")))
            cut = case.finish == "length" and "finish" in peer.options
            verdict = judge(
                case, outcome, kind_of(case.name, peer), expect, exact, cut=cut, asserts=asserts
            )
            verdict.reference = reference
            if "content_has" in test:
                ours = (expect or case.expect)["content"] or ""
                verdict.content = all(piece in ours for piece in test["content_has"])
                if verdict.content and verdict.why.startswith("content"):
                    verdict.why = ""
            result.verdicts.append(verdict)
    finally:
        worker.close()
    return result


def markdown(peer: Peer, results: list[FamilyAgreement]) -> str:
    def rate(r: FamilyAgreement, kind: str | None) -> str:
        total = r.count(kind)
        return f"{r.count(kind, True)}/{total}" if total else "–"

    lines = [
        f"## {peer.title}",
        "",
        "| family | peer parser | all | upstream | documented | policy | ours | left out |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.family} | {r.peer_parser} | {rate(r, None)} | {rate(r, 'upstream')} | "
            f"{rate(r, 'documented')} | {rate(r, 'policy')} | {rate(r, 'ours')} | {r.left_out} |"
        )

    def total(kind: str | None) -> str:
        return f"{sum(r.count(kind, True) for r in results)}/{sum(r.count(kind) for r in results)}"

    lines += [
        f"| **all** | | **{total(None)}** | {total('upstream')} | {total('documented')} | "
        f"{total('policy')} | {total('ours')} | {sum(r.left_out for r in results)} |",
        "",
        upstream_summary(results),
        "",
        "Disagreements outside the documented differences:",
        "",
    ]
    for r in results:
        for v in r.verdicts:
            if not v.agrees and v.kind in ("upstream", "ours"):
                read = f" (against {v.reference})" if v.kind == "upstream" else ""
                lines.append(f"- {r.family} · {v.kind}{read} · {v.case}: {v.why}")
    return "\n".join(lines) + "\n"


def upstream_summary(results: list[FamilyAgreement]) -> str:
    """The issue's measure: the transcribed tests, calls and content apart."""
    verdicts = [v for r in results for v in r.verdicts if v.kind == "upstream"]

    def share(field: str) -> str:
        compared = [getattr(v, field) for v in verdicts if getattr(v, field) is not None]
        agreeing = sum(compared)
        rate = f" ({100 * agreeing / len(compared):.1f}%)" if compared else ""
        return f"{agreeing}/{len(compared)}{rate}"

    by = {r: sum(v.reference == r for v in verdicts) for r in ("release", "stream", "test")}
    return (
        f"Upstream test cases: calls {share('calls')}, content {share('content')}; read "
        f"against the release's whole parse {by['release']}, its streaming path "
        f"{by['stream']}, the test's assertion (the release fails the test) {by['test']}."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=("vllm", "sglang", "llama.cpp"))
    parser.add_argument("--families", nargs="+")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--compat", action="store_true", help="expect what we read with the peer's compat profile"
    )
    parser.add_argument("--exact", action="store_true", help="compare content byte for byte")
    parser.add_argument(
        "--release",
        action="store_true",
        help=f"ignore {UPSTREAM_TESTS.name}: every case against the release's whole parse",
    )
    args = parser.parse_args(argv)
    peer = peer_of(args.peer)
    tests = {} if args.release else upstream_tests(peer)
    modules = peer.load()
    families = args.families or sorted(peer.pairs)
    unknown = [f for f in families if f not in peer.pairs]
    if unknown:
        parser.error(f"{peer.name} has no parser paired with {', '.join(unknown)}")
    results = []
    for family in families:
        result = run_family(peer, modules, family, args.compat, args.exact, tests.get(family))
        results.append(result)
        print(
            f"{family:18} {result.count(None, True):4}/{result.count():<4} "
            f"upstream {result.count('upstream', True)}/{result.count('upstream')}  "
            f"policy {result.count('policy', True)}/{result.count('policy')}  "
            f"ours {result.count('ours', True)}/{result.count('ours')}",
            flush=True,
        )
    text = markdown(peer, results)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1), encoding="utf-8")
    print(text.split("Disagreements")[0].splitlines()[-4])
    print(upstream_summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
