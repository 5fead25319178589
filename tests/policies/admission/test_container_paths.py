# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""k8s-gpu-per-container and k8s-gpu-limits at admission name the container as the PR check
does: its full path (``spec.template.spec.initContainers[0].resources.limits``,
``spec.predictor.model.resources``, ``spec.templates[1].sidecars[0].resources``,
``spec.services[1].spec.resources``), its name (``#1`` when it has none), the count as the
rule writes it (``1000`` for ``1k``, ``3/2``) and what to multiply, for every kind the
policies match and every place its reader reads containers: the first message, word for
word."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from policies.admission.evaluate import judge
from policies.admission.kinds import KINDS, Argo, KServe, Resources
from policies.sources.kubernetes import Manifest, to_changes

RULES = ("k8s-gpu-per-container", "k8s-gpu-limits")
# A bad container's resources: for per-container (over 1 GPU) and for limits (each problem)
BAD = {"k8s-gpu-per-container": ({"limits": {"nvidia.com/gpu": 4}},
                                  {"requests": {"amd.com/gpu": "1500m"}},
                                  {"limits": {"amd.com/gpu": "1k"},
                                   "requests": {"nvidia.com/gpu": 2}}),
       "k8s-gpu-limits": ({"requests": {"nvidia.com/gpu": 1}},
                          {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": "2"}},
                          {"limits": {"nvidia.com/gpu": "500m"}},
                          {"limits": {"amd.com/gpu": "1k"}, "requests": {"amd.com/gpu": 1000,
                                                                         "nvidia.com/gpu": 1}})}
OK = {"limits": {"nvidia.com/gpu": 1}}


def _c(name: str | None, resources: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"image": "x", "resources": resources}
    return {"name": name, **out} if name else out


def _pod(where: str, bad: dict[str, Any]) -> dict[str, Any]:
    """A pod spec with the bad container in ``where``: the second app container, the first
    init container, or an unnamed app container."""
    if where == "init":
        return {"containers": [_c("app", OK)], "initContainers": [_c("init", bad)]}
    return {"containers": [_c("ok", OK), _c(None if where == "unnamed" else "bad", bad)]}


def _tmpl(where: str, bad: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "w"}}, "spec": _pod(where, bad)}


def _argo(where: str, bad: dict[str, Any]) -> dict[str, Any]:
    t: dict[str, Any] = {"name": "t1", "container": _c("main", OK),
                         "sidecars": [_c("side", OK)]}
    if where in ("container", "script"):
        t.pop("container")
        t[where] = _c(None, bad)
    elif where == "containerSet":
        t["containerSet"] = {"containers": [_c("a", OK), _c("b", bad)]}
    elif where == "sidecars":
        t["sidecars"] = [_c("side", OK), _c("side2", bad)]
    else:
        t["initContainers"] = [_c("init", bad)]
    return {"templates": [{"name": "t0", "container": _c("main", OK)}, t]}


def _kserve(where: str, bad: dict[str, Any]) -> dict[str, Any]:
    predictor: dict[str, Any] = {"minReplicas": 1, "maxReplicas": 3,
                                 "model": {"modelFormat": {"name": "x"}, "resources": OK}}
    if where == "model":
        predictor["model"]["resources"] = bad
    elif where == "worker":
        predictor["workerSpec"] = {"pipelineParallelSize": 2, "containers": [_c(None, bad)]}
    else:
        predictor.update(_pod(where, bad))
    return {"predictor": predictor}


def _kubeflow(key: str) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    def spec(where: str, bad: dict[str, Any]) -> dict[str, Any]:
        return {key: {"Master": {"replicas": 1, "template": _tmpl("app", OK)},
                      "Worker": {"replicas": 2, "template": _tmpl(where, bad)}}}
    return spec


PLACES: dict[str, tuple[str, ...]] = {"pod": ("app", "init", "unnamed"),
                                      "argo": ("container", "script", "containerSet",
                                               "sidecars", "init"),
                                      "kserve": ("model", "app", "init", "worker"),
                                      "resources": ("block",)}
