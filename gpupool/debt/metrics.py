"""Read every pool's series with GetMetricData, 500 queries a call, following NextToken.

Four series a pool: ``AWS/AutoScaling`` GroupInServiceInstances and GroupMaxSize (published when
the group's metrics collection is enabled, as the kit's pools do), and the CloudWatch agent's
``CWAgent`` nvidia_smi_utilization_gpu and nvidia_smi_utilization_memory per
AutoScalingGroupName. Every query is a plain MetricStat (no metric math), so the figures are
computed here, where they can be tested, rather than by CloudWatch.

Calls: ``⌈series / 500⌉`` per page. The automatic period keeps a page under GetMetricData's
100,800 datapoints, so a 7-day report of 1,000 pools (4,000 series) is 8 calls, where reading
each series with GetMetricStatistics would be 4,000.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpupool.debt.aws import (
    Clients,
    NotTheDocument,
    Progress,
    aws_errors,
    chunks,
    expect,
    no_progress,
)
from gpupool.debt.discover import Pool
from gpupool.debt.window import MAX_POINTS, Window

MAX_QUERIES = 500  # GetMetricData's limit of MetricDataQuery structures per call
GROUP_DIMENSION = "AutoScalingGroupName"


@dataclass(frozen=True, slots=True)
class SeriesSpec:
    key: str
    namespace: str
    metric: str
    stat: str = "Average"


IN_SERVICE = SeriesSpec("in_service", "AWS/AutoScaling", "GroupInServiceInstances")
MAX_SIZE = SeriesSpec("max_size", "AWS/AutoScaling", "GroupMaxSize")
UTILISATION = SeriesSpec("utilisation", "CWAgent", "nvidia_smi_utilization_gpu")
MEMORY_UTILISATION = SeriesSpec("memory_utilisation", "CWAgent", "nvidia_smi_utilization_memory")
SERIES: tuple[SeriesSpec, ...] = (IN_SERVICE, MAX_SIZE, UTILISATION, MEMORY_UTILISATION)

Series = dict[int, float]  # bucket index → the period's statistic


@dataclass
class Readings:
    """Every series by pool name and series key; what could not be read, and the pages."""

    series: dict[str, dict[str, Series]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    pages_per_batch: list[int] = field(default_factory=list)

    def of(self, pool: str, key: str) -> Series:
        return self.series.get(pool, {}).get(key, {})


def query(query_id: str, pool: str, spec: SeriesSpec, period_s: int) -> dict[str, Any]:
    return {
        "Id": query_id,
        "MetricStat": {
            "Metric": {
                "Namespace": spec.namespace,
                "MetricName": spec.metric,
                "Dimensions": [{"Name": GROUP_DIMENSION, "Value": pool}],
            },
            "Period": period_s,
            "Stat": spec.stat,
        },
        "ReturnData": True,
    }


def plan_queries(pools: Sequence[Pool], window: Window,
                 specs: Sequence[SeriesSpec] = SERIES) -> list[tuple[str, str, SeriesSpec]]:
    """(query id, pool name, series) for every series; ids are short and valid (``q<n>``)."""
    return [(f"q{i * len(specs) + j}", p.name, s)
            for i, p in enumerate(pools) for j, s in enumerate(specs)]


def expected_calls(series: int, window: Window) -> int:
    """Calls the read will take: ⌈series / 500⌉ batches times the pages each needs."""
    if series == 0:
        return 0
    batches = math.ceil(series / MAX_QUERIES)
    per_batch = min(series, MAX_QUERIES)
    pages = max(1, math.ceil(per_batch * window.buckets / MAX_POINTS))
    return batches * pages


def read_series(clients: Clients, pools: Sequence[Pool], window: Window,
                progress: Progress = no_progress,
                specs: Sequence[SeriesSpec] = SERIES) -> Readings:
    planned = plan_queries(pools, window, specs)
    by_id = {qid: (pool, spec) for qid, pool, spec in planned}
    out = Readings(series={p.name: {s.key: {} for s in specs} for p in pools})
    cw = clients.cloudwatch
    with aws_errors("GetMetricData", clients.endpoint):
        for batch in chunks(planned, MAX_QUERIES):
            queries = [query(qid, pool, spec, window.period_s) for qid, pool, spec in batch]
            pages = _read_batch(cw, queries, window, by_id, out)
            out.pages_per_batch.append(pages)
            progress(len(batch))
    return out


def _read_batch(cw: Any, queries: list[dict[str, Any]], window: Window,
                by_id: Mapping[str, tuple[str, SeriesSpec]], out: Readings) -> int:
    token: str | None = None
    seen: set[str] = set()
    pages = 0
    while True:
        kwargs: dict[str, Any] = {
            "MetricDataQueries": queries,
            "StartTime": window.start,
            "EndTime": window.end,
            "ScanBy": "TimestampAscending",
            "MaxDatapoints": MAX_POINTS,
        }
        if token:
            kwargs["NextToken"] = token
        response = cw.get_metric_data(**kwargs)
        pages += 1
        out.calls += 1
        for result in expect(response, "MetricDataResults", "GetMetricData") or []:
            target = by_id.get(str(result.get("Id")))
            if target is None:
                continue
            pool, spec = target
            series = out.series[pool][spec.key]
            for when, value in zip(result.get("Timestamps") or [], result.get("Values") or [],
                                   strict=False):
                index = window.bucket_of(when)
                if index is not None and math.isfinite(value):
                    series[index] = float(value)
            status = result.get("StatusCode")
            if status in ("InternalError", "Forbidden"):
                out.problems.append(f"{pool}: {spec.namespace}/{spec.metric}: CloudWatch "
                                    f"answered {status}; the series is incomplete")
        for m in response.get("Messages") or []:
            out.problems.append(f"GetMetricData: {m.get('Code', '')}: {m.get('Value', '')}")
        token = response.get("NextToken")
        if not token:
            return pages
        if token in seen:  # CloudWatch never repeats one: reading on would never end
            raise NotTheDocument(f"the same NextToken came back twice after {pages} pages")
        seen.add(token)
