"""Read every Prometheus source for a window: queries, parsing, pools.

Per source: the four range queries (query by query, each over the window's spans: capacity
first, so that use can be matched to known nodes), then the two instant queries; then each
pool's figures from its nodes. What a source could not match (exporter hosts that are no node,
Prometheus's warnings) becomes a finding, and the queries and retries it took are reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from gpupool.catalog import Catalog
from gpupool.debt.deadline import Deadline
from gpupool.debt.model import PoolFigures
from gpupool.debt.prometheus.auth import Auth
from gpupool.debt.prometheus.client import Client
from gpupool.debt.prometheus.findings import SHOWN
from gpupool.debt.prometheus.pools import NodeView, build_pool, node_views
from gpupool.debt.prometheus.queries import (
    bucket_of,
    expected_queries,
    instant_queries,
    range_queries,
    spans,
)
from gpupool.debt.prometheus.series import (
    Readings,
    read_capacity,
    read_impossible,
    read_requests,
    read_state,
    read_use,
)
from gpupool.debt.prometheus.sources import POOL_LABEL, Source
from gpupool.debt.window import Window
from gpupool.errors import InputError

DEFAULT_RESOLUTION_S = 60


@dataclass
class KubeReading:
    pools: list[PoolFigures] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)


def check_resolution(resolution: int, window: Window) -> int:
    p = window.period_s
    if resolution < 1 or resolution > p or p % resolution:
        raise InputError(f"--resolution {resolution}: expected a number of seconds that divides "
                         f"the period ({p} s), such as 60 (at least your scrape interval)")
    return resolution


def home_pools(r: Readings, source: Source, nodes: Sequence[NodeView]) -> dict[str, str]:
    """Each namespace's own pool, for what is namespace-wide (its GPU quota, its autoscalers):
    its gpupool.io/pool label, else the configured pool whose teams it holds, else the pool its
    pods were allocated most in."""
    pool_of = {nv.name: nv.pool for nv in nodes}
    weight: dict[str, dict[str, float]] = {}
    for (ns, _pod, node), resources in r.requests.items():
        if node in pool_of:
            got = sum(sum(b.values()) for b in resources.values())
            weight.setdefault(ns, {}).setdefault(pool_of[node], 0.0)
            weight[ns][pool_of[node]] += got
    out: dict[str, str] = {}
    names = set(r.namespace_labels) | set(weight) | set(r.quotas) | {ns for ns, _ in r.hpa_max}
    for ns in names:
        label = r.namespace_labels.get(ns, {}).get(POOL_LABEL)
        configured = next((h.name for h in source.hints.values() if ns in h.namespaces), None)
        most = max(sorted(weight.get(ns, {}).items()), key=lambda kv: kv[1], default=None)
        found = label or configured or (most[0] if most else None)
        if found:
            out[ns] = found
    return out


def read_source(source: Source, window: Window, catalog: Catalog, auth: Auth,
                deadline: Deadline, resolution: int) -> tuple[list[PoolFigures],
                                                              dict[str, Any],
                                                              list[dict[str, str]]]:
    client = Client(source.url, auth, deadline)
    r = Readings()

    def bucket(ts: float) -> int | None:
        return bucket_of(window, resolution, ts)

    for q in range_queries(window.period_s, resolution):
        for span in spans(window, resolution):
            results = client.query_range(q.expr, span.start, span.end, span.step_s)
            if q.key == "capacity":
                read_capacity(r, results, bucket)
            elif q.key == "requests":
                read_requests(r, results, bucket)
            else:
                read_use(r, results, bucket, engine=q.key == "engine")
    at = window.end - timedelta(seconds=resolution)
    window_s = int(window.hours * 3600)
    state, impossible = instant_queries(window_s, resolution)
    read_state(r, client.query(state.expr, at))
    read_impossible(r, client.query(impossible.expr, at))

    nodes = node_views(r, source, catalog)
    by_pool: dict[str, list[NodeView]] = {name: [] for name in source.hints}
    for nv in nodes:
        by_pool.setdefault(nv.pool, []).append(nv)
    home = home_pools(r, source, nodes)
    pools = [build_pool(name, ns, r, window, source, home)
             for name, ns in sorted(by_pool.items())]
    findings: list[dict[str, str]] = []
    if r.unknown_hosts:
        hosts = sorted(r.unknown_hosts)
        findings.append({"pool": source.pool, "finding": "unknown-exporter-host", "message": (
            f"{source.url}: DCGM series from host(s) {', '.join(hosts[:SHOWN])}"
            f"{'' if len(hosts) <= SHOWN else f' and {len(hosts) - SHOWN} more'} match no "
            "Kubernetes node: left out of every figure; set NODE_NAME on the exporter (its "
            "Hostname label is then the node's name) or relabel a node label onto its series")})
    findings.extend({"pool": source.pool, "finding": "prometheus-warning", "message": w}
                    for w in client.calls.warnings)
    summary = {"url": source.url, "pools": [p.name for p in pools],
               "auth": auth.describe(), "queries": client.calls.queries,
               "expected_queries": expected_queries(window),
               "retries": client.calls.retries, "resolution_s": resolution,
               "nodes": len(nodes), "pods": len(r.requests), "devices": len(r.devices)}
    return pools, summary, findings


def read_sources(sources: Sequence[Source], window: Window, catalog: Catalog, auth: Auth,
                 deadline: Deadline, resolution: int = DEFAULT_RESOLUTION_S) -> KubeReading:
    """Every source in turn (one Prometheus at a time: each query is already a big one)."""
    check_resolution(resolution, window)
    out = KubeReading()
    seen: set[str] = set()
    for source in sources:
        pools, summary, findings = read_source(source, window, catalog, auth, deadline,
                                               resolution)
        for p in pools:
            if p.name in seen:
                raise InputError(f"--prometheus {source.url}: pool {p.name} is in another "
                                 "source too; give each pool one Prometheus")
            seen.add(p.name)
        out.pools.extend(pools)
        out.sources.append(summary)
        out.findings.extend(findings)
    return out
