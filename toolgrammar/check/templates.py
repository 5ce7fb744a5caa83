"""`toolgrammar check --template`: a grammar against the model's own chat template.

The chat template is the ground truth of a model's markup: it is what the model was trained
to write. This module renders a few conversations through it with jinja2 under the
conventions serving stacks use for Hugging Face templates (`messages` with assistant
`tool_calls` and tool results, `tools` in OpenAI's function shape, `add_generation_prompt`,
`bos_token`/`eos_token`, `raise_exception`, HF's `tojson`, `strftime_now`, the loopcontrols
extension and the `{% generation %}` block), cuts the final assistant turn out (the
conversation rendered with it, after the same conversation's generation prompt), parses it
with the family's grammar and requires the calls, the content and the reasoning back.

Then it proves render ≡ template (`render_differences`, `render_matches_template`): what
`render` writes for the same calls, content and reasoning equals the turn the template wrote,
byte for byte modulo `normalised`; a difference names the grammar line that wrote it.

It also reads what the generation prompt leaves open at its end (a reasoning block, a message
header, a call opener) and compares it with the grammar's `prompt_opened` settings, because a
parser that starts outside a block the prompt opened reads the whole output wrongly.

Everything a template can do wrong (not render, raise, not write tool calls) ends as a
finding with one line of explanation, never a traceback.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

from .. import parse
from ..runtime.params import with_params
from ..runtime.registry import get_spec
from ..runtime.dialects import markup_literals
from ..runtime.render import Piece, RenderError, output_pieces
from ..runtime.spec import FamilySpec, Lit, Skip, where

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city."},
                    "days": {"type": "integer", "description": "How many days ahead."},
                    "metric": {"type": "boolean", "description": "Celsius, not Fahrenheit."},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_docs",
            "description": "Search the documentation.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Only pages with these tags.",
                    },
                },
                "required": ["query"],
            },
        },
    },
]
# Every parameter has a description, as in llama.cpp's test tools: Command R+'s template
# concatenates each one into its prompt and cannot render a tool without them.
ARGUMENTS = ("object", "text")  # how a call's arguments reach the template
TOOLS_AS = ("list", "json")  # how a `tools_variables` entry holds the tools
# Mistral's templates require ids of 9 letters and digits; other templates take any string
CALL_IDS = ("aB3dE6gH9", "kL2mN5pQ8")
FINDING_KINDS = (
    "render",
    "no tool calls",
    "calls",
    "content",
    "reasoning",
    "prompt",
    "markup",
    "turn end",
)
# a plain reply whose turn end tells what the template writes after the model's text
TURN_END_PROBE = "Sentinel reply 7q."


class TemplateProblem(Exception):
    """The template cannot be loaded or rendered: one line saying why."""


class TemplateRefusal(TemplateProblem):
    """The template refused one conversation (`raise_exception`): a limit of the model
    (Llama 3.1 takes one call per turn), not a broken template."""


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Conversation:
    """A conversation whose last message is the assistant turn the model writes."""

    title: str
    messages: tuple[dict[str, Any], ...]
    calls: tuple[Call, ...] = ()
    content: str = ""
    reasoning: str = ""


@dataclass
class TemplateFinding:
    kind: str  # one of FINDING_KINDS
    conversation: str
    detail: str
    essence: str = ""  # what was found, without the output it was found in (default: detail)

    @property
    def key(self) -> str:
        """The finding, exactly and stably: its kind, its conversation and what differs
        (`content (reply after a tool result): wrote 'It is…', read None`), the output it
        was read from left out. A row's `known` lists these."""
        where = f" ({self.conversation})" if self.conversation else ""
        return f"{self.kind}{where}: {self.essence or self.detail}"

    def __str__(self) -> str:
        where = f" ({self.conversation})" if self.conversation else ""
        return f"  [{self.kind}]{where} {self.detail}"


@dataclass
class TemplateReport:
    """What the round trip through one template found for one family."""

    family: str
    template: str
    conversations: int = 0
    prompt_end: str = ""  # the last characters of the generation prompt, for the report
    findings: list[TemplateFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the template leaves out, not errors

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def kinds(self) -> set[str]:
        return {finding.kind for finding in self.findings}

    def summary(self) -> str:
        """One line when the template could not be used at all, else a line per finding."""
        for finding in self.findings:
            if finding.kind == "render" or (
                finding.kind == "no tool calls" and not finding.conversation
            ):
                return f"{self.family}: template {self.template}: FAILED: {finding.detail}"
        state = "ok" if self.ok else f"{len(self.findings)} FAILED"
        head = f"{self.family}: template {self.template}: {self.conversations} conversations, "
        lines = [head + f"prompt ends {self.prompt_end!r}: {state}"]
        lines += [str(finding) for finding in self.findings]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


# --------------------------------------------------------------------------- rendering


class GenerationBlock(Extension):
    """`{% generation %}…{% endgeneration %}`: transformers marks the assistant's tokens for
    training masks with it; for rendering, the block is its body."""

    tags = {"generation"}

    def parse(self, parser: Any) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _raise_exception(message: str) -> None:
    """Templates call this to refuse a conversation (HF's global of the same name)."""
    raise TemplateRefusal(f"the template refuses the conversation: {message}")


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """HF's `tojson`: plain `json.dumps` with its keyword arguments (jinja's own escapes
    HTML and sorts keys, which no model was trained on)."""
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        sort_keys=sort_keys,
        default=_listed,
    )


def _listed(value: Any) -> Any:
    """A lazy sequence (`tools | map(attribute='function')`) is dumped as the list it yields,
    as llama.cpp's template engine does, instead of failing."""
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict)):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


def environment(mutable: bool = False) -> SandboxedEnvironment:
    """The jinja2 environment serving stacks render Hugging Face chat templates in.

    transformers renders in an immutable sandbox (`list.append` is refused); `mutable=True`
    allows it, as llama.cpp's engine does, for templates written against that engine.
    """
    kind = SandboxedEnvironment if mutable else ImmutableSandboxedEnvironment
    env = kind(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, GenerationBlock])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def load_template(source: str, mutable: bool = False) -> jinja2.Template:
    try:
        return environment(mutable).from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise TemplateProblem(f"cannot load: line {error.lineno}: {error.message}") from None


