"""Whether a text may still grow into a match of a name pattern (`runtime/prefixes.py`):
wrong only ever towards "may", since a "no" gives a header back as text at the end of
output, which a longer output must then give back too."""

from __future__ import annotations

import re
import re._constants as sre_constants  # (the parse tree's opcodes: no public name)
import re._parser as sre_parse

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolgrammar.runtime.prefixes import may_grow, prefix_regex
from toolgrammar.runtime.spec import BAD_NAME, Name, never_a_name

MINICPM5 = r'(?P<name>[^"]*)(?:"\s+[\w:-]+="[^"]*)*'


@pytest.mark.parametrize(
    "pattern, never, may",
    [
        (r"(?P<name>python)", [">", "pyx", "pythonn", "python "], ["", "p", "pyth", "python"]),
        (MINICPM5, ['a"b', 'a" =x', 'a" b="c"x'], ['a" ', 'a"\xa0n', 'a" d="', 'a" d="1" e']),
        (r"(?P<name>[^\s<>]+)(?:\s+json)?", ["a b", "a jsx", "a json x"], ["a j", "a json"]),
        (r"(?:functions\.)?(?P<name>[^:\s]+):\d+", ["a:b", "f:1x"], ["functions.f:", "f:12"]),
        (r"\s*(?P<q>[\"']?)(?P<name>[^\"'\s>]+)(?P=q)\s*", ['"a"x', "'a\"", "a'"], ['"a', '"a"']),
        (r"(?P<name>[^\[\]{}\s]+)\s*(?:\[CALL_ID\]\s*(?P<id>\S+))?", ["a [X"], ["a [CALL_", "a "]),
        (r"(?i)(?P<name>python)", ["pyx"], ["PyT"]),
        (r"a\Bb|a\b-", ["ac", "a-b", "ab-"], ["a", "ab", "a-"]),  # (at the cut: undecided)
        (r"(?:ab){2,3}c?", ["abb", "abababab"], ["aba", "ababab", "ababc"]),
    ],
)
def test_what_may_still_grow_into_a_match(pattern: str, never: list[str], may: list[str]) -> None:
    assert [s for s in never if may_grow(pattern, s)] == []
    assert [s for s in may if not may_grow(pattern, s)] == []


@pytest.mark.parametrize(
    "pattern, head, never",
    [
        (r"(?=.*\btool=\"(?P<name>[^\"]*)\").*", "", ""),  # a lookahead: anything may follow
        (r"a(?!b)c", "a", "x"),
        (r"(?P<q>ab)(?P=q)", "ab", "ac"),  # a backreference wider than one character
        (r"(a)?(?(1)b|c)", "", ""),  # a conditional group
    ],
)
def test_what_it_cannot_read_may_grow_from_there(pattern: str, head: str, never: str) -> None:
    assert may_grow(pattern, head + "\x00 z<")
    assert may_grow(pattern, head + "aaaa")
    assert not never or not may_grow(pattern, never)


def test_a_name_group_holds_no_character_a_name_may_not() -> None:
    assert may_grow(MINICPM5, '>\n"\xa0n="')
    assert not may_grow(MINICPM5, '>\n"\xa0n="', "name", BAD_NAME.pattern)
    assert may_grow(MINICPM5, 'ab" c=">', "name", BAD_NAME.pattern)  # (an attribute's value)
    assert may_grow(MINICPM5, "ab", "no_such_group", BAD_NAME.pattern)


def test_never_a_name_asks_whether_the_header_may_still_grow() -> None:
    header = Name(until=('">',), pattern=MINICPM5)
    assert never_a_name(header, '>\n"\xa0n')  # the fuzz finding: its name holds `>`
    assert not never_a_name(header, 'get_weather" d')  # `" d="1"` is still arriving
    assert never_a_name(header, 'get_weather"d')
    assert never_a_name(Name(until=('">',), pattern=MINICPM5, max_len=4), "abcde")
    assert not never_a_name(Name(until=("<|sep|>",), pattern=r"(?=.*\bt=\"(?P<name>x)\").*"), "a")


# --------------------------------------------------------------------------- properties

