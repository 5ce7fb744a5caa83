"""Write docs/compat.md, where each family differs from vLLM, SGLang and llama.cpp.

    python scripts/compat_doc.py           # rewrite docs/compat.md
    python scripts/compat_doc.py --check   # exit 1 when the doc is stale or a difference is unpinned

The per-family part comes from two sources, so it cannot be hand-copied out of date:

- each grammar's leading comment, whose `Differs from PEER:` blocks list the deliberate
  differences, one `- ` bullet each, every bullet ending with `(case: …)` (the format is in
  grammars/README.md, "Differences from the peers");
- the family's golden corpus, whose case titles `differs from PEER: …` show them.

A bullet's `(case: PHRASE; PHRASE)` names the corpus cases that pin it: each phrase must occur
(any case) in the title of a case of the family's own corpus. Every case titled `differs from
PEER` must in turn be named by a bullet of that peer's block, in the family's grammar or in a
grammar its block says it shares (`Differs from vLLM: those of qwen3_coder`). `--check` and
`tests/test_compat_doc.py` report every break of these rules and a stale doc.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRAMMARS = ROOT / "grammars"
CORPUS = ROOT / "tests" / "corpus"
OUT = ROOT / "docs" / "compat.md"
PEERS = ("vLLM", "SGLang", "llama.cpp")
_PEER = r"(?:vLLM|SGLang|llama\.cpp)"
HEADER = re.compile(rf"^Differs from ({_PEER}):\s*(.*)$")
SHARED = re.compile(r"^those of ([\w-]+(?:(?:, | and )[\w-]+)*)(?:, and:?|\.)?$")
CASES = re.compile(r"\((cases?): ([^()]+)\)$")
LEGACY = re.compile(r"(?i)(deliberate differences from|^differs from (?!" + _PEER + r":))")
TITLE = re.compile(rf"^differs from ({_PEER}(?:(?:, | and ){_PEER})*)\b")
FORMAT_HELP = "grammars/README.md, section 'Differences from the peers'"


@dataclass
class Bullet:
    """One listed difference: its prose and the phrases naming the corpus cases that pin it."""

    text: str
    phrases: list[str]
    line: int


@dataclass
class Block:
    """A grammar's `Differs from PEER:` block: its bullets and the families it shares."""

    peer: str
    shared: list[str] = field(default_factory=list)
    bullets: list[Bullet] = field(default_factory=list)


@dataclass
class Grammar:
    """What the checker needs from one grammar file's leading comment."""

    family: str
    blocks: dict[str, Block]
    problems: list[str]


@dataclass
class CorpusCase:
    """A golden corpus case, by title; `peers` is set when the title is `differs from PEER`."""

    title: str
    line: int
    peers: list[str]


def comment_lines(family: str) -> list[str]:
    """The grammar's leading comment, `# ` removed; the same text families_doc.py reads."""
    lines: list[str] = []
    for line in (GRAMMARS / f"{family}.tg").read_text(encoding="utf-8").split("\n"):
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return lines


def _finish_bullet(family: str, text: str, line: int, problems: list[str]) -> Bullet:
    """A bullet's prose with its `(case: …)` taken off; no such suffix is a problem."""
    found = CASES.search(text)
    if not found:
        problems.append(
            f"grammars/{family}.tg:{line}: the difference {text[:60]!r}… names no pinning corpus"
            f" case: end it with (case: WORDS OF A CASE TITLE) ({FORMAT_HELP})"
        )
        return Bullet(text, [], line)
    phrases = [p.strip() for p in found.group(2).split(";") if p.strip()]
    return Bullet(text[: found.start()].rstrip(), phrases, line)


def parse_comment(family: str, lines: list[str]) -> Grammar:
    """Read the `Differs from PEER:` blocks of a comment, reporting what breaks the format."""
    problems: list[str] = []
    blocks: dict[str, Block] = {}
    block: Block | None = None
    pending: tuple[str, int] | None = None

    def flush() -> None:
        nonlocal pending
        if pending and block is not None:
            block.bullets.append(_finish_bullet(family, pending[0], pending[1], problems))
        pending = None

    for number, line in enumerate(lines, start=1):
        header = HEADER.match(line)
        if block is not None and pending and line.startswith("  ") and line.strip():
            pending = (f"{pending[0]} {line.strip()}", pending[1])
            continue
        if block is not None and line.startswith("- "):
            flush()
            pending = (line[2:].strip(), number)
            continue
        flush()
        block = None
        if header:
            peer, rest = header.group(1), header.group(2).strip()
            if peer in blocks:
                problems.append(f"grammars/{family}.tg:{number}: a second 'Differs from {peer}:'")
            block = blocks.setdefault(peer, Block(peer))
            shared = SHARED.match(rest)
            if shared:
                block.shared += re.split(r", | and ", shared.group(1))
            elif rest:
                problems.append(
                    f"grammars/{family}.tg:{number}: after 'Differs from {peer}:' only"
                    f" 'those of FAMILY' may follow on the line, found {rest!r} ({FORMAT_HELP})"
                )
        elif LEGACY.search(line):
            problems.append(
                f"grammars/{family}.tg:{number}: {line.strip()[:60]!r} is prose: list the"
                f" differences as a 'Differs from PEER:' block of '- ' bullets ({FORMAT_HELP})"
            )
    flush()
    for peer, found in blocks.items():
        if not found.bullets and not found.shared:
            problems.append(f"grammars/{family}.tg: 'Differs from {peer}:' lists nothing")
    return Grammar(family, blocks, problems)


