"""One document of a multi-document YAML stream, without PyYAML: JSON inputs and plan checks
make them too, and importing PyYAML is a check's largest start-up cost after the rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """One document of a multi-document stream: its number, the line it starts on, its value."""

    index: int  # 0-based, in stream order
    line: int  # 1-based line of the document's first node
    value: Any
