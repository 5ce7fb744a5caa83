"""Which golden-corpus cases an exported grammar must accept: the rule, decided by parsing.

The corpus is written to test the parser, so most cases are deliberately malformed,
truncated or off-schema. A case is **in-grammar** when all of these hold:

1. it is a finished output (`finish` is `stop`), parsed with the tools of `tools.json` and
   the default unknown-tools policy;
2. its expected calls name tools of the request, and their arguments are valid against the
   tool's schema made strict as the export makes it (required keys present, no undeclared
   key, no key twice) with the keys in the schema's order;
3. its text is **canonical enough**: `toolgrammar.render` of the expected calls, content and
   reasoning gives the same sequence of markers and texts. Both texts are cut at every
   literal the family's grammar spells (each spelling mapped to the grammar's first one);
   the text may leave out optional literals the renderer writes, never add one; whitespace
   around the pieces is ignored, but not between two literals the grammar writes with no
   `ws` between them; a piece that is
   JSON compares as parsed JSON with its keys in order and the same count of `\\u` escapes;
   the free header a `skip` item reads (Inkling's name header) is ignored, except at the very
   start of an output whose call the prompt opened (`block_open`: the export leaves it out in
   GBNF), where the case is out; the opener the prompt wrote is not expected. Content and
   reasoning must not hold a marker (a lookahead `[`/`{` included: the parser tried a call
   there), and the output must not end with an opener. So text after or
   between calls, ignored or stray markers, missing closers, truncation, repaired markup,
   other key orders or quoting, string-encoded arguments and typed values written as
   strings all put a case out.

Everything else is out; the export may still accept it (more whitespace, optional or
alternative markers, a second block), and the tests report those counts too.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import toolgrammar
from .corpus_format import Case
from .export_helpers import validates
from toolgrammar.export.schema import ExportError, load_tools
from toolgrammar.runtime.tables import compiled
from toolgrammar.runtime.params import with_params
from toolgrammar.runtime.registry import get_spec
from toolgrammar.runtime.spec import KeyValueArgs, Lit, Skip, XmlElements, XmlParams


def in_grammar(case: Case) -> tuple[bool, str]:
    """(in, why not)."""
    switched = (
        "unknown_tools",
        "partial_calls",
        "malformed_calls",
        "citations",
        "text_after_calls",
        "untyped_values",
        "required_params",
        "undeclared_params",
        "json_typing",
        "section_text",
    )
    if case.finish != "stop" or case.tools is None or any(case.options.get(s) for s in switched):
        return False, "truncated, or tools/call-switch options"
    try:
        tools = {t.name: t for t in load_tools(case.tools)}
    except ExportError as e:
        return False, str(e)
    calls = []
    for name, args in case.expect["tool_calls"]:
        if name not in tools:
            return False, f"unknown tool {name}"
        pairs = json.loads(args, object_pairs_hook=lambda p: p)
        keys = [k for k, _ in pairs] if isinstance(pairs, list) else None
        value = json.loads(args)
        schema = strict_deep(tools[name].parameters)
        if keys is None or len(set(keys)) != len(keys) or not validates(value, schema):
            return False, f"arguments of {name} outside the schema"
        if keys != [k for k in schema.get("properties", {}) if k in value]:
            return False, f"arguments of {name} not in schema order"
        if _free_form(value, tools[name].parameters):
            # a grammar the exporter spells itself (markup dialects) writes only the members
            # a schema declares: `{}` for an object schema with no properties
            return False, f"arguments of {name} hold a free-form object or array"
        calls.append({"name": name, "arguments": value})
    params = case.options.get("params")
    try:
        rendered = toolgrammar.render(
            case.family,
            calls,
            case.tools,
            content=case.expect["content"],
            reasoning=case.expect["reasoning"],
            params=params,
        )
    except toolgrammar.RenderError as e:
        return False, f"cannot be rendered: {e}"
    spec = with_params(get_spec(case.family), params)
    family = compiled(spec)
    opened = case.options.get("reasoning_open", family.prompt_opened)
    canon = _markers(spec)[0]
    if any(alt != c and alt not in c and alt in case.text for alt, c in canon.items()):
        # the exporter writes a marker's first spelling only (grammars/README.md)
        return False, "a marker in another spelling than the exporter's"
    markers = {*canon, *family.openers, *family.ignore}  # a lookahead `[` or `{` too
    for part in (case.expect["content"], case.expect["reasoning"]):
        if part and any(m in part for m in markers):
            return False, "markup given back as text"
    if any(
        o in _strings(json.loads(args))
        for _, args in case.expect["tool_calls"]
        for o in family.openers
    ):
        # the parser reads an opener the value's own closer follows as text; the export
        # keeps every marker out of values (test_markers_cannot_appear_inside_values)
        return False, "a call opener inside a value"
    if _SIGNED_NUMBER.search(case.text):
        return False, "a number written with a `+` sign (the exporter writes none)"
    for marker in {*family.openers, *family.section_opens}:
        if len(marker) > 1 and rendered.count(marker) > case.text.count(marker):
            return False, f"a call marker the renderer writes is missing ({marker!r}: a recovery)"
    if any(case.text.rstrip().endswith(o) for o in (*family.openers, *family.section_opens)):
        return False, "ends with an opener"
    if _spaced_literals(spec).search(case.text):
        return False, "whitespace between literals the grammar writes together"
    mine = _split_blocks(_pieces(spec, case.text, False))
    theirs = _split_blocks(
        _pieces(spec, rendered, bool(opened and case.expect["reasoning"] is not None))
    )
    prompt = spec.prompt_opens if case.options.get("block_open", True) and not opened else ""
    if prompt and not case.text.lstrip().startswith(prompt):
        # the prompt wrote the first opener the renderer writes
        if _starts_with_header(spec, case.text):
            return False, "a free header right after the prompt's opener"
        if theirs and theirs[0] == ("m", canon.get(prompt, prompt)):
            theirs = theirs[1:]
    if not _aligned(mine, theirs, _markers(spec)[1]):
        return False, "not canonical"
    return True, ""


_SIGNED_NUMBER = re.compile(r"(?<![\w.+-])\+\d")


def _free_form(value: Any, schema: Any) -> bool:
    """Whether a non-empty object or array of `value` sits under a schema that declares no
    members (an object schema without `properties`, an array schema without `items`)."""
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            return bool(value)
        return any(_free_form(v, props.get(k)) for k, v in value.items())
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        if not isinstance(items, dict) or not items:
            return bool(value)
        return any(_free_form(v, items) for v in value)
    return False


def _strings(value: object) -> str:
    """Every string inside a JSON value, joined (where a marker written as text would be)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return "\n".join(_strings(item) for item in value)
    return ""


