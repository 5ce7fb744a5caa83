"""The `citations` switch (docs/policies.md, "Citations"): a family whose grammar has a
`citation` statement (Cohere's `<co>TEXT</co: 0:[1]>`) writes citation spans in its answer.
By default they are text like any other; `citations="strip"` keeps the cited text and drops
the markup from the answer (content), as vLLM's Cohere parser does; reasoning keeps it as
written, and inside a call's value it is the value's text.

Stripping is the grammar's own `ignore`, widened: the parser reads a spec whose `ignore`
holds the citation markers, and whose `ignore_until` says which of them run on to the end
string (`</co:` … `>`). The engine reads such a marker's tail as it reads any marker: held
while it may still end (`TAIL_LIMIT` characters at most), so a stream and the whole text
agree at every split.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from .spec import FamilySpec

# the most characters a citation marker's tail (`0:[1,2],1:[3,4]`) may take before its end:
# past it, the marker was text after all
TAIL_LIMIT = 128


@lru_cache(maxsize=64)
def stripping(spec: FamilySpec) -> FamilySpec:
    """`spec` read with its citation markup dropped (the spec itself when it has none)."""
    cite = spec.citation
    if cite is None:
        return spec
    markers = (*cite.opens, *cite.closes)
    until = tuple((m, cite.end) for m in markers if not m.endswith(cite.end))
    added = tuple(m for m in markers if m not in spec.ignore)
    return replace(spec, ignore=(*spec.ignore, *added), ignore_until=until, content_ignore=added)


def tail_end(buf: str, pos: int, end: str, eof: bool) -> int:
    """Where a citation marker's tail that starts at buf[pos] ends (past `end`); -1 while
    it may still end (more text may come), -2 when it is no tail (too long: the marker
    was text), -3 when the output ended inside it (the finish reason decides, as for any
    marker cut short: "Unfinished output" in docs/policies.md)."""
    found = buf.find(end, pos, pos + TAIL_LIMIT + len(end))
    if found >= 0:
        return found + len(end)
    if len(buf) - pos < TAIL_LIMIT + len(end):
        return -3 if eof else -1
    return -2
