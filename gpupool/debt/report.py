"""The compute-debt report: discover the pools, read their series, compute, advise, assemble.

The JSON document is the interface (DESIGN.md): ``window``, ``pools``, ``teams``, ``totals``,
``api_calls``, plus ``generated_at``, ``region``, ``offenders``, ``recommendations``,
``findings``, ``compute_optimizer``, and for Kubernetes and on-premises pools read from
Prometheus ``namespaces``, ``pods``, ``autoscalers`` and ``prometheus`` (the sources and the
queries they took). Every pool has a ``platform`` (``aws``, ``kubernetes``, ``on-prem``); the
same tables, CSV and chart carry all of them, and ``--by team`` adds each team's AWS pools and
Kubernetes namespaces. ``gpupool check --utilisation`` reads it back through
:mod:`gpupool.debt.snapshot`. The model is :mod:`gpupool.debt.model`, the rows
:mod:`gpupool.debt.rows`.
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
from gpupool.debt.figures import pool_figures
from gpupool.debt.forecast import Forecast, forecast
from gpupool.debt.metrics import SERIES, Readings, read_series
from gpupool.debt.model import Charge, PoolFigures, Timeline, combine
from gpupool.debt.optimizer import OptimizerView, read_recommendations
from gpupool.debt.rows import (
    POOL_COLUMNS,
    TEAM_COLUMNS,
    Group,
    group_row,
    namespace_row,
    pod_row,
    pool_row,
    r,
)
from gpupool.debt.window import Window, iso

__all__ = ["POOL_COLUMNS", "TEAM_COLUMNS", "Group", "Report", "assemble", "build_report"]

FORMAT_VERSION = 1
LOW_UTILISATION = 0.40  # the rule's default threshold: below it a pool is flagged
OFFENDERS = 5

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
    prometheus: list[dict[str, Any]] = field(default_factory=list)  # sources and their queries
    aws: bool = True  # AWS was read (--no-aws: only Prometheus)
    forecast: Forecast | None = None  # --forecast: see add_forecast
    scopes: list[dict[str, Any]] = field(default_factory=list)  # --accounts/--regions reads
    reservations: list[dict[str, Any]] | None = None  # --reservations: gpupool.debt.reservations

    def add_forecast(self, horizon_days: int) -> Forecast:
        """Each pool's, team's and the total's GPU need for the next ``horizon_days``."""
        self.forecast = forecast([(f.name, f.timeline) for f in self.pools],
                                 [(g.name, g.timeline) for g in self.teams],
                                 self.total.timeline, self.window, horizon_days)
        return self.forecast

    @property
    def unread_scopes(self) -> int:
        return sum(s["status"] != "read" for s in self.scopes)

    def reservation_dict(self) -> dict[str, Any]:
        """``reservations``, ``reservation_teams`` and their totals (when they were read)."""
        from gpupool.debt.reservations import by_team, totals

        rows = self.reservations or []
        return {"reservations": rows, "reservation_teams": by_team(rows),
                "reservation_totals": totals(rows)}

    def offenders(self, n: int = OFFENDERS) -> list[PoolFigures]:
        """The pools with the most debt in dollars (GPU-hours when unpriced)."""
        owing = [f for f in self.pools if (f.sums.debt_gpu_hours or 0) > 0]
        return sorted(owing, key=lambda f: (-(f.sums.debt_usd or 0.0),
                                            -(f.sums.debt_gpu_hours or 0.0), f.name))[:n]

    def per_month(self, usd: float | None) -> float | None:
        return None if usd is None or self.window.hours <= 0 else (
            usd / self.window.hours * HOURS_PER_MONTH)

    # -- rows ------------------------------------------------------------------------------

    def pool_row(self, f: PoolFigures) -> dict[str, Any]:
        return pool_row(f, self.per_month)

    def group_row(self, g: Group, key: str = "team") -> dict[str, Any]:
        return group_row(g, self.per_month, key)

    def namespace_rows(self) -> list[dict[str, Any]]:
        return [namespace_row(c, f, self.per_month) for f in self.pools for c in f.lines
                if c.kind in ("namespace", "unattributed")]

    def to_dict(self) -> dict[str, Any]:
        totals = self.group_row(self.total, "scope")
        totals.pop("scope")
        totals.pop("pool_names")
        totals.pop("namespaces")
        totals["unpriced_pools"] = sum(f.price_per_gpu_hour is None for f in self.pools)
        queries = sum(int(s.get("queries", 0)) for s in self.prometheus)
        extra = {} if self.forecast is None else {"forecast": self.forecast.to_dict()}
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
            "namespaces": self.namespace_rows(),
            "pods": [pod_row(p) for f in self.pools for p in f.pods],
            "autoscalers": [a for f in self.pools for a in f.autoscalers],
            "offenders": [{"pool": f.name, **_where(f), "platform": f.platform,
                           "team": f.pool.team,
                           "utilisation": r(f.sums.utilisation, 4),
                           "debt_gpu_hours": r(f.sums.debt_gpu_hours),
                           "debt_usd": r(f.sums.debt_usd, 2)} for f in self.offenders()],
            "recommendations": [a.to_dict() for a in self.advice],
            "findings": self.findings,
            "compute_optimizer": self.optimizer.to_dict(),
            "groups_seen": self.groups_seen,
            "api_calls": self.api_calls,
            "api_calls_detail": {**self.api_detail, "get_metric_data": self.metric_calls},
            "aws": self.aws,
            "prometheus": self.prometheus,
            "prometheus_queries": queries,
            **extra,
            **({} if self.reservations is None else self.reservation_dict()),
            **({"accounts": sorted({s["account"] for s in self.scopes}),
                "regions": sorted({s["region"] for s in self.scopes if s["status"] == "read"}),
                "scopes": self.scopes} if self.scopes else {}),
        }


