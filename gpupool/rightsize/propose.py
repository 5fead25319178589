# ruff: noqa: RUF002, RUF003  (× is the multiplication sign users read)
"""Match the kit's measured pools to their stack entries and propose new sizes.

A pool is the kit's when its group carries ``managed-by: gpupool``; its stack entry is the one
whose ``gpupool:pools[]`` or ``gpupool:remoteGpu[]`` name is its ``gpupool:pool`` tag, in the
stack whose ``gpupool:environment`` is its ``environment`` tag (and region, when the report
says). Then, for a pool measured over the whole window for at least the minimum span:

- ``minSize`` down to the floor (the need's high percentile plus headroom; at least 1 when it
  was at least 1: target tracking cannot scale out from zero);
- ``desiredCapacity`` (what ``pulumi up`` resets the group to) down to the same floor;
- ``maxSize`` to 1.25 × the peak in service when that peak stayed under half the maximum
  (never below the new minimum, the floor, the desired capacity or the on-demand base);
- ``targetGpuUtilisation`` up to 70 % when it was lower.

Sizes only go down (targets only up): a pool that needs more is advice for people. Kubernetes
and on-premises pools are :mod:`gpupool.rightsize.kubernetes`'s. Nothing is
proposed across teams: a pool whose team tag is not the team its stack entry charges is left
alone, and pools are never merged. Every pool left alone says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.config.models import StackConfig
from gpupool.debt.model import PoolFigures
from gpupool.debt.window import Window
from gpupool.rightsize.evidence import DEFAULT_TARGET, Evidence, gather

MAX_SHARE = 0.5  # a peak under this share of the maximum → lower max
MAX_HEADROOM = 1.25  # new max = peak × this


@dataclass(frozen=True, slots=True)
class Change:
    key: str  # minSize | maxSize | desiredCapacity | targetGpuUtilisation
    old: float
    new: float


@dataclass(frozen=True)
class StackEntry:
    stack: str  # the stack's name (Pulumi.<stack>.yaml)
    path: str  # the stack file
    config: StackConfig
    flat: Mapping[str, Any] = field(default_factory=dict)  # the file's config, as written


@dataclass
class Proposal:
    pool: str
    stack: str
    path: str
    section: str  # gpupool:pools | gpupool:remoteGpu
    index: int
    team: str
    changes: list[Change]
    evidence: Evidence
    gpu_hours_per_month: float
    usd_per_month: float | None

    def key_path(self, change: Change) -> tuple[str | int, ...]:
        return ("config", self.section, self.index, change.key)


@dataclass
class Outcome:
    proposals: list[Proposal] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (pool, why)
    # the stack entries a measured group was matched to: (stack file, section, index)
    matched: set[tuple[str, str, int]] = field(default_factory=set)


def unmatched(stacks: Sequence[StackEntry], matched: set[tuple[str, str, int]]
              ) -> list[tuple[StackEntry, str, Any]]:
    """The stacks' AWS pools and tiers no group of the report was matched to (in order)."""
    out = []
    for s in stacks:
        for section, items in (("gpupool:pools", s.config.pools),
                               ("gpupool:remoteGpu", s.config.remote_gpu)):
            out += [(s, section, item) for i, item in enumerate(items)
                    if (s.path, section, i) not in matched]
    return out


def _entry(stacks: Sequence[StackEntry], tags: dict[str, str], region: str | None
           ) -> tuple[StackEntry, str, int, Any] | str:
    env, name = tags.get("environment"), tags.get("gpupool:pool")
    if not env or not name:
        return "no environment or gpupool:pool tag"
    found = []
    for s in stacks:
        c = s.config
        if c.environment != env or (region and c.region != region):
            continue
        for section, items in (("gpupool:pools", c.pools), ("gpupool:remoteGpu", c.remote_gpu)):
            found += [(s, section, i, item) for i, item in enumerate(items) if item.name == name]
    if not found:
        return f"no stack of environment {env!r} has a pool or tier {name!r}"
    if len(found) > 1:
        return f"pool {name!r} of environment {env!r} is in {len(found)} stacks: ambiguous"
    return found[0]


