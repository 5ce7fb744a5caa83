"""The element-per-argument dialect: `PREFIX<key>value PREFIX</key>`, elements nestable.

MiniMax-M3 writes each argument as an element named by its key, every tag behind a fixed
prefix (`]<]minimax[>[`). A value is either text or child elements:
- children make an object, or an array when the schema says array (children's names are
  then ignored: the template writes `<item>`) or allows both and every child is `<item>`; repeated child names collect into a list;
- text mixed with children goes under `$text` (`$$text` when a child already has that name);
- an empty element is `[]` or `{}` for an array or object schema that does not allow a
  string; leaf text is typed by its schema (no schema: text).

A top-level value that starts with text and whose schema allows only strings (or that has
no schema) streams as a JSON string as it arrives; a child element inside such a value is
its text. Any other value is buffered whole and converted once its closing tag arrives, so
typed values are never streamed early. Whitespace between arguments, and any stray text
there, is markup. A tag whose name is blank or starts with `/`, or nesting deeper than
`max_depth` (at most `limits.MAX_DEPTH`), is text of the element around it; a tag opener with no `>` within 256
characters is no tag (between arguments the reading goes on right after it).

A closer of the call or the section ends an open value, at any depth; a call opener inside a
value waits for the marker that decides it (`OpenerInValue`, docs/policies.md, "Markers
inside values"): a new call ends the value before it, else it is the value's text.
"""

from __future__ import annotations

from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), in C
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence

from .batched import MarkupArgs
from .coerce import coerce_text, json_text
from .in_value import opener_in_value
from .markers import Markers, markers
from .limits import MAX_DEPTH, deeper_than
from .protocol import Call, DialectRow, RenderError, Sink, render_value_text, the_call
from .protocol import too_deep_to_write
from .schemas import item_schema, property_schema, schema_types, streams_as_text
from .spec import XmlElements
from . import shortcuts
from .unwrap import members_text, wrapped_text, write_members
from .unicode import strip_space

BETWEEN, TAG, START, TEXT, TREE, DONE = range(6)
_MAX_NAME = 256
_MAX_NAMES = 256  # element names remembered per tool (`XmlElementsReader._start`)
_MAX_WRITTEN = 64  # typed leaf values remembered per element name, each at most
_MAX_WRITTEN_TEXT = 64  # this long
_WINDOW = 256  # the first span searched for an element's end (`_body_end`)


def _leaf_first(prefix: str, stops: Markers) -> str:
    """The one character every closing tag (`PREFIX</`) and stop marker begins with, ""
    when they begin with several: a streamed value's text without it holds no closer, stop
    nor the start of one, so `_leaf` would take all of it as value text (one `str.find`)."""
    firsts = {prefix[0] if prefix else "<", *stops.firsts}
    return firsts.pop() if len(firsts) == 1 else ""


@lru_cache(maxsize=256)
def _after(marker: str, literals: tuple[str, ...]) -> frozenset[str]:
    """The characters that follow `marker` in the longer markers of `literals` it begins:
    a tag opener followed by any other is decided, with no `Markers.undecided` to ask."""
    size = len(marker)
    return frozenset(lit[size] for lit in literals if len(lit) > size and lit.startswith(marker))


def _json_string_body(text: str) -> str:
    return encode_basestring(text)[1:-1]


@dataclass
class _Node:
    name: str
    texts: list[str] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)


