"""gpu-capacity-vs-utilisation's examples (the docs show them and the tests run them), with the
snapshots they are judged against: read through the rule's ``examples``, never by a check."""

from __future__ import annotations

from policies.rules.base import Example

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


def _snapshot(pools: list[dict[str, Any]], generated: str = "2026-11-30T06:00:00Z"
              ) -> dict[str, Any]:
    return {"generated_at": generated,
            "window": {"start": "2026-11-23T06:00:00Z", "end": "2026-11-30T06:00:00Z",
                       "period_s": 3600},
            "pools": pools}


def _pool(name: str, utilisation: float | None, *, debt: float | None = None,
          usd_: float | None = None, status: str = "measured", impossible: int = 0
          ) -> dict[str, Any]:
    return {"pool": name, "team": "research", "instance_type": "g4dn.xlarge",
            "gpus_per_instance": 1, "status": status, "min_size": 2, "desired_capacity": 2,
            "max_size": 4, "allocated_gpu_hours": 336.0, "utilisation": utilisation,
            "debt_gpu_hours": debt, "debt_usd": usd_, "impossible_readings": impossible}


def _group(name: str, old_max: int | None, new_max: int, *, min_size: int = 2,
           itype: str = "g4dn.xlarge") -> dict[str, Any]:
    new = {"name": name, "minSize": min_size, "maxSize": new_max, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceType": itype}]}}}
    out: dict[str, Any] = {"type": "aws:autoscaling/group:Group", "name": "pool", "new": new}
    if old_max is not None:
        out["old"] = {**new, "maxSize": old_max, "mixedInstancesPolicy": {
            "launchTemplate": {"overrides": [{"instanceType": "g4dn.xlarge"}]}}}
    return out


def _kube_pool(utilisation: float | None, status: str = "measured") -> dict[str, Any]:
    used = None if utilisation is None else round(2688.0 * utilisation, 1)
    return {"pool": "onprem", "platform": "on-prem", "team": "ml-platform",
            "instance_type": "", "gpus_per_instance": 8, "status": status,
            "allocated_gpu_hours": 2688.0, "used_gpu_hours": used, "utilisation": utilisation,
            "debt_gpu_hours": None if used is None else round(2688.0 - used, 1),
            "debt_usd": None if used is None else 0.0}


def _kube(kind: str, api: str, name: str, old_spec: dict[str, Any], new_spec: dict[str, Any],
          namespace: str | None = "gpu-ml-platform") -> dict[str, Any]:
    meta = {"name": name, "labels": {"gpupool.io/pool": "onprem", "team": "ml-platform"},
            **({} if namespace is None else {"namespace": namespace})}
    group = api if "/" in api else f"core/{api}"
    return {"type": f"kubernetes:{group}:{kind}", "name": name,
            "old": {"apiVersion": api, "kind": kind, "metadata": meta, "spec": old_spec},
            "new": {"apiVersion": api, "kind": kind, "metadata": meta, "spec": new_spec}}


_TRIGGER = [{"type": "prometheus", "metadata": {"query": "sum(DCGM_FI_DEV_GPU_UTIL)"}}]
_KEDA_RAISE = _kube("ScaledObject", "keda.sh/v1alpha1", "embeddings",
                    {"maxReplicaCount": 6, "triggers": _TRIGGER},
                    {"maxReplicaCount": 12, "triggers": _TRIGGER})
_QUOTA_RAISE = _kube("ResourceQuota", "v1", "gpu-quota",
                     {"hard": {"requests.nvidia.com/gpu": "8"}},
                     {"hard": {"requests.nvidia.com/gpu": "16"}})
_KUBE_IDLE = _snapshot([_kube_pool(0.08)])
_KUBE_BUSY = _snapshot([_kube_pool(0.66)])

_FRESH = {"maxSnapshotAgeHours": 0}  # the examples' snapshot has a fixed date: age not checked
_IDLE = _snapshot([_pool("gpu-inference", 0.12, debt=295.7, usd_=155.54)])
_BUSY = _snapshot([_pool("gpu-inference", 0.71, debt=97.4, usd_=51.23)])

EXAMPLES = (
    Example(
        title="Raising the max of a pool that runs at 12 %",
        allowed=False,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
        message_contains=["raises maxSize 4 → 8 (+4 GPUs of capacity, up to +$2.104/h)",
                          "ran at 12.0% GPU utilisation over 7 days",
                          "295.7 GPU-hours allocated and not used ($155.54)"],
    ),
    Example(
        title="Adding a GPU type to an idle pool (Terraform)",
        allowed=False,
        resources=[{"type": "aws_autoscaling_group", "name": "pool",
                    "address": "aws_autoscaling_group.pool",
                    "old": {"name": "gpu-inference", "min_size": 2, "max_size": 4,
                            "mixed_instances_policy": [{"launch_template": [{"override": [
                                {"instance_type": "g4dn.xlarge"}]}]}]},
                    "new": {"name": "gpu-inference", "min_size": 2, "max_size": 4,
                            "mixed_instances_policy": [{"launch_template": [{"override": [
                                {"instance_type": "g4dn.xlarge"},
                                {"instance_type": "g6.xlarge"}]}]}]}}],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
        message_contains=["adds GPU type g6.xlarge", "12.0% GPU utilisation"],
    ),
    Example(
        title="Raising the max of a busy pool",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _BUSY},
    ),
    Example(
        title="A per-pool threshold: batch pools may run at 10 %",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE, "thresholds": {"gpu-*": 10}},
    ),
    Example(
        title="Lowering the max of an idle pool",
        allowed=True,
        resources=[_group("gpu-inference", 8, 4)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
    ),
    Example(
        title="No snapshot: advisory 'cannot verify', never a block",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
    ),
    Example(
        title="A new pool (Pulumi autonames it at apply) has no history: advisory",
        allowed=True,
        resources=[_group("gpu-training", None, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
    ),
    Example(
        title="A stale snapshot cannot vouch for the pool",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={"maxSnapshotAgeHours": 48,
                "utilisationSnapshot": _snapshot([_pool("gpu-inference", 0.71)],
                                                 generated="2026-01-05T00:00:00Z")},
        message_contains=["cannot verify", "was taken 2026-01-05 00:00 UTC, more than "
                          "maxSnapshotAgeHours (48) ago",
                          "refresh it with gpupool debt"],
    ),
    Example(
        title="A pool the snapshot could not measure (no CloudWatch agent)",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _snapshot(
            [_pool("gpu-inference", None, status="not measured")])},
        message_contains=["cannot verify", "which the snapshot could not measure"],
    ),
    Example(
        title="A pool whose agent reported impossible values (150 % utilisation)",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _snapshot(
            [_pool("gpu-inference", 0.71, status="partial", impossible=3)])},
        message_contains=["cannot verify", "3 impossible value(s)"],
    ),
    Example(
        title="Kubernetes: raising a KEDA maxReplicaCount while the on-premises pool idles at 8 %",
        allowed=False,
        resources=[_KEDA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
        message_contains=["raises ScaledObject gpu-ml-platform/embeddings maxReplicaCount "
                          "6 → 12 on GPU pool onprem, which ran at 8.0% GPU utilisation",
                          "2,473.0 GPU-hours allocated and not used"],
    ),
    Example(
        title="Kubernetes: raising a namespace's GPU quota on an idle pool",
        allowed=False,
        resources=[_QUOTA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
        message_contains=["raises ResourceQuota gpu-ml-platform/gpu-quota "
                          "hard.requests.nvidia.com/gpu 8 → 16 on GPU pool onprem"],
    ),
    Example(
        title="Kubernetes: removing a Karpenter NodePool's GPU limit on an idle pool",
        allowed=False,
        resources=[_kube("NodePool", "karpenter.sh/v1", "gpupool-onprem",
                         {"limits": {"nvidia.com/gpu": "16"}}, {"limits": {"cpu": "256"}},
                         namespace=None)],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
        message_contains=["raises NodePool gpupool-onprem limits.nvidia.com/gpu 16 → no limit"],
    ),
    Example(
        title="Kubernetes: raising a NodePool's GPU limit on a busy pool",
        allowed=True,
        resources=[_kube("NodePool", "karpenter.sh/v1", "gpupool-onprem",
                         {"limits": {"nvidia.com/gpu": "16"}},
                         {"limits": {"nvidia.com/gpu": "24"}}, namespace=None)],
        params={**_FRESH, "utilisationSnapshot": _KUBE_BUSY},
    ),
    Example(
        title="Kubernetes: lowering a GPU quota on an idle pool",
        allowed=True,
        resources=[_kube("ResourceQuota", "v1", "gpu-quota",
                         {"hard": {"requests.nvidia.com/gpu": "8"}},
                         {"hard": {"requests.nvidia.com/gpu": "4"}})],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
    ),
    Example(
        title="Kubernetes: a pool with exporter gaps (partial) cannot vouch for a raise",
        allowed=False,
        unknown=True,
        resources=[_KEDA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _snapshot([_kube_pool(0.66, "partial")])},
        message_contains=["cannot verify", "which the snapshot could not measure (partial"],
    ),
    Example(
        title="Kubernetes: GPU nodes without a DCGM exporter (not measured)",
        allowed=False,
        unknown=True,
        resources=[_QUOTA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _snapshot([_kube_pool(None, "not measured")])},
        message_contains=["cannot verify", "no DCGM exporter series for its GPUs"],
    ),
)
