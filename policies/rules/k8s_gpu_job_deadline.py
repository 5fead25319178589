"""k8s-gpu-job-deadline: a GPU batch workload bounds its run time (activeDeadlineSeconds)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policies.facts import k8s
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules._gpu_nodes import asks_gpu
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    lazy_examples,
)
from policies.rules.params import param

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

_DAY = 86_400


class Params(RuleParams):
    max_deadline_seconds: int | None = param(
        default=30 * _DAY, ge=60,
        description=("The longest deadline allowed, in seconds (default 30 days, the kit's own "
                     "limit); null: any deadline will do."))


def _job(deadline: int | str | None = None, gpus: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"backoffLimit": 2, "template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "train", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                        "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train", "namespace": "ml"}, "spec": spec}


def _pytorch_job(run_policy: dict[str, Any]) -> dict[str, Any]:
    worker = {"replicas": 2, "template": {"spec": {"containers": [
        {"name": "pytorch", "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
         "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "mnist", "namespace": "ml"},
            "spec": {"runPolicy": run_policy, "pytorchReplicaSpecs": {"Worker": worker}}}


def _volcano_job() -> dict[str, Any]:
    def task(name: str, pod: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "replicas": 1, "template": {"spec": pod}}
    launcher = {"activeDeadlineSeconds": 3600, "restartPolicy": "OnFailure",
                "containers": [{"name": "mpirun", "image": "volcanosh/example-mpi:0.0.3"}]}
    worker = {"restartPolicy": "OnFailure", "containers": [
        {"name": "worker", "image": "volcanosh/example-mpi:0.0.3",
         "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "mpi", "namespace": "ml"},
            "spec": {"minAvailable": 2, "schedulerName": "volcano",
                     "tasks": [task("launcher", launcher), task("worker", worker)]}}


class K8sGpuJobDeadline(Rule):
    meta = RuleMeta(
        id="k8s-gpu-job-deadline",
        title="GPU batch workloads carry a deadline",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "A batch workload runs until it completes; one that hangs (a stuck collective, a "
            "data loader waiting forever, a job that never exits) holds its GPUs, and the "
            "nodes under them, until someone notices. A deadline makes the controller end it "
            "and release them. Every batch kind in the Kubernetes kinds table that asks for a "
            "GPU must set its deadline (the table's Deadline column: a Job's "
            "spec.activeDeadlineSeconds, a CronJob's jobTemplate's, Kubeflow training jobs' "
            "spec.runPolicy.activeDeadlineSeconds, RayJob's, TrainJob's (Trainer v2.2+) and "
            "Argo Workflow's spec.activeDeadlineSeconds, a JobSet's replicated jobs', a Volcano "
            "Job's task pods: each GPU task its own, as a task's deadline ends only its "
            "pods), no longer than maxDeadlineSeconds. A JobSet takes any one of its jobs' "
            "(it fails as a whole when one of its jobs passes its deadline). Templates "
            "(WorkflowTemplate, TrainingRuntime) are left to what runs them. A deadline "
            "unknown until apply is cannot verify."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                         ResourceKind.K8S_OBJECT}),
        params=Params,
        k8s_lifecycles=frozenset({"batch"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="A GPU Job with a 12-hour deadline",
            allowed=True,
            resources=[{"type": "kubernetes:batch/v1:Job", "name": "train",
                        "new": _job(43_200)}],
        ),
        Example(
            title="A GPU Job without a deadline",
            allowed=False,
            resources=[{"type": "kubernetes:batch/v1:Job", "name": "train", "new": _job()}],
            message_contains=["Job ml/train asks for GPUs but sets no deadline",
                              "spec.activeDeadlineSeconds", "holds its GPUs"],
        ),
        Example(
            title="A GPU Job with a 90-day deadline",
            allowed=False,
            resources=[{"type": "kubernetes:batch/v1:Job", "name": "train",
                        "new": _job(90 * _DAY)}],
            message_contains=["7776000 s (90 days)", "maxDeadlineSeconds 2592000"],
        ),
        Example(
            title="A CPU-only Job needs no deadline",
            allowed=True,
            resources=[{"type": "kubernetes:batch/v1:Job", "name": "train", "new": _job(gpus=0)}],
        ),
        Example(
            title="A PyTorchJob bounded by runPolicy",
            allowed=True,
            resources=[{"type": "kubernetes:kubeflow.org/v1:PyTorchJob", "name": "mnist",
                        "new": _pytorch_job({"activeDeadlineSeconds": 86_400})}],
        ),
        Example(
            title="A PyTorchJob without runPolicy.activeDeadlineSeconds",
            allowed=False,
            resources=[{"type": "kubernetes:kubeflow.org/v1:PyTorchJob", "name": "mnist",
                        "new": _pytorch_job({"cleanPodPolicy": "None"})}],
            message_contains=["PyTorchJob ml/mnist", "spec.runPolicy.activeDeadlineSeconds"],
        ),
        Example(
            title="Terraform kubernetes_job_v1 without active_deadline_seconds",
            allowed=False,
            resources=[{"type": "kubernetes_job_v1", "name": "train",
                        "address": "kubernetes_job_v1.train",
                        "new": {"metadata": [{"name": "train", "namespace": "ml"}],
                                "spec": [{"template": [{"spec": [{"container": [{
                                    "name": "train", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                    "resources": [{"limits": {"nvidia.com/gpu": "1"}}]}]}]}]}]}}],
            message_contains=["spec.active_deadline_seconds"],
        ),
        Example(
            title="A Volcano Job whose deadline is on its CPU task only",
            allowed=False,
            resources=[{"type": "kubernetes:batch.volcano.sh/v1alpha1:Job", "name": "mpi",
                        "new": _volcano_job()}],
            message_contains=["Job ml/mpi, task worker asks for GPUs but sets no deadline",
                              "spec.tasks[1].template.spec.activeDeadlineSeconds"],
        ),
        Example(
            title="A deadline unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "kubernetes:batch/v1:Job", "name": "train",
                        "new": _job("(known after apply)")}],
            message_contains=["cannot verify", "deadline unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        found = k8s.read(change)
        wl = found.workload if found is not None else None
        if wl is None or not wl.batch:
            return
        if not (wl.unknown or any(asks_gpu(r) for r in wl.roles) or found.stray):
            return
        who = wl.who()
        if not wl.deadlines:
            if wl.unknown:
                yield Finding(change.address, cannot_verify(f"{who}: {wl.unknown}"),
                              unknown=True)
            return  # a kind with no deadline of its own (NIMCache's job asks for no GPU)
        limit = ctx.params.max_deadline_seconds
        # A deadline inside one role's pod spec (a Volcano task's pods) bounds only that role:
        # each GPU role then needs its own, unless a workload-wide one is set.
        own = {r.path: [d for d in wl.deadlines if d.path.startswith(f"{r.path}.")]
               for r in wl.roles}
        if not any(own.values()):
            yield from _judge(change, who, wl.deadlines, limit)
            return
        wide = [d for d in wl.deadlines if not any(d in ds for ds in own.values())]
        for role in wl.roles:
            if asks_gpu(role):
                yield from _judge(change, wl.who(role), (*own[role.path], *wide), limit)


def _judge(change: ResourceChange, who: str, deadlines: Sequence[k8s.Deadline],
           limit: int | None) -> Iterable[Finding]:
    if not deadlines:
        return
    unknown = [d for d in deadlines if d.seconds is UNKNOWN]
    known = [d for d in deadlines if isinstance(d.seconds, int)]
    if known:
        d = min(known, key=lambda d: int(d.seconds))  # type: ignore[arg-type]
        seconds = int(d.seconds)  # type: ignore[arg-type]
        if limit is not None and seconds > limit:
            yield Finding(change.address, (
                f"{who}: {prop(change.type, d.path)} is {seconds} s ({_span(seconds)}), "
                f"longer than maxDeadlineSeconds {limit} ({_span(limit)}): a hung run "
                "holds its GPUs that long; lower it"), prop=d.path)
        return
    if unknown:
        yield Finding(change.address, cannot_verify(
            f"{who}: the deadline unknown until apply ({prop(change.type, unknown[0].path)})"),
            unknown=True, prop=unknown[0].path)
        return
    first = deadlines[0]
    cap = f" (at most {limit} s)" if limit is not None else ""
    yield Finding(change.address, (
        f"{who} asks for GPUs but sets no deadline: a run that hangs holds its GPUs until "
        f"someone deletes it; set {prop(change.type, first.path)}{cap} so the controller "
        "ends it and releases them"), prop=first.path)


def _span(seconds: int) -> str:
    if seconds % _DAY == 0:
        n = seconds // _DAY
        return f"{n} day{'s' if n != 1 else ''}"
    if seconds % 3600 == 0:
        n = seconds // 3600
        return f"{n} hour{'s' if n != 1 else ''}"
    return f"{seconds / 3600:.1f} hours"


RULE = K8sGpuJobDeadline()