class XmlElementsReader(MarkupArgs):
    """Reads argument elements until a marker that follows them; writes the arguments JSON."""

    __slots__ = (
        "_open",
        "_between",
        "_count",
        "_key",
        "_schema",
        "_closer",
        "_stop_markers",
        "_held",
        "_buffer",
        "_stack",
        "_unwraps",
        "_wrapper",
        "_first",
        "_in_value",
        "_max_depth",
        "_memo_of",
        "_memo",
        "_key_text",
        "_as_text",
        "_after_open",
        "_written",
        "_first_char",
    )

    item: XmlElements
    _written: dict[str, str]  # (set by `_start`, read by `_close_tree`)

    def __init__(self, item: XmlElements, stops: tuple[str, ...], sink: Sink) -> None:
        super().__init__(item, sink, BETWEEN)
        self._open = item.prefix + "<"
        self._between = markers((self._open, *stops))
        self._after_open = _after(self._open, self._between.literals)
        self._count = 0
        self._key = ""
        self._schema: dict | None = None
        self._closer = ""
        self._stop_markers = markers(stops)
        self._held: list[str] = []  # whitespace at the start of a value, or buffered text
        self._buffer: list[str] = []  # a typed or nested value's raw body
        self._stack: list[str] = []
        self._unwraps = sink.unwraps
        self._wrapper = False  # the element being read is a wrapper (`runtime/unwrap.py`)
        self._first = True  # no element read yet: only the first may be a wrapper
        self._in_value = opener_in_value(stops, (item.prefix + "</",), (self._open,))
        self._max_depth = min(item.max_depth, MAX_DEPTH)  # (the grammar's, within the limit)
        # what an element name reads as, kept by the parser from call to call of one tool
        # (`Sink.tool_memo`; a sink without one works it out per element)
        self._memo_of = getattr(sink, "tool_memo", None)
        self._memo: dict | None = None  # (`_memo_of`'s answer, at the first element)
        self._key_text = ""  # the key as the arguments write it: `"name": `
        self._as_text = True  # the value streams as text when it starts with text
        self._first_char = _leaf_first(item.prefix, self._stop_markers) if shortcuts.ON else ""

    # -- the push interface ----------------------------------------------------------

    def _read(self, text: str, pos: int, eof: bool) -> int:
        # a state that completes falls through to the next one's step while text is left
        end = len(text)
        first = self._first_char
        if first and self.state == TEXT and not eof and text.find(first, pos) < 0:
            # a streamed value going on with no closer, stop marker nor the start of one in
            # the new text: all of it is value text (`_leaf`, where nothing ends or waits)
            self.emit(_json_string_body(text[pos:]))
            return end
        while pos < end and not self.done:
            state = self.state
            if state == TEXT:
                pos = self._leaf(text, pos, eof)
                if self.state == TEXT:
                    return pos
                continue
            if state == BETWEEN:
                between = self._between
                found = between.find(text, pos)  # (`Markers.search`, in line)
                if found is None:
                    return end - (0 if eof else between.held(text, pos))
                at, lit = found.start(), found.group()
                if (
                    lit in between.growing
                    and (
                        lit != self._open
                        or at + len(lit) >= end
                        or text[at + len(lit)] in self._after_open
                    )
                    and between.undecided(text, at, lit, eof)
                ):
                    # `PREFIX<` may still become `PREFIX</invoke>`: wait; at the end of the
                    # output, `PREFIX</inv` is that marker cut short: markup
                    return end if eof else at
                if lit != self._open:
                    self._finish()
                    return at
                pos = at + len(lit)
                self.state = state = TAG
                if pos == end:
                    break
            if state == TAG:
                close = text.find(">", pos, pos + _MAX_NAME + 1)
                if close < 0:
                    if end - pos > _MAX_NAME:  # no `>` near enough: not a tag, read on after it
                        self.state = BETWEEN
                        continue
                    return end if eof else pos
                name = text[pos:close]
                pos = close + 1
                if not strip_space(name) or name.startswith("/"):
                    self.state = BETWEEN  # a stray closing tag or junk between arguments
                    continue
                self._start(name)
                if pos == end:
                    break
                state = START
            if state == START:
                pos = self._decide(text, pos, eof)
                if self.state == START:
                    return pos
            else:  # TREE
                pos = self._tree(text, pos, eof)
                if self.state == TREE:
                    return pos
        if eof and not self.done:
            self._finish()
        return pos

    def close(self) -> None:
        """End of input or of the call: keep an open argument, close the object."""
        if not self.done:
            self._finish()
        self._flush()

    # -- one top-level argument ------------------------------------------------------

    def _start(self, name: str) -> None:
        self._key = name
        memo_of = self._memo_of
        if memo_of is not None:  # (the call's tool is decided: its memo, asked for once)
            self._memo_of = None
            self._memo = memo_of(self.item)
        memo = self._memo
        found = memo.get(name) if memo is not None else None
        if found is None:
            found = self._element(name)
            if memo is not None and len(memo) < _MAX_NAMES:
                memo[name] = found
        self._schema, wraps, self._closer, self._key_text, self._as_text, self._written = found
        first, self._first = self._first, False
        self._wrapper = first and wraps
        self._held = []
        self.state = START

    def _element(self, name: str) -> tuple[dict | None, bool, str, str, bool, dict[str, str]]:
        """What an element's name decides for the current call's tool: its schema, whether
        it is a wrapper when it comes first, its closing tag, its key as the arguments
        write it, whether a value that starts with text streams as text, and the typed
        leaf values written so far by their text (`_close_tree`)."""
        key = strip_space(name)
        schema = self.schema_of(key)
        return (
            schema,
            self._unwraps(key),
            f"{self.item.prefix}</{name}>",
            encode_basestring(key) + ": ",
            streams_as_text(schema),
            {},
        )

    def _decide(self, text: str, pos: int, eof: bool) -> int:
        """Leading whitespace waits: the first other character says text or elements."""
        end = len(text)
        start = pos
        while pos < end and text[pos].isspace():
            pos += 1
        if pos > start:
            self._held.append(text[start:pos])
        if pos == end:
            return pos
        opener = self._open
        if end - pos <= len(opener) and opener.startswith(text[pos:]) and not eof:
            return pos  # a tag may be starting: wait for the character after `<`
        if text.startswith(opener, pos):
            # a closing tag (this element's, or a marker that ends the arguments): the
            # value is the whitespace read so far; an opening tag: child elements
            self.state = TREE
            self._buffer, self._held = self._held, []
            self._stack = []
            return pos
        if self._as_text and not self._wrapper:
            self.state = TEXT
            self.emit(self._prefix() + '"' + _json_string_body("".join(self._held)))
            self._held = []
        else:  # typed: buffered whole, children or not
            self.state = TREE
            self._buffer, self._held = self._held, []
            self._stack = []
        return pos

    def _leaf(self, text: str, pos: int, eof: bool) -> int:
        """A streamed string value: its text up to its closing tag or a stop marker; a call
        opener in it waits for what decides it, and then ends the value or is its text."""
        at, lit = self._body_end(text, pos)
        if lit in self._in_value.held:  # a call opener: what follows it decides
            pos, at, lit, waiting = self._in_value.read_text(
                text, pos, eof, (at, lit), self._body_end, self._emit_string
            )
            if waiting:
                return pos
        # a tail that may begin a closing tag waits; at the end of output it is markup
        stop = at if at >= 0 else len(text) - self._body_held(text, pos)
        if stop > pos:
            self.emit(_json_string_body(text[pos:stop]))
        if at < 0 and not eof:
            return stop
        self._close_leaf()
        if at < 0:
            return len(text)
        if lit == self._closer:
            self.state = BETWEEN
            return at + len(lit)
        self._finish()  # a marker of the call or the stream: the arguments end here
        return at

    def _emit_string(self, raw: str) -> None:
        """A piece of a streamed string value's text."""
        self.emit(_json_string_body(raw))

    def _body_end(self, text: str, pos: int) -> tuple[int, str]:
        """The first of this element's closing tag and the stop markers (the closer is
        searched on its own: a Markers per element name would compile a regex per key).

        Both are looked for in a window that grows from `pos` until one is found in it: a
        closer searched to the end of the output, where a stop comes first in every call
        (calls cut inside a value, back to back), made a whole parse quadratic."""
        closer, stops, end = self._closer, self._stop_markers, len(text)
        reach = len(closer) + stops.max_prefix + 1  # (a stop this far in decides alone)
        size = _WINDOW
        while pos + size < end:
            at = text.find(closer, pos, pos + size)
            if at >= 0:
                break
            stop_at, stop = stops.search(text, pos, pos + size)
            if 0 <= stop_at <= pos + size - reach:  # no closer, nor longer stop, before it
                return stop_at, stop
            size *= 4
        else:
            at = text.find(closer, pos)
        stop_at, stop = self._stop_markers.search(
            text, pos, at + len(self._closer) if at >= 0 else None
        )
        if stop_at >= 0 and (
            at < 0 or stop_at < at or (stop_at == at and len(stop) > len(self._closer))
        ):
            return stop_at, stop
        return (at, self._closer) if at >= 0 else (-1, "")

    def _body_held(self, text: str, pos: int) -> int:
        """How many trailing characters may still begin the closer or a stop marker."""
        held = self._stop_markers.held(text, pos)
        closer, end = self._closer, len(text)
        # the left-most place past `held` from which the rest begins the closer: only where
        # its first character is (a slice per place cost a tenth of a delta)
        first, stop = closer[0], end - held
        at = text.find(first, max(pos, end - len(closer) + 1), stop)
        while at >= 0:
            if closer.startswith(text[at:]):
                return end - at
            at = text.find(first, at + 1, stop)
        return held

    def _close_leaf(self) -> None:
        self.emit('"')
        self.state = BETWEEN

    def _prefix(self) -> str:
        sep = ", " if self._count else ""
        self._count += 1
        return sep + self._key_text

    # -- a nested value: buffered until its closing tag ------------------------------

    def _tree(self, text: str, pos: int, eof: bool) -> int:
        """Match tags until the top element closes. A closer of the call or the section ends
        the value and the arguments; a call opener waits for what decides it
        (docs/policies.md, "Markers inside values"): a new call ends them too, text stays
        in the value (`_parse` reads it as text again)."""
        end = len(text)
        while True:
            at = text.find(self._open, pos)
            if at < 0:
                keep = self._partial_open(text, pos, end)
                self._buffer.append(text[pos:keep])
                if eof:  # a tag cut short at the end of output is markup
                    self._close_tree()
                    return end
                return keep
            stop = self._stop_at(text, at, eof)
            if stop is None:  # a marker may still be arriving: it and what follows wait
                self._buffer.append(text[pos:at])
                return at
            if stop in self._in_value.held:
                ends_value = self._in_value.ends_value(text, at + len(stop), eof, stop)
                if ends_value is not False:  # a new call (or not decided yet)
                    return self._stop_in_tree(text, pos, at, ends_value)
                self._buffer.append(text[pos : at + len(stop)])  # the opener is text
                pos = at + len(stop)
                continue
            name_at = at + len(self._open)
            close = text.find(">", name_at, name_at + _MAX_NAME + 1)
            if close < 0:
                if end - name_at > _MAX_NAME:  # no `>` near enough: the opener is text
                    self._buffer.append(text[pos:name_at])
                    pos = name_at
                    continue
                self._buffer.append(text[pos:at])
                if eof:  # the output ends inside a tag: it is markup
                    self._close_tree()
                    return end
                return at
            tag = text[name_at:close]
            if tag.startswith("/"):
                name = tag[1:]
                if self._stack and name == self._stack[-1]:
                    self._stack.pop()
                elif not self._stack and name == self._key:
                    self._buffer.append(text[pos:at])
                    self._close_tree()
                    return close + 1
                elif stop:  # the call's or the section's closer
                    return self._stop_in_tree(text, pos, at, True)
            elif stop:
                return self._stop_in_tree(text, pos, at, True)
            elif strip_space(tag) and len(self._stack) + 1 < self._max_depth:
                self._stack.append(tag)
            self._buffer.append(text[pos : close + 1])
            pos = close + 1

    def _stop_at(self, text: str, at: int, eof: bool) -> str | None:
        """The stop marker that starts at `at` ("" when none does), or None while more
        text may still make one there (whole and streamed text must read the tag alike)."""
        stops = self._stop_markers
        found = stops.at(text, at)
        if eof:
            return "" if found is None else found.group()
        if found is None:
            return None if stops.could_start(text, at) else ""
        return None if stops.may_grow(text, at, found.group()) else found.group()

    def _stop_in_tree(self, text: str, pos: int, at: int, ends_value: bool | None) -> int:
        """A stop marker at `at` inside a nested value: it ends the value and the arguments
        (True), or it and what follows wait (None)."""
        self._buffer.append(text[pos:at])
        if ends_value:
            self._close_tree()
            self._finish()
        return at

    def _partial_open(self, text: str, pos: int, end: int) -> int:
        """Where buffered text stops: before a tail that may begin a tag."""
        for k in range(min(len(self._open) - 1, end - pos), 0, -1):
            if self._open.startswith(text[end - k : end]):
                return end - k
        return end

    def _close_tree(self) -> None:
        body = "".join(self._buffer)
        self._buffer = []
        if shortcuts.ON and not self._wrapper and self._open not in body:
            # no tag in it: a leaf, its text the body (what `_parse` and `_convert` make of
            # it; tests/test_shortcuts.py reads the corpus both ways)
            written = self._written
            piece = written.get(body) if len(body) <= _MAX_WRITTEN_TEXT else None
            if piece is None:
                piece = json_text(_leaf_value(body, self._schema))
                if len(body) <= _MAX_WRITTEN_TEXT and len(written) < _MAX_WRITTEN:
                    written[body] = piece
            self.emit(self._prefix() + piece)
            self.state = BETWEEN
            return
        node = _parse(body, self._key, self.item.prefix, self._max_depth, self._in_value.held)
        wrapper, self._wrapper = self._wrapper, False
        members = self._members(node) if wrapper else None
        if members is not None:  # the wrapper's members stand in its place
            self._count = write_members(self.emit, members, self._count)
        else:
            value = _convert(node, self._schema)
            # repeated names make lists, so elements may nest twice as deep in JSON: a value
            # that would make the arguments nest deeper than `MAX_DEPTH` is its text (counting
            # tags and brackets rules most values out without a walk)
            if (
                node.children
                and deeper_than_tags(body, self._open)
                and deeper_than(value, MAX_DEPTH - 1)
            ):
                value = body
            self.emit(self._prefix() + json_text(value))
        self.state = BETWEEN

    def _members(self, node: _Node) -> str | None:
        """A wrapper's members, typed by their own schemas, to write in its place: its
        child elements, or the JSON or Python dict its text holds; None when it holds no
        object."""
        if node.children:
            return members_text(_object(node, self.schema_of), _no_schema)
        members = wrapped_text("".join(node.texts), json_flagged=False)
        return None if members is None else members_text(members, self.schema_of)

    def _finish(self) -> None:
        if self.state == START:  # only whitespace came: an empty (or blank) value
            body = "".join(self._held)
            self._held = []
            self.emit(self._prefix() + json_text(_leaf_value(body, self._schema)))
        elif self.state == TEXT:
            self._close_leaf()
        elif self.state == TREE:
            self._close_tree()
        self.state = DONE
        self.done = True
        self.emit("}")


