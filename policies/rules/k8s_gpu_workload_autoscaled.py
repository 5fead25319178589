"""k8s-gpu-workload-autoscaled: a GPU Deployment or StatefulSet scales on GPU utilisation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from policies.facts import k8s
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify
from policies.rules.base import Enforcement, Example, Finding, Rule, RuleContext, RuleMeta

_GONE = (ChangeKind.DELETE, ChangeKind.READ)

_DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "embeddings", "namespace": "ml"},
               "spec": {"selector": {"matchLabels": {"app": "embeddings"}}, "template": {
                   "metadata": {"labels": {"app": "embeddings"}},
                   "spec": {"containers": [{"name": "triton",
                                            "image": "nvcr.io/nvidia/tritonserver:24.08-py3",
                                            "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
_SCALED = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
           "metadata": {"name": "embeddings", "namespace": "ml"},
           "spec": {"scaleTargetRef": {"name": "embeddings"}, "minReplicaCount": 1,
                    "maxReplicaCount": 8, "triggers": [{"type": "prometheus", "metadata": {
                        "serverAddress": "http://prometheus-operated.monitoring.svc:9090",
                        "query": 'sum(DCGM_FI_DEV_GPU_UTIL{namespace="ml"})',
                        "threshold": "70"}}]}}
_HPA_CPU = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "embeddings", "namespace": "ml"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "embeddings"},
                     "minReplicas": 1, "maxReplicas": 8, "metrics": [{
                         "type": "Resource", "resource": {"name": "cpu", "target": {
                             "type": "Utilization", "averageUtilization": 70}}}]}}


def _res(obj: dict[str, Any]) -> dict[str, Any]:
    kind, name = obj["kind"], obj["metadata"]["name"]
    return {"type": f"kubernetes:{obj['apiVersion']}:{kind}", "name": name, "new": obj}


@dataclass(frozen=True, slots=True)
class _Scaler:
    change: ResourceChange
    target: k8s.ScaleTarget
    kind: str  # HorizontalPodAutoscaler | ScaledObject


class K8sGpuWorkloadAutoscaled(Rule):
    meta = RuleMeta(
        id="k8s-gpu-workload-autoscaled",
        title="GPU Deployments and StatefulSets scale on GPU utilisation",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Allocation is not utilisation: a GPU Deployment with a fixed replica count holds "
            "its GPUs whether they are busy or idle. Every Deployment, StatefulSet, ReplicaSet "
            "or ReplicationController whose pods ask for GPUs is the scaleTargetRef of a "
            "HorizontalPodAutoscaler or a KEDA ScaledObject in its namespace, on a GPU metric "
            "(a metric name, selector, query or trigger naming GPU or DCGM, such as "
            "DCGM_FI_DEV_GPU_UTIL), with room to scale (maxReplicas above minReplicas). Scaling "
            "on CPU alone misses GPU-bound load. Jobs, CronJobs, bare Pods and DaemonSets run "
            "to completion or one per node: they are out of scope. An autoscaler whose target "
            "is unknown until apply makes the finding 'cannot verify'."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_AUTOSCALER,
                         ResourceKind.K8S_MANIFEST}),
    )

    examples = (
        Example(
            title="Deployment scaled by KEDA on DCGM GPU utilisation",
            allowed=True,
            resources=[_res(_DEPLOYMENT), _res(_SCALED)],
        ),
        Example(
            title="GPU Deployment without an autoscaler",
            allowed=False,
            resources=[_res(_DEPLOYMENT)],
            message_contains=["Deployment ml/embeddings runs GPUs", "no HorizontalPodAutoscaler "
                              "or KEDA ScaledObject targets it"],
        ),
        Example(
            title="HPA on CPU only",
            allowed=False,
            resources=[_res(_DEPLOYMENT), _res(_HPA_CPU)],
            message_contains=["scales on cpu, not on GPU utilisation"],
        ),
        Example(
            title="Autoscaler that cannot scale (minimum = maximum)",
            allowed=False,
            resources=[_res(_DEPLOYMENT), _res({**_SCALED, "spec": {
                **_SCALED["spec"], "minReplicaCount": 3, "maxReplicaCount": 3}})],
            message_contains=["never scales (min = max = 3)"],
        ),
        Example(
            title="Autoscaler target unknown until apply",
            allowed=False,
            unknown=True,
            resources=[_res(_DEPLOYMENT), _res({**_SCALED, "spec": {
                **_SCALED["spec"], "scaleTargetRef": {"name": "(known after apply)"}}})],
            message_contains=["cannot verify", "target is unknown until apply"],
        ),
    )

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        scalers: dict[tuple[Any, str, str], list[_Scaler]] = {}
        unresolved: list[_Scaler] = []
        workloads: list[tuple[ResourceChange, k8s.Workload]] = []
        for change in changes:
            if change.kind not in self.meta.kinds or change.change in _GONE:
                continue
            obj = k8s.k8s_object(change)
            if obj is None:
                continue
            target = k8s.scale_target(obj)
            if target is not None:
                scaler = _Scaler(change, target, obj.kind)
                key = k8s.namespace_key(change, obj)
                if (target.unknown or key is UNKNOWN or not isinstance(target.kind, str)
                        or not isinstance(target.name, str)):
                    unresolved.append(scaler)
                else:
                    scalers.setdefault((key, target.kind, target.name), []).append(scaler)
            else:
                wl = k8s.workload(obj)
                if wl is not None and wl.lifecycle is k8s.Lifecycle.SERVICE and wl.gpu:
                    workloads.append((change, wl))
        for change, wl in workloads:
            yield from self._judge(change, wl, scalers, unresolved)

    def _judge(self, change: ResourceChange, wl: k8s.Workload,
               scalers: dict[tuple[Any, str, str], list[_Scaler]],
               unresolved: list[_Scaler]) -> Iterable[Finding]:
        obj = wl.obj
        who = wl.who()
        key = k8s.namespace_key(change, obj)
        if wl.gpu_roles and all(r.replicas.max == 0 for r in wl.gpu_roles):
            return  # parked: it holds no GPU
        if key is UNKNOWN or not isinstance(obj.name, str):
            yield Finding(change.address, cannot_verify(
                f"{who}: its name or namespace is unknown until apply, so its autoscaler cannot "
                "be matched"), unknown=True)
            return
        found = scalers.get((key, obj.kind, obj.name), [])
        good = [s for s in found if k8s.is_gpu_metric(s.target.metrics) and _can_scale(s.target)]
        if good:
            return
        if unresolved:
            yield Finding(change.address, cannot_verify(
                f"{who}: an autoscaler's target is unknown until apply "
                f"({unresolved[0].change.address})"), unknown=True)
            return
        if not found:
            yield Finding(change.address, (
                f"{who} runs GPUs but no HorizontalPodAutoscaler or KEDA ScaledObject targets "
                "it: its GPUs stay allocated whether busy or idle; scale it on GPU utilisation "
                "(e.g. a ScaledObject with a Prometheus trigger on DCGM_FI_DEV_GPU_UTIL)"))
            return
        s = found[0]
        if not k8s.is_gpu_metric(s.target.metrics):
            on = ", ".join(dict.fromkeys(m for m in s.target.metrics if m in (
                "cpu", "memory"))) or "metrics that are not GPU utilisation"
            yield Finding(change.address, (
                f"{who}: {s.kind} {s.change.name} scales on {on}, not on GPU utilisation: "
                "GPU-bound load leaves it idle; add a GPU metric (DCGM_FI_DEV_GPU_UTIL)"))
        else:
            lo, hi = s.target.min_replicas, s.target.max_replicas
            yield Finding(change.address, (
                f"{who}: {s.kind} {s.change.name} never scales (min = max = {lo}); "
                f"give it room (maxReplicas above {lo})" if lo == hi else
                f"{who}: {s.kind} {s.change.name} has no maxReplicas above its minimum "
                f"({lo}-{hi})"))


def _can_scale(t: k8s.ScaleTarget) -> bool:
    if t.max_replicas is None:
        return True  # unset max: the ScaledObject default (100)
    return t.min_replicas is None or t.max_replicas > t.min_replicas


RULE = K8sGpuWorkloadAutoscaled()