def corpus_cases(family: str) -> list[CorpusCase]:
    """The titles of a family's corpus cases, with the peers a `differs from` title names."""
    path = CORPUS / f"{family}.txt"
    if not path.is_file():
        return []
    cases: list[CorpusCase] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.startswith("=== "):
            title = line[4:].strip()
            named = TITLE.match(title)
            peers = re.split(r", | and ", named.group(1)) if named else []
            cases.append(CorpusCase(title, number, peers))
    return cases


def families() -> list[str]:
    return sorted(path.stem for path in GRAMMARS.glob("*.tg"))


def pinned_by(bullet: Bullet, cases: list[CorpusCase]) -> list[CorpusCase]:
    """The cases whose titles contain one of the bullet's phrases."""
    return [c for c in cases if any(p.lower() in c.title.lower() for p in bullet.phrases)]


def covering_bullets(grammars: dict[str, Grammar], family: str, peer: str) -> list[Bullet]:
    """A family's bullets for a peer and those of every family its block shares, transitively."""
    seen: set[str] = set()
    todo = [family]
    bullets: list[Bullet] = []
    while todo:
        name = todo.pop()
        if name in seen or name not in grammars:
            continue
        seen.add(name)
        block = grammars[name].blocks.get(peer)
        if block:
            bullets += block.bullets
            todo += block.shared
    return bullets


def sharers(grammars: dict[str, Grammar], family: str, peer: str) -> list[str]:
    """The family and every family whose block for the peer says `those of` it, transitively."""
    found = [family]
    for name in found:
        for other, grammar in grammars.items():
            block = grammar.blocks.get(peer)
            if block and name in block.shared and other not in found:
                found.append(other)
    return found


def pinning_cases(
    grammars: dict[str, Grammar], corpora: dict[str, list[CorpusCase]], family: str, peer: str
) -> list[tuple[str, CorpusCase]]:
    """The cases that may pin a family's difference: its own, and those of families sharing it.

    A difference listed once (qwen3_coder's) may be shown by the corpus of a family that
    inherits it (mimo's), so the case need not be copied into every corpus.
    """
    return [(f, c) for f in sharers(grammars, family, peer) for c in corpora.get(f, [])]


def check(grammars: dict[str, Grammar], corpora: dict[str, list[CorpusCase]]) -> list[str]:
    """Every rule of the module docstring that the grammars and the corpus break."""
    problems: list[str] = []
    for family, grammar in grammars.items():
        problems += grammar.problems
        cases = corpora.get(family, [])
        for block in grammar.blocks.values():
            for name in block.shared:
                if name not in grammars:
                    problems.append(f"grammars/{family}.tg: 'those of {name}': no such grammar")
                elif block.peer not in grammars[name].blocks:
                    problems.append(
                        f"grammars/{family}.tg: 'those of {name}', but grammars/{name}.tg has no"
                        f" 'Differs from {block.peer}:' block"
                    )
            pinning = pinning_cases(grammars, corpora, family, block.peer)
            for bullet in block.bullets:
                for phrase in bullet.phrases:
                    if not any(phrase.lower() in c.title.lower() for _, c in pinning):
                        problems.append(
                            f"grammars/{family}.tg:{bullet.line}: (case: {phrase}) matches no case"
                            f" title in tests/corpus/{family}.txt (nor in a family sharing its"
                            f" differences): name a case that pins the difference, or add one"
                        )
        for case in cases:
            if case.title.lower().startswith("differs from") and not case.peers:
                problems.append(
                    f"tests/corpus/{family}.txt:{case.line}: {case.title!r} names no known peer"
                    f" ({', '.join(PEERS)})"
                )
            for peer in case.peers:
                if not pinned_by_any(covering_bullets(grammars, family, peer), case):
                    problems.append(
                        f"tests/corpus/{family}.txt:{case.line}: {case.title!r} is listed by no"
                        f" bullet of 'Differs from {peer}:' in grammars/{family}.tg: add a bullet"
                        f" ending (case: WORDS OF THIS TITLE), or add the words to an existing"
                        f" bullet's (case: …), or retitle the case"
                    )
    return problems


