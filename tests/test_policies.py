"""The policy switches and the compat profiles (docs/policies.md, runtime/policies.py): each
switch decides what it says and nothing else, a profile sets what its stack does, an explicit
switch wins, bad values are clear errors, and the invariants hold under every setting."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import toolgrammar
from support.corpus_format import all_cases
from toolgrammar.adapters.env_policies import POLICIES_ENV, policies_from_env
from toolgrammar.check.invariants import check_text
from toolgrammar.runtime.policies import COMPAT, PROFILES, SWITCHES, Policies, resolve

ROOT = Path(__file__).resolve().parent.parent
CASES = all_cases()
TOOLS = json.loads((ROOT / "tests" / "corpus" / "tools.json").read_text(encoding="utf-8"))
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
UNKNOWN = '<tool_call>\n{"name": "get_stock", "arguments": {"symbol": "X"}}\n</tool_call>'


def test_the_projects_defaults_are_the_first_values() -> None:
    assert Policies() == Policies("verbatim", "keep", "keep", "keep")
    assert resolve(None, "hermes", {}) == Policies()
    assert all(values[0] == getattr(Policies(), name) for name, values in SWITCHES.items())


def test_a_profile_sets_its_stack_and_per_family_answers() -> None:
    assert resolve("sglang", "hermes", {}) == Policies("trim", "drop")
    assert resolve("sglang", "qwen3_coder", {}).unknown_tools == "keep"
    assert resolve("sglang", "kimi_k2", {}) == Policies("trim", "keep")
    assert resolve("vllm", "hermes", {}) == Policies(
        "verbatim", "keep", "text", "text", text_after_calls="drop", json_typing="as_written"
    )
    assert resolve("vllm", "glm45", {}) == Policies(
        "trim", "drop", text_after_calls="drop", json_typing="as_written"
    )
    assert resolve("vllm", "deepseek_v3", {}).text_after_calls == "keep"
    assert resolve("vllm", "cohere_command3", {}).citations == "strip"
    # an alias takes its grammar's answers
    assert resolve("vllm", "qwen3_xml", {}, "qwen3_coder").whitespace == "trim"
    assert resolve("llama.cpp", "hermes", {}) == Policies("verbatim", "keep")


def test_an_explicit_switch_wins_over_the_profile() -> None:
    assert resolve("sglang", "hermes", {"unknown_tools": "keep"}).unknown_tools == "keep"
    assert resolve("vllm", "glm45", {"whitespace": "verbatim"}).whitespace == "verbatim"
    assert resolve("sglang", "hermes", {"whitespace": None}).whitespace == "trim"  # not given


def test_every_profile_names_registered_families_and_known_switches() -> None:
    names = set(toolgrammar.families())
    for stack, profile in PROFILES.items():
        assert set(profile.every_family) <= set(SWITCHES), stack
        assert set(profile.families) <= names, stack
        for answers in profile.families.values():
            assert all(answers[s] in SWITCHES[s] for s in answers), stack
        assert set(profile.why) == set(SWITCHES), f"{stack} says why for every switch"
    assert set(PROFILES) == set(COMPAT)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"whitespace": "strip"}, "whitespace must be one of 'verbatim', 'trim', not 'strip'"),
        ({"unknown_tools": "text!"}, "unknown_tools must be one of 'keep', 'drop', 'text'"),
        ({"partial_calls": "hold"}, "partial_calls must be one of 'keep', 'drop', 'text'"),
        ({"malformed_calls": 1}, "malformed_calls must be one of 'keep', 'drop', 'text'"),
        ({"compat": "tgi"}, "compat must be one of 'vllm', 'sglang', 'llama.cpp' or None"),
    ],
)
def test_bad_values_are_clear_errors(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        toolgrammar.StreamParser("hermes", TOOLS, **options)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        toolgrammar.parse("hermes", "hi", TOOLS, **options)


def test_whitespace_verbatim_and_trim() -> None:
    code = "    return x\n"  # no markup at all: every character is content
    assert toolgrammar.parse("hermes", code).content == code
    assert toolgrammar.parse("hermes", code, whitespace="trim").content == "return x"
    text = f"Let me check.\n{CALL}\n{CALL}\n\nDone.\n"
    verbatim = toolgrammar.parse("hermes", text, TOOLS)
    # the newline before the first call and the text after the last are the model's; the
    # gap between the two calls is layout
    assert verbatim.content == "Let me check.\n\n\nDone.\n"
    assert toolgrammar.parse("hermes", text, TOOLS, whitespace="trim").content == (
        "Let me check.\n\nDone."
    )
    # a gap of whitespace between markup and the end is layout either way
    assert toolgrammar.parse("hermes", f"{CALL}\n\n", TOOLS).content is None


def test_unknown_tools_under_each_profile() -> None:
    text = f"{UNKNOWN}{CALL}"
    names = lambda **o: [
        c.function.name for c in toolgrammar.parse("hermes", text, TOOLS, **o).tool_calls
    ]  # noqa: E731
    assert names() == ["get_stock", "get_weather"]
    assert names(compat="vllm") == ["get_stock", "get_weather"]
    assert names(compat="sglang") == ["get_weather"]
    assert names(compat="sglang", unknown_tools="keep") == ["get_stock", "get_weather"]
    assert names(unknown_tools="drop") == ["get_weather"]


def test_the_stream_reads_as_the_whole_output_under_every_profile() -> None:
    text = f"  Let me check.  \n{UNKNOWN}\n{CALL}\n\nDone.  "
    for compat in (None, *COMPAT):
        for whitespace in (None, *SWITCHES["whitespace"]):
            whole = toolgrammar.parse("hermes", text, TOOLS, compat=compat, whitespace=whitespace)
            parser = toolgrammar.StreamParser("hermes", TOOLS, compat=compat, whitespace=whitespace)
            deltas = [d for ch in text for d in parser.feed(ch)] + parser.finish("stop")
            streamed = toolgrammar.assemble(deltas, parser.finish_reason)
            assert streamed.content == whole.content, (compat, whitespace)
            assert [c.function.name for c in streamed.tool_calls] == [
                c.function.name for c in whole.tool_calls
            ]


def _cases(family: str) -> list:
    mine = [c for c in CASES if c.family == family and not c.options and c.finish == "stop"]
    with_calls = [c for c in mine if c.expect["tool_calls"]][:2]
    without = [c for c in mine if not c.expect["tool_calls"]][:1]
    return with_calls + without


@pytest.mark.parametrize("family", toolgrammar.families())
def test_invariants_hold_under_every_profile(family: str) -> None:
    """Prefix, termination and parity (1-char, random and whole splittings) at sampled cuts of
    a few corpus cases of every family, under every compat profile, the other whitespace, and
    the call switches' other values (all "text", all "drop")."""
    settings = [
        {"whitespace": "trim"},
        *({"compat": c} for c in COMPAT),
        {"unknown_tools": "text", "partial_calls": "text", "malformed_calls": "text"},
        {"unknown_tools": "drop", "partial_calls": "drop", "malformed_calls": "drop"},
    ]
    rng = random.Random(family)
    found = []
    for case in _cases(family):
        cuts = sorted(rng.sample(range(len(case.text) + 1), min(len(case.text) + 1, 12)))
        for options in settings:
            merged = {**case.options, **options}
            for violation in check_text(family, case.text, case.tools, merged, cuts=cuts):
                found.append(f"{case.name} {options}: {violation}")
    assert not found, "\n".join(found[:5])


