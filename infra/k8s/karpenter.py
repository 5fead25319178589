"""EKS GPU capacity with Karpenter: a NodePool whose requirements allow exactly the smallest
instance type for the pool's GPU, and the EC2NodeClass its nodes launch from.

Capacity grows by more nodes of that one size up to ``limits`` (``nvidia.com/gpu``), never by a
bigger size: the requirement names the type explicitly and pins ``instance-gpu-count`` to its
GPU count, so a later edit that widens one of them still trips ``karpenter-gpu-smallest``.
Nodes get IMDSv2 only (hop limit 1: pods cannot reach the node's role), an encrypted gp3 root
volume, the pool's chargeback tags, and the ``nvidia.com/gpu`` taint so only GPU pods land.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.catalog import InstanceType
from gpupool.config.kubernetes import KarpenterConfig
from infra.k8s.labels import GPU_RESOURCE

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
              labels: Mapping[str, str], tags: Mapping[str, str],
              opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
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
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                     "name": name},
                    "requirements": node_requirements(itype, karpenter),
                    "taints": [{"key": GPU_RESOURCE, "value": "true", "effect": "NoSchedule"}],
                    "expireAfter": "720h",
                },
            },
            "limits": {GPU_RESOURCE: str(karpenter.max_gpus)},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                           "consolidateAfter": "5m"},
        },
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[node_class])),
    )
