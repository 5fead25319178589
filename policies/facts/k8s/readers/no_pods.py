"""Kinds understood to run no pods: their GPU keys are caps, capacities or templates of
nothing (a quota's hard limits, a NodePool's limits, a Node's capacity, a LimitRange's maxima),
and common kinds that carry no resources at all. The fail-closed scan skips them."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers._base import Reader
from policies.facts.k8s.workload import Lifecycle, Workload

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

KINDS: Final = (
    # core
    *(("", k) for k in ("Namespace", "ResourceQuota", "LimitRange", "Node", "Service",
                        "ConfigMap", "Secret", "ServiceAccount", "Endpoints",
                        "PersistentVolume", "PersistentVolumeClaim")),
    ("autoscaling", "HorizontalPodAutoscaler"), ("keda.sh", "ScaledObject"),
    ("policy", "PodDisruptionBudget"),
    *(("rbac.authorization.k8s.io", k) for k in ("Role", "RoleBinding", "ClusterRole",
                                                 "ClusterRoleBinding")),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "NetworkPolicy"), ("networking.k8s.io", "Ingress"),
    # node capacity and its caps
    *(("karpenter.sh", k) for k in ("NodePool", "Provisioner", "NodeClaim")),
    ("karpenter.k8s.aws", "EC2NodeClass"), ("eks.amazonaws.com", "NodeClass"),
    ("scheduling.volcano.sh", "Queue"), ("scheduling.volcano.sh", "PodGroup"),
    ("scheduling.x-k8s.io", "PodGroup"),
    *(("kueue.x-k8s.io", k) for k in ("ClusterQueue", "LocalQueue", "ResourceFlavor")),
    ("kubeflow.org", "Profile"),  # its resourceQuotaSpec is a ResourceQuota
    ("nvidia.com", "ClusterPolicy"),
)


def _none(obj: K8sObject) -> Workload:
    return Workload(obj, "no_pods", Lifecycle.NONE)


READERS = (
    Reader("no_pods", KINDS, Lifecycle.NONE, _none, "none: it runs no pods (its GPU keys are "
           "caps or capacities, not requests)"),
)
