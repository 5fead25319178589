"""``--format json``: :meth:`Result.to_json`, the shape DESIGN.md fixes, laid out for people.

A report of up to :data:`INDENT_MAX_ITEMS` findings, errors and cost lines is indented by two
spaces throughout. A larger one is written one item per line: each top-level key on its own
line, and each finding, error, cost line and policy row on one line of its own. Python's JSON
encoder indents in pure Python, three times slower than its C encoder writes compact JSON
(1.55 s against 0.47 s for 59k findings); one item per line keeps the C encoder, and a large
report stays readable, greppable and diffable by finding. Either way it is the same JSON
document (same keys, same values).

``default=str`` keeps a rule's free-form ``detail`` (an enum, an UNKNOWN marker) from turning a
finished evaluation into a crash at the last step; ``allow_nan=False``: NaN and Infinity are not
JSON.
"""

from __future__ import annotations

import json

from policies.reports import columns, indented
from policies.result import Result

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

INDENT_MAX_ITEMS: Final = 1000
_ITEM_LISTS: Final = ("violations", "errors", "cost")


def indents(result: Result) -> bool:
    """Is this report small enough to be indented throughout?"""
    return len(result.violations) + len(result.errors) + len(result.cost) <= INDENT_MAX_ITEMS


def render(result: Result) -> str:
    doc = result.to_json()
    if indents(result):
        return indented.dumps(doc, default=str, allow_nan=False) + "\n"
    return line_per_item(doc)


def render_utf8(result: Result) -> bytes:
    """``render(result).encode("utf-8")`` (UnicodeEncodeError on a lone surrogate), written as
    UTF-8 from the start: see :mod:`policies.reports.columns`."""
    doc = result.to_json()
    if indents(result):
        return columns.dumps_utf8(doc, default=str, allow_nan=False) + b"\n"
    return line_per_item(doc).encode("utf-8")


def line_per_item(doc: dict[str, Any]) -> str:
    """``doc`` with each top-level key on a line, each item of a top-level array on its own."""
    encode = json.JSONEncoder(ensure_ascii=False, default=str, allow_nan=False).encode
    parts = []
    for key, value in doc.items():
        if type(value) is list and value:
            items = ",\n    ".join(map(encode, value))
            parts.append(f"  {encode(key)}: [\n    {items}\n  ]")
        else:
            parts.append(f"  {encode(key)}: {encode(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
