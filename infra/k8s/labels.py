"""Labels every object of a Kubernetes pool carries: chargeback (team, cost-center,
environment), the pool, and who manages it. DCGM exporter copies the team labels of GPU pods
onto their utilisation series, so GPU use is visible per pod, namespace and team.
"""

from __future__ import annotations

from typing import Final

from gpupool.config.kubernetes import KubernetesPoolConfig, TeamConfig
from gpupool.config.models import StackConfig

POOL_LABEL: Final = "gpupool.io/pool"
ROLE_LABEL: Final = "gpupool.io/role"  # gpu-proxy | gpu-workload | gpu-plumbing
CHARGEBACK: Final = ("team", "cost-center", "environment")
MANAGED_BY: Final = {
    "app.kubernetes.io/managed-by": "gpupool",
    "app.kubernetes.io/part-of": "gpupool",
}
GPU_RESOURCE: Final = "nvidia.com/gpu"


def pool_labels(stack: StackConfig, pool: KubernetesPoolConfig) -> dict[str, str]:
    """Shared objects (system namespace, device plugin, exporter): the stack's own team pays."""
    return {
        "team": stack.team,
        "cost-center": stack.cost_center,
        "environment": stack.environment,
        POOL_LABEL: pool.name,
        **MANAGED_BY,
    }


def team_labels(stack: StackConfig, pool: KubernetesPoolConfig, team: TeamConfig) -> dict[str, str]:
    """A team's objects: its own team and cost center (the stack's when it names none)."""
    return {
        **pool_labels(stack, pool),
        "team": team.name,
        "cost-center": team.cost_center or stack.cost_center,
    }


def app_labels(base: dict[str, str], name: str, role: str) -> dict[str, str]:
    return {**base, "app.kubernetes.io/name": name, ROLE_LABEL: role}


def selector(name: str) -> dict[str, str]:
    """The immutable selector of a workload: its name only (labels may change, selectors not)."""
    return {"app.kubernetes.io/name": name}
