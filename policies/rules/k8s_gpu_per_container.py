# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""k8s-gpu-per-container: one GPU per container; more GPUs means more replicas, not bigger pods."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from policies.facts import k8s
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules._pod_upsize import shown
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
    from typing import Any, Final


class Params(RuleParams):
    max_gpus_per_container: int = param(
        default=1, ge=1, description="GPUs one container may ask for (limits, else requests).")
    multi_gpu_namespaces: list[str] = param(
        default_factory=list,
        description="Namespaces allowed up to multiGpuMax per container (multi-GPU training).")
    multi_gpu_labels: dict[str, str] = param(
        default_factory=dict,
        description=("Labels that allow a workload up to multiGpuMax per container (all must be "
                     "on the object or its pod template), e.g. {gpupool.io/multi-gpu: \"true\"}."))
    multi_gpu_max: int = param(
        default=8, ge=1, description="The per-container maximum where multi-GPU is allowed.")


# What to multiply to scale out, per (reader, kind): the field that adds pods, "replicas" for
# every other kind; the same word whatever the object sets (its admission twin, policies/
# admission/cel/k8s_gpu_per_container.py, reads this table).
SCALE_BY: Final = {("builtin", "Job"): "parallelism", ("builtin", "CronJob"): "parallelism",
                   ("builtin", "Pod"): "pods", ("trainer", "TrainJob"): "numNodes",
                   ("keda", "ScaledJob"): "maxReplicaCount",
                   ("kserve", "InferenceService"): "minReplicas"}
# A KServe InferenceService's multi-node workers: KServe sizes their group from the tensor and
# pipeline parallel sizes, never from the component's replicas.
WORKERS_SCALE_BY: Final = "pipelineParallelSize"


def _deployment(limits: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "llm", "namespace": "ml"},
            "spec": {"selector": {"matchLabels": {"app": "llm"}}, "template": {
                "metadata": {"labels": {"app": "llm"}},
                "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.3",
                                         "resources": {"limits": dict(limits)}}]}}}}


def _pytorch_job(gpus: int) -> dict[str, Any]:
    pod = {"spec": {"containers": [{"name": "pytorch", "image": "pytorch/pytorch:2.4.0-cuda12.1",
                                    "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "finetune", "namespace": "ml"},
            "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": pod},
                "Worker": {"replicas": 3, "template": pod}}}}


def _ray_cluster(gpus: int) -> dict[str, Any]:
    def pod(name: str, limits: dict[str, Any]) -> dict[str, Any]:
        return {"spec": {"containers": [{"name": name, "image": "rayproject/ray:2.46.0-gpu",
                                         "resources": {"limits": limits}}]}}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster",
            "metadata": {"name": "serve", "namespace": "ml"},
            "spec": {"enableInTreeAutoscaling": True,
                     "headGroupSpec": {"template": pod("ray-head", {"cpu": "2"})},
                     "workerGroupSpecs": [{"groupName": "gpu", "minReplicas": 1,
                                           "maxReplicas": 8, "template": pod(
                                               "ray-worker", {"nvidia.com/gpu": gpus})}]}}


