"""k8s-cpu-pods-off-gpu-nodes: a pod that tolerates the GPU taint or selects GPU nodes asks
for a GPU."""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import k8s
from policies.facts.k8s.placement import Placement, placement
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules._gpu_nodes import GPU_TAINT, asks_gpu, gpu_labels, shown
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    lazy_examples,
)
from policies.rules.params import param

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Params(RuleParams):
    taint_keys: tuple[str, ...] = param(
        default=(GPU_TAINT,), min_length=1,
        description="The GPU nodes' taint keys (as gpu-nodes-tainted).")
    allow_node_agents: bool = param(
        default=True,
        description=("Let per-node agents (DaemonSets: the device plugin, DCGM exporter, log "
                     "and network agents) run on GPU nodes without a GPU: Karpenter and the "
                     "cluster autoscaler count a node running only DaemonSet pods as empty, so "
                     "they never hold it up."))


def _deployment(pod: dict[str, Any], kind: str = "Deployment") -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": pod}
    spec: dict[str, Any] = {"template": template}
    if kind == "Deployment":
        spec = {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, **spec}
    api = "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "web", "namespace": "ml"},
            "spec": spec}


_TOLERATE = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
_WEB = {"name": "web", "image": "nginx:1.27"}
_GPU = {"name": "serve", "image": "nvcr.io/nvidia/tritonserver:24.08-py3",
        "resources": {"limits": {"nvidia.com/gpu": 1}}}
_DEP = "kubernetes:apps/v1:Deployment"


