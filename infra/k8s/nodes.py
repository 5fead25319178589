"""Where the pool's GPU pods go: the node labels they select and the taint they tolerate.

GPU nodes carry the ``nvidia.com/gpu`` NoSchedule taint (the kit's Karpenter NodePools set it;
on other clusters it is the recommended prerequisite), so only pods that tolerate it land there:
the GPU workloads and the two GPU DaemonSets (device plugin, DCGM exporter), which must run on
GPU nodes. Nothing CPU-only of the kit tolerates it. The selector is the pool's
``gpu_node_selector``: labels some node is guaranteed to carry (gpupool.config.kubernetes).
"""

from __future__ import annotations

from typing import Final

import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import KubernetesPoolConfig

GPU_TAINT_KEY: Final = "nvidia.com/gpu"


def gpu_tolerations() -> list[k8s.core.v1.TolerationArgs]:
    return [k8s.core.v1.TolerationArgs(key=GPU_TAINT_KEY, operator="Exists",
                                       effect="NoSchedule")]


def node_selector(pool: KubernetesPoolConfig) -> dict[str, str] | None:
    return pool.gpu_node_selector or None
