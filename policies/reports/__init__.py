"""Report formats: each module renders a :class:`~policies.result.Result` to one string.

``render(result, fmt)`` is the one entry point the CLI uses. Modules are imported when their
format is asked for, so a JSON run never loads rich and a text run never loads the SARIF code.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Final

from policies.result import Result

FORMATS: Final = ("text", "json", "sarif", "junit", "markdown")


def render(
    result: Result,
    fmt: str,
    *,
    color: bool = False,
    width: int | None = None,
    root: Path | None = None,
) -> str:
    """Render in ``fmt``; ``color``/``width`` matter to text only, ``root`` to SARIF only."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    module = importlib.import_module(f"policies.reports.{fmt}")
    if fmt == "text":
        return str(module.render(result, color=color, width=width))
    if fmt == "sarif":
        return str(module.render(result, root=root))
    return str(module.render(result))
