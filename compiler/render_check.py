"""Build warnings for what the renderer cannot write: a grammar that compiles may still
have a call shape `render` cannot fill (a name pattern none of the renderer's header
shapes fits), and then `render`, the few-shot text and `toolgrammar check` have no sample
of the family's markup. The build says so with the grammar line, rather than `check`
finding no sample to test."""

from __future__ import annotations

from toolgrammar.runtime.render import RenderError, render_header
from toolgrammar.runtime.spec import FamilySpec, Name

from .errors import CompileError, error_at

SAMPLE_NAME = "get_weather"  # a tool name of the plainest shape: any markup writes it


def render_warnings(spec: FamilySpec, path: str, text: str) -> list[CompileError]:
    """A warning for each name item of the shape `render` writes (the first `call`) whose
    pattern the renderer cannot fill with a plain tool name."""
    found = []
    for item in spec.call:
        if not isinstance(item, Name) or item.pattern is None or item.fixed or item.recipient:
            continue
        try:
            render_header(item, SAMPLE_NAME, 0)
        except RenderError:
            lines = text.split("\n")
            source = lines[item.line - 1] if 0 < item.line <= len(lines) else ""
            column = source.find("name(") + 1 or 1
            message = (
                f"warning: `render` cannot write a name in the shape /{item.pattern}/ reads "
                f"(none of its header shapes fits {SAMPLE_NAME!r}): render has no text for "
                "this call and `toolgrammar check` no sample; give the pattern a shape such "
                'as `NAME`, `functions.NAME:IDX` or `"NAME"`, or put a shape render can '
                "write first"
            )
            if "(?P<id>" in item.pattern:
                message += (
                    "; an id the model writes before a literal before the name is read by "
                    "`skip(until=…, id=true)` before `name`"
                )
            found.append(error_at(path, text, item.line, column, message))
    return found
