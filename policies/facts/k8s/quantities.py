"""Resource quantities and which resource names are accelerators.

A GPU quantity that is not a number is kept as text (:class:`Quantity` says why), never read as
zero; one unknown until apply stays :data:`~policies.model.UNKNOWN`.
"""

from __future__ import annotations

import re

from gpupool.record import Frozen
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

# Extended resources that are whole GPUs (time-slicing's renamed shared GPU included): what the
# per-container, limits and quota rules count.
GPU_RESOURCES: Final = ("nvidia.com/gpu", "nvidia.com/gpu.shared", "amd.com/gpu")
# Prefixes of accelerator resource names beyond those (MIG slices): an object no reader
# understands that asks for one of these is not a pass.
_ACCELERATOR_PREFIXES: Final = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu")

_QUANTITY: Final = re.compile(r"^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:e([+-]?[0-9]+))?"
                              r"(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_SUFFIX: Final = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
                  "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def is_accelerator(resource: str) -> bool:
    """``nvidia.com/gpu``, ``nvidia.com/gpu.shared``, ``nvidia.com/mig-1g.5gb``, ``amd.com/gpu``."""
    return resource.startswith(_ACCELERATOR_PREFIXES)


class Quantity(Frozen):
    """A resource quantity: its value, or why it has none (unknown until apply, not a number)."""

    __slots__ = ("raw", "value")

    raw: Any
    value: float | None  # None when unknown or unreadable

    def __init__(self, raw: Any, value: float | None) -> None:
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "value", value)

    @property
    def unknown(self) -> bool:
        return self.raw is UNKNOWN

    @property
    def whole(self) -> bool:
        return self.value is not None and self.value >= 0 and float(self.value).is_integer()

    def shown(self) -> str:
        if self.unknown:
            return "unknown until apply"
        if self.whole:
            return str(int(self.value or 0))
        return repr(self.raw) if isinstance(self.raw, str) else str(self.raw)


def quantity(raw: Any) -> Quantity:
    """``1``, ``"2"``, ``"500m"``, ``"1e3"`` → a number; anything else keeps ``value=None``."""
    if raw is UNKNOWN or isinstance(raw, bool):
        return Quantity(raw, None)
    if isinstance(raw, int | float):
        return Quantity(raw, float(raw))
    if isinstance(raw, str):
        m = _QUANTITY.match(raw.strip())
        if m:
            value = float(m.group(1)) * 10 ** int(m.group(2) or 0) * _SUFFIX[m.group(3) or ""]
            return Quantity(raw, value)
    return Quantity(raw, None)


def whole_number(value: Any, default: int | None) -> int | None:
    """A count (replicas, sizes): the default when absent, None when not a whole number."""
    if value is None:
        return default
    q = quantity(value)
    return int(q.value) if q.whole and q.value is not None else None
