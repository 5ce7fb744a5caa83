"""`StreamParser(..., trace=fn)` and `toolgrammar parse --trace`: for every family, the
trace is produced, cites real grammar lines that name what it read, tells exactly the
output the deltas carry, and changes nothing about the deltas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolgrammar
from toolgrammar.cli import main
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import Lit
from toolgrammar.runtime.trace import Emit, Feed, Held, Item, Marker, TraceEvent, Where

from support.corpus_format import CORPUS, TOOLS, load

ROOT = Path(__file__).resolve().parent.parent
# how a grammar file writes each kind of item (`compiler/ir.py`'s ELEMENTS), kept apart from
# the trace's own table so a wrong label cannot vouch for itself
WORDS = {
    "ws": "ws",
    "skip": "skip(",
    "name": "name(",
    "xml_params": "xml_params(",
    "xml_elements": "xml_elements",
    "keyvalue_args": "keyvalue_args",
    "python_calls": "python_calls",
    "json_args": "json_args",
    "json_call": "json_call",
    "json_call_array": "json_call_array",
}


def _outputs(family: str) -> list[tuple[str, dict[str, Any], list | None]]:
    """The family's corpus outputs (text, options, tools), or a rendered sample."""
    spec = get_spec(family)
    path = CORPUS / f"{spec.name}.txt"
    if path.exists():
        return [(case.text, case.options, case.tools) for case in load(path)]
    calls = [("get_weather", {"city": "Paris", "days": 3})]
    text = toolgrammar.render(family, calls, TOOLS, content="Let me check.")
    return [(text, {}, TOOLS)]


def _stream(family: str, text: str, options: dict, tools: list | None, trace: Any) -> list:
    parser = toolgrammar.StreamParser(family, tools, ids="sequential", trace=trace, **options)
    deltas = []
    for start in range(0, len(text), 7):
        deltas += parser.feed(text[start : start + 7])
    deltas += parser.finish()
    return [delta.to_dict() for delta in deltas]


def _grammar_line(where: Where) -> str:
    lines = (ROOT / where.file).read_text(encoding="utf-8").splitlines()
    assert 1 <= where.line <= len(lines), where
    return lines[where.line - 1]


def _names_literal(line: str, texts: tuple[str, ...]) -> bool:
    if "${" in line:  # a param's value stands in the compiled literal
        return True
    return any(json.dumps(text, ensure_ascii=False)[1:-1] in line for text in texts)


def _check_where(event: Item | Marker, family: str) -> None:
    assert event.where is not None
    line = _grammar_line(event.where)
    if isinstance(event, Marker):
        assert _names_literal(line, (event.text,)), (family, event, line)
        return
    word = WORDS.get(event.label)
    if word is not None:
        assert word in line, (family, event, line)
        return
    # a literal: its label quotes its spellings
    spellings = tuple(json.loads(part) for part in event.label.strip("[]").split(" | "))
    assert _names_literal(line, spellings), (family, event, line)


def _emitted(events: list[TraceEvent]) -> dict[str, Any]:
    out: dict[str, Any] = {"content": "", "reasoning": "", "calls": {}}
    for event in events:
        if not isinstance(event, Emit):
            continue
        if event.mode != "call":
            out[event.mode] += event.text
            continue
        call = out["calls"].setdefault(event.index, {"name": None, "arguments": ""})
        if event.name is not None:
            call["name"] = event.name
        call["arguments"] += event.text
    return out


def _carried(deltas: list[dict]) -> dict[str, Any]:
    out: dict[str, Any] = {"content": "", "reasoning": "", "calls": {}}
    for delta in deltas:
        out["content"] += delta.get("content") or ""
        out["reasoning"] += delta.get("reasoning") or ""
        for part in delta.get("tool_calls", []):
            call = out["calls"].setdefault(part["index"], {"name": None, "arguments": ""})
            if part["function"].get("name") is not None:
                call["name"] = part["function"]["name"]
            call["arguments"] += part["function"]["arguments"]
    return out


