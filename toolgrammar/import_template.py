"""A first grammar from a model's chat template (`toolgrammar import-template --chat-template`).

A new checkpoint has its chat template on day one and no grammar. The template writes every
marker the model was trained on, so rendering a few probe conversations that differ in one
thing (no call, one call, two calls, content before a call, reasoning, every argument type)
and comparing the renderings tells where each marker is: what one rendering has and the other
lacks (the approach of llama.cpp's template autoparser, written anew here). The result is a
grammar in one of the existing shapes (JSON in tags, `xml_params`, `json_call_array`,
`python_calls`) with a `# guess:` comment on every choice the renderings did not decide, for an
author to read, `check` and refine; it is never loaded behind the user's back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .runtime.protocol import indent_json
from .check.templates import (
    CALL_IDS,
    Call,
    Conversation,
    TemplateProblem,
    TemplateRefusal,
    _call_message,
    assistant_turn,
    cut_at_stop,
    load_template,
    reasoning_fields,
    render,
    turn_end,
)

# probe values: words no template writes by itself, so each is found where it was put
ANSWER = "Plain answer 7qa."
LEAD = "Lead text 7ql."
THOUGHT = "Probe thought 7qr."
CITY = "Paris7q"
DAYS = "Four7q"
QUERY = "umbrella7q"
ONE = Call("get_weather", {"city": CITY})
ONE_TWO_ARGS = Call("get_weather", {"city": CITY, "days": DAYS})
TWO = Call("search_docs", {"query": QUERY})
TYPED = Call(
    "get_weather",
    {
        "city": CITY,
        "days": 3,
        "ratio": 2.5,
        "metric": True,
        "options": {"unit": "c"},
        "tags": ["a", 1],
        "nothing": None,
    },
)
ASK = {"role": "user", "content": "Probe question 7qu?"}
# a marker: a tag, a special token or a bracketed word, or a run of other non-space text
MARKER = re.compile(r"<\|[^|]*\|>|<[^<>\s]*>?|\[[A-Za-z_/]+\]|[^\s<\[]+")


class ImportProblem(Exception):
    """The template cannot be imported: one line saying why."""


@dataclass
class Found:
    """What the renderings showed: markers, and the guesses made about them."""

    name: str
    guesses: list[str] = field(default_factory=list)
    mutable: bool = False  # the template changes lists (llama.cpp's engine lets it)
    as_text: bool = False  # the template wants arguments as JSON text
    reasoning: tuple[str, str] | None = None
    reasoning_prompt_opened: bool = False
    section: tuple[str, str] | None = None
    content: tuple[str, str] | None = None
    ignore: list[str] = field(default_factory=list)
    content_after_calls: bool = False  # the template writes a turn's content after its calls
    call: list[str] = field(default_factory=list)  # the call statement's items, as grammar text
    shape: str = ""  # the dialect word
    # the `render` statement: the whitespace the template writes between an output's parts
    render: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- rendering


@dataclass
class Probe:
    """The template and the variables it is rendered with, each conversation's turn cut at
    the model's stop."""

    template: Any
    variables: dict[str, Any]
    fields: tuple[str, ...]
    stops: list[str]
    as_text: bool = False
    mutable: bool = False

    def turn(
        self, content: str = "", calls: tuple[Call, ...] = (), thought: str = "", cut: bool = True
    ) -> str:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = _call_message(calls, self.as_text)
        if thought:
            for name in self.fields:
                message[name] = thought
        # where the turn parts from a prompt that ends in a marker the turn leaves out
        # (`<think>`), it starts at that marker, not inside it
        markers = sorted(set(_tokens(self.prompt()[-200:])), key=len, reverse=True)
        _, turn, _ = assistant_turn(
            self.template, Conversation("probe", (ASK, message)), self.variables, markers
        )
        return cut_at_stop(turn, self.stops) if cut else turn

    def prompt(self, **variables: Any) -> str:
        return render(
            self.template,
            [ASK],
            add_generation_prompt=True,
            variables={**self.variables, **variables},
        )


def _probe(source: str, variables: dict[str, Any]) -> Probe:
    """The template loaded as transformers does, or as llama.cpp does when it changes lists;
    arguments as JSON text when it prints a dict as Python."""
    last: Exception | None = None
    for mutable, as_text in ((False, False), (True, False), (False, True), (True, True)):
        try:
            template = load_template(source, mutable)
            stops = [variables.get("eos_token", "</s>"), *turn_end(template, variables)]
            probe = Probe(template, variables, reasoning_fields(source), stops, as_text)
            turn = probe.turn(calls=(ONE,))
        except TemplateProblem as problem:
            last = last or problem
            continue
        if repr(ONE.arguments) in turn:
            probe.as_text = True
        probe.mutable = mutable
        return probe
    raise ImportProblem(str(last))


# --------------------------------------------------------------------------- text helpers


def _common_prefix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    for index in range(size):
        if a[index] != b[index]:
            return index
    return size


def _common_suffix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    for index in range(size):
        if a[-1 - index] != b[-1 - index]:
            return index
    return size


