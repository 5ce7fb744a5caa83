"""Streaming one JSON value as the model wrote it, releasing only safe prefixes.

The scanner keeps the model's own bytes, and releases text only at points where the
released prefix can always be closed into valid JSON by a tail of closers (the
partial-json-parser idea: termination is an untouched head plus a closing tail):
after an opening bracket, inside a string after whole characters, after a complete
value. A dangling key, a comma, a half-written `\\u` escape and an unfinished number
or literal wait until what follows makes them safe. A raw control character inside a
string is written escaped, the one rewrite we make, because it would make the whole
arguments unparsable.

Members of the outermost object can be intercepted (`on_member`): streamed, held back
whole and handed to `on_value` once complete (schema coercion), held back and handed to
`on_unwrap`, whose text replaces the whole member (a lone wrapper around the arguments,
`runtime/unwrap.py`), or paused for another consumer (the arguments inside a
name-carrying call object).
"""

from __future__ import annotations

import json
import re
from typing import Callable, Final

from .json_bounded import find_closer, scan_within
from .limits import MAX_DEPTH, deeper_than
from . import shortcuts

# scanner states
# (in this order: `_read` tells them apart by comparing, STRING < NUMBER, LITERAL < DONE, ...)
# (Final: compiled, a constant, not a look-up in this module's dict on every use)
VALUE: Final = 0
KEY: Final = 1
COLON: Final = 2
AFTER: Final = 3
STRING: Final = 4
NUMBER: Final = 5
LITERAL: Final = 6
DONE: Final = 7
ERROR: Final = 8
PAUSED: Final = 9

# what on_member may answer
STREAM: Final = 0
WITHHOLD: Final = 1
DELEGATE: Final = 2
UNWRAP: Final = 3

# a string's characters up to its end, a broken escape or one cut off: whole escapes are
# read with the text around them (released as they are: a JSON string's text is its escapes)
_PLAIN_STRING = re.compile(r'(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))++')
_WHITESPACE = re.compile(r"[ \t\n\r]+")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_LITERALS = ("true", "false", "null")
_HEX = frozenset("0123456789abcdefABCDEF")
# one step for the commonest shape: a whole plain key and its colon
_KEY_COLON = re.compile(r'"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
WHOLE_STRING = re.compile(r'"[^"\\\x00-\x1f]*"')
# a plain key, its colon and, when it is whole already, its scalar value (group 2: a
# plain string, or a number or literal the text shows has ended), then group 3 (empty)
# and a comma with its whitespace if one follows: `_member`'s groups; without group 2,
# `_key_colon`'s match. A number or literal ends only at what ends it in the character
# loop too (`]` in an object is an error the loop reports)
_MEMBER = re.compile(
    r'"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*'
    r'(?:("[^"\\\x00-\x1f]*"'
    r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?=[ \t\n\r,}])"
    r"|(?:true|false|null)(?=[ \t\n\r,}]))"
    r"()(?:[ \t\n\r]*,[ \t\n\r]*)?)?"
)
# the same after a key read piece by piece: its colon, whitespace and, when whole, its
# scalar value (group 1), group 2 (empty) and a comma (`_colon_member`)
_COLON_MEMBER = re.compile(
    r':[ \t\n\r]*(?:("[^"\\\x00-\x1f]*"'
    r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?=[ \t\n\r,}])"
    r"|(?:true|false|null)(?=[ \t\n\r,}]))"
    r"()(?:[ \t\n\r]*,[ \t\n\r]*)?)?"
)
_COMMA = re.compile(r",[ \t\n\r]*")
# the rest of a key read piece by piece, plain: its closing quote, whitespace and colon
# (`_string_chars` then COLON, in one step); and a plain key begun and cut by the end, or
# whole (group 2: its closing quote and whitespace) with no colon yet
_PLAIN_TO_END = re.compile(r'[^"\\\x00-\x1f]*\Z')  # a string's plain characters, to the end
# the rest of a string, its whole escapes in it (group 1: `_PLAIN_STRING`'s, maybe empty),
# and its closing quote (group 2), if that comes next
_STRING_REST = re.compile(r'((?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+)(")?')
# a number or literal, or what is neither, running to the end of the text: not whole
# yet, however it would decode (what follows a token ends it: `_AFTER_TOKEN`)
_TOKEN_TO_END = re.compile(r"[-+.0-9a-zA-Z]+\Z")
_KEY_END = re.compile(r'([^"\\\x00-\x1f]*)"[ \t\n\r]*:')
_KEY_BEGUN = re.compile(r'"([^"\\\x00-\x1f]*)("[ \t\n\r]*)?\Z')
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_CLOSER = {"{": "}", "[": "]"}
_WHOLE_CLOSER = {**_CLOSER, '"': '"'}  # a whole value of these ends in its closer
JSON_WS = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, possibly none
_AFTER_TOKEN = frozenset(" \t\n\r,}]")  # what may follow a number or literal


def nests_deeper(text: str, start: int, end: int, value: object, limit: int) -> bool:
    """Whether the decoded `value` of text[start:end] nests more than `limit` levels deep:
    counting brackets settles most texts without walking the value."""
    if text.count("{", start, end) + text.count("[", start, end) <= limit:
        return False
    return deeper_than(value, limit)


def refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


# C-accelerated pieces of the standard decoder, strict like the scanner: raw control
# characters in strings, NaN and Infinity are refused
scan_value = json.JSONDecoder(parse_constant=refuse_constant).scan_once
_scan_string = json.decoder.scanstring
# the longest text `_rest_whole` hands the decoder at once, not in `scan_within`'s windows
_SHORT_PROBE: Final = 256
# the same, each object's members a list of its (key, value) pairs in order, repeated keys
# and all (`JsonScanner._rest_whole`: the scanner reads each member a key names)
_scan_pairs = json.JSONDecoder(object_pairs_hook=list, parse_constant=refuse_constant).scan_once


def _scan_key(text: str, pos: int) -> tuple[str, int]:
    """A key's string from after its opening quote, strict (`scan_within`'s shape)."""
    return _scan_string(text, pos, True)  # type: ignore[no-any-return]


