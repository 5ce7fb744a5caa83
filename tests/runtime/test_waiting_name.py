"""A call's name read over several deltas is asked on each of them whether it can no longer be
a name (`call_head._never_a_name`). With a pattern, a first character a match may begin with
answers at once, without the end cut that may begin the name's `until` (a shortcut): it
answers as the whole question does for every family's named items, wherever the text stands;
without one, no character of `BAD_NAME` in all the rest of the text answers the same;
the corpus streams the same either way (tests/test_shortcuts.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgrammar.check.fast_paths import shortcuts_set
from toolgrammar.runtime.engine import Engine
from toolgrammar.runtime.registry import families, get_spec
from toolgrammar.runtime.spec import Name
from toolgrammar.runtime.tables import compile_family


def _named_items(patterned: bool) -> list[tuple[str, Name, object]]:
    """Every family's name items that have a pattern (or have none), with the markers that
    end them."""
    found = []
    for family in families():
        compiled = compile_family(get_spec(family))
        for (shape, index), ends in compiled.name_markers.items():
            _, item = compiled.steps[shape][index]
            if not isinstance(item, Name) or item.fixed or not item.until:
                continue  # (the opener names the call: no name is read)
            if (item.pattern is not None) == patterned:
                found.append((family, item, ends))
    return found


NAMED = _named_items(True)
PLAIN = _named_items(False)  # (their text is asked for a `BAD_NAME` character, the rest first)
PIECES = st.sampled_from(
    [" ", "\n", "{", "<", ">", "[", '"', "f", "get_weather", "functions.", ":0", "1"]
)


def test_families_have_named_items_with_patterns_and_without() -> None:
    assert len({family for family, _, _ in NAMED}) >= 3
    assert len({family for family, _, _ in PLAIN}) >= 3


@settings(max_examples=600, deadline=None)
@given(st.data(), st.booleans())
def test_the_first_character_answers_as_the_whole_text_does(
    data: st.DataObject, patterned: bool
) -> None:
    family, item, ends = data.draw(st.sampled_from(NAMED if patterned else PLAIN))
    # text made of the name's own pieces and of its `until` markers, often cut inside one
    until = st.sampled_from([u[:cut] for u in item.until for cut in range(1, len(u) + 1)])
    pieces = data.draw(st.lists(st.one_of(PIECES, until), max_size=6))
    buf = "".join(pieces)
    pos = data.draw(st.integers(0, len(buf)))
    with shortcuts_set(False):
        slow = Engine._never_a_name(item, buf, pos, ends)
    with shortcuts_set(True):
        fast = Engine._never_a_name(item, buf, pos, ends)
    assert fast == slow, (family, buf, pos)
