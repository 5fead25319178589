# ruff: noqa: RUF002, RUF003  (× is the multiplication sign users read)
"""Match the kit's measured Kubernetes pools to their stack entries and propose new bounds.

A Kubernetes pool is the kit's when its namespaces carry the labels the kit writes on them
(:func:`infra.k8s.labels.team_labels`, exported by kube-state-metrics'
``--metric-labels-allowlist``): ``app.kubernetes.io/managed-by: gpupool``, ``gpupool.io/pool``
its name and ``environment`` one value; its stack entry is the ``gpupool:kubernetes[]`` item of
that name in the stack of that ``gpupool:environment``. Then, for a pool measured over the whole
window (status ``measured``, capacity in every bucket) for at least the minimum span, per team
whose namespace is the kit's and labelled with that team (never across teams):

- each inference workload and the remote-GPU proxy (their KEDA ScaledObject's bounds):
  ``minReplicas`` down to the floor (the need's high percentile plus headroom, at least 1),
  ``maxReplicas`` to 1.25 × the peak replicas when that peak stayed under half the maximum
  (never below the new minimum or the floor), ``targetGpuUtilisation`` up to 70 % when lower;
- the team's ``gpuQuota`` (its namespace's ResourceQuota) to 1.25 × the peak allocation when
  that peak stayed under half the quota, never below the allocation's floor nor what the stack
  lets the namespace run (its workloads' new maximum replicas, its batch parallelism).

Bounds only go down (targets only up). The cluster's own figures must be the stack's: a
namespace quota or a ScaledObject maximum the cluster reports that differs from the stack file
means the file is not what runs, and that item is left alone. Only keys the file writes are
changed. Every pool, team or workload left alone says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.config.kubernetes import KubernetesPoolConfig, TeamConfig
from gpupool.debt.model import PoolFigures
from gpupool.debt.window import Window
from gpupool.rightsize.evidence import DEFAULT_TARGET, Evidence
from gpupool.rightsize.kube_series import (
    deployment_pods,
    namespace_allocation,
    quota_evidence,
    replicas_evidence,
    saved_replicas,
)
from gpupool.rightsize.propose import (
    MAX_HEADROOM,
    MAX_SHARE,
    Change,
    Outcome,
    Proposal,
    StackEntry,
)

KeyPath = tuple[str | int, ...]
SECTION = "gpupool:kubernetes"
MANAGED_BY = "app_kubernetes_io_managed_by"  # kube-state-metrics' names for the kit's labels
POOL = "gpupool_io_pool"
PROXY_NAME = "gpu-proxy"  # infra.k8s.proxy.PROXY_NAME: its Deployment and ScaledObject


@dataclass
class KubeProposal(Proposal):
    """A proposal for one item of a Kubernetes pool: a workload's bounds or a team's quota."""

    paths: dict[str, KeyPath] = field(default_factory=dict)  # change key → its key path

    def key_path(self, change: Change) -> KeyPath:
        return self.paths[change.key]


@dataclass(frozen=True)
class _Pool:
    """One matched pool: its figures, stack entry and config, and the window's facts."""

    f: PoolFigures
    entry: StackEntry
    index: int
    config: KubernetesPoolConfig
    window: Window
    pct: float
    headroom: float

    def raw(self, *path: str | int) -> Mapping[str, Any]:
        node: Any = self.entry.flat.get(SECTION, [])
        for part in (self.index, *path):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return {}
        return node if isinstance(node, Mapping) else {}


def _ceil(v: float) -> int:
    return math.ceil(round(v, 9))


def _match(f: PoolFigures, stacks: Sequence[StackEntry]
           ) -> tuple[StackEntry, int, KubernetesPoolConfig] | str:
    kit = {ns: lb for ns, lb in f.namespace_labels.items()
           if lb.get(MANAGED_BY) == "gpupool" and lb.get(POOL) == f.name}
    if not kit:
        return ("not the kit's: none of its namespaces carries app.kubernetes.io/managed-by="
                f"gpupool and gpupool.io/pool={f.name} in kube_namespace_labels (the "
                "kube-state-metrics allowlist in docs/debt.md)")
    envs = sorted({lb.get("environment", "") for lb in kit.values()})
    if len(envs) != 1 or not envs[0]:
        return (f"its namespaces' environment labels are {', '.join(repr(e) for e in envs)}: "
                "expected one environment")
    found = [(s, i, k) for s in stacks if s.config.environment == envs[0]
             for i, k in enumerate(s.config.kubernetes) if k.name == f.name]
    if not found:
        return f"no stack of environment {envs[0]!r} has a Kubernetes pool {f.name!r}"
    if len(found) > 1:
        return f"Kubernetes pool {f.name!r} of environment {envs[0]!r} is in {len(found)} " \
               "stacks: ambiguous"
    return found[0]