# deepest nesting read (runtime/limits.py): deeper JSON is malformed input, since clients'
# own parsers refuse it


Member = tuple[str, int, int, object]  # key, where its value starts and ends, the value


def whole_members(text: str, pos: int, end: int) -> tuple[list[Member], int] | None:
    """The members of the object at `pos`, when it is whole before `end`: (key, value start,
    value end, decoded value) each, and the end of the object; None when it is not whole yet
    or not JSON the scanner reads the same way (see `JsonScanner._whole_value`). No value
    nests deeper than the scanner reads below the object.

    The C decoder reads keys and values, so a caller can act on an object that is already
    all there one member at a time instead of one character at a time.
    """
    if find_closer(text, "}", pos + 1, end) < 0:
        return None  # no `}` yet: not whole (while streaming, most calls' first read)
    members: list[Member] = []
    found = _OPEN_MEMBERS.match(text, pos + 1, end)
    if found is None:  # (a stop right at the `{`: nothing of the object is before `end`)
        return None
    if found.group(1):
        return members, found.end()
    i = found.end()
    room = MAX_DEPTH - 1
    while True:
        found = _KEY_COLON.match(text, i, end)  # a plain key: one step
        try:
            if found is not None:
                key, start = found.group(1), found.end()
            else:
                key, start = _escaped_key(text, i, end)
            value, i = scan_within(scan_value, text, start, end)
        except (StopIteration, ValueError, RecursionError):
            return None
        if i >= end:
            return None
        if text[start] in "{[" and nests_deeper(text, start, i, value, room):
            return None
        members.append((key, start, i, value))
        found = _NEXT_MEMBER.match(text, i, end)
        if found is None:
            return None  # (`12abc`: a number run into letters is refused here too)
        i = found.end()
        if found.group(1) == "}":
            return members, i


# after an object's `{`: whitespace, then its closer if it is empty
_OPEN_MEMBERS = re.compile(r"[ \t\n\r]*(\}?)")
# after a member's value: whitespace, then `}` (the end) or `,` and whitespace
_NEXT_MEMBER = re.compile(r"[ \t\n\r]*(?:(\})|,[ \t\n\r]*)")


def _escaped_key(text: str, i: int, end: int) -> tuple[str, int]:
    """A key written with escapes, and where its value starts; ValueError if none is."""
    if i >= end or text[i] != '"':
        raise ValueError("not a key")
    key, i = scan_within(_scan_key, text, i + 1, end)
    if i >= end:  # the key's closing quote lies past where the object may end
        raise ValueError("no key before the end")
    i = JSON_WS.match(text, i, end).end()  # type: ignore[union-attr]
    if i >= end or text[i] != ":":
        raise ValueError("no colon")
    return key, JSON_WS.match(text, i + 1, end).end()  # type: ignore[union-attr]


# `json.loads`' own scanner (NaN and Infinity taken, as `json.loads` takes them)
_loads_scan = json.JSONDecoder().scan_once


def loads_or_none(text: str) -> tuple[bool, object]:
    """json.loads that reports failure (also on nesting too deep) instead of raising.

    The decoder's C scanner is called as `json.loads` calls it (JSON whitespace around the
    value, nothing else after it), without the Python layers over it: a typed member's
    value (` 3`) is decoded once per member, on the hot path of many small calls."""
    if WHOLE_STRING.fullmatch(text):  # a plain string (a name, a key): no decoder needed
        return True, text[1:-1]
    try:
        value, end = _loads_scan(text, JSON_WS.match(text).end())  # type: ignore[union-attr]
    except (StopIteration, ValueError, RecursionError):
        return False, None
    if end != len(text) and JSON_WS.match(text, end).end() != len(text):  # type: ignore[union-attr]
        return False, None
    return True, value


def _nothing(text: str) -> None:
    """The `emit` of a spared scanner (`JsonScanner.spare`): it sends nothing until renewed."""


