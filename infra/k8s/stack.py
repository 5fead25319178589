"""The stack's Kubernetes pools, declared on their own: ``define_stack`` declares them through
here, and ``gpupool render`` runs only this part of the program.

A Kubernetes pool takes nothing from the AWS side of the stack (its provider is built from the
pool's own cluster config; Karpenter's smallest type comes from the catalog), so the objects
declared here are the same whether the AWS pools are declared beside them or not — a test holds
render's objects to the full program's. Running only this part keeps ``pulumi_aws`` (whose
``ec2`` module alone costs about a second to import) out of ``gpupool render``.
"""

from __future__ import annotations

import pulumi

from gpupool.catalog import InstanceType, load_catalog
from gpupool.config.kubernetes import KubernetesPoolConfig
from gpupool.config.loader import resolve_gpu
from gpupool.config.models import StackConfig
from infra.k8s.pool import KubernetesGpuPool, KubernetesGpuPoolArgs


def kubernetes_node_type(pool: KubernetesPoolConfig) -> InstanceType | None:
    """Karpenter pools launch the smallest EC2 type for their GPU; on-premises pools none."""
    if pool.karpenter is None:
        return None
    return resolve_gpu(pool.gpu, pool.arch, load_catalog())


def define_kubernetes(config: StackConfig) -> dict[str, KubernetesGpuPool]:
    """Every ``gpupool:kubernetes`` pool of the stack, by name (the hybrid half)."""
    stack = pulumi.get_stack()
    return {
        pool.name: KubernetesGpuPool(f"{stack}-{pool.name}", KubernetesGpuPoolArgs(
            stack=config, pool=pool, node_type=kubernetes_node_type(pool)))
        for pool in config.kubernetes
    }
