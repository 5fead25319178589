# ruff: noqa: RUF001, RUF002, RUF003  (× and − are the signs people read in docs/policies.md)
"""KServe InferenceService (``serving.kserve.io``): the predictor, transformer and explainer
components (their containers, the predictor's model or framework spec, its multi-node
``workerSpec``), each component's min/max replicas and the autoscaler KServe runs for it.

Multi-node serving (a ``workerSpec``) never autoscales: KServe's webhook refuses any
``serving.kserve.io/autoscalerClass`` but ``none`` for it ("Multinode only supports 'none'
autoscaler": validateMultiNodeVariables, pkg/apis/serving/v1beta1/inference_service_validation.go),
its docs say "Auto-scaling is not available for multi-node setups" and "PipelineParallelSize
is not an autoscaling concept" (website docs/model-serving/generative-inference/multi-node), and
the controller runs the head Deployment at minReplicas and the worker Deployment at a fixed
``RAY_NODE_COUNT - 1`` pods whatever the component's replicas (createRawWorkerDeployment,
pkg/controller/v1beta1/inferenceservice/reconcilers/deployment/deployment_reconciler.go): the
node count is tensorParallelSize × pipelineParallelSize GPUs over the GPUs of one worker pod
(ray executor), or pipelineParallelSize (mp executor). So the workers are judged with their
component, and both are told that KServe never scales them (kserve/kserve @ aaac4e29, kserve/
website @ 05b83a6c).
"""

from __future__ import annotations

from collections.abc import Mapping

from policies.facts.k8s.autoscalers import texts
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import ContainerGpus, PodGpus, container, pod_spec
from policies.facts.k8s.quantities import whole_number
from policies.facts.k8s.readers._base import Reader, spec_of
from policies.facts.k8s.workload import Autoscaler, Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

COMPONENTS: Final = ("predictor", "transformer", "explainer")
# The predictor's model and framework specs, and the explainers': each is one container.
MODEL_SPECS: Final = ("model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx",
                      "huggingface", "pmml", "lightgbm", "paddle", "alibi", "art")
MODE: Final = "serving.kserve.io/deploymentMode"
CLASS: Final = "serving.kserve.io/autoscalerClass"
_KNATIVE: Final = frozenset({"Serverless", "Knative"})
_PLAIN: Final = frozenset({"cpu", "memory"})
MULTI_NODE: Final = "KServe multi-node serving (workerSpec)"
MULTI_NODE_NEVER: Final = (
    "KServe takes only autoscalerClass none for it and runs one head pod and a fixed worker "
    "group (tensorParallelSize × pipelineParallelSize GPUs), so its GPUs stay allocated whether "
    "busy or idle; serve the model as an LLMInferenceService with spec.worker and spec.scaling "
    "(KServe scales its LeaderWorkerSet a whole group at a time), or waive it with an owner, a "
    "reason and an expiry")


