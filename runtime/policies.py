"""The answers to "what is content, what is a call" that users of different serving stacks
expect differently, as named switches, and the profiles that set them as each stack does.

One switch is one question (docs/policies.md says each value and what it costs); `compat`
names a stack (`"vllm"`, `"sglang"`, `"llama.cpp"`) whose users expect its answers, and
`compat=None` is the project's own. A switch given explicitly always wins over the profile.
The engine reads the resolved `Policies` record; no switch is decided per family in code: a
profile that differs per family says so in its table, which docs/compat.md prints.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

# every switch: its values, the first one being the project's own default
SWITCHES: dict[str, tuple[str, ...]] = {
    # "verbatim": every character the model wrote outside markup is content; "trim": the
    # whitespace at the ends of content and next to markup is dropped
    "whitespace": ("verbatim", "trim"),
    # a call to a tool the request does not list: kept (the client decides), dropped, or
    # given back as content (its markup as the model wrote it)
    "unknown_tools": ("keep", "drop", "text"),
    # a call whose arguments the end of the output cut: kept with its arguments closed,
    # dropped, or given back as content; anything but "keep" holds every call until its
    # arguments are known whole (`runtime/call_outcome.py`)
    "partial_calls": ("keep", "drop", "text"),
    # a call whose arguments never form an object (`"arguments": oops`): kept with what
    # was read, closed; dropped; or given back as content; the same hold as partial_calls
    "malformed_calls": ("keep", "drop", "text"),
    # a citation span a grammar declares (Cohere's `<co>TEXT</co: 0:[1]>`): kept as written,
    # or its markup stripped and its text kept (`runtime/citations.py`)
    "citations": ("keep", "strip"),
    # content after a call (or a call's prose between its opener and its name):
    # kept, or dropped (content is then the text before the first call, as most of vLLM's
    # parsers give it: `model_output[:start]`)
    "text_after_calls": ("keep", "drop"),
    # a markup parameter's value (`xml_params`) that no schema types: its text, or its JSON
    # value when it is one (`1` is 1, `{"a": 2}` an object), as vLLM's `convert_value` falls
    # back to; "json" holds such a value until it is whole
    "untyped_values": ("text", "json"),
    # a call whose arguments lack a property its tool's schema requires: kept as read, or
    # malformed (`malformed_calls` then decides it); "check" holds every call until its
    # arguments end, as `partial_calls` does
    "required_params": ("keep", "check"),
    # a markup parameter (`xml_params`) whose key the tool's schema does not declare (a
    # requested tool whose schema lists properties): kept, or dropped with its value
    "undeclared_params": ("keep", "drop"),
    # JSON arguments (`json_args`, a JSON call's arguments): each member typed by its schema
    # (`"7"` for an integer is 7), or passed on as the model wrote them
    "json_typing": ("schema", "as_written"),
    # a call given back as text (`"text"` of the three switches above) that opened its
    # section: the section's markers go back with it ("whole": the section as written), or
    # stay markup ("call": only the call's own text is content)
    "section_text": ("whole", "call"),
}

COMPAT = ("vllm", "sglang", "llama.cpp")


@dataclass(frozen=True, slots=True)
class Policies:
    """The switches in force for one parser."""

    whitespace: str = SWITCHES["whitespace"][0]
    unknown_tools: str = SWITCHES["unknown_tools"][0]
    partial_calls: str = SWITCHES["partial_calls"][0]
    malformed_calls: str = SWITCHES["malformed_calls"][0]
    citations: str = SWITCHES["citations"][0]
    text_after_calls: str = SWITCHES["text_after_calls"][0]
    untyped_values: str = SWITCHES["untyped_values"][0]
    required_params: str = SWITCHES["required_params"][0]
    undeclared_params: str = SWITCHES["undeclared_params"][0]
    json_typing: str = SWITCHES["json_typing"][0]
    section_text: str = SWITCHES["section_text"][0]

    @property
    def verbatim(self) -> bool:
        return self.whitespace == "verbatim"

    @property
    def holds_calls(self) -> bool:
        """Whether a call waits until its arguments are known whole before it is sent."""
        return (
            self.partial_calls != "keep"
            or self.malformed_calls != "keep"
            or self.required_params != "keep"
        )

    @property
    def reshapes_calls(self) -> bool:
        """Whether a call's arguments or the text after it are read otherwise than the
        project's defaults do (the whole-output route reads only those: `whole_output.py`)."""
        return (
            self.text_after_calls != "keep"
            or self.untyped_values != "text"
            or self.undeclared_params != "keep"
            or self.json_typing != "schema"
        )

    @property
    def keeps_text(self) -> bool:
        """Whether a call may be given back as text: its text is then kept as it is read."""
        return "text" in (self.unknown_tools, self.partial_calls, self.malformed_calls)