class K8sGpuPerContainer(Rule):
    meta = RuleMeta(
        id="k8s-gpu-per-container",
        title="One GPU per container; scale replicas, not pods",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "A container that asks for several GPUs is the Kubernetes form of vertical scaling: "
            "it waits for a node with that many free GPUs (stranding the GPUs of every node that "
            "has fewer), holds all of them whether its load needs them or not, and scales in "
            "steps of that size. One GPU per container with more replicas (or Job parallelism) "
            "packs nodes fully and lets the autoscaler add capacity one GPU at a time. Counts "
            "nvidia.com/gpu, nvidia.com/gpu.shared and amd.com/gpu in limits (requests when no "
            "limit is set) of every container and init container of every pod template of the "
            "kinds in the Kubernetes kinds table below (built-in workloads, Kubeflow training "
            "jobs and Trainer, JobSet, LeaderWorkerSet, KubeRay, KServe, Argo Workflows, "
            "Volcano, NVIDIA NIM). Multi-GPU training or serving that needs NVLink or tensor "
            "parallelism may be allowed by namespace or label (multiGpuNamespaces, "
            "multiGpuLabels) up to multiGpuMax. Fail closed: an object of any other kind that "
            "asks for an accelerator (nvidia.com/gpu, nvidia.com/mig-*, amd.com/gpu in a "
            "limits, requests or resources mapping anywhere in it), or one whose reader leaves "
            "such a request unread, is reported here as 'cannot verify' (at "
            "unknownEnforcement) naming its kind and the path of the request."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                         ResourceKind.K8S_OBJECT}),
        params=Params,
        k8s_lifecycles=frozenset({"service", "batch", "per-node", "pod", "template"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Deployment with one GPU per container",
            allowed=True,
            resources=[{"type": "kubernetes:apps/v1:Deployment", "name": "llm",
                        "new": _deployment({"nvidia.com/gpu": 1})}],
        ),
        Example(
            title="Deployment asking for four GPUs in one container",
            allowed=False,
            resources=[{"type": "kubernetes:apps/v1:Deployment", "name": "llm",
                        "new": _deployment({"nvidia.com/gpu": "4"})}],
            message_contains=["container server asks for 4 × nvidia.com/gpu",
                              "spec.template.spec.containers[0].resources.limits",
                              "at most 1 per container", "4 × the replicas with 1 GPU each"],
        ),
        Example(
            title="Multi-GPU training allowed in its namespace",
            allowed=True,
            params={"multiGpuNamespaces": ["ml"]},
            resources=[{"type": "kubernetes:apps/v1:Deployment", "name": "llm",
                        "new": _deployment({"nvidia.com/gpu": "4"})}],
        ),
        Example(
            title="Terraform kubernetes_job_v1 with two GPUs per container",
            allowed=False,
            resources=[{"type": "kubernetes_job_v1", "name": "train",
                        "address": "kubernetes_job_v1.train",
                        "new": {"metadata": [{"name": "train", "namespace": "research"}],
                                "spec": [{"template": [{"spec": [{"container": [{
                                    "name": "trainer", "image": "pytorch/pytorch:2.4.0",
                                    "resources": [{"limits": {"nvidia.com/gpu": "2"}}]}]}]}]}]}}],
            message_contains=["asks for 2 × nvidia.com/gpu",
                              "spec.template.spec.container[0].resources.limits",
                              "parallelism"],
        ),
        Example(
            title="PyTorchJob whose workers ask for four GPUs each",
            allowed=False,
            resources=[{"type": "kubernetes:kubeflow.org/v1:PyTorchJob", "name": "finetune",
                        "new": _pytorch_job(4)}],
            message_contains=["PyTorchJob ml/finetune, Worker: container pytorch asks for 4 × "
                              "nvidia.com/gpu", "pytorchReplicaSpecs.Worker.template.spec."
                              "containers[0].resources.limits", "4 × the replicas",
                              "multiGpuNamespaces: [ml]", "gpupool estimate"],
        ),
        Example(
            title="RayCluster worker group with one GPU per worker",
            allowed=True,
            resources=[{"type": "kubernetes:ray.io/v1:RayCluster", "name": "serve",
                        "new": _ray_cluster(1)}],
        ),
        Example(
            title="A kind no reader understands asks for a GPU: never a silent pass",
            allowed=False,
            unknown=True,
            resources=[{"type": "kubernetes:example.com/v1:Trainer", "name": "exp",
                        "new": {"apiVersion": "example.com/v1", "kind": "Trainer",
                                "metadata": {"name": "exp", "namespace": "ml"},
                                "spec": {"worker": {"resources": {"limits": {
                                    "nvidia.com/gpu": 1}}}}}}],
            message_contains=["cannot verify", "Trainer ml/exp (example.com/v1) asks for "
                              "nvidia.com/gpu at spec.worker.resources.limits",
                              "no reader understands kind Trainer"],
        ),
        Example(
            title="GPU limits unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "kubernetes_deployment_v1", "name": "llm",
                        "address": "kubernetes_deployment_v1.llm",
                        "new": {"metadata": [{"name": "llm"}], "spec": [{"template": [{"spec": [{
                            "container": [{"name": "server", "resources": [{
                                "limits": "(known after apply)"}]}]}]}]}]}}],
            message_contains=["cannot verify", "resources.limits unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        found = k8s.read(change)
        if found is None:
            return
        obj, wl = found.obj, found.workload
        if obj.spec is UNKNOWN and change.kind is ResourceKind.K8S_MANIFEST:
            yield Finding(change.address, cannot_verify("the manifest is unknown until apply"),
                          unknown=True)
            return
        if found.stray:
            yield Finding(change.address, cannot_verify(stray_message(change, found)),
                          unknown=True, detail={"kind": obj.kind, "api_version": obj.api_version,
                                                "paths": [r.path for r in found.stray]})
        if wl is None:
            return
        if wl.unknown:
            yield Finding(change.address, cannot_verify(f"{wl.who()}: {wl.unknown}"),
                          unknown=True)
            return
        params: Params = ctx.params
        for role in wl.roles:
            if role.pods.unknown:
                yield Finding(change.address, cannot_verify(
                    f"{wl.who(role)}: {role.pods.unknown}"), unknown=True)
                continue
            allowed = params.max_gpus_per_container
            if _multi_gpu_allowed(obj, role, params):
                allowed = max(allowed, params.multi_gpu_max)
            for c in role.pods.gpu_containers:
                yield from self._judge(change, wl, role, c, allowed)

    def _judge(self, change: ResourceChange, wl: k8s.Workload, role: k8s.Role,
               c: k8s.ContainerGpus, allowed: int) -> Iterable[Finding]:
        if c.unknown:
            yield Finding(change.address, cannot_verify(
                f"{wl.who(role)} container {c.name}: {c.unknown}"), unknown=True)
            return
        for resource in c.resources:
            q = c.count(resource)
            if q.unknown:
                yield Finding(change.address, cannot_verify(
                    f"{wl.who(role)} container {c.name}: {resource} unknown until apply"),
                    unknown=True)
            elif q.value is not None and q.value > allowed:
                side = "limits" if resource in c.limits else "requests"
                where = prop(change.type, c.resources_path)
                n = shown(float(q.value))
                yield Finding(change.address, (
                    f"{wl.who(role)}: container {c.name} asks for {n} × {resource} "
                    f"({where}.{side}); at most {allowed} per container: run "
                    f"{n} × the {scale_by(wl, role)} with {allowed} "
                    f"GPU{'s' if allowed != 1 else ''} each instead (scale out, not up). "
                    f"{_multi_gpu_hint(wl.obj)}"),
                    detail={"container": c.name, "resource": resource, "gpus": q.value,
                            "allowed": allowed, **({"role": role.name} if role.name else {})})


def stray_message(change: ResourceChange, found: k8s.Reading) -> str:
    """Where an object asks for accelerators that no reader read, naming its kind and path."""
    obj, first = found.obj, found.stray[0]
    api = f" ({obj.api_version})" if obj.api_version else ""
    where = prop(change.type, first.path)
    more = len(found.stray) - 1
    also = f" (and {more} more place{'s' if more != 1 else ''})" if more else ""
    asks = f"{k8s.describe(obj)}{api} asks for {first.resource} at {where}{also}"
    if found.workload is None:
        return (f"{asks}, but no reader understands kind {obj.kind}: its GPUs per container, "
                "limits, quota and autoscaling cannot be judged (check the pods it creates, or "
                "render it to built-in kinds)")
    return (f"{asks}, which the {found.workload.reader} reader does not read as a pod's "
            "containers: those GPUs cannot be judged")


def _multi_gpu_hint(obj: k8s.K8sObject) -> str:
    ns = obj.namespace if isinstance(obj.namespace, str) else "<namespace>"
    return (f"If one container needs several GPUs (tensor parallelism for a model that does not "
            f"fit one GPU: `gpupool estimate` tells whether one GPU holds it), allow it for its "
            f"namespace or label with this rule's multiGpuNamespaces: [{ns}] or multiGpuLabels "
            "(e.g. {gpupool.io/multi-gpu: \"true\"}), up to multiGpuMax")


def scale_by(wl: k8s.Workload, role: k8s.Role) -> str:
    """What to multiply: replicas, a Job's parallelism, pods, a kind's own count (numNodes)."""
    if (wl.reader, wl.obj.kind) == ("kserve", "InferenceService") and \
            role.name.endswith(" worker"):
        return WORKERS_SCALE_BY
    return SCALE_BY.get((wl.reader, wl.obj.kind), "replicas")


def _multi_gpu_allowed(obj: k8s.K8sObject, role: k8s.Role, params: Params) -> bool:
    if isinstance(obj.namespace, str) and obj.namespace in params.multi_gpu_namespaces:
        return True
    if not params.multi_gpu_labels:
        return False
    labels = dict(obj.labels)
    labels.update(role.labels or {})
    return all(labels.get(k) == v for k, v in params.multi_gpu_labels.items())


RULE = K8sGpuPerContainer()
