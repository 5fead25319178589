"""``json.dumps(doc, indent=2, ensure_ascii=False, ...)``, byte for byte, in a third of the time.

With ``indent`` set, Python 3.11's encoder runs in pure Python: a generator per container that
yields every token apart (a report of 148 findings and 1,000 cost lines is some 15,000 tokens:
6-7 ms, as much as judging a hundred resources). :func:`dumps` writes the same text with one
call per container and the C string encoder for each string. Types are told the way
``json``'s encoder tells them (``str`` before ``int``, ``True`` before ``int``, subclasses by
``isinstance``), the same ``default``, ``allow_nan`` and circular-reference errors, so its
output and its exceptions are ``json.dumps``'s; tests/policies/reports/test_indented.py
compares the two on every report format's documents and on generated ones.
"""

from __future__ import annotations

from json.encoder import INFINITY, encode_basestring  # type: ignore[attr-defined]

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_INDENT = "  "


def dumps(doc: Any, *, default: Callable[[Any], Any] | None = None,
          allow_nan: bool = True) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False, default=default, allow_nan=allow_nan)``."""
    markers: dict[int, Any] = {}
    encode = encode_basestring
    int_text = int.__repr__
    float_repr = float.__repr__

    def floatstr(o: float) -> str:
        if o != o:
            text = "NaN"
        elif o == INFINITY:
            text = "Infinity"
        elif o == -INFINITY:
            text = "-Infinity"
        else:
            return float_repr(o)
        if not allow_nan:
            raise ValueError("Out of range float values are not JSON compliant: " + repr(o))
        return text

    def value(o: Any, level: int) -> str:
        kind = type(o)
        if kind is str:
            return encode(o)  # type: ignore[no-any-return]
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if kind is int:
            return int_text(o)
        if kind is float:
            return floatstr(o)
        if kind is dict:
            return mapping(o, level)
        if kind is list or kind is tuple:
            return array(o, level)
        return other(o, level)

    def other(o: Any, level: int) -> str:
        """Subclasses and the rest, in the order of ``json``'s encoder."""
        if isinstance(o, str):
            return encode(o)  # type: ignore[no-any-return]
        if isinstance(o, int):
            return int_text(o)
        if isinstance(o, float):
            return floatstr(o)
        if isinstance(o, list | tuple):
            return array(o, level)
        if isinstance(o, dict):
            return mapping(o, level)
        if default is None:
            raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")
        marker = id(o)
        if marker in markers:
            raise ValueError("Circular reference detected")
        markers[marker] = o
        out = value(default(o), level)
        del markers[marker]
        return out

    def array(items: list[Any] | tuple[Any, ...], level: int) -> str:
        if not items:
            return "[]"
        marker = id(items)
        if marker in markers:
            raise ValueError("Circular reference detected")
        markers[marker] = items
        inner = level + 1
        newline = "\n" + _INDENT * inner
        out = ("[" + newline + ("," + newline).join([
            encode(v) if type(v) is str else value(v, inner) for v in items])
               + "\n" + _INDENT * level + "]")
        del markers[marker]
        return out

    def mapping(items: dict[Any, Any], level: int) -> str:
        if not items:
            return "{}"
        marker = id(items)
        if marker in markers:
            raise ValueError("Circular reference detected")
        markers[marker] = items
        inner = level + 1
        newline = "\n" + _INDENT * inner
        parts = []
        for k, v in items.items():
            if type(k) is not str:
                k = key(k)
            kind = type(v)  # the common leaves inline: a call per value is most of the cost
            if kind is str:
                parts.append(encode(k) + ": " + encode(v))
            elif v is None:
                parts.append(encode(k) + ": null")
            elif kind is bool:
                parts.append(encode(k) + (": true" if v else ": false"))
            else:
                parts.append(encode(k) + ": " + value(v, inner))
        out = "{" + newline + ("," + newline).join(parts) + "\n" + _INDENT * level + "}"
        del markers[marker]
        return out

    def key(k: Any) -> str:
        if isinstance(k, str):
            return k
        if isinstance(k, float):
            return floatstr(k)
        if k is True:
            return "true"
        if k is False:
            return "false"
        if k is None:
            return "null"
        if isinstance(k, int):
            return int_text(k)
        raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")

    return value(doc, 0)
