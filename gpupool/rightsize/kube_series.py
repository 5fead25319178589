# ruff: noqa: RUF003  (× is the multiplication sign users read)
"""What a Kubernetes pool's window needed: per autoscaled Deployment, per namespace quota.

A Deployment's pods are the ones its ScaledObject counts: in its namespace, named
``<name>-<replicaset>-<pod>`` (:func:`infra.k8s.scaling.utilisation_query`'s pattern). The kit
gives every container one GPU, so its replicas in a bucket are the GPUs its pods were allocated,
and what its work *needed* is KEDA's own arithmetic on the measured use: ``used GPUs /
(target / 100)`` replicas (the allocation it would have had without ``minReplicas``). A bucket
counts only when every allocated GPU of those pods has its use measured.

A namespace's quota caps what its pods request: its need in a bucket is the GPUs its running
pods requested on the pool's nodes (none when capacity was known and nothing ran).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpupool.debt.model import PodFigures, PoolFigures, Timeline
from gpupool.rightsize.evidence import Evidence, percentile

EPS = 1e-9


def deployment_pods(pods: Sequence[PodFigures], namespace: str, name: str) -> list[PodFigures]:
    pattern = re.compile(rf"{re.escape(name)}-[a-z0-9]+-[a-z0-9]+")
    return [p for p in pods if p.namespace == namespace and pattern.fullmatch(p.pod)]


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many of the window's buckets are measured well enough to act on."""

    measured: int
    buckets: int

    @property
    def whole(self) -> bool:
        return self.measured == self.buckets


def _ceil(v: float) -> int:
    return math.ceil(round(v, 9))


def replicas_evidence(pods: Sequence[PodFigures], buckets: int, bucket_hours: float,
                      target: float, pct: float, headroom: float
                      ) -> tuple[Evidence, Coverage]:
    """Replicas per bucket and what they needed at ``target`` (see the module docstring)."""
    tl = Timeline.add([p.timeline for p in pods if p.timeline is not None], buckets)
    pairs: list[tuple[float, float]] = []
    for a, u, m in zip(tl.allocated, tl.used, tl.measured, strict=True):
        if a is not None and u is not None and m is not None and m >= a - EPS:
            pairs.append((a, u))
    needs = [u / (target / 100) for _, u in pairs]
    need = percentile(needs, pct)
    allocated = sum(a for a, _ in pairs)
    ev = Evidence(
        samples=len(pairs), span_hours=len(pairs) * bucket_hours,
        utilisation=sum(u for _, u in pairs) / allocated if allocated > 0 else None,
        target=target, pct=pct, need_at_pct=need, floor=_ceil(need * (1 + headroom)),
        peak_in_service=max((a for a, _ in pairs), default=None),
        in_service=tuple(a for a, _ in pairs), needs=tuple(needs),
        basis=f"replica(s) at {target:g} %")
    return ev, Coverage(len(pairs), buckets)


def namespace_allocation(figures: Sequence[PoolFigures], pool: PoolFigures, namespace: str
                         ) -> tuple[list[float], Coverage]:
    """GPUs the namespace's running pods requested per bucket, on every pool of the same
    Prometheus (a quota is namespace-wide); a bucket counts where the pool's capacity is known."""
    same = [f for f in figures if getattr(f.pool, "source", None) == getattr(pool.pool, "source",
                                                                             None)]
    lines = [c for f in same for c in f.lines
             if c.kind == "namespace" and c.namespace == namespace]
    out: list[float] = []
    for i, cap in enumerate(pool.timeline.capacity):
        if cap is None:
            continue
        out.append(sum(c.timeline.allocated[i] or 0.0 for c in lines))
    return out, Coverage(len(out), len(pool.timeline.capacity))


def quota_evidence(allocated: Sequence[float], bucket_hours: float, pct: float,
                   headroom: float, utilisation: float | None) -> Evidence:
    need = percentile(allocated, pct)
    return Evidence(
        samples=len(allocated), span_hours=len(allocated) * bucket_hours,
        utilisation=utilisation, target=100.0, pct=pct, need_at_pct=need,
        floor=_ceil(need * (1 + headroom)), peak_in_service=max(allocated, default=None),
        in_service=tuple(allocated), needs=tuple(allocated), basis="GPU(s) allocated")


def saved_replicas(ev: Evidence, old_min: int, new_min: int, new_target: float) -> float:
    """Replica-buckets the new bounds would not have run: at the old floor, the new floor or
    the need (whichever is more); above it, the need at the new target (never more than ran)."""
    saved = 0.0
    for n, need in zip(ev.in_service, ev.needs, strict=True):
        if n <= old_min + EPS:
            keep = max(new_min, _ceil(need))
        else:
            keep = max(new_min, _ceil(need * ev.target / new_target))
        saved += max(n - keep, 0.0)
    return saved
