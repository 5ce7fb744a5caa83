"""XML's entities decoded: the values of a markup dialect that quotes XML
(`xml_params(xml_unescape=true)`) and the attribute values a header or a key is written
in (Kimi K3's `tool="a&amp;b"`, `key="x&quot;y"`: `name(xml_unescape=true)`,
`xml_params(unescape_keys=true)`). One module, so that a name and a value decode alike.
"""

from __future__ import annotations

import re

__all__ = ["ENTITY", "xml_unescape"]

ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _entity(found: re.Match[str]) -> str:
    body = found.group(1)
    if body[0] != "#":
        return _NAMED[body]
    code = int(body[2:], 16) if body[1] in "xX" else int(body[1:])
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF or code == 0:
        return found.group(0)  # not a character: kept as written
    return chr(code)


# `&amp;` last: a `&` it gives back is not read again, as in one left-to-right pass
_NAMED_REPLACEMENTS = (
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", '"'),
    ("&apos;", "'"),
    ("&amp;", "&"),
)


def xml_unescape(text: str) -> str:
    """XML's five named entities and numeric character references; anything else as is.

    Text with only named entities (code written into a value: `&lt;`, `&amp;`) is decoded
    by replacement, without a Python call per entity.
    """
    if "&" not in text:
        return text
    if "&#" in text:
        return ENTITY.sub(_entity, text)
    for entity, char in _NAMED_REPLACEMENTS:
        text = text.replace(entity, char)
    return text
