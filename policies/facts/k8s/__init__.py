"""Kubernetes objects as rules read them, whatever wrote them and whatever their kind.

The reader API (what rules, the census and the admission policies build on):

1. :func:`k8s_object` turns a :class:`~policies.model.ResourceChange` (a manifest, a Pulumi
   resource, a Terraform ``kubernetes_*`` resource or ``kubernetes_manifest``) into one
   :class:`K8sObject`: kind, API version and group, name, namespace, labels, spec (snake_case
   keys), and whether it has Terraform's block-list shape.
2. :func:`workload` reads that object with the reader registered for its (API group, kind) in
   :mod:`policies.facts.k8s.readers` (one small module per kind family: ``builtin``, …) and
   returns a :class:`Workload`, or None when no reader knows the kind. Every reader returns the
   same shape:

   - ``roles``: one :class:`Role` per pod template (a Deployment has one; a PyTorchJob one per
     replica spec, ``Master`` and ``Worker``; a RayCluster its head and each worker group).
     Each role has ``pods`` (:class:`PodGpus`: its containers as :class:`ContainerGpus`, each
     with the GPUs it asks for in limits and requests and the snake_case ``resources_path`` of
     its resources block), ``replicas`` (:class:`Replicas`: min and max pods, the path that
     sets them, or why they are unknown), ``labels`` (the pod template's), ``spec`` (the pod
     spec as written: node selectors, tolerations) and ``autoscaler`` (:class:`Autoscaler`:
     the kind's own autoscaling of that role, if it has one: its switch, bounds, metrics).
   - ``lifecycle`` (:class:`Lifecycle`): service, batch, per-node, pod, template or none: what
     the autoscaling and deadline rules expect of the kind.
   - ``deadlines``: every place the kind bounds its run time (:class:`Deadline`: path and
     value), the first the one to set.
   - ``scale_target``: an HPA or KEDA ScaledObject may name the kind in ``scaleTargetRef``.
   - ``unknown``: why its pods cannot be read (its spec is unknown until apply).

Paths are snake_case dotted paths with list indices (``spec.template.spec.containers[0]``);
:func:`policies.rules._common.prop` spells them as the user wrote them.

3. :func:`read` is what the rules call: the object, its workload, and ``stray``, the
   accelerator requests (:func:`accelerator_requests`) its reader did not read — every one when
   no reader knows the kind, so such an object is a "cannot verify", never a pass. Cached per
   change. :class:`Census` counts GPU objects judged and kinds not understood for the reports.

Other subjects: :func:`quota_gpus` (ResourceQuota), :func:`scale_target` (HPA, KEDA
ScaledObject), :func:`node_requirements` and :func:`node_taints` (Karpenter),
:func:`policies.facts.k8s.placement.placement` (a pod spec's tolerations and node selection),
:func:`namespace_key`, :func:`describe`.
Values unknown until apply stay :data:`~policies.model.UNKNOWN`; a GPU quantity that is not a
number is kept as text (:class:`Quantity`), never read as zero.
"""

from __future__ import annotations

from policies.facts.k8s.autoscalers import ScaleTarget, is_gpu_metric, scale_target, texts
from policies.facts.k8s.census import Census
from policies.facts.k8s.karpenter import (
    NodeRequirements,
    NodeTaints,
    Requirement,
    Taint,
    node_requirements,
    node_taints,
)
from policies.facts.k8s.objects import K8sObject, describe, k8s_object, namespace_key
from policies.facts.k8s.pods import ContainerGpus, PodGpus
from policies.facts.k8s.quantities import GPU_RESOURCES, Quantity, is_accelerator, quantity
from policies.facts.k8s.quotas import QuotaGpus, quota_gpus
from policies.facts.k8s.readers import ALL_READERS, Reader, reader_for, workload
from policies.facts.k8s.reading import Reading, read
from policies.facts.k8s.scan import Request, accelerator_requests
from policies.facts.k8s.workload import (
    Autoscaler,
    Deadline,
    Lifecycle,
    Replicas,
    Role,
    Workload,
)

__all__ = [
    "ALL_READERS",
    "GPU_RESOURCES",
    "Autoscaler",
    "Census",
    "ContainerGpus",
    "Deadline",
    "K8sObject",
    "Lifecycle",
    "NodeRequirements",
    "NodeTaints",
    "PodGpus",
    "Quantity",
    "QuotaGpus",
    "Reader",
    "Reading",
    "Replicas",
    "Request",
    "Requirement",
    "Role",
    "ScaleTarget",
    "Taint",
    "Workload",
    "accelerator_requests",
    "describe",
    "is_accelerator",
    "is_gpu_metric",
    "k8s_object",
    "namespace_key",
    "node_requirements",
    "node_taints",
    "quantity",
    "quota_gpus",
    "read",
    "reader_for",
    "scale_target",
    "texts",
    "workload",
]
