"""Reports hold text that can be written: lone surrogates become ``\\udXXX`` escapes.

A lone surrogate reaches a finding through its input: a plan's JSON may escape one
(``"name": "gpu\\ud800"`` is valid JSON syntax), and a file name that is not UTF-8 arrives in
``sys.argv`` with ``surrogateescape`` (``\\udc80``). Such a string cannot be encoded as UTF-8, so
every report format crashed at its last step, or in a hash along the way. When a rendering
cannot be encoded, the JSON report writes each surrogate as a ``\\uXXXX`` escape (read back, the
same code point) and the other formats are rendered again with every string made encodable, the
surrogate shown as the text of its escape. The common case pays for one UTF-8 encode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from gpupool.record import Record, fields, replace

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
T = TypeVar("T")


def text(value: str) -> str:
    """``value`` with every lone surrogate as a backslash escape (a fast path for ASCII)."""
    if value.isascii() or not _SURROGATE.search(value):
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def json_escaped(rendered: str) -> str:
    """A JSON document's lone surrogates as ``\\uXXXX`` escapes (they only occur in strings)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", rendered)


def printable(value: T) -> T:
    """A copy of ``value`` (a Result, or anything in it) whose strings all encode as UTF-8.

    Walks records, dataclasses, named tuples, mappings and sequences, so a field added to a finding
    later is covered too; enums and numbers pass through unchanged.
    """
    return _clean(value)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    t = type(value)
    if t is str:
        return text(value)
    if t is list:
        return [_clean(v) for v in value]
    if t is tuple:
        return tuple(_clean(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return t(*(_clean(v) for v in value))
    if isinstance(value, Record):
        return replace(value, **{n: _clean(getattr(value, n)) for n in fields(value)})
    if hasattr(t, "__dataclass_fields__"):  # dataclasses.is_dataclass of an instance
        import dataclasses

        changes = {f.name: _clean(getattr(value, f.name))
                   for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, Mapping):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value
