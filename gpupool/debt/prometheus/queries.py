# ruff: noqa: RUF002, RUF003  (×, − and – are the signs users read)
"""The PromQL the report sends, and how many queries a read takes.

Four **range queries** over the window, step = the report's period P, each point the average
over its bucket of a subquery evaluated every R seconds (``--resolution``, 60 by default; it
must divide P):

- capacity: GPUs each node offers, ``kube_node_status_allocatable`` per node and resource;
- allocation: GPUs requested by running pods, ``kube_pod_container_resource_requests`` joined
  with ``kube_pod_status_phase{phase="Running"}`` (a finished Job's pod still exports its
  requests), per namespace, pod, node and resource;
- use: ``DCGM_FI_DEV_GPU_UTIL`` and ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` per device and holder
  pod, readings outside their range (0–100 %, 0–1) left out of the average;

and two **instant queries** at the end of the window: the state (namespace labels, node labels,
GPU quotas, HPA/KEDA max replicas, Karpenter NodePool GPU limits, each the last value in the
window) and the count of impossible readings per device.

Each range point at t = bucket end − R averages the subquery's evaluations at bucket start,
start + R, …, bucket end − R: exactly the bucket's P / R instants (the subquery's range is
P − R/2, so that Prometheus 2, which includes a range's start, and 3, which does not, agree).
``sum_over_time(…) / (P/R)`` weights a node or pod present for part of a bucket by that part;
``avg_over_time`` of use
averages the instants that had a reading (a bucket with none is unmeasured, never zero).

Queries per Prometheus: 4 × ⌈buckets / 11,000⌉ + 2 (Prometheus returns at most 11,000 points
a series per query). The pods, GPUs and nodes are series of these queries, never queries of
their own: a week at hourly buckets is 6 queries for 10 pods or 10,000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpupool.debt.window import Window

MAX_POINTS = 11_000  # Prometheus's limit of points per series in one range query
RANGE_QUERIES = 4
INSTANT_QUERIES = 2
GPU_RESOURCES = "nvidia_com_gpu|nvidia_com_gpu_shared|nvidia_com_mig_.+"
QUOTA_RESOURCES = "requests.nvidia.com/.+|nvidia.com/.+"
# The labels that tell a device and its holder apart (exported_*: when Prometheus scraped the
# exporter without honor_labels, its namespace/pod/container labels were renamed so).
DEVICE_LABELS = ("node", "Hostname", "gpu", "UUID", "GPU_I_ID", "GPU_I_PROFILE", "modelName",
                 "namespace", "pod", "container", "exported_namespace", "exported_pod",
                 "exported_container")
UTIL = "DCGM_FI_DEV_GPU_UTIL"
ENGINE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"


@dataclass(frozen=True, slots=True)
class Query:
    key: str  # capacity | requests | util | engine | state | impossible
    expr: str
    instant: bool = False


def expected_queries(window: Window) -> int:
    """Queries one Prometheus takes for ``window``, whatever the number of pods."""
    return RANGE_QUERIES * chunks(window.buckets) + INSTANT_QUERIES


def chunks(buckets: int) -> int:
    return max(1, math.ceil(buckets / MAX_POINTS))


def _d(seconds: int) -> str:
    return f"{seconds}s"


def _inside(seconds: int, resolution: int) -> str:
    """A subquery range that holds exactly ``seconds / resolution`` instants whichever way the
    server closes it: Prometheus 2 includes both ends of a range, 3 leaves out its start, so
    the range stops half a step short of the previous bucket's last instant."""
    return f"{seconds * 1000 - resolution * 500}ms"


def range_queries(period: int, resolution: int) -> list[Query]:
    p, r, n = _inside(period, resolution), _d(resolution), period // resolution
    ids = ", ".join(DEVICE_LABELS)
    return [
        Query("capacity", (
            "sum_over_time((max by (node, resource) (kube_node_status_allocatable"
            f'{{resource=~"{GPU_RESOURCES}"}}))[{p}:{r}]) / {n}')),
        Query("requests", (
            "sum by (namespace, pod, node, resource) (sum_over_time(("
            "max by (namespace, pod, uid, container, node, resource) "
            f'(kube_pod_container_resource_requests{{resource=~"{GPU_RESOURCES}"}}) '
            "* on (namespace, pod, uid) group_left() "
            'max by (namespace, pod, uid) (kube_pod_status_phase{phase="Running"} == 1)'
            f")[{p}:{r}])) / {n}")),
        Query("util", f"avg by ({ids}) (avg_over_time(({UTIL} >= 0 <= 100)[{p}:{r}]))"),
        Query("engine", f"avg by ({ids}) (avg_over_time(({ENGINE} >= 0 <= 1)[{p}:{r}]))"),
    ]


def _tag(expr: str, kind: str) -> str:
    return f'label_replace({expr}, "gpupool_series", "{kind}", "", "")'


def instant_queries(window_s: int, resolution: int) -> list[Query]:
    w, r = _inside(window_s, resolution), _d(resolution)
    ids = ", ".join(DEVICE_LABELS)
    state = " or ".join([
        _tag(f"last_over_time(kube_namespace_labels[{w}])", "namespace"),
        _tag(f"last_over_time(kube_node_labels[{w}])", "node"),
        _tag("max by (namespace, resource) (last_over_time(kube_resourcequota"
             f'{{type="hard", resource=~"{QUOTA_RESOURCES}"}}[{w}]))', "quota"),
        _tag("max by (namespace, horizontalpodautoscaler) (last_over_time("
             f"kube_horizontalpodautoscaler_spec_max_replicas[{w}]))", "hpa"),
        _tag("max by (nodepool) (last_over_time(karpenter_nodepools_limit"
             f'{{resource_type="nvidia.com/gpu"}}[{w}]))', "nodepool"),
    ])
    impossible = " or ".join([
        _tag(f"sum by ({ids}) (count_over_time((({UTIL} < 0) or ({UTIL} > 100))[{w}:{r}]))",
             "util"),
        _tag(f"sum by ({ids}) (count_over_time((({ENGINE} < 0) or ({ENGINE} > 1))[{w}:{r}]))",
             "engine"),
    ])
    return [Query("state", state, instant=True), Query("impossible", impossible, instant=True)]


@dataclass(frozen=True, slots=True)
class Span:
    """One range query's times: its first point, last point and step, and the first bucket."""

    start: datetime
    end: datetime
    step_s: int
    first_bucket: int


def spans(window: Window, resolution: int) -> list[Span]:
    """The range queries' time spans: ⌈buckets / 11,000⌉ of them, each point at the end of its
    bucket minus one resolution step (see the module docstring)."""
    out: list[Span] = []
    p = window.period_s
    for first in range(0, window.buckets, MAX_POINTS):
        last = min(first + MAX_POINTS, window.buckets) - 1
        at = window.start + timedelta(seconds=p - resolution)
        out.append(Span(at + timedelta(seconds=first * p), at + timedelta(seconds=last * p), p,
                        first))
    return out


def bucket_of(window: Window, resolution: int, timestamp: float) -> int | None:
    """The bucket a range point at ``timestamp`` (seconds) stands for."""
    first = window.start.timestamp() + window.period_s - resolution
    index = round((timestamp - first) / window.period_s)
    return index if 0 <= index < window.buckets else None
