# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""k8s-gpu-per-container: one GPU per container; more GPUs means more replicas, not bigger pods."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from policies.facts import k8s
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, count, prop
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
)


class Params(RuleParams):
    max_gpus_per_container: int = Field(
        default=1, ge=1, description="GPUs one container may ask for (limits, else requests).")
    multi_gpu_namespaces: list[str] = Field(
        default_factory=list,
        description="Namespaces allowed up to multiGpuMax per container (multi-GPU training).")
    multi_gpu_labels: dict[str, str] = Field(
        default_factory=dict,
        description=("Labels that allow a workload up to multiGpuMax per container (all must be "
                     "on the object or its pod template), e.g. {gpupool.io/multi-gpu: \"true\"}."))
    multi_gpu_max: int = Field(
        default=8, ge=1, description="The per-container maximum where multi-GPU is allowed.")


_SCALE_BY = {"Job": "parallelism", "CronJob": "parallelism", "Pod": "pods"}


def _deployment(limits: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "llm", "namespace": "ml"},
            "spec": {"selector": {"matchLabels": {"app": "llm"}}, "template": {
                "metadata": {"labels": {"app": "llm"}},
                "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.3",
                                         "resources": {"limits": dict(limits)}}]}}}}


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
            "limit is set) of every container and init container of Pods, Deployments, "
            "StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs. Multi-GPU training that "
            "needs NVLink may be allowed by namespace or label (multiGpuNamespaces, "
            "multiGpuLabels) up to multiGpuMax."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST}),
        params=Params,
    )

    examples = (
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
    )

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        obj = k8s.k8s_object(change)
        if obj is None:
            return
        if obj.spec is UNKNOWN and change.kind is ResourceKind.K8S_MANIFEST:
            yield Finding(change.address, cannot_verify("the manifest is unknown until apply"),
                          unknown=True)
            return
        wl = k8s.workload(obj)
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
        where = prop(change.type, c.resources_path)
        for resource in c.resources:
            q = c.count(resource)
            if q.unknown:
                yield Finding(change.address, cannot_verify(
                    f"{wl.who(role)} container {c.name}: {resource} unknown until apply"),
                    unknown=True)
            elif q.value is not None and q.value > allowed:
                side = "limits" if resource in c.limits else "requests"
                n = count(q.value)
                yield Finding(change.address, (
                    f"{wl.who(role)}: container {c.name} asks for {n} × {resource} "
                    f"({where}.{side}); at most {allowed} per container: run "
                    f"{n} × the {_scale_by(change, wl, role)} with {allowed} "
                    f"GPU{'s' if allowed != 1 else ''} each instead (scale out, not up)"),
                    detail={"container": c.name, "resource": resource, "gpus": q.value,
                            "allowed": allowed})


def _scale_by(change: ResourceChange, wl: k8s.Workload, role: k8s.Role) -> str:
    """What to multiply: replicas, a Job's parallelism, pods, a kind's own count (size)."""
    fixed = _SCALE_BY.get(wl.obj.kind) if wl.reader == "builtin" else None
    if fixed:
        return fixed
    path = role.replicas.path
    return prop(change.type, path).rsplit(".", 1)[-1] if path else "replicas"


def _multi_gpu_allowed(obj: k8s.K8sObject, role: k8s.Role, params: Params) -> bool:
    if isinstance(obj.namespace, str) and obj.namespace in params.multi_gpu_namespaces:
        return True
    if not params.multi_gpu_labels:
        return False
    labels = dict(obj.labels)
    labels.update(role.labels or {})
    return all(labels.get(k) == v for k, v in params.multi_gpu_labels.items())


RULE = K8sGpuPerContainer()