class K8sCpuPodsOffGpuNodes(Rule):
    meta = RuleMeta(
        id="k8s-cpu-pods-off-gpu-nodes",
        title="Pods that tolerate the GPU taint or select GPU nodes ask for a GPU",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "The nvidia.com/gpu taint keeps CPU-only pods off GPU nodes (gpu-nodes-tainted); "
            "a pod that tolerates it, or whose nodeSelector or required node affinity names a "
            "label only GPU nodes carry, undoes that: with no GPU of its own it lands on a GPU "
            "node and holds it up after the GPU work is done (Karpenter will not consolidate a "
            "node a pod runs on, the cluster autoscaler will not scale it in). Each pod "
            "template of every kind in the Kubernetes kinds table is read: if it tolerates the "
            "taint (a toleration of that key, or of every taint: operator Exists with no key) "
            "or requires GPU node labels (nvidia.com/gpu.present and the GPU Operator's other "
            "nvidia.com/gpu.* labels, karpenter.k8s.aws/ and eks.amazonaws.com/instance-gpu-*, "
            "node.kubernetes.io/instance-type or instance-family of GPU types, "
            "cloud.google.com/gke-accelerator, the kit's gpupool.io/pool) then some container "
            "of the pod must ask for a GPU: init containers and sidecars of a GPU pod need "
            "none. Per-node agents (DaemonSets: the device plugin and DCGM exporter must run "
            "on GPU nodes and need no GPU) are allowed by default (allowNodeAgents): a node "
            "running only DaemonSet pods counts as empty. Tolerations or selectors unknown "
            "until apply are cannot verify."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                         ResourceKind.K8S_OBJECT}),
        params=Params,
        k8s_lifecycles=frozenset({"service", "batch", "per-node", "pod", "template"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="A GPU Deployment tolerating the taint, with a CPU sidecar",
            allowed=True,
            resources=[{"type": _DEP, "name": "web", "new": _deployment(
                {"tolerations": _TOLERATE, "containers": [_GPU, _WEB],
                 "nodeSelector": {"nvidia.com/gpu.present": "true"}})}],
        ),
        Example(
            title="A CPU-only Deployment that tolerates the GPU taint",
            allowed=False,
            resources=[{"type": _DEP, "name": "web", "new": _deployment(
                {"tolerations": _TOLERATE, "containers": [_WEB]})}],
            message_contains=["Deployment ml/web", "tolerates the nvidia.com/gpu taint",
                              "spec.template.spec.tolerations", "asks for no GPU"],
        ),
        Example(
            title="A CPU-only Deployment that tolerates every taint",
            allowed=False,
            resources=[{"type": _DEP, "name": "web", "new": _deployment(
                {"tolerations": [{"operator": "Exists"}], "containers": [_WEB]})}],
            message_contains=["tolerates the nvidia.com/gpu taint"],
        ),
        Example(
            title="A CPU-only Deployment that selects GPU instance types",
            allowed=False,
            resources=[{"type": _DEP, "name": "web", "new": _deployment({
                "containers": [_WEB], "affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-gpu-count",
                                               "operator": "Gt", "values": ["0"]}]}]}}}})}],
            message_contains=["requires GPU nodes (karpenter.k8s.aws/instance-gpu-count Gt",
                              "spec.template.spec.affinity"],
        ),
        Example(
            title="A DaemonSet node agent on GPU nodes (allowNodeAgents)",
            allowed=True,
            resources=[{"type": "kubernetes:apps/v1:DaemonSet", "name": "web",
                        "new": _deployment({"tolerations": _TOLERATE, "containers": [_WEB],
                                            "nodeSelector": {"gpupool.io/pool": "lab"}},
                                           "DaemonSet")}],
        ),
        Example(
            title="A DaemonSet on GPU nodes when node agents are not allowed",
            allowed=False,
            params={"allowNodeAgents": False},
            resources=[{"type": "kubernetes:apps/v1:DaemonSet", "name": "web",
                        "new": _deployment({"tolerations": _TOLERATE, "containers": [_WEB],
                                            "nodeSelector": {"gpupool.io/pool": "lab"}},
                                           "DaemonSet")}],
            message_contains=["DaemonSet ml/web", "tolerates the nvidia.com/gpu taint"],
        ),
        Example(
            title="A CPU-only Deployment on ordinary nodes",
            allowed=True,
            resources=[{"type": _DEP, "name": "web", "new": _deployment(
                {"containers": [_WEB], "nodeSelector": {"kubernetes.io/os": "linux"}})}],
        ),
        Example(
            title="Tolerations unknown until apply on a CPU-only pod",
            allowed=False,
            unknown=True,
            resources=[{"type": _DEP, "name": "web", "new": _deployment(
                {"tolerations": "(known after apply)", "containers": [_WEB]})}],
            message_contains=["cannot verify", "tolerations unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        found = k8s.read(change)
        wl = found.workload if found is not None else None
        if wl is None or wl.unknown:
            return  # no pods to place, or cannot say: the GPU rules report it
        params: Params = ctx.params
        if params.allow_node_agents and wl.lifecycle is k8s.Lifecycle.PER_NODE:
            return
        for role in wl.roles:
            if asks_gpu(role) or role.spec is None:
                continue  # a GPU pod's sidecars are fine; NIMService-like kinds keep no spec
            where = placement(role.spec)
            if where.unknown:
                if role.spec is not UNKNOWN:
                    yield Finding(change.address, cannot_verify(
                        f"{wl.who(role)}: {where.unknown} (a pod that asks for no GPU)"),
                        unknown=True)
                continue
            why = _on_gpu_nodes(where, params, ctx)
            if why is None:
                continue
            reason, path = why
            yield Finding(change.address, (
                f"{wl.who(role)} {reason} ({prop(change.type, f'{role.path}.{path}')}) but asks "
                "for no GPU in any container: it can land on a GPU node and hold it up after "
                "the GPU work is done; drop the toleration and GPU node selector, or give a "
                "container the GPU it runs on"), prop=f"{role.path}.{path}")


def _on_gpu_nodes(where: Placement, params: Params, ctx: RuleContext) -> tuple[str, str] | None:
    for key in params.taint_keys:
        if where.tolerates(key, "NoSchedule"):
            return f"tolerates the {key} taint", "tolerations"
    if where.terms and all(gpu_labels(t, ctx.catalog) for t in where.terms):
        picked = gpu_labels(where.terms[0], ctx.catalog)
        path = "node_selector" if all(r in where.selector for r in picked) else "affinity"
        return f"requires GPU nodes ({', '.join(shown(r) for r in picked)})", path
    return None


RULE = K8sCpuPodsOffGpuNodes()
