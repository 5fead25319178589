# ruff: noqa: RUF001, RUF003  (× and − are the signs people read in docs/policies.md)
"""JobSet (``jobset.x-k8s.io``): one role per replicated job; also read for the JobSet
templates of Kubeflow Trainer's runtimes (:mod:`.trainer`)."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers._base import (
    Reader,
    count_at,
    deadline_at,
    spec_of,
    template_role,
    times,
)
from policies.facts.k8s.workload import Deadline, Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, blocks, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


def replicated_jobs(spec: Any, base: str, num_nodes: dict[str, Replicas] | None = None
                    ) -> tuple[tuple[Role, ...], tuple[Deadline, ...], str | None]:
    """Roles and deadlines of a JobSet spec at ``base`` (``spec``, ``spec.template.spec``);
    ``num_nodes`` overrides the pod count of named jobs (a trainer runtime's ``numNodes``)."""
    items = blocks(spec.get("replicated_jobs")) if is_map(spec) else []
    if items is UNKNOWN:
        return (), (), "replicated_jobs unknown until apply"
    roles: list[Role] = []
    deadlines: list[Deadline] = []
    for i, rj in enumerate(items):
        path = f"{base}.replicated_jobs[{i}]"
        if not is_map(rj):
            roles.append(template_role(f"#{i}", UNKNOWN if rj is UNKNOWN else None, path))
            continue
        name = rj.get("name") if isinstance(rj.get("name"), str) else f"#{i}"
        job = block(rj.get("template"))
        job_spec = block(job.get("spec")) if is_map(job) else job
        if job_spec is UNKNOWN:
            roles.append(template_role(name, UNKNOWN, f"{path}.template.spec"))
            continue
        job_spec = job_spec or {}
        pods = times(count_at(rj, "replicas", f"{path}.replicas"),
                     count_at(job_spec, "parallelism", f"{path}.template.spec.parallelism"))
        if num_nodes and name in num_nodes:
            pods = num_nodes[name]
        roles.append(template_role(name, job_spec.get("template"),
                                   f"{path}.template.spec.template", pods))
        deadlines.append(deadline_at(job_spec, "active_deadline_seconds",
                                     f"{path}.template.spec.active_deadline_seconds"))
    return tuple(roles), tuple(deadlines), None


def _job_set(obj: K8sObject) -> Workload:
    roles, deadlines, unknown = replicated_jobs(spec_of(obj), "spec")
    return Workload(obj, "jobset", Lifecycle.BATCH, roles, deadlines, unknown=unknown)


READERS = (
    Reader("jobset", (("jobset.x-k8s.io", "JobSet"),), Lifecycle.BATCH, _job_set,
           "spec.replicatedJobs[*].template.spec.template, one role per replicated job; "
           "pods = replicas × parallelism",
           "out of scope (runs to completion)",
           "spec.replicatedJobs[*].template.spec.activeDeadlineSeconds"),
)
