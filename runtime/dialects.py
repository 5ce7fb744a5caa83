"""The one table of argument dialects: spec class -> everything the runtime does with it.

The engine makes a call's reader from it (and knows whether it names calls), the renderer
writes arguments with it, and `markup_literals` (here) asks it for an item's delimiters.
Adding a dialect is a module with its reader, writer and `DialectRow`, and a row here
(the exporter's rules are `export/dialects.py`; the grammar word is `compiler/ir.ELEMENTS`).
"""

from __future__ import annotations

from .json_args import JSON_ARGS
from .json_call import JSON_CALL, JSON_CALL_ARRAY
from .keyvalue_args import KEYVALUE_ARGS
from .kv_lines import KV_LINES
from .protocol import DialectRow
from .python_calls import PYTHON_CALLS
from .spec import FamilySpec, Lit, Name
from .xml_elements import XML_ELEMENTS
from .xml_params import XML_PARAMS

DIALECTS: dict[type, DialectRow] = {
    row.item_class: row
    for row in (
        XML_PARAMS,
        XML_ELEMENTS,
        KEYVALUE_ARGS,
        KV_LINES,
        PYTHON_CALLS,
        JSON_ARGS,
        JSON_CALL,
        JSON_CALL_ARRAY,
    )
}


def markup_literals(spec: FamilySpec, *, header: bool = True) -> frozenset[str]:
    """Every literal the family's grammar names: its call items in every shape, reasoning,
    section and ignored markers, message markers, the delimiters of its argument dialect.
    Prose and values must not hold them; special tokens hide inside them.

    `header=False` leaves out a message header opener (`to=`), which is also everyday prose.
    """
    found = {lit for r in spec.reasoning for lit in (*r.opens, *r.closes)} | set(spec.ignore)
    if spec.section:
        found |= {*spec.section.opens, *spec.section.closes}
    if spec.messages:
        found |= {spec.messages.header_end, *spec.messages.ends}
        if header:
            found |= set(spec.messages.header)
    for shape in spec.shapes:
        for item in shape.call:
            if isinstance(item, Lit):
                found |= set(item.texts)
            elif isinstance(item, Name):
                found |= set(item.until)
            elif (row := DIALECTS.get(type(item))) is not None:
                found |= set(row.literals(item))
    return frozenset(m for m in found if m)
