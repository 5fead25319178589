# ruff: noqa: RUF001, RUF003  (× and → are the signs users read in messages)
"""gpu-capacity-vs-utilisation: no more capacity for a GPU pool that does not use what it has.

Allocation is not utilisation. A pull request that raises a GPU pool's min, desired or max size
(or adds GPU types to it) while the pool ran below a utilisation threshold adds compute debt.
The measurements come from a snapshot written by ``gpupool debt --format json`` (``gpupool
check --utilisation FILE``, or the pack's ``utilisationSnapshot``), matched to the plan's groups
by name. Stack scope: one snapshot is read once per plan.

Reading the snapshot imports no AWS SDK (:mod:`gpupool.debt.snapshot`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any

from pydantic import Field, model_validator

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.debt.snapshot import CACHE, Snapshot, SnapshotPool, parse_snapshot
from gpupool.errors import InputError
from policies.facts import PlanIndex, number, text
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop, usd
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
)

SIZES = ("min_size", "desired_capacity", "max_size")
_AUTONAME = re.compile(r"^(?P<base>.+)-[0-9a-f]{7}$")  # Pulumi autonaming: <name>-<7 hex>


class Params(RuleParams):
    threshold: float = Field(
        default=40, ge=0, le=100,
        description="Utilisation (%) below which raising a pool's capacity is denied.")
    thresholds: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "Per-pool thresholds: glob pattern on the pool's name → %, first match wins "
            "(e.g. {\"prod-training-*\": 60, \"*-batch-*\": 20})."))
    utilisation_snapshot: str | dict[str, Any] | None = Field(
        default=None,
        description=(
            "The measurements: a path to `gpupool debt --format json` output (relative paths "
            "from the working directory; for the pack, the policy pack's directory), or the "
            "document itself. `gpupool check --utilisation FILE` sets it."))
    max_snapshot_age_hours: float = Field(
        default=48, ge=0,
        description=(
            "A snapshot older than this cannot vouch for a pool ('cannot verify'); 0 checks no "
            "age."))

    @model_validator(mode="after")
    def _readable(self) -> Params:
        """A snapshot that cannot be read is bad config: `gpupool check` exits 2 and the
        pack's Configure refuses it, before anything is judged."""
        try:
            load(self)
        except InputError as e:
            raise ValueError("; ".join(e.problems)) from None
        return self


@dataclass(frozen=True, slots=True)
class Raise:
    """What a change adds to a GPU pool."""

    sizes: tuple[tuple[str, float, float], ...]  # (key, old, new) for each raised size
    new_types: tuple[str, ...]
    unknown: str | None = None

    def __bool__(self) -> bool:
        return bool(self.sizes or self.new_types)


def _threshold(params: Params, names: Iterable[str]) -> float:
    for pattern, value in params.thresholds.items():
        if any(fnmatchcase(n, pattern) for n in names):
            return value
    return params.threshold


def load(params: Params) -> Snapshot | None:
    """The configured snapshot (cached by path and mtime); :class:`InputError` if unusable."""
    given = params.utilisation_snapshot
    if given is None or given == "":
        return None
    if isinstance(given, dict):
        return parse_snapshot(given, "utilisationSnapshot (inline)")
    return CACHE.load(os.path.expandvars(os.path.expanduser(given)))


def match(group: ResourceChange, names: Mapping[str, SnapshotPool]) -> SnapshotPool | None:
    """The snapshot's pool for a plan group: its name, old or new, or its Pulumi logical name
    with an autoname suffix (``dev-inference-asg`` ↔ ``dev-inference-asg-1a2b3c4``)."""
    for inputs in (group.after, group.before):
        name = text(inputs.get("name"))
        if isinstance(name, str) and name in names:
            return names[name]
    found = [p for n, p in names.items()
             if (m := _AUTONAME.match(n)) is not None and m["base"] == group.name]
    return found[0] if len(found) == 1 else None


