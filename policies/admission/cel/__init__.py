"""Each per-object Kubernetes rule's CEL, one module per rule (named as the rule's module)."""

from __future__ import annotations

from policies.admission.cel import k8s_gpu_limits, k8s_gpu_per_container, karpenter_gpu_smallest
from policies.admission.spec import AdmissionRule

ADMISSION_RULES: tuple[AdmissionRule, ...] = (
    k8s_gpu_per_container.ADMISSION,
    k8s_gpu_limits.ADMISSION,
    karpenter_gpu_smallest.ADMISSION,
)