def _starts_with_header(spec: Any, text: str) -> bool:
    """Whether `text` begins with the free header a `skip` reads (text, then its end)."""
    canon, _, _, skip_ends = _markers(spec)
    found = re.search("|".join(re.escape(m) for m in sorted(canon, key=len, reverse=True)), text)
    return bool(found and found.start() > 0 and text[: found.start()].strip()) and (
        found.group() in skip_ends
    )


def _aligned(
    mine: list[tuple[str, str]], theirs: list[tuple[str, str]], optional: set[str]
) -> bool:
    """`mine` is `theirs` with some of its optional markers left out."""
    i = 0
    for piece in theirs:
        if i < len(mine) and _same(mine[i], piece):
            i += 1
        elif piece[0] != "m" or piece[1] not in optional:
            return False
    return i == len(mine)


def _markers(spec: Any) -> tuple[dict[str, str], set[str], set[str], set[str]]:
    """spelling -> canonical spelling; optional ones; reasoning openers; skip ends."""
    canon: dict[str, str] = {}
    optional: set[str] = set()
    skip_ends: set[str] = set()

    def add(texts: tuple[str, ...], is_optional: bool = False) -> None:
        for t in texts:
            if t and not t.isspace():
                canon.setdefault(t, texts[0])
                if is_optional:
                    optional.add(t)

    for r in spec.reasoning:
        add(r.opens)
        add(r.closes)
    if spec.section:
        add(spec.section.opens)
        add(spec.section.closes)
    for m in spec.ignore:
        add((m,))
    if spec.messages:
        add(spec.messages.header)
        add((spec.messages.header_end,))
        add(spec.messages.ends)
    for shape in spec.shapes:
        for i, item in enumerate(shape.call):
            if isinstance(item, Lit) and not item.peek:
                add(item.texts, item.optional)
            elif isinstance(item, Skip):
                skip_ends.update(item.until)
            elif isinstance(item, XmlParams):
                for spellings in (item.opens, item.key_ends, (item.value_open,), item.value_ends):
                    add(spellings)
            elif isinstance(item, XmlElements) and item.prefix:
                add((item.prefix,))
            elif isinstance(item, KeyValueArgs):
                add((item.string,))
    opens = {o for r in spec.reasoning for o in r.opens}
    optional -= set(spec.ignore)  # an ignored marker is never part of a call
    return canon, optional, opens, skip_ends


