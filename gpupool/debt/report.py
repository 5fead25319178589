"""The compute-debt report: discover the pools, read their series, compute, advise, assemble.

The JSON document is the interface (DESIGN.md): ``window``, ``pools``, ``teams``, ``totals``,
``api_calls``, plus ``generated_at``, ``region``, ``offenders``, ``recommendations``,
``findings``, ``compute_optimizer``. ``gpupool check --utilisation`` reads it back through
:mod:`gpupool.debt.snapshot`. Every pool row holds scalars only, so CSV has the same columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gpupool.catalog import Catalog
from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.debt.advice import Advice, advise
from gpupool.debt.aws import Clients
from gpupool.debt.discover import Discovery, discover_pools
from gpupool.debt.figures import PoolFigures, Sums, Timeline, combine, pool_figures
from gpupool.debt.metrics import SERIES, Readings, read_series
from gpupool.debt.optimizer import OptimizerView, read_recommendations
from gpupool.debt.window import Window, iso

FORMAT_VERSION = 1
LOW_UTILISATION = 0.40  # the rule's default threshold: below it a pool is flagged
OFFENDERS = 5

POOL_COLUMNS = (
    "pool", "role", "team", "cost_center", "instance_type", "gpu_model", "gpus_per_instance",
    "min_size", "max_size", "desired_capacity", "target_utilisation", "spot_share", "status",
    "capacity_gpu_hours", "allocated_gpu_hours", "used_gpu_hours", "debt_gpu_hours",
    "idle_gpu_hours", "unmeasured_gpu_hours", "utilisation", "memory_utilisation",
    "impossible_readings", "price_per_gpu_hour", "allocated_usd", "debt_usd",
    "debt_usd_per_month", "arn",
)
TEAM_COLUMNS = (
    "team", "pools", "not_measured_pools", "capacity_gpu_hours", "allocated_gpu_hours",
    "used_gpu_hours", "debt_gpu_hours", "idle_gpu_hours", "unmeasured_gpu_hours", "utilisation",
    "allocated_usd", "debt_usd", "debt_usd_per_month", "pool_names",
)


def _r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class Group:
    """A team, or the whole report: pools combined."""

    name: str
    figures: list[PoolFigures]
    sums: Sums
    timeline: Timeline


@dataclass
class Report:
    window: Window
    region: str
    pools: list[PoolFigures]
    teams: list[Group]
    total: Group
    advice: list[Advice]
    optimizer: OptimizerView
    findings: list[dict[str, str]]
    api_calls: int
    api_detail: dict[str, Any]
    metric_calls: int
    threshold: float = LOW_UTILISATION
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    groups_seen: int = 0
    price_region: str = "us-east-1"  # the catalog's prices: the report's region when recorded

    def offenders(self, n: int = OFFENDERS) -> list[PoolFigures]:
        """The pools with the most debt in dollars (GPU-hours when unpriced)."""
        owing = [f for f in self.pools if (f.sums.debt_gpu_hours or 0) > 0]
        return sorted(owing, key=lambda f: (-(f.sums.debt_usd or 0.0),
                                            -(f.sums.debt_gpu_hours or 0.0), f.name))[:n]

    def per_month(self, usd: float | None) -> float | None:
        return None if usd is None or self.window.hours <= 0 else (
            usd / self.window.hours * HOURS_PER_MONTH)

    # -- rows ------------------------------------------------------------------------------

    def _sums_row(self, s: Sums) -> dict[str, Any]:
        return {
            "capacity_gpu_hours": _r(s.capacity_gpu_hours),
            "allocated_gpu_hours": _r(s.allocated_gpu_hours),
            "used_gpu_hours": _r(s.used_gpu_hours),
            "debt_gpu_hours": _r(s.debt_gpu_hours),
            "idle_gpu_hours": _r(s.idle_gpu_hours),
            "unmeasured_gpu_hours": _r(s.unmeasured_gpu_hours),
            "utilisation": _r(s.utilisation, 4),
        }

    def pool_row(self, f: PoolFigures) -> dict[str, Any]:
        p = f.pool
        row: dict[str, Any] = {
            "pool": p.name,
            "role": p.role,
            "team": p.team,
            "cost_center": p.cost_center,
            "instance_type": p.instance_type.instance_type,
            "gpu_model": p.instance_type.gpu_model,
            "gpus_per_instance": p.gpus_per_instance,
            "min_size": p.min_size,
            "max_size": p.max_size,
            "desired_capacity": p.desired_capacity,
            "target_utilisation": p.target_utilisation,
            "spot_share": p.spot_share,
            "status": f.status,
            **self._sums_row(f.sums),
            "memory_utilisation": _r(f.memory_utilisation, 4),
            "impossible_readings": f.impossible_readings,
            "price_per_gpu_hour": _r(f.price_per_gpu_hour, 6),
            "allocated_usd": _r(f.sums.allocated_usd, 2),
            "debt_usd": _r(f.sums.debt_usd, 2),
            "debt_usd_per_month": _r(self.per_month(f.sums.debt_usd), 2),
            "arn": p.arn,
        }
        return {k: row[k] for k in POOL_COLUMNS}

    def group_row(self, g: Group, key: str = "team") -> dict[str, Any]:
        row: dict[str, Any] = {
            key: g.name,
            "pools": len(g.figures),
            "not_measured_pools": sum(f.status == "not measured" for f in g.figures),
            **self._sums_row(g.sums),
            "allocated_usd": _r(g.sums.allocated_usd, 2),
            "debt_usd": _r(g.sums.debt_usd, 2),
            "debt_usd_per_month": _r(self.per_month(g.sums.debt_usd), 2),
            "pool_names": [f.name for f in g.figures],
        }
        return row

    def to_dict(self) -> dict[str, Any]:
        totals = self.group_row(self.total, "scope")
        totals.pop("scope")
        totals.pop("pool_names")
        totals["unpriced_pools"] = sum(f.price_per_gpu_hour is None for f in self.pools)
        return {
            "format": "gpupool-debt",
            "version": FORMAT_VERSION,
            "generated_at": iso(self.generated_at),
            "region": self.region,
            "window": self.window.to_dict(),
            "price_basis": "on-demand, catalog prices (spot share of each pool noted)",
            "price_region": self.price_region,
            "threshold": self.threshold,
            "pools": [self.pool_row(f) for f in self.pools],
            "teams": [self.group_row(g) for g in self.teams],
            "totals": totals,
            "offenders": [{"pool": f.name, "team": f.pool.team,
                           "utilisation": _r(f.sums.utilisation, 4),
                           "debt_gpu_hours": _r(f.sums.debt_gpu_hours),
                           "debt_usd": _r(f.sums.debt_usd, 2)} for f in self.offenders()],
            "recommendations": [a.to_dict() for a in self.advice],
            "findings": self.findings,
            "compute_optimizer": self.optimizer.to_dict(),
            "groups_seen": self.groups_seen,
            "api_calls": self.api_calls,
            "api_calls_detail": {**self.api_detail, "get_metric_data": self.metric_calls},
        }


def group_by_team(figures: Sequence[PoolFigures], window: Window) -> list[Group]:
    teams: dict[str, list[PoolFigures]] = {}
    for f in figures:
        teams.setdefault(f.team, []).append(f)
    groups = [Group(name, fs, combine(fs), Timeline.add([f.timeline for f in fs],
                                                          window.buckets))
              for name, fs in teams.items()]
    return sorted(groups, key=lambda g: (-(g.sums.debt_usd or 0.0), g.name))


def assemble(discovery: Discovery, readings: Readings, window: Window, region: str,
             optimizer: OptimizerView, *, api_calls: int = 0,
             api_detail: dict[str, Any] | None = None,
             threshold: float = LOW_UTILISATION, price_region: str = "us-east-1") -> Report:
    """Figures, teams, totals, advice and findings from what was read."""
    figures = [pool_figures(p, readings, window) for p in discovery.pools]
    findings: list[dict[str, str]] = list(discovery.findings)
    for f in figures:
        findings.extend(f.findings)
        u = f.sums.utilisation
        if u is not None and u < threshold and (f.sums.debt_gpu_hours or 0) > 0:
            findings.append({"pool": f.name, "finding": "low-utilisation", "message": (
                f"{u:.1%} GPU utilisation over the window, below {threshold:.0%}: "
                f"{f.sums.debt_gpu_hours:,.1f} GPU-hours allocated and not used")})
    findings.extend({"pool": "", "finding": "read-problem", "message": m}
                    for m in readings.problems)
    total = Group("total", figures, combine(figures),
                  Timeline.add([f.timeline for f in figures], window.buckets))
    return Report(
        window=window,
        region=region,
        pools=sorted(figures, key=lambda f: f.name),
        teams=group_by_team(figures, window),
        total=total,
        advice=advise(figures, window, threshold),
        optimizer=optimizer,
        findings=findings,
        api_calls=api_calls,
        api_detail=api_detail or {},
        metric_calls=readings.calls,
        threshold=threshold,
        groups_seen=discovery.groups_seen,
        price_region=price_region,
    )


def build_report(clients: Clients, window: Window, catalog: Catalog, *,
                 progress: Callable[[str, int], Callable[[int], None]] | None = None,
                 compute_optimizer: bool = True) -> Report:
    """Read everything for ``window`` and compute the report (see the module docstring).

    ``progress(description, total)`` returns a function advancing a bar by n; called once
    the number of series is known.
    """
    discovery = discover_pools(clients, catalog)
    series = len(discovery.pools) * len(SERIES)
    advance = progress("reading metrics", series) if progress else (lambda _n: None)
    readings = read_series(clients, discovery.pools, window, advance)
    optimizer = (read_recommendations(clients, discovery.pools, catalog)
                 if compute_optimizer else OptimizerView(reason="not asked"))
    return assemble(discovery, readings, window, clients.region, optimizer,
                    api_calls=clients.calls.total, api_detail=clients.calls.to_dict(),
                    price_region=catalog.price_region)
