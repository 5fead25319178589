"""gpu-nodes-tainted: GPU node capacity carries the nvidia.com/gpu NoSchedule taint."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from policies.facts import k8s
from policies.facts.values import blocks, inputs_of, is_map
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, family, prop
from policies.rules._gpu_nodes import GPU_AMI_TYPES, GPU_TAINT, is_node_pool, node_pool_gpus
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

_EFFECTS = {"NoSchedule", "NoExecute"}
_EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute",
                "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


class Params(RuleParams):
    taint_keys: tuple[str, ...] = param(
        default=(GPU_TAINT,), min_length=1,
        description=("Taint keys that keep CPU-only pods off GPU nodes (any one, with effect "
                     "NoSchedule or NoExecute); add amd.com/gpu for AMD pools."))


def _nodepool(taints: list[dict[str, str]] | None, types: list[str] | str,
              kind: str = "NodePool") -> dict[str, Any]:
    spec: dict[str, Any] = {"requirements": [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}]}
    if taints is not None:
        spec["taints"] = taints
    return {"apiVersion": "karpenter.sh/v1", "kind": kind, "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": spec}}}


_NP = "kubernetes:karpenter.sh/v1:NodePool"
_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def _node_group(**inputs: Any) -> dict[str, Any]:
    return {"cluster_name": "ml", "node_group_name": "gpu",
            "node_role_arn": "arn:aws:iam::1:role/n", "subnet_ids": ["subnet-1"],
            "scaling_config": [{"min_size": 0, "max_size": 4, "desired_size": 0}], **inputs}


class GpuNodesTainted(Rule):
    meta = RuleMeta(
        id="gpu-nodes-tainted",
        title="GPU node capacity carries the nvidia.com/gpu NoSchedule taint",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "An untainted GPU node takes any pod the scheduler places there: a CPU-only pod "
            "that lands on it keeps the node (and its GPUs, billed by the hour) from being "
            "consolidated or scaled in after the GPU work is done. GPU capacity must carry a "
            "nvidia.com/gpu taint with effect NoSchedule (or NoExecute), which GPU pods "
            "tolerate (the GPU Operator and EKS add that toleration to pods that request "
            "nvidia.com/gpu when the ExtendedResourceToleration admission plugin is on; the "
            "kit's pods carry it). Read: Karpenter NodePools (karpenter.sh v1, v1beta1: "
            "spec.template.spec.taints; Provisioner v1alpha5: spec.taints) and EKS Auto Mode "
            "NodePools whose requirements let them launch a GPU type of the catalog (an "
            "EC2NodeClass does not narrow the types: the requirements do), and EKS managed "
            "node groups (Terraform aws_eks_node_group taint blocks, Pulumi "
            "aws:eks/nodeGroup:NodeGroup taints, effect NO_SCHEDULE) whose instance types "
            "(their own or their launch template's) are GPU types or whose AMI type is a GPU "
            "one (AL2_x86_64_GPU, AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA, …). "
            "Startup taints do not count (a daemon removes them). Requirements, instance types "
            "or taints unknown until apply are cannot verify, never a pass."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.KARPENTER_NODE_POOL, ResourceKind.K8S_MANIFEST,
                         ResourceKind.EKS_NODE_GROUP}),
        params=Params,
        prop="spec.template.spec.taints",
    )

    examples = lazy_examples(lambda: (
        Example(
            title="A T4 NodePool tainted nvidia.com/gpu:NoSchedule",
            allowed=True,
            resources=[{"type": _NP, "name": "gpu",
                        "new": _nodepool([_TAINT], ["g4dn.xlarge"])}],
        ),
        Example(
            title="A GPU NodePool without taints",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(None, ["g5.xlarge"])}],
            message_contains=["NodePool gpu can launch GPU nodes (g5.xlarge)",
                              "spec.template.spec.taints", "nvidia.com/gpu",
                              "CPU-only pods"],
        ),
        Example(
            title="A taint that only prefers",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(
                [{"key": "nvidia.com/gpu", "effect": "PreferNoSchedule"}], ["g5.xlarge"])}],
            message_contains=["PreferNoSchedule", "does not keep"],
        ),
        Example(
            title="A CPU NodePool needs no GPU taint",
            allowed=True,
            resources=[{"type": _NP, "name": "general",
                        "new": _nodepool(None, ["m7i.large", "c7i.large"])}],
        ),
        Example(
            title="NodePool requirements unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": _NP, "name": "gpu",
                        "new": _nodepool([], "(known after apply)")}],
            message_contains=["cannot verify", "unknown until apply"],
        ),
        Example(
            title="Terraform EKS node group on a GPU AMI with a NO_SCHEDULE taint",
            allowed=True,
            resources=[{"type": "aws_eks_node_group", "name": "gpu",
                        "address": "aws_eks_node_group.gpu",
                        "new": _node_group(ami_type="AL2023_x86_64_NVIDIA",
                                           instance_types=["g6.xlarge"],
                                           taint=[{"key": "nvidia.com/gpu", "value": "true",
                                                   "effect": "NO_SCHEDULE"}])}],
        ),
        Example(
            title="Terraform EKS node group of g5 nodes without a taint",
            allowed=False,
            resources=[{"type": "aws_eks_node_group", "name": "gpu",
                        "address": "aws_eks_node_group.gpu",
                        "new": _node_group(instance_types=["g5.2xlarge"])}],
            message_contains=["EKS node group gpu launches GPU nodes (g5.2xlarge)", "taint",
                              "NO_SCHEDULE"],
        ),
        Example(
            title="Pulumi EKS node group on a Bottlerocket NVIDIA AMI without taints",
            allowed=False,
            resources=[{"type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu",
                        "new": {"clusterName": "ml", "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                                "instanceTypes": ["(known after apply)"],
                                "scalingConfig": {"minSize": 0, "maxSize": 2,
                                                  "desiredSize": 0}}}],
            message_contains=["AMI type BOTTLEROCKET_x86_64_NVIDIA", "taints"],
        ),
        Example(
            title="EKS node group whose instance types are unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "aws_eks_node_group", "name": "gpu",
                        "address": "aws_eks_node_group.gpu",
                        "new": _node_group(instance_types="(known after apply)")}],
            message_contains=["cannot verify", "instance_types unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        if change.kind is ResourceKind.EKS_NODE_GROUP:
            yield from self._node_group(change, ctx)
            return
        obj = k8s.k8s_object(change)
        if obj is None:
            return
        if not is_node_pool(obj):
            if obj.spec is UNKNOWN and change.kind is ResourceKind.K8S_MANIFEST:
                yield Finding(change.address, cannot_verify("the manifest is unknown until "
                                                            "apply"), unknown=True)
            return
        name = f"{obj.kind} {obj.name if isinstance(obj.name, str) else '?'}"
        gpus = node_pool_gpus(obj, ctx.catalog)
        if gpus.unknown:
            yield Finding(change.address, cannot_verify(f"{name}: {gpus.unknown}"), unknown=True)
            return
        if not gpus.types:
            return
        taints = k8s.node_taints(obj)
        if taints.unknown:
            yield Finding(change.address, cannot_verify(f"{name}: {taints.unknown}"),
                          unknown=True, prop=taints.path)
            return
        pairs = [(t.key, t.effect) for t in taints.taints]
        problem = _judge(pairs, ctx.params)
        if problem:
            where = prop(change.type, taints.path)
            yield Finding(change.address, (
                f"{name} can launch GPU nodes ({gpus.shown()}) {problem}: add {where} "
                f"{{key: {ctx.params.taint_keys[0]}, value: \"true\", effect: NoSchedule}} so "
                "CPU-only pods never hold a GPU node up (GPU pods tolerate it)"),
                prop=taints.path)

    def _node_group(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        inputs = inputs_of(change, "new") or {}
        name = inputs.get("node_group_name")
        who = f"EKS node group {name if isinstance(name, str) else change.name}"
        ami = inputs.get("ami_type")
        why = ""
        if isinstance(ami, str) and ami in GPU_AMI_TYPES:
            why = f"AMI type {ami}"
        else:
            types = ctx.plan.instance_types(change)
            gpu = [t for t in types.known if family(t) in ctx.catalog.gpu_families]
            if gpu:
                why = ", ".join(gpu)
            elif types.unknown or ami is UNKNOWN:
                reason = types.unknown or "ami_type unknown until apply"
                yield Finding(change.address, cannot_verify(f"{who}: {reason}"), unknown=True,
                              prop="instance_types")
                return
        if not why:
            return
        key = "taint" if ":" not in change.type else "taints"
        raw = inputs.get("taint", inputs.get("taints"))
        items = blocks(raw)
        if items is UNKNOWN or any(not is_map(t) or UNKNOWN in t.values() for t in items):
            yield Finding(change.address, cannot_verify(f"{who}: {key} unknown until apply"),
                          unknown=True, prop=key)
            return
        pairs = [(str(t.get("key") or ""), _EKS_EFFECTS.get(str(t.get("effect") or ""),
                                                            str(t.get("effect") or "")))
                 for t in items]
        problem = _judge(pairs, ctx.params)
        if problem:
            tk = ctx.params.taint_keys[0]
            yield Finding(change.address, (
                f"{who} launches GPU nodes ({why}) {problem}: add {key} "
                f"{{key = {tk}, value = \"true\", effect = NO_SCHEDULE}} so CPU-only pods never "
                "hold a GPU node up (GPU pods tolerate it)"), prop=key)


def _judge(taints: list[tuple[str, str]], params: Params) -> str | None:
    """None when a GPU taint keeps pods off; else what is wrong, for the message."""
    keyed: Mapping[str, str] = {k: e for k, e in taints if k in params.taint_keys}
    if any(e in _EFFECTS for e in keyed.values()):
        return None
    if keyed:
        k, e = next(iter(keyed.items()))
        return (f"but its {k} taint has effect {e or '(none)'}, which does not keep pods off "
                "(NoSchedule or NoExecute does)")
    return f"but no taint keeps pods off them ({' or '.join(params.taint_keys)} NoSchedule)"


RULE = GpuNodesTainted()
