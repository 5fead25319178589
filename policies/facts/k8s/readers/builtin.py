"""The built-in workload kinds: Deployment, StatefulSet, ReplicaSet, ReplicationController,
DaemonSet, Job, CronJob and Pod (manifests, Pulumi's typed resources, Terraform's
``kubernetes_*`` resources)."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import pod_spec
from policies.facts.k8s.readers._base import (
    Reader,
    count_at,
    deadline_at,
    spec_of,
    template_role,
)
from policies.facts.k8s.workload import ONE, Lifecycle, Replicas, Role, Workload
from policies.facts.values import block
from policies.model import UNKNOWN

_APPS = ("apps", "extensions", "")
_HPA = ("a HorizontalPodAutoscaler or KEDA ScaledObject whose scaleTargetRef names it, on a GPU "
        "metric, with maxReplicas above minReplicas")


def _replicated(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    role = template_role("", spec.get("template"), "spec.template",
                         count_at(spec, "replicas", "spec.replicas"))
    return Workload(obj, "builtin", Lifecycle.SERVICE, (role,), scale_target=True)


def _daemon_set(obj: K8sObject) -> Workload:
    role = template_role("", spec_of(obj).get("template"), "spec.template", Replicas(None, None))
    return Workload(obj, "builtin", Lifecycle.PER_NODE, (role,))


def _job(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    role = template_role("", spec.get("template"), "spec.template",
                         count_at(spec, "parallelism", "spec.parallelism"))
    return Workload(obj, "builtin", Lifecycle.BATCH, (role,),
                    (deadline_at(spec, "active_deadline_seconds", "spec.active_deadline_seconds"),))


def _cron_job(obj: K8sObject) -> Workload:
    job = block(spec_of(obj).get("job_template"))
    if job is UNKNOWN:
        role = template_role("", UNKNOWN, "spec.job_template")
        return Workload(obj, "builtin", Lifecycle.BATCH, (role,))
    job_spec = block(job.get("spec")) if job else None
    if job_spec is UNKNOWN:
        return Workload(obj, "builtin", Lifecycle.BATCH,
                        (template_role("", UNKNOWN, "spec.job_template.spec"),))
    role = template_role("", (job_spec or {}).get("template"), "spec.job_template.spec.template",
                         count_at(job_spec, "parallelism", "spec.job_template.spec.parallelism"))
    return Workload(obj, "builtin", Lifecycle.BATCH, (role,), (deadline_at(
        job_spec, "active_deadline_seconds", "spec.job_template.spec.active_deadline_seconds"),))


def _pod(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    role = Role("", pod_spec(obj.spec, "spec"), ONE, obj.labels, obj.spec)
    return Workload(obj, "builtin", Lifecycle.POD, (role,),
                    (deadline_at(spec, "active_deadline_seconds", "spec.active_deadline_seconds"),))


READERS = (
    Reader("builtin", tuple((g, k) for k in ("Deployment", "StatefulSet", "ReplicaSet")
                            for g in _APPS),
           Lifecycle.SERVICE, _replicated, "spec.template; spec.replicas (default 1)", _HPA),
    Reader("builtin", (("", "ReplicationController"),), Lifecycle.SERVICE, _replicated,
           "spec.template; spec.replicas (default 1)", _HPA),
    Reader("builtin", tuple((g, "DaemonSet") for g in _APPS), Lifecycle.PER_NODE, _daemon_set,
           "spec.template; one pod per matching node"),
    Reader("builtin", (("batch", "Job"), ("", "Job")), Lifecycle.BATCH, _job,
           "spec.template; spec.parallelism (default 1)", deadline="spec.activeDeadlineSeconds"),
    Reader("builtin", (("batch", "CronJob"), ("", "CronJob")), Lifecycle.BATCH, _cron_job,
           "spec.jobTemplate.spec.template; its parallelism",
           deadline="spec.jobTemplate.spec.activeDeadlineSeconds"),
    Reader("builtin", (("", "Pod"),), Lifecycle.POD, _pod, "spec",
           deadline="spec.activeDeadlineSeconds"),
)