def render(
    template: jinja2.Template,
    messages: Iterable[dict[str, Any]],
    *,
    add_generation_prompt: bool,
    variables: dict[str, Any],
) -> str:
    """One rendering, every failure a TemplateProblem with the template's own message."""
    context = {"bos_token": "<s>", "eos_token": "</s>", **variables}
    try:
        return template.render(
            messages=list(messages),
            tools=TOOLS,
            add_generation_prompt=add_generation_prompt,
            **context,
        )
    except TemplateProblem:
        raise
    except Exception as error:  # a template is code: any error it raises is its report
        raise TemplateProblem(f"cannot render: {type(error).__name__}: {error}") from None


# --------------------------------------------------------------------------- conversations


def _call_message(calls: Iterable[Call], as_text: bool) -> list[dict[str, Any]]:
    """The `tool_calls` of an assistant message; `as_text` writes arguments as JSON text,
    for templates that print them as they are instead of through `tojson`."""
    out = []
    for number, call in enumerate(calls):
        arguments: Any = (
            json.dumps(call.arguments, ensure_ascii=False) if as_text else call.arguments
        )
        out.append(
            {
                "id": CALL_IDS[number % len(CALL_IDS)],
                "type": "function",
                "function": {"name": call.name, "arguments": arguments},
            }
        )
    return out


def conversations(
    spec: FamilySpec, reasoning_fields: Sequence[str], as_text: bool = False
) -> list[Conversation]:
    """A call alone, content with two calls, a reply after a tool result and, for a family
    that reads reasoning, reasoning before a call."""
    weather = Call("get_weather", {"city": "Zürich", "days": 3, "metric": True})
    search = Call("search_docs", {"query": 'umbrella "policy"', "tags": ["rain", "travel"]})
    system = {"role": "system", "content": "You are a helpful assistant."}
    ask = {"role": "user", "content": "What is the weather in Zürich?"}

    def assistant(calls: tuple[Call, ...], content: str = "", reasoning: str = "") -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = _call_message(calls, as_text)
        if reasoning:
            for name in reasoning_fields:
                message[name] = reasoning
        return message

    result = {"role": "tool", "tool_call_id": CALL_IDS[0], "name": "get_weather"}
    result["content"] = json.dumps({"temperature": 21, "sky": "clear"})
    reply = "It is 21 degrees and clear in Zürich."
    found = [
        Conversation("one call", (system, ask, assistant((weather,))), (weather,)),
        Conversation(
            "content and two calls",
            (ask, assistant((weather, search), "Let me check both.")),
            (weather, search),
            "Let me check both.",
        ),
        Conversation(
            "reply after a tool result",
            (ask, assistant((weather,)), result, assistant((), reply)),
            content=reply,
        ),
    ]
    if spec.reasoning:
        thought = "The user wants the weather, so I call the tool."
        found.append(
            Conversation(
                "reasoning and a call",
                (ask, assistant((weather,), reasoning=thought)),
                (weather,),
                reasoning=thought,
            )
        )
    return found


# the message fields serving stacks hand an assistant's reasoning in (vLLM's older and newer
# names, and gpt-oss's): a template may read any of them
REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")


def reasoning_fields(source: str) -> tuple[str, ...]:
    """The message fields the template reads the assistant's reasoning from (each is given
    the reasoning); `reasoning_content` when it reads none of them by name."""
    found = tuple(
        name for name in REASONING_FIELDS if re.search(rf"""\.{name}\b|['"]{name}['"]""", source)
    )
    return found or ("reasoning_content",)


# --------------------------------------------------------------------------- cutting


def _common_prefix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    for index in range(size):
        if a[index] != b[index]:
            return index
    return size


def _marker_start(text: str, at: int, markers: Iterable[str]) -> int:
    """`at`, moved back to the start of a marker of `text` it falls inside: the prompt and
    the turn part where a marker differs (`<think>`, `</think>`), not inside its shared `<`."""
    moved = True
    while moved:
        moved = False
        for marker in markers:
            for start in range(max(0, at - len(marker) + 1), at):
                if text.startswith(marker, start):
                    at, moved = start, True
                    break
    return at


def assistant_turn(
    template: jinja2.Template,
    conversation: Conversation,
    variables: dict[str, Any],
    markers: Iterable[str] = (),
) -> tuple[str, str, str]:
    """(prompt, turn, unused prompt tail): the generation prompt of the conversation before
    its last message, and what the whole conversation writes after it. When the whole
    conversation does not begin with the generation prompt (a template that leaves the
    prompt's `<think>` out of history), the turn starts where they part (never inside one of
    `markers`) and the prompt's unused tail is returned for the report."""
    history = conversation.messages[:-1]
    prompt = render(template, history, add_generation_prompt=True, variables=variables)
    whole = render(
        template, conversation.messages, add_generation_prompt=False, variables=variables
    )
    shared = _common_prefix(prompt, whole)
    if shared < len(prompt):
        after_header = _after_generation_header(template, history, variables, prompt, whole)
        if after_header is None:
            after_header = _after_repeated_tail(prompt, whole, shared)
        if after_header is not None:
            return prompt, whole[after_header:], ""
        # never inside a marker of either text (`<|channel>` of the prompt, `<|tool_call>` of
        # the turn: they share `<|`)
        markers = list(markers)
        shared = min(_marker_start(prompt, shared, markers), _marker_start(whole, shared, markers))
    return prompt, whole[shared:], prompt[shared:]


def _after_generation_header(
    template: jinja2.Template,
    history: tuple[dict[str, Any], ...],
    variables: dict[str, Any],
    prompt: str,
    whole: str,
) -> int | None:
    """Where the turn starts when the template writes the history differently before the
    generation prompt than before the answer (Command R+ writes its instructions after the
    last message, then the header; Hermes 2 Pro ends a tool message differently): after
    the generation header (what `add_generation_prompt` adds), found again in the whole
    conversation where it parts from the prompt or later. None when that header is not
    there whole (a prompt that opens `<think>` the history leaves out)."""
    try:
        without = render(template, history, add_generation_prompt=False, variables=variables)
    except TemplateProblem:
        return None
    if not prompt.startswith(without) or len(without) == len(prompt):
        return None
    header = prompt[len(without) :]
    shared = _common_prefix(prompt, whole)
    at = whole.find(header, max(0, shared - len(header) + 1))
    return None if at == -1 else at + len(header)