def _isvc(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    notes = _annotations(obj)
    mode = notes.get(MODE) or "Serverless"  # KServe's shipped inferenceservice-config default
    roles: list[Role] = []
    for name in COMPONENTS:
        comp = block(spec.get(name))
        path = f"spec.{name}"
        if comp is None:
            continue
        if comp is UNKNOWN:
            roles.append(Role(name, PodGpus(unknown=f"{name} unknown until apply", path=path)))
            continue
        replicas, scaler = _scaling(comp, path, str(mode), str(notes.get(CLASS) or "hpa"))
        worker = block(comp.get("worker_spec"))
        if worker is not None:  # multi-node: the head at minReplicas, workers a fixed group
            scaler = Autoscaler(MULTI_NODE, False, f"{path}.worker_spec", replicas.min,
                                replicas.min, never=MULTI_NODE_NEVER)
            if not replicas.unknown:
                replicas = Replicas(replicas.min, replicas.min, replicas.path)
        roles.append(Role(name, _component_pods(comp, path), replicas, _labels(comp), comp,
                          scaler))
        if worker is not None:
            roles.append(Role(f"{name} worker", pod_spec(worker, f"{path}.worker_spec"),
                              _workers(worker, f"{path}.worker_spec"), _labels(comp), worker,
                              scaler))
    return Workload(obj, "kserve", Lifecycle.SERVICE, tuple(roles))


def _component_pods(comp: Mapping[str, Any], path: str) -> PodGpus:
    pods = pod_spec(comp, path)
    if pods.unknown:
        return pods
    extra: list[ContainerGpus] = []
    for key in MODEL_SPECS:
        spec = comp.get(key)
        if spec is not None:
            extra.append(container(spec, f"{path}.{key}", default_name="kserve-container"))
    return PodGpus((*extra, *pods.containers), None, path)


def _scaling(comp: Mapping[str, Any], path: str, mode: str, klass: str
             ) -> tuple[Replicas, Autoscaler]:
    lo_raw, hi_raw = comp.get("min_replicas"), comp.get("max_replicas")
    if lo_raw is UNKNOWN or hi_raw is UNKNOWN:
        return (Replicas(None, None, path, "min_replicas/max_replicas unknown until apply"),
                Autoscaler("KServe autoscaler", UNKNOWN, path, None, None))
    lo = whole_number(lo_raw, 1)
    hi = whole_number(hi_raw, 0) or None  # 0 / unset: no maximum set
    metric = comp.get("scale_metric")
    named = tuple(texts(comp.get("auto_scaling")))
    if mode in _KNATIVE:
        metrics = (str(metric or "concurrency"), *named)
        scaler = Autoscaler("KServe autoscaler (Knative)", True, f"{path}.max_replicas", lo, hi,
                            metrics, on_load=str(metric or "concurrency") not in _PLAIN)
        return Replicas(lo, hi, f"{path}.min_replicas"), scaler
    top = max(lo or 0, hi or 0)  # Standard mode: an HPA from min to max(min, max)
    metrics = (str(metric or "cpu"), *named)
    enabled: bool | Any = {"none": False, "external": UNKNOWN}.get(klass, True)
    scaler = Autoscaler(f"KServe autoscaler ({mode}, {klass})", enabled,
                        f"{path}.max_replicas", lo, top, metrics, on_load=False)
    return Replicas(lo, top, f"{path}.min_replicas"), scaler


def _workers(worker: Any, path: str) -> Replicas:
    """Multi-node serving: pipelineParallelSize nodes, the head among them (the mp executor's
    count, and the ray executor's when a worker pod holds tensorParallelSize GPUs), whatever
    the component's replicas; unknown when pipelineParallelSize is not set (the
    ServingRuntime's default, and the GPUs per pod, decide)."""
    size = whole_number(worker.get("pipeline_parallel_size"), None) if is_map(worker) else None
    if size is None:
        return Replicas(None, None)
    per = max(size - 1, 0)
    return Replicas(per, per, f"{path}.pipeline_parallel_size")


def _annotations(obj: K8sObject) -> Mapping[str, Any]:
    meta = block(obj.root.get("metadata"))
    notes = meta.get("annotations") if is_map(meta) else None
    return notes if is_map(notes) else {}


def _labels(comp: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = comp.get("labels")
    return labels if is_map(labels) else {}


READERS = (
    Reader("kserve", (("serving.kserve.io", "InferenceService"),), Lifecycle.SERVICE, _isvc,
           "spec.predictor, spec.transformer, spec.explainer: their containers, the "
           "predictor's model or framework spec (one container) and its workerSpec; pods = "
           "minReplicas…maxReplicas (multi-node: the head at minReplicas, and "
           "pipelineParallelSize − 1 workers whatever the replicas)",
           "KServe's own autoscaler: in Serverless (Knative) mode, the default, from "
           "minReplicas to maxReplicas (unset: no bound) on concurrency or rps; in Standard "
           "(RawDeployment) mode an HPA from minReplicas to maxReplicas, which must name a "
           "GPU metric (its default is CPU); autoscalerClass none never scales; multi-node "
           "serving (a workerSpec) never scales: KServe refuses an autoscaler for it (its "
           "workers are judged with their component)"),
)
