"""Hostile response templates for family `hf` (docs/fuzzing.md, "What it writes").

A checkpoint's `response_template` is read at run time, so it is input like the output is:
the template compiler must refuse what its runtime cannot read (one `ResponseTemplateError`
line naming the field) and everything it accepts must keep every invariant. Each template
here is a plain one of each content kind with one to three hostile edits: a marker of one
character or only whitespace, a call opener that begins JSON (`{`, `{"name"`, `[`), a name
or key group that backtracks (`(a+)+`, `\\w*\\w*\\w*`, a backreference), a marker that
holds another inside it, CRLF line ends in markers and patterns.
"""

from __future__ import annotations

import copy
import random
from typing import Any

_CALL = {"function": {"name": "{name}", "arguments": "{content}"}}

BASES: list[dict[str, Any]] = [
    {  # JSON arguments after an opener that names the call
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "thinking": {"open": "<think>", "close": "</think>"},
            "content": {"close": "<|im_end|>"},
            "tool_calls": {
                "open_pattern": r"<tool_call name=\"(?P<name>[\w.\-]+)\">\s*",
                "close": "</tool_call>",
                "content": "json",
                "transform": _CALL,
            },
        },
    },
    {  # a JSON object naming the call
        "start_anchor_pattern": r"<\|assistant\|>",
        "fields": {
            "content": {"open": "<|answer|>", "close": ["<|end|>", "<|eot|>"]},
            "tool_calls": {
                "open": ["<tool_call>", "<function_call>"],
                "close": ["</tool_call>", "</function_call>"],
                "content": "json",
                "transform": {
                    "function": {"name": "{content.tool}", "arguments": "{content.args}"}
                },
            },
        },
    },
    {  # a JSON list of calls
        "start_anchor": ["[INST]", "[/INST]"],
        "fields": {
            "thinking": {"open_pattern": r"(?:<think>|<thinking>)", "close": "</think>"},
            "tool_calls": {
                "open": "[TOOL_CALLS]",
                "close_pattern": r"</s>",
                "content": "json",
                "transform_each": True,
                "transform": {"function": {"name": "{name}", "arguments": "{arguments}"}},
            },
        },
    },
    {  # parameters in tags
        "start_anchor": "<start_of_turn>model\n",
        "fields": {
            "thinking": {"open": "<reasoning>", "close": "</reasoning>"},
            "tool_calls": {
                "open_pattern": r"<invoke name=\"(?P<name>[^\"]+)\">",
                "close": "</invoke>",
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<arg name=\"(?P<key>[^\"]+)\">\n(?P<value>.*?)\n</arg>"
                },
                "transform": _CALL,
            },
        },
    },
    {  # key: value lines
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "thinking": {"open": "<think>", "close": "</think>"},
            "tool_calls": {
                "open_pattern": r"<call name=\"(?P<name>[\w.\-]+)\">\n?",
                "close": "</call>",
                "content": "kv-lines",
                "content_args": {"line_sep": "\n", "kv_sep": ":"},
                "transform": _CALL,
            },
        },
    },
]

SHORT_MARKERS = ["a", "x", "<", ">", "{", "[", "}", " ", "\n", "\r\n", "\t", " \n", "a\n", "ab"]
JSON_OPENERS = ["{", "[", '{"', '{"tool"', '{"name": ', "[{", " {", '{"tool": "']
# name and key groups: what backtracks (nested or several overlapping quantifiers, a group
# repeated over what may be empty, a backreference, lookarounds) and what is fine
GROUP_BODIES = [
    r"(a+)+", r"(\w+\s?)+", r"(a|a)*", r"\w*\w*\w*", r"(?:a*)*b", r"(.*?,)*", r"([\w.]+)*x",
    r"(?=a)\w+", r"(\w)\1", r"(?!x)[\w.]+", r"[\w-]+(?:\.[\w-]+)*", r"[\w.\-]+", r"\w+",
    r"[^\"]+", r".+?", r"a{2,1}", r"[", r"(?P<q>a)(?P=q)",
]  # fmt: skip