@dataclass(frozen=True)
class Profile:
    """What one stack sets: for every family, then per family where the stack differs."""

    every_family: Mapping[str, str]
    families: Mapping[str, Mapping[str, str]]
    why: Mapping[str, str]  # switch -> where the stack's answer comes from (docs/compat.md)


# `partial_calls` and `malformed_calls`: a profile follows its stack's streaming path, which
# sends a call as it comes, except for the families whose whole-output path the stack's own
# tests pin otherwise (given in each `why`): reading as they do holds every call of those
# families until its arguments end
PROFILES: dict[str, Profile] = {
    # vLLM's tool parsers give back the content before the first call as the model wrote it
    # (`model_output[:start]`), newline before the opener included, except its engine parsers
    # (`vllm/parser/`) left at `strip_content_whitespace_with_tools`'s default
    "vllm": Profile(
        {
            "whitespace": "verbatim",
            "unknown_tools": "keep",
            "partial_calls": "keep",
            "malformed_calls": "keep",
            "citations": "keep",
            "text_after_calls": "drop",
            "json_typing": "as_written",
        },
        {
            "llama3_json": {
                "whitespace": "trim",
                "partial_calls": "text",
                "malformed_calls": "text",
            },
            # their whole-output paths strip the text before the calls too
            "apertus": {"whitespace": "trim"},
            "functiongemma": {"whitespace": "trim"},
            "lfm2": {"whitespace": "trim", "partial_calls": "text", "text_after_calls": "keep"},
            # melody reads the citations into the message's own field, out of the text
            "cohere_command3": {"citations": "strip"},
            "cohere_command4": {"citations": "strip"},
            "gemma4": {"whitespace": "trim"},
            "glm45": {"whitespace": "trim", "unknown_tools": "drop"},
            "glm47": {"whitespace": "trim", "unknown_tools": "drop"},
            "k2_horizon": {"json_typing": "schema"},
            "granite": {"whitespace": "trim"},
            "llama4_json": {"whitespace": "trim"},
            "minimax_m2": {"whitespace": "trim", "unknown_tools": "drop"},
            "mistral": {"whitespace": "trim"},
            "qwen3_coder": {"whitespace": "trim"},
            "seed_oss": {"whitespace": "trim"},
            # check the name against the tools and leave the call's markup as content
            # MiniCPM5's parser also gives back a call that lacks a required property
            "minicpm5": {
                "unknown_tools": "text",
                "partial_calls": "text",
                "malformed_calls": "text",
                "required_params": "check",
                "untyped_values": "json",
                "undeclared_params": "drop",
            },
            # their parsers decode a value no schema types as JSON (`convert_value`'s fallback)
            # its test gives a cut call back from the invoke, the section's opener dropped
            "muse": {"untyped_values": "json", "partial_calls": "text", "section_text": "call"},
            "muse_glimmer": {"untyped_values": "json", "partial_calls": "text"},
            "dots": {"unknown_tools": "text", "whitespace": "trim"},
            # their whole-output parsers keep the text after the calls
            "deepseek_v3": {"text_after_calls": "keep", "partial_calls": "drop"},
            # a call cut by the end of the output: their whole-output parsers drop it
            "deepseek_v31": {"partial_calls": "drop"},
            "kimi_k3": {"partial_calls": "drop"},
            "step3": {"partial_calls": "text", "text_after_calls": "keep"},
            "inkling": {"text_after_calls": "keep"},
            # a call cut by the end of the output: their whole-output parsers read calls by a
            # regex that needs the call's end, or json.loads the body, and give the output
            # back as content (their tests pin it)
            "hermes": {"partial_calls": "text", "malformed_calls": "text"},
            "jamba": {"partial_calls": "text"},
            "llama4_pythonic": {"partial_calls": "text"},
            "pythonic": {"partial_calls": "text"},
            "poolside_v1": {"partial_calls": "text", "untyped_values": "json"},
            "longcat": {"partial_calls": "text", "malformed_calls": "text"},
            "hunyuan_a13b": {"partial_calls": "text"},
            "olmo3": {"partial_calls": "text"},
            "phi4_mini_json": {"partial_calls": "text"},
            "granite-20b-fc": {"partial_calls": "text"},
        },
        {
            "whitespace": "content is the text before the first call, as written; the engine "
            "parsers (GLM-4.5/4.7, Gemma 4, Granite, Llama 3/4 JSON, MiniMax-M2, Mistral, "
            "Qwen3-Coder, Seed-OSS) and the Apertus, dots, FunctionGemma and LFM2 parsers "
            "strip it when there are calls",
            "unknown_tools": "a parsed call is returned, requested or not, except by the "
            "parsers that check names: GLM-4.5/4.7 and MiniMax-M2 drop the call, MiniCPM5 and "
            "dots leave its markup as content",
            "partial_calls": "streamed, a cut call is sent as it comes, arguments and all; so "
            "is it whole by the engine parsers, Kimi-K2 and Mistral; the whole-output paths "
            "of Hermes, Llama 3 JSON, Jamba, Hunyuan, LongCat, Phi-4-mini, Granite-20B-FC, "
            "pythonic, Llama 4 pythonic, OLMo 3, LFM2, Poolside, Muse, Step3 and MiniCPM5 give "
            "the output back as content, those of DeepSeek V3, V3.1 and Kimi K3 drop the call "
            "(their tests pin it), and the profile reads so there, holding each call until its "
            "arguments end",
            "malformed_calls": "streamed, the call is sent as it comes; whole, Kimi-K2, DeepSeek "
            "V3.1 and Mistral pass the arguments on as written, Hermes, Llama 3 JSON and LongCat "
            "give the whole output back as content (the profile gives the call back there)",
            "citations": "the Cohere Command A parsers (melody) take the citation tags out of "
            "the answer text",
            "text_after_calls": "content is the text before the first call "
            "(`model_output[:start]`): text between and after the calls is dropped, but by "
            "the DeepSeek V3, Inkling, LFM2 and Step3 parsers, which keep it; so is "
            "the prose a pre-v11 Mistral output writes between `[TOOL_CALLS]` and its list",
            "required_params": "a call is returned whatever its schema requires, but by "
            "MiniCPM5's parser, which gives a call lacking a required property back as text",
            "json_typing": "JSON arguments are passed on as the model wrote them "
            "(`json.dumps` of what `json.loads` read), but by K2 Horizon's parser, which types "
            "the JSON format's values by the schema (`coerce_to_schema_type`)",
            "section_text": "measured on Muse only: its test gives a call cut inside its value "
            "back from `<atem:invoke`, the section's opener dropped",
            "undeclared_params": "every parameter is returned, but by MiniCPM5's parser, "
            "which drops a parameter its tool's schema does not declare",
            "untyped_values": "a markup value no schema types is kept as text, but by the "
            "parsers that type values through `convert_value` (Muse, Muse Glimmer, MiniCPM5, "
            "Poolside), whose fallback decodes it as JSON",
        },
    ),
    # SGLang's detectors strip the text before the first call (`text[:idx].strip()`) and drop
    # a call to a tool the request does not list unless SGLANG_FORWARD_UNKNOWN_TOOLS is set
    "sglang": Profile(
        {
            "whitespace": "trim",
            "unknown_tools": "drop",
            "partial_calls": "keep",
            "malformed_calls": "keep",
            "citations": "keep",
        },
        {
            "qwen3_coder": {"unknown_tools": "keep"},  # its detector does not check names
            "kimi_k2": {"unknown_tools": "keep"},  # nor does Kimi-K2's
            # nor do these (measured: a call to a tool the request lacks is returned)
            "gemma4": {"unknown_tools": "keep", "partial_calls": "text"},
            "inkling": {"unknown_tools": "keep"},
            "kimi_k3": {"unknown_tools": "keep"},
            "step3p5": {"unknown_tools": "keep"},
            # its tests give the whole output back when the arguments fail json.loads
            "gigachat3": {"malformed_calls": "text"},
            # a call cut by the end of the output: these detectors send none of it on either
            # path (they buffer a call until it is complete; MiniMax-M2's and LFM2's tests pin
            # that), so the profile drops it too, holding each call until its arguments end
            "apertus": {"partial_calls": "drop"},
            "deepseek_v3": {"partial_calls": "drop"},
            "deepseek_v31": {"partial_calls": "drop"},
            # the DSML detectors (V3.2's, which V4 and V4.1 extend) also drop an invoke whose
            # JSON body fails json.loads, in both paths (measured)
            "deepseek_v32": {"partial_calls": "drop", "malformed_calls": "drop"},
            "deepseek_v4": {"partial_calls": "drop", "malformed_calls": "drop"},
            "deepseek_v41": {"partial_calls": "drop", "malformed_calls": "drop"},
            "k2_horizon": {"partial_calls": "drop"},
            "lfm2": {"partial_calls": "drop"},
            # MiMo and MiniCPM5 also give a call to a tool the request lacks back as text, its
            # markup as written (measured; MiMo's tests pin it in both paths), as InternLM does
            "mimo": {"partial_calls": "drop", "unknown_tools": "text"},
            "minicpm5": {"partial_calls": "drop", "unknown_tools": "text"},
            "minimax_m2": {"partial_calls": "drop"},
            "mistral": {"partial_calls": "drop"},
            "muse": {"partial_calls": "drop"},
            "pythonic": {"partial_calls": "drop"},
            # their tests' end-of-stream flush (`finish`): a cut call's block is dropped
            # (InternLM, Hunyuan) or given back as text (Gemma 4, MiniMax-M3)
            "internlm": {"partial_calls": "drop", "unknown_tools": "text"},
            "hy_v3": {"partial_calls": "drop"},
            "minimax_m3": {"partial_calls": "text"},
        },
        {
            "whitespace": "the text before the first call is stripped",
            "unknown_tools": "dropped unless SGLANG_FORWARD_UNKNOWN_TOOLS is set (the "
            "adapter honours it), except by the Qwen3-Coder, Kimi-K2, Kimi K3, Gemma 4, "
            "Inkling and Step-3.5 detectors, which check no name, and the InternLM, MiMo and "
            "MiniCPM5 detectors, which give the call's markup back as text",
            "partial_calls": "streamed, most detectors send a cut call as it comes (partial "
            "JSON); whole, they read calls by a regex that needs the call's end, so a cut call "
            "is dropped (DeepSeek V3.1, Kimi-K2, Mistral) or the whole output is given back as "
            "text (Hermes, Llama 3 JSON, GLM-4.7, MiniMax-M2), and Qwen3-Coder keeps it; the "
            "detectors that buffer a call until it is complete (Apertus, DeepSeek V3/V3.1/V3.2/V4/V4.1, "
            "K2 Horizon, LFM2, MiMo, MiniCPM5, MiniMax-M2, Mistral, Muse, pythonic) send no cut "
            "call on either path, and the profile drops it there; the tests of the detectors' "
            "end-of-stream flush drop a cut call's block (InternLM, Hunyuan) or give it back as "
            "text (Gemma 4, MiniMax-M3)",
            "malformed_calls": "streamed, the call is sent as it comes; whole, a failed "
            "`json.loads` gives the whole output back as text (Hermes, Llama 3 JSON, DeepSeek "
            "V3.1) or drops the call (Mistral), and Kimi-K2 passes any `{...}` on as written; "
            "the DSML detectors (DeepSeek V3.2, V4, V4.1) drop such an invoke on both paths, "
            "and the profile does; "
            "GigaChat3's own tests pin the text back, so that profile gives it back (holding "
            "the call until its arguments end)",
            "citations": "the Command A detector leaves the answer text as written",
            "text_after_calls": "the text after the calls is content",
            "untyped_values": "not measured against SGLang: the project's answer (text)",
            "required_params": "not measured against SGLang: the project's answer (keep)",
            "undeclared_params": "not measured against SGLang: the project's answer (keep)",
            "json_typing": "not measured against SGLang: the project's answer (schema)",
            "section_text": "MiniMax-M3's detector gives back a block it cannot read as "
            "written, section markers included (its end-of-stream test)",
        },
    ),
    # llama.cpp's chat parsers keep the text before a call as written (its tests expect
    # "Let me inspect the current directory.\n" before the call); measured with its own parser
    # (bench/peer_llamacpp.py): where it fails a response, the profile keeps our reading
    "llama.cpp": Profile(
        {
            "whitespace": "verbatim",
            "unknown_tools": "keep",
            "partial_calls": "keep",
            "malformed_calls": "keep",
            "citations": "keep",
        },
        {},
        {
            "whitespace": "content before a call is kept as written, newline included",
            "unknown_tools": "its parser admits only the names the request lists: a call to "
            "another fails the whole response (llama-server answers with an error, a stream "
            "ends in one); the profile keeps the call rather than lose the response",
            "partial_calls": "the server parses every update leniently as partial output "
            "(`common_chat_peg_parse`): a cut call keeps the arguments read so far",
            "malformed_calls": "streamed, a parse that fails keeps what the PEG parser captured "
            "before the failure (the call, with the arguments read); the final parse fails the "
            "whole response instead, which the profile does not follow",
            "citations": "Command R+'s grounded answer is content as written, `<co: 0>` tags "
            "included",
            "text_after_calls": "the text after the calls is content",
            "untyped_values": "not measured against llama.cpp: the project's answer (text)",
            "required_params": "not measured against llama.cpp: the project's answer (keep)",
            "undeclared_params": "not measured against llama.cpp: the project's answer (keep)",
            "json_typing": "not measured against llama.cpp: the project's answer (schema)",
            "section_text": "not measured against llama.cpp: the project's answer (whole)",
        },
    ),
}