@pytest.mark.parametrize("family", toolgrammar.families())
def test_trace_of_every_family(family: str) -> None:
    items = 0
    for text, options, tools in _outputs(family):
        events: list[TraceEvent] = []
        traced = _stream(family, text, options, tools, events.append)
        assert traced == _stream(family, text, options, tools, None)  # the trace changes nothing
        assert events and isinstance(events[0], Feed)
        feeds = [event for event in events if isinstance(event, Feed)]
        assert "".join(event.text for event in feeds) == text
        assert feeds[-1].eof
        for event in events:
            if isinstance(event, (Item, Marker)) and event.where is not None:
                _check_where(event, family)
            if isinstance(event, Item):
                items += 1
        assert _emitted(events) == _carried(traced)
        for event in events:
            assert toolgrammar.format_event(event)  # every event prints as a line
    calls = any(tools is not None for _, _, tools in _outputs(family))
    assert items or not calls, "no call item was traced in any output of the family"


def test_whole_output_parse_traces_without_changing_the_message() -> None:
    text = (CORPUS / "hermes.txt").read_text(encoding="utf-8")
    case = load(CORPUS / "hermes.txt")[0]
    events: list[TraceEvent] = []
    traced = toolgrammar.parse("hermes", case.text, TOOLS, ids="sequential", trace=events.append)
    assert traced == toolgrammar.parse("hermes", case.text, TOOLS, ids="sequential")
    assert text and isinstance(events[0], Feed) and events[0].whole
    assert [e.name for e in events if isinstance(e, Emit) and e.name] == [
        "get_weather",
        "write_file",
    ]


def test_held_text_says_why() -> None:
    events: list[TraceEvent] = []
    parser = toolgrammar.StreamParser("hermes", TOOLS, trace=events.append, whitespace="trim")
    parser.feed("Hi <tool_ca")
    held = [event for event in events if isinstance(event, Held)]
    assert [event.text for event in held] == ["<tool_ca", " "]
    assert '"<tool_call>"' in held[0].reason
    assert "whitespace" in held[1].reason
    events.clear()  # verbatim: the space is content at once, only the marker-to-be waits
    parser = toolgrammar.StreamParser("hermes", TOOLS, trace=events.append)
    parser.feed("Hi <tool_ca")
    assert [event.text for event in events if isinstance(event, Held)] == ["<tool_ca"]


def test_an_opener_that_is_no_call_says_so() -> None:
    events: list[TraceEvent] = []
    message = toolgrammar.parse("hermes", "<tool_call> not json", TOOLS, trace=events.append)
    assert message.content == "<tool_call> not json"
    outcomes = [event.outcome for event in events if isinstance(event, Item)]
    assert any("no call" in outcome for outcome in outcomes), outcomes


def test_cli_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.txt"
    output.write_text(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        encoding="utf-8",
    )
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    args = ["parse", "hermes", str(output), "--tools", str(tools), "--stream", "--trace"]
    assert main([*args, "--ids", "sequential"]) == 0
    captured = capsys.readouterr()
    trace = captured.err.splitlines()
    assert trace[0].startswith("feed #1 (16 chars) in content: ")
    grammar = (Path(__file__).parent.parent / "grammars" / "hermes.tg").read_text("utf-8")
    lines = grammar.splitlines()
    opener = next(n for n, text in enumerate(lines, 1) if text.strip().startswith('"<tool_call>"'))
    dialect = next(n for n, text in enumerate(lines, 1) if "json_call(" in text)
    assert any(f"grammars/hermes.tg:{opener} " in line and "opens a call" in line for line in trace)
    assert any(f"grammars/hermes.tg:{dialect} " in line and "json_call" in line for line in trace)
    assert any(line.strip() == "emit call 0 begins: get_weather (id call_0)" for line in trace)
    message = json.loads(captured.out.splitlines()[-1])["message"]  # stdout stays JSON lines
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
