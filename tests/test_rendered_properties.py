"""Property tests over outputs written from each grammar: not only hand-picked cases.

For every registered grammar, hypothesis writes outputs (calls to the test tools with
values of every schema type, quotes, escapes, non-ASCII and markup-like text, optional
literals and whitespace taken or not, content and reasoning around them) and checks
that they parse back to the calls written, and that the invariants hold at random cut
points under 1-char, random and whole splittings.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolgrammar
from support.corpus_format import TOOLS
from support.render_samples import call_for, plain_text, render_output
from toolgrammar.check.invariants import check_text
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec

FAMILIES = sorted({get_spec(name).name for name in toolgrammar.families()})
# bounded per family so that the whole suite stays inside CI's budget as families grow
SETTINGS = settings(
    max_examples=max(40, 1200 // len(FAMILIES)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _sample(family: str, data: st.DataObject):
    spec = with_params(get_spec(family))  # the grammar's params at their defaults
    tools = st.sampled_from(TOOLS).flatmap(lambda tool: call_for(tool, spec))
    calls = data.draw(st.lists(tools, max_size=3), label="calls")
    before = data.draw(plain_text(spec), label="before").strip()
    after = data.draw(plain_text(spec), label="after").strip()
    reasoning = data.draw(st.none() | plain_text(spec, 0, 20), label="reasoning")
    text = render_output(spec, calls, data, before, after, reasoning)
    # written reasoning opens its block itself; without it, the prompt did not open one
    options = {"reasoning_open": False}
    return spec, calls, before, after, reasoning, text, options


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_written_calls_parse_back(family: str, data: st.DataObject) -> None:
    spec, calls, before, after, reasoning, text, options = _sample(family, data)
    message = toolgrammar.parse(family, text, TOOLS, **options)
    got = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert got == calls
    # the content is the prose around the calls; only the whitespace joining the two pieces,
    # and with verbatim whitespace the line break the renderer lays a piece out with, depend
    # on the layout
    if before and after:
        content = message.content or ""
        middle = content[len(before) : len(content) - len(after)]
        assert content.startswith(before) and content.endswith(after) and not middle.strip()
        assert len(content) > len(before) + len(after)  # the separating newline is kept
    elif before or after:
        assert message.content is not None and message.content.strip() == (before or after)
    else:
        assert message.content is None  # a gap of whitespace between markup is layout
    if spec.reasoning and reasoning is not None:
        assert message.reasoning == (reasoning or None)


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_invariants_at_random_cuts(family: str, data: st.DataObject, seed: int) -> None:
    _, _, _, _, _, text, options = _sample(family, data)
    rng = random.Random(seed)
    cuts = sorted({rng.randint(0, len(text)) for _ in range(6)} | {len(text)})
    violations = check_text(family, text, TOOLS, options, cuts=cuts, seed=seed)
    assert not violations, "\n".join(map(str, violations[:3]))