def _at_boundary(text: str, at: int) -> int:
    """`at` moved back to the start of the marker it falls inside."""
    for match in MARKER.finditer(text):
        if match.start() < at < match.end():
            return match.start()
    return at


def _tokens(text: str) -> list[str]:
    return MARKER.findall(text)


def _lit(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _spaced(text: str) -> list[str]:
    """Grammar items for markup text: each run of non-space text a literal, each run of
    whitespace a `ws` that writes it."""
    items = []
    for match in re.finditer(r"\s+|\S+", text):
        piece = match.group()
        items.append(f"ws(write={_lit(piece)})" if piece.isspace() else _lit(piece))
    return items


def _open_items(text: str) -> list[str]:
    """A call's or section's opener: its literals, then the whitespace the template writes
    before what follows (`ws` reading any)."""
    items = _strip_ws(_spaced(text.lstrip()), end=False)
    if items and not items[-1].startswith("ws("):
        items.append("ws")
    return items


def _close_items(text: str) -> list[str]:
    """A closer: the whitespace the template writes before it, then its literals."""
    items = _strip_ws(_spaced(text.rstrip()), start=False)
    if items and not items[0].startswith("ws("):
        items.insert(0, "ws")
    return items


def _head(text: str) -> list[str]:
    """The markup before a call's name; the model's own call id in it (Solar Open's
    `<|tool_call:begin|>ID<|tool_call:name|>`) is read as a `skip(id=true)`."""
    text = text.lstrip()
    at = text.find(CALL_IDS[0])
    if at == -1:
        return _strip_ws(_spaced(text), end=False)
    after = text[at + len(CALL_IDS[0]) :]
    until = _first_token(after) or after
    return [
        *_strip_ws(_spaced(text[:at]), end=False),
        f"skip(until={_lit(until)}, id=true)",
        *_strip_ws(_spaced(after), end=False),
    ]


def _strip_ws(items: list[str], start: bool = True, end: bool = True) -> list[str]:
    while start and items and items[0].startswith("ws("):
        items.pop(0)
    while end and items and items[-1].startswith("ws("):
        items.pop()
    return items


# --------------------------------------------------------------------------- finding


def analyse(source: str, name: str, variables: dict[str, Any] | None = None) -> Found:
    """Render the probes through the template `source` and find the family's markers."""
    probe = _probe(source, {"bos_token": "<s>", "eos_token": "</s>", **(variables or {})})
    found = Found(name, mutable=probe.mutable, as_text=probe.as_text)
    if probe.mutable:
        found.guesses.append("the template changes lists: rendered as llama.cpp does (--mutable)")
    if probe.as_text:
        found.guesses.append("the template prints arguments as they are: given as JSON text")
    whole = probe.turn(calls=(ONE,), cut=False)
    for stop in list(probe.stops[1:]):
        if stop in whole and whole.find(stop) < whole.find("get_weather"):
            probe.stops.remove(stop)  # it ends a plain reply but comes before calls: markup
            found.guesses.append(f"{stop!r} ends a plain reply, but is written before calls")
    plain = probe.turn(ANSWER)
    one = probe.turn(calls=(ONE,))
    if "get_weather" not in one:
        raise ImportProblem("the template writes no tool calls (an assistant message's tool_calls)")
    lead = _at_boundary(one, _common_prefix(plain, one))
    _content(found, plain, lead)
    _turn_end(found, probe)
    _reasoning(found, probe, plain)
    markup = one[lead:]
    try:
        two = probe.turn(calls=(ONE, TWO))[lead:].replace(CALL_IDS[1], CALL_IDS[0])
    except TemplateRefusal:
        two = ""
        found.guesses.append("the template refuses two calls in a turn: one call a turn assumed")
    if not _json_native(found, markup, two) and not _python(found, markup):
        _named(found, probe, markup, two, lead)
    _content_with_calls(found, probe, lead)
    _typed(found, probe)
    _render_writes(found, probe, two)
    return found


def _content(found: Found, plain: str, lead: int) -> None:
    """Content written inside markers (`<|START_RESPONSE|>…`), or bare."""
    at = plain.find(ANSWER)
    if at == -1:
        found.guesses.append("content: the template does not write a plain answer; bare assumed")
        return
    before = plain[lead:at].strip()
    after = plain[at + len(ANSWER) :].strip()
    if before:
        closer = _tokens(after)[0] if after else ""
        found.content = (before, closer)
        found.guesses.append(f"content is written in {before!r}…{closer!r}: a `content` block")


def _turn_end(found: Found, probe: Probe) -> None:
    ends = [stop for stop in probe.stops[1:] if stop and not stop.isspace()]
    if ends:
        found.ignore = ends[:1]
        found.guesses.append(
            f"{ends[0]!r} ends the turn: ignored if the model writes it (a stack stops there)"
        )


def _reasoning(found: Found, probe: Probe, plain: str) -> None:
    """Reasoning markers: what the reasoning adds to a plain answer around the thought, and
    whether the generation prompt opens the block."""
    thought, at = "", -1
    for content, calls in ((ANSWER, ()), ("", (ONE,))):  # some keep it only before calls
        try:
            base = plain if not calls else probe.turn(calls=calls)
            thought = probe.turn(content, calls, thought=THOUGHT)
        except TemplateProblem:
            continue
        at = thought.find(THOUGHT)
        if at != -1:
            plain = base
            if calls:
                found.guesses.append("reasoning: the template keeps it only before calls")
            break
    opens = closes = ""
    if at != -1:
        start = _at_boundary(thought, _common_prefix(plain, thought))
        end = len(thought) - _common_suffix(plain, thought)
        before = thought[min(start, at) : at].strip() or _last_token(thought[:at])
        after = thought[at + len(THOUGHT) : max(end, at + len(THOUGHT))].strip()
        after = after or _first_token(thought[at + len(THOUGHT) :])
        opens, closes = _last_token(before), _first_token(after)
        if opens == closes:
            opens = ""
    prompt_on = _safe_prompt(probe, enable_thinking=True, thinking=True)
    prompt_off = _safe_prompt(probe, enable_thinking=False, thinking=False)
    if not closes and prompt_on and prompt_on != prompt_off:
        shared = _at_boundary(prompt_on, _common_prefix(prompt_on, prompt_off))
        extra = prompt_on[shared:].strip()
        tokens = _tokens(extra)
        # only a difference at the end of the prompt (not a system line saying "enabled")
        if tokens and len(tokens) <= 2 and len(_tokens(prompt_off[shared:])) <= 2:
            opens = tokens[0]
            closes = tokens[1] if len(tokens) > 1 else opens.replace("<", "</", 1)
            found.guesses.append(
                f"reasoning: history drops it; the prompt with thinking on adds {extra!r}, "
                f"closer {closes!r} guessed"
            )
    prompt = _safe_prompt(probe)
    last = _last_token(prompt)
    empty = re.search(r"(<([^<>/\s]*think[^<>/\s]*)>)\s*(</\2>)\s*$", prompt, re.IGNORECASE)
    if not closes and empty:
        opens, closes = empty.group(1), empty.group(3)
        found.guesses.append(f"reasoning: the prompt ends in an empty {opens}…{closes} block")
    elif not closes and re.search(r"think|reason", last, re.IGNORECASE) and "/" not in last:
        opens, closes = last, last.replace("<", "</", 1) if last.startswith("<") else ""
        found.guesses.append(
            f"reasoning: history drops it; the prompt ends in {last!r}, closer {closes!r} guessed"
        )
    if not closes:
        found.guesses.append("reasoning: the template writes none; no reasoning block")
        return
    if not opens:
        found.guesses.append(f"reasoning: no opener written before the thought, only {closes!r}")
        opens = closes.replace("</", "<", 1) if closes.startswith("</") else ""
        if not opens:
            return
    found.reasoning = (opens, closes)
    if prompt and prompt.rstrip().endswith(opens) and not prompt.rstrip().endswith(closes):
        found.reasoning_prompt_opened = True
        found.guesses.append(
            f"the generation prompt ends in {opens!r} (thinking on by default): prompt_opened"
        )


def _safe_prompt(probe: Probe, **variables: Any) -> str:
    try:
        return probe.prompt(**variables)
    except TemplateProblem:
        return ""


def _last_token(text: str) -> str:
    tokens = _tokens(text)
    return tokens[-1] if tokens else ""


def _first_token(text: str) -> str:
    tokens = _tokens(text)
    return tokens[0] if tokens else ""


def _decode_at(text: str, at: int) -> tuple[Any, int] | None:
    try:
        return json.JSONDecoder().raw_decode(text, at)
    except ValueError:
        return None


def _args_of(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _json_native(found: Found, markup: str, two: str) -> bool:
    """The name inside a JSON object (`{"name": …, "arguments": {…}}`), alone or in an array."""
    at = markup.find('"get_weather"')
    if at == -1:
        return False
    end_of_name = at + len('"get_weather"')
    keyed = markup[end_of_name : end_of_name + 10].lstrip().startswith(":")
    for start in range(at, -1, -1):
        if markup[start] != "{":
            continue
        decoded = _decode_at(markup, start)
        if decoded is None or decoded[1] <= at or not isinstance(decoded[0], dict):
            continue
        obj, end = decoded
        keys = _json_keys(obj)
        if keys is None:
            continue
        name_key, args_key, id_key = keys
        if keyed != (not name_key):
            continue
        before, after = markup[:start], markup[end:]
        in_array = before.rstrip().endswith("[") and after.lstrip().startswith("]")
        spellings = [args_key, *(k for k in ("arguments", "parameters") if k != args_key)]
        options = [f"name={_lit(name_key)}", f"arguments=[{', '.join(map(_lit, spellings))}]"]
        if not name_key:
            options = ["name_is_key=true"]
            found.guesses.append("each call is {NAME: {arguments}}: name_is_key=true")
        if id_key:
            options.append(f"id={_lit(id_key)}")
            if list(obj)[-1] == id_key and _in_array(markup, start, end):
                options.append("write_call_id=true")
                found.guesses.append(f"each call's id follows its arguments: {id_key!r}")
        numbered = next((k for k, v in obj.items() if v == "0" and k != name_key), "")
        if not id_key and numbered and name_key:
            options += [f"id={_lit(numbered)}", "write_id=true"]
            found.guesses.append(
                f'{numbered!r} numbers the calls from "0": read as the call\'s id, written first'
            )
        if in_array:
            opener = before.rstrip()[:-1]
            closer = after.lstrip()[1:]
            array = markup[len(opener) : len(markup) - len(closer)]
            options += _json_layout(array)
            found.shape = "json_call_array"
            found.call = [
                *(_open_items(opener) or ['&"["']),
                f"json_call_array({', '.join(options)})",
                *_close_items(closer),
            ]
            found.guesses.append("calls as one JSON array of objects: json_call_array")
            return True
        found.shape = "json_call"
        opener, closer, section = _split_per_call(markup, start, end, two, '"search_docs"')
        _take_section(found, section)
        head = _open_items(opener)
        found.call = [
            *(head if head else ['&"{"']),
            f"json_call({', '.join(options)})",
            *_close_items(closer),
        ]
        if not head:
            found.guesses.append('a bare JSON object opens a call: lookahead `&"{"`')
        return True
    return False


def _in_array(markup: str, start: int, end: int) -> bool:
    """The object at `start:end` is an element of a JSON array (`[{…}]`, `[{…}, {…}]`)."""
    return markup[:start].rstrip().endswith("[") and markup[end:].lstrip()[:1] in ("]", ",")


def _json_layout(text: str) -> list[str]:
    """The `write_indent` options under which `render` writes the JSON `text` as the template
    wrote it (`tojson(indent=4)`, or one element a line); none for one line or another
    layout."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    compact = json.dumps(value, ensure_ascii=False)
    for indent in (2, 4):
        for depth in (0, 1):
            if indent_json(compact, indent, depth) == text.strip():
                return [f"write_indent={indent}"] + (
                    [f"write_indent_depth={depth}"] if depth else []
                )
    return []


def _json_keys(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    name_key = next((k for k, v in obj.items() if v == "get_weather"), "")
    args_key = next((k for k, v in obj.items() if _args_of(v) == ONE.arguments), "")
    id_key = next((k for k, v in obj.items() if v == CALL_IDS[0]), "")
    if list(obj) == ["get_weather"] and _args_of(obj["get_weather"]) == ONE.arguments:
        return "", "", ""  # {NAME: {…}}: the name is the key
    if not name_key or not args_key:
        return None
    return name_key, args_key, id_key


def _split_per_call(
    markup: str, start: int, end: int, two: str, second: str
) -> tuple[str, str, tuple[str, str] | None]:
    """(call opener, call closer, section): what the second call repeats is the call's own,
    what it does not is a section around the calls."""
    opener_all, closer_all = markup[:start], markup[end:]
    if not two:
        return opener_all, closer_all, None
    at2 = two.find(second)
    first_end = _end_of_first(two, start, end)
    if at2 == -1 or first_end is None:
        return opener_all, closer_all, None
    start2 = at2 - (markup.find('"get_weather"', start) - start) if second.startswith('"') else at2
    between = two[first_end:start2]
    close = _common_prefix(closer_all, between)
    close = _at_boundary(closer_all, close) if close < len(closer_all) else close
    rest = between[close:]
    open_ = _common_suffix(opener_all, rest)
    section_open = opener_all[: len(opener_all) - open_]
    section_close = closer_all[close:]
    call_open, call_close = opener_all[len(section_open) :], closer_all[:close]
    if section_open.strip() and section_close.strip():
        return call_open, call_close, (section_open.strip(), section_close.strip())
    if section_close.strip() and call_close.strip():  # the end of the calls alone
        return opener_all, call_close, ("", section_close.strip())
    return opener_all, closer_all, None


def _take_section(found: Found, section: tuple[str, str] | None) -> None:
    """A section around the calls; or, with no opener, what the template writes after the
    last call only (Gemma 4's `<|tool_response>`): where the model stops for the results,
    ignored if it writes it."""
    if section is None:
        return
    if section[0]:
        found.section = section
        return
    if section[1] not in found.ignore:
        found.ignore.append(section[1])
    found.guesses.append(
        f"{section[1]!r} follows the last call only: where the model stops for the results "
        "(ignored if written)"
    )


def _end_of_first(two: str, start: int, end: int) -> int | None:
    decoded = (
        _decode_at(two, start) if start < len(two) and two[start : start + 1] in "{[" else None
    )
    if decoded is not None:
        return decoded[1]
    return end if end <= len(two) else None


def _python(found: Found, markup: str) -> bool:
    """Python calls, `[get_weather(city="…")]`."""
    match = re.search(r"get_weather\(\s*city\s*=", markup)
    if match is None:
        return False
    before = markup[: match.start()].rstrip()
    listed = before.endswith("[")
    head = before[:-1] if listed else before
    found.shape = "python_calls"
    options = f"list={'true' if listed else 'false'}"
    if markup[match.end() :].lstrip().startswith(_lit(CITY)):
        options += ", write_json=true"  # `city="Paris"`: the template prints values as JSON
        found.guesses.append('values are printed as JSON (city="…"): write_json=true')
    found.call = [
        *(_strip_ws(_spaced(head)) + ["ws"] if head.strip() else []),
        *(['&"["'] if listed else []),  # the list opens the call; python_calls reads it
        f"python_calls({options})",
    ]
    end = _python_end(markup, match.start())
    if end is not None:
        found.call += _close_items(markup[end:])
    return True


def _python_end(markup: str, start: int) -> int | None:
    """Where the Python calls end: after the `]` or `)` that closes them, strings skipped."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(markup)):
        char = markup[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return index + 1  # the list's `]`
    return None


def _named(found: Found, probe: Probe, markup: str, two: str, lead: int) -> None:
    """The name outside the arguments: a name between markers, then JSON arguments or
    key/value markup."""
    at = markup.find("get_weather")
    after_name = at + len("get_weather")
    brace = markup.find("{", after_name)
    decoded = _decode_at(markup, brace) if brace != -1 else None
    if decoded is not None and decoded[0] == ONE.arguments:
        args_end = decoded[1]
        between = markup[after_name:brace]
        opener, closer, section = _split_per_call(markup, at, args_end, two, "search_docs")
        # the opener runs to the name; what the one-call rendering writes after the arguments
        # is the closer (_split_per_call took the name and arguments as the "object")
        _take_section(found, section)
        head = _head(opener)
        suffix = between.strip()
        found.shape = "json_args"
        numbered = re.match(r"([^\s<\[{]*?)(\d+)(?=[\s<\[{]|$)", suffix)
        if numbered and head and not head[-1].startswith("ws(") and two.find("search_docs") != -1:
            # `functions.get_weather:0`: the header numbers the call, so it is the call's id
            word = re.search(r"[^\s>\]|]*$", json.loads(head[-1])).group()
            if word:
                head[-1] = _lit(json.loads(head[-1])[: -len(word)])
                head = [item for item in head if item != '""']
            rest = suffix[numbered.end() :]
            until = _first_token(rest) if rest.strip() else "{"
            pattern = f"{re.escape(word)}(?P<name>[^\\s{re.escape(numbered.group(1))}]+){re.escape(numbered.group(1))}\\d+"
            name_items = [f"name(until={_lit(until)}, pattern=/{pattern}/, id=header)"]
            after = rest.strip()
            found.guesses.append(
                f"the text after the name numbers the call ({suffix[: numbered.end()]!r}): "
                "read as the call's id"
            )
        elif CALL_IDS[0] in suffix:
            # `NAME[CALL_ID]ID[ARGS]`: the id between the name and the arguments
            before_id, _, after = suffix.partition(CALL_IDS[0])
            until = _first_token(after) if after.strip() else "{"
            pattern = (
                r"(?P<name>[^\s\[\]{}<>]+)(?:" + re.escape(before_id) + r"(?P<id>[^\s\[\]{}<>]+))?"
            ).replace("/", "\\/")
            name_items = [f"name(until={_lit(until)}, pattern=/{pattern}/)"]
            found.guesses.append(
                f"the call id comes after the name, after {before_id!r} (read when written)"
            )
        else:
            name_items = [f"name(until={_lit(_first_token(suffix) if suffix else '{')})"]
            lead_space = between[: len(between) - len(between.lstrip())]
            if suffix and lead_space:  # R1's newline between the name and "```json"
                name_items.append(f"ws(write={_lit(lead_space)})")
            after = suffix
        found.call = [
            *head,
            *name_items,
            *(_spaced(after) if after else []),
            (
                f"ws(write={_lit(between[len(between.rstrip()):])})"
                if between[len(between.rstrip()) :]
                else "ws"
            ),
            '&"{"' if not after else "",
            "json_args",
            *_close_items(closer),
        ]
        found.call = [item for item in found.call if item]
        return
    if brace != -1 and _keyvalue(found, markup, two, at, brace):
        return
    _xml(found, probe, markup, two, lead, at)


def _keyvalue(found: Found, markup: str, two: str, at: int, brace: int) -> bool:
    """Gemma's `{key:<|"|>text<|"|>,…}` after the name: bare keys, strings between a
    delimiter of the template's own (`keyvalue_args(string=…)`)."""
    pattern = r"\{city:(?P<q>[^\s{}:,]{1,24}?)" + re.escape(CITY) + r"(?P=q)\}"
    found_kv = re.match(pattern, markup[brace:])
    if found_kv is None:
        return False
    delimiter = found_kv.group("q")
    args_end = brace + found_kv.end()
    opener, closer, section = _split_per_call(markup, at, args_end, two, "search_docs")
    _take_section(found, section)
    between = markup[at + len("get_weather") : brace]
    found.shape = "keyvalue_args"
    found.call = [
        *_head(opener),
        'name(until=["{"])',
        *(_spaced(between) if between.strip() else []),
        f"keyvalue_args(string={_lit(delimiter)})",
        *_close_items(closer),
    ]
    found.guesses.append(
        f"arguments as {{key:value,…}} with strings between {delimiter!r}: keyvalue_args"
    )
    return True


def _xml(found: Found, probe: Probe, markup: str, two: str, lead: int, at: int) -> None:
    """Key/value markup: `OPEN key KEY_END [VALUE_OPEN] value VALUE_END`, found from two
    arguments of one call."""
    turn = probe.turn(calls=(ONE_TWO_ARGS,))[lead:]
    name_at = turn.find("get_weather")
    key1 = turn.find("city", name_at + len("get_weather"))
    value1 = turn.find(CITY, key1)
    key2 = turn.find("days", value1)
    value2 = turn.find(DAYS, key2)
    if -1 in (name_at, key1, value1, key2, value2):
        raise ImportProblem(
            "the arguments are neither JSON nor key/value markup this importer knows "
            f"(the call reads {turn[name_at:name_at + 120]!r})"
        )
    key_region = turn[key1 + len("city") : value1]
    mid = turn[value1 + len(CITY) : key2]
    # mid = VALUE_END sep OPEN; the text before the first key ends in OPEN too
    head_text = turn[name_at + len("get_weather") : key1]
    open_len = _common_suffix(head_text, mid)
    starts = [m.start() for m in MARKER.finditer(mid) if m.start() >= len(mid) - open_len]
    open_len = len(mid) - starts[0] if starts else 0
    open_ = mid[len(mid) - open_len :]
    value_end_text = mid[: len(mid) - len(open_)]
    value_end = value_end_text.strip()
    if not open_ or not value_end:
        raise ImportProblem(
            f"cannot tell the parameter markers apart between two arguments: {mid!r}"
        )
    value_end = _tokens(value_end)[0] if " " not in value_end else value_end
    key_tokens = _tokens(key_region.strip())
    key_end = key_tokens[0] if key_tokens else key_region.strip()
    value_open = "".join(key_tokens[1:]) if len(key_tokens) > 1 else ""
    if not key_end:
        raise ImportProblem(f"no marker ends a parameter's name: {key_region!r}")
    options = [f"open={_lit(open_)}", f"key_end={_lit(key_end)}"]
    if value_open:
        options.append(f"value_open={_lit(value_open)}")
    options.append(f"value_end={_lit(value_end)}")
    if key_region.endswith("\n") or value_end_text.startswith("\n"):
        options.append("trim_newline=true")
        found.guesses.append("a value is written between newlines: trim_newline=true")
    between_params = mid[len(value_end_text.rstrip()) : len(mid) - len(open_)]
    if between_params and between_params.isspace():
        options.append(f"write_between={_lit(between_params)}")
    if value_open:
        before_value = key_region[key_region.find(key_end) + len(key_end) :]
        before_value = before_value[: len(before_value) - len(before_value.lstrip())]
        if before_value:
            options.append(f"write_before_value={_lit(before_value)}")
    flagged = _type_flag(found, probe, open_, key_end, value_open, lead)
    if flagged is not None:
        base, flag_options = flagged
        kept = [
            o
            for o in options
            if o.split("=", 1)[0] in ("value_end", "trim_newline", "write_between")
        ]
        options = [f"open={_lit(base)}", *flag_options, *kept]
        implicit_open = base
    else:
        implicit_open = open_
    # the name: its suffix runs to the first parameter's opener
    name_suffix = head_text[: len(head_text) - open_len]
    tail = turn[value2 + len(DAYS) :]
    closer = (
        tail[len(value_end_text.rstrip()) :] if tail.startswith(value_end_text.rstrip()) else tail
    )
    closer_start = value2 + len(DAYS) + (len(tail) - len(closer))
    opener, call_close, section = _split_per_call(
        turn, name_at, closer_start, _xml_two(probe, lead), "search_docs"
    )
    _take_section(found, section)
    suffix_items = _spaced(name_suffix)  # GLM's newline after the name is written too
    if suffix_items and not suffix_items[-1].startswith("ws("):
        suffix_items.append("ws")
    until = [_tokens(name_suffix.strip())[0]] if name_suffix.strip() else [implicit_open]
    implicit = [implicit_open]
    closers = _close_items(call_close)
    if len(closers) > 1:
        implicit.append(json.loads(closers[1]))
    options.append(f"implicit_end=[{', '.join(_lit(i) for i in implicit)}]")
    found.shape = "xml_params"
    if len(closers) > 1 and closers[1] != _lit(until[0]):
        until.append(json.loads(closers[1]))  # a call with no argument
    found.call = [
        *_head(opener),
        f"name(until=[{', '.join(map(_lit, until))}])",
        *suffix_items,
        f"xml_params({', '.join(options)})",
        *closers,
    ]
    found.guesses.append(
        "a value that is not a string is typed by the tool's schema (how it is written: below)"
    )


def _type_flag(
    found: Found, probe: Probe, open_: str, key_end: str, value_open: str, lead: int
) -> tuple[str, list[str]] | None:
    """An attribute after the key's that says whether the value is text (DSML's
    `<｜DSML｜parameter name="city" string="true">`): a `key_pattern` with a `text` group
    and the flag's text value in `text_when`, when a value that is not a string gets another
    flag. (The opener without the key's attribute, the options that replace open, key_end
    and value_open); None for no such flag."""
    key_attr = re.search(r'(\s+)([\w:-]+)="$', open_)
    flag = re.fullmatch(r'\s*([\w:-]+)="([^"]*)"\s*(\S+)', value_open)
    if key_end != '"' or key_attr is None or flag is None:
        return None
    attr, text_value, end = flag.groups()
    try:
        typed = probe.turn(calls=(TYPED,))[lead:]
    except TemplateProblem:
        return None
    other = re.search(re.escape(open_) + r'days"\s*' + re.escape(attr) + r'="([^"]*)"', typed)
    if other is None or other.group(1) == text_value:
        return None
    base = open_[: key_attr.start()]
    pattern = f'{key_attr.group(2)}="(?P<key>[^"]*)"(?:\\s+{attr}="(?P<text>[^"]*)")?'
    found.guesses.append(
        f'{attr}="{text_value}" after the key marks a text value ({attr}="{other.group(1)}" '
        "a JSON one): key_pattern with text_when"
    )
    return base, [
        f"key_end={_lit(end)}",
        f"key_pattern=/{pattern}/",
        f"text_when=[{_lit(text_value)}]",
    ]


def _xml_two(probe: Probe, lead: int) -> str:
    try:
        return probe.turn(calls=(ONE_TWO_ARGS, TWO))[lead:].replace(CALL_IDS[1], CALL_IDS[0])
    except TemplateProblem:
        return ""


def _content_with_calls(found: Found, probe: Probe, lead: int) -> None:
    try:
        turn = probe.turn(LEAD, calls=(ONE,))
    except TemplateProblem:
        return
    at, name = turn.find(LEAD), turn.find("get_weather")
    if at == -1:
        found.guesses.append("the template drops content beside calls")
    elif name != -1 and at > name:
        found.content_after_calls = True
        found.guesses.append(
            "the template writes content after the calls: read as text after them, and "
            "`render content_after_calls=true` writes it there"
        )


def _typed(found: Found, probe: Probe) -> None:
    """How values that are not strings come out: a note, since the schema types them."""
    try:
        turn = probe.turn(calls=(TYPED,))
    except TemplateProblem:
        found.guesses.append("the template refuses arguments of every type")
        return
    if found.shape in ("json_call", "json_call_array", "json_args"):
        return
    seen = []
    if "True" in turn or "None" in turn or "'unit'" in turn:
        seen.append("Python spellings (True, None, {'unit': …}): the schema types them")
    if "{'unit': 'c'}" in turn and found.shape == "xml_params":
        at = next(n for n, item in enumerate(found.call) if item.startswith("xml_params("))
        found.call[at] = found.call[at][:-1] + ", write_python=true)"
        seen.append("render writes objects and arrays as Python's str does: write_python=true")
    if '{"unit": "c"}' in turn:
        seen.append("objects and arrays as JSON")
    if seen:
        found.guesses.append("values: " + "; ".join(seen))


def _space_after(text: str, at: int) -> str:
    return text[at : len(text) - len(text[at:].lstrip())] if at >= 0 else ""


def _space_before(text: str, at: int) -> str:
    return text[len(text[:at].rstrip()) : at] if at >= 0 else ""


def _literals(items: list[str]) -> list[str]:
    """The literal text of a call's items, in order (a lookahead's too: it is written)."""
    out = []
    for item in items:
        if item.startswith('"') or item.startswith('&"'):
            out.append(json.loads(item.lstrip("&")))
    return out


def _render_writes(found: Found, probe: Probe, two: str) -> None:
    """The `render` statement: the whitespace the template writes between the parts of an
    output (inside the reasoning and the section, after the reasoning and the content,
    between two calls), read off the probe renderings next to the markers found, so that
    `render` writes each output as the template does (check proves it)."""
    write: dict[str, Any] = {}
    gaps: dict[bool, str] = {}  # after the reasoning: before a call, before text
    if found.reasoning:
        opens, closes = found.reasoning
        for content, calls in (("", (ONE,)), (ANSWER, ())):
            try:
                turn = probe.turn(content, calls, thought=THOUGHT)
            except TemplateProblem:
                continue
            at = turn.find(THOUGHT)
            if at == -1:  # the thought left out: the gap after a closer the turn writes
                end = turn.find(closes)
                if end != -1:
                    gaps.setdefault(bool(calls), _space_after(turn, end + len(closes)))
                continue
            start = turn.rfind(opens, 0, at)
            end = turn.find(closes, at + len(THOUGHT))
            inside = [
                turn[start + len(opens) : at] if start != -1 else "",
                turn[at + len(THOUGHT) : end] if end != -1 else "",
            ]
            if "in_reasoning" not in write and all(not i or i.isspace() for i in inside):
                write["in_reasoning"] = inside
            if end != -1:
                gaps[bool(calls)] = _space_after(turn, end + len(closes))
    literals = _literals(found.call)
    try:
        turn = probe.turn(LEAD, calls=(ONE,))
    except TemplateProblem:
        turn = ""
    at = turn.find(LEAD)
    if at != -1:
        end = at + len(LEAD)
        closer = found.content[1] if found.content else ""
        if closer and turn[end:].lstrip().startswith(closer):
            end = turn.find(closer, end) + len(closer)
        write["after_content"] = _space_after(turn, end)
    one = probe.turn(calls=(ONE,))
    if found.section:
        opens, closes = found.section
        start, end = one.find(opens), one.rfind(closes)
        if start != -1 and end != -1:
            write["in_section"] = [
                _space_after(one, start + len(opens)),
                _space_before(one, end),
            ]
    second = two.find("search_docs")
    if literals and second != -1 and found.shape not in ("json_call_array", "python_calls"):
        opener = literals[0]
        write["between"] = _space_before(two, two.rfind(opener, 0, second))
    if gaps:
        before_text = gaps.get(False, gaps.get(True, ""))
        write["after_reasoning"] = before_text
        before_call = gaps.get(True, before_text)
        if before_call != before_text:
            if before_call == write.get("after_content", ""):
                write["before_calls"] = (
                    before_call  # Nemotron 3's `</think>Text` and `</think>\n<tool_call>`
                )
            else:
                write["after_reasoning"] = before_call
    if found.content_after_calls:
        write["content_after_calls"] = True
    found.render = {k: v for k, v in write.items() if v and v != ["", ""]}


def _render_line(render: dict[str, Any]) -> str:
    order = (
        "between",
        "after_content",
        "after_reasoning",
        "before_calls",
        "in_reasoning",
        "in_section",
        "content_after_calls",
    )
    parts = []
    for key in order:
        if key in render:
            value = render[key]
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, list):
                text = f"[{_lit(value[0])}, {_lit(value[1])}]"
            else:
                text = _lit(value)
            parts.append(f"{key}={text}")
    return "render " + " ".join(parts)


# --------------------------------------------------------------------------- writing


def grammar_text(found: Found, template_name: str) -> str:
    """The grammar file: header, statements, every guess as a comment."""
    lines = [
        f"# {found.name}: written by `toolgrammar import-template --chat-template "
        f"{template_name}` from the template's renderings; read every guess before relying on it.",
        "#",
    ]
    lines += [f"# guess: {guess}" for guess in found.guesses]
    lines += ["", f"family {found.name}", ""]
    if found.ignore:
        lines.append(f"ignore [{', '.join(_lit(i) for i in found.ignore)}]")
    if found.reasoning:
        flag = " prompt_opened" if found.reasoning_prompt_opened else ""
        lines.append(f"reasoning {_lit(found.reasoning[0])} {_lit(found.reasoning[1])}{flag}")
    if found.section:
        lines.append(f"section {_lit(found.section[0])} {_lit(found.section[1])}")
    if found.content:
        closes = f" {_lit(found.content[1])}" if found.content[1] else ""
        lines.append(f"content {_lit(found.content[0])}{closes}")
    if found.render:
        lines.append(_render_line(found.render))
    lines += ["", f"call  # {found.shape}"]
    lines += [f"    {item}" for item in found.call]
    return "\n".join(lines) + "\n"


def import_chat_template(
    source: str, name: str, template_name: str = "TEMPLATE", variables: dict[str, Any] | None = None
) -> tuple[str, Found]:
    """The grammar text for the chat template `source`, and what it was found from (how
    the template must be rendered to check it); ImportProblem when it cannot be."""
    try:
        found = analyse(source, name, variables)
    except TemplateProblem as problem:
        raise ImportProblem(str(problem)) from None
    return grammar_text(found, template_name), found


@dataclass
class Checked:
    """What `check` said of an imported grammar."""

    ok: bool  # the round trip and every invariant held
    report: str  # what check printed
    invariants_ok: bool = False
    template_findings: tuple[str, ...] = ()  # the round trip's findings, by key


def check_imported(
    text: str,
    name: str,
    template: Path,
    budget: float,
    variables: dict[str, Any] | None = None,
    mutable: bool = False,
    as_text: bool = False,
    stop: tuple[str, ...] = (),
) -> Checked:
    """Build the grammar in memory and run `check` on it, the round trip through `template`
    first (`stop`: the turn end the import found, which the grammar also `ignore`s, so the
    round trip's own turn-end search passes over it)."""
    from .compiler.build import compile_grammar_text
    from .compiler.errors import CompileErrors
    from .check import check
    from .check.templates import check_template
    from .runtime.registry import registered

    warnings: list[Any] = []
    try:
        code = compile_grammar_text(text, f"{name}.tg", None, warnings)
    except CompileErrors as errors:
        return Checked(False, str(errors))
    namespace: dict[str, Any] = {}
    exec(compile(code, f"{name}.tg", "exec"), namespace)
    with registered(namespace["SPEC"]):
        trip = check_template(
            name,
            template,
            variables=variables,
            stop=stop,
            mutable=mutable,
            arguments="text" if as_text else "object",
        )
        # the template it was imported from is its row: the round trip (render ≡ template
        # included) runs once, and check counts it as the family's template proof
        report = check(name, budget=budget, template_trip=trip)
    out = [str(w) for w in warnings] + [trip.summary(), report.summary()]
    keys = tuple(finding.key for finding in trip.findings)
    others = any(n for kind, n in report.failed.items() if kind != "template")
    invariants_ok = not others and report.no_samples is None and not report.incomplete
    return Checked(report.ok, "\n".join(out), invariants_ok, keys)
