"""Labels every object of a Kubernetes pool carries: chargeback (team, cost-center,
environment), the pool, and who manages it. DCGM exporter copies the team labels of GPU pods
onto their utilisation series, so GPU use is visible per pod, namespace and team.
"""

from __future__ import annotations

from typing import Final

from gpupool.config.kubernetes import POOL_LABEL, KubernetesPoolConfig, TeamConfig
from gpupool.config.models import StackConfig
from gpupool.config.remoting_keys import BudgetConfig, tag_number

ROLE_LABEL: Final = "gpupool.io/role"  # gpu-proxy | gpu-workload | gpu-plumbing
CHARGEBACK: Final = ("team", "cost-center", "environment")
MANAGED_BY: Final = {
    "app.kubernetes.io/managed-by": "gpupool",
    "app.kubernetes.io/part-of": "gpupool",
}
GPU_RESOURCE: Final = "nvidia.com/gpu"
# A proxy's budget, as the AWS tier's tags carry it (gpupool:remoting-min-gbps, …); Kubernetes
# keys take a DNS prefix and no colon, hence gpupool.io/.
MIN_GBPS_ANNOTATION: Final = "gpupool.io/remoting-min-gbps"
MAX_RTT_ANNOTATION: Final = "gpupool.io/remoting-max-rtt-us"
PROFILE_ANNOTATION: Final = "gpupool.io/remoting-profile"
MAX_OVERHEAD_ANNOTATION: Final = "gpupool.io/remoting-max-overhead"


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


def budget_annotations(budget: BudgetConfig | None) -> dict[str, str]:
    """The proxy's budget on its objects: explicit figures as the AWS tags write them, or the
    profile and ε it is held to (``gpupool netcheck probe --profile`` measures against them)."""
    if budget is None:
        return {}
    if budget.profile is not None:
        return {PROFILE_ANNOTATION: budget.profile,
                MAX_OVERHEAD_ANNOTATION: tag_number(budget.epsilon)}
    assert budget.min_gbps is not None and budget.max_rtt_us is not None
    return {MIN_GBPS_ANNOTATION: tag_number(budget.min_gbps),
            MAX_RTT_ANNOTATION: tag_number(budget.max_rtt_us)}


def node_labels(stack: StackConfig, pool: KubernetesPoolConfig) -> dict[str, str]:
    """The labels a Karpenter NodePool puts on its nodes: chargeback, the pool, and whatever
    the pool's GPU pods select (so the selector always names labels the nodes carry). None in
    the kubernetes.io domain: Karpenter v1.0-v1.8 refuse it on a NodePool's nodes."""
    return {
        "team": stack.team,
        "cost-center": stack.cost_center,
        "environment": stack.environment,
        POOL_LABEL: pool.name,
        **pool.gpu_node_selector,
    }


def app_labels(base: dict[str, str], name: str, role: str) -> dict[str, str]:
    return {**base, "app.kubernetes.io/name": name, ROLE_LABEL: role}


def selector(name: str) -> dict[str, str]:
    """The immutable selector of a workload: its name only (labels may change, selectors not)."""
    return {"app.kubernetes.io/name": name}
