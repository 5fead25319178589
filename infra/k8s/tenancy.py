"""Per-team namespaces: a ResourceQuota on GPUs and a LimitRange capping GPUs per container.

The quota caps what a team can allocate (``requests.nvidia.com/gpu``: Kubernetes only accepts
the ``requests.`` form for extended resources). The LimitRange caps GPUs per container
(``max``), so a bigger pod is refused at admission and capacity grows with replicas.

Its ``default`` and ``defaultRequest`` are an explicit **zero** GPUs, not left out: the API
server defaults a Container item's missing ``default`` to its ``max`` and ``defaultRequest`` to
that (``SetDefaults_LimitRangeItem``, kubernetes ``pkg/apis/core/v1/defaults.go``), and the
LimitRanger admission plugin then hands that default to every container and init container
without its own GPU limit: a "max only" LimitRange gives every CPU-only pod and sidecar in the
namespace a GPU. With a zero default, a container that asks for no GPU gets none (``0``) and
still passes ``max`` (which refuses a container with no limit at all). Both objects carry the
team's chargeback labels, like everything else in the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import TeamConfig
from infra.k8s.labels import GPU_RESOURCE

_Meta = k8s.meta.v1.ObjectMetaArgs
NO_GPU: Final = "0"


def team_namespace(
    prefix: str, team: TeamConfig, labels: Mapping[str, str], opts: pulumi.ResourceOptions
) -> k8s.core.v1.Namespace:
    """The namespace, its GPU quota and its per-container GPU cap; returns the namespace."""
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
                    default={GPU_RESOURCE: NO_GPU},  # not left out: see the docstring
                    default_request={GPU_RESOURCE: NO_GPU},
                    max={GPU_RESOURCE: most},
                )
            ]
        ),
        opts=child,
    )
    return namespace
