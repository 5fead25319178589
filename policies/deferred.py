"""ResourceChanges whose inputs are converted on first read, for the kinds no reader may ask for.

Converting a resource's inputs (Pulumi's camelCase-and-markers walk, Terraform's
``after_unknown`` merge) is most of reading a plan, and rules read only the kinds they name
(``kinds`` in :mod:`policies.rules._index`): a 1,000-resource preview's IAM roles, buckets, log
groups, and its subnets and security groups when no launcher links to them, are never read
(issue 16 item 25). A reader builds such a change with :func:`pending_change`: its ``new``
and/or ``old`` slots are left unset and the raw value and converter wait in ``_pending``. The
first read of an unset slot raises AttributeError inside Python, which runs
:meth:`_PendingChange.__getattr__`: it converts both sides, stores them in their slots and
turns the instance into a plain :class:`ResourceChange` (same slots, so the layouts agree),
whose reads are plain slot reads again. Only the subclass has a ``__getattr__``: on Python
3.11 a class with one gets no specialised attribute reads, which every rule's ``change.kind``
would pay.

Only conversions that cannot fail are deferred: the readers check the raw shapes first, and
keep eager every kind whose converted inputs they validate (:data:`fields.TYPED`). Equality,
hashing, repr, copy and pickle convert first, so a pending change behaves as the eager one.
The conversion runs with the recursion limit raised by :data:`_HEADROOM`: a rule reads deeper
in the stack than the reader did, and inputs nested as deep as ``json`` accepts must convert
there too (the reader converts them at its depth today).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from policies.model import ResourceChange, _ChangeFields

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

    Convert = Callable[[Any], Mapping[str, Any]]

_make: Final = ResourceChange.__new__
_store: Final = object.__setattr__
_HEADROOM: Final = 200  # frames: a rule's stack above the reader's, with room to spare


class _PendingChange(ResourceChange):
    """A :class:`ResourceChange` whose unset ``new``/``old`` are converted on first read."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name == "new" or name == "old":  # an unset slot: convert, then read it plainly
            convert_pending(self)
            return getattr(self, name)
        raise AttributeError(f"'ResourceChange' object has no attribute {name!r}")

    def __eq__(self, other: object) -> bool:
        convert_pending(self)
        return self == other

    def __hash__(self) -> int:
        convert_pending(self)
        return hash(self)

    def __repr__(self) -> str:
        convert_pending(self)
        return repr(self)

    def __reduce__(self) -> tuple[Any, ...]:
        convert_pending(self)
        return self.__reduce__()


def convert_pending(change: ResourceChange) -> None:
    """Fill a pending change's unset sides and make it a plain :class:`ResourceChange`."""
    if type(change) is not _PendingChange:
        return
    convert, new_raw, old_raw = change._pending  # type: ignore[attr-defined]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + _HEADROOM)
    try:
        new = None if new_raw is None else convert(new_raw)
        old = None if old_raw is None else convert(old_raw)
    finally:
        sys.setrecursionlimit(limit)
    if new_raw is not None:
        _store(change, "new", new)
    if old_raw is not None:
        _store(change, "old", old)
    _store(change, "_pending", None)
    _store(change, "__class__", ResourceChange)


def pending_change(convert: Convert, new_raw: Any, old_raw: Any, *fields: Any) -> ResourceChange:
    """``ResourceChange(*fields)`` (the constructor's arguments: its fields are listed there
    only), converting ``new`` from ``new_raw`` and ``old`` from ``old_raw`` on first read; a
    side whose raw value is None is ``new`` / ``old`` as given."""
    self = _make(_ChangeFields, *fields)  # ResourceChange's constructor, on the assignable class
    if new_raw is not None:
        del self.new
    if old_raw is not None:
        del self.old
    self._pending = (convert, new_raw, old_raw)
    self.__class__ = _PendingChange  # type: ignore[assignment]  (same slots: see _ChangeFields)
    return self  # type: ignore[return-value]
