"""What a peer's new release changes for us, in one command.

    python scripts/peer_release.py vllm 0.35.0           # against the tested release
    python scripts/peer_release.py sglang                # the newest release on PyPI
    python scripts/peer_release.py llama.cpp 0.3.37 --against 0.3.36
    python scripts/peer_release.py vllm 0.35.0 --no-agreement   # names and files only

For a peer (vLLM, SGLang, or llama.cpp through the llama-cpp-python sdist that vendors it) and a
release, it prints:
1. the tool- and reasoning-parser names the release registers, against the tested release's:
   new, removed, renamed (the same module and class under another name), read from the source
   (vLLM's lazy registration tables, SGLang's `ToolCallParserEnum` and `DetectorMap`; for
   llama.cpp its chat formats and the chat templates it ships);
2. each of the release's names against ours: served by a family (`tg-NAME`), taken over by the
   adapter's override (`TOOLGRAMMAR_VLLM_OVERRIDE`, `TOOLGRAMMAR_SGLANG_OVERRIDE`), or with no
   family yet;
3. the parser and test files added, removed and changed since the tested release, with the
   lines changed (the peer's tests are where its behaviour changes show first);
4. unless `--no-agreement` (vLLM and SGLang): the release's environment built beside the tested
   one (`scripts/vllm_env.sh VERSION`, `scripts/sglang_env.sh VERSION`), `bench/agreement.py`
   run in both, and every corpus case whose verdict the release changed.

Sources come from PyPI (vLLM's sdist ships its tests, SGLang's wheel its parsers, the
llama-cpp-python sdist vendors llama.cpp with its tests and templates), checked against the
sha256 PyPI lists and kept under `.cache/peers/`. Nothing is written to the repository.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "peers"
PYPI = "https://pypi.org/pypi/{package}/json"

# name -> what it is registered as (module and class, or a template's or format's own name)
Registry = dict[str, str]


class ReleaseError(Exception):
    """The release cannot be fetched or read: the message says what and why."""


@dataclass(frozen=True)
class PeerKind:
    """How to find one peer's releases, its parser names and its parser and test files."""

    key: str
    title: str
    package: str  # on PyPI
    artefact: str  # "sdist" or "wheel": the one that ships what we read
    tested: Callable[[], str]  # the release the project is tested against
    tools: Callable[[Path], Registry]  # tool-parser names of an unpacked release
    reasoning: Callable[[Path], Registry]  # reasoning-parser names
    parser_dirs: tuple[str, ...]  # path prefixes inside the unpacked release
    test_dirs: tuple[str, ...]
    env_script: str | None  # builds an environment for a release (agreement)
    override: Callable[[], frozenset[str]]  # our families the adapter never takes over
    # whether the override takes the peer's reasoning-parser names too (vLLM's does)
    reasoning_override: bool = False
    labels: tuple[str, str] = (
        "tool parsers",
        "reasoning parsers",
    )  # what `tools`, `reasoning` list


def _script_var(path: str, name: str) -> str:
    match = re.search(rf'^{name}="(.+)"$', (ROOT / path).read_text(encoding="utf-8"), re.M)
    if not match:
        raise ReleaseError(f"{path} sets no {name}")
    return match[1]


def _llama_cpp_tested() -> str:
    text = (ROOT / "scripts" / "fetch_templates.py").read_text(encoding="utf-8")
    match = re.search(r"llama_cpp_python-([\d.]+)\.tar\.gz", text)
    if not match:
        raise ReleaseError("scripts/fetch_templates.py pins no llama-cpp-python sdist")
    return match[1]


def _frozenset_in(path: str, name: str) -> frozenset[str]:
    """A module-level `NAME = frozenset({...})` of ours, read without importing the module
    (the adapters import their stack)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return frozenset(ast.literal_eval(node.value.args[0]))  # type: ignore[attr-defined]
    raise ReleaseError(f"{path} has no {name}")


def _dict_assigned(source: str, name: str) -> dict[str, ast.expr]:
    """The keys and value nodes of the dict literal assigned to `name` anywhere in `source`."""
    for node in ast.walk(ast.parse(source)):
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Dict):
            return {ast.literal_eval(k): v for k, v in zip(node.value.keys, node.value.values) if k}
    raise ReleaseError(f"no dict {name} found")


def _vllm_table(path: str, table: str) -> Callable[[Path], Registry]:
    def read(root: Path) -> Registry:
        source = (root / path).read_text(encoding="utf-8")
        return {
            name: ".".join(ast.literal_eval(value))
            for name, value in _dict_assigned(source, table).items()
        }

    return read


def _sglang_table(path: str, table: str) -> Callable[[Path], Registry]:
    def read(root: Path) -> Registry:
        source = (root / path).read_text(encoding="utf-8")
        return {name: ast.unparse(value) for name, value in _dict_assigned(source, table).items()}

    return read


LLAMA = "vendor/llama.cpp"


def _llama_formats(root: Path) -> Registry:
    """llama.cpp's chat formats (`COMMON_CHAT_FORMAT_*`), its names for a tool-call markup."""
    header = root / LLAMA / "common" / "chat.h"
    if not header.is_file():
        raise ReleaseError(f"{header.relative_to(root)} is missing from the sdist")
    names = re.findall(r"COMMON_CHAT_FORMAT_(\w+)", header.read_text(encoding="utf-8"))
    return {n.lower(): f"COMMON_CHAT_FORMAT_{n}" for n in dict.fromkeys(names) if n != "COUNT"}