def resolve(
    compat: str | None, family: str, explicit: Mapping[str, Any], grammar: str = ""
) -> Policies:
    """The switches for a parser of `family` (a registered name; `grammar`: the grammar it
    names, for an alias): the profile of `compat` (the project's own defaults for None), then
    every switch given explicitly (None: not given).

    A parser is made per request with the same few answers: each is made once (a
    `Policies` is frozen, so one is shared), keyed by every argument's value; an argument
    that cannot be a key (junk a caller passed) takes the checks below."""
    try:
        key = (compat, family, grammar, *explicit.items())
        return _RESOLVED[key]
    except (KeyError, TypeError):
        pass
    policies = _resolve(compat, family, explicit, grammar)
    if len(_RESOLVED) >= _RESOLVED_LIMIT:
        _RESOLVED.clear()
    try:
        _RESOLVED[key] = policies
    except TypeError:  # (a value equal to a switch's but unhashable: not remembered)
        pass
    return policies


# the answers `resolve` gave, by its arguments (only those that passed its checks)
_RESOLVED: dict[tuple[Any, ...], Policies] = {}
_RESOLVED_LIMIT = 256


def _resolve(
    compat: str | None, family: str, explicit: Mapping[str, Any], grammar: str
) -> Policies:
    chosen: dict[str, str] = {}
    if compat is not None:
        if compat not in PROFILES:
            raise ValueError(
                f"compat must be one of {', '.join(map(repr, COMPAT))} or None, not {compat!r}"
            )
        profile = PROFILES[compat]
        chosen.update(profile.every_family)
        chosen.update(profile.families.get(family, profile.families.get(grammar, {})))
    for name, value in explicit.items():
        if value is None:
            continue
        if name not in SWITCHES:
            raise TypeError(f"unknown policy switch {name!r}")
        if value not in SWITCHES[name]:
            allowed = ", ".join(map(repr, SWITCHES[name]))
            raise ValueError(f"{name} must be one of {allowed}, not {value!r}")
        chosen[name] = value
    return Policies(**chosen)


def table() -> list[tuple[str, str, dict[str, str]]]:
    """(switch, its values, the value per profile: `ours` first) for docs/compat.md."""
    rows = []
    for field in fields(Policies):
        name = field.name
        values = {"ours": SWITCHES[name][0]}
        for compat, profile in PROFILES.items():
            values[compat] = profile.every_family.get(name, SWITCHES[name][0])
            per_family = {f: v[name] for f, v in profile.families.items() if name in v}
            if per_family:
                values[compat] += " (" + ", ".join(f"{f}: {v}" for f, v in per_family.items()) + ")"
        rows.append((name, " / ".join(SWITCHES[name]), values))
    return rows
