"""Small helpers the checker modules and the tests share (one copy each): a report's clipped
text, and the span mutation that turns a valid output into a hostile one."""

from __future__ import annotations


def clip(text: str, limit: int = 600) -> str:
    """A report stays one screen: huge inputs (10 MB, 10,000 deep) are shown by their ends."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … ({len(text) - limit} characters) … {text[-half:]}"


def mutate_span(text: str, kind: int, a: int, b: int) -> str:
    """The span between positions `a` and `b` (any integers, taken modulo the text's length
    plus one, in either order) deleted (`kind` 0), doubled (1) or moved to the front (2):
    markers end up cut, repeated, nested, reordered."""
    a, b = sorted((a % (len(text) + 1), b % (len(text) + 1)))
    if kind == 0:
        return text[:a] + text[b:]
    if kind == 1:
        return text[:b] + text[a:b] + text[b:]
    return text[a:b] + text[:a] + text[b:]