def _after_repeated_tail(prompt: str, whole: str, shared: int) -> int | None:
    """Where the turn starts when the template writes the last user turn differently once
    an answer follows (Mistral Nemo moves the system prompt into the last user turn): after
    the prompt's tail, its whole last line at least, which the whole conversation writes
    from where it parts from the prompt. None when it does not."""
    tail = prompt.rstrip()
    last_line = len(prompt) - (tail.rfind("\n") + 1)
    if last_line == 0 or not tail:
        return None
    at = whole.find(prompt[-last_line:], shared)
    while at != -1:
        end = at + last_line
        if (
            end - shared <= len(prompt)
            and whole[shared:end] == prompt[len(prompt) - (end - shared) :]
        ):
            return end
        at = whole.find(prompt[-last_line:], at + 1)
    return None


def cut_at_stop(turn: str, stops: Iterable[str]) -> str:
    """The model's output: the turn up to its first stop string (a serving stack stops at
    the end-of-turn token and does not pass it to the parser)."""
    end = len(turn)
    for stop in stops:
        if stop and (at := turn.find(stop)) != -1:
            end = min(end, at)
    return turn[:end]


def turn_end(
    template: jinja2.Template, variables: dict[str, Any], markers: Iterable[str] = ()
) -> list[str]:
    """Where generation stops: the first special token, in the line the template writes after
    a plain assistant reply, that is no part of the grammar's markup (`<|im_end|>`; Cohere's
    `<|END_OF_TURN_TOKEN|>` after its `<|END_RESPONSE|>`; Kimi K3's `<|end_of_msg|>` after
    the `<|close|>…<|sep|>` tags its grammar reads), or else that line."""
    try:
        _, turn, _ = assistant_turn(template, _plain_reply(), variables)
    except TemplateRefusal:  # a template that wants tools in every turn: no turn end known
        return []
    at = turn.find(TURN_END_PROBE)
    if at == -1:
        return []
    after = turn[at + len(TURN_END_PROBE) :].strip()
    first_line = after.split("\n", 1)[0]
    tokens = TURN_END_MARKER.findall(first_line)
    ours = [token for token in tokens if not any(token in marker for marker in markers)]
    return ours[:1] if tokens else [first_line]


# a special token as templates spell them: `<|im_end|>`, `</s>`, `<end_of_turn>`, `[/INST]`
TURN_END_MARKER = re.compile(r"<[^<>\s]+>|\[/?[A-Z_]+\]")


def _plain_reply() -> Conversation:
    """A reply with no calls: what the template writes after its text is the turn end."""
    return Conversation(
        "plain reply",
        (
            {"role": "user", "content": "Say something."},
            {"role": "assistant", "content": TURN_END_PROBE},
        ),
    )


def _what_changed(before: Reading | str, after: Reading | str) -> str:
    """What reading a marker spelled out after the output changed, for the finding."""
    if isinstance(after, str) or isinstance(before, str):
        return f"{after!r}"
    if after.content != before.content:
        return f"content ({after.content!r})"
    if after.reasoning != before.reasoning:
        return f"reasoning ({after.reasoning!r})"
    return f"calls ({after.calls!r})"


def _ignore_line(spec: FamilySpec, marker: str) -> str:
    """The grammar line a turn-end marker read as text points at: the statement that names
    it (its `ignore`), or the `family` line, where an `ignore` of it is missing."""
    named = dict(spec.markers_at).get(marker)
    if named:
        return f"{named}: this statement names it"
    return f"{family_line(spec)}: no `ignore {json.dumps(marker, ensure_ascii=False)}`"


def family_line(spec: FamilySpec) -> str:
    """The `file:line` of the grammar's `family` statement: where a finding points when what
    is wrong is a statement the grammar lacks (an `ignore`, a `content`, a `section`)."""
    line = 1
    try:
        file = resources.files("toolgrammar.grammars").joinpath(Path(spec.source).name)
        text = file.read_text("utf-8")
    except OSError:  # a grammar compiled from elsewhere: its first line
        text = ""
    if found := re.search(rf"^family\s+{re.escape(spec.name)}\b", text, re.M):
        line = text[: found.start()].count("\n") + 1
    return f"{spec.source}:{line}"


# --------------------------------------------------------------------------- the prompt


@dataclass(frozen=True)
class PromptEnd:
    """What the generation prompt leaves open at its end."""

    reasoning: bool  # it ends with one of the grammar's reasoning openers
    block: bool  # it ends with the grammar's `prompt_opened` opener (`prompt_opens`)
    opener: str  # a call, section or message opener it ends with that the grammar does not flag


def prompt_end(spec: FamilySpec, prompt: str) -> PromptEnd:
    tail = prompt.rstrip()
    reasoning = any(tail.endswith(o.strip()) for r in spec.reasoning for o in r.opens if o.strip())
    flagged = spec.prompt_opens.strip()
    block = bool(flagged) and tail.endswith(flagged)
    unflagged = "" if block else next((o for o in _openers(spec) if tail.endswith(o)), "")
    return PromptEnd(reasoning, block, unflagged)


def _openers(spec: FamilySpec) -> list[str]:
    """Literals that open a call, a section or a message, longest first."""
    found = {text for shape in spec.shapes for text, _ in shape.openers}
    if spec.section:
        found |= set(spec.section.opens)
    if spec.messages:
        found |= set(spec.messages.header)
    for shape in spec.shapes:
        if shape.call and isinstance(shape.call[0], Lit):
            found |= set(shape.call[0].texts)
    return sorted((o.strip() for o in found if o.strip()), key=len, reverse=True)