def _llama_templates(root: Path) -> Registry:
    """The chat templates llama.cpp ships and tests its parsers with."""
    folder = root / LLAMA / "models" / "templates"
    return {p.stem: p.name for p in sorted(folder.glob("*.jinja"))}


PEERS = {
    "vllm": PeerKind(
        "vllm",
        "vLLM",
        "vllm",
        "sdist",
        lambda: _script_var("scripts/vllm_env.sh", "TESTED"),
        _vllm_table("vllm/tool_parsers/__init__.py", "_TOOL_PARSERS_TO_REGISTER"),
        _vllm_table("vllm/reasoning/__init__.py", "_REASONING_PARSERS_TO_REGISTER"),
        ("vllm/tool_parsers", "vllm/reasoning", "vllm/parser"),
        ("tests/tool_parsers", "tests/reasoning", "tests/parser"),
        "scripts/vllm_env.sh",
        lambda: _frozenset_in("adapters/vllm.py", "_WRAPPED_BY_VLLM"),
        reasoning_override=True,
    ),
    "sglang": PeerKind(
        "sglang",
        "SGLang",
        "sglang",
        "wheel",
        lambda: _script_var("scripts/sglang_env.sh", "TESTED"),
        _sglang_table("sglang/srt/function_call/function_call_parser.py", "ToolCallParserEnum"),
        _sglang_table("sglang/srt/parser/reasoning_parser.py", "DetectorMap"),
        ("sglang/srt/function_call", "sglang/srt/parser"),
        (),  # the wheel ships no tests
        "scripts/sglang_env.sh",
        lambda: _frozenset_in("adapters/sglang.py", "_REACHED_INTO_BY_SGLANG"),
    ),
    "llama.cpp": PeerKind(
        "llama.cpp",
        "llama.cpp (llama-cpp-python)",
        "llama-cpp-python",
        "sdist",
        _llama_cpp_tested,
        _llama_formats,
        _llama_templates,
        (f"{LLAMA}/common/chat",),
        (f"{LLAMA}/tests/test-chat",),
        None,  # no Python parser to run our corpus through
        frozenset,
        ("chat formats", "chat templates"),
    ),
}
PARSER_FILE = re.compile(r"(chat|pars|tool|reason|function_call|detector|template)", re.I)


# --- fetching ----------------------------------------------------------------------------


def _pypi(package: str) -> dict:
    try:
        with urllib.request.urlopen(PYPI.format(package=package), timeout=60) as response:
            return json.load(response)
    except OSError as error:
        raise ReleaseError(f"cannot read PyPI's index of {package}: {error}") from None


def newest(peer: PeerKind) -> str:
    return _pypi(peer.package)["info"]["version"]


def _pick(files: list[dict], artefact: str) -> dict | None:
    if artefact == "sdist":
        return next((f for f in files if f["packagetype"] == "sdist"), None)
    wheels = [f["filename"] for f in files if f["packagetype"] == "bdist_wheel"]
    # pure Python first, then this machine's kind; the sources we read are the same in each
    for wanted in ("-none-any.whl", f"{platform.machine()}.whl"):
        for f in files:
            if f["filename"] in wheels and f["filename"].endswith(wanted):
                return f
    return next((f for f in files if f["filename"] in wheels), None)


