"""k8s-gpu-workload-autoscaled's own-autoscaler part judged both ways: generated objects of
every kind that scales itself get the same verdict, and the same first message, from the
Python rule and from the generated CEL.

RayClusters and RayServices (the autoscaler on, off or unset; worker groups with and without
replicas, min/max replicas, KubeRay's unbounded default, numOfHosts, suspend; a head holding
GPUs), InferenceServices (every deployment mode and autoscaler class, scale metrics, HPA
metrics nested as deep as an External metric's matchExpressions, multi-node workerSpecs),
LLMInferenceServices (decode and prefill, fixed replicas or scaling by the workload variant
autoscaler or KEDA, data / dataLocal / pipeline parallelism), NIMServices (the operator's
HPA on, off or absent, its metrics, multi-node pipelines) and NIMPipelines (services named or
not, enabled, disabled or unset, with and without a spec), each role with or without GPUs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.admission.evaluate import judge
from policies.sources.kubernetes import Manifest, to_changes

RULE = "k8s-gpu-workload-autoscaled"
COUNTS = st.sampled_from([0, 1, 2, 3, 4, 2147483647, -1])
GPUS = st.sampled_from([None, 0, 1, 2, "1"])


def _maybe(draw: Any, out: dict[str, Any], key: str, values: Any) -> None:
    if draw(st.booleans()):
        out[key] = draw(values)


@st.composite
def pod_specs(draw: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "main", "image": "x"}
    gpus = draw(GPUS)
    if gpus is not None:
        c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"containers": [c]}


# HPA v2 metric specs (KServe's autoScaling and NIM's hpa.metrics read them), GPU or not: the
# External one keeps its GPU text 8 levels under `metrics` (matchExpressions[].values[])
METRICS = st.sampled_from([
    {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 70}}},
    {"type": "Resource", "resource": {"name": "memory", "target": {
        "type": "Utilization", "averageUtilization": 80}}},
    {"type": "Pods", "pods": {"metric": {"name": "DCGM_FI_DEV_GPU_UTIL"}, "target": {
        "type": "AverageValue", "averageValue": "70"}}},
    {"type": "Pods", "pods": {"metric": {"name": "requests_per_second"}, "target": {
        "type": "AverageValue", "averageValue": "10"}}},
    {"type": "External", "external": {"metric": {"name": "util", "selector": {
        "matchExpressions": [{"key": "metric", "operator": "In", "values": ["gpu-util"]}]}},
        "target": {"type": "Value", "value": "1"}}},
])


@st.composite
def rays(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["RayCluster", "RayService"]))
    cluster: dict[str, Any] = {"headGroupSpec": {"template": {"spec": draw(pod_specs())}}}
    _maybe(draw, cluster, "enableInTreeAutoscaling", st.booleans())
    groups = []
    for i in range(draw(st.integers(0, 2))):
        g: dict[str, Any] = {"template": {"spec": draw(pod_specs())}}
        if draw(st.booleans()):
            g["groupName"] = f"g{i}"
        for key in ("replicas", "minReplicas", "maxReplicas", "numOfHosts"):
            _maybe(draw, g, key, COUNTS)
        _maybe(draw, g, "suspend", st.booleans())
        groups.append(g)
    cluster["workerGroupSpecs"] = groups
    spec = cluster if kind == "RayCluster" else {"rayClusterConfig": cluster}
    return {"apiVersion": "ray.io/v1", "kind": kind, "spec": spec}


@st.composite
def components(draw: Any) -> dict[str, Any]:
    comp: dict[str, Any] = {"model": {"modelFormat": {"name": "huggingface"},
                                      **draw(pod_specs())["containers"][0]}}
    for key in ("minReplicas", "maxReplicas"):
        _maybe(draw, comp, key, COUNTS)
    _maybe(draw, comp, "scaleMetric", st.sampled_from(["cpu", "memory", "concurrency", "rps"]))
    _maybe(draw, comp, "autoScaling", st.builds(lambda m: {"metrics": m},
                                                st.lists(METRICS, max_size=2)))
    if draw(st.booleans()):
        worker = draw(pod_specs())
        _maybe(draw, worker, "pipelineParallelSize", st.integers(0, 3))
        comp["workerSpec"] = worker
    return comp


@st.composite
def inference_services(draw: Any) -> dict[str, Any]:
    notes: dict[str, str] = {}
    _maybe(draw, notes, "serving.kserve.io/deploymentMode",
           st.sampled_from(["Serverless", "RawDeployment", "Standard", "Knative", ""]))
    _maybe(draw, notes, "serving.kserve.io/autoscalerClass",
           st.sampled_from(["hpa", "none", "external", "keda"]))
    spec: dict[str, Any] = {"predictor": draw(components())}
    if draw(st.booleans()):
        spec["transformer"] = {"containers": draw(pod_specs())["containers"],
                               **{k: v for k, v in draw(components()).items() if k != "model"}}
    return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"annotations": notes}, "spec": spec}


KEDA = st.sampled_from([
    {"triggers": [{"type": "prometheus", "metadata": {
        "query": "avg(DCGM_FI_DEV_GPU_UTIL)", "threshold": "70"}}]},
    {"triggers": [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}]},
    {"triggers": [{"type": "memory", "metadata": {"value": "60"}}]},
    {"triggers": [{"type": "prometheus", "metadata": {"query": "sum(rate(requests[1m]))"}}]},
])


@st.composite
def llm_parts(draw: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"template": draw(pod_specs())}
    _maybe(draw, part, "replicas", COUNTS)
    if draw(st.booleans()):
        part["worker"] = draw(pod_specs())
        part["parallelism"] = draw(st.fixed_dictionaries({}, optional={
            "data": st.integers(0, 8), "dataLocal": st.integers(0, 8),
            "pipeline": st.integers(0, 3), "tensor": st.just(2)}))
    if draw(st.booleans()):
        scaling: dict[str, Any] = {}
        for key in ("minReplicas", "maxReplicas"):
            _maybe(draw, scaling, key, COUNTS)
        how = draw(st.sampled_from(["wva", "keda", None]))
        if how == "wva":
            scaling["wva"] = {"variantCost": "10"}
        elif how == "keda":
            scaling["keda"] = draw(KEDA)
        part["scaling"] = scaling
    return part


@st.composite
def llm_services(draw: Any) -> dict[str, Any]:
    spec = draw(llm_parts())
    if draw(st.booleans()):
        spec["prefill"] = draw(llm_parts())
    return {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "LLMInferenceService",
            "spec": spec}


@st.composite
def nim_specs(draw: Any) -> dict[str, Any]:
    gpus = draw(GPUS)
    spec: dict[str, Any] = {"image": {"repository": "nvcr.io/nim/meta/llama3", "tag": "1.0"}}
    if gpus is not None:
        spec["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    _maybe(draw, spec, "replicas", COUNTS)
    if draw(st.booleans()):
        scale: dict[str, Any] = {}
        _maybe(draw, scale, "enabled", st.booleans())
        if draw(st.booleans()):
            hpa: dict[str, Any] = {}
            for key in ("minReplicas", "maxReplicas"):
                _maybe(draw, hpa, key, COUNTS)
            _maybe(draw, hpa, "metrics", st.lists(METRICS, max_size=2))
            scale["hpa"] = hpa
        spec["scale"] = scale
    if draw(st.booleans()):
        spec["multiNode"] = {"parallelism": draw(st.fixed_dictionaries({}, optional={
            "pipeline": st.integers(0, 3), "tensor": st.just(8)}))}
    return spec


@st.composite
def nim_services(draw: Any) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService",
                "spec": draw(nim_specs())}
    services = []
    for i in range(draw(st.integers(1, 3))):  # unnamed, disabled, enabled unset, no spec
        s: dict[str, Any] = {}
        if draw(st.booleans()):
            s["name"] = f"s{i}"
        _maybe(draw, s, "enabled", st.booleans())
        if draw(st.integers(0, 4)):
            s["spec"] = draw(nim_specs())
        services.append(s)
    return {"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMPipeline",
            "spec": {"services": services}}


def _named(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {**obj.get("metadata", {}), "name": "llm", "namespace": "ml"}
    return {**obj, "metadata": meta}


def _both(harness: Any, obj: dict[str, Any]) -> tuple[bool, list[str]]:
    changes = to_changes([Manifest("gen:1", "generated", obj)])
    python = [f.message for f in harness.python_findings(RULE, changes)]
    cel = judge(harness.objects_for(RULE), obj).failures(f"gpupool-{RULE}")
    cores = [m.removeprefix(f"{RULE}: ") for m in cel]
    same = bool(python) == bool(cel) and (not cel or cores == python[:1])
    return same, [*python, *cel]


# 40 examples a kind: each object is one cel-python evaluation of tens of ms (the first of a
# session compiles the policy's CEL, about a CPU-second)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=st.one_of(rays(), inference_services(), llm_services(), nim_services()))
def test_own_autoscaler_cel_agrees_with_the_rule(harness: Any, obj: dict[str, Any]) -> None:
    same, said = _both(harness, _named(obj))
    assert same, said
