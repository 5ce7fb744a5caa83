"""Fetch the chat templates the template round trip runs on (`tests/test_templates.py`).

Two pinned sdists carry models' chat templates, each kept in its own folder of
`.cache/templates/` (`toolgrammar.check.templates.TEMPLATE_SOURCES` names them; a row of
`grammars/templates.toml` says which one its file comes from with `source`):
- "llama.cpp": the llama-cpp-python sdist, about 70 models' own `chat_template` fields, kept
  by llama.cpp for its own tests under `vendor/llama.cpp/models/templates/`;
- "vllm": vLLM's sdist, the tool-calling templates of its `examples/tool_chat_template_*.jinja`.
They are not ours to commit, so the test command fetches each sdist once into `.cache/`,
checks its sha256 and keeps only the templates. A failed download is an error with the
reason, never a silent skip: CI runs on a clean clone.

Usage: python scripts/fetch_templates.py [CACHE_DIR]   (prints the templates folder)
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolgrammar.check.templates import TEMPLATE_CACHE, TEMPLATE_SOURCES


@dataclass(frozen=True)
class Source:
    """One pinned sdist and which of its members are the templates kept."""

    name: str  # the `source` of a templates.toml row
    url: str
    sha256: str
    keeps: Callable[[str], bool]  # a member's path below the sdist's top folder
    where: str  # what `keeps` takes, for the error when nothing matched

    @property
    def folder(self) -> str:
        return TEMPLATE_SOURCES[self.name]

    @property
    def archive(self) -> str:
        return self.url.rsplit("/", 1)[1]


def _llama_cpp(path: str) -> bool:
    return path.startswith("vendor/llama.cpp/models/templates/") and path.endswith(".jinja")


def _vllm(path: str) -> bool:
    folder, _, name = path.rpartition("/")
    return (
        folder == "examples" and name.startswith("tool_chat_template_") and name.endswith(".jinja")
    )


SOURCES = (
    Source(
        "llama.cpp",
        "https://files.pythonhosted.org/packages/ec/e9/"
        "e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/"
        "llama_cpp_python-0.3.36.tar.gz",
        "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
        _llama_cpp,
        "vendor/llama.cpp/models/templates/*.jinja",
    ),
    Source(
        "vllm",
        "https://files.pythonhosted.org/packages/f7/25/"
        "aa5684e9c59d6fc75f78926b7f15e8d9adc7de2d9e6e7575b80776ad8169/vllm-0.33.0.tar.gz",
        "f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112",
        _vllm,
        "examples/tool_chat_template_*.jinja",
    ),
)
assert {source.name for source in SOURCES} == set(TEMPLATE_SOURCES)
DEFAULT_CACHE = TEMPLATE_CACHE.parent  # the project's .cache/


class FetchError(Exception):
    """The templates could not be fetched: the message says why and what was tried."""


def templates_root(cache: Path = DEFAULT_CACHE) -> Path:
    """`cache/templates`, holding every source's folder, each fetched and unpacked on first
    use: `toolgrammar.check.templates.check_row` takes it."""
    for source in SOURCES:
        source_dir(source, cache)
    return cache / "templates"


def source_dir(source: Source, cache: Path = DEFAULT_CACHE) -> Path:
    """The folder of one source's templates, fetched and unpacked on first use."""
    target = cache / "templates" / source.folder
    done = target / ".complete"
    if done.exists():
        return target
    with tempfile.TemporaryDirectory(dir=_made(cache)) as scratch:
        archive = Path(scratch) / source.archive
        _download(source, archive)
        staged = Path(scratch) / "templates"
        _unpack_templates(source, archive, staged)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        staged.rename(target)
    done.write_text(source.sha256 + "\n", encoding="utf-8")
    return target


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _download(source: Source, archive: Path) -> None:
    """The sdist, streamed to disk and checked against the pinned sha256."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(source.url, timeout=120) as response, archive.open("wb") as out:
            while block := response.read(1 << 20):
                digest.update(block)
                out.write(block)
    except OSError as error:
        raise FetchError(f"cannot download {source.url}: {error}") from None
    if digest.hexdigest() != source.sha256:
        raise FetchError(f"{source.url}: sha256 {digest.hexdigest()}, expected {source.sha256}")


def _unpack_templates(source: Source, archive: Path, staged: Path) -> None:
    """Only the template files the source keeps, flat, by their own names."""
    staged.mkdir()
    count = 0
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            inner = member.name.partition("/")[2]  # below the sdist's top folder
            if member.isfile() and source.keeps(inner):
                body = tar.extractfile(member)
                assert body is not None  # a regular file always has a body
                (staged / Path(member.name).name).write_bytes(body.read())
                count += 1
    if count == 0:
        raise FetchError(f"{source.archive} holds no templates at {source.where}")


def main(argv: list[str]) -> int:
    cache = Path(argv[1]) if len(argv) > 1 else DEFAULT_CACHE
    try:
        print(templates_root(cache))
    except FetchError as error:
        print(f"fetch_templates: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
