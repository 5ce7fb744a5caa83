"""A family's whole output for a request's tools, as a rule tree built from its FamilySpec.

Nothing here names a family: each construct of the grammar language (`runtime/spec.py`)
has one translation, so a family's export is exactly what its grammar file says. What the
export allows is a canonical subset of what the parser reads: the first spelling choices
the grammar offers are all kept (optional literals, alternative spellings, whitespace),
but parameters come in the schema's order, strings never contain a marker that would end
them early, and nothing follows the calls except whitespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..runtime.tables import compiled
from ..runtime.render import HEADER_SHAPES
from ..runtime.spec import CallShape, FamilySpec, Item, Lit as SpecLit, Name, Reasoning, Skip, Ws
from .dialects import EXPORT_RULES, TAKE_CLOSER
from .schema import ExportError, Tool
from .tree import EMPTY, Alt, Grammar, Lit, Node, Opt, Pat, Rep, Seq, Text, alt, seq
from .values import WS


@dataclass(frozen=True)
class Mode:
    """`auto`: content, then calls if any; `required`: at least one call; `named`: exactly
    one call, to `name`."""

    kind: str
    name: str | None = None

    @classmethod
    def parse(cls, text: str) -> "Mode":
        if text in ("auto", "required"):
            return cls(text)
        if text.startswith("named:") and text[len("named:") :]:
            return cls("named", text[len("named:") :])
        raise ExportError(f"mode must be auto, required or named:NAME, not {text!r}")


class Builder:
    """Builds the tree for one (spec, tools, mode)."""

    def __init__(
        self,
        spec: FamilySpec,
        tools: list[Tool],
        mode: Mode,
        reasoning_open: bool | None,
        block_open: bool | None = None,
    ) -> None:
        if mode.kind == "named" and mode.name not in {t.name for t in tools}:
            known = ", ".join(t.name for t in tools)
            raise ExportError(f"named:{mode.name}: no such tool (tools: {known})")
        self.spec, self.mode = spec, mode
        self.tools = [t for t in tools if mode.kind != "named" or t.name == mode.name]
        self.cf = compiled(spec)
        self.g = Grammar(source=spec.source or f"grammars/{spec.name}.tg")
        self.reasoning_open = self.cf.prompt_opened if reasoning_open is None else reasoning_open
        # the marker the prompt ended with, when it opened a call, section or message (a
        # reasoning block the prompt opened comes first, as in the parser)
        opened = block_open if block_open is not None else bool(spec.prompt_opens)
        in_reasoning = bool(self.reasoning_open and spec.reasoning)
        self.prompt = spec.prompt_opens if opened and not in_reasoning else ""
        cf = self.cf
        message = (
            (*spec.messages.header, spec.messages.header_end, *spec.messages.ends)
            if spec.messages
            else ()
        )
        markers = {
            *cf.reasoning_opens,
            *cf.reasoning_closes,
            *cf.section_opens,
            *cf.section_closes,
            *cf.openers,
            *cf.ignore,
            *message,
            *self._prompt_markers(),
        }
        # content and reasoning avoid every marker the parser acts on there
        self.text_avoid = tuple(sorted(m for m in markers if m))
        self._entries: list[tuple[str, Node]] | None = None
        self._call_rule: Node = EMPTY  # one call, any shape (made with the calls block)
        # an output of content alone (auto mode)
        self._content_only = Opt(Text("raw", self.text_avoid, nonempty=True))
        # content after the calls (`render content_after_calls=true`): it starts with neither
        # whitespace nor `<` (PATTERNS' textstart) and holds no closer a call may leave out,
        # cut short either (`<tool_call|X` is a broken closer, not text)
        self._text_after = seq(Pat("textstart"), Text("raw", self._after_calls_avoid()))

    # -- the whole output ---------------------------------------------------------------

    def build(self) -> Grammar:
        g = self.g
        if self._messages_carry_calls():
            # channel messages, or (as the renderer writes it) one body with no header
            start = alt(self._messages(), self._body(self.mode.kind == "auto"))
            if self.prompt in self.spec.messages.header:  # the first header's opener is written
                start = alt(self._messages(opened=True), start)
        elif self.spec.reasoning and self.reasoning_open:
            # the prompt opened the reasoning: it ends at its closer, or (as the parser
            # reads it) at the first call opener, its text then being reasoning
            closes = sorted({c for r in self.spec.reasoning for c in self._closes(r)})
            opens = sorted({o for r in self.spec.reasoning for o in r.opens})
            # the model may write the opener the prompt already holds once more
            again = Opt(alt(*(Lit(o) for o in opens)))
            closed = seq(
                again,
                alt(*(Text("raw", self.text_avoid, end=c) for c in closes)),
                self._after_reasoning(),
            )
            start = alt(seq(closed, self._body(self.mode.kind == "auto")), self._body(True))
        else:
            start = seq(self._reasoning(), self._body(self.mode.kind == "auto"))
            if self.prompt:
                start = alt(start, self._after_prompt())
        g.rules = {"start": self._then_ws(start), **g.rules}
        return g

    def _after_calls_avoid(self) -> tuple[str, ...]:
        """What text after the calls avoids: the markers, and every optional literal that
        ends a call shape without its last character."""
        cut = set()
        for shape in self.spec.shapes:
            last = shape.call[-1] if shape.call else None
            if isinstance(last, SpecLit) and last.optional and not last.peek:
                cut.update(t[:-1] for t in last.texts if len(t) > 2)
        return tuple(sorted({*self.text_avoid, *cut}))

    def _then_ws(self, node: Node) -> Node:
        """`node`, then the whitespace the output may end with, except after content alone:
        its text takes whitespace itself, and the same spaces read as either would make every
        one of them a place where the trailing whitespace may start (GBNF through
        llguidance, whose rows hold at most 2000 items, then stops after some 400 spaces)."""
        if node == self._content_only or node == self._text_after:
            return node
        if isinstance(node, Alt):
            return alt(*(self._then_ws(option) for option in node.options))
        if isinstance(node, Seq) and node.items:
            return seq(*node.items[:-1], self._then_ws(node.items[-1]))
        return seq(node, WS)

    def _prompt_markers(self) -> set[str]:
        """With a block the prompt opened, the literals its calls go on with: text at the
        start of the output must not run over the one that tells it is a call."""
        if not self.prompt:
            return set()
        found: set[str] = set()
        for shape in self.spec.shapes:
            for item in shape.call:
                if isinstance(item, SpecLit) and not item.peek:
                    found.update(item.texts)
                elif isinstance(item, Skip):
                    found.update(item.until)
        return {m for m in found if m.strip()}

    def _after_prompt(self) -> Node:
        """The calls, begun by the call or section opener the prompt ended with: the output
        holds the rest of them. (It may also be any output the parser reads without it: the
        model may write that opener again, or write text first.)"""
        entries = self._calls_block()
        section = self.spec.section
        if section is not None and self.prompt in section.opens:
            return alt(*(rest for first, rest in entries if first == self.prompt))
        firsts = []
        for number, shape in enumerate(self.spec.shapes):
            for first, start in _leading(shape.call):
                if first == self.prompt:
                    tools = self._named_tools(shape) if self._uses_name(shape) else [None]
                    firsts += [self._first_items(shape, number, start, t) for t in tools]
        if not firsts:
            return EMPTY
        more = Rep(seq(WS, self._call_rule)) if self.mode.kind != "named" else EMPTY
        return seq(alt(*firsts), more)

    def _first_items(self, shape: CallShape, number: int, start: int, tool: Tool | None) -> Node:
        """A call's items after its opener, at the very start of the output. A free header
        (`skip`) there is one lexeme with the literal after it: free text may start the
        output too, and llguidance's greedy lexer must see where the header ends."""
        items = shape.call
        if (
            start + 1 < len(items)
            and isinstance(items[start], Skip)
            and isinstance(items[start + 1], SpecLit)
            and not items[start + 1].optional
            and not items[start + 1].peek
        ):
            head = alt(*(Text("header", (), end=t) for t in items[start + 1].texts))
            taken = _taken_closers(items)
            rest = [
                self._cached_item(shape, number, i, tool)
                for i in range(start + 2, len(items))
                if i not in taken
            ]
            return seq(head, *rest)
        return self._items(shape, number, start, tool)

    def _reasoning(self) -> Node:
        """An optional reasoning block the model opens and closes itself."""
        if not self.spec.reasoning:
            return EMPTY
        blocks = [
            seq(self._opener(o), Text("raw", self.text_avoid, end=c))
            for r in self.spec.reasoning
            for o in r.opens
            for c in self._closes(r)
        ]
        with self.g.at(self.spec.reasoning[0].line):
            return Opt(self.g.rule("reasoning", seq(alt(*blocks), self._after_reasoning())))

    def _after_reasoning(self) -> Node:
        """The `ignore`d markers `render` writes after a reasoning block (`render
        after_reasoning="<|begin|>assistant"`: the header of the message after Solar Open's
        reasoning message), which the model may write there."""
        marker = self.spec.write.after_reasoning.strip()
        return Opt(self._opener(marker)) if marker else EMPTY

    def _closes(self, reasoning: Reasoning) -> tuple[str, ...]:
        """What ends a reasoning block as the parser reads it: its closers, and a message's
        end (Harmony's `<|start|>assistant` after unclosed analysis)."""
        ends = self.spec.messages.ends if self.spec.messages is not None else ()
        return (*reasoning.closes, *(e for e in ends if e not in reasoning.closes))

    def _opener(self, text: str) -> Node:
        """A marker at the start of the output, with the whitespace before it in its lexeme
        (a separate whitespace lexeme would be swallowed by the content's). A marker that
        begins with a call opener is cut after it, so that the content-then-opener lexeme
        and this one can both match the opener: llguidance's lexer never gives back bytes
        once a longer lexeme is still possible."""
        for first in sorted(self._entry_literals(), key=len, reverse=True):
            if text != first and text.startswith(first):
                return seq(Text("space", (), end=first), Lit(text[len(first) :]))
        return Text("space", (), end=text)

    def _entry_literals(self) -> set[str]:
        return {first for first, _ in self._calls_block() if first}

    def _body(self, text_first: bool) -> Node:
        """The calls, after free text when `text_first` (content in auto mode, or the rest
        of a reasoning block the prompt opened, which a call opener ends)."""
        entries = self._calls_block()
        if not text_first:
            plain = [seq(self._opener(first) if first else WS, rest) for first, rest in entries]
            return alt(*plain, *(seq(empty, alt(*plain)) for empty in self._empty_content()))
        with_text = []
        peeks = self.cf.peek_openers
        for first, rest in entries:
            if first and not any(first.startswith(p) for p in peeks):
                # the text's lexeme runs up to and through the opener
                text = Text("raw", self.text_avoid, end=first)
                with_text.append(seq(alt(text, *self._content_block(first)), rest))
            else:
                # a lookahead opener (`{`, `[`), or one that starts with it: the text cannot
                # hold that character at all, so its lexeme ends there by itself
                text = Opt(Text("raw", self.text_avoid, nonempty=True))
                text = alt(text, *self._content_block(""))
                with_text.append(seq(text, Lit(first), rest) if first else seq(text, rest))
        with self.g.at(self._calls_line()):
            calls = self.g.rule("text_then_calls", alt(*with_text))
        if self.mode.kind != "auto":
            return calls
        options = [calls, self._content_only, *self._content_block(None)]
        if self.spec.write.content_after_calls:  # the template's order: calls, then content
            plain = alt(
                *(seq(self._opener(first) if first else WS, rest) for first, rest in entries)
            )
            options.append(seq(plain, self._text_after))
        return alt(*options)

    def _empty_content(self) -> list[Node]:
        """The empty content block `render content_always=true` writes before the calls of a
        turn without content (Kimi K3's `<|open|>response<|sep|><|close|>response<|sep|>`)."""
        content = self.spec.content
        if not self.spec.write.content_always or content is None or not content.closes:
            return []
        opens = alt(*(self._opener(o) for o in content.opens))
        return [seq(opens, alt(*(Text("space", (), end=c) for c in content.closes)))]

    def _content_block(self, then: str | None) -> list[Node]:
        """Content in the family's own block (`content` statement), written as `render`
        writes it: its opener, the text, its closer; then the call opener `then` ("" for a
        lookahead, None for the end of the output). Empty when content is bare text."""
        content = self.spec.content
        if content is None:
            return []
        text = Text("raw", self.text_avoid, nonempty=then is None)
        if content.closes:
            body = alt(*(Text("raw", self.text_avoid, end=c) for c in content.closes))
            after = Text("space", (), end=then) if then else EMPTY
        else:  # the block runs up to the next block's opener (or the end)
            body, after = (Text("raw", self.text_avoid, end=then) if then else text), EMPTY
        return [seq(alt(*(self._opener(o) for o in content.opens)), body, after)]

    def _calls_block(self) -> list[tuple[str, Node]]:
        """The ways the calls can start: (first literal, the rest), "" for a lookahead."""
        if self._entries is None:
            self._entries = self._make_calls_block()
        return self._entries

    def _make_calls_block(self) -> list[tuple[str, Node]]:
        g, section = self.g, self.spec.section
        entries = self._call_entries()
        many = self.mode.kind != "named"
        with g.at(self._calls_line()):
            call = self._call_rule = g.rule(
                "call", alt(*(seq(Lit(f), r) if f else r for f, r in entries))
            )
        more = Rep(seq(WS, call)) if many else EMPTY
        bare = [(f, seq(r, more)) for f, r in entries]
        if section is None:
            return bare
        close = alt(*(Lit(c) for c in section.closes))
        with g.at(section.line):
            inside = g.rule("section_body", seq(WS, call, more, WS, close))
        opens = alt(*(Lit(o) for o in section.opens))
        again = Rep(seq(WS, opens, inside)) if many else EMPTY  # more blocks, back to back
        wrapped = [(o, seq(inside, again)) for o in section.opens]
        return wrapped + (bare if section.optional else [])

    def _calls_line(self) -> int:
        """The grammar line of the first call shape (the rules any call goes through)."""
        return _shape_line(self.spec.shapes[0]) if self.spec.shapes else 0

    def _call_entries(self) -> list[tuple[str, Node]]:
        out: list[tuple[str, Node]] = []
        for number, shape in enumerate(self.spec.shapes):
            if self._recovers_drift(shape):
                continue
            with self.g.at(_shape_line(shape)):
                out += self._shape_entries(shape, number)
        return out

    def _shape_entries(self, shape: CallShape, number: int) -> list[tuple[str, Node]]:
        """The ways one call shape begins: (first literal, the rest), per tool."""
        out: list[tuple[str, Node]] = []
        per_tool = self._uses_name(shape)
        if self._named_by_recipient(shape):
            return self._recipient_entries(shape, number)
        tools = self._named_tools(shape) if per_tool else []
        if per_tool and not tools:
            return out  # a shape for other names (Functionary's `python`): none requested
        for first, start in _leading(shape.call):
            if per_tool:
                rest = alt(
                    *(
                        self.g.rule(
                            f"call_{t.name}_{number}",
                            self._items(shape, number, start, t),
                            key=(number, start, t.name),
                        )
                        for t in tools
                    )
                )
            else:
                rest = self.g.rule(
                    f"calls_{number}",
                    self._items(shape, number, start, None),
                    key=(number, start, None),
                )
            out.append((first, rest))
        return out

    def _named_tools(self, shape: CallShape) -> list[Tool]:
        """The requested tools whose names the shape's name item can write (a `pattern`
        may read one name only: Functionary's raw-code shape for `python`)."""
        items = [item for item in shape.call if isinstance(item, Name)]
        return [t for t in self.tools if all(self._writes(item, t.name) for item in items)]

    def _writes(self, item: Name, name: str) -> bool:
        try:
            self._header(item, name)
        except ExportError:
            return False
        return True

    @staticmethod
    def _named_by_recipient(shape: CallShape) -> bool:
        return bool(shape.call) and isinstance(shape.call[0], Name) and shape.call[0].recipient

    def _recipient_entries(self, shape: CallShape, number: int) -> list[tuple[str, Node]]:
        """A call named by its message's recipient (`name(recipient=true)`): a message to a
        requested tool, `HEADER NAME HEADER_END` then the call's other items, for each
        header spelling and each tool whose name the parser reads there as a recipient
        (one that no call opener or ignored marker swallows first)."""
        m = self.spec.messages
        assert m is not None
        recipient = re.compile(m.recipient)
        swallowing = (*self.cf.openers, *self.cf.ignore)
        out: list[tuple[str, Node]] = []
        for head in m.header:
            for t in self.tools:
                header = f"{head}{t.name}{m.header_end}"
                if not recipient.fullmatch(t.name) or any(
                    header.startswith(marker) for marker in swallowing
                ):
                    continue
                rest = self.g.rule(
                    f"call_{t.name}_{number}",
                    self._items(shape, number, 1, t),
                    key=(number, 1, t.name),
                )
                out.append((head, seq(Lit(f"{t.name}{m.header_end}"), rest)))
        return out

    @staticmethod
    def _recovers_drift(shape: CallShape) -> bool:
        """A shape whose name is read only when requested recovers a drifted spelling
        (`<functionNAME>`); a constrained model writes the family's own shapes instead."""
        return any(isinstance(item, Name) and item.requested for item in shape.call)

    @staticmethod
    def _uses_name(shape: CallShape) -> bool:
        return any(isinstance(item, Name) for item in shape.call)

    # -- one call shape -----------------------------------------------------------------

    def _items(self, shape: CallShape, number: int, start: int, tool: Tool | None) -> Node:
        taken = _taken_closers(shape.call)
        nodes = [
            self._cached_item(shape, number, i, tool)
            for i in range(start, len(shape.call))
            if i not in taken
        ]
        return seq(*nodes)

    def _cached_item(self, shape: CallShape, number: int, index: int, tool: Tool | None) -> Node:
        """A dialect's rules are made once per tool, however many ways the call begins (and
        come from the item's grammar line)."""
        with self.g.at(shape.call[index].line):
            return self._cached_item_here(shape, number, index, tool)

    def _cached_item_here(
        self, shape: CallShape, number: int, index: int, tool: Tool | None
    ) -> Node:
        item = shape.call[index]
        if isinstance(item, (SpecLit, Ws, Skip, Name)):
            return self._item(shape, number, index, tool)
        key = ("item", number, index, tool.name if tool else None)
        if key not in self.g._names:
            name = f"{tool.name if tool else 'calls'}_args"
            return self.g.rule(name, self._item(shape, number, index, tool), key=key)
        return self.g.rule("", EMPTY, key=key)

    def _item(self, shape: CallShape, number: int, index: int, tool: Tool | None) -> Node:
        item = shape.call[index]
        if isinstance(item, SpecLit):
            if item.peek:
                return EMPTY
            node = alt(*(Lit(t) for t in item.texts))
            return Opt(node) if item.optional else node
        if isinstance(item, Ws):
            return WS
        if isinstance(item, Skip):
            if item.keep:  # prose the parser recovers; a constrained model writes none there
                return EMPTY
            # a free header (Inkling repeats the name there, Solar Open the call's id): a
            # name-like word, well within the item's length limit and unable to hold a
            # marker; optional, as the parser reads a call without one
            return Opt(Pat("header"))
        if isinstance(item, Name):
            assert tool is not None
            return self._name(item, tool.name)
        rule = EXPORT_RULES.get(type(item))
        if rule is None:
            raise ExportError(f"cannot export grammar item {type(item).__name__}")
        stops = self.cf.stops[number, index]
        closer = _closer_after(shape.call, index) if type(item) in TAKE_CLOSER else None
        if closer is not None:
            return rule(self, item, tool, stops, closers=shape.call[closer].texts)
        return rule(self, item, tool, stops)

    def _name(self, item: Name, name: str) -> Node:
        """The name as the item's pattern reads it back (an index becomes digits)."""
        if item.fixed:  # the opener said it: nothing is written
            return self._header(item, name)
        return seq(WS, self._header(item, name), WS)  # the parser strips the name's text

    def _header(self, item: Name, name: str) -> Node:
        if item.fixed:
            if name != item.fixed:
                raise ExportError(f"{self.spec.name}: this call shape calls {item.fixed!r} only")
            return EMPTY
        if item.pattern is None:
            return Lit(name)
        for shape in HEADER_SHAPES:
            texts = [shape.format(name=name, index=i) for i in (0, 17)]
            found = [re.fullmatch(item.pattern, t) for t in texts]
            if all(f and f.group("name") == name for f in found):
                lead = " " if shape.startswith("tool=") else ""
                parts = shape.replace("{name}", name).split("{index}")
                nodes: list[Node] = [Lit(lead + parts[0])]
                for part in parts[1:]:
                    nodes += [Pat("digits"), Lit(part)]
                return seq(*(n for n in nodes if n != Lit("")))
        raise ExportError(
            f"{self.spec.name}: cannot write the name {name!r} in the shape "
            f"/{item.pattern}/ reads"
        )

    # -- messages (Harmony-like channels) -----------------------------------------------

    def _messages_carry_calls(self) -> bool:
        """Whether a message's header says a call's recipient (Muse): then the output is
        written as messages. Harmony's messages route only text (its calls open by their own
        headers, every other recipient is dropped): its output is written as calls in text."""
        m = self.spec.messages
        if m is None:
            return False
        return m.default == "calls" or any(r and kind == "calls" for r, kind in m.routes)

    def _messages(self, opened: bool = False) -> Node:
        """Messages routed to reasoning or content, then (in a tool message) the calls.
        `opened`: the prompt ended with the header's opener, so the first message's header
        starts at its recipient."""
        m = self.spec.messages
        assert m is not None
        routes = dict(m.routes)
        recipient = re.compile(m.recipient)
        end = m.ends[0]
        body_avoid = tuple(sorted({*self.cf.ignore, *m.header, m.header_end, *m.ends}))
        opener = "" if opened else m.header[0]

        def text_message(head_opener: str) -> Node:
            texts = []
            for kind in ("reasoning", "content"):
                names = [r for r, k in routes.items() if k == kind and r and recipient.fullmatch(r)]
                for r in names[:1]:
                    head = Text("space", (), end=f"{head_opener}{r}{m.header_end}")
                    texts.append(seq(head, Text("raw", body_avoid, end=end)))
            return alt(*texts) if texts else EMPTY

        sep = alt(*(Lit(i) for i in sorted(self.cf.ignore))) if self.cf.ignore else EMPTY
        texts = text_message(m.header[0])
        text_msgs = Rep(seq(Opt(sep), texts)) if texts != EMPTY else EMPTY
        if self.mode.kind == "named":
            text_msgs = EMPTY
        targets = [
            t.name
            for t in self.tools
            if recipient.fullmatch(t.name) and routes.get(t.name, m.default) == "calls"
        ]
        if not targets:
            raise ExportError(f"{self.spec.name}: no tool name can be a tool message's recipient")
        entries = self._calls_block()
        calls = alt(*(seq(Lit(f), r) if f else r for f, r in entries))

        def tool_message(head_opener: str, name: str) -> Node:
            # the whitespace before a header is in the header's lexeme (see `_opener`)
            header = alt(
                *(Text("space", (), end=f"{head_opener}{t}{m.header_end}") for t in targets)
            )
            with self.g.at(m.line):
                return self.g.rule(name, seq(Opt(sep), header, calls, WS, Lit(end)))

        tool_msg = tool_message(m.header[0], "tool_message")
        many = Rep(tool_msg) if self.mode.kind != "named" else EMPTY
        tools = seq(tool_msg, many)
        if self.mode.kind == "auto":
            tools = Opt(tools)
        if not opened:
            return seq(text_msgs, tools)
        first_tool = seq(tool_message(opener, "first_tool_message"), many)
        first_text = text_message(opener)
        starts = [first_tool]
        if first_text != EMPTY and self.mode.kind != "named":
            starts.append(seq(first_text, text_msgs, tools))
        return alt(*starts)


