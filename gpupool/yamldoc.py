"""One document of a multi-document YAML stream, without PyYAML: JSON inputs and plan checks
make them too, and importing PyYAML is a check's largest start-up cost after the rules."""

from __future__ import annotations

from gpupool.record import Frozen

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class YamlDocument(Frozen):
    """One document of a multi-document stream: its number, the line it starts on, its value."""

    __slots__ = ("index", "line", "value")

    index: int  # 0-based, in stream order
    line: int  # 1-based line of the document's first node
    value: Any

    def __init__(self, index: int, line: int, value: Any) -> None:
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "value", value)