def _unfit(f: PoolFigures, window: Window, min_span_hours: float) -> str | None:
    if f.status != "measured":
        return f"{f.status}: bounds are changed only for a pool measured over the whole window"
    known = sum(c is not None for c in f.timeline.capacity)
    if known < len(f.timeline.capacity):
        return (f"partly measured: its nodes' capacity is known in {known} of "
                f"{len(f.timeline.capacity)} buckets")
    if window.hours < min_span_hours:
        return (f"the window is {window.hours:g} h, less than the minimum span "
                f"({min_span_hours:g} h)")
    return None


def propose_kubernetes(figures: Sequence[PoolFigures], window: Window,
                       stacks: Sequence[StackEntry], *, pct: float, headroom: float,
                       min_span_hours: float) -> Outcome:
    out = Outcome()
    kube = [f for f in figures if f.platform != "aws"]
    seen: set[tuple[str, str]] = set()
    for f in kube:
        key = (str(getattr(f.pool, "source", "")), f.name)
        if key in seen:  # the same Prometheus read for two stacks
            continue
        seen.add(key)
        found = _match(f, stacks)
        if isinstance(found, str):
            out.skipped.append((f.name, found))
            continue
        why = _unfit(f, window, min_span_hours)
        if why:
            out.skipped.append((f.name, why))
            continue
        pool = _Pool(f, found[0], found[1], found[2], window, pct, headroom)
        for t_index, team in enumerate(pool.config.teams):
            _team(pool, t_index, team, kube, out)
    return out


def _team(pool: _Pool, t_index: int, team: TeamConfig, figures: Sequence[PoolFigures],
          out: Outcome) -> None:
    ns, f = team.namespace_name, pool.f
    shown = f"{f.name}/{ns}"
    labels = f.namespace_labels.get(ns)
    if labels is None or labels.get(MANAGED_BY) != "gpupool" or labels.get(POOL) != f.name:
        out.skipped.append((shown, "the namespace is not labelled as the kit's (managed-by, "
                            "gpupool.io/pool) in kube_namespace_labels"))
        return
    if labels.get("team") != team.name:
        out.skipped.append((shown, f"its team label is {labels.get('team')!r}, its stack "
                            f"entry is team {team.name!r}'s: never changed across teams"))
        return
    cfg = pool.config
    new_max: list[int] = []
    for w_index, w in enumerate(cfg.workloads):
        if w.team != team.name:
            continue
        if w.type == "batch":
            new_max.append(w.parallelism)  # a Job's shape, not a bound: never changed
            continue
        new_max.append(_replicas(pool, team, w.name, w.min_replicas, w.max_replicas,
                                 w.target_gpu_utilisation, ("workloads", w_index),
                                 f"workloads.{w.name}", out))
    proxy = cfg.remote_gpu
    if proxy is not None and proxy.team == team.name:
        new_max.append(_replicas(pool, team, PROXY_NAME, proxy.min_replicas, proxy.max_replicas,
                                 proxy.target_gpu_utilisation, ("remoteGpu",), "remoteGpu",
                                 out))
    _quota(pool, t_index, team, sum(new_max), figures, out)


def _proposal(pool: _Pool, shown: str, team: str, changes: dict[KeyPath, Change],
              ev: Evidence, saved_gpu_buckets: float) -> KubeProposal:
    w = pool.window
    month = saved_gpu_buckets * w.bucket_hours * (HOURS_PER_MONTH / w.hours) if w.hours else 0.0
    price = pool.f.price_per_gpu_hour
    return KubeProposal(shown, pool.entry.stack, pool.entry.path, SECTION, pool.index, team,
                        list(changes.values()), ev, month,
                        None if price is None else month * price,
                        paths={c.key: p for p, c in changes.items()})


