# ruff: noqa: RUF001  (the multiplication sign users read in cost notes)
"""The cost effect of a plan's GPU changes: on-demand price per hour before and after.

Groups are priced at their maximum size with the first of their GPU types; what cannot be priced
(unknown sizes or types, no recorded price) says why in the line's note, never a guess.
"""

from __future__ import annotations

import math

from gpupool.catalog import Catalog
from policies.facts import PlanIndex, Side, block, number, override_weights
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, ResourceKind
from policies.result import CostLine
from policies.rules._common import prices_of


class _Price:
    """One side's price: private to this module and never compared, hashed or shown, so a
    plain slotted class (three slot stores), not a Frozen record (three object.__setattr__)."""

    __slots__ = ("per_hour", "gpu", "note")
    per_hour: float | None  # None: cannot be priced
    gpu: bool  # does this side run GPU instances?
    note: str

    def __init__(self, per_hour: float | None, gpu: bool, note: str = "") -> None:
        self.per_hour = per_hour
        self.gpu = gpu
        self.note = note


_WORD = {kind: kind.value for kind in ChangeKind}  # (an enum's value is a Python-level property)
# Members tested per resource, bound once: on Python 3.11 reading a member through its class is
# a Python-level call (EnumType defines __getattr__), ~10x reading a global.
_CREATE, _DELETE = ChangeKind.CREATE, ChangeKind.DELETE
_NOT_PRICED = (ChangeKind.NOOP, ChangeKind.READ)
_INSTANCE = ResourceKind.INSTANCE
_ASG, _NODE_GROUP = ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP
_GROUPS = (_ASG, _NODE_GROUP)
_NOTHING = _Price(0.0, False)
_NO_PRICE = _Price(None, False)  # a type the catalog has no GPU row for: no GPU, no line
_OLD_NOT_KNOWN = _Price(None, False, "old inputs not known")  # (shared: never changed)


def cost_lines(plan: Plan, index: PlanIndex, catalog: Catalog) -> list[CostLine]:
    """On-demand cost before and after for the plan's GPU instances, groups and node groups.

    Groups are priced at their maximum size (the most the plan lets them cost) with the first of
    their GPU types, the one on-demand capacity is launched from; launch templates and
    configurations cost nothing by themselves.
    """
    out = []
    prices = prices_of(catalog)  # the same words on every line of the plan
    for change in plan.changes:
        if change.change in _NOT_PRICED:
            continue
        kind = change.kind
        if kind is _INSTANCE:
            price = _instance_price
        elif kind in _GROUPS:
            price = _group_price
        else:
            continue
        # Whether each side exists, read here (a call less per side): a created resource has
        # no old side, a deleted one no new side; an old side the plan does not show cannot
        # be priced.
        if change.change is _CREATE:
            before = _NOTHING
        elif change.old is None:
            before = _OLD_NOT_KNOWN
        else:
            before = price(change, "old", index, catalog)
        if change.change is _DELETE or change.new is None:
            after = _NOTHING
        else:
            after = price(change, "new", index, catalog)
        if not (before.gpu or after.gpu):
            continue
        old, new = before.per_hour, after.per_hour
        out.append(CostLine(change.address, None if old is None else round(old, 6),
                            None if new is None else round(new, 6),
                            _note(_WORD[change.change], prices, before.note, after.note)))
    return out


def _note(word: str, prices: str, before: str, after: str) -> str:
    """The line's note: the change, the prices' source, then what stops each side being priced
    (said once when both sides share it); built by concatenation, no list per line."""
    text = f"{word}; {prices}"
    if before:
        if before == after:
            return f"{text}; {before}"
        text = f"{text}; before: {before}"
    if after:
        text = f"{text}; after: {after}"
    return text


def _instance_price(change: ResourceChange, side: Side, index: PlanIndex,
                    catalog: Catalog) -> _Price:
    """An instance's price on a side it exists on, with known inputs (see cost_lines)."""
    types = index.own_types(change, side)
    if types.unknown:
        return _Price(None, False, types.unknown)
    if not types.known:  # an instance launched from a launch template of the plan
        link = index.launch_templates(change, side)
        if link.targets:
            types = index.own_types(link.targets[0], side)
    row = catalog.get(types.known[0]) if types.known else None
    if row is None:
        return _NO_PRICE
    if row.price_per_hour is None:
        return _Price(None, True, f"no recorded price for {row.instance_type}")
    return _Price(row.price_per_hour, True)


def _group_price(change: ResourceChange, side: Side, index: PlanIndex,
                 catalog: Catalog) -> _Price:
    """A group's price on a side it exists on, with known inputs (see cost_lines)."""
    inputs = change.after if side == "new" else change.before
    types = index.instance_types(change, side)
    rows = []
    for t in types.known:  # (a loop, not a comprehension over a generator: two calls less)
        row = catalog.get(t)
        if row is not None:
            rows.append(row)
    if not rows:
        return _Price(None, False, types.unknown or "")
    if change.kind is _NODE_GROUP:
        scaling = block(inputs.get("scaling_config"))
        size = UNKNOWN if scaling is UNKNOWN else (
            None if scaling is None else number(scaling.get("max_size")))
    else:
        size = number(inputs.get("max_size"))
    if not isinstance(size, float):
        what = "unknown until apply" if size is UNKNOWN else "not set"
        return _Price(None, True, f"max size {what}")
    weights = override_weights(inputs) if change.kind is _ASG else {}
    row = rows[0]  # on-demand capacity takes the types in priority order: the first one
    if row.price_per_hour is None:
        return _Price(None, True, f"no recorded price for {row.instance_type}")
    instances = math.ceil(size / weights.get(row.instance_type, 1.0))
    total = instances * row.price_per_hour
    note = f"at max size {instances} × {row.instance_type}"
    if len(rows) > 1:
        note += " (the first of its GPU types, on-demand priority order)"
    if types.unknown:
        note += f"; {types.unknown}"
    return _Price(total, True, note)
