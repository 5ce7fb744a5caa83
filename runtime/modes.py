"""The regions an output's text can be in: the engine's modes, and the kinds of text the
delta buffer collects (content and reasoning entries carry the mode they were read in)."""

CONTENT, REASONING, SECTION, CALL, HEADER = range(5)

MODE_NAMES = ("content", "reasoning", "section", "call", "header")
