# ruff: noqa: RUF002, RUF003  (× is the multiplication sign users read)
"""Compute debt from the series: capacity, allocation, use, debt and idle capacity in GPU-hours.

Per period bucket *i* of length *h* hours, for a pool of *g* GPUs per instance:

- capacity(i)  = GroupMaxSize(i) × g                       GPUs the pool may run
- allocated(i) = GroupInServiceInstances(i) × g            GPUs it pays for
- used(i)      = nvidia_smi_utilization_gpu(i) / 100 × allocated(i)

and over the window: X_gpu_hours = Σ X(i) × h, **debt = allocated − used**,
**idle = capacity − allocated**, **utilisation = used / allocated**.

Missing data is never zero, and an impossible reading is never clamped into a measurement:
a utilisation outside 0–100 % or a negative group size (a broken agent, a bad custom metric) is
left out of every figure, its bucket counted as unmeasured (or, for the group metrics, missing),
and named in an ``impossible-reading`` finding; the guardrail will not vouch for such a pool.

Missing data is never zero. A bucket with instances in service but no utilisation datapoint is
*unmeasured*: its allocation is reported as ``unmeasured_gpu_hours`` and left out of use, debt
and utilisation (which are then figures over the measured part). A pool with allocation and no
utilisation datapoint at all is **not measured** (its CloudWatch agent is not publishing), and
its use, debt and utilisation are ``None``. A bucket with zero instances in service needs no
measurement: nothing was allocated, so nothing was used or owed. Buckets before the group was
created are empty because the group did not exist; later gaps in the group metrics are
reported as missing coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpupool.debt.discover import KUBERNETES_ROLE, Pool
from gpupool.debt.metrics import IN_SERVICE, MAX_SIZE, MEMORY_UTILISATION, UTILISATION, Readings
from gpupool.debt.model import UNTAGGED, PoolFigures, Status, Sums, Timeline, combine
from gpupool.debt.model import add as _add
from gpupool.debt.window import Window

__all__ = ["UNTAGGED", "PoolFigures", "Sums", "Timeline", "combine", "pool_figures"]

@dataclass
class _Impossible:
    """Datapoints no real group or GPU can report, by series; the first one for the message."""

    count: int = 0
    first: str = ""

    def keep(self, series: dict[int, float], what: str, window: Window, low: float,
             high: float | None) -> dict[int, float]:
        kept: dict[int, float] = {}
        for i, v in sorted(series.items()):
            if v < low or (high is not None and v > high):
                self.count += 1
                if not self.first:
                    self.first = f"{what} {v:g} at {window.bucket_start(i):%Y-%m-%d %H:%M} UTC"
            else:
                kept[i] = v
        return kept


def pool_figures(pool: Pool, readings: Readings, window: Window) -> PoolFigures:
    g = float(pool.gpus_per_instance)
    h = window.bucket_hours
    bad = _Impossible()
    ins = bad.keep(readings.of(pool.name, IN_SERVICE.key), IN_SERVICE.metric, window, 0, None)
    mx = bad.keep(readings.of(pool.name, MAX_SIZE.key), MAX_SIZE.metric, window, 0, None)
    util = bad.keep(readings.of(pool.name, UTILISATION.key), UTILISATION.metric, window, 0, 100)
    mem = bad.keep(readings.of(pool.name, MEMORY_UTILISATION.key), MEMORY_UTILISATION.metric,
                   window, 0, 100)
    n = window.buckets
    first = _first_bucket(pool.created, window)

    cap_t: list[float | None] = []
    alloc_t: list[float | None] = []
    used_t: list[float | None] = []
    s = Sums()
    mem_weighted = mem_alloc = 0.0
    group_buckets = 0
    for i in range(n):
        c = mx.get(i)
        a = ins.get(i)
        cap = None if c is None else c * g
        alloc = None if a is None else a * g
        used: float | None = None
        if alloc is not None:
            if alloc == 0:
                used = 0.0
            elif i in util:
                used = util[i] / 100 * alloc
        cap_t.append(cap)
        alloc_t.append(alloc)
        used_t.append(used)
        if cap is not None or alloc is not None:
            group_buckets += 1
        if cap is not None:
            s.capacity_gpu_hours = _add(s.capacity_gpu_hours, cap * h)
        if alloc is not None:
            s.allocated_gpu_hours = _add(s.allocated_gpu_hours, alloc * h)
            if used is None:
                s.unmeasured_gpu_hours += alloc * h
            else:
                s.measured_gpu_hours += alloc * h
                s.used_gpu_hours = _add(s.used_gpu_hours, used * h)
            if alloc > 0 and i in mem:
                mem_weighted += mem[i] / 100 * alloc
                mem_alloc += alloc
        if cap is not None and alloc is not None:
            s.idle_gpu_hours = _add(s.idle_gpu_hours, max(cap - alloc, 0.0) * h)

    allocated = s.allocated_gpu_hours
    status: Status
    findings: list[dict[str, str]] = []
    if allocated is None and s.capacity_gpu_hours is None:
        status = "no group metrics"
        s.used_gpu_hours = None
        findings.append(_finding(pool, "no-group-metrics", (
            "no AWS/AutoScaling group metrics in the window: enable the group's metrics "
            "collection (GroupInServiceInstances, GroupMaxSize) to see its allocation")))
    elif allocated is not None and allocated > 0 and s.measured_gpu_hours == 0:
        status = "not measured"
        s.used_gpu_hours = None
        findings.append(_finding(pool, "not-measured", (
            f"no CWAgent/{UTILISATION.metric} datapoints while {allocated:,.1f} GPU-hours were "
            + ("in service on this Kubernetes node group: its GPUs' use is in Prometheus (the "
               "DCGM exporter's DCGM_FI_DEV_GPU_UTIL), out of CloudWatch's reach, and nodes in "
               "service are not GPUs requested by pods (docs/debt.md)"
               if pool.role == KUBERNETES_ROLE else
               "allocated: the CloudWatch agent is not publishing GPU metrics (not set up, or "
               "without the nvidia_gpu plugin and the AutoScalingGroupName dimension)"))))
    elif not allocated:
        status = "no allocation"
        if s.used_gpu_hours is None:
            s.used_gpu_hours = 0.0
    elif s.unmeasured_gpu_hours > 0:
        status = "partial"
        findings.append(_finding(pool, "partly-measured", (
            f"{s.unmeasured_gpu_hours:,.1f} of {allocated:,.1f} allocated GPU-hours have no "
            "utilisation datapoint; use, debt and utilisation cover the measured part only")))
    else:
        status = "measured"

    expected_buckets = n - first
    price = pool.instance_type.price_per_gpu_hour
    if price is not None:
        if allocated is not None:
            s.allocated_usd = allocated * price
        debt = s.debt_gpu_hours
        if debt is not None:
            s.debt_usd = debt * price
    if status not in ("no group metrics",) and 0 < group_buckets < expected_buckets:
        missing = (expected_buckets - group_buckets) * h
        findings.append(_finding(pool, "group-metrics-gaps", (
            f"group metrics are missing for {missing:,.1f} of {expected_buckets * h:,.1f} "
            "hours; capacity and allocation cover the hours with data")))
    if bad.count:
        findings.append(_finding(pool, "impossible-reading", (
            f"{bad.count} impossible reading(s) left out, never clamped (first: {bad.first}; "
            "utilisation must be 0-100 %, group sizes at least 0): the publisher is broken, "
            "so the pool's figures cover the other buckets and the guardrail cannot vouch for "
            "it")))
    if pool.team is None:
        findings.append(_finding(pool, "untagged", (
            "no team tag: its GPU-hours are charged to no one (tag the group with team and "
            "cost-center)")))
    for note in pool.notes:
        findings.append(_finding(pool, "note", note))
    peak = max((v for v in ins.values()), default=None)
    return PoolFigures(
        pool=pool,
        status=status,
        sums=s,
        timeline=Timeline(tuple(cap_t), tuple(alloc_t), tuple(used_t), tuple(
            None if a is None else (a if u is not None else 0.0)
            for a, u in zip(alloc_t, used_t, strict=True))),
        memory_utilisation=(mem_weighted / mem_alloc) if mem_alloc > 0 else None,
        price_per_gpu_hour=price,
        group_metric_hours=group_buckets * h,
        expected_hours=expected_buckets * h,
        peak_in_service=peak,
        findings=findings,
        impossible_readings=bad.count,
    )


def _first_bucket(created: datetime | None, window: Window) -> int:
    if created is None or created <= window.start:
        return 0
    index = window.bucket_of(created)
    return window.buckets if index is None else index


def _finding(pool: Pool, kind: str, message: str) -> dict[str, str]:
    return {"pool": pool.name, "finding": kind, "message": message}
