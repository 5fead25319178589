"""Reports without AWS: pools and series made in memory, assembled like the real thing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from gpupool.catalog import load_catalog
from gpupool.debt.discover import Discovery, Pool
from gpupool.debt.metrics import Readings
from gpupool.debt.optimizer import OptimizerView
from gpupool.debt.report import Report, assemble
from gpupool.debt.window import Window

START = datetime(2026, 11, 23, tzinfo=UTC)


def window(hours: int = 24, period: int = 3600) -> Window:
    return Window(START, START + timedelta(hours=hours), period)


def pool(name: str, itype: str = "g4dn.xlarge", *, team: str | None = "research",
         min_size: int = 0, max_size: int = 8, target: float | None = 70.0) -> Pool:
    row = load_catalog().get(itype)
    assert row is not None, itype
    return Pool(name=name, arn=f"arn:aws:autoscaling:us-east-1:1:autoScalingGroup:x:"
                f"autoScalingGroupName/{name}", instance_type=row, instance_types=(itype,),
                min_size=min_size, max_size=max_size, desired_capacity=min_size, team=team,
                cost_center="cc", tags={}, spot_share=0.0, on_demand_base=0,
                target_utilisation=target, created=None)


def series(values: Sequence[float | None]) -> dict[int, float]:
    return {i: float(v) for i, v in enumerate(values) if v is not None}


def report(pools: Sequence[tuple[Pool, Sequence[float | None], Sequence[float | None]]],
           w: Window | None = None, max_series: Sequence[float | None] | None = None
           ) -> Report:
    """``(pool, in_service per bucket, utilisation % per bucket)`` → the assembled report."""
    w = w or window()
    readings = Readings()
    for p, ins, util in pools:
        maxes = max_series if max_series is not None else [p.max_size] * len(ins)
        readings.series[p.name] = {"in_service": series(ins), "max_size": series(maxes),
                                   "utilisation": series(util), "memory_utilisation": {}}
    return assemble(Discovery(pools=[p for p, _, _ in pools], groups_seen=len(pools)), readings,
                    w, "us-east-1", OptimizerView(reason="not asked"))
