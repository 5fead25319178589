"""The Kubernetes CEL functions the admission policies use, for cel-python.

cel-python implements CEL's standard definitions; Kubernetes adds libraries the API server
compiles every policy with. The policies use only these, implemented here to the Kubernetes
semantics (k8s.io/apiserver/pkg/cel/library/quantity.go; cel-go's ext strings):

- quantity: ``isQuantity(string)``, ``quantity(string)``, and on a quantity ``isInteger()``,
  ``asInteger()``, ``sign()``, ``compareTo(q)``, ``isGreaterThan(q)``, ``isLessThan(q)``,
  ``asApproximateFloat()``. Parsing follows resource.ParseQuantity's grammar (a signed
  decimal number, then a binary-SI suffix Ki…Ei, a decimal-SI suffix m, k, M…E, or a decimal
  exponent e/E±n); values are exact fractions, as the API server's inf.Dec are.
- strings: ``<string>.split(separator)``, ``<list>.join(separator)``.
- lists: ``<list>.indexOf(value)`` (the first index of an equal element, -1 when none),
  ``<list>.sum()`` (int, uint, double or duration elements, added to the type's zero in list
  order; int overflow is an error) and ``<list>.max()`` (the first greatest element; an empty
  list is an error), as k8s.io/apiserver/pkg/cel/library/lists.go. cel-go picks a sum's zero
  from the list's static type (``0.0`` for a list of doubles); this shim has no static types
  and gives an empty list int ``0``, as cel-go does for ``[]``: the policies sum
  ``[0.0] + list``, which is the same value in both.
- ``duration(string)``: CEL's own, replaced here by Go's ``time.ParseDuration`` grammar, which
  cel-go (the API server's CEL) uses: cel-python refuses ``0`` and ``µs`` and takes a day
  unit (``d``) Go does not.

Anything else (lists' ``flatten``, ``cel.bind``, optional types) is avoided in the generated
CEL rather than implemented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from fractions import Fraction
from typing import Any, Final

from celpy import celtypes

_GRAMMAR: Final = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                             r"(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|m|k|M|G|T|P|E)?$")
_BINARY: Final = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL: Final = {"m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_INT64: Final = 2**63


@dataclass(frozen=True, slots=True)
class Quantity:
    """A Kubernetes quantity's exact value."""

    value: Fraction


def parse(text: str) -> Quantity | None:
    m = _GRAMMAR.match(text)
    if m is None:
        return None
    sign, number, suffix = m.group(1), m.group(2), m.group(3) or ""
    value = Fraction(number if not number.endswith(".") else number[:-1] or "0")
    if suffix in _BINARY:
        value *= 1024 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
    else:
        value *= Fraction(10) ** int(suffix[1:])
    return Quantity(-value if sign == "-" else value)


def _q(text: Any) -> Quantity:
    found = parse(str(text))
    if found is None:
        raise ValueError(f"quantities must match the regular expression: {text!r}")
    return found


def _cmp(a: Quantity, b: Quantity) -> int:
    return (a.value > b.value) - (a.value < b.value)


def _as_integer(q: Quantity) -> celtypes.IntType:
    if q.value.denominator != 1 or not -_INT64 <= q.value.numerator < _INT64:
        raise ValueError("cannot convert value to integer")
    return celtypes.IntType(q.value.numerator)


_DURATION: Final = re.compile(
    r"^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+$")
_PART: Final = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_NANOS: Final = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9,
                 "m": 60 * 10**9, "h": 3600 * 10**9}


def go_duration(text: Any) -> celtypes.DurationType:
    """``time.ParseDuration``: ``0``, or signed runs of a decimal number and a unit."""
    s = str(text)
    if s in ("0", "+0", "-0"):
        return celtypes.DurationType(timedelta(0))
    if not _DURATION.match(s):
        raise ValueError(f"time: invalid duration {s!r}")
    nanos = sum((Fraction(n if not n.endswith(".") else n[:-1]) * _NANOS[u]
                 for n, u in _PART.findall(s)), Fraction(0))
    nanos = -nanos if s.startswith("-") else nanos
    return celtypes.DurationType(timedelta(microseconds=float(nanos / 1000)))


def _index_of(items: Any, value: Any) -> celtypes.IntType:
    for i, item in enumerate(items):
        if item == value:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


_SUMMABLE: Final = {celtypes.IntType: celtypes.IntType(0), celtypes.UintType: celtypes.UintType(0),
                    celtypes.DoubleType: celtypes.DoubleType(0.0),
                    celtypes.DurationType: celtypes.DurationType(timedelta(0))}


def _one_type(items: Any, allowed: Any) -> list[Any]:
    """The list's elements, all of one type of ``allowed`` (a type-checked ``list(T)``)."""
    values = list(items)
    kind = type(values[0]) if values else None
    if values and (kind not in allowed or any(type(v) is not kind for v in values)):
        raise TypeError(f"no such overload: {kind.__name__ if kind else '?'} list")
    return values


def _sum(items: Any) -> Any:
    """``<list>.sum()``: the elements added in order to the zero of their type."""
    values = _one_type(items, _SUMMABLE)
    if not values:
        return celtypes.IntType(0)
    kind = type(values[0])
    acc = _SUMMABLE[kind]
    for v in values:
        acc = kind(acc + v)  # IntType and UintType raise on overflow, as cel-go errs
    return acc


_COMPARABLE: Final = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType,
                      celtypes.BoolType, celtypes.DurationType, celtypes.TimestampType,
                      celtypes.StringType, celtypes.BytesType)


def _max(items: Any) -> Any:
    """``<list>.max()``: the first greatest element; an empty list is an error."""
    values = _one_type(items, _COMPARABLE)
    if not values:
        raise ValueError("max called on empty list")
    out = values[0]
    for v in values[1:]:
        if out < v:
            out = v
    return out


FUNCTIONS: Final[dict[str, Any]] = {
    "isQuantity": lambda s: celtypes.BoolType(parse(str(s)) is not None),
    "quantity": _q,
    "isInteger": lambda q: celtypes.BoolType(q.value.denominator == 1
                                             and -_INT64 <= q.value.numerator < _INT64),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: celtypes.DoubleType(float(q.value)),
    "sign": lambda q: celtypes.IntType((q.value > 0) - (q.value < 0)),
    "compareTo": lambda a, b: celtypes.IntType(_cmp(a, b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_cmp(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_cmp(a, b) < 0),
    "split": lambda s, sep: celtypes.ListType([celtypes.StringType(p)
                                               for p in str(s).split(str(sep))]),
    "join": lambda items, sep="": celtypes.StringType(str(sep).join(str(i) for i in items)),
    "indexOf": _index_of,
    "sum": _sum,
    "max": _max,
    "duration": go_duration,
}