def _prompt_mismatches(spec: FamilySpec, end: PromptEnd) -> list[str]:
    """Where the grammar's `prompt_opened` defaults and the template's prompt disagree."""
    found = []
    grammar_reasoning = any(r.prompt_opened for r in spec.reasoning)
    if end.reasoning != grammar_reasoning:
        opens = spec.reasoning[0].opens[0] if spec.reasoning else ""
        said = "opens" if grammar_reasoning else "does not open"
        does = "opens it" if end.reasoning else "does not"
        found.append(f"the grammar says the prompt {said} reasoning ({opens!r}); this one {does}")
    if spec.prompt_opens and not end.block:
        found.append(
            f"the grammar says the prompt ends with {spec.prompt_opens!r}; this one does not"
        )
    if end.opener:
        found.append(
            f"the prompt ends with the opener {end.opener!r}, which the grammar does not flag "
            "prompt_opened"
        )
    return found


# --------------------------------------------------------------------------- the round trip


@dataclass(frozen=True)
class Reading:
    """What the parser read from one output: calls as (name, JSON value), content, reasoning."""

    calls: list[tuple[str, Any]]
    content: str | None
    reasoning: str | None
    ids: list[str] = field(default_factory=list, compare=False)  # the calls' ids


def _read(
    family: str, output: str, params: dict[str, str], options: dict[str, Any]
) -> Reading | str:
    """The parser's reading of `output`, or why it failed (it must not raise: a finding)."""
    try:
        message = parse(family, output, TOOLS, "stop", params=params, **options)
    except Exception as error:
        return f"the parser raised {error!r}"
    calls = [(c.function.name, _json_or_text(c.function.arguments)) for c in message.tool_calls]
    ids = [c.id for c in message.tool_calls]
    return Reading(calls, _text_or_none(message.content), _text_or_none(message.reasoning), ids)


def _text_or_none(text: str | None) -> str | None:
    """Text as compared: whitespace at its ends is the markup's, and no text is None."""
    return (text or "").strip() or None


def _differences(
    conversation: Conversation, output: str, reading: Reading, notes: list[str]
) -> list[TemplateFinding]:
    """The calls, and the content and reasoning the template wrote, against the reading."""
    title, found = conversation.title, []
    wrote = [(c.name, c.arguments) for c in conversation.calls if c.name in output]
    if len(wrote) < len(conversation.calls):  # the template's limit: nothing to read back
        notes.append(f"{title}: the template writes {len(wrote)} of the turn's calls")
    if reading.calls != wrote:
        essence = f"wrote {wrote!r}, read {reading.calls!r}"
        found.append(TemplateFinding("calls", title, f"{essence} from {output!r}", essence))
    for kind, text, read in (
        ("content", conversation.content, reading.content),
        ("reasoning", conversation.reasoning, reading.reasoning),
    ):
        if text and text not in output:  # left out by the template: nothing to read back
            notes.append(f"{title}: the template does not write the turn's {kind}")
        elif read != _text_or_none(text):
            essence = f"wrote {text!r}, read {read!r}"
            found.append(TemplateFinding(kind, title, f"{essence} from {output!r}", essence))
    return found


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _writes_python_repr(output: str, conversation: Conversation) -> bool:
    """The template printed a dict of arguments as Python (`{'city': …}`): it wants them as
    JSON text, as some templates do."""
    return any(repr(c.arguments) in output for c in conversation.calls if c.arguments)


def check_template(
    family: str,
    template: str | Path,
    *,
    variables: dict[str, Any] | None = None,
    stop: Iterable[str] = (),
    params: dict[str, str] | None = None,
    name: str | None = None,
    mutable: bool = False,
    arguments: str = "object",
    tools_variables: dict[str, str] | None = None,
) -> TemplateReport:
    """Round-trip `family`'s grammar through a chat template (a path, or the template's text).

    `variables` are passed to the template (`enable_thinking`, `bos_token`, …); `stop`
    lists the model's stop strings besides `eos_token` and the template's turn end;
    `params` are the grammar's params; `mutable` renders as llama.cpp does, letting the
    template change lists (see `environment`). Serving stacks adapt some templates by
    convention: `arguments="text"` hands every call's arguments over as JSON text, not a
    dict (a template that concatenates them: Functionary v3.2's); `tools_variables` also
    gives the tools under other names, as the list (`"list"`) or as JSON text indented by
    two (`"json"`, what llama.cpp hands FireFunction v2's `functions`).
    """
    if arguments not in ARGUMENTS:
        raise ValueError(f"arguments must be one of {ARGUMENTS}, not {arguments!r}")
    spec = with_params(get_spec(family), params)
    label = name or (Path(template).name if _is_path(template) else "<template>")
    report = TemplateReport(spec.name, label)
    context = {**tool_variables(tools_variables or {}), **(variables or {})}
    run = _Run(family, spec, context, list(stop), dict(params or {}), report, arguments == "text")
    try:
        run.all(_source(template), mutable)
    except TemplateProblem as problem:
        report.findings.append(TemplateFinding("render", "", str(problem)))
    return report


def tool_variables(names: dict[str, str]) -> dict[str, Any]:
    """The tools under more variable names, each as the list or as JSON text."""
    found: dict[str, Any] = {}
    for variable, form in names.items():
        if form not in TOOLS_AS:
            raise ValueError(f"tools variable {variable!r}: {form!r} is not one of {TOOLS_AS}")
        found[variable] = TOOLS if form == "list" else json.dumps(TOOLS, indent=2)
    return found


def _is_path(template: str | Path) -> bool:
    """A Path, or a one-line string naming a `.jinja` file (a template's text has markup)."""
    if isinstance(template, Path):
        return True
    return template.endswith(".jinja") and "\n" not in template and "{" not in template