class JsonScanner:
    """An incremental scanner of one JSON value with safe-point emission."""

    __slots__ = (
        "state",
        "stack",
        "emit",
        "on_member",
        "on_value",
        "on_unwrap",
        "_pending",
        "_side",
        "_member_prefix",
        "_member_key",
        "_key_parts",
        "_token",
        "_escape",
        "_first",
        "_emit_depth",
        "_emit_in_string",
        "_string_is_key",
        "_out",
        "_unwrapping",
        "_drop_comma",
        "value_limit",
        "key_limit",
        "_value_chars",
        "keeps_scalars",
        "typed_only",
    )

    def __init__(
        self,
        emit: Callable[[str], None],
        on_member: Callable[[str], int] | None = None,
        on_value: Callable[[str, str], str | None] | None = None,
        on_unwrap: Callable[[str, str], str | None] | None = None,
    ) -> None:
        self.state = VALUE
        self.stack: list[str] = []
        self.emit = emit
        self.on_member = on_member
        self.on_value = on_value
        self.on_unwrap = on_unwrap
        self._unwrapping = False  # the member held is a wrapper (UNWRAP)
        self._drop_comma = False  # a wrapper wrote no member: the next one leads the object
        self._pending: list[str] = []
        self._side: list[str] | None = None
        self._member_prefix = ""
        self._member_key = ""
        self._key_parts: list[str] = []
        self._token: list[str] = []
        self._escape = ""
        self._first = True  # right after an opening bracket: the closer may follow
        self._emit_depth = 0
        self._emit_in_string = False
        self._string_is_key = False
        self._out: list[str] = []  # released text, handed to `emit` once per read
        # set by `on_member` for the member it is told of: a string value of that member
        # longer than this many characters, quotes included, is an error at exactly that
        # many (a call's name, read before the call is known: held whole, it would hold
        # the whole output); None: no bound
        self.value_limit: int | None = None
        # the same for a key of the outermost object (a name written as the key)
        self.key_limit: int | None = None
        self._value_chars = 0  # characters of the bounded string read so far
        # set by the owner when `on_value` gives a number, `true`, `false` or `null` back
        # as written: a whole one of a held member then goes out at once (`_member`,
        # `_colon_member`), not held and handed to `on_value`; the owner's `on_member`
        # answers STREAM or WITHHOLD for each key after the first and does nothing else,
        # so that a whole number or literal of such a key goes out without asking it
        # (`_member`, `_rest_whole`)
        self.keeps_scalars = False
        # set by the owner once it knows: the only keys of the outermost object its
        # `on_member` may answer other than STREAM (and for which it does anything); any
        # other key then streams without the call (`_member_start`). None: ask for each
        self.typed_only: frozenset[str] | None = None

    def spare(self) -> None:
        """Let go of the owner's callbacks, so that a scanner its owner keeps for the next
        value (`renew`) holds nothing of the owner: no reference cycle is left behind."""
        self.emit = _nothing
        self.on_member = self.on_value = self.on_unwrap = None

    def renew(
        self,
        emit: Callable[[str], None],
        on_member: Callable[[str], int] | None = None,
        on_value: Callable[[str, str], str | None] | None = None,
        on_unwrap: Callable[[str, str], str | None] | None = None,
    ) -> None:
        """Back to a new scanner's state, with these callbacks, after its loop read a whole
        value (DONE) and was spared (`spare`): that end left the rest as a new scanner has
        it (no open container, nothing pending or held aside, no string, escape or token
        begun, its output sent), so a reader of one object a call reads the next call's
        with it instead of making another."""
        self.emit = emit
        self.on_member = on_member
        self.on_value = on_value
        self.on_unwrap = on_unwrap
        self.state = VALUE
        self._first = True
        self._drop_comma = False  # (a wrapper that wrote no member may have set it)
        self.value_limit = self.key_limit = None  # (its owner's, for the value before)
        self.typed_only = None

    # -- queries ---------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.state == DONE

    @property
    def failed(self) -> bool:
        return self.state == ERROR

    @property
    def started(self) -> bool:
        return bool(self.stack) or self.state not in (VALUE, ERROR)

    @property
    def opened_only(self) -> bool:
        """Whether all read so far is the outermost opening bracket and whitespace: what
        comes next decides whether the text is the value a caller looks for."""
        return len(self.stack) == 1 and self._first and self.state in (KEY, VALUE)

    # -- emission --------------------------------------------------------------

    def _flush(self, text: str, in_string: bool = False) -> None:
        if self._pending:
            text = "".join(self._pending) + text
            self._pending.clear()
        if self._side is not None:
            self._side.append(text)
        else:
            self._out.append(text)
        self._emit_depth = len(self.stack)
        self._emit_in_string = in_string

    def _value_done(self) -> None:
        if self._side is not None and len(self.stack) == 1:
            self._finish_member(complete=True)
        self.state = AFTER if self.stack else DONE

    def _finish_member(self, complete: bool) -> None:
        """A held-back member of the outermost object is complete (or cut): release it."""
        side, self._side = self._side, None
        raw = "".join(side or ())
        if not complete:
            if not raw:
                raw = ""
            else:
                raw += self._tail(from_depth=1)
        unwrapping, self._unwrapping = self._unwrapping, False
        members = self.on_unwrap(self._member_key, raw) if (unwrapping and self.on_unwrap) else None
        if members is not None:  # the wrapper's members stand in its place, key and all
            self._out.append(members)
            self._drop_comma = not members
            text = None
        else:
            text = self.on_value(self._member_key, raw) if (raw and self.on_value) else None
        if text is not None:
            self._out.append(self._member_prefix + text)
        self._member_prefix = ""
        self._emit_depth = 1
        self._emit_in_string = False

    def _tail(self, from_depth: int = 0) -> str:
        closers = "".join(_CLOSER[c] for c in reversed(self.stack[from_depth : self._emit_depth]))
        return ('"' if self._emit_in_string else "") + closers

    # -- reading ---------------------------------------------------------------

    def resume(self) -> None:
        """Continue after a member value that another consumer read (see DELEGATE)."""
        if self.state == PAUSED:
            self.state = AFTER

    def read(self, text: str, pos: int, end: int) -> int:
        """Consume text[pos:end]; return where it stopped (at `end`, or early when done/paused).

        What it released goes to `emit` in one piece at the end. The loop tells the states
        apart; each one-step read is a small method of its own (`_key_quick`, `_key_rest`,
        `_string_value`, `_value_closed`): compiled, a method call costs little and a long
        loop of many locals costs on every delta. A string value's rest, every delta of a
        long one, is read here (interpreted, a call per delta costs more than it saves)."""
        quick = shortcuts.ON  # (read once: compiled, a module attribute is a generic look-up)
        if (
            self.typed_only is not None  # (set by the owners `_rest_whole` may serve)
            and text.find("}", pos, end) >= 0  # (what the read walks: linear; most have none)
            and quick
            and self.keeps_scalars
            and len(self.stack) == 1
        ):  # (the owner's object may end in this text: the rest of it in one step)
            pos = self._rest_whole(text, pos, end)
        while pos < end:
            state = self.state
            if state < STRING:  # VALUE, KEY, COLON, AFTER: structure (the states' order: above)
                char = text[pos]
                if char in " \t\n\r":
                    found: re.Match[str] | None = _WHITESPACE.match(text, pos, end)
                    assert found is not None
                    stop = found.end()
                    self._pending.append(text[pos:stop])
                    pos = stop
                    continue
                if state == KEY:
                    if char == '"':
                        if self.key_limit is None or len(self.stack) != 1:
                            if quick:  # a whole member in one step, else its key
                                new = self._key_quick(text, pos, end)
                                if new >= 0:
                                    pos = new
                                    if self.state == PAUSED:
                                        break
                                    continue
                            else:
                                found = _KEY_COLON.match(text, pos, end)
                                if found is not None:
                                    pos = self._key_colon(text, pos, found)
                                    if self.state == PAUSED:
                                        break
                                    continue
                        else:
                            found = _KEY_COLON.match(text, pos, min(end, pos + self.key_limit))
                            if found is not None:
                                pos = self._key_colon(text, pos, found)
                                if self.state == PAUSED:
                                    break
                                continue
                elif state == VALUE:
                    # (the outermost object itself is read member by member, for on_member)
                    if (self.stack or self.on_member is None) and quick:
                        if self.value_limit is None or not self._bounded(end - pos):
                            if char == '"':
                                new = self._string_value(text, pos, end)
                            elif _TOKEN_TO_END.match(text, pos, end) is not None:
                                new = -1  # (`_whole_value`'s answer: no end of it to see yet)
                            else:
                                new = self._whole_value(text, pos, end)
                            if new >= 0:
                                pos = new
                                continue
                    elif char == "{" and quick and not self.stack:
                        pos = self._object_opens(text, pos, end)  # (the outermost object)
                        continue
                elif state == COLON and char == ":" and quick:
                    found = _COLON_MEMBER.match(text, pos, end)
                    assert found is not None
                    pos = self._colon_member(text, pos, found, end)
                    if self.state == PAUSED:
                        break
                    continue
                elif state == AFTER and char == ",":
                    pos = self._after_comma(text, pos, end, quick)
                    if self.state == PAUSED:
                        break
                    continue
            elif state == STRING:
                # (no bound applies: `_string`'s tests, without its call)
                if (
                    len(self.stack) != 1
                    or (self.key_limit if self._string_is_key else self.value_limit) is None
                ):
                    if self._escape or not quick:
                        pos = self._string_chars(text, pos, end)
                    elif self._string_is_key:
                        pos = self._key_rest(text, pos, end)
                        if self.state == PAUSED:
                            break
                    else:  # a value: its rest, to its quote or to the end (inline: every
                        # delta of a long string; `_string_chars`, without the call)
                        found = _STRING_REST.match(text, pos, end)
                        assert found is not None
                        rest_end = found.end(1)  # (group 2, its quote, is the next character)
                        if rest_end < end and text[rest_end] == '"':
                            pos = self._value_closed(text, pos, rest_end + 1, end)
                            if self.state == PAUSED:
                                break
                            continue
                        if rest_end > pos:
                            chunk = text[pos:rest_end]
                            pos = rest_end
                            pending = self._pending
                            if pending:
                                chunk = "".join(pending) + chunk
                                pending.clear()
                            side = self._side
                            (self._out if side is None else side).append(chunk)
                            self._emit_depth = len(self.stack)
                            self._emit_in_string = True
                            if pos == end:
                                continue
                        if text[pos] == "\\":  # an escape the end cuts (or a bad one):
                            self._escape = "\\"  # as `_string_chars` goes on with it
                            pos = self._continue_escape(text, pos + 1, end)
                            continue
                        pos = self._string_chars(text, pos, end)
                else:
                    pos = self._string(text, pos, end)
                continue
            elif state >= DONE:  # DONE, ERROR, PAUSED
                break
            else:  # NUMBER or LITERAL
                char = text[pos]
                if (state == NUMBER and char in _NUMBER_CHARS) or (
                    state == LITERAL and char.isalpha()
                ):
                    self._token.append(char)
                    pos += 1
                    continue
                if char not in " \t\n\r,}]":  # `0x1`, `12abc`: not a number that ended
                    self.state = ERROR
                    break
                if not self._end_token():
                    break
                continue
            pos += 1
            if state == VALUE:
                self._value_start(char)
            elif state == KEY:
                if char == '"':
                    self._pending.append(char)
                    self._key_parts.clear()
                    self._string_is_key = True
                    self.state = STRING
                    self._value_chars = 1
                elif char == "}" and self._first:
                    self._close_container(char)
                else:
                    self.state = ERROR
            elif state == COLON:
                if char == ":":
                    self._pending.append(char)
                    self.state = VALUE
                    self._first = False
                    if len(self.stack) == 1 and self.on_member is not None:
                        self._member_start()
                        if self.state == PAUSED:
                            break
                else:
                    self.state = ERROR
            elif state == AFTER:
                top = self.stack[-1]
                if char == ",":
                    self._pending.append(char)
                    self.state = KEY if top == "{" else VALUE
                    self._first = False
                elif char == _CLOSER[top]:
                    self._close_container(char)
                else:
                    self.state = ERROR
            if self.state == ERROR:
                pos -= 1
                break
        if self._out:
            self.emit("".join(self._out))
            self._out.clear()
        return pos

    def _rest_whole(self, text: str, pos: int, end: int) -> int:
        """The rest of the outermost object, when it ends before `end`, read in one step by
        the C decoder: where it ends (DONE), or `pos` when the loop must read it. Taken
        when the read begins inside a streamed string value, after a value or after its
        comma, the owner having told which keys it types (`typed_only`) and that it gives
        their numbers and literals back as written (`keeps_scalars`): then the loop would
        release the rest as written, with its pending text first, and ask `on_member` of
        each typed key, whose number or literal goes out as it is. Anything else (a typed
        key's string or container, which typing may change, a raw control character the
        loop escapes, JSON it refuses, deeper nesting than it reads): `pos`, for the loop."""
        state = self.state
        if (
            self._side is not None
            or self._escape
            or self._drop_comma
            or self.value_limit is not None
            or self.key_limit is not None
        ):
            return pos
        pending = "".join(self._pending)
        if state == STRING and not self._string_is_key:
            if pending:
                return pos
            head, asked = '{"":"', 1  # (its member asked already, its text out)
        elif state == AFTER:
            head, asked = '{"":0' + pending, 1
        elif state <= AFTER or state == STRING:  # (VALUE, KEY, COLON; a key's STRING)
            if pending.lstrip(" \t\n\r")[:1] == ",":
                head, asked = '{"":0' + pending, 1
            elif state == VALUE:  # (the first member, asked at its colon)
                head, asked = "{" + pending, 0
            else:  # the first key, not asked yet (it may be a wrapper): the loop tells
                return pos
            if state == VALUE:
                asked += 1  # (its key, asked at its colon)
        else:
            return pos
        probe = head + text[pos:end]
        try:  # (a delta's text: one decoder call, whose error costs what it is long)
            if len(probe) <= _SHORT_PROBE:
                found, stop = _scan_pairs(probe, 0)
            else:
                found, stop = scan_within(_scan_pairs, probe, 0, len(probe))
        except (StopIteration, ValueError, RecursionError):
            return pos
        close = stop - len(head) + pos  # (the object's `}` ends it)
        if close - pos >= MAX_DEPTH and (
            text.count("{", pos, close) + text.count("[", pos, close) >= MAX_DEPTH
        ):
            return pos  # (maybe deeper than the loop reads: it tells)
        typed_only = self.typed_only
        assert typed_only is not None
        last = self._member_key
        for key, value in found[asked:]:  # (`keeps_scalars`: a typed key's number or
            last = key  # literal goes out as written, no `on_member` asked of it)
            if key in typed_only and isinstance(value, (str, list)):
                return pos  # (typing may change it: the loop holds it for `on_value`)
        self._member_key = last
        self._out.append(pending + text[pos:close])
        self._pending.clear()
        self.stack.pop()
        self.state = DONE
        self._first = False
        self._emit_depth = 0
        self._emit_in_string = False
        return close

    def _key_quick(self, text: str, pos: int, end: int) -> int:
        """At a key's opening quote (no bound on it): a whole member in one step, else its
        plain key and colon, else a plain key the end cuts, read to the end (`_KEY_BEGUN`;
        `_string_chars` goes on with it). -1: none of these, for the character loop.
        (`_MEMBER` matches wherever `_KEY_COLON` does: its value part may be empty.)"""
        found: re.Match[str] | None = _MEMBER.match(text, pos, end)
        if found is not None:
            start = found.start(2)
            if start < 0:  # (its value not whole yet: a string's begins, if it is one)
                pos = self._key_colon(text, pos, found)
                if pos < end and text[pos] == '"':
                    return self._next_value(text, pos, end)
                return pos
            return self._member(text, pos, found, start, end)
        begun: re.Match[str] | None = _KEY_BEGUN.match(text, pos, end)
        if begun is None:
            return -1
        key_end = begun.end(1)  # (group 2, the closing quote, is there when this is short
        self._pending.append(text[pos:end])  # of the end: group 1 runs to it otherwise)
        parts = self._key_parts
        parts.clear()
        if key_end > pos + 1:
            parts.append(text[pos + 1 : key_end])
        self._string_is_key = True
        self._value_chars = 1
        if key_end == end:
            self.state = STRING
        else:  # (its end, then whitespace: in COLON)
            parts.insert(0, '"')
            parts.append('"')
            self.state = COLON
        return end

    def _key_rest(self, text: str, pos: int, end: int) -> int:
        """The rest of a key read piece by piece: when it is plain and its colon follows,
        `_string_chars`, COLON and `_colon_member` in one step; else `_string_chars`."""
        found: re.Match[str] | None = _KEY_END.match(text, pos, end)
        if found is None:
            return self._string_chars(text, pos, end)
        colon = found.end() - 1
        key_end = found.end(1)
        self._pending.append(text[pos:colon])
        parts = self._key_parts
        parts.insert(0, '"')
        if key_end > pos:
            parts.append(text[pos:key_end])
        parts.append('"')
        self.state = COLON
        member: re.Match[str] | None = _COLON_MEMBER.match(text, colon, end)
        assert member is not None
        pos = self._colon_member(text, colon, member, end)
        if pos < end and text[pos] == '"':
            if self.state == KEY:  # (its value whole, and a comma: the next key)
                return self._next_key(text, pos, end)
            return self._next_value(text, pos, end)
        return pos

    def _next_value(self, text: str, pos: int, end: int) -> int:
        """After a key's colon and whitespace (`_key_colon`, `_colon_member`; the shortcuts
        on), at a quote: a string value no bound applies to, as the loop would read it
        next (`_string_value`), without going round the loop; else `pos`."""
        if (
            self.state == VALUE
            and self.value_limit is None
            and (self.stack or self.on_member is None)
        ):
            new = self._string_value(text, pos, end)
            if new >= 0:
                return new
        return pos

    def _next_key(self, text: str, pos: int, end: int) -> int:
        """After a comma in an object (state KEY, the shortcuts on), at a quote: the next
        key, when no bound applies to it, as the loop would read it next (`_key_quick`),
        without going round the loop; else `pos`, for the loop."""
        if self.key_limit is None or len(self.stack) != 1:
            new = self._key_quick(text, pos, end)
            if new >= 0:
                return new
        return pos

    def _after_comma(self, text: str, pos: int, end: int, quick: bool) -> int:
        """A comma after a value and its whitespace (state AFTER); with the shortcuts on,
        then the next key (`_next_key`)."""
        found: re.Match[str] | None = _COMMA.match(text, pos, end)
        assert found is not None
        stop = found.end()
        self._pending.append(text[pos:stop])
        self._first = False
        if self.stack[-1] != "{":
            self.state = VALUE
            return stop
        self.state = KEY
        if quick and stop < end and text[stop] == '"':
            return self._next_key(text, stop, end)
        return stop

    def _string_value(self, text: str, pos: int, end: int) -> int:
        """A string value at its opening quote (no bound on it): whole, it goes out at once;
        one the text does not close yet goes out with its quote and, when plain to the end,
        its characters. -1: for the character loop (`_whole_value`'s answer)."""
        found: re.Match[str] | None = WHOLE_STRING.match(text, pos, end)
        if found is not None:
            stop = found.end()
            self._flush(text[pos:stop])
            self._value_done()
            return stop
        # a string the text does not close yet: not whole (`_whole_value`'s first test,
        # without the call); its quote goes out as `_value_start` sends it, its characters
        # next, in STRING
        if find_closer(text, '"', pos + 1, end) >= 0:
            return self._whole_value(text, pos, end)
        self._string_is_key = False
        self.state = STRING
        self._value_chars = 1
        pending = self._pending  # (`_flush('"', True)`)
        quote = '"'
        if pending:
            quote = "".join(pending) + quote
            pending.clear()
        pos += 1
        if pos < end and (self.value_limit is None or len(self.stack) != 1):
            # no bound: the rest, when plain to the end, goes with its quote
            # (`_string_chars`, without the call)
            if _PLAIN_TO_END.match(text, pos, end) is not None:
                quote += text[pos:end]
                pos = end
        side = self._side
        (self._out if side is None else side).append(quote)
        self._emit_depth = len(self.stack)
        self._emit_in_string = True
        return pos

    def _value_closed(self, text: str, pos: int, stop: int, end: int) -> int:
        """A string value's rest text[pos:stop], its closing quote last, read in one step
        (`_string_chars`, without its call), then a comma, if one follows, as the loop
        would read it next (`_after_comma`)."""
        chunk = text[pos:stop]
        pending = self._pending
        if pending:
            chunk = "".join(pending) + chunk
            pending.clear()
        side = self._side
        (self._out if side is None else side).append(chunk)
        self._emit_depth = len(self.stack)
        self._emit_in_string = False
        if side is not None and len(self.stack) == 1:
            self._finish_member(complete=True)
        if not self.stack:
            self.state = DONE
            return stop
        self.state = AFTER
        if stop < end:  # (the loop's next step, without it)
            char = text[stop]
            if char == ",":
                return self._after_comma(text, stop, end, True)
            if char == _CLOSER[self.stack[-1]]:
                self._close_container(char)
                return stop + 1
        return stop

    def _whole_value(self, text: str, pos: int, end: int) -> int:
        """A value already whole before `end`, read by the standard library's C decoder.

        It goes out as the character loop would send it, through the same `_flush` and
        `_value_done` (so a withheld member is still typed by `on_value`); only the reading
        is skipped. -1 when it is not whole yet, or not the plain JSON the loop reads the
        same way (control characters, NaN, a number run into letters, nesting deeper than
        MAX_DEPTH): then the loop reads it.
        """
        first = text[pos]
        closer = _WHOLE_CLOSER.get(first)
        if closer is not None and find_closer(text, closer, pos + 1, end) < 0:
            return -1  # cannot be whole yet (a value cut by the delta: no decoder error to raise)
        try:
            value, stop = scan_within(scan_value, text, pos, end)
        except (StopIteration, ValueError, RecursionError):
            return -1
        if first in '"{[':
            if stop > end:
                return -1
            if first != '"' and nests_deeper(text, pos, stop, value, MAX_DEPTH - len(self.stack)):
                return -1
        elif stop >= end or text[stop] not in _AFTER_TOKEN:
            return -1  # `12` may go on, `12abc` is an error the loop reports at `a`
        self._flush(text[pos:stop])
        self._value_done()
        return stop

    def _member(self, text: str, pos: int, found: re.Match[str], start: int, end: int) -> int:
        """A whole member at `pos` (`_MEMBER`'s groups: 1 its plain key, 2 its whole scalar
        value, at `start`, 3 empty, where a comma and its whitespace may follow), read in
        one step: what `_key_colon`, the value's shortcut in VALUE and a comma in AFTER do
        one by one. A value that the member's `value_limit` bounds (or a member `on_member`
        pauses) is left where it starts, for the loop."""
        self._pending.append(text[pos:start])
        self.state = VALUE
        self._first = False
        if len(self.stack) == 1 and self.on_member is not None:
            key = text[pos + 1 : found.end(1)]
            typed_only = self.typed_only  # (`_member_start`'s first test, without its call)
            if typed_only is not None and key not in typed_only and not self._drop_comma:
                self._member_key = key
            elif (
                typed_only is not None
                and self.keeps_scalars
                and text[start] != '"'
                and not self._drop_comma
            ):
                # a typed key's whole number or literal, the first key told: the owner
                # gives it back as written and asks nothing of it (`keeps_scalars`)
                self._member_key = key
            elif (
                self.keeps_scalars and text[start] != '"' and not self._drop_comma
            ):  # a whole number or literal: streamed, or held and given back as written
                self._member_key = key  # (`_held_value`), it goes out the same: no side
                mode = self.on_member(key)  # is set up for it (`_member_start`, without)
                limit = self.value_limit  # (unless a bound may apply: as below)
                if (mode != STREAM and mode != WITHHOLD) or limit is not None:
                    if mode != STREAM:
                        self._answer(mode)
                    if self.state == PAUSED or (
                        limit is not None
                        and end - start > limit
                        and self._side is not None
                        and len(self.stack) == 1
                    ):
                        return start
            else:
                self._member_start(key)
                limit = self.value_limit  # (`_bounded`, without its call)
                if self.state == PAUSED or (
                    limit is not None
                    and end - start > limit
                    and self._side is not None
                    and len(self.stack) == 1
                ):
                    return start
        value_end = found.end(2)  # (group 3, empty, ends there too: a comma may follow)
        value = text[start:value_end]  # (`_flush`, then `_value_done`, without their calls)
        if self._side is None:
            pending = self._pending
            if pending:
                value = "".join(pending) + value
                pending.clear()
            self._out.append(value)
            self._emit_depth = len(self.stack)
            self._emit_in_string = False
        else:
            self._held_value(value)
        self.state = AFTER if self.stack else DONE
        stop = found.end()
        if value_end == stop:
            if stop < end and text[stop] == "}":  # (the loop's next step in AFTER, at once:
                self._close_container("}")  # a member's object closes right after it)
                return stop + 1
            return stop
        self._pending.append(text[value_end:stop])
        self.state = KEY
        return stop

    def _colon_member(self, text: str, colon: int, found: re.Match[str], end: int) -> int:
        """The colon at `colon` after a key read piece by piece, as the loop reads it
        (`on_member` told before the whitespace after it is read), then its whitespace and,
        when whole, its scalar value and a comma (`_COLON_MEMBER`'s groups) as `_member`
        reads them, in one step. Where it stopped: after the colon when `on_member` pauses,
        at the value when it is not whole or its `value_limit` bounds it, for the loop."""
        self._pending.append(":")
        self.state = VALUE
        self._first = False
        if len(self.stack) == 1 and self.on_member is not None:
            self._member_start()
            if self.state == PAUSED:
                return colon + 1
        start = found.start(1)
        value_at = start if start >= 0 else found.end()
        if value_at > colon + 1:
            self._pending.append(text[colon + 1 : value_at])
        if start < 0:
            return value_at
        limit = self.value_limit  # (`_bounded`, without its call)
        if limit is not None and end - start > limit and self._side is not None:
            if len(self.stack) == 1:
                return start
        value_end = found.end(1)  # (group 2, empty, ends there too: a comma may follow)
        value = text[start:value_end]  # (`_flush`, then `_value_done`, without their calls)
        if self._side is None:
            pending = self._pending
            if pending:
                value = "".join(pending) + value
                pending.clear()
            self._out.append(value)
            self._emit_depth = len(self.stack)
            self._emit_in_string = False
        else:
            self._held_value(value)
        self.state = AFTER if self.stack else DONE
        stop = found.end()
        if value_end == stop:
            if stop < end and text[stop] == "}":  # (the loop's next step in AFTER, at once:
                self._close_container("}")  # a member's object closes right after it)
                return stop + 1
            return stop
        self._pending.append(text[value_end:stop])
        self.state = KEY
        return stop

    def _held_value(self, value: str) -> None:
        """A whole scalar value (`_member`, `_colon_member`) while a member is held aside:
        `_flush`, then, in the outermost object, `_finish_member`. A number or literal of
        the held member itself goes out at once, after its key, when `on_value` would give
        it back as written (`keeps_scalars`), without being held and handed to it."""
        side = self._side
        assert side is not None
        quoted = value[0] == '"'
        pending = self._pending
        if pending:
            value = "".join(pending) + value
            pending.clear()
        if len(self.stack) != 1:
            side.append(value)
            self._emit_depth = len(self.stack)
            self._emit_in_string = False
            return
        if self.keeps_scalars and not quoted and not side and not self._unwrapping and shortcuts.ON:
            self._side = None  # (`_finish_member`: `on_value` gives `value` back)
            self._out.append(self._member_prefix + value)
            self._member_prefix = ""
        else:
            side.append(value)
            self._finish_member(complete=True)
        self._emit_depth = 1
        self._emit_in_string = False

    def _key_colon(self, text: str, pos: int, found: re.Match[str]) -> int:
        """A whole plain key at `pos` and its colon (`_KEY_COLON`'s or `_MEMBER`'s match,
        group 1 the key), read in one step."""
        stop = found.end()
        self._pending.append(text[pos:stop])
        self.state = VALUE
        self._first = False
        if len(self.stack) == 1 and self.on_member is not None:
            key = text[pos + 1 : found.end(1)]  # (a plain key: its text is the key)
            typed_only = self.typed_only  # (`_member_start`'s first test, without its call)
            if typed_only is not None and key not in typed_only and not self._drop_comma:
                self._member_key = key
            else:
                self._member_start(key)
        return stop

    def _member_start(self, key: str | None = None) -> None:
        """A member of the outermost object begins: its key (read by `_key_colon`, else
        from `_key_parts`) goes to `on_member`, whose answer decides how its value is read;
        not when the owner has told it once that this key streams (`typed_only`)."""
        if key is None:
            raw = "".join(self._key_parts)
            if "\\" in raw:
                ok, key = loads_or_none(raw)
                if not ok or not isinstance(key, str):
                    key = ""
            else:
                key = raw[1:-1]
        self._member_key = key  # type: ignore[assignment]
        if self.typed_only is not None and key not in self.typed_only and not self._drop_comma:
            return  # (`on_member` would answer STREAM, and do nothing else)
        assert self.on_member is not None
        if self._drop_comma:  # the member before wrote nothing: no comma before this one
            self._drop_comma = False
            lead = "".join(self._pending).lstrip(" \t\n\r")
            self._pending[:] = [lead[1:].lstrip(" \t\n\r") if lead[:1] == "," else lead]
        mode = self.on_member(key)  # type: ignore[arg-type]
        if mode != STREAM:
            self._answer(mode)

    def _answer(self, mode: int) -> None:
        """How the member begun is read, as `on_member` answered (not STREAM)."""
        if mode == WITHHOLD or mode == UNWRAP:
            self._member_prefix = "".join(self._pending)
            self._pending.clear()
            self._side = []
            self._unwrapping = mode == UNWRAP
        elif mode == DELEGATE:
            self._pending.clear()
            self.state = PAUSED

    def _value_start(self, char: str) -> None:
        if char == "{" or char == "[":
            if len(self.stack) >= MAX_DEPTH:
                self.state = ERROR
                return
            self.stack.append(char)
            self._flush(char)
            self.state = KEY if char == "{" else VALUE
            self._first = True
        elif char == '"':
            self._string_is_key = False
            self.state = STRING
            self._value_chars = 1
            self._flush(char, in_string=True)
        elif char == "-" or char.isdigit():
            self._token = [char]
            self.state = NUMBER
        elif char in "tfn":
            self._token = [char]
            self.state = LITERAL
        elif char == "]" and self._first and self.stack and self.stack[-1] == "[":
            self._close_container(char)
        else:
            self.state = ERROR

    def _close_container(self, char: str) -> None:
        stack = self.stack
        stack.pop()
        side = self._side
        if side is not None and not stack:
            # the outermost object closes while a member is held: cannot happen for a
            # complete member, so this is a cut member followed by the closer
            self._finish_member(complete=False)
            side = self._side
        pending = self._pending  # (`_flush(char)`, then `_value_done()`, without their calls)
        if pending:
            char = "".join(pending) + char
            pending.clear()
        depth = len(stack)
        if side is None:
            self._out.append(char)
        else:
            side.append(char)
            if depth == 1:
                self._emit_depth = 1
                self._emit_in_string = False
                self._finish_member(complete=True)
        self._emit_depth = depth
        self._emit_in_string = False
        self.state = AFTER if depth else DONE

    def _object_opens(self, text: str, pos: int, end: int) -> int:
        """The outermost object's `{` at `pos` (the shortcuts on), as `_value_start` reads
        it, then its first key when one follows, as the loop would read it next
        (`_next_key`), without going round the loop."""
        self.stack.append("{")  # (no deeper than MAX_DEPTH: nothing is open)
        pending = self._pending  # (`_flush("{")`)
        char = "{"
        if pending:
            char = "".join(pending) + char
            pending.clear()
        side = self._side
        (self._out if side is None else side).append(char)
        self._emit_depth = 1
        self._emit_in_string = False
        self.state = KEY
        self._first = True
        pos += 1
        if pos < end and text[pos] == '"':
            return self._next_key(text, pos, end)
        return pos

    def _end_token(self) -> bool:
        """A number or literal ended; release it if valid. False on a syntax error."""
        token = "".join(self._token)
        valid = bool(_NUMBER.match(token)) if self.state == NUMBER else token in _LITERALS
        if not valid:
            self.state = ERROR
            return False
        self._token = []
        side = self._side
        if (
            side is not None
            and not side
            and len(self.stack) == 1
            and self.keeps_scalars
            and not self._unwrapping
            and shortcuts.ON
        ):  # a held member's number or literal: as `_held_value` sends it, at once
            pending = self._pending
            if pending:
                token = "".join(pending) + token
                pending.clear()
            self._side = None
            self._out.append(self._member_prefix + token)
            self._member_prefix = ""
            self._emit_depth = 1
            self._emit_in_string = False
            self.state = AFTER
            return True
        self._flush(token)
        self._value_done()
        return True

    def _bounded(self, length: int) -> bool:
        """Whether a value read now is a member value bounded by `value_limit` that
        `length` characters could take past it: then the character loop reads it, and
        stops at the bound."""
        limit = self.value_limit
        return (
            limit is not None and self._side is not None and len(self.stack) == 1 and length > limit
        )

    def _string(self, text: str, pos: int, end: int) -> int:
        """Consume string characters; release whole characters as they come."""
        # the bound on it: a key or a held member value of the outermost object, when one is
        # set for it
        if len(self.stack) != 1:
            return self._string_chars(text, pos, end)
        if self._string_is_key:
            limit = self.key_limit
        else:
            limit = self.value_limit if self._side is not None else None
        if limit is None:
            return self._string_chars(text, pos, end)
        start = pos  # a bounded key or member value: read no further than its bound
        pos = self._string_chars(text, pos, min(end, pos + limit - self._value_chars))
        self._value_chars += pos - start
        if self.state == STRING and self._value_chars >= limit:
            self.state = ERROR  # (still open at its bound: too long to be one)
        return pos

    def _string_chars(self, text: str, pos: int, end: int) -> int:
        is_key = self._string_is_key
        if self._escape:
            pos = self._continue_escape(text, pos, end)
            if self._escape or pos >= end or self.state != STRING:
                return pos
        found = _PLAIN_STRING.match(text, pos, end)
        if found is not None:
            chunk = found.group()
            pos = found.end()
            if is_key:
                self._pending.append(chunk)
                self._key_parts.append(chunk)
            else:  # `_flush(chunk, in_string=True)`, without the call (every delta of a string)
                pending = self._pending
                if pending:
                    chunk = "".join(pending) + chunk
                    pending.clear()
                side = self._side
                (self._out if side is None else side).append(chunk)
                self._emit_depth = len(self.stack)
                self._emit_in_string = True
            if pos >= end:
                return pos
        char = text[pos]
        pos += 1
        if char == '"':
            if is_key:
                self._pending.append(char)
                self._key_parts.insert(0, '"')
                self._key_parts.append('"')
                self.state = COLON
            else:  # `_flush(char)`, then `_value_done()`, without their calls (the end
                pending = self._pending  # of every string value)
                if pending:
                    char = "".join(pending) + char
                    pending.clear()
                side = self._side
                (self._out if side is None else side).append(char)
                self._emit_depth = len(self.stack)
                self._emit_in_string = False
                if side is not None and len(self.stack) == 1:
                    self._finish_member(complete=True)
                self.state = AFTER if self.stack else DONE
        elif char == "\\":
            self._escape = "\\"
            pos = self._continue_escape(text, pos, end)
        else:  # a raw control character: write it escaped
            escaped = json.dumps(char)[1:-1]
            if is_key:
                self._pending.append(escaped)
                self._key_parts.append(escaped)
            else:
                self._flush(escaped, in_string=True)
        return pos

    def _continue_escape(self, text: str, pos: int, end: int) -> int:
        """Collect an escape sequence; release it only once it is whole and valid."""
        esc = self._escape
        while pos < end:
            char = text[pos]
            if len(esc) == 1:
                if char == "u" or char in _SIMPLE_ESCAPES:
                    esc += char
                    pos += 1
                    if char != "u":
                        break
                else:
                    self._escape = ""
                    self.state = ERROR
                    return pos
            elif char in _HEX:
                esc += char
                pos += 1
                if len(esc) == 6:
                    break
            else:
                self._escape = ""
                self.state = ERROR
                return pos
        whole = len(esc) == 6 or (len(esc) == 2 and esc[1] != "u")
        if not whole:
            self._escape = esc
            return pos
        self._escape = ""
        if self._string_is_key:
            self._pending.append(esc)
            self._key_parts.append(esc)
        else:
            self._flush(esc, in_string=True)
        return pos

    # -- the end -----------------------------------------------------------------

    def close(self) -> str:
        """End of input: release what is whole, drop what is not; return the closing tail.

        The tail is returned, not emitted, so the caller decides where it goes.
        """
        if self.state in (NUMBER, LITERAL):
            self._end_token()
        if self._side is not None:
            self._finish_member(complete=False)
        self._pending.clear()
        self._escape = ""
        if self._out:
            self.emit("".join(self._out))
            self._out.clear()
        tail = self._tail()
        if self.state not in (ERROR, DONE):
            self.state = DONE
        return tail
