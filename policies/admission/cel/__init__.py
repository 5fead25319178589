"""Each per-object Kubernetes rule's CEL, one module per rule (named as the rule's module)."""

from __future__ import annotations

from policies.admission.cel import (
    gpu_no_vertical_upsize,
    gpu_nodes_tainted,
    k8s_cpu_pods_off_gpu_nodes,
    k8s_gpu_job_deadline,
    k8s_gpu_limits,
    k8s_gpu_per_container,
    k8s_gpu_workload_autoscaled,
    karpenter_gpu_consolidation,
    karpenter_gpu_smallest,
)
from policies.admission.spec import AdmissionRule

ADMISSION_RULES: tuple[AdmissionRule, ...] = (
    k8s_gpu_per_container.ADMISSION,
    k8s_gpu_limits.ADMISSION,
    k8s_gpu_job_deadline.ADMISSION,
    karpenter_gpu_smallest.ADMISSION,
    gpu_nodes_tainted.ADMISSION,
    k8s_cpu_pods_off_gpu_nodes.ADMISSION,
    karpenter_gpu_consolidation.ADMISSION,
    gpu_no_vertical_upsize.ADMISSION,
    k8s_gpu_workload_autoscaled.ADMISSION,
)
