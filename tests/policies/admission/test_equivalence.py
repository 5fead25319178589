"""Generated objects judged both ways: the Python rule's verdict and the CEL's are the same.

Pods, Deployments, PyTorchJobs, KServe InferenceServices (a model spec and containers), Argo
Workflows (a container, sidecars, init containers) and NIMServices (one resources block) with
GPU counts written every way a manifest can (integers, strings, milli-units, SI suffixes,
exponents, fractions), in limits, requests or both, in app and init containers, named or not,
in namespaces and with labels the multi-GPU parameters may name, under random parameters.
For k8s-gpu-per-container and k8s-gpu-limits the first message is compared word for word.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.admission.evaluate import judge
from policies.sources.kubernetes import Manifest, to_changes

COUNTS = st.one_of(st.integers(0, 9), st.sampled_from(
    ["0", "1", "2", "4", "8", "500m", "1500m", "2000m", "1k", "1e1", "0.5", "1.0", "3"]))
RESOURCES = st.sampled_from(["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/gpu.shared"])


@st.composite
def containers(draw: Any) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for side in ("limits", "requests"):
        if draw(st.booleans()):
            chosen = draw(st.dictionaries(RESOURCES, COUNTS, max_size=2))
            if draw(st.booleans()):
                chosen["cpu"] = "2"
            res[side] = chosen
    name = draw(st.sampled_from(["main", "side", "init", None]))  # None: unnamed (#i)
    return {**({"name": name} if name else {}), "image": "x", "resources": res}


@st.composite
def workloads(draw: Any) -> dict[str, Any]:
    ns = draw(st.sampled_from(["ml", "web"]))
    labels = draw(st.dictionaries(st.just("gpupool.io/multi-gpu"),
                                  st.sampled_from(["true", "false"]), max_size=1))
    spec: dict[str, Any] = {"containers": draw(st.lists(containers(), min_size=1, max_size=3))}
    if draw(st.booleans()):
        spec["initContainers"] = draw(st.lists(containers(), max_size=1))
    kind = draw(st.sampled_from(["Pod", "Deployment", "PyTorchJob", "InferenceService",
                                 "Workflow", "NIMService"]))
    meta = {"name": "w", "namespace": ns}
    template = {"metadata": {"labels": {"app": "w", **labels}}, "spec": spec}
    if kind == "InferenceService":  # a model spec (one container) before the pod spec's
        model = {"modelFormat": {"name": "x"}, "resources": draw(containers())["resources"]}
        return {"apiVersion": "serving.kserve.io/v1beta1", "kind": kind, "metadata": meta,
                "spec": {"predictor": {"labels": labels, "model": model, **spec}}}
    if kind == "Workflow":  # a container, sidecars and init containers of one template
        t = {"name": "t", "container": spec["containers"][0], "metadata": template["metadata"],
             "sidecars": spec["containers"][1:], **({"initContainers": spec["initContainers"]}
                                                    if "initContainers" in spec else {})}
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": meta,
                "spec": {"entrypoint": "t", "templates": [t]}}
    if kind == "NIMService":  # one resources block
        return {"apiVersion": "apps.nvidia.com/v1alpha1", "kind": kind, "metadata": meta,
                "spec": {"labels": labels, "resources": spec["containers"][0]["resources"]}}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {**meta, "labels": template["metadata"]["labels"]}, "spec": spec}
    if kind == "Deployment":
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": template}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta,
            "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": template}}}}


PARAMS = st.fixed_dictionaries({}, optional={
    "maxGpusPerContainer": st.integers(1, 4), "multiGpuMax": st.integers(1, 8),
    "multiGpuNamespaces": st.lists(st.sampled_from(["ml", "web"]), max_size=2, unique=True),
    "multiGpuLabels": st.dictionaries(st.just("gpupool.io/multi-gpu"), st.just("true"),
                                      max_size=1)})


def _both(harness: Any, rule_id: str, obj: dict[str, Any], params: dict[str, Any]
          ) -> tuple[bool, list[str]]:
    python, cel = _messages(harness, rule_id, obj, params)
    return bool(python) == bool(cel), [*python, *cel]


def _messages(harness: Any, rule_id: str, obj: dict[str, Any], params: dict[str, Any]
              ) -> tuple[list[str], list[str]]:
    """The PR check's messages and the CEL's (without the rule ID)."""
    changes = to_changes([Manifest("gen:1", "generated", obj)])
    python = [f.message for f in harness.python_findings(rule_id, changes, params)
              if not f.unknown]
    cel = judge(harness.objects_for(rule_id, params), obj).failures(f"gpupool-{rule_id}")
    return python, [m.removeprefix(f"{rule_id}: ") for m in cel]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=workloads(), params=PARAMS)
def test_per_container_cel_agrees_with_the_rule(harness: Any, obj: dict[str, Any],
                                                params: dict[str, Any]) -> None:
    python, cel = _messages(harness, "k8s-gpu-per-container", obj, params)
    assert cel == python[:1], (python, cel)  # the verdict, and the first message word for word


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=workloads())
def test_limits_cel_agrees_with_the_rule(harness: Any, obj: dict[str, Any]) -> None:
    python, cel = _messages(harness, "k8s-gpu-limits", obj, {})
    assert cel == python[:1], (python, cel)


DEADLINES = st.one_of(st.none(), st.sampled_from([60, 3600, 86400, 2592000, 2592001, "3600"]))


@st.composite
def volcano_jobs(draw: Any) -> dict[str, Any]:
    """Volcano Jobs whose tasks each may ask for a GPU and may set their own deadline."""
    tasks = []
    for i in range(draw(st.integers(1, 3))):
        pod: dict[str, Any] = {"containers": [draw(containers())]}
        deadline = draw(DEADLINES)
        if deadline is not None:
            pod["activeDeadlineSeconds"] = deadline
        task: dict[str, Any] = {"replicas": 1, "template": {"spec": pod}}
        if draw(st.booleans()):
            task["name"] = f"t{i}"
        tasks.append(task)
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "mpi", "namespace": "ml"}, "spec": {"tasks": tasks}}


# 40: up to three tasks each, every one read through the CEL (150 passed the 300 s timeout when
# five suites shared two cores)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=volcano_jobs(), limit=st.sampled_from([None, 3600, 2592000]))
def test_per_task_deadline_cel_agrees_with_the_rule(harness: Any, obj: dict[str, Any],
                                                    limit: int | None) -> None:
    params = {"maxDeadlineSeconds": limit} if limit is not None else {}
    same, said = _both(harness, "k8s-gpu-job-deadline", obj, params)
    assert same, said
