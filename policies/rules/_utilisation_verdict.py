"""The verdict of gpu-capacity-vs-utilisation on one raise, from the pool's measurements.

The same for every platform: an autoscaling group, a KEDA ScaledObject, a Karpenter NodePool or
a namespace's GPU quota is raised, and the snapshot's pool (AWS from CloudWatch, Kubernetes and
on-premises from Prometheus) says whether the pool uses what it has. What cannot be judged
(no snapshot, a stale one, a pool it could not measure) is 'cannot verify', never a pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from policies.rules._common import cannot_verify
from policies.rules.base import Finding

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # pydantic models, read only when a snapshot is given
    from datetime import datetime
    from typing import Any, Protocol

    from gpupool.debt.snapshot import Snapshot, SnapshotPool
else:
    Protocol = object  # a structural type to the type checker, a plain class at run time


class Thresholds(Protocol):
    threshold: float
    thresholds: dict[str, float]
    max_snapshot_age_hours: float


def threshold(params: Thresholds, names: Iterable[str]) -> float:
    if not params.thresholds:  # the default: no fnmatch on a check's path
        return params.threshold
    from fnmatch import fnmatchcase

    for pattern, value in params.thresholds.items():
        if any(fnmatchcase(n, pattern) for n in names):
            return value
    return params.threshold


def clock() -> datetime:
    """Now, once per check: what a snapshot's age is judged against (datetime is imported with
    the snapshot's models; a check without a snapshot never imports it)."""
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _window(s: Snapshot) -> str:
    hours = s.window.hours
    span = f"{hours / 24:g} days" if hours >= 48 else f"{hours:g} h"
    from datetime import UTC

    return f"{span} to {s.window.end.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _taken(s: Snapshot) -> str:
    """When the snapshot was taken: a date, not an age, so that the message (and the generated
    docs that show it) does not change with the clock; the age is in the finding's detail."""
    from datetime import UTC

    return f"{s.taken_at().astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _unmeasured_why(measured: SnapshotPool) -> str:
    if measured.platform not in (None, "aws"):
        return ("no DCGM exporter series for its GPUs in Prometheus" if measured.status
                == "not measured" else "DCGM or kube-state-metrics series missing")
    if measured.role == "kubernetes-nodes":
        return ("a Kubernetes node group, whose GPUs' use is in Prometheus (DCGM), not "
                "CloudWatch")
    return "no GPU utilisation metric, the CloudWatch agent is not publishing"


def verdict(address: str, adds: str, measured: SnapshotPool | None, snapshot: Snapshot | None,
            params: Thresholds, names: Iterable[str], now: datetime | None,
            detail: Mapping[str, Any]) -> Finding | None:
    """The finding on a raise described by ``adds`` (None: the pool may grow)."""
    if snapshot is None:
        return Finding(address, cannot_verify(
            f"{adds}, and no utilisation snapshot is configured (gpupool check "
            "--utilisation FILE, or the pack's utilisationSnapshot), so the pool's use "
            "cannot be held against it (advisory)"), advisory_only=True)
    if measured is None:
        return Finding(address, cannot_verify(
            f"{adds}; the snapshot {snapshot.path} has no measurements for this pool (a "
            "new pool has no history) (advisory)"), advisory_only=True)
    age = snapshot.age(now).total_seconds()
    if params.max_snapshot_age_hours and age > params.max_snapshot_age_hours * 3600:
        last = ("" if measured.utilisation is None
                else f"; it measured {measured.utilisation:.1%} then")
        return Finding(address, cannot_verify(
            f"{adds} on GPU pool {measured.pool}, but the utilisation snapshot "
            f"{snapshot.path} was taken {_taken(snapshot)}, more than maxSnapshotAgeHours "
            f"({params.max_snapshot_age_hours:g}) ago{last}; refresh it with "
            "gpupool debt --format json"), unknown=True,
            detail={"snapshot_age_hours": round(age / 3600, 1)})
    kube = measured.platform not in (None, "aws")
    if measured.utilisation is None or (kube and measured.status != "measured"):
        # Prometheus' gaps are not sampled away as CloudWatch's are: a partial Kubernetes
        # pool's figure covers only the GPUs and hours that were exported, so it cannot vouch
        return Finding(address, cannot_verify(
            f"{adds} on GPU pool {measured.pool}, which the snapshot could not measure "
            f"({measured.status}: {_unmeasured_why(measured)})"), unknown=True)
    if measured.impossible_readings:
        return Finding(address, cannot_verify(
            f"{adds} on GPU pool {measured.pool}, whose readings include "
            f"{measured.impossible_readings} impossible value(s) (utilisation outside "
            "0-100 %, or negative sizes): its publisher is broken, so its "
            f"{measured.utilisation:.1%} is not a measurement to judge by"), unknown=True)
    limit = threshold(params, [measured.pool, *names])
    if measured.utilisation * 100 >= limit:
        return None
    debt = measured.debt_gpu_hours
    debt_text = "" if debt is None else (
        f": {debt:,.1f} GPU-hours allocated and not used"
        + ("" if measured.debt_usd is None else f" (${measured.debt_usd:,.2f})")
        + (f" of {measured.allocated_gpu_hours:,.1f}"
           if measured.allocated_gpu_hours is not None else ""))
    return Finding(
        address,
        f"{adds} on GPU pool {measured.pool}, which ran at {measured.utilisation:.1%} GPU "
        f"utilisation over {_window(snapshot)} (threshold {limit:g} %){debt_text}; use "
        "what it has first (gpupool debt shows how), or waive with an owner and a reason",
        detail={"pool": measured.pool, "platform": measured.platform or "aws",
                "utilisation": measured.utilisation, "threshold_pct": limit,
                "debt_gpu_hours": debt, "debt_usd": measured.debt_usd, **detail},
    )
