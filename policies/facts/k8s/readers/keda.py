"""KEDA ScaledJob (``keda.sh``): Jobs from ``spec.jobTargetRef`` (a Job spec), as many at once
as its triggers ask, up to ``maxReplicaCount`` (default 100). ScaledObject, KEDA's autoscaler,
is read by :mod:`policies.facts.k8s.autoscalers`."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.quantities import whole_number
from policies.facts.k8s.readers._base import Reader, deadline_at, spec_of, template_role
from policies.facts.k8s.workload import Lifecycle, Replicas, Workload
from policies.facts.values import block
from policies.model import UNKNOWN


def _scaled_job(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    job = block(spec.get("job_target_ref"))
    if job is UNKNOWN:
        return Workload(obj, "keda", Lifecycle.BATCH, unknown="job_target_ref unknown until apply")
    job = job or {}
    most = whole_number(spec.get("max_replica_count"), 100)
    role = template_role("", job.get("template"), "spec.job_target_ref.template",
                         Replicas(0, most, "spec.max_replica_count"))
    return Workload(obj, "keda", Lifecycle.BATCH, (role,), (deadline_at(
        job, "active_deadline_seconds", "spec.job_target_ref.active_deadline_seconds"),))


READERS = (
    Reader("keda", (("keda.sh", "ScaledJob"),), Lifecycle.BATCH, _scaled_job,
           "spec.jobTargetRef.template; 0…maxReplicaCount Jobs (default 100)",
           "out of scope (runs to completion; KEDA starts Jobs on its triggers)",
           "spec.jobTargetRef.activeDeadlineSeconds"),
)