def test_the_adapters_read_their_stack_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(POLICIES_ENV, raising=False)
    monkeypatch.delenv("SGLANG_FORWARD_UNKNOWN_TOOLS", raising=False)
    assert policies_from_env("vllm") == {"compat": "vllm"}
    assert policies_from_env("sglang") == {"compat": "sglang"}
    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "1")
    assert policies_from_env("sglang") == {"compat": "sglang", "unknown_tools": "keep"}
    monkeypatch.setenv(POLICIES_ENV, '{"unknown_tools": "drop", "whitespace": "trim"}')
    assert policies_from_env("sglang") == {
        "compat": "sglang",
        "unknown_tools": "drop",
        "whitespace": "trim",
    }
    monkeypatch.setenv(POLICIES_ENV, '{"compat": null}')
    assert policies_from_env("vllm") == {"compat": None}
    for raw, message in (
        ("{nope", "is not JSON"),
        ('{"strip": true}', "keys among compat, whitespace, unknown_tools, partial_calls"),
        ('{"compat": "tgi"}', "compat must be one of"),
    ):
        monkeypatch.setenv(POLICIES_ENV, raw)
        with pytest.raises(ValueError, match=message):
            policies_from_env("vllm")


def test_the_cli_takes_the_switches(tmp_path: Path) -> None:
    output = tmp_path / "out.txt"
    output.write_text(f"Let me check.\n{UNKNOWN}", encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")

    def run(*flags: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "toolgrammar", "parse", "hermes", str(output),
             "--tools", str(tools), *flags],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        message = json.loads(done.stdout)["message"]
        message.setdefault("tool_calls", [])
        return message

    assert run()["content"] == "Let me check.\n"
    assert run("--compat", "sglang")["content"] == "Let me check."
    assert run("--compat", "sglang")["tool_calls"] == []
    assert len(run("--compat", "sglang", "--unknown-tools", "keep")["tool_calls"]) == 1
    assert run("--whitespace", "trim")["content"] == "Let me check."


MALFORMED = '<tool_call>\n{"name": "get_weather", "arguments": oops}\n</tool_call>'
CUT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'


def _stream(text: str, **options: object) -> list:
    parser = toolgrammar.StreamParser("hermes", TOOLS, ids="sequential", **options)
    return [parser.feed(ch) for ch in text] + [parser.finish("length")]


def test_unknown_tools_text_gives_the_markup_back_as_it_is_read() -> None:
    text = f"Hi.\n{UNKNOWN}\n{CALL}"
    message = toolgrammar.parse("hermes", text, TOOLS, unknown_tools="text")
    assert message.content == f"Hi.\n{UNKNOWN}"
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    # nothing held past the name: once `"get_stock"` is read, the call's text is content
    feeds = _stream(UNKNOWN, unknown_tools="text")
    name_end = UNKNOWN.index('"get_stock"') + len('"get_stock"')
    sent = "".join(d.content or "" for feed in feeds[: name_end + 2] for d in feed)
    assert sent.startswith('<tool_call>\n{"name": "get_stock"')


@pytest.mark.parametrize("switch", ["partial_calls", "malformed_calls"])
def test_partial_and_malformed_calls_keep_drop_text(switch: str) -> None:
    text, reason = (CUT, "length") if switch == "partial_calls" else (MALFORMED, "stop")
    read = lambda value: toolgrammar.parse(  # noqa: E731
        "hermes", f"Hi.\n{CALL}\n{text}", TOOLS, reason, **{switch: value}
    )
    kept = read("keep")
    assert [c.function.name for c in kept.tool_calls] == ["get_weather", "get_weather"]
    assert [c.function.name for c in read("drop").tool_calls] == ["get_weather"]
    given_back = read("text")
    assert [c.function.name for c in given_back.tool_calls] == ["get_weather"]
    assert given_back.content.endswith(text)


def test_holding_calls_costs_promptness_not_correctness() -> None:
    """With partial_calls away from keep, a call goes out only when its arguments end: its
    header is not sent at the name, and nothing is sent before the arguments' `}`."""

    def first_call_feed(**options: object) -> int:
        for n, feed in enumerate(_stream(CALL, **options)):
            if any(d.tool_calls for d in feed):
                return n
        return -1

    prompt = first_call_feed()
    held = first_call_feed(partial_calls="drop")
    assert prompt < CALL.index('"arguments"')  # the header goes out at the name
    assert held == CALL.rindex("}")  # held until the arguments' object closes
    whole = [d for feed in _stream(CALL, partial_calls="drop") for d in feed]
    assert toolgrammar.assemble(whole).tool_calls[0].function.arguments == '{"city": "Paris"}'


def test_citations_keep_or_strip() -> None:
    text = "<|START_RESPONSE|>The sky is <co>blue</co: 2:[0]>.<|END_RESPONSE|>"
    assert toolgrammar.parse("cohere_command3", text).content == (
        "The sky is <co>blue</co: 2:[0]>."
    )
    assert toolgrammar.parse("cohere_command3", text, citations="strip").content == (
        "The sky is blue."
    )
    assert toolgrammar.parse("cohere_command3", text, compat="vllm").content == "The sky is blue."
    # a family whose grammar declares no citation reads the switch as a no-op
    assert toolgrammar.parse("hermes", "a <co>b</co: 1>", citations="strip").content == (
        "a <co>b</co: 1>"
    )


def test_the_cli_takes_the_call_switches(tmp_path: Path) -> None:
    output = tmp_path / "out.txt"
    output.write_text(f"Hi.\n{MALFORMED}", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolgrammar", "parse", "hermes", str(output),
         "--malformed-calls", "text", "--partial-calls", "drop", "--unknown-tools", "text"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    message = json.loads(done.stdout)["message"]
    assert message["content"] == f"Hi.\n{MALFORMED}"
    assert not message.get("tool_calls")