def _shape_line(shape: CallShape) -> int:
    return shape.line or (shape.call[0].line if shape.call else 0)


def _closer_after(call: tuple[Item, ...], index: int) -> int | None:
    """The index of the literal that closes the item at `index` (after a `ws`, if any): a
    required one, which a dialect in `TAKE_CLOSER` writes itself; None when there is none."""
    after = index + 1
    if after < len(call) and isinstance(call[after], Ws):
        after += 1
    if after < len(call):
        lit = call[after]
        if isinstance(lit, SpecLit) and not lit.optional and not lit.peek:
            return after
    return None


def _taken_closers(call: tuple[Item, ...]) -> set[int]:
    """The items a `TAKE_CLOSER` dialect writes itself: the `ws` and literal after it."""
    taken: set[int] = set()
    for index, item in enumerate(call):
        closer = _closer_after(call, index) if type(item) in TAKE_CLOSER else None
        if closer is not None:
            taken.update(range(index + 1, closer + 1))
    return taken


def _leading(call: tuple[Item, ...]) -> list[tuple[str, int]]:
    """The ways a call can begin: (its first literal, index of the item after it); a call
    opened by a lookahead begins with "" at the lookahead."""
    out: list[tuple[str, int]] = []
    for index, item in enumerate(call):
        if isinstance(item, Ws):
            continue
        if isinstance(item, SpecLit):
            if item.peek:
                out.append(("", index))
                return out
            out += [(text, index + 1) for text in item.texts]
            if not item.optional:
                return out
            continue
        raise ExportError("a call must begin with a literal or a lookahead")
    return out


def build(
    spec: FamilySpec,
    tools: list[Tool],
    mode: Mode,
    reasoning_open: bool | None,
    block_open: bool | None = None,
) -> Grammar:
    return Builder(spec, tools, mode, reasoning_open, block_open).build()


__all__ = ["Mode", "build"]