def hostile_template(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A base template, the same with one to three hostile edits, and what was edited."""
    base = rng.choice(BASES)
    template = copy.deepcopy(base)
    edits = [_edit(template, rng) for _ in range(rng.randint(1, 3))]
    return base, template, "; ".join(edits)


def _edit(template: dict[str, Any], rng: random.Random) -> str:
    fields = template["fields"]
    calls = fields["tool_calls"]
    kind = rng.randrange(6)
    if kind == 0:  # a short marker somewhere
        marker = rng.choice(SHORT_MARKERS)
        where = rng.choice(
            [("start_anchor",), *((name, key) for name in fields for key in ("open", "close"))]
        )
        if where == ("start_anchor",):
            template.pop("start_anchor_pattern", None)
            template["start_anchor"] = marker
        elif where == ("tool_calls", "open") and "{name}" in str(calls.get("transform")):
            return "kept the named opener"  # (its name group would be lost)
        else:
            field = fields[where[0]]
            field.pop(where[1] + "_pattern", None)
            field[where[1]] = marker
        return f"{'.'.join(where)} = {marker!r}"
    if kind == 1:  # an opener that begins JSON
        if "open_pattern" in calls and rng.random() < 0.8:
            return "kept the named opener"  # (mostly: its name group would be lost)
        opener = rng.choice(JSON_OPENERS)
        calls.pop("open_pattern", None)
        calls["open"] = opener
        return f"tool_calls.open = {opener!r}"
    if kind == 2:  # a name or key group that may backtrack
        body = rng.choice(GROUP_BODIES)
        pattern = calls.get("open_pattern")
        args = calls.get("content_args", {})
        if "tag_pattern" in args and rng.random() < 0.5:
            args["tag_pattern"] = args["tag_pattern"].replace(r"[^\"]+", body, 1)
            return f"key group = {body!r}"
        if isinstance(pattern, str) and "(?P<name>" in pattern:
            start = pattern.index("(?P<name>") + len("(?P<name>")
            end = pattern.index(")", start)
            calls["open_pattern"] = pattern[:start] + body + pattern[end:]
            return f"name group = {body!r}"
        return "no group to edit"
    if kind == 3:  # a marker inside another
        opener = calls.get("open") or calls.get("open_pattern", "<x>")
        text = opener if isinstance(opener, str) else opener[0]
        text = "".join(ch for ch in text if ch.isalnum() or ch in "<_")
        at = rng.randrange(max(1, len(text) - 2))
        inner = text[at : at + rng.randint(2, 4)]
        name = rng.choice(["thinking", "content"])
        fields.setdefault(name, {})[rng.choice(["open", "close"])] = inner or "ol"
        return f"{name} marker {inner!r} inside the opener"
    if kind == 4:  # CRLF in markers and patterns
        for field in fields.values():
            for key in ("open", "close", "open_pattern", "close_pattern"):
                if isinstance(field.get(key), str):
                    field[key] = field[key].replace("\n", "\r\n").replace(r"\s*", "\r\n")
        args = calls.get("content_args", {})
        if "tag_pattern" in args:
            args["tag_pattern"] = args["tag_pattern"].replace("\n", "\r\n")
        if "line_sep" in args:
            args["line_sep"] = "\r\n"
        return "CRLF in markers"
    # a closer that begins like the opener, or none at all
    calls["close"] = rng.choice(["</", "<tool_call>", "\n\n", "}", "]", "</tool_call\r\n"])
    calls.pop("close_pattern", None)
    return f"tool_calls.close = {calls['close']!r}"


def clean_refusal(error: BaseException) -> bool:
    """A refusal the way the compiler promises it: a `ResponseTemplateError` of one line
    that says which part of the template it is about."""
    from ..compiler.response_template import ResponseTemplateError

    message = str(error)
    return (
        isinstance(error, ResponseTemplateError)
        and "\n" not in message
        and message.startswith(("field ", "response_template", "defaults", "start_anchor"))
    )
