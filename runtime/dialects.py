"""The one table of argument dialects: spec class -> everything the runtime does with it.

The engine makes a call's builder from it (and knows whether it names calls), the renderer
writes arguments with it, and `spec.markup_literals` asks it for an item's delimiters.
Adding a dialect is a module with its builder, writer and `DialectRow`, and a row here
(the exporter's rules are `export/dialects.py`; the grammar word is `compiler/ir.ELEMENTS`).
"""

from __future__ import annotations

from .json_args import JSON_ARGS
from .json_call import JSON_CALL, JSON_CALL_ARRAY
from .keyvalue_args import KEYVALUE_ARGS
from .kv_lines import KV_LINES
from .protocol import DialectRow
from .python_calls import PYTHON_CALLS
from .xml_elements import XML_ELEMENTS
from .xml_params import XML_PARAMS

DIALECTS: dict[type, DialectRow] = {
    row.spec: row
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
