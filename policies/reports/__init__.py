"""Report formats: each module renders a :class:`~policies.result.Result` to one string.

``render(result, fmt)`` is the one entry point the CLI uses. Modules are imported when their
format is asked for, so a JSON run never loads rich and a text run never loads the SARIF code.
"""

from __future__ import annotations

import importlib

from policies.result import Result

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final

FORMATS: Final = ("text", "json", "sarif", "junit", "markdown")


def render(
    result: Result,
    fmt: str,
    *,
    color: bool = False,
    width: int | None = None,
    root: Path | None = None,
    tf_root: Path | None = None,
) -> str:
    """Render in ``fmt``; ``color``/``width`` matter to text only, ``root`` and ``tf_root``
    (the Terraform sources' directory) to SARIF only.

    The text returned always encodes as UTF-8: a lone surrogate in a resource name or file name
    is written as its escape (see :mod:`policies.reports.printable`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    try:
        out = _render(result, fmt, color, width, root, tf_root)
        out.encode("utf-8")
        return out
    except UnicodeEncodeError:
        from policies.reports import printable

        if fmt == "json":  # the surrogates sit in JSON strings: write them as \uXXXX escapes
            return printable.json_escaped(_render(result, fmt, color, width, root, tf_root))
        return _render(printable.printable(result), fmt, color, width, root, tf_root)


def _render(result: Result, fmt: str, color: bool, width: int | None, root: Path | None,
            tf_root: Path | None = None) -> str:
    module = importlib.import_module(f"policies.reports.{fmt}")
    if fmt == "text":
        return str(module.render(result, color=color, width=width))
    if fmt == "sarif":
        return str(module.render(result, root=root, tf_root=tf_root))
    return str(module.render(result))
