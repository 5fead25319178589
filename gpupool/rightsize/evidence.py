# ruff: noqa: RUF003  (× is the multiplication sign users read)
"""What a pool's window needed, and whether it was measured well enough to act on.

The need of a bucket is the instances its measured use required at the pool's target:
``used / (target / 100) / g`` (target tracking's own arithmetic, as :mod:`gpupool.debt.advice`
counts it). An autoscaling group's allocation is its instances in service, which its minimum
holds up; what its work *needed* is the allocation it would have had without that floor, so the
high percentile is taken of the need. A pool is acted on only when every bucket of the window
is measured (status ``measured``) and the measured span is at least the minimum span.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpupool.debt.model import PoolFigures

DEFAULT_TARGET = 70.0


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (the value at least ``pct`` % of the samples do not exceed)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(math.ceil(pct / 100 * len(ordered)) - 1, 0))]


@dataclass(frozen=True, slots=True)
class Evidence:
    """The figures a proposal rests on (the pull request shows them)."""

    samples: int  # buckets with allocation and use known
    span_hours: float
    utilisation: float | None  # used / allocated over the window
    target: float  # the target utilisation the need is counted at
    pct: float  # the percentile asked for
    need_at_pct: float  # instances needed at that percentile
    floor: int  # ⌈need_at_pct × (1 + headroom)⌉: no size goes below it
    peak_in_service: float | None
    in_service: tuple[float, ...]  # instances in service per measured bucket
    needs: tuple[float, ...]  # instances needed per measured bucket (same buckets)
    basis: str = ""  # what the need counts, when not instances at the target (pr body)


def gather(f: PoolFigures, bucket_hours: float, pct: float, headroom: float) -> Evidence:
    g = float(f.pool.gpus_per_instance) or 1.0
    target = getattr(f.pool, "target_utilisation", None) or DEFAULT_TARGET
    pairs = [(a / g, u / (target / 100) / g)
             for a, u in zip(f.timeline.allocated, f.timeline.used, strict=True)
             if a is not None and u is not None]
    need = percentile([n for _, n in pairs], pct)
    return Evidence(
        samples=len(pairs), span_hours=len(pairs) * bucket_hours,
        utilisation=f.sums.utilisation, target=target, pct=pct, need_at_pct=need,
        floor=math.ceil(round(need * (1 + headroom), 9)), peak_in_service=f.peak_in_service,
        in_service=tuple(a for a, _ in pairs), needs=tuple(n for _, n in pairs))