def _where(f: PoolFigures) -> dict[str, Any]:
    """The pool's account and region, when the report reads several (else nothing)."""
    account = getattr(f.pool, "account", None)
    return {"account": account, "region": getattr(f.pool, "region", None)} if account else {}


def group_by_team(figures: Sequence[PoolFigures], window: Window) -> list[Group]:
    """Each team's charge lines across every pool: an AWS pool is one line, a Kubernetes pool
    a line per namespace (and its unattributed use, and its nodes' capacity for its owner)."""
    teams: dict[str, list[Charge]] = {}
    for f in figures:
        for c in f.charges():
            teams.setdefault(c.team, []).append(c)
    groups = [Group(name, cs, combine(cs), Timeline.add([c.timeline for c in cs],
                                                          window.buckets))
              for name, cs in teams.items()]
    return sorted(groups, key=lambda g: (-(g.sums.debt_usd or 0.0), g.name))


def assemble(discovery: Discovery, readings: Readings, window: Window, region: str,
             optimizer: OptimizerView, *, api_calls: int = 0,
             api_detail: dict[str, Any] | None = None,
             threshold: float = LOW_UTILISATION, price_region: str = "us-east-1",
             kube: Sequence[PoolFigures] = (), prometheus: Sequence[dict[str, Any]] = (),
             kube_findings: Sequence[dict[str, str]] = (), aws: bool = True,
             aws_figures: Sequence[PoolFigures] = (),
             scopes: Sequence[dict[str, Any]] = (),
             reservations: Sequence[dict[str, Any]] | None = None) -> Report:
    """Figures, teams, totals, advice and findings from what was read (AWS and Prometheus).

    ``aws_figures`` and ``scopes``: pools already computed per account-region, and those
    scopes (:mod:`gpupool.debt.fleet`)."""
    figures = ([pool_figures(p, readings, window) for p in discovery.pools] + list(aws_figures)
               + list(kube))
    findings: list[dict[str, str]] = list(discovery.findings) + list(kube_findings)
    for f in figures:
        findings.extend(f.findings)
        u = f.sums.utilisation
        if u is not None and u < threshold and (f.sums.debt_gpu_hours or 0) > 0:
            where = getattr(f.pool, "account", None)
            findings.append({"pool": f.name, "finding": "low-utilisation", "message": (
                f"{u:.1%} GPU utilisation over the window, below {threshold:.0%}: "
                f"{f.sums.debt_gpu_hours:,.1f} GPU-hours allocated and not used"),
                **({"account": where, "region": getattr(f.pool, "region", "")} if where
                   else {})})
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
        prometheus=list(prometheus),
        aws=aws,
        scopes=list(scopes),
        reservations=None if reservations is None else list(reservations),
    )


def build_report(clients: Clients | None, window: Window, catalog: Catalog, *,
                 progress: Callable[[str, int], Callable[[int], None]] | None = None,
                 compute_optimizer: bool = True, kube: Any = None,
                 reservations: bool = False) -> Report:
    """Read everything for ``window`` and compute the report (see the module docstring).

    ``clients`` None: AWS is not read (``--no-aws``). ``reservations``: read the region's
    capacity reservations too (:mod:`gpupool.debt.reservations`). ``kube``: a callable
    returning what the Prometheus sources gave
    (:class:`gpupool.debt.prometheus.read.KubeReading`), or None.
    ``progress(description, total)`` returns a function advancing a bar by n; called once
    the number of series is known.
    """
    discovery, readings = Discovery(), Readings()
    optimizer = OptimizerView(reason="AWS not read" if clients is None else "not asked")
    if clients is not None:
        discovery = discover_pools(clients, catalog)
        series = len(discovery.pools) * len(SERIES)
        advance = progress("reading metrics", series) if progress else (lambda _n: None)
        readings = read_series(clients, discovery.pools, window, advance)
        if compute_optimizer:
            optimizer = read_recommendations(clients, discovery.pools, catalog)
    rows = None
    if clients is not None and reservations:
        from gpupool.debt.reservations import read_reservations, reservation_rows

        rows = reservation_rows(read_reservations(clients), discovery.pools, window, catalog)
    k = kube() if kube is not None else None
    return assemble(discovery, readings, window, clients.region if clients else "", optimizer,
                    api_calls=clients.calls.total if clients else 0,
                    api_detail=clients.calls.to_dict() if clients else {},
                    price_region=catalog.price_region,
                    kube=k.pools if k else (), prometheus=k.sources if k else (),
                    kube_findings=k.findings if k else (), aws=clients is not None,
                    reservations=rows)
