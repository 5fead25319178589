"""The report's rows: pools, teams, namespaces and pods as the JSON document and CSV carry them.

Pool and team rows hold scalars only (``pool_names`` aside), so CSV has exactly their columns;
DESIGN.md's keys (``pool``, ``team``, ``instance_type``, ``gpus_per_instance``, the GPU-hours,
``utilisation``, ``debt_usd``) are kept for every platform, and ``platform`` says which one.
Figures are rounded here, once: GPU-hours to 3 decimals, fractions to 4, dollars to 2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpupool.debt.model import Charge, PodFigures, PoolFigures, Sums, Timeline

POOL_COLUMNS = (
    "pool", "role", "platform", "account", "region", "team", "cost_center", "instance_type",
    "gpu_model", "gpus_per_instance", "min_size", "max_size", "desired_capacity",
    "target_utilisation", "spot_share", "status", "capacity_gpu_hours", "allocated_gpu_hours",
    "used_gpu_hours", "debt_gpu_hours", "idle_gpu_hours", "unmeasured_gpu_hours",
    "unattributed_gpu_hours",
    "utilisation", "memory_utilisation", "impossible_readings", "price_per_gpu_hour",
    "allocated_usd", "debt_usd", "debt_usd_per_month", "gpu_limit", "source", "arn",
)
TEAM_COLUMNS = (
    "team", "pools", "not_measured_pools", "capacity_gpu_hours", "allocated_gpu_hours",
    "used_gpu_hours", "debt_gpu_hours", "idle_gpu_hours", "unmeasured_gpu_hours",
    "unattributed_gpu_hours", "utilisation", "allocated_usd", "debt_usd", "debt_usd_per_month",
    "pool_names", "namespaces",
)
PerMonth = Callable[[float | None], float | None]


def r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class Group:
    """A team, or the whole report: charge lines (or whole pools) added up."""

    name: str
    figures: Sequence[PoolFigures | Charge]
    sums: Sums
    timeline: Timeline

    def pool_names(self) -> list[str]:
        return sorted({f.pool_key if isinstance(f, Charge) else f.name for f in self.figures})


def sums_row(s: Sums) -> dict[str, Any]:
    return {
        "capacity_gpu_hours": r(s.capacity_gpu_hours),
        "allocated_gpu_hours": r(s.allocated_gpu_hours),
        "used_gpu_hours": r(s.used_gpu_hours),
        "debt_gpu_hours": r(s.debt_gpu_hours),
        "idle_gpu_hours": r(s.idle_gpu_hours),
        "unmeasured_gpu_hours": r(s.unmeasured_gpu_hours),
        "unattributed_gpu_hours": r(s.unattributed_gpu_hours),
        "utilisation": r(s.utilisation, 4),
    }


def pool_row(f: PoolFigures, per_month: PerMonth) -> dict[str, Any]:
    p: Any = f.pool
    row: dict[str, Any] = {
        "pool": p.name,
        "platform": p.platform,
        "role": p.role,
        "account": getattr(p, "account", None),
        "region": getattr(p, "region", None),
        "team": p.team,
        "cost_center": p.cost_center,
        "instance_type": p.instance_type_name,
        "gpu_model": p.gpu_model,
        "gpus_per_instance": p.gpus_per_instance,
        "min_size": p.min_size,
        "max_size": p.max_size,
        "desired_capacity": p.desired_capacity,
        "target_utilisation": p.target_utilisation,
        "spot_share": p.spot_share,
        "status": f.status,
        **sums_row(f.sums),
        "memory_utilisation": r(f.memory_utilisation, 4),
        "impossible_readings": f.impossible_readings,
        "price_per_gpu_hour": r(f.price_per_gpu_hour, 6),
        "allocated_usd": r(f.sums.allocated_usd, 2),
        "debt_usd": r(f.sums.debt_usd, 2),
        "debt_usd_per_month": r(per_month(f.sums.debt_usd), 2),
        "gpu_limit": getattr(p, "gpu_limit", None),
        "source": getattr(p, "source", ""),
        "arn": getattr(p, "arn", ""),
    }
    return {k: row[k] for k in POOL_COLUMNS}


def group_row(g: Group, per_month: PerMonth, key: str = "team") -> dict[str, Any]:
    pools: dict[str, bool] = {}  # pool → measured at all
    for f in g.figures:
        name = f.pool_key if isinstance(f, Charge) else f.name
        pools[name] = pools.get(name, False) or f.status != "not measured"
    return {
        key: g.name,
        "pools": len(pools),
        "not_measured_pools": sum(not measured for measured in pools.values()),
        **sums_row(g.sums),
        "allocated_usd": r(g.sums.allocated_usd, 2),
        "debt_usd": r(g.sums.debt_usd, 2),
        "debt_usd_per_month": r(per_month(g.sums.debt_usd), 2),
        "pool_names": g.pool_names(),
        "namespaces": sorted(f.name for f in g.figures
                             if isinstance(f, Charge) and f.kind == "namespace"),
    }


def namespace_row(c: Charge, f: PoolFigures, per_month: PerMonth) -> dict[str, Any]:
    """A Kubernetes namespace's line in one pool (or the pool's unattributed use)."""
    pods = [p for p in f.pods if p.namespace == c.namespace] if c.kind == "namespace" else []
    return {
        "pool": c.pool,
        "namespace": c.namespace,
        "team": c.team,
        "cost_center": c.cost_center,
        "kind": c.kind,
        "status": c.status,
        "pods": len(pods) if c.kind == "namespace" else len(c.pods),
        **{k: v for k, v in sums_row(c.sums).items() if k not in ("capacity_gpu_hours",
                                                                  "idle_gpu_hours")},
        "allocated_usd": r(c.sums.allocated_usd, 2),
        "debt_usd": r(c.sums.debt_usd, 2),
        "debt_usd_per_month": r(per_month(c.sums.debt_usd), 2),
        "gpu_quota": f.namespace_quota.get(c.namespace or ""),
        "pod_names": list(c.pods),
    }


def pod_row(p: PodFigures) -> dict[str, Any]:
    return {
        "pool": p.pool,
        "namespace": p.namespace,
        "pod": p.pod,
        "node": p.node,
        "team": p.team,
        "status": p.status,
        "allocated_gpu_hours": r(p.allocated_gpu_hours),
        "used_gpu_hours": r(p.used_gpu_hours),
        "debt_gpu_hours": r(p.debt_gpu_hours),
        "unmeasured_gpu_hours": r(p.unmeasured_gpu_hours),
        "unattributed_gpu_hours": r(p.unattributed_gpu_hours),
        "utilisation": r(p.utilisation, 4),
        "debt_usd": r(p.debt_usd, 2),
    }