def _types(plan: PlanIndex, group: ResourceChange, side: str, catalog: Catalog
           ) -> tuple[list[InstanceType], str | None]:
    types = plan.instance_types(group, side)  # type: ignore[arg-type]
    rows = [r for r in (catalog.get(t) for t in types.known) if r is not None]
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
    new_rows, unknown = _types(plan, change, "new", catalog)
    if change.old is not None and change.change is not ChangeKind.CREATE:
        old = _sizes(change.before)
        old_rows, _ = _types(plan, change, "old", catalog)
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


def _window(s: Snapshot) -> str:
    hours = s.window.hours
    span = f"{hours / 24:g} days" if hours >= 48 else f"{hours:g} h"
    return f"{span} to {s.window.end.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _taken(s: Snapshot) -> str:
    """When the snapshot was taken: a date, not an age, so that the message (and the generated
    docs that show it) does not change with the clock; the age is in the finding's detail."""
    return f"{s.taken_at().astimezone(UTC):%Y-%m-%d %H:%M} UTC"


class GpuCapacityVsUtilisation(Rule):
    meta = RuleMeta(
        id="gpu-capacity-vs-utilisation",
        title="No more capacity for a GPU pool that does not use what it has",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Allocation is not utilisation: fleets often use 5–30 % of the GPUs they pay for. "
            "A change that raises a GPU pool's min, desired or max size, or adds GPU types to "
            "it, is denied while the pool's measured GPU utilisation is below the threshold "
            "(40 % by default, per pool pattern), with the figures: utilisation, compute debt "
            "in GPU-hours and dollars, and what the raise adds. Measurements come from a "
            "snapshot written by `gpupool debt --format json`, matched to the plan's groups by "
            "name (or Pulumi logical name). A snapshot older than maxSnapshotAgeHours, and a "
            "pool the snapshot could not measure (no CloudWatch agent), are 'cannot verify'. "
            "Without a snapshot, a raise is advised on as 'cannot verify'; a pool the snapshot "
            "does not know (a new pool has no history) likewise: the rule never blocks a first "
            "deployment."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.AUTOSCALING_GROUP}),
        params=Params,
        needs_old_inputs=True,
    )

    examples = ()  # filled in below, after the helper that builds them

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # stack scope: see check

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        params: Params = ctx.params
        plan = ctx.plan if (ctx.plan_index is not None or ctx.index) else PlanIndex(changes)
        groups = [g for g in plan.groups if g.change not in (ChangeKind.DELETE, ChangeKind.READ,
                                                             ChangeKind.NOOP)]
        if not groups:
            return
        try:
            snapshot = load(params)
        except InputError as e:  # fail closed: an unreadable snapshot never passes
            for g in groups:
                yield Finding(g.address, "utilisation snapshot cannot be read: "
                              + "; ".join(e.problems))
            return
        names = snapshot.by_name() if snapshot is not None else {}
        now = datetime.now(UTC)
        for group in groups:
            finding = self._judge(group, plan, ctx.catalog, params, snapshot, names, now)
            if finding is not None:
                yield finding

    def _judge(self, group: ResourceChange, plan: PlanIndex, catalog: Catalog, params: Params,
               snapshot: Snapshot | None, names: Mapping[str, SnapshotPool],
               now: datetime) -> Finding | None:
        measured = match(group, names)
        new_rows, _ = _types(plan, group, "new", catalog)
        if not new_rows and measured is None:
            return None  # not a GPU group (or one the rule cannot tell and nothing measured)
        gpu = new_rows[0] if new_rows else catalog.get(measured.instance_type if measured
                                                       else "")
        what = raised(group, plan, catalog, measured)
        if what is None:  # a new pool without measurements: nothing to hold it against
            if group.change is ChangeKind.CREATE and snapshot is not None:
                # said only when a snapshot was given: without one, every first deployment
                # would carry a note about a check nobody asked for
                return Finding(group.address, cannot_verify(
                    f"the snapshot {snapshot.path} does not know this pool; a new GPU pool has "
                    "no utilisation history, so its capacity is not judged (advisory)"),
                    advisory_only=True)
            return None
        if not what:
            return None
        adds = describe(group, what, gpu)
        if snapshot is None:
            return Finding(group.address, cannot_verify(
                f"{adds}, and no utilisation snapshot is configured (gpupool check "
                "--utilisation FILE, or the pack's utilisationSnapshot), so the pool's use "
                "cannot be held against it (advisory)"), advisory_only=True)
        if measured is None:
            return Finding(group.address, cannot_verify(
                f"{adds}; the snapshot {snapshot.path} has no measurements for this pool (a "
                "new pool has no history) (advisory)"), advisory_only=True)
        if params.max_snapshot_age_hours and (
                snapshot.age(now).total_seconds() > params.max_snapshot_age_hours * 3600):
            last = ("" if measured.utilisation is None
                    else f"; it measured {measured.utilisation:.1%} then")
            return Finding(group.address, cannot_verify(
                f"{adds} on GPU pool {measured.pool}, but the utilisation snapshot "
                f"{snapshot.path} was taken {_taken(snapshot)}, more than maxSnapshotAgeHours "
                f"({params.max_snapshot_age_hours:g}) ago{last}; refresh it with "
                "gpupool debt --format json"), unknown=True,
                detail={"snapshot_age_hours": round(snapshot.age(now).total_seconds() / 3600, 1)})
        if measured.utilisation is None:
            why = ("a Kubernetes node group, whose GPUs' use is in Prometheus (DCGM), not "
                   "CloudWatch" if measured.role == "kubernetes-nodes" else
                   "no GPU utilisation metric, the CloudWatch agent is not publishing")
            return Finding(group.address, cannot_verify(
                f"{adds} on GPU pool {measured.pool}, which the snapshot could not measure "
                f"({measured.status}: {why})"), unknown=True)
        if measured.impossible_readings:
            return Finding(group.address, cannot_verify(
                f"{adds} on GPU pool {measured.pool}, whose readings include "
                f"{measured.impossible_readings} impossible value(s) (utilisation outside "
                "0-100 %, or negative sizes): its publisher is broken, so its "
                f"{measured.utilisation:.1%} is not a measurement to judge by"), unknown=True)
        limit = _threshold(params, [measured.pool, group.name,
                                    *(n for n in [text(group.after.get("name"))]
                                      if isinstance(n, str))])
        if measured.utilisation * 100 >= limit:
            return None
        debt = measured.debt_gpu_hours
        debt_text = "" if debt is None else (
            f": {debt:,.1f} GPU-hours allocated and not used"
            + ("" if measured.debt_usd is None else f" (${measured.debt_usd:,.2f})")
            + (f" of {measured.allocated_gpu_hours:,.1f}"
               if measured.allocated_gpu_hours is not None else ""))
        return Finding(
            group.address,
            f"{adds} on GPU pool {measured.pool}, which ran at {measured.utilisation:.1%} GPU "
            f"utilisation over {_window(snapshot)} (threshold {limit:g} %){debt_text}; use "
            "what it has first (gpupool debt shows how), or waive with an owner and a reason",
            detail={"pool": measured.pool, "utilisation": measured.utilisation,
                    "threshold_pct": limit, "debt_gpu_hours": debt, "debt_usd": measured.debt_usd,
                    "raised": [list(s) for s in what.sizes], "new_types": list(what.new_types)},
        )