def unpacked(peer: PeerKind, version: str) -> Path:
    """The release's sdist or wheel, downloaded once, checked, and unpacked under .cache/."""
    target = CACHE / f"{peer.key}-{version}"
    if (target / ".complete").is_file():
        return target
    index = PYPI.format(package=peer.package)
    files = _pypi(peer.package).get("releases", {}).get(version)
    if not files:
        raise ReleaseError(f"{peer.package} {version} is not on PyPI")
    chosen = _pick(files, peer.artefact)
    if chosen is None:
        raise ReleaseError(f"{peer.package} {version} has no {peer.artefact} on PyPI")
    url = urllib.parse.urljoin(index, chosen["url"])
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        archive = Path(scratch) / chosen["filename"]
        digest = hashlib.sha256()
        print(f"fetching {chosen['filename']} ({chosen.get('size', 0) >> 20} MB)", file=sys.stderr)
        try:
            with urllib.request.urlopen(url, timeout=600) as response, archive.open("wb") as out:
                while block := response.read(1 << 20):
                    digest.update(block)
                    out.write(block)
        except OSError as error:
            raise ReleaseError(f"cannot download {url}: {error}") from None
        if digest.hexdigest() != chosen["digests"]["sha256"]:
            raise ReleaseError(f"{url}: sha256 {digest.hexdigest()} is not PyPI's")
        staged = Path(scratch) / "release"
        _unpack(archive, staged, peer)
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    (target / ".complete").write_text(chosen["filename"] + "\n", encoding="utf-8")
    return target


def _kept(path: str, peer: PeerKind) -> bool:
    return any(path.startswith(d) for d in (*peer.parser_dirs, *peer.test_dirs)) or (
        peer.key == "llama.cpp" and path.startswith(f"{LLAMA}/models/templates/")
    )


def _unpack(archive: Path, staged: Path, peer: PeerKind) -> None:
    """Only the parser, test and template folders, without the release's top folder."""
    staged.mkdir()
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                if _kept(name, peer) and not name.endswith("/"):
                    (staged / name).parent.mkdir(parents=True, exist_ok=True)
                    (staged / name).write_bytes(z.read(name))
        return
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            inner = member.name.split("/", 1)[1] if "/" in member.name else ""
            if member.isfile() and _kept(inner, peer):
                data = tar.extractfile(member)
                assert data is not None
                (staged / inner).parent.mkdir(parents=True, exist_ok=True)
                (staged / inner).write_bytes(data.read())


# --- comparing ---------------------------------------------------------------------------


@dataclass
class NameChanges:
    new: list[str]
    removed: list[str]
    renamed: list[tuple[str, str]]  # (old name, new name): the same registration
    total: int  # in the release

    def lines(self, what: str) -> list[str]:
        out = [
            f"{what}: {self.total}, {len(self.new)} new, {len(self.removed)} removed, "
            f"{len(self.renamed)} renamed"
        ]
        out += [f"  + {n}" for n in self.new]
        out += [f"  - {n}" for n in self.removed]
        out += [f"  ~ {old} -> {new}" for old, new in self.renamed]
        return out


def name_changes(old: Registry, new: Registry) -> NameChanges:
    added = [n for n in new if n not in old]
    gone = [n for n in old if n not in new]
    renamed = []
    for name in list(gone):
        twin = next((n for n in added if new[n] == old[name]), None)
        if twin is not None:
            renamed.append((name, twin))
            gone.remove(name)
            added.remove(twin)
    return NameChanges(sorted(added), sorted(gone), renamed, len(new))


def file_changes(old: Path, new: Path, dirs: tuple[str, ...]) -> list[str]:
    """One line per file added, removed or changed under `dirs`, with the lines changed."""
    lines = []
    for folder in dirs:
        before = {
            p.relative_to(old).as_posix(): p for p in (old / folder).rglob("*") if p.is_file()
        }
        after = {p.relative_to(new).as_posix(): p for p in (new / folder).rglob("*") if p.is_file()}
        for path in sorted(before.keys() | after.keys()):
            if path.endswith((".pyc", ".so")):
                continue
            if path not in before:
                lines.append(f"  + {path} ({_count(after[path])} lines)")
            elif path not in after:
                lines.append(f"  - {path}")
            elif before[path].read_bytes() != after[path].read_bytes():
                a = before[path].read_text(encoding="utf-8", errors="replace").splitlines()
                b = after[path].read_text(encoding="utf-8", errors="replace").splitlines()
                diff = list(difflib.unified_diff(a, b, lineterm="", n=0))
                plus = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
                minus = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
                lines.append(f"  ~ {path} (+{plus} -{minus})")
    return lines


def _files(root: Path, prefix: str) -> dict[str, Path]:
    folder = root / prefix.rpartition("/")[0]
    found = (p for p in folder.rglob("*") if p.is_file())
    return {
        p.relative_to(root).as_posix(): p
        for p in found
        if p.relative_to(root).as_posix().startswith(prefix)
    }


def _count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8", errors="replace").splitlines())