ALPHABET = 'ab" =\n'
_atoms = st.sampled_from(
    ["a", "b", '"', " ", ".", r"\s", r"\S", r"\w", "[ab]", '[^"]', "[a-b ]", r"\b", "$", "^"]
)


def _combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quantifiers = st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "*?", "++", "{0,2}+"])
    return st.one_of(
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
        st.tuples(inner, quantifiers).map(lambda p: f"(?:{p[0]}){p[1]}"),
        inner.map(lambda p: f"(?>{p})"),
        inner.map(lambda p: f"(?i:{p})"),
    )


_bodies = st.recursive(_atoms, _combine, max_leaves=8)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """A small pattern: a name group among other parts, maybe a backreference or a
    lookaround (which the prefix test reads as "anything from here")."""
    before, name, after = draw(_bodies), draw(_bodies), draw(_bodies)
    extra = draw(st.sampled_from(["", "(?P=name)", "(?=a)", "(?!b)", "(?P<q>a?)(?P=q)"]))
    return f"{before}(?P<name>{name}){extra}{after}"


_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}


def _nests_repeats(pattern: str) -> bool:
    """A repeat inside a repeat (`(?:(?:a?)+)*`): hypothesis's `from_regex` checks each
    text it draws with `re.fullmatch`, which backtracks exponentially on such a pattern
    (a CI run stalled there); the other properties read texts of ten characters at most."""

    def walk(items: sre_parse.SubPattern | list, inside: bool) -> bool:
        for op, arg in items:
            if op in _REPEATS:
                if inside or walk(arg[2], True):
                    return True
            elif op is sre_constants.SUBPATTERN:
                if walk(arg[-1], inside):
                    return True
            elif op is sre_constants.ATOMIC_GROUP:
                if walk(arg, inside):
                    return True
            elif op is sre_constants.BRANCH:
                if any(walk(branch, inside) for branch in arg[1]):
                    return True
        return False

    return walk(sre_parse.parse(pattern), False)


def _valid(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@settings(max_examples=500, deadline=None)
@given(patterns(), st.text(ALPHABET, max_size=10))
def test_every_prefix_of_a_match_may_grow(pattern: str, text: str) -> None:
    """If s + t fully matches the pattern, s may grow into a match (with the name group
    kept clean, when the match's own name group is): s and s + t are prefixes of `text`."""
    assume(_valid(pattern))
    for end in range(len(text) + 1):
        found = re.fullmatch(pattern, text[:end])
        if found is None:
            continue
        clean = not re.search('[" ]', found.group("name") or "")
        for cut in range(end + 1):
            assert may_grow(pattern, text[:cut]), (pattern, text[:end], cut)
            if clean:
                assert may_grow(pattern, text[:cut], "name", '[" ]'), (pattern, text[:end], cut)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_prefix_of_a_drawn_match_may_grow(data: st.DataObject) -> None:
    """The same on matches drawn from the pattern itself (random text rarely matches)."""
    pattern = data.draw(patterns())
    assume(_valid(pattern) and "(?=" not in pattern and "(?!" not in pattern)
    assume(not _nests_repeats(pattern))
    text = data.draw(st.from_regex(pattern, fullmatch=True))
    assume(re.fullmatch(pattern, text) is not None)
    for cut in range(len(text) + 1):
        assert may_grow(pattern, text[:cut]), (pattern, text, cut)


@settings(max_examples=300, deadline=None)
@given(patterns(), st.text(ALPHABET, max_size=8), st.text(ALPHABET, max_size=4))
def test_what_cannot_grow_stays_so(pattern: str, text: str, more: str) -> None:
    """A text that cannot grow into a match does not once it is longer: the answer at a
    cut agrees with the one for the output that went on."""
    assume(_valid(pattern))
    if may_grow(pattern, text + more, "name", '[" ]'):
        assert may_grow(pattern, text, "name", '[" ]'), (pattern, text, more)


def test_the_prefix_regex_is_not_anything_for_the_grammars_patterns() -> None:
    """The grammars' header patterns are read, not given up as "anything may grow"."""
    for pattern in (MINICPM5, r"(?P<name>python)", r"(?P<q>[\"']?)(?P<name>[^\"'\s>]+)(?P=q)"):
        assert prefix_regex(pattern, "name", BAD_NAME.pattern) is not None
