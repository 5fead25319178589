"""EKS GPU capacity with Karpenter: a NodePool whose requirements allow exactly the smallest
instance type for the pool's GPU, and the EC2NodeClass its nodes launch from.

Capacity grows by more nodes of that one size up to ``limits`` (``nvidia.com/gpu``), never by a
bigger size: the requirement names the type explicitly and pins ``instance-gpu-count`` to its
GPU count, so a later edit that widens one of them still trips ``karpenter-gpu-smallest``.
Nodes get IMDSv2 only (hop limit 1: pods cannot reach the node's role), an encrypted gp3 root
volume, the pool's chargeback tags, and the ``nvidia.com/gpu`` taint so only GPU pods land.

The nodes' labels are the pool's chargeback labels, ``gpupool.io/pool`` and whatever the pool's
pods select, so a pod's selector never names a key the NodePool does not define (Karpenter
refuses to launch for one). None is in the ``kubernetes.io`` domain, which the NodePool CRDs of
Karpenter v1.0-v1.8 refuse on template labels (v1.9 dropped that rule): every v1 release takes
these NodePools (their CRDs' schemas and CEL rules hold the rendered objects in
tests/gpupool/test_render.py, from v1.0.0 and v1.14.1). Empty nodes are consolidated after
``consolidateAfter`` (a GPU node nobody uses is compute debt).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.catalog import InstanceType
from gpupool.config.kubernetes import KarpenterConfig
from infra.k8s.labels import GPU_RESOURCE
from infra.k8s.nodes import GPU_TAINT_KEY

NODEPOOL_API: Final = "karpenter.sh/v1"
NODECLASS_API: Final = "karpenter.k8s.aws/v1"
DISCOVERY_TAG: Final = "karpenter.sh/discovery"
ARCH_LABELS: Final = {"x86_64": "amd64", "arm64": "arm64"}


def node_requirements(itype: InstanceType, karpenter: KarpenterConfig) -> list[dict[str, Any]]:
    """Only the smallest type for the GPU, its GPU count, its architecture; on-demand/spot."""
    return [
        {"key": "node.kubernetes.io/instance-type", "operator": "In",
         "values": [itype.instance_type]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In",
         "values": [f"{itype.gpu_count:g}"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": [ARCH_LABELS[itype.arch]]},
        {"key": "karpenter.sh/capacity-type", "operator": "In",
         "values": list(karpenter.capacity_types)},
    ]


def node_pool(prefix: str, name: str, itype: InstanceType, karpenter: KarpenterConfig,
              labels: Mapping[str, str], node_labels: Mapping[str, str],
              tags: Mapping[str, str], opts: pulumi.ResourceOptions
              ) -> k8s.apiextensions.CustomResource:
    """The EC2NodeClass and the NodePool; ``labels`` go on the objects, ``node_labels`` on the
    nodes (they must include what the pool's pods select, and stay out of kubernetes.io)."""
    meta = k8s.meta.v1.ObjectMetaArgs
    node_class = k8s.apiextensions.CustomResource(
        f"{prefix}-nodeclass",
        api_version=NODECLASS_API,
        kind="EC2NodeClass",
        metadata=meta(name=name, labels=dict(labels)),
        spec={
            "role": karpenter.node_role,
            "amiSelectorTerms": [{"alias": karpenter.ami_alias}],
            "subnetSelectorTerms": [{"tags": {DISCOVERY_TAG: karpenter.cluster_name}}],
            "securityGroupSelectorTerms": [{"tags": {DISCOVERY_TAG: karpenter.cluster_name}}],
            "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required",
                                "httpPutResponseHopLimit": 1, "httpProtocolIPv6": "disabled"},
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {
                "volumeSize": f"{karpenter.root_volume_gib}Gi", "volumeType": "gp3",
                "encrypted": True, "deleteOnTermination": True}}],
            "tags": dict(tags),
        },
        opts=opts,
    )
    return k8s.apiextensions.CustomResource(
        f"{prefix}-nodepool",
        api_version=NODEPOOL_API,
        kind="NodePool",
        metadata=meta(name=name, labels=dict(labels)),
        spec={
            "template": {
                "metadata": {"labels": dict(node_labels)},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                     "name": name},
                    "requirements": node_requirements(itype, karpenter),
                    "taints": [{"key": GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
                    "expireAfter": "720h",
                },
            },
            "limits": {GPU_RESOURCE: str(karpenter.max_gpus)},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                           "consolidateAfter": "5m"},
        },
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[node_class])),
    )
