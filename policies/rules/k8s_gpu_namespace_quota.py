"""k8s-gpu-namespace-quota: a namespace that runs GPU workloads caps its GPUs with a quota."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpupool.record import Frozen
from policies.facts import k8s
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    lazy_examples,
)

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

_GONE = (ChangeKind.DELETE, ChangeKind.READ)
WORKLOAD = {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "embeddings", "namespace": "ml"},
            "spec": {"selector": {"matchLabels": {"app": "embeddings"}}, "template": {
                "metadata": {"labels": {"app": "embeddings"}},
                "spec": {"containers": [{"name": "triton",
                                         "image": "nvcr.io/nvidia/tritonserver:24.08-py3",
                                         "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota",
         "metadata": {"name": "gpu-quota", "namespace": "ml"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}}


def _res(kind: str, name: str, obj: dict[str, Any]) -> dict[str, Any]:
    group = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
    return {"type": f"kubernetes:{group}:{kind}", "name": name, "new": obj}


class _Quota(Frozen):
    __slots__ = ("change", "gpus")
    change: ResourceChange
    gpus: k8s.QuotaGpus

    def __init__(self, change: ResourceChange, gpus: k8s.QuotaGpus) -> None:
        object.__setattr__(self, "change", change)
        object.__setattr__(self, "gpus", gpus)


class K8sGpuNamespaceQuota(Rule):
    meta = RuleMeta(
        id="k8s-gpu-namespace-quota",
        title="Namespaces running GPU workloads have a GPU ResourceQuota",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "A namespace without a quota on requests.nvidia.com/gpu lets one team take every "
            "GPU of the cluster, and leaves no figure to charge back against. Every namespace "
            "that runs a GPU workload needs a ResourceQuota whose hard limits include "
            "requests.<gpu resource> (the only form Kubernetes accepts for extended resources). "
            "When the namespace is declared in the same input without such a quota, it is a "
            "violation; when it is not in the input at all (a workload applied into an existing "
            "namespace, or manifests without a namespace), the quota cannot be seen: the "
            "finding says 'cannot verify' at unknownEnforcement (advisory by default). A quota "
            "restricted by scopes or a scopeSelector covers only some pods: cannot verify. "
            "Every kind in the Kubernetes kinds table below is read (an object of a kind no "
            "reader understands counts with the GPUs it asks for); templates other objects run "
            "(TrainingRuntime, WorkflowTemplate, LLMInferenceServiceConfig) count where they "
            "run."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_NAMESPACE,
                         ResourceKind.K8S_RESOURCE_QUOTA, ResourceKind.K8S_MANIFEST,
                         ResourceKind.K8S_OBJECT}),
        k8s_lifecycles=frozenset({"service", "batch", "per-node", "pod"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Namespace, its GPU quota and a GPU Deployment",
            allowed=True,
            resources=[_res("Namespace", "ml", NAMESPACE),
                       _res("ResourceQuota", "gpu-quota", QUOTA),
                       _res("Deployment", "embeddings", WORKLOAD)],
        ),
        Example(
            title="Namespace declared without a GPU quota",
            allowed=False,
            resources=[_res("Namespace", "ml", NAMESPACE),
                       _res("Deployment", "embeddings", WORKLOAD)],
            message_contains=["namespace ml runs Deployment ml/embeddings (nvidia.com/gpu) but "
                              "has no ResourceQuota on requests.nvidia.com/gpu"],
        ),
        Example(
            title="Quota on CPU only",
            allowed=False,
            resources=[_res("Namespace", "ml", NAMESPACE),
                       _res("ResourceQuota", "gpu-quota", {**QUOTA, "spec": {"hard": {
                           "requests.cpu": "64"}}}),
                       _res("Deployment", "embeddings", WORKLOAD)],
            message_contains=["has no ResourceQuota on requests.nvidia.com/gpu"],
        ),
        Example(
            title="Namespace not in the input: its quota cannot be seen",
            allowed=False,
            unknown=True,
            resources=[_res("Deployment", "embeddings", WORKLOAD)],
            message_contains=["cannot verify", "namespace ml is not in this input"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        namespaces: set[Any] = set()
        quotas: dict[Any, list[_Quota]] = {}
        workloads: list[tuple[ResourceChange, k8s.K8sObject, tuple[str, ...]]] = []
        for change in changes:
            if change.kind not in self.meta.kinds or change.change in _GONE:
                continue
            found = k8s.read(change)
            if found is None:
                continue
            obj = found.obj
            key = k8s.namespace_key(change, obj)
            if obj.kind == "Namespace":
                namespaces.add(key)
            elif obj.kind == "ResourceQuota":
                quotas.setdefault(key, []).append(_Quota(change, k8s.quota_gpus(obj)))
            else:
                used = _used(found)
                if used:
                    workloads.append((change, obj, used))
        for change, obj, used in workloads:
            yield from self._judge(change, obj, used, namespaces, quotas)

    def _judge(self, change: ResourceChange, obj: k8s.K8sObject, used: tuple[str, ...],
               namespaces: set[Any], quotas: dict[Any, list[_Quota]]) -> Iterable[Finding]:
        key = k8s.namespace_key(change, obj)
        who = k8s.describe(obj)
        if key is UNKNOWN:
            yield Finding(change.address, cannot_verify(
                f"{who}: its namespace is unknown until apply"), unknown=True)
            return
        found = quotas.get(key, [])
        if any(q.gpus.unknown for q in found):
            yield Finding(change.address, cannot_verify(
                f"{who}: a ResourceQuota of its namespace is unknown until apply"), unknown=True)
            return
        shown = _namespace(key)
        missing = [r for r in used if not any(r in q.gpus.resources and not q.gpus.scoped
                                              for q in found)]
        if not missing:
            return
        wanted = ", ".join(f"requests.{r}" for r in missing)
        if any(r in q.gpus.resources for q in found for r in missing):
            yield Finding(change.address, cannot_verify(
                f"{who}: the GPU quota of {shown} is scoped (scopes/scopeSelector) and may not "
                "cover its pods"), unknown=True)
        elif key in namespaces:
            yield Finding(change.address, (
                f"namespace {shown} runs {who} ({', '.join(used)}) but has no ResourceQuota on "
                f"{wanted}: add one (spec.hard: {{{wanted}: N}}) so the team's GPUs are capped "
                "and can be charged back"),
                detail={"namespace": shown, "resources": list(missing)})
        else:
            where = ("the manifests set no namespace (it is the one they are applied to)"
                     if key is None else f"namespace {shown} is not in this input")
            yield Finding(change.address, cannot_verify(
                f"{who} uses {', '.join(used)}; {where}, so its ResourceQuota on {wanted} "
                "cannot be seen"), unknown=True)


def _used(found: k8s.Reading) -> tuple[str, ...]:
    """The GPU resources an object's pods ask for; templates others run (a ClusterTrainingRuntime,
    a WorkflowTemplate) are counted where they run, not where they are declared."""
    wl = found.workload
    if wl is not None and wl.lifecycle is k8s.Lifecycle.TEMPLATE:
        return ()
    stray = (r.resource for r in found.stray if r.resource in k8s.GPU_RESOURCES)
    return tuple(dict.fromkeys([*(wl.gpu_resources if wl is not None else ()), *stray]))


def _namespace(key: Any) -> str:
    if key is None:
        return "(not set)"
    text = str(key)
    return f"declared by {text[1:]}" if text.startswith("@") else text


RULE = K8sGpuNamespaceQuota()