def propose(figures: Sequence[PoolFigures], window: Window, stacks: Sequence[StackEntry], *,
            pct: float, headroom: float, min_span_hours: float) -> Outcome:
    out = Outcome()
    seen: dict[tuple[str, int, str], str] = {}
    for f in figures:
        if f.platform != "aws":
            continue  # Kubernetes and on-premises pools: gpupool.rightsize.kubernetes
        tags = dict(getattr(f.pool, "tags", {}) or {})
        if tags.get("managed-by") != "gpupool":
            out.skipped.append((f.name, "not the kit's (no managed-by: gpupool tag)"))
            continue
        found = _entry(stacks, tags, getattr(f.pool, "region", None))
        if isinstance(found, str):
            out.skipped.append((f.name, found))
            continue
        entry, section, index, item = found
        key = (entry.path, index, section)
        if key in seen:
            out.skipped.append((f.name, f"{section}[{index}] of {entry.path} is also the "
                                f"group {seen[key]}'s: ambiguous"))
            continue
        seen[key] = f.name
        out.matched.add((entry.path, section, index))
        why = _unfit(f, entry, item, window, min_span_hours)
        if why:
            out.skipped.append((f.name, why))
            continue
        ev = gather(f, window.bucket_hours, pct, headroom)
        if ev.span_hours < min_span_hours:
            out.skipped.append((f.name, f"measured {ev.span_hours:g} h, less than the minimum "
                                f"span ({min_span_hours:g} h)"))
            continue
        changes = _changes(item, ev)
        if not changes:
            out.skipped.append((f.name, f"already sized for its need (p{pct:g}: "
                                f"{ev.need_at_pct:.2f} instance(s), + headroom {ev.floor})"))
            continue
        g = float(f.pool.gpus_per_instance)
        saved = _saved(item, ev, changes) * g * window.bucket_hours
        month = saved * (HOURS_PER_MONTH / window.hours) if window.hours > 0 else 0.0
        price = f.price_per_gpu_hour
        out.proposals.append(Proposal(
            f.name, entry.stack, entry.path, section, index,
            getattr(item, "team", None) or entry.config.team, changes, ev, month,
            None if price is None else month * price))
    return out


def _unfit(f: PoolFigures, entry: StackEntry, item: Any, window: Window,
           min_span_hours: float) -> str | None:
    team = getattr(item, "team", None) or entry.config.team
    if f.pool.team != team:
        return (f"its team tag is {f.pool.team!r}, its stack entry charges {team!r}: never "
                "changed across teams")
    if f.status != "measured":
        return f"{f.status}: sizes are changed only for a pool measured over the whole window"
    if window.hours < min_span_hours:
        return (f"the window is {window.hours:g} h, less than the minimum span "
                f"({min_span_hours:g} h)")
    return None


def _changes(item: Any, ev: Evidence) -> list[Change]:
    out: list[Change] = []
    old_min, old_max = int(item.min_size), int(item.max_size)
    new_min = max(ev.floor, 1 if old_min >= 1 else 0)
    if new_min < old_min:
        out.append(Change("minSize", old_min, new_min))
    else:
        new_min = old_min
    desired = getattr(item, "desired_capacity", None)
    new_desired = desired
    if desired is not None and desired > max(new_min, ev.floor):
        new_desired = max(new_min, ev.floor)
        out.append(Change("desiredCapacity", desired, new_desired))
    peak = ev.peak_in_service
    if peak is not None and peak < MAX_SHARE * old_max:
        new_max = max(math.ceil(round(peak * MAX_HEADROOM, 9)), new_min, ev.floor,
                      new_desired or 0, int(getattr(item, "on_demand_base", 0) or 0), 1)
        if new_max < old_max:
            out.append(Change("maxSize", old_max, new_max))
    target = getattr(item, "target_gpu_utilisation", None)
    if target is not None and target < DEFAULT_TARGET:
        out.append(Change("targetGpuUtilisation", target, DEFAULT_TARGET))
    return out


def _saved(item: Any, ev: Evidence, changes: Sequence[Change]) -> float:
    """Instance-buckets the new sizes would not have run: at the old floor, the new floor or
    the need (whichever is more); above it, the need at the new target (never more than ran)."""
    new = {c.key: c.new for c in changes}
    old_min = float(item.min_size)
    new_min = float(new.get("minSize", old_min))
    target = float(new.get("targetGpuUtilisation", ev.target))
    saved = 0.0
    for n, need in zip(ev.in_service, ev.needs, strict=True):
        if n <= old_min + 1e-9:
            keep = max(new_min, math.ceil(round(need, 9)))
        else:
            keep = max(new_min, math.ceil(round(need * ev.target / target, 9)))
        saved += max(n - keep, 0.0)
    return saved
