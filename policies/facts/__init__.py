"""What rules read from a resource, whatever shape its source wrote it in.

The one place that knows Terraform writes nested blocks as lists (``metadata_options: [{...}]``,
``mixed_instances_policy.launch_template.override[*]``, ASG ``tag`` blocks, scaling policy
``metric_dimension[*]``) where Pulumi, after :func:`policies.model.normalise_inputs`, writes
objects (``overrides[*]``, ASG ``tags`` list, ``metric_dimensions``). Rules never look at raw
inputs, so a source difference is fixed here once.

Every extractor returns :data:`UNKNOWN` (or a result that says *why* something is unknown) where
the plan does not know a value: never a guess, never a default that would let a rule pass.

One module per subject: ``values`` (reading one value), ``instances`` (instance types, metadata
options), ``requirements`` (attribute-based selection judged against the catalog), ``storage``
(EBS volumes), ``tags``, ``scaling`` (scaling policies), ``capacity`` (GPUs and cost at max
size, chargeback tag values), ``network`` (a subpackage: proxy roles and budgets, placement,
ingress, load balancers), ``k8s`` (a subpackage: objects, one reader per workload kind, pod
GPUs, quotas, autoscalers, Karpenter requirements) and ``index`` (:class:`PlanIndex`, the links
between the resources of one plan). This package re-exports
them, so ``from policies.facts import PlanIndex`` keeps working; the Kubernetes names are
imported on first use (a check of a Terraform plan never loads the Kubernetes readers), and
so is ``NetworkIndex`` (the placement, ingress and exposure facts of proxy tiers).
"""

from __future__ import annotations

from policies.facts.capacity import Capacity, gpu_capacity, tag_value
from policies.facts.index import GroupPolicies, Link, PlanIndex
from policies.facts.instances import (
    InstanceTypes,
    http_endpoint,
    http_tokens,
    metadata_options,
    override_types,
    override_weights,
    overrides,
    own_instance_types,
)
from policies.facts.network.links import Found
from policies.facts.network.roles import Budget, budget_number, own_tag
from policies.facts.requirements import Selection
from policies.facts.scaling import ScalingPolicy, scaling_policy
from policies.facts.storage import Volume, all_encrypted, volumes
from policies.facts.tags import (
    GroupTag,
    Tags,
    group_propagates,
    group_tags,
    launch_tags,
    resource_tags,
    tags_set,
)
from policies.facts.values import (
    Maybe,
    Side,
    block,
    blocks,
    flag,
    inputs_of,
    is_map,
    number,
    text,
)

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

_K8S: Final = frozenset({
    "ContainerGpus",
    "K8sObject",
    "NodeRequirements",
    "PodGpus",
    "Quantity",
    "QuotaGpus",
    "ScaleTarget",
    "k8s_object",
    "namespace_key",
    "node_requirements",
    "quantity",
    "quota_gpus",
    "scale_target",
})

if TYPE_CHECKING:
    from policies.facts import k8s
    from policies.facts.k8s import (
        ContainerGpus,
        K8sObject,
        NodeRequirements,
        PodGpus,
        Quantity,
        QuotaGpus,
        ScaleTarget,
        k8s_object,
        namespace_key,
        node_requirements,
        quantity,
        quota_gpus,
        scale_target,
    )
    from policies.facts.network.tier import NetworkIndex


def __getattr__(name: str) -> Any:  # the Kubernetes and proxy-tier facts, on first use
    if name == "k8s" or name in _K8S:
        import policies.facts.k8s as k8s_facts

        return k8s_facts if name == "k8s" else getattr(k8s_facts, name)
    if name == "NetworkIndex":
        from policies.facts.network.tier import NetworkIndex

        return NetworkIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Budget",
    "Capacity",
    "ContainerGpus",
    "Found",
    "GroupPolicies",
    "GroupTag",
    "InstanceTypes",
    "K8sObject",
    "Link",
    "Maybe",
    "NetworkIndex",
    "NodeRequirements",
    "PlanIndex",
    "PodGpus",
    "Quantity",
    "QuotaGpus",
    "ScaleTarget",
    "ScalingPolicy",
    "Selection",
    "Side",
    "Tags",
    "Volume",
    "all_encrypted",
    "block",
    "blocks",
    "budget_number",
    "flag",
    "gpu_capacity",
    "group_propagates",
    "group_tags",
    "http_endpoint",
    "http_tokens",
    "inputs_of",
    "is_map",
    "k8s",
    "k8s_object",
    "launch_tags",
    "metadata_options",
    "namespace_key",
    "node_requirements",
    "number",
    "override_types",
    "override_weights",
    "overrides",
    "own_instance_types",
    "own_tag",
    "quantity",
    "quota_gpus",
    "resource_tags",
    "scale_target",
    "scaling_policy",
    "tag_value",
    "tags_set",
    "text",
    "volumes",
]
