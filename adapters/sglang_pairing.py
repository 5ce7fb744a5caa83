"""How a companion reasoning detector tells the tool detector built next that it is paired.

SGLang gives its tool detector the text its reasoning parser passes on and nothing else: no
request, no word of which reasoning parser ran. The companion reasoning detector of a family
passes the whole output on and reports the reasoning itself, so the tool detector of the same
family must not report that reasoning again as content. SGLang's serving layer builds, per
request and choice, both parsers (chat: reasoning first; Responses: tool first) and then feeds
them, in one asyncio task (or one thread, outside a server). The reasoning detector announces
itself in a context variable when it is built; the tool detector takes the announcement when it
reads its first text, after both are built. Each task has its own context, so an announcement
never reaches another request; a detector SGLang builds only to ask for a constraint reads no
text and leaves the announcement alone.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

# The prefix of every name the adapter registers (`tg-NAME`)
PREFIX = "tg-"
# The grammar params of a family's tool and reasoning detectors alike (`env_params`)
PARAMS_ENV = "TOOLGRAMMAR_SGLANG_PARAMS"


@dataclass(frozen=True)
class Pairing:
    """What the tool detector must know: whose announcement, and where the output starts."""

    family: str
    reasoning_open: bool | None


_announced: ContextVar[Pairing | None] = ContextVar("toolgrammar_sglang_pairing", default=None)


def announce(pairing: Pairing) -> None:
    _announced.set(pairing)


def take(family: str) -> Pairing | None:
    """The announcement for `family`, once: any announcement is spent by the next tool detector."""
    pairing = _announced.get()
    if pairing is not None:
        _announced.set(None)
    return pairing if pairing is not None and pairing.family == family else None
