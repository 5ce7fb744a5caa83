"""Fetch the chat templates the template round trip runs on (`tests/test_templates.py`).

The llama-cpp-python sdist carries about 70 models' chat templates (the models' own
`chat_template` fields, kept by llama.cpp for its own tests) under
`vendor/llama.cpp/models/templates/`. They are not ours to commit, so the test command
fetches the sdist once into `.cache/`, checks its sha256 and keeps only the templates.
A failed download is an error with the reason, never a silent skip: CI runs on a clean clone.

Usage: python scripts/fetch_templates.py [CACHE_DIR]   (prints the templates folder)
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from toolgrammar.template_check import TEMPLATE_CACHE, TEMPLATE_SDIST

SDIST = TEMPLATE_SDIST + ".tar.gz"
URL = (
    "https://files.pythonhosted.org/packages/ec/e9/"
    "e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/" + SDIST
)
SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
MEMBERS = "/vendor/llama.cpp/models/templates/"  # inside the sdist's top folder
DEFAULT_CACHE = TEMPLATE_CACHE.parent  # the project's .cache/


class FetchError(Exception):
    """The templates could not be fetched: the message says why and what was tried."""


def templates_dir(cache: Path = DEFAULT_CACHE) -> Path:
    """The folder of the sdist's templates, fetched and unpacked on first use."""
    target = cache / "templates" / SDIST.removesuffix(".tar.gz")
    done = target / ".complete"
    if done.exists():
        return target
    with tempfile.TemporaryDirectory(dir=_made(cache)) as scratch:
        archive = Path(scratch) / SDIST
        _download(archive)
        staged = Path(scratch) / "templates"
        _unpack_templates(archive, staged)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        staged.rename(target)
    done.write_text(SHA256 + "\n", encoding="utf-8")
    return target


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _download(archive: Path) -> None:
    """The sdist, streamed to disk and checked against the pinned sha256."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(URL, timeout=120) as response, archive.open("wb") as out:
            while block := response.read(1 << 20):
                digest.update(block)
                out.write(block)
    except OSError as error:
        raise FetchError(f"cannot download {URL}: {error}") from None
    if digest.hexdigest() != SHA256:
        raise FetchError(f"{URL}: sha256 {digest.hexdigest()}, expected {SHA256}")


def _unpack_templates(archive: Path, staged: Path) -> None:
    """Only the `.jinja` files of the templates folder, flat, by their own names."""
    staged.mkdir()
    count = 0
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.isfile() and MEMBERS in member.name and member.name.endswith(".jinja"):
                source = tar.extractfile(member)
                assert source is not None  # a regular file always has a body
                (staged / Path(member.name).name).write_bytes(source.read())
                count += 1
    if count == 0:
        raise FetchError(f"{SDIST} holds no templates under {MEMBERS}")


def main(argv: list[str]) -> int:
    cache = Path(argv[1]) if len(argv) > 1 else DEFAULT_CACHE
    try:
        print(templates_dir(cache))
    except FetchError as error:
        print(f"fetch_templates: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