def _spaced_literals(spec: Any) -> re.Pattern[str]:
    """Two literals the grammar writes with no `ws` between them, with whitespace between."""
    pairs = []
    for shape in spec.shapes:
        for a, b in zip(shape.call, shape.call[1:]):
            if isinstance(a, Lit) and isinstance(b, Lit) and not a.peek and not b.peek:
                left = "|".join(re.escape(t) for t in a.texts)
                right = "|".join(re.escape(t) for t in b.texts if not t[:1].isspace())
                if right:
                    pairs.append(f"(?:{left})\\s+(?:{right})")
    return re.compile("|".join(pairs) or "(?!)")


def strict_deep(schema: Any) -> Any:
    """The schema with `additionalProperties: false` on every object that lists properties."""
    if isinstance(schema, list):
        return [strict_deep(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict_deep(v) for k, v in schema.items()}
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _pieces(spec: Any, text: str, drop_first_open: bool) -> list[tuple[str, str]]:
    canon, optional, opens, skip_ends = _markers(spec)
    alternatives = "|".join(re.escape(m) for m in sorted(canon, key=len, reverse=True))
    pattern = re.compile(alternatives or "(?!)")
    raw: list[tuple[str, str]] = []
    pos = 0
    for found in pattern.finditer(text):
        raw.append(("t", text[pos : found.start()]))
        raw.append(("m", found.group()))
        pos = found.end()
    raw.append(("t", text[pos:]))
    out: list[tuple[str, str]] = []
    for i, (kind, value) in enumerate(raw):
        if kind == "m":
            if drop_first_open and value in opens and not any(v.strip() for _, v in out):
                continue
            out.append(("m", canon[value]))
            continue
        following = raw[i + 1][1] if i + 1 < len(raw) else None
        if following in skip_ends:
            continue  # the free header a skip reads
        if out and out[-1][0] == "t":
            out[-1] = ("t", out[-1][1] + value)
        else:
            out.append(("t", value))
    return [(k, v.strip() if k == "t" else v) for k, v in out if k == "m" or v.strip()]


def _split_blocks(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A block holding several calls (a JSON array of calls, a Python call list) as one block
    per call, the way the renderer writes them."""
    out: list[tuple[str, str]] = []
    for i, (kind, value) in enumerate(pieces):
        calls = _calls_in(value) if kind == "t" else None
        before = pieces[i - 1] if i else None
        after = pieces[i + 1] if i + 1 < len(pieces) else None
        if calls is None or len(calls) < 2 or not before or not after or "m" != before[0]:
            out.append((kind, value))
            continue
        out.append(calls[0])
        for call in calls[1:]:
            if after[0] == "m":
                out.append(after)
            out.append(before)
            out.append(call)
    return out


def _calls_in(text: str) -> list[tuple[str, str]] | None:
    """The calls of a JSON array or of Python calls, each as a piece of its own."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, list):
        if "\\u" in text:
            return None  # re-written elements would lose the escapes
        return [("t", json.dumps([v], ensure_ascii=False)) for v in value]
    calls = _python_calls(text)
    if calls is None:
        return None
    bracket = text.startswith("[")
    return [("t", f"[{c}]" if bracket else c) for c in calls]


_PY_ESCAPES = re.compile(r"\\(?![\\'\"nrt])")


def _python_calls(text: str) -> list[str] | None:
    """Python calls `NAME(k=v, …)` (in a list or one per line) in a normal spelling: keyword
    arguments only, values as `repr` writes them; None if it is not that, or uses an escape
    the export does not write."""
    if _PY_ESCAPES.search(text):
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval" if text.strip().startswith("[") else "exec")
    except (SyntaxError, UnicodeEncodeError):  # (a lone surrogate: not Python source text)
        return None
    if isinstance(tree, ast.Expression):
        if not isinstance(tree.body, ast.List):
            return None
        nodes = tree.body.elts
    else:
        if not all(isinstance(s, ast.Expr) for s in tree.body):
            return None
        nodes = [s.value for s in tree.body]
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return None
        try:
            args = ", ".join(f"{k.arg}={ast.literal_eval(k.value)!r}" for k in node.keywords)
        except ValueError:
            return None
        calls.append(f"{node.func.id}({args})")
    return calls or None


def _same(a: tuple[str, str], b: tuple[str, str]) -> bool:
    if a == b:
        return True
    if a[0] != "t" or b[0] != "t":
        return False
    pa, pb = _python_calls(a[1]), _python_calls(b[1])
    if pa is not None and pa == pb:
        return True
    try:
        ja = json.loads(a[1], object_pairs_hook=lambda p: p)
        jb = json.loads(b[1], object_pairs_hook=lambda p: p)
    except ValueError:
        return False
    same = json.dumps(ja) == json.dumps(jb)  # 1 is not true
    return same and a[1].count("\\u") == b[1].count("\\u")
