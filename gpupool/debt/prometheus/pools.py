# ruff: noqa: RUF002, RUF003  (×, − and – are the signs users read)
"""Kubernetes and on-premises pools for the report: figures, charge lines, pods and findings.

For every node of a pool and every bucket, :func:`attribution.node_bucket` says who was
allocated and who used what; here those are added up, over buckets (GPU-hours: GPUs × the
bucket's hours) and over pods, namespaces and the pool, and priced per node: its instance
type's catalog price per GPU-hour, or the pool's ``gpuHourlyCost`` for on-premises nodes.

Each pool is charged as lines (:class:`~gpupool.debt.model.Charge`): a line per namespace
(the team its ``team`` label, or the stack's teams, name), one for the use the exporter did
not attribute (``(unattributed)``, naming its pods), one for the nodes' capacity and idle
headroom (the pool's owner). The lines add up to the pool; ``--by team`` adds them up across
pools, AWS ones included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpupool.catalog import Catalog
from gpupool.debt.model import (
    UNATTRIBUTED,
    UNTAGGED,
    Charge,
    KubePool,
    PodFigures,
    PoolFigures,
    Status,
    Sums,
    Timeline,
)
from gpupool.debt.prometheus.attribution import node_bucket, usable_devices
from gpupool.debt.prometheus.findings import pool_findings
from gpupool.debt.prometheus.series import DeviceReading, PodKey, Readings
from gpupool.debt.prometheus.slots import share
from gpupool.debt.prometheus.sources import POOL_LABEL, PoolHints, Source
from gpupool.debt.window import Window

INSTANCE_TYPE_LABELS = ("node_kubernetes_io_instance_type", "beta_kubernetes_io_instance_type")
NODEPOOL_LABEL = "karpenter_sh_nodepool"


@dataclass
class Acc:
    """Per-bucket GPUs of one line: allocated (a), of it measured (m), unattributed (x),
    unmeasured (z), used (u); GPU-hours and dollars when finished."""

    n: int
    a: list[float | None] = field(init=False)
    m: list[float] = field(init=False)
    u: list[float] = field(init=False)
    x: float = 0.0
    z: float = 0.0
    alloc_usd: float | None = None
    debt_usd: float | None = None

    def __post_init__(self) -> None:
        self.a, self.m, self.u = [None] * self.n, [0.0] * self.n, [0.0] * self.n

    def add(self, i: int, h: float, a: float, m: float, u: float, x: float, z: float,
            price: float | None) -> None:
        self.a[i] = (self.a[i] or 0.0) + a
        self.m[i] += m
        self.u[i] += u
        self.x += x * h
        self.z += z * h
        if price is not None:
            self.alloc_usd = (self.alloc_usd or 0.0) + a * h * price
            self.debt_usd = (self.debt_usd or 0.0) + max(m - u, 0.0) * h * price

    def sums(self, h: float) -> Sums:
        known = [a for a in self.a if a is not None]
        s = Sums(allocated_gpu_hours=sum(known) * h if known else None,
                 measured_gpu_hours=sum(self.m) * h, unmeasured_gpu_hours=self.z,
                 unattributed_gpu_hours=self.x, allocated_usd=self.alloc_usd)
        if s.measured_gpu_hours > 0 or (known and sum(known) == 0):
            s.used_gpu_hours = sum(self.u) * h
            s.debt_usd = self.debt_usd if self.alloc_usd is not None else None
        return s

    def timeline(self, capacity: tuple[float | None, ...] | None = None) -> Timeline:
        used = tuple(None if a is None or (a > 0 and m <= 0) else u
                     for a, m, u in zip(self.a, self.m, self.u, strict=True))
        measured = tuple(None if a is None else m for a, m in zip(self.a, self.m, strict=True))
        return Timeline(capacity or (None,) * self.n, tuple(self.a), used, measured)


@dataclass
class NodeView:
    name: str
    pool: str
    shares: dict[str, float]  # resource → share of a GPU
    price: float | None
    instance_type: str
    model: str
    devices: list[DeviceReading]


def _mode(values: Sequence[str]) -> str:
    counted = Counter(v for v in values if v)
    return counted.most_common(1)[0][0] if counted else ""


def node_views(r: Readings, source: Source, catalog: Catalog) -> list[NodeView]:
    """The GPU nodes of a source (any GPU resource allocatable in the window), by pool."""
    by_node: dict[str, list[DeviceReading]] = {}
    for d in r.devices.values():
        by_node.setdefault(d.node, []).append(d)
    out = []
    for node, resources in sorted(r.nodes.items()):
        if not any(v > 0 for b in resources.values() for v in b.values()):
            continue
        labels = r.node_labels.get(node, {})
        pool = labels.get(POOL_LABEL) or source.pool
        hint = source.hint(pool)
        devices = usable_devices(by_node.get(node, []))
        model = _mode([d.model for d in devices]) or labels.get("nvidia_com_gpu_product", "") \
            or (hint.gpu or "")
        itype = next((labels[k] for k in INSTANCE_TYPE_LABELS if labels.get(k)), "")
        row = catalog.get(itype) if itype else None
        price = row.price_per_gpu_hour if row is not None else hint.gpu_hourly_cost
        shares = {res: share(res, labels, model, hint.time_slicing_replicas)
                  for res in resources}
        out.append(NodeView(node, pool, shares, price, itype if row is not None else "",
                            model, devices))
    return out


def _team(ns: str, r: Readings, hint: PoolHints) -> tuple[str, str | None, bool]:
    """A namespace's team and cost centre: its labels, else the stack's teams; tagged?"""
    labels = r.namespace_labels.get(ns, {})
    if labels.get("team"):
        return labels["team"], labels.get("cost_center"), True
    if ns in hint.namespaces:
        team, cc = hint.namespaces[ns]
        return team, cc, True
    return UNTAGGED, None, False


def build_pool(name: str, nodes: Sequence[NodeView], r: Readings, window: Window,
               source: Source, home: Mapping[str, str]) -> PoolFigures:
    """One pool's figures from its nodes' buckets (see the module docstring)."""
    n, h = window.buckets, window.bucket_hours
    hint = source.hint(name)
    total, unattributed, pods_acc = Acc(n), Acc(n), {}
    ns_acc: dict[str, Acc] = {}
    capacity: list[float | None] = [None] * n
    orphans: set[tuple[str, str, str]] = set()
    node_stats: dict[str, dict[str, float]] = {}
    shared = 0
    pod_keys = {node.name: [k for k in r.requests if k[2] == node.name] for node in nodes}
    for node in nodes:
        stats = node_stats.setdefault(node.name, {"alloc": 0.0, "unmeasured": 0.0,
                                                  "readings": 0.0})
        stats["readings"] = float(sum(len(d.util) + len(d.engine) for d in node.devices))
        for i in range(n):
            cap = None
            for res, buckets in r.nodes[node.name].items():
                if i in buckets:
                    cap = (cap or 0.0) + buckets[i] * node.shares.get(res, 0.0)
            alloc: dict[PodKey, float] = {}
            for key in pod_keys[node.name]:
                got = sum(b.get(i, 0.0) * node.shares.get(res, 0.0)
                          for res, b in r.requests[key].items())
                if got > 0:
                    alloc[(key[0], key[1])] = alloc.get((key[0], key[1]), 0.0) + got
            if cap is not None:
                capacity[i] = (capacity[i] or 0.0) + cap
            nb = node_bucket(i, cap, alloc, node.devices)
            shared += nb.shared_devices
            orphan_alloc = 0.0
            for p in nb.pods:
                key3 = (p.pod[0], p.pod[1], node.name)
                acc = pods_acc.setdefault(key3, Acc(n))
                line = ns_acc.setdefault(p.pod[0], Acc(n))
                stats["alloc"] += p.allocated * h
                if p.state == "measured":
                    used = p.used or 0.0
                    acc.add(i, h, p.allocated, p.allocated, used, 0, 0, node.price)
                    line.add(i, h, p.allocated, p.allocated, used, 0, 0, node.price)
                    total.add(i, h, p.allocated, p.allocated, used, 0, 0, node.price)
                elif p.state == "unmeasured":
                    stats["unmeasured"] += p.allocated * h
                    acc.add(i, h, p.allocated, 0, 0, 0, p.allocated, node.price)
                    line.add(i, h, p.allocated, 0, 0, 0, p.allocated, node.price)
                    total.add(i, h, p.allocated, 0, 0, 0, p.allocated, node.price)
                else:
                    orphans.add(key3)
                    orphan_alloc += p.allocated
                    acc.add(i, h, p.allocated, 0, 0, p.allocated, 0, node.price)
            if orphan_alloc:
                u = nb.unattributed_used
                unattributed.add(i, h, orphan_alloc, orphan_alloc, u, orphan_alloc, 0,
                                 node.price)
                total.add(i, h, orphan_alloc, orphan_alloc, u, orphan_alloc, 0, node.price)
    owned = {ns for ns, pool in home.items() if pool == name}
    return _assemble(name, nodes, r, window, source, hint, total, unattributed, ns_acc,
                     pods_acc, tuple(capacity), orphans, node_stats, shared, owned)


def _status(s: Sums, capacity_known: bool) -> Status:
    if s.allocated_gpu_hours is None and not capacity_known:
        return "no cluster metrics"
    if not s.allocated_gpu_hours:
        return "no allocation"
    if s.measured_gpu_hours <= 0:
        return "not measured"
    return "partial" if s.unmeasured_gpu_hours > 0 else "measured"


def _assemble(name: str, nodes: Sequence[NodeView], r: Readings, window: Window,
              source: Source, hint: PoolHints, total: Acc, unattributed: Acc,
              ns_acc: Mapping[str, Acc], pods_acc: Mapping[tuple[str, str, str], Acc],
              capacity: tuple[float | None, ...], orphans: set[tuple[str, str, str]],
              node_stats: Mapping[str, Mapping[str, float]], shared: int,
              namespaces: set[str]) -> PoolFigures:
    h = window.bucket_hours
    sums = total.sums(h)
    known_caps = [c for c in capacity if c is not None]
    sums.capacity_gpu_hours = sum(known_caps) * h if known_caps else None
    idle = [max(c - (a or 0.0), 0.0) for c, a in zip(capacity, total.a, strict=True)
            if c is not None]
    sums.idle_gpu_hours = sum(idle) * h if idle else None
    status = _status(sums, bool(known_caps))
    itypes = sorted({nv.instance_type for nv in nodes if nv.instance_type})
    platform = "kubernetes" if hint.eks or (nodes and all(nv.instance_type for nv in nodes)) \
        else "on-prem"
    per_node = Counter(round(max(sum(b.get(i, 0.0) * nv.shares.get(res, 0.0)
                                     for res, b in r.nodes[nv.name].items())
                                 for i in range(window.buckets)), 3) for nv in nodes)
    limits = {r.node_labels.get(nv.name, {}).get(NODEPOOL_LABEL) for nv in nodes}
    limit = next((r.nodepool_limits[k] for k in sorted(x for x in limits if x)
                  if k in r.nodepool_limits), None)
    owner = hint.team or _mode([r.node_labels.get(nv.name, {}).get("team", "") for nv in nodes])
    pool = KubePool(
        name=name, platform=platform, source=source.url, team=owner or None,
        cost_center=hint.cost_center, instance_type_name=(
            itypes[0] if len(itypes) == 1 else f"mixed ({', '.join(itypes)})" if itypes else ""),
        gpu_model=_mode([nv.model for nv in nodes]) or (hint.gpu or ""),
        gpus_per_instance=per_node.most_common(1)[0][0] if per_node else 0.0,
        nodes=len(nodes), gpu_limit=limit)
    lines: list[Charge] = []
    teams: dict[str, tuple[str, str | None, bool]] = {ns: _team(ns, r, hint) for ns in ns_acc}
    for ns, acc in sorted(ns_acc.items()):
        s = acc.sums(h)
        team, cc, _ = teams[ns]
        lines.append(Charge(name, team, "namespace", _status(s, True), s, acc.timeline(),
                            namespace=ns, cost_center=cc))
    if orphans:
        s = unattributed.sums(h)
        lines.append(Charge(name, UNATTRIBUTED, "unattributed", _status(s, True), s,
                            unattributed.timeline(), namespace=UNATTRIBUTED,
                            pods=tuple(sorted(f"{ns}/{pod}" for ns, pod, _ in orphans))))
    cap_sums = Sums(capacity_gpu_hours=sums.capacity_gpu_hours,
                    idle_gpu_hours=sums.idle_gpu_hours)
    lines.append(Charge(name, owner or UNTAGGED, "capacity", status, cap_sums,
                        Timeline(capacity, *(3 * ((None,) * window.buckets,))),
                        cost_center=hint.cost_center))
    pods = [_pod(name, key, acc, teams, h, orphans) for key, acc in sorted(pods_acc.items())]
    prices = [nv.price for nv in nodes]
    price = (sum(p for p in prices if p is not None) / len(prices)) if prices and all(
        p is not None for p in prices) else None
    autoscalers = [{"pool": name, "namespace": ns, "kind": "ScaledObject" if hpa.startswith(
        "keda-hpa-") else "HorizontalPodAutoscaler", "name": hpa.removeprefix("keda-hpa-"),
        "max_replicas": v} for (ns, hpa), v in sorted(r.hpa_max.items()) if ns in namespaces]
    figures = PoolFigures(
        pool=pool, status=status, sums=sums,
        timeline=total.timeline(capacity), memory_utilisation=None, price_per_gpu_hour=price,
        group_metric_hours=len(known_caps) * h, expected_hours=window.hours,
        peak_in_service=None, lines=lines, pods=pods,
        namespace_quota={ns: q for ns, q in sorted(r.quotas.items()) if ns in namespaces},
        autoscalers=autoscalers,
        namespace_labels={ns: dict(r.namespace_labels.get(ns, {}))
                          for ns in sorted(namespaces | set(ns_acc))},
        impossible_readings=sum(d.impossible for nv in nodes for d in nv.devices))
    figures.findings = pool_findings(figures, nodes, node_stats, teams, shared, hint,
                                     r.namespace_label_sets)
    return figures


def _pod(pool: str, key: tuple[str, str, str], acc: Acc,
         teams: Mapping[str, tuple[str, str | None, bool]], h: float,
         orphans: set[tuple[str, str, str]]) -> PodFigures:
    s = acc.sums(h)
    allocated = s.allocated_gpu_hours or 0.0
    if key in orphans and s.measured_gpu_hours <= 0 and s.unmeasured_gpu_hours <= 0:
        status = "unattributed"
    elif s.measured_gpu_hours <= 0:
        status = "not measured"
    elif s.unmeasured_gpu_hours > 0 or s.unattributed_gpu_hours > 0:
        status = "partial"
    else:
        status = "measured"
    return PodFigures(pool, key[0], key[1], key[2], teams.get(key[0], (UNTAGGED,))[0], status,
                      allocated, s.used_gpu_hours if s.measured_gpu_hours > 0 else None,
                      s.measured_gpu_hours, s.unmeasured_gpu_hours, s.unattributed_gpu_hours,
                      s.debt_usd if s.measured_gpu_hours > 0 else None, acc.timeline())
