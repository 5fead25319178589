"""k8s-gpu-workload-autoscaled: a GPU Deployment or StatefulSet scales on GPU utilisation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpupool.record import Frozen
from policies.facts import k8s
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules import _autoscaled_examples as _ex
from policies.rules._common import cannot_verify, prop
from policies.rules._gpu_nodes import asks_gpu
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
    from typing import Any, Final

_GONE = (ChangeKind.DELETE, ChangeKind.READ)

def _res(obj: dict[str, Any]) -> dict[str, Any]:
    kind, name = obj["kind"], obj["metadata"]["name"]
    return {"type": f"kubernetes:{obj['apiVersion']}:{kind}", "name": name, "new": obj}


# What a kind with its own autoscaler is told, as templates: the rule formats them, and its
# admission twin (policies/admission/cel/k8s_gpu_workload_autoscaled.py) spells them in CEL.
UNSCALED: Final = ("{who} runs GPUs but nothing scales it: its GPUs stay allocated whether busy "
                   "or idle; what scales a {kind}: {what}")
OWN_UNKNOWN: Final = "{who}: whether the {name} scales it is unknown until apply ({where})"
OWN_OFF: Final = ("{who} runs GPUs but the {name} is off ({where}): its GPUs stay allocated "
                  "whether busy or idle; turn it on, with maxReplicas above minReplicas")
OWN_NEVER: Final = "{who} runs GPUs but {name} never scales it ({where}): {never}"
OWN_FIXED: Final = ("{who}: the {name} never scales it (min = max = {min}); give it room "
                    "(maxReplicas above {min})")
OWN_METRIC: Final = ("{who}: the {name} scales on {metrics}, not on GPU utilisation or load: "
                     "GPU-bound load leaves it idle; scale on a GPU metric (DCGM_FI_DEV_GPU_UTIL) "
                     "or the server's load")
# The metrics a message names when they are not GPU ones, in this order (whatever order the
# object lists them in), else NOT_PLAIN.
PLAIN: Final = ("cpu", "memory")
NOT_PLAIN: Final = "metrics that are not GPU utilisation"


class _Scaler(Frozen):
    __slots__ = ("change", "target", "kind")
    change: ResourceChange
    target: k8s.ScaleTarget
    kind: str  # HorizontalPodAutoscaler | ScaledObject

    def __init__(self, change: ResourceChange, target: k8s.ScaleTarget, kind: str) -> None:
        object.__setattr__(self, "change", change)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "kind", kind)


class K8sGpuWorkloadAutoscaled(Rule):
    meta = RuleMeta(
        id="k8s-gpu-workload-autoscaled",
        title="GPU serving workloads scale on GPU utilisation",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Allocation is not utilisation: a GPU Deployment with a fixed replica count holds "
            "its GPUs whether they are busy or idle. Every long-running (service) workload "
            "whose pods ask for GPUs (more than 0) scales: a Deployment, StatefulSet, ReplicaSet, "
            "ReplicationController or LeaderWorkerSet is the scaleTargetRef of a "
            "HorizontalPodAutoscaler or a KEDA ScaledObject in its namespace, on a GPU metric "
            "(a metric name, selector, query or trigger naming GPU or DCGM, such as "
            "DCGM_FI_DEV_GPU_UTIL), with room to scale (maxReplicas above minReplicas); a kind "
            "with its own autoscaler (RayCluster and RayService worker groups, KServe "
            "components, LLMInferenceService, NIMService) has it on, with room, on GPU "
            "utilisation or on the load it measures itself (Ray's resource demand, Knative's "
            "concurrency, the workload variant autoscaler): the Kubernetes kinds table below "
            "says what counts for each kind, per GPU role (a RayCluster head holding GPUs never "
            "scales). A KServe InferenceService serving one model across nodes (workerSpec) "
            "never scales: KServe's webhook refuses any autoscalerClass but none for it, and "
            "its controller runs the head at minReplicas and a fixed worker group (kserve/kserve "
            "validateMultiNodeVariables; 'Auto-scaling is not available for multi-node setups', "
            "KServe's multi-node docs), so it and its workers are told so, and to serve the "
            "model as an LLMInferenceService with spec.worker and spec.scaling, which KServe "
            "scales a whole LeaderWorkerSet group at a time (KServe 0.18). Scaling on CPU alone "
            "misses GPU-bound load. Jobs, training jobs, "
            "workflows, bare Pods and DaemonSets run to completion or one per node: they are "
            "out of scope. An autoscaler whose target is unknown until apply makes the finding "
            "'cannot verify'."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_AUTOSCALER,
                         ResourceKind.K8S_MANIFEST, ResourceKind.K8S_OBJECT}),
        k8s_lifecycles=frozenset({"service"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Deployment scaled by KEDA on DCGM GPU utilisation",
            allowed=True,
            resources=[_res(_ex.DEPLOYMENT), _res(_ex.SCALED)],
        ),
        Example(
            title="GPU Deployment without an autoscaler",
            allowed=False,
            resources=[_res(_ex.DEPLOYMENT)],
            message_contains=["Deployment ml/embeddings runs GPUs", "no HorizontalPodAutoscaler "
                              "or KEDA ScaledObject targets it"],
        ),
        Example(
            title="HPA on CPU only",
            allowed=False,
            resources=[_res(_ex.DEPLOYMENT), _res(_ex.HPA_CPU)],
            message_contains=["scales on cpu, not on GPU utilisation"],
        ),
        Example(
            title="Autoscaler that cannot scale (minimum = maximum)",
            allowed=False,
            resources=[_res(_ex.DEPLOYMENT), _res({**_ex.SCALED, "spec": {
                **_ex.SCALED["spec"], "minReplicaCount": 3, "maxReplicaCount": 3}})],
            message_contains=["never scales (min = max = 3)"],
        ),
        Example(
            title="KServe InferenceService on a GPU, Knative autoscaling to 4 replicas",
            allowed=True,
            resources=[_res(_ex.ISVC)],
        ),
        Example(
            title="RayService whose GPU worker group the Ray autoscaler never scales",
            allowed=False,
            resources=[_res(_ex.RAY_SERVICE)],
            message_contains=["RayService ml/llm, worker group gpu-group runs GPUs but the "
                              "RayCluster autoscaler is off",
                              "rayClusterConfig.enableInTreeAutoscaling"],
        ),
        Example(
            title="NIMService scaled by the operator's HPA on DCGM GPU utilisation",
            allowed=True,
            resources=[_res(_ex.NIM)],
        ),
        Example(
            title="NIMService whose operator HPA is switched off",
            allowed=False,
            resources=[_res({**_ex.NIM, "spec": {**_ex.NIM["spec"], "scale": {
                **_ex.NIM["spec"]["scale"], "enabled": False}}})],
            message_contains=["NIMService nim-service/llama runs GPUs but the NIM operator HPA "
                              "is off (spec.scale.enabled)"],
        ),
        Example(
            title="KServe InferenceService in Standard mode, its HPA on CPU (KServe's default)",
            allowed=False,
            resources=[_res({**_ex.ISVC, "metadata": {**_ex.ISVC["metadata"], "annotations": {
                "serving.kserve.io/deploymentMode": "RawDeployment"}}})],
            message_contains=["InferenceService ml/llm, predictor: the KServe autoscaler "
                              "(RawDeployment, hpa) scales on cpu, not on GPU utilisation"],
        ),
        Example(
            title="LLMInferenceService scaled by the workload variant autoscaler",
            allowed=True,
            resources=[_res(_ex.LLMISVC)],
        ),
        Example(
            title="LLMInferenceService with fixed replicas",
            allowed=False,
            resources=[_res({**_ex.LLMISVC, "spec": {k: v for k, v in _ex.LLMISVC["spec"].items()
                                                     if k != "scaling"} | {"replicas": 2}})],
            message_contains=["LLMInferenceService ml/qwen, decode runs GPUs but nothing scales "
                              "it", "spec.scaling with maxReplicas above minReplicas"],
        ),
        Example(
            title="KServe multi-node InferenceService (workerSpec): KServe never scales it",
            allowed=False,
            resources=[_res(_ex.ISVC_MULTI_NODE)],
            message_contains=["InferenceService ml/llama3-multinode-mp, predictor worker runs "
                              "GPUs but KServe multi-node serving (workerSpec) never scales it "
                              "(spec.predictor.workerSpec)", "only autoscalerClass none",
                              "LLMInferenceService with spec.worker and spec.scaling"],
        ),
        Example(
            title="The same model multi-node as an LLMInferenceService the workload variant "
                  "autoscaler scales, a whole group at a time",
            allowed=True,
            resources=[_res(_ex.LLMISVC_MULTI_NODE)],
        ),
        Example(
            title="Autoscaler target unknown until apply",
            allowed=False,
            unknown=True,
            resources=[_res(_ex.DEPLOYMENT), _res({**_ex.SCALED, "spec": {
                **_ex.SCALED["spec"], "scaleTargetRef": {"name": "(known after apply)"}}})],
            message_contains=["cannot verify", "target is unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        scalers: dict[tuple[Any, str, str], list[_Scaler]] = {}
        unresolved: list[_Scaler] = []
        workloads: list[tuple[ResourceChange, k8s.Workload]] = []
        for change in changes:
            if change.kind not in self.meta.kinds or change.change in _GONE:
                continue
            found = k8s.read(change)
            if found is None:
                continue
            obj = found.obj
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
                wl = found.workload
                if wl is not None and wl.lifecycle is k8s.Lifecycle.SERVICE and _holds_gpus(wl):
                    workloads.append((change, wl))
        for change, wl in workloads:
            yield from self._judge(change, wl, scalers, unresolved)

    def _judge(self, change: ResourceChange, wl: k8s.Workload,
               scalers: dict[tuple[Any, str, str], list[_Scaler]],
               unresolved: list[_Scaler]) -> Iterable[Finding]:
        gpu = [r for r in wl.roles if asks_gpu(r)]
        roles = [r for r in gpu if r.replicas.max != 0]
        if gpu and not roles:
            return  # parked: it holds no GPU
        for role in roles:
            if role.autoscaler is not None:
                yield from _own(change, wl, role)
        rest = [r for r in roles if r.autoscaler is None]
        if not rest and not wl.unknown:
            return
        if wl.scale_target:
            yield from self._targeted(change, wl, scalers, unresolved)
            return
        reader = k8s.reader_for(wl.obj)
        what = reader.autoscaled if reader is not None else "an autoscaler"
        for role in rest:
            yield Finding(change.address, UNSCALED.format(who=wl.who(role), kind=wl.obj.kind,
                                                          what=what))

    def _targeted(self, change: ResourceChange, wl: k8s.Workload,
                  scalers: dict[tuple[Any, str, str], list[_Scaler]],
                  unresolved: list[_Scaler]) -> Iterable[Finding]:
        """A kind an HPA or KEDA ScaledObject scales (Deployment, LeaderWorkerSet, …)."""
        obj = wl.obj
        who = wl.who()
        key = k8s.namespace_key(change, obj)
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
            yield Finding(change.address, (
                f"{who}: {s.kind} {s.change.name} scales on {_plain(s.target.metrics)}, not on "
                "GPU utilisation: GPU-bound load leaves it idle; add a GPU metric "
                "(DCGM_FI_DEV_GPU_UTIL)"))
        else:
            lo, hi = s.target.min_replicas, s.target.max_replicas
            yield Finding(change.address, (
                f"{who}: {s.kind} {s.change.name} never scales (min = max = {lo}); "
                f"give it room (maxReplicas above {lo})" if lo == hi else
                f"{who}: {s.kind} {s.change.name} has no maxReplicas above its minimum "
                f"({lo}-{hi})"))


def _own(change: ResourceChange, wl: k8s.Workload, role: k8s.Role) -> Iterable[Finding]:
    """A kind's own autoscaler of a GPU role: on, with room, on GPU utilisation or load."""
    a = role.autoscaler
    assert a is not None
    who = wl.who(role)
    where = prop(change.type, a.path)
    if a.never:
        yield Finding(change.address, OWN_NEVER.format(who=who, name=a.name, where=where,
                                                       never=a.never))
    elif a.enabled is UNKNOWN:
        yield Finding(change.address, cannot_verify(
            OWN_UNKNOWN.format(who=who, name=a.name, where=where)), unknown=True)
    elif a.enabled is not True:
        yield Finding(change.address, OWN_OFF.format(who=who, name=a.name, where=where))
    elif not a.can_scale:
        yield Finding(change.address, OWN_FIXED.format(who=who, name=a.name, min=a.min))
    elif not (a.on_load or k8s.is_gpu_metric(a.metrics)):
        yield Finding(change.address, OWN_METRIC.format(who=who, name=a.name,
                                                        metrics=_plain(a.metrics)))


def _holds_gpus(wl: k8s.Workload) -> bool:
    """A container asks for more than 0 GPUs (a GPU resource set to 0 holds none), or what it
    asks for is unknown."""
    return bool(wl.unknown) or any(asks_gpu(r) for r in wl.roles)


def _plain(metrics: tuple[str, ...]) -> str:
    return ", ".join(m for m in PLAIN if m in metrics) or NOT_PLAIN


def _can_scale(t: k8s.ScaleTarget) -> bool:
    if t.max_replicas is None:
        return True  # unset max: the ScaledObject default (100)
    return t.min_replicas is None or t.max_replicas > t.min_replicas


RULE = K8sGpuWorkloadAutoscaled()
