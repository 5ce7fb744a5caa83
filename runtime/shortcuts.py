"""The one switch over the whole-input shortcuts, and what each shortcut may decide.

Several readers take text already whole in one step (one regex match, one C decoder call)
where their state machine would read it piece by piece: `xml_params` and `keyvalue_args`
parameters, `json_args` and `json_call` objects, a `json_call` object's head (`{"name":
"NAME", "arguments": `, held while it arrives) and the rest of one in the common shape
without its outer scanner (`json_call._lean_read`), a delta with no marker's first character
in it (`Markers.lead`: one `str.find`, no search), a JSON value in `json_stream`, the rest of
an arguments object that ends in the read's text (`json_stream._rest_whole`: one decoder
call), a call's end and what follows it read by the loop while the hot feed's argument pieces
wait (`Engine._hot_read`), a Python
string in `python_calls`, a call's runs of literals (`tables._Run`), an empty `skip` at its
`until` (`tables.empty_skips`), a prose delta after prose sent without a scan
(`Engine._prose`). Each is a hand-written twin of its state machine and must
decide as it does. Two guards keep them honest:

- `ON`: `TOOLGRAMMAR_NO_SHORTCUTS=1` in the environment (read once, at import) turns every
  shortcut off, and `switch(False)` does so at run time (tests/test_shortcuts.py reads the
  whole corpus both ways and requires the same deltas).
- `takes(item, knows)`: a dialect row lists the item fields its shortcut decides like the
  state machine (`DialectRow.shortcut_knows`); an item that sets any other field away from
  its default is read by the state machine alone, so a new knob is never silently decided
  differently by a shortcut that was not taught it.
"""

from __future__ import annotations

import os
from dataclasses import MISSING, fields
from functools import lru_cache
from typing import Any, Callable

from .scan_meter import forgets

ON: bool = os.environ.get("TOOLGRAMMAR_NO_SHORTCUTS", "") in ("", "0")
"""Whether the shortcuts are taken at all."""

_ON_SWITCH: list[Callable[[], None]] = []  # what forgets tables made with the other setting
# caches of tables made with the shortcuts in them (or not), kept per setting: switched back
# and forth per input (`toolgrammar fuzz` reads each both ways), a family is compiled once
# per setting, not once per switch; `_KEPT[setting]` holds what they held under it
_PER_SETTING: list[dict[Any, Any]] = []
_KEPT: dict[bool, list[dict[Any, Any]]] = {}
forgets(_KEPT.clear)  # (kept tables may hold metered patterns)


def switch(on: bool) -> None:
    """Turn every shortcut on or off from now on: tables made under the other setting are
    put away (`keeps`) or forgotten (`on_switch`)."""
    global ON
    if on != ON:
        _KEPT[ON] = [dict(cache) for cache in _PER_SETTING]
        kept = _KEPT.pop(on, None)
        for number, cache in enumerate(_PER_SETTING):
            cache.clear()
            if kept is not None:
                cache.update(kept[number])
    ON = on
    _decided.cache_clear()
    _last.clear()
    for forget in _ON_SWITCH:
        forget()


def on_switch(forget: Callable[[], None]) -> None:
    """Register what `switch` must forget: a cache of tables made with shortcuts in them."""
    _ON_SWITCH.append(forget)


def keeps(*caches: dict[Any, Any]) -> None:
    """Register caches of tables made with shortcuts in them that `switch` puts away and
    brings back per setting (each is bounded by its owner; kept, it is at most doubled)."""
    _PER_SETTING.extend(caches)
    _KEPT.clear()


# per `knows`, the last item asked about and the answer: a reader is made per call from the
# same item of the same family, whose hash (a frozen dataclass's, every field hashed again
# on each call) cost more than the rest of the answer
_last: dict[frozenset[str], tuple[Any, bool]] = {}


def takes(item: Any, knows: frozenset[str]) -> bool:
    """Whether a dialect's shortcut may read `item`: shortcuts on, and every field of the
    item that is not in `knows` (nor `line`, `file`) at its default. Decided once per item
    value."""
    if not ON:
        return False
    last = _last.get(knows)
    if last is not None and last[0] is item:
        return last[1]
    decided = _decided(item, knows)
    _last[knows] = (item, decided)
    return decided


@lru_cache(maxsize=256)
def _decided(item: Any, knows: frozenset[str]) -> bool:
    return not unknown_fields(item, knows)


def unknown_fields(item: Any, knows: frozenset[str]) -> list[str]:
    """The fields of `item` set away from their default that its shortcut does not know
    (where the item was written, its grammar's `line` and `file`, is no reading of it: an
    item a family takes over by `extends` reads as in the family it comes from)."""
    unknown = []
    for field in fields(item):
        if field.name in knows or field.name == "line" or field.name == "file":
            continue
        if field.default is not MISSING:
            default = field.default
        elif field.default_factory is not MISSING:
            default = field.default_factory()
        else:
            unknown.append(field.name)  # a required field: no default to be at
            continue
        if getattr(item, field.name) != default:
            unknown.append(field.name)
    return unknown
