"""Report formats: each module renders a :class:`~policies.result.Result` to one string.

``render(result, fmt)`` is the one entry point the CLI uses. Modules are imported when their
format is asked for, so a JSON run never loads rich and a text run never loads the SARIF code.
"""

from __future__ import annotations

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
    return _writable(result, fmt, color, width, root, tf_root)[0]


def render_utf8(
    result: Result,
    fmt: str,
    *,
    color: bool = False,
    width: int | None = None,
    root: Path | None = None,
    tf_root: Path | None = None,
) -> bytes | str:
    """:func:`render`'s text as UTF-8, for writing: the encoding that proves the text writable
    is the one written (a second cost 2.2 M instructions of a 1k-resource check's JSON report).
    The JSON report is written as UTF-8 from the start (:func:`policies.reports.json.render_utf8`).
    """
    if fmt == "json":
        try:
            module = __import__("policies.reports.json", fromlist=["render_utf8"])
            return module.render_utf8(result)  # type: ignore[no-any-return]
        except UnicodeEncodeError:
            pass  # a lone surrogate: as every format, below
    return _writable(result, fmt, color, width, root, tf_root)[1]


def _writable(result: Result, fmt: str, color: bool, width: int | None, root: Path | None,
              tf_root: Path | None) -> tuple[str, bytes | str]:
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    try:
        out = _render(result, fmt, color, width, root, tf_root)
        return out, out.encode("utf-8")
    except UnicodeEncodeError:
        from policies.reports import printable

        if fmt == "json":  # the surrogates sit in JSON strings: write them as \uXXXX escapes
            out = printable.json_escaped(_render(result, fmt, color, width, root, tf_root))
        else:
            out = _render(printable.printable(result), fmt, color, width, root, tf_root)
        try:
            return out, out.encode("utf-8")
        except UnicodeEncodeError:  # (printable leaves no such text) the writer's to degrade
            return out, out


def _render(result: Result, fmt: str, color: bool, width: int | None, root: Path | None,
            tf_root: Path | None = None) -> str:
    # (__import__, not importlib: importlib and warnings are not on a check's path)
    module = __import__(f"policies.reports.{fmt}", fromlist=["render"])
    if fmt == "text":
        return str(module.render(result, color=color, width=width))
    if fmt == "sarif":
        return str(module.render(result, root=root, tf_root=tf_root))
    return str(module.render(result))
