"""``json.dumps(doc, indent=2, ensure_ascii=False, ...).encode()``, byte for byte, a column at a
time: C loops over the values of a column, not a Python step per value.

A report is rows of the same shape (findings, cost lines, policies: every one has the same keys).
For the dicts of one shape at one depth, each key's values form a column. A column of scalars is
written by json's C encoder in one call (one value per line), each distinct string and float
once (a report repeats its resource addresses, sources, ids and prices; the C escaper costs ~30
instructions a character); a column of containers is the same problem one level down. A row is
then its shape's template (keys and indentation written once) filled with its values' texts by
one ``%``. The text is UTF-8 from the start (each distinct string encoded once), so the report
is never encoded whole. The report of a 1k-resource plan: 19.0 M instructions written by
:func:`policies.reports.indented.dumps` and encoded, 12.5 M here (json's C encoder, compact and
encoded: 14.2 M).

Only exact ``str``, ``int``, ``float``, ``bool``, ``None``, ``dict`` (with ``str`` keys), ``list``
and ``tuple`` are written here. Anything else (a subclass, what needs ``default``, a key that is
not a string, a circular or very deep document) and anything the C encoder refuses (NaN with
``allow_nan=False``, a lone surrogate) is left to :func:`~policies.reports.indented.dumps`, whose
text and exceptions are ``json.dumps``'s.
"""

from __future__ import annotations

from itertools import chain, filterfalse, islice, repeat
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]

from policies.reports import indented

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, Final

_SCALARS: Final = frozenset((str, int, float, bool, type(None)))
_REMEMBERED: Final = frozenset((str, float, type(None)))  # never equal across kinds (1 == True)
_SEQUENCES: Final = frozenset((list, tuple))
_MAX_LEVEL: Final = 100  # deeper (or circular): indented.dumps
_MAX_CONTAINERS: Final = 100_000  # more (a circle that branches): indented.dumps


class _Unsupported(Exception):
    """What :func:`dumps_utf8` leaves to :func:`indented.dumps`."""


def dumps_utf8(doc: Any, *, default: Callable[[Any], Any] | None = None,
               allow_nan: bool = True) -> bytes:
    """``json.dumps(doc, indent=2, ensure_ascii=False, default=default,
    allow_nan=allow_nan).encode("utf-8")``: the same bytes, the same exceptions."""
    try:
        return _Writer(allow_nan).text(doc)
    except Exception:  # what json refuses, or unsupported: in json's own words
        return indented.dumps(doc, default=default, allow_nan=allow_nan).encode("utf-8")


class _Writer:
    """One document's writer: the C encoder, the texts of the strings and floats seen."""

    def __init__(self, allow_nan: bool) -> None:
        # markers None: a column holds no containers; item separator "\n": one value a line
        # (no JSON text of a scalar holds a line break)
        self.encode = c_make_encoder(None, None, encode_basestring, None, ": ", "\n", False,
                                     False, allow_nan)
        self.seen: dict[Any, bytes] = {}
        self.containers = 0

    def text(self, doc: Any) -> bytes:
        return self.column([doc], 0)[0]

    def scalars(self, values: Sequence[Any]) -> list[bytes]:
        if not values:
            return []
        return "".join(self.encode(values, 0)).encode()[1:-1].split(b"\n")

    def column(self, values: Sequence[Any], level: int) -> list[bytes]:
        """The text of each value, written at nesting ``level``."""
        kinds = set(map(type, values))
        if kinds <= _REMEMBERED:
            distinct = set(values)
            if 0.0 in distinct and "-0.0" in map(repr, [x for x in values if x == 0.0]):
                return self.scalars(values)  # 0.0 and -0.0 are equal: not from memory
            seen = self.seen
            new = list(filterfalse(seen.__contains__, distinct))
            if new:
                seen.update(zip(new, self.scalars(new), strict=True))
            return list(map(seen.__getitem__, values))
        if kinds <= _SCALARS:
            return self.scalars(values)
        if kinds == {dict}:
            return self.dicts(values, level)
        if kinds <= _SEQUENCES:
            return self.arrays(values, level)
        if not kinds <= _SCALARS | {dict} | _SEQUENCES:
            raise _Unsupported
        out = self.scalars([None if type(v) in (dict, list, tuple) else v for v in values])
        for i, v in enumerate(values):
            if type(v) is dict:
                out[i] = self.dicts([v], level)[0]
            elif type(v) in _SEQUENCES:
                out[i] = self.arrays([v], level)[0]
        return out

    def count(self, containers: int, level: int) -> None:
        self.containers += containers
        if self.containers > _MAX_CONTAINERS or level > _MAX_LEVEL:
            raise _Unsupported

    def dicts(self, rows: Sequence[dict[Any, Any]], level: int) -> list[bytes]:
        """Rows grouped by shape (their keys, in order); each shape's values by column."""
        self.count(len(rows), level)
        if not set(map(type, chain.from_iterable(rows))) <= {str}:
            raise _Unsupported  # (a subclass of str may pass for another key)
        shapes = list(map(tuple, rows))
        groups: dict[tuple[Any, ...], Sequence[dict[Any, Any]]] = {shapes[0]: rows}
        if len(set(shapes)) > 1:
            grouped: dict[tuple[Any, ...], list[dict[Any, Any]]] = {}
            for shape, row in zip(shapes, rows, strict=True):
                grouped.setdefault(shape, []).append(row)
            groups = grouped
        inner = "\n" + "  " * (level + 1)
        close = "\n" + "  " * level + "}"
        texts: dict[tuple[Any, ...], Iterator[bytes]] = {}
        for shape, group in groups.items():
            if not shape:
                texts[shape] = repeat(b"{}")
                continue
            template = ("{" + inner + ("," + inner).join(
                [encode_basestring(k).replace("%", "%%") + ": %s" for k in shape]
            ) + close).encode()
            values = [self.column(c, level + 1) for c in zip(*map(dict.values, group), strict=True)]
            texts[shape] = map(template.__mod__, zip(*values, strict=True))
        if len(groups) == 1:
            return list(islice(texts[shapes[0]], len(rows)))
        return [next(texts[s]) for s in shapes]

    def arrays(self, arrays: Sequence[Sequence[Any]], level: int) -> list[bytes]:
        """Every array's items as one column."""
        self.count(len(arrays), level)
        inner = ("\n" + "  " * (level + 1)).encode()
        comma = b"," + inner
        close = ("\n" + "  " * level + "]").encode()
        items = iter(self.column(list(chain.from_iterable(arrays)), level + 1))
        return [b"[" + inner + comma.join(islice(items, n)) + close if n else b"[]"
                for n in map(len, arrays)]