# -- converting a buffered element ---------------------------------------------------


def _parse(
    body: str, name: str, prefix: str, max_depth: int, texts: frozenset[str] = frozenset()
) -> _Node:
    """The element tree of a complete body (unclosed elements close at its end), read as
    `_tree` read it: a call opener in `texts` left in the body was decided as text, and so
    is a tag opener with no `>` within _MAX_NAME characters."""
    opener = prefix + "<"
    root = _Node(name)
    stack = [root]
    pos = 0
    while pos < len(body):
        at = body.find(opener, pos)
        if at < 0:
            stack[-1].texts.append(body[pos:])
            break
        name_at = at + len(opener)
        literal = next((lit for lit in texts if body.startswith(lit, at)), None)
        close = -1 if literal else body.find(">", name_at, name_at + _MAX_NAME + 1)
        if close < 0:
            text_end = at + len(literal) if literal else name_at
            if not literal and len(body) - name_at <= _MAX_NAME:  # a tag cut short
                text_end = len(body)
            stack[-1].texts.append(body[pos:text_end])
            pos = text_end
            continue
        if at > pos:
            stack[-1].texts.append(body[pos:at])
        tag = body[name_at:close]
        if tag.startswith("/") and len(stack) > 1 and tag[1:] == stack[-1].name:
            stack.pop()
        elif strip_space(tag) and not tag.startswith("/") and len(stack) < max_depth:
            child = _Node(tag)
            stack[-1].children.append(child)
            stack.append(child)
        else:
            stack[-1].texts.append(body[at : close + 1])
        pos = close + 1
    return root