def _source(template: str | Path) -> str:
    if not _is_path(template):
        return str(template)
    path = Path(template)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise TemplateProblem(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise TemplateProblem(f"{path} is not UTF-8 text: {error.reason}") from None


@dataclass
class _Run:
    """One template against one family: every conversation, into `report`."""

    family: str
    spec: FamilySpec
    variables: dict[str, Any]
    stop: list[str]
    params: dict[str, str]
    report: TemplateReport
    text_arguments: bool = False  # every call's arguments as JSON text from the start
    turn_ends: set[str] = field(default_factory=set)  # the markers `_turn_end` reads

    def all(self, source: str, mutable: bool) -> None:
        template = load_template(source, mutable)
        markers = sorted(markup_literals(self.spec), key=len, reverse=True)
        eos = self.variables.get("eos_token", "</s>")
        stops = [*self.stop, eos, *turn_end(template, self.variables, markers)]
        self.turn_ends.update(s for s in self.stop if TURN_END_MARKER.fullmatch(s))
        self.plain_turn_end(template)
        field_name = reasoning_fields(source)
        as_text = self.text_arguments
        for conversation in conversations(self.spec, field_name, as_text):
            try:
                prompt, turn, unused = assistant_turn(
                    template, conversation, self.variables, markers
                )
                if not as_text and _writes_python_repr(turn, conversation):
                    as_text = True
                    note = "the template prints arguments as they are: given as JSON text"
                    self.report.notes.append(note)
                if as_text and not self.text_arguments:
                    conversation = _with_text_arguments(self.spec, conversation, field_name)
                    prompt, turn, unused = assistant_turn(
                        template, conversation, self.variables, markers
                    )
            except TemplateRefusal as refusal:
                self.report.notes.append(f"{conversation.title}: {refusal}")
                continue
            if unused:
                self.report.notes.append(
                    f"{conversation.title}: the turn replaces the prompt's {unused!r} "
                    f"with {turn[: len(unused) + 8]!r}"
                )
            output = cut_at_stop(turn, stops)
            self.one(conversation, prompt, turn, unused, output)
            self._turn_end(conversation, prompt, turn, unused, output)
        if self.report.conversations == 0:
            raise TemplateProblem("the template refuses every conversation")
        self._no_calls_at_all()

    def _no_calls_at_all(self) -> None:
        """A template that writes no call in any conversation is one finding, not one each."""
        with_calls = [f for f in self.report.findings if f.kind == "no tool calls"]
        expected = sum(1 for c in conversations(self.spec, ("reasoning_content",)) if c.calls)
        if with_calls and len(with_calls) == expected:
            detail = f"the template does not write tool calls (none in {expected} conversations)"
            others = [f for f in self.report.findings if f.kind != "no tool calls"]
            self.report.findings = [TemplateFinding("no tool calls", "", detail), *others]

    def one(
        self, conversation: Conversation, prompt: str, turn: str, unused: str, output: str
    ) -> None:
        """Read the turn as the prompt left it open, then with the grammar's defaults."""
        report = self.report
        end = prompt_end(self.spec, prompt)
        if report.conversations == 0:
            report.prompt_end = prompt[-40:]
        report.conversations += 1
        if conversation.calls and not any(c.name in output for c in conversation.calls):
            essence = "the template does not write the assistant's tool calls"
            finding = TemplateFinding("no tool calls", conversation.title, "", essence)
            finding.detail = f"{essence}: {output!r}"
            report.findings.append(finding)
            return
        options: dict[str, Any] = {"reasoning_open": self._opened(prompt, turn, unused, end)}
        if self.spec.prompt_opens:
            options["block_open"] = end.block
        reading = _read(self.family, output, self.params, options)
        if isinstance(reading, str):
            report.findings.append(TemplateFinding("calls", conversation.title, reading))
            return
        found = _differences(conversation, output, reading, report.notes)
        found += self._id_differences(conversation, output, reading)
        report.findings += found
        report.findings += render_differences(self.spec, conversation, output, options)
        mismatches = _prompt_mismatches(self.spec, end)
        if found or not mismatches:
            return
        by_default = _read(self.family, output, self.params, {})
        if by_default == reading:  # the defaults read this turn the same: harmless
            for mismatch in mismatches:
                if mismatch + " (harmless here)" not in report.notes:
                    report.notes.append(mismatch + " (harmless here)")
            return
        essence = "; ".join(mismatches)
        detail = (
            f"{essence} ({_prompt_lines(self.spec)}): with the grammar's defaults it reads "
            f"{by_default!r}"
        )
        report.findings.append(TemplateFinding("prompt", conversation.title, detail, essence))

    def _turn_end(
        self, conversation: Conversation, prompt: str, turn: str, unused: str, output: str
    ) -> None:
        """The marker the stop cut off the turn (the template's turn end, `<|im_end|>`, or
        one of the row's stops) is markup to the grammar: a model that spells it out must
        not show it as content. One finding per marker, the first conversation's."""
        tail = turn[len(output) :].lstrip()
        found = TURN_END_MARKER.match(tail)
        if not found or found.group() not in self.turn_ends:
            return
        marker = found.group()
        if any(f.essence.startswith(repr(marker)) for f in self.report.findings):
            return
        end = prompt_end(self.spec, prompt)
        options: dict[str, Any] = {"reasoning_open": self._opened(prompt, turn, unused, end)}
        if self.spec.prompt_opens:
            options["block_open"] = end.block
        self._spelled_out(conversation.title, output, marker, options)

    def _spelled_out(self, title: str, output: str, marker: str, options: dict[str, Any]) -> None:
        """A `turn end` finding when `output` followed by `marker` reads otherwise."""
        reading = _read(self.family, output, self.params, options)
        spelled = _read(self.family, output + marker, self.params, options)
        if spelled == reading:
            return
        essence = (
            f"{marker!r}, the turn end the stop cuts off, is read as "
            f"{_what_changed(reading, spelled)}, not as markup"
        )
        detail = f"{_ignore_line(self.spec, marker)}: {essence}"
        self.report.findings.append(TemplateFinding("turn end", title, detail, essence))

    def plain_turn_end(self, template: jinja2.Template) -> None:
        """The turn end of a plain reply (the first marker the template writes after the
        model's text, whether or not the grammar reads it) read after that reply."""
        plain = _plain_reply()
        try:
            prompt, turn, unused = assistant_turn(template, plain, self.variables)
        except TemplateProblem:  # a template that wants tools in every turn: none known
            return
        at = turn.find(TURN_END_PROBE)
        if at == -1:
            return
        at += len(TURN_END_PROBE)
        found = TURN_END_MARKER.match(turn[at:].lstrip())
        if not found:
            return
        self.turn_ends.add(found.group())
        end = prompt_end(self.spec, prompt)
        options: dict[str, Any] = {"reasoning_open": self._opened(prompt, turn, unused, end)}
        if self.spec.prompt_opens:
            options["block_open"] = end.block
        self._spelled_out(plain.title, turn[:at], found.group(), options)

    def _id_differences(
        self, conversation: Conversation, output: str, reading: Reading
    ) -> list[TemplateFinding]:
        """A family whose markup carries the model's own call id (`skip(id=true)`) reads
        back the ids the template wrote."""
        if not any(isinstance(i, Skip) and i.id for shape in self.spec.shapes for i in shape.call):
            return []
        wrote = [CALL_IDS[n % len(CALL_IDS)] for n in range(len(conversation.calls))]
        wrote = [i for i in wrote if i in output]
        if not wrote or reading.ids == wrote:
            return []
        essence = f"wrote the ids {wrote!r}, read {reading.ids!r}"
        return [TemplateFinding("calls", conversation.title, f"{essence} from {output!r}", essence)]

    def _opened(self, prompt: str, turn: str, unused: str, end: PromptEnd) -> bool:
        """Whether the turn, as the template writes it, starts inside reasoning.

        When the prompt and the turn part, the turn follows their shared text: it is inside
        a block that text opened, or that the prompt's unused tail opened if the turn goes
        on with the block's closer (GLM-4.7's history writes `</think>` for the prompt's
        `<think>`); a history that leaves the block out (MiniMax-M2) starts outside it.
        """
        if not unused:
            return end.reasoning
        shared = prompt_end(self.spec, prompt[: len(prompt) - len(unused)])
        if shared.reasoning:
            return True
        return end.reasoning and _closed_first(self.spec, turn)


# --------------------------------------------------------------------------- render ≡ template

CONTEXT = 24  # characters of each text shown either side of where render and template part


def render_differences(
    spec: FamilySpec, conversation: Conversation, output: str, options: dict[str, Any]
) -> list[TemplateFinding]:
    """The proof that `render` writes what the model's chat template writes: the turn the
    template wrote (`output`, cut at the stop) against `render` for the same calls, ids,
    content and reasoning, byte for byte after `normalised`. A difference is one `markup`
    finding naming the grammar line whose text (or missing text) is where they part."""
    wrote = [(c.name, c.arguments) for c in conversation.calls if c.name in output]
    ids = list(CALL_IDS[: len(wrote)])
    content = conversation.content if conversation.content in output else ""
    reasoning: str | None = conversation.reasoning
    if not reasoning or reasoning not in output:
        # a template that writes an empty block for a turn without reasoning: render too
        reasoning = "" if _opens_with_reasoning(spec, output) else None
    try:
        pieces = output_pieces(spec, wrote, content=content or None, reasoning=reasoning, ids=ids)
    except RenderError as error:
        essence = f"render cannot write this turn: {error}"
        return [TemplateFinding("markup", conversation.title, essence)]
    pieces = _unopened(spec, pieces, options, output)
    ours, theirs, offset = normalised(spec, pieces, output)
    at = _first_difference(ours, theirs)
    if at is None:
        return []
    piece = _piece_at(pieces, at + offset, theirs[at : at + 1].isspace())
    essence = (
        f"{piece.what}: render writes {_around(ours, at)!r} where the template writes "
        f"{_around(theirs, at)!r}"
    )  # the key a row's `known` names: no grammar line, which moves when the file is edited
    start = _piece_start(pieces, piece) - offset
    inserted = _insertion(spec, ours, theirs, start if 0 <= start <= at else at)
    detail = f"{_piece_line(spec, piece)}: {essence}{inserted}"
    detail += f"; render: {ours!r}, template: {theirs!r}"
    return [TemplateFinding("markup", conversation.title, detail, essence)]


def _piece_start(pieces: list[Piece], piece: Piece) -> int:
    """Where `piece` (one of `pieces`, by identity) starts in their text."""
    position = 0
    for each in pieces:
        if each is piece:
            return position
        position += len(each.text)
    return -1


def _piece_line(spec: FamilySpec, piece: Piece) -> str:
    """The grammar line of the piece where render and the template part; a piece that no
    statement wrote (bare content: the grammar has no `content` statement; no `render`
    statement) points at the `family` line, saying which statement is absent."""
    if re.search(r":\d+$", piece.where):
        return piece.where
    if piece.what == "the content" and spec.content is None:
        return f"{family_line(spec)}: no `content` statement, so render writes content bare"
    return family_line(spec)


def _insertion(spec: FamilySpec, ours: str, theirs: str, at: int) -> str:
    """When the template writes text at `at` and then goes on as render does (a marker that
    render does not write there: a missing `section`, `content` or literal), that text, with
    the grammar line that names it, or the `family` line when no statement names it."""
    ahead = ours[at : at + 12]
    if not ahead:
        inserted = theirs[at:]
    else:
        found = theirs.find(ahead, at + 1, at + 200)
        # render's text goes on there at least as far as it went on before the insertion
        far = min(len(ours) - at, len(ahead) + 12)
        if found != -1 and _common_prefix(ours[at:], theirs[found:]) >= far:
            inserted = theirs[at:found]
        else:
            inserted = ""
    marker = inserted.strip()
    if not marker:
        return ""
    named = [where for known, where in spec.markers_at if marker.startswith(known)]
    if named:
        return f"; the template writes {inserted!r} first, a marker of {named[0]}"
    return (
        f"; the template writes {inserted!r} first, which no statement of the grammar names "
        f"({family_line(spec)}: a missing `section`, `content` or `ignore` statement, or a "
        "missing literal)"
    )


def render_matches_template(
    family: str, template: str | Path, **options: Any
) -> list[TemplateFinding]:
    """The render ≡ template proof alone: the `markup` findings of `check_template` (same
    arguments) for `family` and one chat template; empty when `render` writes every
    conversation exactly as the template does. `check_row` runs it with the rest."""
    report = check_template(family, template, **options)
    return [f for f in report.findings if f.kind == "markup"]


def _unopened(
    spec: FamilySpec, pieces: list[Piece], options: dict[str, Any], output: str
) -> list[Piece]:
    """`pieces` without the opener the prompt already wrote: a turn that starts inside the
    reasoning (the prompt opened it, or the turn starts with its closer) or after the
    `prompt_opened` opener does not write it again."""
    if spec.reasoning and pieces and pieces[0].text in spec.reasoning[0].opens:
        closes = [c.strip() for c in spec.reasoning[0].closes if c.strip()]
        if options.get("reasoning_open") or any(output.lstrip().startswith(c) for c in closes):
            return pieces[1:]
    if options.get("block_open") and spec.prompt_opens:
        text = "".join(p.text for p in pieces)
        at = text.find(spec.prompt_opens)
        if at != -1 and not text[:at].strip():
            return _drop_prefix(pieces, at + len(spec.prompt_opens))
    return pieces


def _drop_prefix(pieces: list[Piece], size: int) -> list[Piece]:
    out = []
    for piece in pieces:
        if size >= len(piece.text):
            size -= len(piece.text)
            if piece.text:
                continue
        elif size:
            piece = Piece(piece.text[size:], piece.where, piece.what)
            size = 0
        out.append(piece)
    return out


def _opens_with_reasoning(spec: FamilySpec, output: str) -> bool:
    """The turn starts with the reasoning opener or closer `render` writes (an empty block,
    or the end of the one the prompt opened)."""
    if not spec.reasoning:
        return False
    head = output.lstrip()
    block = spec.reasoning[0]
    return any(m.strip() and head.startswith(m.strip()) for m in (block.opens[0], block.closes[0]))


def normalised(spec: FamilySpec, pieces: list[Piece], output: str) -> tuple[str, str, int]:
    """(render's text, the template's text, where render's compared text starts in the
    pieces), as compared. Two things are left out, both the template's framing around the
    model's text: whitespace at the ends of the turn, and the grammar's `ignore` markers at
    the end of the turn (a turn end such as `<|im_end|>` the parser drops; `render` writes
    an output, not a turn)."""
    ours = "".join(p.text for p in pieces)
    stripped = ours.lstrip()
    theirs = output.strip()
    ends = sorted((m for m in spec.ignore if m.strip()), key=len, reverse=True)
    cut = True
    while cut:
        cut = False
        for marker in ends:
            if theirs.endswith(marker) and not stripped.rstrip().endswith(marker):
                theirs, cut = theirs[: -len(marker)].rstrip(), True
    return stripped.rstrip(), theirs, len(ours) - len(stripped)


PYTHON_BOOLEANS = {"true": "True", "false": "False"}
WRITERS = ("render ", "no `render`", "ws(")  # the pieces that write whitespace only


def _first_difference(ours: str, theirs: str) -> int | None:
    """Where render's text and the template's part, None when they do not. A boolean the
    template prints with jinja's `{{ value }}` (Python's `True`) where render writes JSON's
    `true` is alike: the template's printing of a JSON value, read back the same."""
    start = 0
    while True:
        at = start + _common_prefix(ours[start:], theirs[start:])
        if at == len(ours) == len(theirs):
            return None
        for json_word, python_word in PYTHON_BOOLEANS.items():
            if ours.startswith(json_word, at) and theirs.startswith(python_word, at):
                start = at + len(json_word)
                break
        else:
            return at


def _piece_at(pieces: list[Piece], at: int, space: bool) -> Piece:
    """The piece where render and the template part at `at`: where the template writes
    whitespace there (`space`), a separator or `ws` that writes nothing there (its absence is
    the difference); else the piece holding `at`, else the last."""
    position, holding = 0, None
    for piece in pieces:
        end = position + len(piece.text)
        if space and not piece.text and position == at and piece.what.startswith(WRITERS):
            return piece
        if holding is None and position <= at < end:
            holding = piece
        position = end
    if holding is not None:
        return holding
    return next((p for p in reversed(pieces) if p.text), pieces[-1])


def _around(text: str, at: int) -> str:
    return text[max(0, at - CONTEXT) : at + CONTEXT]


def _prompt_lines(spec: FamilySpec) -> str:
    """The grammar lines that say what the prompt opens: the reasoning statement, and the
    section or first call the `prompt_opened` flag would go on."""
    nodes = [*spec.reasoning[:1], spec.section or spec.call[0]] if spec.call else []
    return ", ".join(where(spec, node) for node in nodes if node is not None)


def _closed_first(spec: FamilySpec, turn: str) -> bool:
    """Whether the turn closes a reasoning block before it opens any: it goes on with the
    reasoning the prompt opened although the history spells the prompt's opener otherwise
    or not at all (GLM-4.7's history writes `</think>` for the prompt's `<think>`; Apriel
    1.6's writes the reasoning and `[BEGIN FINAL RESPONSE]` without the prompt's `Here are
    my reasoning steps:`)."""
    closes = [c.strip() for r in spec.reasoning for c in r.closes if c.strip()]
    opens = [o.strip() for r in spec.reasoning for o in r.opens if o.strip()]
    first_close = min((at for c in closes if (at := turn.find(c)) >= 0), default=-1)
    if first_close < 0:
        return False
    return not any(0 <= turn.find(o) < first_close for o in opens)


def _with_text_arguments(
    spec: FamilySpec, conversation: Conversation, field_name: Sequence[str]
) -> Conversation:
    """The same conversation with every call's arguments as JSON text."""
    by_title = {c.title: c for c in conversations(spec, field_name, as_text=True)}
    return by_title[conversation.title]


def template_table() -> list[dict[str, Any]]:
    """The rows of `grammars/templates.toml`: which chat templates each family serves."""
    return list(_table().get("template", ()))


def template_absences() -> dict[str, str]:
    """The `[[no_template]]` rows of `grammars/templates.toml`: family -> why no chat
    template of it can run here."""
    return {row["family"]: row["why"] for row in _table().get("no_template", ())}


def no_template_reason(family: str) -> str | None:
    """Why the table says `family` has no chat template to run, None when it does not."""
    name = get_spec(family).name
    return next((w for f, w in template_absences().items() if get_spec(f).name == name), None)


def _table() -> dict[str, Any]:
    return tomllib.loads(table_path().read_text("utf-8"))


def table_path() -> Path:
    """`grammars/templates.toml`, as installed with the package (editable: the repo's)."""
    return Path(str(resources.files("toolgrammar.grammars").joinpath("templates.toml")))


def missing_row(family: str) -> str | None:
    """Why `check` fails for a grammar's family with neither a template row nor a
    `[[no_template]]` row (with the command that adds one), None when it has either or is
    no grammar's (a checkpoint's response template, compiled at run time: `hf`)."""
    spec = get_spec(family)
    name = spec.name
    if not spec.source.endswith(".tg"):
        return None
    if family_rows(name) or no_template_reason(name) is not None:
        return None
    return (
        f"no row of {name} in grammars/templates.toml: prove render and the parser against "
        f"the model's chat template and add its row with `python scripts/fetch_templates.py "
        f"&& toolgrammar check {name} --template .cache/templates/SOURCE/FILE.jinja --add-row`"
        f" (the template from a pinned source), or add a [[no_template]] row saying why "
        f"there is none"
    )


# where scripts/fetch_templates.py unpacks each pinned sdist's templates: a row's `source`
# (default "llama.cpp") names the folder of `TEMPLATE_CACHE` its `file` is in
TEMPLATE_SOURCES = {"llama.cpp": "llama_cpp_python-0.3.36", "vllm": "vllm-0.33.0"}
DEFAULT_SOURCE = "llama.cpp"
TEMPLATE_CACHE = Path(__file__).resolve().parents[2] / ".cache" / "templates"


def fetched_templates(cache: Path = TEMPLATE_CACHE) -> Path | None:
    """The folder of fetched chat templates (holding every source's folder), or None when
    one of them was never fetched (`check` says so and how, rather than downloading over
    100 MB behind the author's back)."""
    done = all((cache / folder / ".complete").exists() for folder in TEMPLATE_SOURCES.values())
    return cache if done else None


def row_template(row: dict[str, Any], templates: Path) -> Path:
    """Where a row's template file is under the fetched templates folder `templates`."""
    source = row.get("source", DEFAULT_SOURCE)
    if source not in TEMPLATE_SOURCES:
        known = ", ".join(sorted(TEMPLATE_SOURCES))
        raise ValueError(f"{row['file']}: unknown template source {source!r} (known: {known})")
    return templates / TEMPLATE_SOURCES[source] / row["file"]


def family_rows(family: str) -> list[dict[str, Any]]:
    """The rows of the template table for `family` (an alias finds its grammar's rows)."""
    name = get_spec(family).name
    return [row for row in template_table() if get_spec(row["family"]).name == name]


def check_row(row: dict[str, Any], templates: Path) -> TemplateReport:
    """One row of the table, run as the row says (variables, stops, adaptations), its file
    taken from its source's folder under `templates` (`fetched_templates()`)."""
    return check_template(
        row["family"],
        row_template(row, templates),
        variables=row.get("variables"),
        stop=row.get("stop", ()),
        params=row.get("params"),
        mutable=row.get("mutable", False),
        arguments=row.get("arguments", "object"),
        tools_variables=row.get("tools_variables"),
    )


def row_holds(row: dict[str, Any], report: TemplateReport) -> bool:
    """A row holds when the round trip finds exactly the findings the row declares `known`
    (each by its `key`): a finding the row does not name is a fault, even one of a kind it
    names, and so is a `known` finding that no longer occurs."""
    unexpected, gone = row_difference(row, report)
    return not unexpected and not gone


def row_difference(
    row: dict[str, Any], report: TemplateReport
) -> tuple[list[TemplateFinding], list[str]]:
    """The findings the row's `known` does not name, and the `known` findings that no
    longer occur (by name)."""
    known = list(row.get("known", ()))
    unexpected = [f for f in report.findings if f.key not in known]
    found = {f.key for f in report.findings}
    return unexpected, [key for key in known if key not in found]


def row_problems(row: dict[str, Any], report: TemplateReport) -> str:
    """What makes a row fail, one line each: every unexpected finding with its key and
    detail, every known finding that no longer occurs by its key."""
    unexpected, gone = row_difference(row, report)
    lines = [f"{row['file']}: unexpected finding: {f.key}\n  {str(f).strip()}" for f in unexpected]
    lines += [f"{row['file']}: known finding no longer occurs: {key}" for key in gone]
    return "\n".join(lines)


def row_text(
    family: str, template: Path, options: dict[str, Any], cache: Path = TEMPLATE_CACHE
) -> str:
    """The `[[template]]` row that runs `template` with `check_template`'s `options` (those
    a row keeps: variables, stop, params, mutable, arguments, tools_variables). The file
    must be in a pinned source's folder under `cache` (`ValueError` otherwise)."""
    path = template.resolve()
    for source, folder in TEMPLATE_SOURCES.items():
        if path.parent == (cache / folder).resolve():
            break
    else:
        folders = ", ".join(str(cache / f) for f in TEMPLATE_SOURCES.values())
        raise ValueError(f"{template}: a row's template comes from a pinned source ({folders})")
    lines = [
        "[[template]]",
        f"family = {_toml(get_spec(family).name)}",
        f"file = {_toml(path.name)}",
    ]
    if source != DEFAULT_SOURCE:
        lines.append(f"source = {_toml(source)}")
    for key in ("variables", "stop", "params", "mutable", "arguments", "tools_variables"):
        value = options.get(key)
        if value and value != "object":
            lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    """A TOML value: strings as JSON strings (a subset of TOML's), tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


ABSENCES_HEAD = "# Families whose chat template no pinned source ships"


def add_row(text: str, path: Path | None = None) -> Path:
    """Append a `[[template]]` row (`row_text`) after the table's last template row, before
    the `[[no_template]]` rows and their comment."""
    path = path or table_path()
    table = path.read_text(encoding="utf-8")
    at = table.find(ABSENCES_HEAD)
    at = table.find("[[no_template]]") if at == -1 else at
    if at == -1:
        table = table.rstrip("\n") + "\n\n" + text
    else:
        table = table[:at].rstrip("\n") + "\n\n" + text + "\n" + table[at:]
    path.write_text(table, encoding="utf-8")
    return path
