"""View models -> formatted, compile-checked Python source.

One jinja2 render over a view model that `lower` already decided, then black (pinned
in pyproject.toml, so output is byte-identical everywhere), then `compile()` as a last
sanity check: a template bug fails the build, not the import of a generated module.
"""

from __future__ import annotations

from functools import cache

import black
import jinja2

from .lower import FamilyView, InitView

BLACK_MODE = black.Mode(line_length=100, target_versions={black.TargetVersion.PY311})


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def _finish(code: str, filename: str) -> str:
    formatted = black.format_str(code, mode=BLACK_MODE)
    compile(formatted, filename, "exec")
    return formatted


def render_family(view: FamilyView, filename: str) -> str:
    """The source of one generated family module."""
    code = _environment().get_template("family.py.j2").render(m=view)
    return _finish(code, filename)


def render_init(view: InitView, filename: str = "__init__.py") -> str:
    """The source of the generated package's `__init__.py`."""
    code = _environment().get_template("init.py.j2").render(m=view)
    return _finish(code, filename)