def pinned_by_any(bullets: list[Bullet], case: CorpusCase) -> bool:
    return any(p.lower() in case.title.lower() for b in bullets for p in b.phrases)


def load() -> tuple[dict[str, Grammar], dict[str, list[CorpusCase]]]:
    names = families()
    grammars = {f: parse_comment(f, comment_lines(f)) for f in names}
    return grammars, {f: corpus_cases(f) for f in names}


GENERAL = [
    (
        "Whitespace",
        "whitespace",
        'Every character outside markup is content (`whitespace="verbatim"`), but for a gap of'
        ' only whitespace between markup; `whitespace="trim"` drops the whitespace touching'
        " markup and at the ends of content. The peers differ per stack and per parser (vLLM's"
        " and llama.cpp's keep content as written, vLLM's engine parsers and SGLang strip it"
        " when there are calls): `compat=` reads as the stack does (the table below). A case"
        " whose only difference is whitespace is not titled `differs from`.",
    ),
    (
        "Text after the calls",
        "text-around-the-calls",
        "Text after the last call is content, in both paths. Several peer parsers drop it or"
        " keep it in one path only: SGLang's whole-output parse in its `deepseekv3`,"
        " `deepseekv31`, `hermes`, `qwen25`, `qwen3_coder` (also `step3p5`, `nanbeige`),"
        " `interns1`, `kimi_k2`, `kimi_k3`, `dots`, `lfm2` and `hunyuan` detectors keeps only"
        " the text before the first call, and so do most of vLLM's parsers"
        ' (`model_output[:start]`): `text_after_calls="drop"` reads so, and'
        ' `compat="vllm"` sets it (the table below). The families where a case shows a'
        " peer dropping it are listed below (what the project's own answer does).",
    ),
    (
        "Ignored markers",
        "text-around-the-calls",
        "A family's turn and role tokens are markup wherever they appear outside a call, and"
        " text after them is still content (a peer that stops reading at such a token drops"
        " it).",
    ),
    (
        "Markers win",
        "malformed-calls",
        "A marker that ends the arguments ends them even inside an unterminated value or JSON"
        " string; a peer that reads such a value to its own closer reads it differently.",
    ),
    (
        "Unfinished output",
        "unfinished-output",
        "A call cut by the end of output is kept with its arguments closed so that they"
        " `json.loads`; several peers drop it, or stream arguments that never close.",
    ),
    (
        "Unknown tools",
        "unknown-tools",
        'A call to a tool not in the request is kept by default (`unknown_tools="drop"` drops'
        " it). SGLang's shared JSON step drops them unless `SGLANG_FORWARD_UNKNOWN_TOOLS` is"
        " set, and several vLLM parsers drop them too; the families where a case shows it are"
        " listed below.",
    ),
    (
        "Finish reasons",
        "finish-reasons",
        "`stop` with a call becomes `tool_calls`; `length` stays `length`; what the end of the"
        " output held back depends on the reason. The peers' tool parsers do not see the"
        " reason; their serving layer sets it.",
    ),
    (
        "Wrapped arguments",
        "wrapped-arguments",
        "A first `arguments`, `input` or `properties` parameter wrapping the real arguments (a key"
        " the requested tool's schema lacks) is unwrapped in every family, decided at the key."
        " Only vLLM's DSML (deepseek_v32, deepseek_v4, deepseek_v41) and MiniCPM5 parsers unwrap;"
        " the other peers keep the wrapper. Cases titled `wrapped arguments, unwrapped as for"
        " every family` pin it in one family per dialect.",
    ),
    (
        "Call ids",
        "call-ids",
        "Ids are random `chatcmpl-tool-…` unless the markup carries one (Kimi-K2's header,"
        " Mistral's `[CALL_ID]`, Cohere's `tool_call_id`); a peer's generated ids differ.",
    ),
    (
        "Schema coercion",
        "schema-coercion",
        "Values are typed from the request's tool schemas by one set of rules for every family,"
        " in both paths, without rewriting a streamed byte. Each peer parser types values its"
        " own way (or not at all, or only in one path); the differences that a case shows are"
        " listed below.",
    ),
]


