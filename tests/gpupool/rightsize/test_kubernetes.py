"""Kubernetes pools' proposals from report figures built by hand: which pool, team or workload
is left alone and why, and that no bound goes below what the window needed."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.config.loader import load_stack
from gpupool.debt.model import Charge, KubePool, PodFigures, PoolFigures, Sums, Timeline
from gpupool.debt.window import Window
from gpupool.rightsize.kubernetes import propose_kubernetes
from gpupool.rightsize.propose import StackEntry

ROOT = Path(__file__).resolve().parents[3]
N = 168
WINDOW = Window(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 8, tzinfo=UTC), 3600)
ML, RS = "gpu-ml-platform", "gpu-research"
KIT = {"app_kubernetes_io_managed_by": "gpupool", "gpupool_io_pool": "onprem",
       "environment": "prod"}


@pytest.fixture(scope="module")
def prod() -> StackEntry:
    s = load_stack(str(ROOT / "stacks" / "Pulumi.prod.yaml"))
    return StackEntry("prod", "stacks/Pulumi.prod.yaml", s.config, s.flat)


def tl(alloc: list[float | None], used: list[float | None] | None = None) -> Timeline:
    used = used if used is not None else [None] * len(alloc)
    measured = [a if u is not None else (None if a is None else 0.0)
                for a, u in zip(alloc, used, strict=True)]
    return Timeline((None,) * len(alloc), tuple(alloc), tuple(used), tuple(measured))


def pod(ns: str, name: str, alloc: list[float | None], used: list[float | None]) -> PodFigures:
    return PodFigures("onprem", ns, name, "onprem-1", "x", "measured", 0.0, 0.0, 0.0, 0.0, 0.0,
                      None, tl(alloc, used))


def figures(*, replicas: float = 2, util: float = 0.1, eval_gpus: float = 2,
            status: str = "measured", labels: dict[str, dict[str, str]] | None = None,
            quota: float = 8, hpa: float = 6) -> PoolFigures:
    """prod's onprem pool: embeddings at ``replicas`` each ``util`` busy, nightly-eval's
    ``eval_gpus`` two hours a day; the kit's labels, quotas and HPA as the file says."""
    emb = [pod(ML, f"embeddings-abc12-p{i}", [1.0] * N, [util] * N)
           for i in range(int(replicas))]
    nightly = [eval_gpus if h % 24 < 2 else None for h in range(N)]
    lines = [Charge("onprem", "ml-platform", "namespace", "measured", Sums(),
                    tl([replicas] * N, [replicas * util] * N), namespace=ML),
             Charge("onprem", "research", "namespace", "measured", Sums(),
                    tl(nightly, [None if a is None else a * 0.6 for a in nightly]),
                    namespace=RS)]
    total = Timeline((16.0,) * N, (replicas,) * N, (replicas * util,) * N, (replicas,) * N)
    return PoolFigures(
        pool=KubePool("onprem", "on-prem", "http://prom:9090", "ml-platform", None, "", "L40S",
                      2.0, 8),
        status=status, sums=Sums(), timeline=total, memory_utilisation=None,
        price_per_gpu_hour=2.0, group_metric_hours=N, expected_hours=N, peak_in_service=None,
        lines=lines, pods=emb, namespace_quota={ML: quota, RS: 8},
        autoscalers=[{"pool": "onprem", "namespace": ML, "kind": "ScaledObject",
                      "name": "embeddings", "max_replicas": hpa}],
        namespace_labels=labels if labels is not None else {
            ML: {**KIT, "team": "ml-platform"}, RS: {**KIT, "team": "research"}})


def run(prod: StackEntry, f: PoolFigures, *, min_span: float = 168,
        stacks: list[StackEntry] | None = None):  # type: ignore[no-untyped-def]
    return propose_kubernetes([f], WINDOW, stacks or [prod], pct=95, headroom=0.2,
                              min_span_hours=min_span)


def changes(outcome) -> dict[str, tuple[float, float]]:  # type: ignore[no-untyped-def]
    return {c.key: (c.old, c.new) for p in outcome.proposals for c in p.changes}


def test_an_idle_pool_gets_its_bounds_and_quotas(prod: StackEntry) -> None:
    out = run(prod, figures())
    assert changes(out) == {"workloads.embeddings.minReplicas": (2, 1),
                            "workloads.embeddings.maxReplicas": (6, 3),
                            "teams.ml-platform.gpuQuota": (8, 3),
                            "teams.research.gpuQuota": (8, 3)}
    emb = next(p for p in out.proposals if p.pool.endswith("embeddings"))
    assert emb.key_path(emb.changes[0]) == ("config", "gpupool:kubernetes", 0, "workloads", 0,
                                            "minReplicas")
    assert emb.gpu_hours_per_month == pytest.approx(730.0)  # one GPU fewer, every hour
    assert emb.usd_per_month == pytest.approx(730.0 * 2.0)


@pytest.mark.parametrize(("f", "why"), [
    (figures(status="partial"), "onprem: partial: bounds are changed only for a pool measured"),
    (figures(status="not measured"), "onprem: not measured"),
    (figures(labels={ML: {"team": "ml-platform"}}), "onprem: not the kit's"),
    (figures(labels={ML: {**KIT, "environment": "dev", "team": "ml-platform"}}),
     "onprem: no stack of environment 'dev' has a Kubernetes pool 'onprem'"),
])
def test_a_pool_that_cannot_be_judged_is_left_alone(prod: StackEntry, f: PoolFigures,
                                                    why: str) -> None:
    out = run(prod, f)
    assert not out.proposals
    assert any(f"{name}: {reason}".startswith(why) for name, reason in out.skipped), out.skipped


