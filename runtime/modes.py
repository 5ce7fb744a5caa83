"""The regions an output's text can be in: the engine's modes, and the kinds of text the
delta buffer collects (content and reasoning entries carry the mode they were read in)."""

from typing import Final

# Final: the compiled modules read them as constants, not through this module's dict
# (docs/compiled.md, "What the compiled code reads")
CONTENT: Final = 0
REASONING: Final = 1
SECTION: Final = 2
CALL: Final = 3
HEADER: Final = 4

MODE_NAMES = ("content", "reasoning", "section", "call", "header")