def ours_against(peer: PeerKind, names: list[str], kind: str = "") -> list[str]:
    """Each of the peer's tool-parser (or `kind`) names: served by a family of ours, taken
    over by the override, or without a family."""
    import toolgrammar

    families = {*toolgrammar.families(), *toolgrammar.TEMPLATE_FAMILIES}
    not_taken = peer.override()
    taken, served, missing = [], [], []
    for name in names:
        if name in families and name not in not_taken:
            taken.append(name)
        elif name in families:
            served.append(name)
        else:
            missing.append(name)
    return [
        f"ours: {len(taken)} of {len(names)} {kind}names taken over by the override",
        f"  a family, left to {peer.title} by the adapter: {', '.join(served) or '-'}",
        f"  no family of that name: {', '.join(missing) or '-'}",
    ]


def agreement(peer: PeerKind, version: str, families: list[str] | None) -> dict[str, dict]:
    """`bench/agreement.py` in the release's environment: verdicts by (family, case)."""
    assert peer.env_script
    python = subprocess.run(
        ["bash", str(ROOT / peer.env_script), version], capture_output=True, text=True
    )
    if python.returncode != 0:
        raise ReleaseError(f"{peer.env_script} {version} failed:\n{python.stderr.strip()[-2000:]}")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "agreement.json"
        command = [python.stdout.strip(), str(ROOT / "bench" / "agreement.py"), peer.key]
        command += ["--json", str(out)] + (["--families", *families] if families else [])
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT / "bench")
        if done.returncode != 0:
            raise ReleaseError(
                f"bench/agreement.py under {peer.title} {version} failed:\n"
                f"{done.stderr.strip()[-2000:]}"
            )
        results = json.loads(out.read_text(encoding="utf-8"))
    return {f"{r['family']} · {v['case']}": v for r in results for v in r["verdicts"]}


def agreement_lines(
    before: dict[str, dict], after: dict[str, dict], old: str, new: str
) -> list[str]:
    def agrees(v: dict | None) -> str:
        if v is None:
            return "absent"
        return "agrees" if v["calls"] and v["content"] is not False else f"differs ({v['why']})"

    both = lambda d: sum(
        1 for v in d.values() if v["calls"] and v["content"] is not False
    )  # noqa: E731
    lines = [
        f"agreement: {both(before)}/{len(before)} cases under {old}, "
        f"{both(after)}/{len(after)} under {new}"
    ]
    for key in sorted(before.keys() | after.keys()):
        a, b = agrees(before.get(key)), agrees(after.get(key))
        if a != b:
            lines.append(f"  {key}: {old} {a}; {new} {b}")
    if len(lines) == 1:
        lines.append("  no case changed its verdict")
    return lines


def report(
    peer: PeerKind, version: str, against: str, run_agreement: bool, families: list[str] | None
) -> list[str]:
    old, new = unpacked(peer, against), unpacked(peer, version)
    lines = [f"# {peer.title} {version} against {against}", ""]
    new_tools, new_reasoning = peer.tools(new), peer.reasoning(new)
    lines += name_changes(peer.tools(old), new_tools).lines(peer.labels[0])
    lines += name_changes(peer.reasoning(old), new_reasoning).lines(peer.labels[1])
    if peer.key != "llama.cpp":
        lines += ours_against(peer, sorted(new_tools))
    if peer.reasoning_override:
        lines += ours_against(peer, sorted(new_reasoning), "reasoning-parser ")
    lines += ["", "parser files:"] + (file_changes(old, new, peer.parser_dirs) or ["  unchanged"])
    if peer.test_dirs:
        lines += ["", "test files:"] + (file_changes(old, new, peer.test_dirs) or ["  unchanged"])
    else:
        lines += ["", f"test files: the {peer.artefact} of {peer.title} ships none"]
    if run_agreement and peer.env_script and version != against:
        lines += [""] + agreement_lines(
            agreement(peer, against, families), agreement(peer, version, families), against, version
        )
    elif peer.env_script is None:
        lines += ["", f"agreement: {peer.title} has no Python parser to run our corpus through"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=sorted(PEERS))
    parser.add_argument("version", nargs="?", help="the release (default: the newest on PyPI)")
    parser.add_argument("--against", help="the release to compare with (default: the tested one)")
    parser.add_argument("--no-agreement", action="store_true", help="skip bench/agreement.py")
    parser.add_argument("--families", nargs="+", help="agreement on these families only")
    args = parser.parse_args(argv)
    peer = PEERS[args.peer]
    try:
        version = args.version or newest(peer)
        against = args.against or peer.tested()
        lines = report(peer, version, against, not args.no_agreement, args.families)
    except ReleaseError as error:
        print(f"peer_release: {error}", file=sys.stderr)
        return 1
    if version == against:
        lines.insert(1, f"({version} is the tested release: nothing to follow)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
