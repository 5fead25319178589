"""What a change adds to an AWS GPU pool (autoscaling group), for gpu-capacity-vs-utilisation:
its raised sizes and added GPU types, matched to the snapshot's pool by name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.record import Frozen
from policies.facts import PlanIndex, number, text
from policies.model import UNKNOWN, ChangeKind, ResourceChange
from policies.rules._common import prop, usd

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # pydantic models, read only when a snapshot is given
    from typing import Any

    from gpupool.debt.snapshot import SnapshotPool

SIZES = ("min_size", "desired_capacity", "max_size")
_CREATE = ChangeKind.CREATE  # (an enum member read through its class costs a call on 3.11)


@cache
def _autoname() -> re.Pattern[str]:
    """Pulumi autonaming, ``<name>-<7 hex>``: compiled on first use (only a snapshot asks), as
    compiling a pattern costs a check ~0.5 M instructions."""
    return re.compile(r"^(?P<base>.+)-[0-9a-f]{7}$")


class Raise(Frozen):
    """What a change adds to a GPU pool."""

    __slots__ = ("sizes", "new_types", "unknown")

    sizes: tuple[tuple[str, float, float], ...]  # (key, old, new) for each raised size
    new_types: tuple[str, ...]
    unknown: str | None

    def __init__(
        self,
        sizes: tuple[tuple[str, float, float], ...],
        new_types: tuple[str, ...],
        unknown: str | None = None,
    ) -> None:
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "new_types", new_types)
        object.__setattr__(self, "unknown", unknown)

    def __bool__(self) -> bool:
        return bool(self.sizes or self.new_types)


def match(group: ResourceChange, names: Mapping[str, SnapshotPool]) -> SnapshotPool | None:
    """The snapshot's pool for a plan group: its name, old or new, or its Pulumi logical name
    with an autoname suffix (``dev-inference-asg`` ↔ ``dev-inference-asg-1a2b3c4``)."""
    for inputs in (group.after, group.before):
        name = text(inputs.get("name"))
        if isinstance(name, str) and name in names:
            return names[name]
    found = [p for n, p in names.items()
             if (m := _autoname().match(n)) is not None and m["base"] == group.name]
    return found[0] if len(found) == 1 else None


def gpu_types(plan: PlanIndex, group: ResourceChange, side: str, catalog: Catalog
           ) -> tuple[list[InstanceType], str | None]:
    types = plan.instance_types(group, side)  # type: ignore[arg-type]
    rows = []
    for t in types.known:  # (a loop, not a comprehension over a generator: two calls less)
        row = catalog.get(t)
        if row is not None:
            rows.append(row)
    return rows, types.unknown


def _sizes(inputs: Mapping[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in SIZES:
        value = number(inputs.get(key))
        out[key] = None if value is UNKNOWN or value is None else float(value)  # type: ignore[arg-type]
    return out


def raised(change: ResourceChange, plan: PlanIndex, catalog: Catalog,
           measured: SnapshotPool | None) -> Raise | None:
    """What the change adds, compared with the plan's old inputs or, when the plan has none,
    the sizes the snapshot recorded; None when there is nothing to compare with (a new pool)."""
    new = _sizes(change.after)
    new_rows, unknown = gpu_types(plan, change, "new", catalog)
    if change.old is not None and change.change is not _CREATE:
        old = _sizes(change.before)
        old_rows, _ = gpu_types(plan, change, "old", catalog)
        old_types = {r.instance_type for r in old_rows}
    elif measured is not None:
        old = {"min_size": _f(measured.min_size), "desired_capacity": _f(measured.desired_capacity),
               "max_size": _f(measured.max_size)}
        old_types = {measured.instance_type}
    else:
        return None
    sizes = tuple((k, o, n) for k in SIZES
                  if (o := old[k]) is not None and (n := new[k]) is not None and n > o)
    # Adding GPU types widens what the pool can launch; swapping one type for another (the
    # same count of types) is a type change, which the sizing rules judge, not more capacity.
    added = tuple(r.instance_type for r in new_rows if r.instance_type not in old_types)
    grew = len({r.instance_type for r in new_rows}) > len(old_types)
    return Raise(sizes, added if grew else (), unknown)


def _f(value: int | None) -> float | None:
    return None if value is None else float(value)


def _count(v: float) -> str:
    return f"{v:g}"


def describe(change: ResourceChange, r: Raise, gpu: InstanceType | None) -> str:
    """"raises maxSize 4 → 8 (+4 GPUs of capacity, up to +$2.104/h)"."""
    parts = []
    g = gpu.gpu_count if gpu is not None else None
    price = gpu.price_per_hour if gpu is not None else None
    for key, old, new in r.sizes:
        what = f"{prop(change.type, key)} {_count(old)} → {_count(new)}"
        if g is not None:
            gpus = (new - old) * g
            if key == "max_size":
                cost = "" if price is None else f", up to +{usd((new - old) * price)}/h"
                what += f" (+{_count(gpus)} GPUs of capacity{cost})"
            else:
                monthly = "" if price is None else (
                    f", +${(new - old) * price * HOURS_PER_MONTH:,.0f}/month")
                what += f" (+{_count(gpus)} GPUs allocated{monthly})"
        parts.append(what)
    if r.new_types:
        parts.append(f"adds GPU type {', '.join(r.new_types)}")
    return "raises " + "; ".join(parts)