SPECS: dict[tuple[str, str], Callable[[str, dict[str, Any]], dict[str, Any]]] = {
    ("", "Pod"): _pod,
    ("", "ReplicationController"): lambda w, b: {"template": _tmpl(w, b)},
    ("apps", "Deployment"): lambda w, b: {"template": _tmpl(w, b)},
    ("apps", "StatefulSet"): lambda w, b: {"template": _tmpl(w, b)},
    ("apps", "ReplicaSet"): lambda w, b: {"template": _tmpl(w, b)},
    ("apps", "DaemonSet"): lambda w, b: {"template": _tmpl(w, b)},
    ("batch", "Job"): lambda w, b: {"template": _tmpl(w, b)},
    ("batch", "CronJob"): lambda w, b: {"jobTemplate": {"spec": {"template": _tmpl(w, b)}}},
    **{("kubeflow.org", k): _kubeflow(key) for k, key in (
        ("PyTorchJob", "pytorchReplicaSpecs"), ("TFJob", "tfReplicaSpecs"),
        ("MPIJob", "mpiReplicaSpecs"), ("PaddleJob", "paddleReplicaSpecs"),
        ("XGBoostJob", "xgbReplicaSpecs"), ("JAXJob", "jaxReplicaSpecs"),
        ("MXJob", "mxReplicaSpecs"))},
    ("trainer.kubeflow.org", "TrainJob"): lambda w, b: {"trainer": {
        "numNodes": 2, "resourcesPerNode": b}},
    **{("trainer.kubeflow.org", k): lambda w, b: {"template": {"spec": {"replicatedJobs": [
        {"name": "node", "template": {"spec": {"template": _tmpl(w, b)}}}]}}}
       for k in ("TrainingRuntime", "ClusterTrainingRuntime")},
    ("jobset.x-k8s.io", "JobSet"): lambda w, b: {"replicatedJobs": [
        {"name": "ok", "template": {"spec": {"template": _tmpl("app", OK)}}},
        {"template": {"spec": {"template": _tmpl(w, b)}}}]},
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): lambda w, b: {
        "replicas": 2, "leaderWorkerTemplate": {"size": 3, "leaderTemplate": _tmpl("app", OK),
                                                "workerTemplate": _tmpl(w, b)}},
    ("ray.io", "RayCluster"): lambda w, b: {
        "enableInTreeAutoscaling": True, "headGroupSpec": {"template": _tmpl("app", OK)},
        "workerGroupSpecs": [{"groupName": "g", "minReplicas": 1, "maxReplicas": 3,
                              "template": _tmpl(w, b)}]},
    ("ray.io", "RayService"): lambda w, b: {"rayClusterConfig": {
        "headGroupSpec": {"template": _tmpl("app", OK)},
        "workerGroupSpecs": [{"replicas": 2, "template": _tmpl(w, b)}]}},
    ("ray.io", "RayJob"): lambda w, b: {
        "rayClusterSpec": {"headGroupSpec": {"template": _tmpl("app", OK)}},
        "submitterPodTemplate": _tmpl(w, b)},
    ("serving.kserve.io", "InferenceService"): _kserve,
    **{("serving.kserve.io", k): lambda w, b: {
        "template": _pod("app", OK), "parallelism": {"pipeline": 2},
        "scaling": {"minReplicas": 1, "maxReplicas": 3, "wva": {}},
        "prefill": {"replicas": 1, "template": _pod("app", OK), "worker": _pod(w, b)}}
       for k in ("LLMInferenceService", "LLMInferenceServiceConfig")},
    **{("argoproj.io", k): _argo for k in ("Workflow", "WorkflowTemplate",
                                           "ClusterWorkflowTemplate")},
    ("argoproj.io", "CronWorkflow"): lambda w, b: {"workflowSpec": _argo(w, b)},
    ("batch.volcano.sh", "Job"): lambda w, b: {"tasks": [
        {"name": "ok", "replicas": 1, "template": _tmpl("app", OK)},
        {"replicas": 2, "template": _tmpl(w, b)}]},
    ("apps.nvidia.com", "NIMService"): lambda w, b: {"replicas": 2, "resources": b},
    ("apps.nvidia.com", "NIMPipeline"): lambda w, b: {"services": [
        {"name": "off", "enabled": False, "spec": {"resources": b}},
        {"name": "s", "enabled": True, "spec": {"resources": b}}]},
    ("keda.sh", "ScaledJob"): lambda w, b: {"jobTargetRef": {"template": _tmpl(w, b)}},
}


