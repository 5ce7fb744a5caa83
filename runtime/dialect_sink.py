"""The engine as the sink of its calls' dialects (`protocol.Sink`, mixed into `Engine`):
what a dialect's builder sends and asks about the call being read.

A builder keeps the sink, never the call: the engine drops the call when it ends, and
with it the builder, so no reference cycle is left for the garbage collector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .call_record import CallRecord
from .dialects import DIALECTS
from . import shortcuts
from .markers import NextStop, markers
from .protocol import ArgumentsReader
from .shared_memos import tool_memo as shared_tool_memo
from .spec import Dialect
from .unwrap import WRAPPER_KEYS

_MAX_TOOL_MEMOS = 64  # tool and item pairs a parser remembers (`DialectSink.tool_memo`)
from .traits import trait  # (a mixin of the compiled Engine: docs/compiled.md)

if TYPE_CHECKING:
    from .engine import Engine


@trait
class DialectSink:
    """Builds a call's dialect and answers it (mixed into `Engine`)."""

    _spare: ArgumentsReader | None  # (the engine's: declared for mypyc's traits)

    def _dialect(self: Engine, call: CallRecord, item: Dialect) -> ArgumentsReader:
        stops = self.family.stops[call.shape, call.item]
        spare = self._spare
        if spare is not None:  # the last call's reader of this item and stops, renewed
            self._spare = None  # (`Engine._end_call` kept it): not made again for every call
            if spare.item is item and spare.stops is stops and shortcuts.ON:  # type: ignore[attr-defined]
                spare.renew()  # type: ignore[attr-defined]
                return spare
        return DIALECTS[type(item)].reader(item, stops, self)

    def commit_call(self: Engine, name: str, call_id: str | None = None) -> None:
        """A dialect has read the name of the call being read (or, in a list of calls, of
        its next one). The dialect holds this, not the call: a reader that held its call
        would make a reference cycle of every call, left for the garbage collector."""
        call = self._call
        assert call is not None
        self._out.settle(call.index)  # (what the call before wrote; this one may be dropped)
        self._commit(call, name, call_id)

    def emit_args(self: Engine, text: str) -> None:
        lone = self._out.lone
        if lone is not None:  # the call `Engine.feed` reads hot, sent: its pieces gathered
            lone.append(text)
            return
        call = self._call
        if call is not None and not call.dropped and text:
            if call.hold is not None:  # held until its arguments end (`call_outcome.py`)
                call.hold[2].append(text)
            else:
                self._out.args(call.index, text)

    def schema_of(self: Engine, key: str) -> dict | None:
        return self.tools.param_schema(self._current_name, key)

    def typed_keys(self: Engine) -> frozenset[str]:
        return self.tools.typed_keys(self._current_name)

    def tool_memo(self: Engine, item: object) -> dict:
        """A dict the dialect reading `item` keeps for the current call's tool from call to
        call of this parser (what a key reads as against the tool's schema and the
        parser's policies): a model calling one tool again and again reads its keys once.
        Untraced, it is the one every parser given that tool shares (`shared_memos.py`):
        a request's first call of the tool reads it as its later calls do. Bounded; by the
        item's identity, the item kept with it."""
        memos = self._tool_memos
        key = (self._current_name, id(item))
        found = memos.get(key)
        if found is None or found[0] is not item:
            if len(memos) >= _MAX_TOOL_MEMOS:
                memos.clear()
            memo = (
                {}
                if self._log is not None
                else shared_tool_memo(
                    self.family, self.policies, self.tools, self._current_name, item
                )
            )
            found = memos[key] = (item, memo)
        return found[1]

    def unwraps(self: Engine, key: str) -> bool:
        return key in WRAPPER_KEYS and self.tools.lacks_property(self._current_name, key)

    def drops_param(self: Engine, key: str) -> bool:
        """Whether a markup parameter `key` is dropped: `undeclared_params="drop"` and the
        current call's tool declares properties, none called `key` (a wrapper is kept)."""
        return (
            self.policies.undeclared_params == "drop"
            and key not in WRAPPER_KEYS
            and self.tools.lacks_property(self._current_name, key)
        )

    def next_stop(self: Engine, stops: tuple[str, ...]) -> NextStop:
        found = self._next_stops.get(stops)
        if found is None:
            found = self._next_stops[stops] = NextStop(markers(stops))
        return found