# -- examples (the docs show them and the tests run them) -----------------------------------

def _snapshot(pools: list[dict[str, Any]], generated: str = "2026-11-30T06:00:00Z"
              ) -> dict[str, Any]:
    return {"generated_at": generated,
            "window": {"start": "2026-11-23T06:00:00Z", "end": "2026-11-30T06:00:00Z",
                       "period_s": 3600},
            "pools": pools}


def _pool(name: str, utilisation: float | None, *, debt: float | None = None,
          usd_: float | None = None, status: str = "measured", impossible: int = 0
          ) -> dict[str, Any]:
    return {"pool": name, "team": "research", "instance_type": "g4dn.xlarge",
            "gpus_per_instance": 1, "status": status, "min_size": 2, "desired_capacity": 2,
            "max_size": 4, "allocated_gpu_hours": 336.0, "utilisation": utilisation,
            "debt_gpu_hours": debt, "debt_usd": usd_, "impossible_readings": impossible}


def _group(name: str, old_max: int | None, new_max: int, *, min_size: int = 2,
           itype: str = "g4dn.xlarge") -> dict[str, Any]:
    new = {"name": name, "minSize": min_size, "maxSize": new_max, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceType": itype}]}}}
    out: dict[str, Any] = {"type": "aws:autoscaling/group:Group", "name": "pool", "new": new}
    if old_max is not None:
        out["old"] = {**new, "maxSize": old_max, "mixedInstancesPolicy": {
            "launchTemplate": {"overrides": [{"instanceType": "g4dn.xlarge"}]}}}
    return out


_FRESH = {"maxSnapshotAgeHours": 0}  # the examples' snapshot has a fixed date: age not checked
_IDLE = _snapshot([_pool("gpu-inference", 0.12, debt=295.7, usd_=155.54)])
_BUSY = _snapshot([_pool("gpu-inference", 0.71, debt=97.4, usd_=51.23)])

GpuCapacityVsUtilisation.examples = (
    Example(
        title="Raising the max of a pool that runs at 12 %",
        allowed=False,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
        message_contains=["raises maxSize 4 → 8 (+4 GPUs of capacity, up to +$2.104/h)",
                          "ran at 12.0% GPU utilisation over 7 days",
                          "295.7 GPU-hours allocated and not used ($155.54)"],
    ),
    Example(
        title="Adding a GPU type to an idle pool (Terraform)",
        allowed=False,
        resources=[{"type": "aws_autoscaling_group", "name": "pool",
                    "address": "aws_autoscaling_group.pool",
                    "old": {"name": "gpu-inference", "min_size": 2, "max_size": 4,
                            "mixed_instances_policy": [{"launch_template": [{"override": [
                                {"instance_type": "g4dn.xlarge"}]}]}]},
                    "new": {"name": "gpu-inference", "min_size": 2, "max_size": 4,
                            "mixed_instances_policy": [{"launch_template": [{"override": [
                                {"instance_type": "g4dn.xlarge"},
                                {"instance_type": "g6.xlarge"}]}]}]}}],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
        message_contains=["adds GPU type g6.xlarge", "12.0% GPU utilisation"],
    ),
    Example(
        title="Raising the max of a busy pool",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _BUSY},
    ),
    Example(
        title="A per-pool threshold: batch pools may run at 10 %",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE, "thresholds": {"gpu-*": 10}},
    ),
    Example(
        title="Lowering the max of an idle pool",
        allowed=True,
        resources=[_group("gpu-inference", 8, 4)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
    ),
    Example(
        title="No snapshot: advisory 'cannot verify', never a block",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
    ),
    Example(
        title="A new pool (Pulumi autonames it at apply) has no history: advisory",
        allowed=True,
        resources=[_group("gpu-training", None, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
    ),
    Example(
        title="A stale snapshot cannot vouch for the pool",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={"maxSnapshotAgeHours": 48,
                "utilisationSnapshot": _snapshot([_pool("gpu-inference", 0.71)],
                                                 generated="2026-01-05T00:00:00Z")},
        message_contains=["cannot verify", "was taken 2026-01-05 00:00 UTC, more than "
                          "maxSnapshotAgeHours (48) ago",
                          "refresh it with gpupool debt"],
    ),
    Example(
        title="A pool the snapshot could not measure (no CloudWatch agent)",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _snapshot(
            [_pool("gpu-inference", None, status="not measured")])},
        message_contains=["cannot verify", "which the snapshot could not measure"],
    ),
    Example(
        title="A pool whose agent reported impossible values (150 % utilisation)",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _snapshot(
            [_pool("gpu-inference", 0.71, status="partial", impossible=3)])},
        message_contains=["cannot verify", "3 impossible value(s)"],
    ),
)

RULE = GpuCapacityVsUtilisation()