def _replicas(pool: _Pool, team: TeamConfig, name: str, old_min: int, old_max: int,
              target: float, path: tuple[str | int, ...], label: str, out: Outcome) -> int:
    """Propose one ScaledObject's bounds; the maximum replicas it keeps (for the quota)."""
    f, w = pool.f, pool.window
    shown = f"{f.name}/{team.namespace_name}/{name}"
    if pool.config.time_slicing_replicas:
        out.skipped.append((shown, "time-sliced GPUs: a replica's share of the measured use "
                            "is not known"))
        return old_max
    hpa = [a for a in f.autoscalers
           if a.get("namespace") == team.namespace_name and a.get("name") == name]
    running = {float(str(a.get("max_replicas"))) for a in hpa}
    if running and running != {float(old_max)}:
        out.skipped.append((shown, f"the cluster's ScaledObject allows {max(running):g} "
                            f"replicas, the stack file {old_max}: the file is not what runs"))
        return old_max
    pods = deployment_pods(f.pods, team.namespace_name, name)
    if not pods:
        out.skipped.append((shown, "no pod of it ran in the window"))
        return old_max
    ev, cover = replicas_evidence(pods, w.buckets, w.bucket_hours, target, pool.pct,
                                  pool.headroom)
    if not cover.whole:
        out.skipped.append((shown, f"partly measured: its pods' use is known in "
                            f"{cover.measured} of {cover.buckets} buckets"))
        return old_max
    raw = pool.raw(*path)
    base: KeyPath = ("config", SECTION, pool.index, *path)
    changes: dict[KeyPath, Change] = {}
    new_min = max(ev.floor, 1)
    if new_min < old_min and "minReplicas" in raw:
        changes[(*base, "minReplicas")] = Change(f"{label}.minReplicas", old_min, new_min)
    else:
        new_min = old_min
    keep_max = old_max
    peak = ev.peak_in_service
    if peak is not None and peak < MAX_SHARE * old_max:
        proposed = max(_ceil(peak * MAX_HEADROOM), new_min, ev.floor, 1)
        if proposed < old_max and "maxReplicas" in raw:
            changes[(*base, "maxReplicas")] = Change(f"{label}.maxReplicas", old_max, proposed)
            keep_max = proposed
        elif proposed < old_max:
            out.skipped.append((f"{shown} maxReplicas", f"{proposed} would do, but the file "
                                f"does not write maxReplicas (default {old_max}): not added"))
    new_target = target
    if target < DEFAULT_TARGET and "targetGpuUtilisation" in raw:
        new_target = DEFAULT_TARGET
        changes[(*base, "targetGpuUtilisation")] = Change(
            f"{label}.targetGpuUtilisation", target, DEFAULT_TARGET)
    if not changes:
        out.skipped.append((shown, f"already sized for its need (p{pool.pct:g}: "
                            f"{ev.need_at_pct:.2f} replica(s), + headroom {ev.floor})"))
        return keep_max
    out.proposals.append(_proposal(pool, shown, team.name, changes, ev,
                                   saved_replicas(ev, old_min, new_min, new_target)))
    return keep_max


def _quota(pool: _Pool, t_index: int, team: TeamConfig, stack_runs: int,
           figures: Sequence[PoolFigures], out: Outcome) -> None:
    f, ns = pool.f, team.namespace_name
    shown = f"{f.name}/{ns} gpuQuota"
    running = f.namespace_quota.get(ns)
    if running is not None and running != team.gpu_quota:
        out.skipped.append((shown, f"the cluster's ResourceQuota is {running:g} GPUs, the "
                            f"stack file {team.gpu_quota}: the file is not what runs"))
        return
    allocated, cover = namespace_allocation(figures, f, ns)
    if not cover.whole:
        out.skipped.append((shown, f"partly measured: {cover.measured} of {cover.buckets} "
                            "buckets"))
        return
    line = next((c for c in f.lines if c.kind == "namespace" and c.namespace == ns), None)
    ev = quota_evidence(allocated, pool.window.bucket_hours, pool.pct, pool.headroom,
                        line.sums.utilisation if line is not None else None)
    old = team.gpu_quota
    peak = ev.peak_in_service or 0.0
    if peak >= MAX_SHARE * old:
        out.skipped.append((shown, f"its peak allocation ({peak:g} GPUs) is at least half "
                            f"the quota ({old})"))
        return
    new = max(_ceil(peak * MAX_HEADROOM), ev.floor, stack_runs)
    if new >= old:
        out.skipped.append((shown, f"already sized: the peak allocation {peak:g} GPUs and "
                            f"what the stack runs there ({stack_runs}) need {new}"))
        return
    if "gpuQuota" not in pool.raw("teams", t_index):
        out.skipped.append((shown, "the file does not write gpuQuota: not added"))
        return
    path: KeyPath = ("config", SECTION, pool.index, "teams", t_index, "gpuQuota")
    out.proposals.append(_proposal(pool, shown.removesuffix(" gpuQuota"), team.name,
                                   {path: Change(f"teams.{team.name}.gpuQuota", old, new)},
                                   ev, 0.0))