def _layout(kind: tuple[str, str]) -> str:
    sources = KINDS[kind]
    for cls, name in ((Resources, "resources"), (Argo, "argo"), (KServe, "kserve")):
        if all(isinstance(s, cls) for s in sources):
            return name
    return "pod"


# Each kind in each place its layout has, each rule, each bad variant in turn (all of them
# for a kind whose first place is this one: every variant meets every layout)
CASES = [(kind, where, rule, i) for kind in sorted(SPECS) for where in PLACES[_layout(kind)]
         for rule in RULES for i in range(len(BAD[rule]))
         if where == PLACES[_layout(kind)][0]
         or i == (PLACES[_layout(kind)].index(where) + len(kind[1])) % len(BAD[rule])]


def test_every_matched_kind_has_samples() -> None:
    assert set(SPECS) == set(KINDS)


def _ours(harness: Any, rule: str) -> list[dict[str, Any]]:
    return [o for o in harness.objects_for(rule)
            if o["metadata"].get("annotations", {}).get("gpupool.io/policy") == rule]


@pytest.mark.parametrize(("kind", "where", "rule", "i"), CASES,
                         ids=[f"{k[1]}-{w}-{r.removeprefix('k8s-gpu-')}-{i}"
                              for k, w, r, i in CASES])
def test_the_cel_names_the_container_as_the_pr_check(harness: Any, kind: tuple[str, str],
                                                    where: str, rule: str, i: int) -> None:
    group, name = kind
    obj = {"apiVersion": f"{group}/v1" if group else "v1", "kind": name,
           "metadata": {"name": "w", "namespace": "ml"}, "spec": SPECS[kind](where, BAD[rule][i])}
    python = [f.message for f in harness.python_findings(
        rule, to_changes([Manifest("s:1", "sample", obj)])) if not f.unknown]
    cel = [m.removeprefix(f"{rule}: ")
           for m in judge(_ours(harness, rule), obj).failures(f"gpupool-{rule}")]
    assert python, obj  # the sample is bad, as the PR check says
    assert cel == python[:1], (python, cel)


def test_the_messages_name_the_place_the_sample_put_it(harness: Any) -> None:
    """What the users read, spelled out for a few places (the test above compares both)."""
    obj = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
           "metadata": {"name": "w", "namespace": "ml"},
           "spec": _argo("sidecars", {"limits": {"nvidia.com/gpu": "1500m"}})}
    said = judge(_ours(harness, RULES[0]), obj).failures(f"gpupool-{RULES[0]}")
    assert said and said[0].startswith(
        "k8s-gpu-per-container: Workflow ml/w, template t1: container side2 asks for 3/2 × "
        "nvidia.com/gpu (spec.templates[1].sidecars[1].resources.limits); at most 1 per "
        "container: run 3/2 × the replicas with 1 GPU each"), said
    obj = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
           "metadata": {"name": "w", "namespace": "ml"},
           "spec": _kserve("worker", {"requests": {"nvidia.com/gpu": 1}})}
    said = judge(_ours(harness, RULES[1]), obj).failures(f"gpupool-{RULES[1]}")
    assert said and said[0].startswith(
        "k8s-gpu-limits: InferenceService ml/w, predictor worker: container #0: "
        "nvidia.com/gpu is in spec.predictor.workerSpec.containers[0].resources.requests "
        "but not in limits"), said


def test_the_one_difference_the_docs_name_a_kubeflow_replica_type_with_an_underscore(
        harness: Any) -> None:
    """The PR check camel-cases every property path, a replica type (a map key) too; the
    policy names it as written. The training operators take only Master, Worker, PS, Chief,
    Evaluator and Launcher, so no such job runs (docs/kubernetes.md, Messages)."""
    rule = RULES[0]
    obj = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "w", "namespace": "ml"},
           "spec": {"pytorchReplicaSpecs": {"my_worker": {"template": _tmpl("app", BAD[rule][0])}}}}
    (python,) = [f.message for f in harness.python_findings(
        rule, to_changes([Manifest("s:1", "sample", obj)]))]
    (cel,) = judge(_ours(harness, rule), obj).failures(f"gpupool-{rule}")
    assert "(spec.pytorchReplicaSpecs.myWorker.template.spec.containers[1]" in python
    assert "(spec.pytorchReplicaSpecs.my_worker.template.spec.containers[1]" in cel
    assert cel.removeprefix(f"{rule}: ") == python.replace(".myWorker.", ".my_worker.")