def deeper_than_tags(body: str, opener: str) -> bool:
    """Whether elements and brackets in `body` may make its value nest deeper than the
    arguments allow (each element at most two levels: an object and a list)."""
    return 2 * body.count(opener) + body.count("[") + body.count("{") > MAX_DEPTH - 1


def _leaf_value(text: str, schema: dict | None, depth: int = 0) -> object:
    types = schema_types(schema)
    if not text.strip() and types and "string" not in types:
        if "array" in types or "object" in types:
            return [] if _array_first(types) else {}
    return coerce_text(text, schema, depth)


def _array_first(types: tuple[str, ...]) -> bool:
    for kind in types:
        if kind in ("array", "object"):
            return kind == "array"
    return False


def _is_array(node: _Node, types: tuple[str, ...]) -> bool:
    """Children make an array when the schema allows an array and no object, or allows
    both and every child is an `<item>` (the template's spelling of an array element)."""
    if "array" not in types:
        return False
    if "object" not in types:
        return True
    return all(strip_space(child.name) == "item" for child in node.children)


def _convert(node: _Node, schema: dict | None, depth: int = 0) -> object:
    """The value of an element `depth` containers deep inside the arguments (an argument's
    is 0); its tree is no deeper than the reader's `_max_depth` (at most `MAX_DEPTH`)."""
    if not node.children:
        return _leaf_value("".join(node.texts), schema, depth)
    if _is_array(node, schema_types(schema)):
        return [_convert(c, item_schema(schema, i), depth + 1) for i, c in enumerate(node.children)]
    return _object(node, lambda key: property_schema(schema, key), depth)


