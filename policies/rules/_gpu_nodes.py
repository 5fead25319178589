"""What the node hygiene rules share: which node capacity carries GPUs, and which node labels
only GPU nodes carry (so a pod that requires them asks for a GPU node).

A Karpenter or EKS Auto Mode NodePool is GPU capacity when its requirements let it launch a
GPU type of the catalog (Karpenter v1's EC2NodeClass does not narrow instance types: the
NodePool's requirements do); an EKS managed node group when its instance types (its own, or
its launch template's) are GPU types or its AMI type is a GPU one.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpupool.catalog import Catalog
from gpupool.record import Frozen
from policies.facts import k8s
from policies.facts.k8s.objects import K8sObject
from policies.rules._common import family
from policies.rules.karpenter_gpu_smallest import allowed_types

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

GPU_TAINT: Final = "nvidia.com/gpu"
POOL_LABEL: Final = "gpupool.io/pool"  # the kit's pools are GPU pools (gpupool.config)
# Node labels only GPU nodes carry: the GPU Operator's / GPU feature discovery's, NFD's NVIDIA
# PCI vendor label, GKE's accelerator label, AMD's device plugin labeller's.
GPU_NODE_LABELS: Final = frozenset({
    "nvidia.com/gpu.present", "nvidia.com/gpu.product", "nvidia.com/gpu.count",
    "nvidia.com/gpu.family", "nvidia.com/gpu.machine", "nvidia.com/gpu.memory",
    "nvidia.com/gpu.deploy.device-plugin", "nvidia.com/mig.config",
    "feature.node.kubernetes.io/pci-10de.present", "cloud.google.com/gke-accelerator",
    "amd.com/gpu.device-id", "amd.com/gpu.family",
})
_GPU_SUFFIXES: Final = ("instance-gpu-count", "instance-gpu-name", "instance-gpu-manufacturer",
                        "instance-gpu-memory")
_PROVIDERS: Final = ("karpenter.k8s.aws/", "eks.amazonaws.com/")
_TYPE_KEYS: Final = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_NO: Final = frozenset({"false", "0", ""})
# EKS managed node group AMI types that are NVIDIA GPU images (AWS's AMIType enum).
GPU_AMI_TYPES: Final = frozenset({
    "AL2_x86_64_GPU", "AL2023_x86_64_NVIDIA", "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_FIPS_NVIDIA", "BOTTLEROCKET_ARM_64_FIPS_NVIDIA",
})


def is_node_pool(obj: K8sObject) -> bool:
    """A Karpenter NodePool (karpenter.sh v1, v1beta1; EKS Auto Mode's are the same kind) or
    Provisioner (v1alpha5)."""
    return obj.kind in ("NodePool", "Provisioner") and (
        not obj.group or obj.group.startswith("karpenter.sh"))


class GpuCapacity(Frozen):
    """Which GPU types a node pool can launch (empty: none), or why that is unknown."""

    __slots__ = ("types", "unknown")

    types: tuple[str, ...]
    unknown: str | None

    def __init__(self, types: tuple[str, ...] = (), unknown: str | None = None) -> None:
        object.__setattr__(self, "types", types)
        object.__setattr__(self, "unknown", unknown)

    def shown(self, limit: int = 4) -> str:
        more = f" and {len(self.types) - limit} more" if len(self.types) > limit else ""
        return ", ".join(self.types[:limit]) + more


def node_pool_gpus(obj: K8sObject, catalog: Catalog) -> GpuCapacity:
    reqs = k8s.node_requirements(obj)
    if reqs.unknown:
        return GpuCapacity(unknown=reqs.unknown)
    return GpuCapacity(tuple(t.instance_type for t in allowed_types(catalog, reqs.requirements)))


def gpu_label(req: k8s.Requirement, catalog: Catalog) -> bool:
    """Does requiring ``req`` keep a pod on GPU nodes (only GPU nodes match it)?"""
    key, op, values = req.key, req.operator, req.values
    if op in ("NotIn", "DoesNotExist"):
        return False
    positive = op in ("Exists", "Gt", "Gte") or (op == "In" and not set(values) <= _NO)
    if not positive:
        return False
    if key in GPU_NODE_LABELS or key == POOL_LABEL:
        return True
    if key.startswith(_PROVIDERS) and key.endswith(_GPU_SUFFIXES):
        return op != "In" or "0" not in values
    if op != "In":
        return False
    if key in _TYPE_KEYS:
        return all(family(v) in catalog.gpu_families for v in values)
    if key.startswith(_PROVIDERS) and key.endswith("instance-family"):
        return all(v in catalog.gpu_families for v in values)
    return False


def asks_gpu(role: k8s.Role) -> bool:
    """Does a container of the role ask for a GPU (more than 0), or is that unknown?"""
    if role.pods.unknown:
        return True
    for c in role.pods.gpu_containers:
        total = c.total
        if c.unknown or total is None or total > 0:
            return True
    return False


def gpu_labels(reqs: Iterable[k8s.Requirement], catalog: Catalog) -> tuple[k8s.Requirement, ...]:
    return tuple(r for r in reqs if gpu_label(r, catalog))


def shown(req: k8s.Requirement) -> str:
    if req.operator == "In" and len(req.values) == 1:
        return f"{req.key}={req.values[0]}"
    if req.operator in ("Exists", "DoesNotExist"):
        return f"{req.key} {req.operator}"
    return f"{req.key} {req.operator} [{', '.join(req.values)}]"
