"""Per-team namespaces: a ResourceQuota on GPUs and a LimitRange of one GPU per container.

The quota caps what a team can allocate (``requests.nvidia.com/gpu``: Kubernetes only accepts
the ``requests.`` form for extended resources); the LimitRange makes one GPU the default and
the maximum per container, so a bigger pod is refused at admission and capacity grows with
replicas. Both carry the team's chargeback labels, like everything else in the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import TeamConfig
from infra.k8s.labels import GPU_RESOURCE

_Meta = k8s.meta.v1.ObjectMetaArgs


def team_namespace(
    prefix: str, team: TeamConfig, labels: Mapping[str, str], opts: pulumi.ResourceOptions
) -> k8s.core.v1.Namespace:
    """The namespace, its GPU quota and its GPU limit range; returns the namespace."""
    ns = team.namespace_name
    namespace = k8s.core.v1.Namespace(
        f"{prefix}-{team.name}-ns",
        metadata=_Meta(name=ns, labels=dict(labels)),
        opts=opts,
    )
    child = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[namespace]))
    quota = str(team.gpu_quota)
    k8s.core.v1.ResourceQuota(
        f"{prefix}-{team.name}-gpu-quota",
        metadata=_Meta(name="gpu-quota", namespace=ns, labels=dict(labels)),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(
            hard={f"requests.{GPU_RESOURCE}": quota, f"limits.{GPU_RESOURCE}": quota},
        ),
        opts=child,
    )
    most = str(team.max_gpus_per_container)
    k8s.core.v1.LimitRange(
        f"{prefix}-{team.name}-gpu-limits",
        metadata=_Meta(name="gpu-per-container", namespace=ns, labels=dict(labels)),
        spec=k8s.core.v1.LimitRangeSpecArgs(
            limits=[
                k8s.core.v1.LimitRangeItemArgs(
                    type="Container",
                    default={GPU_RESOURCE: "1"},
                    default_request={GPU_RESOURCE: "1"},
                    max={GPU_RESOURCE: most},
                )
            ]
        ),
        opts=child,
    )
    return namespace
