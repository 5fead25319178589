"""Kubeflow Trainer v2 (``trainer.kubeflow.org``): TrainJob (its trainer's
``resourcesPerNode`` on ``numNodes`` nodes) and the TrainingRuntime / ClusterTrainingRuntime
templates TrainJobs run (a JobSet template: :func:`.jobset.replicated_jobs`)."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import PodGpus, resources_block
from policies.facts.k8s.readers._base import Reader, count_at, deadline_at, spec_of
from policies.facts.k8s.readers.jobset import replicated_jobs
from policies.facts.k8s.workload import Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, is_map
from policies.model import UNKNOWN

# the replicated job a runtime's mlPolicy.numNodes sizes (Trainer's "node" / "trainer")
_TRAINER_JOBS = ("node", "trainer")


def _train_job(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    deadline = deadline_at(spec, "active_deadline_seconds", "spec.active_deadline_seconds")
    trainer = block(spec.get("trainer"))
    if trainer is UNKNOWN:
        return Workload(obj, "trainer", Lifecycle.BATCH, deadlines=(deadline,),
                        unknown="trainer unknown until apply")
    if trainer is None:
        return Workload(obj, "trainer", Lifecycle.BATCH, deadlines=(deadline,))
    node = resources_block(trainer.get("resources_per_node"), "node", "spec.trainer",
                           "spec.trainer.resources_per_node")
    nodes = count_at(trainer, "num_nodes", "spec.trainer.num_nodes", default=None)
    role = Role("trainer", PodGpus((node,), None, "spec.trainer"), nodes, {}, None)
    return Workload(obj, "trainer", Lifecycle.BATCH, (role,), (deadline,))


def _runtime(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    template = block(spec.get("template"))
    job_set = block(template.get("spec")) if is_map(template) else template
    policy = block(spec.get("ml_policy"))
    nodes: dict[str, Replicas] = {}
    if is_map(policy) and policy.get("num_nodes") is not None:
        count = count_at(policy, "num_nodes", "spec.ml_policy.num_nodes")
        nodes = dict.fromkeys(_TRAINER_JOBS, count)
    if job_set is UNKNOWN:
        return Workload(obj, "trainer", Lifecycle.TEMPLATE, unknown="template unknown until apply")
    roles, deadlines, unknown = replicated_jobs(job_set or {}, "spec.template.spec", nodes)
    return Workload(obj, "trainer", Lifecycle.TEMPLATE, roles, deadlines, unknown=unknown)


READERS = (
    Reader("trainer", (("trainer.kubeflow.org", "TrainJob"),), Lifecycle.BATCH, _train_job,
           "spec.trainer.resourcesPerNode on spec.trainer.numNodes nodes (the runtime's "
           "containers are read from the runtime)",
           "out of scope (runs to completion)", "spec.activeDeadlineSeconds"),
    Reader("trainer", (("trainer.kubeflow.org", "TrainingRuntime"),
                       ("trainer.kubeflow.org", "ClusterTrainingRuntime")),
           Lifecycle.TEMPLATE, _runtime,
           "spec.template.spec.replicatedJobs[*].template.spec.template (a JobSet template); "
           "the trainer job on spec.mlPolicy.numNodes nodes",
           "out of scope (a template TrainJobs run)",
           "spec.template.spec.replicatedJobs[*].template.spec.activeDeadlineSeconds"),
)
