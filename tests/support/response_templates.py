"""Response templates the tests read: Beam's (as the peers ship it) and one written for every
content kind and construct the template compiler maps (docs/response_templates.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent.parent  # tests/

BEAM: dict[str, Any] = json.loads((HERE / "templates" / "beam.json").read_text(encoding="utf-8"))

# arguments: one JSON object after an opener that names the call
JSON_ARGS: dict[str, Any] = {
    "version": 1,
    "start_anchor": "<|im_start|>assistant\n",
    "defaults": {"role": "assistant"},
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "content": {"close": "<|im_end|>"},
        "tool_calls": {
            "open_pattern": r"<tool_call name=\"(?P<name>[\w.\-]+)\">\s*",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "content_args": {"allow_non_json": True},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}

# a JSON object carrying the name and the arguments, one per region
JSON_CALL: dict[str, Any] = {
    "start_anchor_pattern": r"<\|assistant\|>",
    "fields": {
        "content": {"open": "<|answer|>", "close": ["<|end|>", "<|eot|>"]},
        "tool_calls": {
            "open": ["<tool_call>", "<function_call>"],
            "close": ["</tool_call>", "</function_call>"],
            "repeats": False,
            "optional": False,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.tool}", "arguments": "{content.args}"},
            },
        },
    },
}

# a JSON list of calls, each element transformed
JSON_ARRAY: dict[str, Any] = {
    "start_anchor": ["[INST]", "[/INST]"],
    "fields": {
        "thinking": {
            "open_pattern": r"(?:<think>|<thinking>)",
            "close": ["</think>", "</thinking>"],
        },
        "tool_calls": {
            "open": "[TOOL_CALLS]",
            "close_pattern": r"</s>",
            "repeats": True,
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{arguments}"},
            },
        },
    },
}

# parameters as XML-ish tags whose values are stripped text
XML_INLINE: dict[str, Any] = {
    "start_anchor": "<start_of_turn>model\n",
    "fields": {
        "thinking": {"open": "<reasoning>", "close": "</reasoning>"},
        "tool_calls": {
            "open_pattern": r"<invoke name=\"(?P<name>[^\"]+)\">",
            "close": "</invoke>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<arg name=\"(?P<key>[^\"]+)\">(?P<value>.*?)</arg>",
                "value_parser": {"name": "text"},
                "merge_duplicates": False,
            },
            "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}

# key: value lines
KV_LINES: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {"close": "<|im_end|>"},
        "tool_calls": {
            "open_pattern": r"<call name=\"(?P<name>[\w.\-]+)\">\n?",
            "close": "</call>",
            "repeats": True,
            "content": "kv-lines",
            "content_args": {"line_sep": "\n", "kv_sep": ":"},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}

TEMPLATES: dict[str, dict[str, Any]] = {
    "beam": BEAM,
    "json_args": JSON_ARGS,
    "json_call": JSON_CALL,
    "json_array": JSON_ARRAY,
    "xml_inline": XML_INLINE,
    "kv_lines": KV_LINES,
}

# outputs written by hand for each template: reasoning, content, calls, cuts, bad input
OUTPUTS: dict[str, list[str]] = {
    "beam": [
        "<|channel|>analysis<|message|>plan<|end|><|start|>assistant to=get_weather<|channel|>"
        'analysis <|constrain|>xml<|message|><rfl:parameter name="city">\nParis\n'
        "</rfl:parameter><|call|>",
        "<|channel|>final<|message|>Sunny.<|return|>",
    ],
    "json_args": [
        '<think>hm</think>Let me see.<tool_call name="get_weather">\n{"city": "Paris", "days": 3}'
        '\n</tool_call><tool_call name="write_file">{"path": "a", "content": "x\\ny"}</tool_call>',
        '<tool_call name="get_weather">{"city": "Par',
        "A plain answer.<|im_end|>",
    ],
    "json_call": [
        '<|answer|>Sure.<|end|><tool_call>{"tool": "get_weather", "args": {"city": "Oslo"}}'
        '</tool_call><function_call>{"tool": "write_file", "args": {"path": "b"}}</function_call>',
        '<tool_call>{"tool": "get_weather", "args": {"days": 2',
    ],
    "json_array": [
        '<thinking>ok</thinking>[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Rome"}},'
        ' {"name": "write_file", "arguments": {"path": "c", "content": ""}}]</s>',
        "<think>a</think>Done.",
    ],
    "xml_inline": [
        '<reasoning>check</reasoning><invoke name="get_weather"><arg name="city"> Paris </arg>'
        '<arg name="days">4</arg></invoke>Anything else?',
        '<invoke name="write_file"><arg name="content">a < b',
    ],
    "kv_lines": [
        '<think>hm</think>Sure.<call name="get_weather">\ncity:  New York: NY \njunk line\n'
        "days: 3\n</call><|im_end|>",
        '<call name="write_file">\npath: a.txt\ncontent: hello wor',
    ],
}