def _case_refs(bullet: Bullet, pinning: list[tuple[str, CorpusCase]]) -> str:
    """The pinning cases' titles, grouped under a link to their corpus file."""
    by_family: dict[str, list[str]] = {}
    for family, case in pinning:
        if pinned_by(bullet, [case]):
            by_family.setdefault(family, []).append(f"“{case.title}”")
    return "; ".join(
        f"[{family}.txt](../tests/corpus/{family}.txt) {', '.join(titles)}"
        for family, titles in by_family.items()
    )


def _family_section(
    family: str, grammars: dict[str, Grammar], corpora: dict[str, list[CorpusCase]]
) -> list[str]:
    """One family's differences, peer by peer, each with the cases that pin it."""
    grammar = grammars[family]
    out = ["", f"## {family}", ""]
    if not grammar.blocks:
        return out + ["No deliberate difference listed."]
    for peer in PEERS:
        block = grammar.blocks.get(peer)
        if block is None:
            continue
        out.append(f"Differs from {peer}:")
        out.append("")
        for name in block.shared:
            out.append(f"- Every difference of [{name}](#{name.replace('.', '')}) from {peer}.")
        pinning = pinning_cases(grammars, corpora, family, peer)
        for bullet in block.bullets:
            out.append(f"- {bullet.text} Pinned by {_case_refs(bullet, pinning)}.")
        out.append("")
    return out[:-1]


def profile_table() -> list[str]:
    """What `compat=` sets for each stack, from `runtime/policies.py`."""
    from toolgrammar.runtime.policies import PROFILES, table

    rows = table()
    stacks = ["ours", *PROFILES]
    out = [
        "## What each compat profile sets",
        "",
        '`compat="vllm"`, `"sglang"` or `"llama.cpp"` on `parse` and `StreamParser` reads an'
        " output as that stack does; the vLLM and SGLang adapters read with their stack's"
        " profile ([policies.md](policies.md#switches-and-the-stack-a-user-comes-from)). A switch"
        " given explicitly wins. Per family where the stack differs per family:",
        "",
        "| switch | values | "
        + " | ".join(f"`{s}`" if s != "ours" else "ours" for s in stacks)
        + " |",
        "|---" * (len(stacks) + 2) + "|",
    ]
    for name, values, per_stack in rows:
        out.append(f"| `{name}` | {values} | " + " | ".join(per_stack[s] for s in stacks) + " |")
    out += ["", "Why each stack answers so:", ""]
    for stack, profile in PROFILES.items():
        for name, why in profile.why.items():
            out.append(f"- `{stack}`, `{name}`: {why}.")
    return out


def document(grammars: dict[str, Grammar], corpora: dict[str, list[CorpusCase]]) -> str:
    """docs/compat.md's text."""
    out = [
        "# Compatibility with vLLM, SGLang and llama.cpp",
        "",
        "<!-- Written by `python scripts/compat_doc.py` from grammars/*.tg and tests/corpus/*.txt;"
        " do not edit by hand. -->",
        "",
        "toolgrammar's parsers replace vLLM's and SGLang's built-in tool parsers. On the outputs",
        "those projects' own tests write, and on llama.cpp's, they read the same calls and",
        "content, except where this page says otherwise. Each difference is deliberate: it is",
        "listed in the family's grammar comment (a `Differs from PEER:` block, the format is in",
        "[grammars/README.md](../grammars/README.md)) and pinned by the golden corpus cases",
        "named after it (`tests/corpus/<family>.txt`, most titled `differs from PEER: …`).",
        "`tests/test_compat_doc.py` fails when a listed difference names no case, when a",
        "`differs from` case is listed by no difference, or when this page is stale.",
        "",
        "## Policies every family shares",
        "",
        "These are answered once, for every family, in [policies.md](policies.md); a peer",
        "that answers one of them otherwise differs from us in every family it serves. Only the",
        "differences a family's cases show beyond these are listed per family.",
        "",
    ]
    for title, anchor, text in GENERAL:
        out.append(f"- **{title}** ([policies.md](policies.md#{anchor})): {text}")
    out += ["", *profile_table(), "", "## Families", ""]
    out.append(" ".join(f"[{f}](#{f.replace('.', '')})" for f in grammars))
    for family in grammars:
        out += _family_section(family, grammars, corpora)
    return "\n".join(out) + "\n"


def main() -> int:
    grammars, corpora = load()
    problems = check(grammars, corpora)
    text = document(grammars, corpora)
    if "--check" in sys.argv[1:]:
        if OUT.read_text(encoding="utf-8") != text if OUT.is_file() else True:
            problems.append(f"{OUT.relative_to(ROOT)} is stale: run python scripts/compat_doc.py")
        print("\n".join(problems), file=sys.stderr)
        return 1 if problems else 0
    OUT.write_text(text, encoding="utf-8")
    print("\n".join(problems), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
