"""An output of one short text repeated costs what it is long, in every grammar (issue 28).

The tests' counted scans (`test_bad_input.py`) see the runtime's own regexes and marker
searches, not what C code under them does: a `JSONDecodeError` counting the newlines of the
whole output before a failed value, a buffer copied per call shape tried, a `find` to the
end of the output at every `{`. These time it instead, as `bench/hostile.py` does (CPU time,
the least of a few runs): 16x the output may cost at most 32x the time, a margin noise does
not cross and quadratic work does (256x). The bench runs the full ladder, 64K against 1M
characters of every pattern, whole and streamed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import toolgrammar

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import hostile  # noqa: E402
from streams import load_tools  # noqa: E402

TOOLS = load_tools()
BOUND = 32  # for 16x the output


@pytest.mark.parametrize("family", hostile.grammars())
def test_repeated_markers_half_markers_and_openers_cost_what_they_are_long(family: str) -> None:
    # every marker the grammar declares, each proper prefix of one, and the call openers,
    # at 4K and 64K characters: whole, and (markers and openers) in 16-char deltas
    over = []
    for name, unit in hostile.patterns(family).items():
        for mode in ("whole",) if name.startswith("half ") else hostile.MODES:
            small, large, times = hostile.ratio(family, unit, mode, (4096, 65536), TOOLS, BOUND)
            if times > BOUND:
                over.append(f"{mode} {name}: {small * 1e3:.1f} ms, then {large * 1e3:.1f} ms")
    assert over == []


def _opener(family: str) -> str:
    return hostile.openers(family)["opener"]


# the repeats issue 28 found quadratic at a megabyte, and no smaller: the quadratic part
# (a count, a copy, a find: C loops over the output) is under a tenth of the time at 64K
MEGABYTE_CASES = [
    *(
        (family, _opener(family))
        for family in (
            "hermes",
            "ernie45",
            "granite4",
            "longcat",
            "trinity",
            "command_r_plus",
            "firefunction_v2",
        )
    ),
    ("mistral", "[TOOL_CALLS]"),
    ("llama3_json", '{"name": '),
    ("step3p5", "<tool_call><function="),
    # found by `bench/hostile.py`: a copy of the rest of the output per Harmony header, per
    # optional literal that a longer opener may begin, a closer searched to the end per value
    ("gpt-oss", "to="),
    ("step3", hostile.openers("step3")["opener, no quote"]),
    ("minimax-m3", hostile.openers("minimax-m3")["call cut in value"]),
    # a section opener written again, kept to go back with the section's first call: it
    # was joined to what was kept per opener (2.1 s at 1 MB; found by the megabyte bench)
    ("deepseek_v41", "<｜DSML｜calls>"),
    ("hy_v4", "<tool_calls>"),
]


@pytest.mark.parametrize("family, unit", MEGABYTE_CASES)
def test_a_megabyte_of_repeated_openers_costs_16x_its_64K(family: str, unit: str) -> None:
    small, large, times = hostile.ratio(family, unit, "whole", (65536, 1 << 20), TOOLS, BOUND)
    assert times <= BOUND, f"{small * 1e3:.0f} ms, then {large * 1e3:.0f} ms"


@pytest.mark.parametrize("family", hostile.grammars())
def test_a_failed_json_scan_costs_what_it_read(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a JSONDecodeError counts the newlines from the start of the text it was given up to
    # where the scan failed: given the whole output, once per call opener, that was the
    # output before each (hermes: 11 s for 530K characters of `<tool_call>\n{"name": "`,
    # 450x the output counted at 20K); what a scan reads is bounded by the nesting it may
    # descend before the decoder's recursion limit stops it (xlam's `[{"name": `: 7x)
    counted = [0]
    init = json.JSONDecodeError.__init__

    def counting(self: json.JSONDecodeError, msg: str, doc: str, pos: int) -> None:
        counted[0] += pos
        init(self, msg, doc, pos)

    monkeypatch.setattr(json.JSONDecodeError, "__init__", counting)
    for unit in hostile.openers(family).values():
        text = hostile.repeated(unit, 20_000)
        counted[0] = 0
        toolgrammar.parse(family, text, TOOLS, **hostile.OPTIONS)
        assert counted[0] <= 16 * len(text), (unit, counted[0])


def test_a_pending_name_is_checked_without_reading_every_tool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # step3p5's `<functionNAME`: while the name may still grow into a requested tool's, each
    # character asked whether any tool's name starts with it, reading all of them (2,000
    # tools, 64K characters one at a time: 42 s); the names are read once per tool list now
    from toolgrammar.runtime import schemas

    read = [0]

    class Counting(dict):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            for name in super().__iter__():
                read[0] += 1
                yield name

    init = schemas.ToolSchemas.__init__

    def counting(self: schemas.ToolSchemas, tools: list[dict] | None) -> None:
        init(self, tools)
        self._params = Counting(self._params)

    tools = [
        {"type": "function", "function": {"name": f"tool_{i:05d}", "parameters": {}}}
        for i in range(2000)
    ]
    text = "<tool_call><functiontool_0000 " * 100  # a name pending for 9 characters, 100 times
    monkeypatch.setattr(schemas.ToolSchemas, "__init__", counting)
    parser = toolgrammar.StreamParser("step3p5", tools)
    for char in text:
        parser.feed(char)
    parser.finish()
    assert read[0] <= 2 * len(tools), f"{read[0]} tool names read for {len(text)} characters"