def _no_schema(_: str) -> None:
    """Members already typed: nothing more to type them by."""
    return None


def _object(
    node: _Node, schema_of: Callable[[str], dict | None], depth: int = 0
) -> dict[str, object]:
    """Child elements as an object, each typed by `schema_of` its name."""
    groups: dict[str, list[object]] = {}  # repeated names collect into a list, in order
    for child in node.children:
        key = strip_space(child.name)
        groups.setdefault(key, []).append(_convert(child, schema_of(key), depth + 1))
    out: dict[str, object] = {k: v[0] if len(v) == 1 else v for k, v in groups.items()}
    mixed = "".join(node.texts)
    if mixed.strip():
        key = "$text"
        while key in out:
            key = "$" + key
        out[key] = mixed
    return out


def render_element(prefix: str, key: str, value: Any, depth: int = 2) -> str:
    """`value` as the element `key`; a container `depth` levels deep (an argument's value is
    2) deeper than `MAX_DEPTH` is a `RenderError`, as the reader reads no deeper."""
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        raise RenderError(too_deep_to_write())
    if isinstance(value, dict):
        body = "".join(render_element(prefix, k, v, depth + 1) for k, v in value.items())
    elif isinstance(value, list):
        body = "".join(render_element(prefix, "item", v, depth + 1) for v in value)
    else:
        body = render_value_text(value)
    return f"{prefix}<{key}>{body}{prefix}</{key}>"


def render_xml_elements(item: XmlElements, calls: Sequence[Call]) -> str:
    pairs = the_call(calls)[1]
    return "".join(render_element(item.prefix, key, value) for key, value in pairs)


XML_ELEMENTS = DialectRow(
    XmlElements,
    "xml_elements",
    XmlElementsReader,
    render_xml_elements,
    lambda item: (item.prefix,),
)
