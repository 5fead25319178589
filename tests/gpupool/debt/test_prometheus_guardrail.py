"""The report from the real Prometheus fixture is the snapshot gpu-capacity-vs-utilisation
judges Kubernetes pools by: `gpupool debt --prometheus URL --format json`, then the rule on
raises of the pools' KEDA ScaledObject, Karpenter NodePool and ResourceQuota.

The week (prom_history): eks-gpu (Karpenter, g6.xlarge) measured at 75.6 of 252 allocated
GPU-hours, 30 %; onprem partial (exporter gaps, a node without an exporter); dark not measured.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from gpupool.cli import main
from gpupool.debt.window import iso
from policies.rules import get_rule
from policies.rules.base import Example

RULE = get_rule("gpu-capacity-vs-utilisation")


@pytest.fixture(scope="module")
def snapshot(prometheus: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("guardrail") / "utilisation.json"
    code = main(["debt", "--no-aws", "--start", iso(prometheus.start), "--end",
                 iso(prometheus.end), "--period", "3600", "--resolution", "1800", "--format",
                 "json", "--output", str(out), "--prometheus", prometheus.url])
    assert code == 0
    return out


def _object(kind: str, api: str, name: str, pool: str, old: dict[str, Any],
            new: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"gpupool.io/pool": pool}}
    if namespace:
        meta["namespace"] = namespace
    group = api if "/" in api else f"core/{api}"
    return {"type": f"kubernetes:{group}:{kind}", "name": name,
            "old": {"apiVersion": api, "kind": kind, "metadata": meta, "spec": old},
            "new": {"apiVersion": api, "kind": kind, "metadata": meta, "spec": new}}


def _judge(snapshot: Path, resource: dict[str, Any]) -> list[Any]:
    ex = Example(title="t", allowed=False, resources=[resource])
    params = {"utilisationSnapshot": str(snapshot), "maxSnapshotAgeHours": 0}
    return list(RULE.run(ex.changes(), load_catalog(), params))


def test_the_snapshot_keeps_its_shape_with_a_platform_per_pool(snapshot: Path) -> None:
    doc = json.loads(snapshot.read_text())
    rows = {p["pool"]: p for p in doc["pools"]}
    assert {k: rows[k]["platform"] for k in ("onprem", "eks-gpu", "lab", "dark")} == {
        "onprem": "on-prem", "eks-gpu": "kubernetes", "lab": "on-prem", "dark": "kubernetes"}
    for key in ("window", "pools", "generated_at"):
        assert key in doc


def test_raising_the_idle_karpenter_pools_gpu_limit_is_denied_with_its_figures(
        snapshot: Path) -> None:
    (f,) = _judge(snapshot, _object("NodePool", "karpenter.sh/v1", "gpupool-eks-gpu", "eks-gpu",
                                    {"limits": {"nvidia.com/gpu": "4"}},
                                    {"limits": {"nvidia.com/gpu": "8"}}))
    assert not (f.unknown or f.advisory_only)
    assert f.message.startswith(
        "raises NodePool gpupool-eks-gpu limits.nvidia.com/gpu 4 → 8 on GPU pool eks-gpu, "
        "which ran at 30.0% GPU utilisation over 7 days")
    assert f"176.4 GPU-hours allocated and not used (${176.4 * 0.8048:,.2f}) of 252.0" \
        in f.message
    assert f.detail["platform"] == "kubernetes"


def test_the_partial_onprem_pool_and_the_dark_one_cannot_vouch(snapshot: Path) -> None:
    (onprem,) = _judge(snapshot, _object(
        "ScaledObject", "keda.sh/v1alpha1", "embeddings", "onprem",
        {"maxReplicaCount": 6}, {"maxReplicaCount": 12}, "gpu-ml-platform"))
    assert onprem.unknown and "could not measure (partial" in onprem.message
    (dark,) = _judge(snapshot, _object(
        "ResourceQuota", "v1", "gpu-quota", "dark", {"hard": {"requests.nvidia.com/gpu": "1"}},
        {"hard": {"requests.nvidia.com/gpu": "2"}}, "gpu-ml-platform"))
    assert dark.unknown and "no DCGM exporter series" in dark.message


def test_lowering_or_an_unknown_pool(snapshot: Path) -> None:
    assert _judge(snapshot, _object("NodePool", "karpenter.sh/v1", "gpupool-eks-gpu", "eks-gpu",
                                    {"limits": {"nvidia.com/gpu": "4"}},
                                    {"limits": {"nvidia.com/gpu": "2"}})) == []
    (new,) = _judge(snapshot, _object("NodePool", "karpenter.sh/v1", "gpupool-x", "elsewhere",
                                      {"limits": {"nvidia.com/gpu": "4"}},
                                      {"limits": {"nvidia.com/gpu": "8"}}))
    assert new.advisory_only and "has no measurements for this pool" in new.message
