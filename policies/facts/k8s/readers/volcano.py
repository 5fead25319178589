"""Volcano Job (``batch.volcano.sh``): one role per task, ``replicas`` pods each."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers._base import (
    Reader,
    count_at,
    deadline_at,
    spec_of,
    template_role,
)
from policies.facts.k8s.workload import Deadline, Lifecycle, Role, Workload
from policies.facts.values import block, blocks, is_map
from policies.model import UNKNOWN


def _job(obj: K8sObject) -> Workload:
    tasks = blocks(spec_of(obj).get("tasks"))
    if tasks is UNKNOWN:
        return Workload(obj, "volcano", Lifecycle.BATCH, unknown="tasks unknown until apply")
    roles: list[Role] = []
    deadlines: list[Deadline] = []
    for i, task in enumerate(tasks):
        path = f"spec.tasks[{i}]"
        if not is_map(task):
            roles.append(template_role(f"task #{i}", UNKNOWN if task is UNKNOWN else None, path))
            continue
        name = task.get("name") if isinstance(task.get("name"), str) else f"#{i}"
        role = template_role(f"task {name}", task.get("template"), f"{path}.template",
                             count_at(task, "replicas", f"{path}.replicas"))
        roles.append(role)
        pod = block(role.spec) if role.spec is not UNKNOWN else None
        deadlines.append(deadline_at(pod or {}, "active_deadline_seconds",
                                     f"{path}.template.spec.active_deadline_seconds"))
    return Workload(obj, "volcano", Lifecycle.BATCH, tuple(roles), tuple(deadlines))


READERS = (
    Reader("volcano", (("batch.volcano.sh", "Job"),), Lifecycle.BATCH, _job,
           "spec.tasks[*].template, one role per task; its replicas (default 1)",
           "out of scope (runs to completion)",
           "spec.tasks[*].template.spec.activeDeadlineSeconds (Volcano has no job-wide one)"),
)
