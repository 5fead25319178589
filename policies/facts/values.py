"""Reading one input value whatever its source: Terraform's one-element block lists and Pulumi's
objects, strings for booleans, and :data:`UNKNOWN` for values known only after apply.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from policies.model import UNKNOWN, ChangeKind, ResourceChange, _Unknown

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Literal

    Side = Literal["new", "old"]
else:
    Side = str  # "new" or "old" (an annotation: typing.Literal to the type checker)
Maybe = _Unknown  # for annotations: ``str | Maybe`` reads "a string, or unknown until apply"


_GONE = (ChangeKind.DELETE, ChangeKind.READ)


_PLAIN: frozenset[type] = frozenset({str, int, float, bool, list, type(None)})


def is_map(value: object) -> bool:
    """``isinstance(value, Mapping)``, with fast paths for the dicts sources produce and the
    plain values that are never mappings (the ABC check dominates evaluation time on
    100k-resource plans otherwise)."""
    kind = type(value)
    return kind is dict or (kind not in _PLAIN and isinstance(value, Mapping))


def inputs_of(change: ResourceChange, side: Side = "new") -> Mapping[str, Any]:
    """``change.after`` or ``change.before``, read without their property call (asked ~1,200
    times a 1,000-resource check)."""
    return (change.new if side == "new" else change.old) or {}


def blocks(value: Any) -> list[Any] | Maybe:
    """A nested block as a list of elements (Terraform lists, Pulumi objects, absent = [])."""
    kind = type(value)  # the shapes sources produce first: read for every block of every rule
    if kind is list:
        return value  # type: ignore[no-any-return]
    if kind is dict:
        return [value]
    if value is UNKNOWN:
        return UNKNOWN
    if value is None:
        return []
    if is_map(value):
        return [value]
    if isinstance(value, list):
        return value
    return []


def block(value: Any) -> Mapping[str, Any] | Maybe | None:
    """A single nested block: Terraform's one-element list or Pulumi's object; None if absent."""
    kind = type(value)
    if kind is dict:
        return value  # type: ignore[no-any-return]
    if value is None:
        return None
    items = value if kind is list else blocks(value)
    if items is UNKNOWN:
        return UNKNOWN
    if not items:
        return None
    first = items[0]
    if first is UNKNOWN:
        return UNKNOWN
    return first if type(first) is dict or is_map(first) else None


def text(value: Any) -> str | Maybe | None:
    """A string value, UNKNOWN, or None when absent or empty."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str) and value:
        return value
    return None


def flag(value: Any) -> bool | Maybe:
    """AWS booleans arrive as bools or strings (launch template ``encrypted = "true"``)."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return value is True


def number(value: Any) -> float | Maybe | None:
    """A finite number, UNKNOWN, or None (absent, or not a number: ``"inf"``, NaN, 10**400 and
    booleans are not sizes). Plan sources refuse such values as bad input; this is the guard
    for inputs that come another way (the CrossGuard pack, examples)."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        out = float(value)
    except (ValueError, OverflowError):
        return None
    return out if math.isfinite(out) else None
