"""Where Unicode is decided: what leaves the runtime, and what whitespace is markup.

Every string the runtime hands out encodes as UTF-8 (docs/policies.md, "Lone surrogates").

A JSON or Python string may escape a lone UTF-16 surrogate (`"\\ud83d"` with no low half
after it); decoded, it is a code point that UTF-8 cannot carry, so a server that encodes
the message or a chunk (`json.dumps(..., ensure_ascii=False).encode()`) fails. Every exit
of the runtime (a delta's content, reasoning, call id, name and arguments; the one-shot
message's) passes through `sendable`, which writes each surrogate code point as its
`\\uXXXX` escape: in the arguments JSON (always inside a string there) that is the JSON
escape the model wrote, the same value; in a name, content or reasoning it is those six
characters as text. One code point at a time, so a stream cut anywhere writes the same
text as the whole output, and a high half sent in one delta and its low half in the next
still join up in the client's JSON.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")  # (chr: mypyc compiles no
# surrogate in a string literal)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def sendable(text: str) -> str:
    """`text` with every surrogate code point written as its `\\uXXXX` escape."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)


def sendable_or_none(text: str | None) -> str | None:
    """`sendable`, passing None through (an absent id, name or text)."""
    return None if text is None else sendable(text)


MARKUP_SPACE = " \t\n\r\x0b\x0c"
"""The whitespace a template writes around a parameter's key (ASCII's). `str.strip()`
also strips U+2028, U+3000, NEL and the like, which no template writes as layout: a key
written as one of them is that key, not an empty one (docs/policies.md, "Whitespace")."""


def strip_space(text: str) -> str:
    """`text` without the markup whitespace (`MARKUP_SPACE`) at its ends."""
    return text.strip(MARKUP_SPACE)
