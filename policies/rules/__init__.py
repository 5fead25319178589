"""The policy rules, one module per policy ID (see base.py for what a rule is).

``ALL_RULES`` is the order reports and docs list them in; rule objects are stateless and shared
by the engine, the CrossGuard pack, the docs and the tests.
"""

from __future__ import annotations

from gpupool.suggest import did_you_mean
from policies.rules.base import Rule
from policies.rules.ebs_encrypted import RULE as EBS_ENCRYPTED
from policies.rules.gpu_capacity_vs_utilisation import RULE as GPU_CAPACITY_VS_UTILISATION
from policies.rules.gpu_chargeback_tags import RULE as GPU_CHARGEBACK_TAGS
from policies.rules.gpu_no_vertical_upsize import RULE as GPU_NO_VERTICAL_UPSIZE
from policies.rules.gpu_nodes_tainted import RULE as GPU_NODES_TAINTED
from policies.rules.gpu_pool_scales_on_utilisation import RULE as GPU_POOL_SCALES
from policies.rules.gpu_proxy_network_budget import RULE as GPU_PROXY_NETWORK_BUDGET
from policies.rules.gpu_proxy_placement import RULE as GPU_PROXY_PLACEMENT
from policies.rules.gpu_proxy_private import RULE as GPU_PROXY_PRIVATE
from policies.rules.gpu_smallest_instance import RULE as GPU_SMALLEST_INSTANCE
from policies.rules.imdsv2_required import RULE as IMDSV2_REQUIRED
from policies.rules.k8s_cpu_pods_off_gpu_nodes import RULE as K8S_CPU_PODS_OFF_GPU_NODES
from policies.rules.k8s_gpu_job_deadline import RULE as K8S_GPU_JOB_DEADLINE
from policies.rules.k8s_gpu_limits import RULE as K8S_GPU_LIMITS
from policies.rules.k8s_gpu_namespace_quota import RULE as K8S_GPU_NAMESPACE_QUOTA
from policies.rules.k8s_gpu_per_container import RULE as K8S_GPU_PER_CONTAINER
from policies.rules.k8s_gpu_workload_autoscaled import RULE as K8S_GPU_WORKLOAD_AUTOSCALED
from policies.rules.karpenter_gpu_consolidation import RULE as KARPENTER_GPU_CONSOLIDATION
from policies.rules.karpenter_gpu_smallest import RULE as KARPENTER_GPU_SMALLEST
from policies.rules.team_gpu_quota import RULE as TEAM_GPU_QUOTA

ALL_RULES: tuple[Rule, ...] = (
    GPU_NO_VERTICAL_UPSIZE,
    GPU_SMALLEST_INSTANCE,
    GPU_POOL_SCALES,
    GPU_CAPACITY_VS_UTILISATION,
    GPU_CHARGEBACK_TAGS,
    IMDSV2_REQUIRED,
    EBS_ENCRYPTED,
    GPU_PROXY_PLACEMENT,
    GPU_PROXY_PRIVATE,
    GPU_PROXY_NETWORK_BUDGET,
    TEAM_GPU_QUOTA,
    K8S_GPU_PER_CONTAINER,
    K8S_GPU_LIMITS,
    K8S_GPU_NAMESPACE_QUOTA,
    K8S_GPU_WORKLOAD_AUTOSCALED,
    KARPENTER_GPU_SMALLEST,
    GPU_NODES_TAINTED,
    K8S_CPU_PODS_OFF_GPU_NODES,
    K8S_GPU_JOB_DEADLINE,
    KARPENTER_GPU_CONSOLIDATION,
)

_BY_ID = {r.meta.id: r for r in ALL_RULES}


def get_rule(rule_id: str) -> Rule:
    """The rule with this policy ID; KeyError names the known IDs."""
    try:
        return _BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"unknown policy {rule_id!r}{did_you_mean(rule_id, _BY_ID)} "
                       f"(known: {', '.join(_BY_ID)})") from None


def rule_ids() -> tuple[str, ...]:
    return tuple(_BY_ID)


__all__ = ["ALL_RULES", "Rule", "get_rule", "rule_ids"]
