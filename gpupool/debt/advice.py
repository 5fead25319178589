# ruff: noqa: RUF002, RUF003  (× is the multiplication sign users read)
"""What to do about a pool's debt, and what it would save.

For a measured pool below the threshold, each bucket's *need* is the instances that would have
carried its measured use at the pool's target utilisation: ``need(i) = ⌈used(i) / target / g⌉``
(target tracking's own arithmetic). Savings are the allocation above the need that a change
would have removed over the window, projected to a month (× 730 h / window hours) and priced
per GPU-hour:

- **lower min**: the group sat at its minimum most of the time; a minimum at the 90th
  percentile of the need (never below 1 when it was at least 1: target tracking cannot scale
  out from zero) removes the floor's excess. Never below that need: when the need is at least
  the minimum there is no advice (``gpupool rightsize`` adds the window's p95 and headroom);
- **higher target**: above the minimum the group tracked a target lower than 70 %; 70 % would
  have run fewer instances;
- **lower max**: the peak in service stayed under half the maximum; a max of 1.25 × the peak
  caps the worst case. Unused headroom costs nothing while idle, so this saves no dollars now:
  it lowers what the pool *can* cost, which is reported separately;
- **consolidate**: pools of the same GPU (model, memory, architecture), all below the
  threshold, would need fewer instances together (one minimum instead of several). Remote-GPU
  proxy tiers are never merged with anything: each sits in its own cluster placement group
  next to its clients, within the network budget its tags carry, so moving its work elsewhere
  is not a capacity change but a network one.

Savings of different recommendations for one pool overlap: they are alternatives, not sums.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.debt.discover import KUBERNETES_ROLE, PROXY_ROLE, Pool
from gpupool.debt.model import PoolFigures
from gpupool.debt.window import Window

DEFAULT_TARGET = 70.0  # the kit's default target; what "higher target" recommends
FLOOR_SHARE = 0.5  # at the minimum this share of the measured time → "lower min"
HEADROOM = 1.25  # recommended max = peak × this


@dataclass(frozen=True, slots=True)
class Advice:
    pool: str
    action: str  # lower-min | raise-target | lower-max | consolidate | install-agent | …
    change: str  # "minSize 4 → 1"
    message: str
    gpus: float  # GPUs fewer (allocated on average, or of capacity for lower-max)
    gpu_hours_per_month: float
    usd_per_month: float | None
    account: str | None = None  # the pool's account and region, when the report reads several
    region: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            **({"account": self.account, "region": self.region} if self.account else {}),
            "action": self.action,
            "change": self.change,
            "message": self.message,
            "gpus": round(self.gpus, 3),
            "gpu_hours_per_month": round(self.gpu_hours_per_month, 1),
            "usd_per_month": None if self.usd_per_month is None else round(self.usd_per_month, 2),
        }


def _month(window: Window) -> float:
    return HOURS_PER_MONTH / window.hours if window.hours > 0 else 0.0


def _usd(gpu_hours: float, price: float | None) -> float | None:
    return None if price is None else gpu_hours * price


def _need(used: float, target: float, g: float) -> int:
    return math.ceil(round(used / (target / 100) / g, 9)) if used > 0 else 0


def _measured(f: PoolFigures) -> list[tuple[float, float]]:
    """(allocated GPUs, used GPUs) of every bucket where both are known."""
    return [(a, u) for a, u in zip(f.timeline.allocated, f.timeline.used, strict=True)
            if a is not None and u is not None]


def _percentile(values: Sequence[int], share: float) -> int:
    ordered = sorted(values)
    if not ordered:
        return 0
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def advise(figures: Sequence[PoolFigures], window: Window, threshold: float) -> list[Advice]:
    """Advice per account-region: pools are only ever merged with pools beside them."""
    scopes: dict[tuple[str | None, str | None], list[PoolFigures]] = {}
    for f in figures:
        where = (getattr(f.pool, "account", None), getattr(f.pool, "region", None))
        scopes.setdefault(where if where[0] else (None, None), []).append(f)
    out: list[Advice] = []
    for (account, region), group in scopes.items():
        got = _advise_scope(group, window, threshold)
        out += [dataclasses.replace(a, account=account, region=region) for a in got] \
            if account else got
    return out


def _advise_scope(figures: Sequence[PoolFigures], window: Window, threshold: float
                  ) -> list[Advice]:
    out: list[Advice] = []
    month = _month(window)
    h = window.bucket_hours
    low: list[PoolFigures] = []
    for f in figures:
        if not isinstance(f.pool, Pool):
            continue  # Kubernetes and on-premises pools: sized by replicas and quotas, not ASGs
        p = f.pool
        if f.status == "not measured" and p.role == KUBERNETES_ROLE:
            out.append(Advice(p.name, "read-dcgm", "Prometheus DCGM_FI_DEV_GPU_UTIL",
                              "a Kubernetes node group: read its use from the DCGM exporter "
                              "in Prometheus, against the GPUs its pods request "
                              "(docs/debt.md, Kubernetes pools)", 0, 0, None))
            continue
        if f.status == "not measured":
            out.append(Advice(p.name, "install-agent", "CloudWatch agent nvidia_gpu",
                              "publish CWAgent/nvidia_smi_utilization_gpu per "
                              "AutoScalingGroupName (the kit's launch template does) so the "
                              "pool's use can be measured and tracked", 0, 0, None))
            continue
        if f.status == "no group metrics":
            out.append(Advice(p.name, "enable-group-metrics", "metrics collection on",
                              "enable the group's metrics collection (1Minute granularity)",
                              0, 0, None))
            continue
        util = f.sums.utilisation
        if util is None or util >= threshold:
            continue
        low.append(f)
        out.extend(_own_advice(f, window, h, month))
    out.extend(_consolidation(low, window, h, month))
    return out


def _own_advice(f: PoolFigures, window: Window, h: float, month: float) -> list[Advice]:
    p = f.pool
    g = float(p.gpus_per_instance)
    price = f.price_per_gpu_hour
    target = p.target_utilisation or DEFAULT_TARGET
    buckets = [(a / g, u) for a, u in _measured(f)]
    out: list[Advice] = []
    if not buckets:
        return out
    needs = [_need(u, target, g) for _, u in buckets]
    at_floor = [(n, need) for (n, _), need in zip(buckets, needs, strict=True)
                if n <= p.min_size + 1e-9]
    if p.min_size > 0 and len(at_floor) >= FLOOR_SHARE * len(buckets):
        needed = _percentile(needs, 0.9)
        new_min = max(1, needed)  # never below the instances the message says were needed
        if new_min < p.min_size:
            saved = sum(max(n - max(new_min, need), 0) for n, need in at_floor) * g * h
            out.append(Advice(
                p.name, "lower-min", f"minSize {p.min_size} → {new_min}",
                f"in service at its minimum ({p.min_size}) {len(at_floor) / len(buckets):.0%} "
                f"of the measured time while {target:g} % utilisation needed "
                f"{needed} instance(s) at the 90th percentile",
                (p.min_size - new_min) * g, saved * month, _usd(saved * month, price)))
    if target < DEFAULT_TARGET:
        above = [(n, u) for n, u in buckets if n > p.min_size + 1e-9]
        saved = sum(max(n - max(p.min_size, _need(u, DEFAULT_TARGET, g)), 0)
                    for n, u in above) * g * h
        if saved > 0:
            out.append(Advice(
                p.name, "raise-target", f"targetGpuUtilisation {target:g} → {DEFAULT_TARGET:g}",
                f"above its minimum the pool tracked {target:g} % and ran at "
                f"{(f.sums.utilisation or 0):.0%}; {DEFAULT_TARGET:g} % carries the same work "
                "on fewer instances", saved / window.hours, saved * month,
                _usd(saved * month, price)))
    peak = f.peak_in_service
    if peak is not None and peak < 0.5 * p.max_size:
        new_max = max(math.ceil(round(peak * HEADROOM, 9)), p.min_size, 1)
        if new_max < p.max_size:
            gpus = (p.max_size - new_max) * g
            cap_usd = None if price is None else gpus * price * HOURS_PER_MONTH
            worst = "" if cap_usd is None else (
                f"; lowers what the pool can cost at full scale by ${cap_usd:,.0f}/month")
            out.append(Advice(
                p.name, "lower-max", f"maxSize {p.max_size} → {new_max}",
                f"peak in service was {peak:g} of {p.max_size}; idle headroom costs nothing "
                f"until it is used, so this saves no dollars now{worst}", gpus, 0.0,
                0.0 if price is not None else None))
    return out


def _consolidation(low: Sequence[PoolFigures], window: Window, h: float,
                   month: float) -> list[Advice]:
    by_gpu: dict[Any, list[PoolFigures]] = {}
    for f in low:
        if f.pool.role == PROXY_ROLE:
            continue
        by_gpu.setdefault(f.pool.instance_type.gpu_key, []).append(f)
    out: list[Advice] = []
    for group in by_gpu.values():
        if len(group) < 2 or len({len(f.timeline.used) for f in group}) != 1:
            continue
        keep = max(group, key=lambda f: f.sums.utilisation or 0.0)
        g = float(keep.pool.gpus_per_instance)
        target = keep.pool.target_utilisation or DEFAULT_TARGET
        floor = max(min(f.pool.min_size for f in group), 1 if any(
            f.pool.min_size for f in group) else 0)
        saved = 0.0
        for i in range(window.buckets):
            allocs = [f.timeline.allocated[i] for f in group]
            useds = [f.timeline.used[i] for f in group]
            if any(a is None for a in allocs) or any(u is None for u in useds):
                continue
            alloc = sum(a for a in allocs if a is not None)
            used = sum(u for u in useds if u is not None)
            need = max(floor, _need(used, target, g)) * g
            saved += max(alloc - need, 0.0) * h
        if saved <= 0:
            continue
        others = [f.name for f in group if f is not keep]
        price = keep.price_per_gpu_hour
        gpu = keep.pool.instance_type
        out.append(Advice(
            keep.name, "consolidate", f"merge {', '.join(others)} into {keep.name}",
            f"{len(group)} pools of {gpu.gpu_model} ({gpu.arch}) all run below the threshold; "
            f"one pool at {target:g} % with a minimum of {floor} carries their measured use",
            saved / window.hours, saved * month, _usd(saved * month, price)))
    return out
