"""What gpu-capacity-vs-utilisation counts as a raise of a Kubernetes pool (policies.rules.
_k8s_raise), on the shapes Pulumi and Terraform write."""

from __future__ import annotations

from typing import Any

from policies.model import UNKNOWN, ChangeKind, ResourceChange, normalise_inputs, resource_kind
from policies.rules._k8s_raise import NO_BOUND, kube_raise


def change(type_: str, old: dict[str, Any] | None, new: dict[str, Any]) -> ResourceChange:
    return ResourceChange(
        address=f"{type_}.x", type=type_, name="x",
        change=ChangeKind.CREATE if old is None else ChangeKind.UPDATE,
        new=normalise_inputs(new), old=None if old is None else normalise_inputs(old),
        source="test", kind=resource_kind(type_))


def scaled(most: Any, *, labels: dict[str, str] | None = None,
           query: str = "sum(DCGM_FI_DEV_GPU_UTIL)") -> dict[str, Any]:
    spec: dict[str, Any] = {"triggers": [{"type": "prometheus", "metadata": {"query": query}}]}
    if most is not None:
        spec["maxReplicaCount"] = most
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": "embeddings", "namespace": "ml", "labels": labels or {}},
            "spec": spec}


KEDA = "kubernetes:keda.sh/v1alpha1:ScaledObject"


def test_a_gpu_scaledobject_raised_and_keda_s_default_of_100() -> None:
    r = kube_raise(change(KEDA, scaled(6), scaled(12)))
    assert r is not None and r.bounds == (("maxReplicaCount", 6.0, 12.0),)
    assert r.describe() == "raises ScaledObject ml/embeddings maxReplicaCount 6 → 12"
    assert r.pool == "embeddings"  # no pool label: its own name
    # removing maxReplicaCount is KEDA's default, 100
    gone = kube_raise(change(KEDA, scaled(6), scaled(None)))
    assert gone is not None and gone.bounds == (("maxReplicaCount", 6.0, 100.0),)


def test_what_is_not_a_gpu_pools_raise() -> None:
    cpu = scaled(6, query="sum(rate(http_requests_total[1m]))")
    assert kube_raise(change(KEDA, cpu, {**cpu, "spec": {**cpu["spec"],
                                                         "maxReplicaCount": 12}})) is None
    assert kube_raise(change(KEDA, None, scaled(12))) is None  # new: no history
    assert kube_raise(change(KEDA, scaled(12), scaled(6))) is None  # lowered
    labelled = kube_raise(change(KEDA, scaled(6, labels={"gpupool.io/pool": "onprem"},
                                              query="cpu"),
                                 scaled(8, labels={"gpupool.io/pool": "onprem"}, query="cpu")))
    assert labelled is not None and labelled.pool == "onprem"  # the kit's label decides


def test_a_terraform_manifest_nodepool_and_an_unknown_limit() -> None:
    def nodepool(limit: Any) -> dict[str, Any]:
        return {"manifest": {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                             "metadata": {"name": "gpu"},
                             "spec": {"limits": {"nvidia.com/gpu": limit, "cpu": "64"}}}}

    r = kube_raise(change("kubernetes_manifest", nodepool("4"), nodepool("16")))
    assert r is not None and r.bounds == (("limits.nvidia.com/gpu", 4.0, 16.0),)
    unknown = kube_raise(change("kubernetes_manifest", nodepool("4"), nodepool(UNKNOWN)))
    assert unknown is not None and unknown.bounds == ()
    assert unknown.unknown == "NodePool gpu limits.nvidia.com/gpu is unknown until apply"


def test_a_quota_removed_is_no_bound_at_all() -> None:
    def quota(hard: dict[str, str]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "gpu-quota", "namespace": "ml"}, "spec": {"hard": hard}}

    r = kube_raise(change("kubernetes:core/v1:ResourceQuota",
                          quota({"requests.nvidia.com/gpu": "8", "requests.cpu": "64"}),
                          quota({"requests.cpu": "64"})))
    assert r is not None and r.bounds == (("hard.requests.nvidia.com/gpu", 8.0, NO_BOUND),)
    assert r.describe().endswith("hard.requests.nvidia.com/gpu 8 → no limit")
    cpu_only = change("kubernetes:core/v1:ResourceQuota", quota({"requests.cpu": "64"}),
                      quota({"requests.cpu": "128"}))
    assert kube_raise(cpu_only) is None
