"""What a Kubernetes pool's figures cannot say by themselves: where they are partial and why.

Each finding names the nodes, namespaces or pods concerned (the first few, and how many), so a
reader can fix the cluster, not just distrust the number: nodes with GPUs and no exporter
(``not measured``), exporter gaps (``partial``), use the exporter did not attribute, time-sliced
GPUs shared by several pods, namespaces without a team label, impossible readings, and a stack
config that expects more GPUs than the cluster showed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpupool.debt.model import PoolFigures

SHOWN = 5
ALLOWLIST = ("kube-state-metrics --metric-labels-allowlist="
             "namespaces=[team,cost-center,gpupool.io/pool]")


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _f(pool: str, kind: str, message: str) -> dict[str, str]:
    return {"pool": pool, "finding": kind, "message": message}


def pool_findings(f: PoolFigures, nodes: Sequence[Any], node_stats: Mapping[str, Mapping[str,
                  float]], teams: Mapping[str, tuple[str, str | None, bool]], shared: int,
                  hint: Any, label_sets: Mapping[str, int]) -> list[dict[str, str]]:
    name = f.name
    out: list[dict[str, str]] = []
    dark = sorted(n for n, s in node_stats.items() if not s["readings"] and s["alloc"] > 0)
    if dark:
        hours = sum(node_stats[n]["alloc"] for n in dark)
        out.append(_f(name, "not-measured", (
            f"no DCGM exporter series from node(s) {_names(dark)} while {hours:,.1f} GPU-hours "
            "were allocated there: their use is not measured (kept out of use and debt, never "
            "read as idle); run the exporter on every GPU node, with NODE_NAME set so its "
            "Hostname label is the node's name")))
    gaps = sorted(n for n, s in node_stats.items() if s["readings"] and s["unmeasured"] > 0)
    if gaps:
        hours = sum(node_stats[n]["unmeasured"] for n in gaps)
        out.append(_f(name, "partly-measured", (
            f"exporter gaps on node(s) {_names(gaps)}: {hours:,.1f} allocated GPU-hours have no "
            "reading; use, debt and utilisation cover the measured part only")))
    for line in f.lines:
        if line.kind == "unattributed":
            out.append(_f(name, "unattributed", (
                f"{line.sums.allocated_gpu_hours or 0:,.1f} GPU-hours were allocated to pods the "
                f"exporter did not label on their GPUs ({_names(list(line.pods))}): their GPUs' "
                f"use ({line.sums.used_gpu_hours or 0:,.1f} GPU-hours) is counted in the pool as "
                "(unattributed), never dropped and never given to a namespace; check the "
                "exporter's pod mapping (DCGM_EXPORTER_KUBERNETES and the kubelet's "
                "pod-resources socket)")))
    if shared:
        out.append(_f(name, "shared-gpus", (
            f"time-sliced GPUs were held by several pods at once ({shared} GPU-buckets): a "
            "shared GPU's use is split between its pods by what each requested, and no pod is "
            "counted above 100 % of its share")))
    untagged = sorted(ns for ns, (_, _, tagged) in teams.items() if not tagged)
    if untagged:
        out.append(_f(name, "untagged", (
            f"namespace(s) {_names(untagged)} carry no team label: their GPU-hours are charged "
            f"to (untagged); label them and let {ALLOWLIST} export the labels")))
    changed = sorted(ns for ns, n in label_sets.items() if n > 1 and ns in teams)
    if changed:
        out.append(_f(name, "labels-changed", (
            f"namespace(s) {_names(changed)} changed their chargeback labels during the "
            "window: charged to the labels they ended it with")))
    if f.impossible_readings:
        out.append(_f(name, "impossible-reading", (
            f"{f.impossible_readings} impossible reading(s) left out, never clamped "
            "(DCGM_FI_DEV_GPU_UTIL outside 0-100 %, DCGM_FI_PROF_GR_ENGINE_ACTIVE outside "
            "0-1): the exporter is broken, so the guardrail cannot vouch for the pool")))
    peak = max((c for c in f.timeline.capacity if c is not None), default=None)
    if hint.gpus and peak is not None and peak + 1e-9 < hint.gpus:
        out.append(_f(name, "fewer-gpus", (
            f"the stack config says the pool has {hint.gpus} GPUs; its nodes offered at most "
            f"{peak:g} in the window")))
    if f.pool.team is None and (f.sums.idle_gpu_hours or 0) > 0:
        out.append(_f(name, "untagged-owner", (
            "no owner team for the nodes' capacity (the stack's team, or a team label on the "
            "nodes): their idle capacity is charged to (untagged)")))
    if not nodes:
        out.append(_f(name, "no-nodes", "no node offered GPUs in the window"))
    return out