def test_a_window_under_the_minimum_span_changes_nothing(prod: StackEntry) -> None:
    out = run(prod, figures(), min_span=14 * 24)
    assert not out.proposals
    assert out.skipped == [("onprem", "the window is 168 h, less than the minimum span (336 h)")]


def test_capacity_missing_in_a_bucket_is_partly_measured(prod: StackEntry) -> None:
    f = figures()
    cap = list(f.timeline.capacity)
    cap[40] = None
    out = run(prod, replace(f, timeline=replace(f.timeline, capacity=tuple(cap))))
    assert not out.proposals
    assert out.skipped == [("onprem", "partly measured: its nodes' capacity is known in 167 "
                            "of 168 buckets")]


def test_a_workload_whose_use_is_unknown_in_a_bucket_is_left_alone(prod: StackEntry) -> None:
    f = figures()
    used = [0.1] * N
    used[7] = None
    f.pods[1] = pod(ML, "embeddings-abc12-p1", [1.0] * N, used)
    out = run(prod, f)
    assert "workloads.embeddings.minReplicas" not in changes(out)
    assert ("onprem/gpu-ml-platform/embeddings",
            "partly measured: its pods' use is known in 167 of 168 buckets") in out.skipped
    # the quota still follows the allocation, but never below what the workload may run (6)
    assert changes(out)["teams.ml-platform.gpuQuota"] == (8, 6)


def test_never_across_teams(prod: StackEntry) -> None:
    labels = {ML: {**KIT, "team": "ml-platform"}, RS: {**KIT, "team": "vision"}}
    out = run(prod, figures(labels=labels))
    assert not any(k.startswith("teams.research") for k in changes(out))
    assert ("onprem/gpu-research", "its team label is 'vision', its stack entry is team "
            "'research''s: never changed across teams") in out.skipped


def test_a_cluster_that_is_not_what_the_file_says_is_left_alone(prod: StackEntry) -> None:
    out = run(prod, figures(quota=12, hpa=10))
    assert set(changes(out)) == {"teams.research.gpuQuota"}
    assert ("onprem/gpu-ml-platform/embeddings", "the cluster's ScaledObject allows 10 "
            "replicas, the stack file 6: the file is not what runs") in out.skipped
    assert ("onprem/gpu-ml-platform gpuQuota", "the cluster's ResourceQuota is 12 GPUs, the "
            "stack file 8: the file is not what runs") in out.skipped


def test_two_stacks_of_one_environment_are_ambiguous(prod: StackEntry) -> None:
    twin = StackEntry("prod-copy", "stacks/Pulumi.prod-copy.yaml", prod.config, prod.flat)
    out = run(prod, figures(), stacks=[prod, twin])
    assert not out.proposals
    assert out.skipped == [("onprem", "Kubernetes pool 'onprem' of environment 'prod' is in 2 "
                            "stacks: ambiguous")]


@given(replicas=st.integers(1, 6), util=st.floats(0.0, 1.0), eval_gpus=st.integers(1, 8))
def test_no_bound_goes_below_what_the_window_needed(prod: StackEntry, replicas: int,
                                                     util: float, eval_gpus: int) -> None:
    out = run(prod, figures(replicas=replicas, util=util, eval_gpus=eval_gpus))
    got = changes(out)
    need = math.ceil(round(replicas * util / 0.7 * 1.2, 9))
    lo, hi = got.get("workloads.embeddings.minReplicas"), got.get(
        "workloads.embeddings.maxReplicas")
    if lo is not None:  # a minimum is lowered, never raised, and never below the need
        assert max(need, 1) <= lo[1] < lo[0]
    if hi is not None:
        assert max(need, lo[1] if lo else 2, replicas) <= hi[1] < hi[0]
    hi = hi or (6, 6)
    ml = got.get("teams.ml-platform.gpuQuota", (8, 8))[1]
    rs = got.get("teams.research.gpuQuota", (8, 8))[1]
    assert ml >= max(math.ceil(replicas * 1.2), hi[1]) and ml <= 8
    assert rs >= max(math.ceil(eval_gpus * 1.25), 2) or rs == 8  # nightly-eval's parallelism


def test_the_remote_gpu_proxy_gets_its_bounds_and_its_team_quota_keeps_them(
        prod: StackEntry) -> None:
    import copy

    from gpupool.config.loader import parse_flat_config

    flat = copy.deepcopy(prod.flat)
    flat["gpupool:kubernetes"][0]["remoteGpu"] = {
        "team": "research", "image": "registry.example.com/gpu-remoting-server:1.4.2",
        "minReplicas": 3, "maxReplicas": 8, "targetGpuUtilisation": 60}
    config, _ = parse_flat_config(flat, "Pulumi.prod.yaml", base_dir=ROOT)
    entry = StackEntry("prod", "stacks/Pulumi.prod.yaml", config, flat)
    f = figures()
    # three proxies all week, each 20 % busy: 0.6 GPUs used
    f.pods += [pod(RS, f"gpu-proxy-7f9c2-p{i}", [1.0] * N, [0.2] * N) for i in range(3)]
    f.lines[1] = replace(f.lines[1], timeline=tl([3 + (2 if h % 24 < 2 else 0)
                                                  for h in range(N)], [0.6] * N))
    got = changes(run(entry, f, stacks=[entry]))
    assert got["remoteGpu.minReplicas"] == (3, 2)  # p95 need 0.6 / 0.6 = 1 → + 20 % → 2
    assert got["remoteGpu.targetGpuUtilisation"] == (60, 70)
    assert got["remoteGpu.maxReplicas"] == (8, 4)  # peak 3 under half of 8: ⌈3 x 1.25⌉
    # research: peak 5 GPUs (3 proxies + nightly-eval's 2) is over half of 8: left alone
    assert "teams.research.gpuQuota" not in got
