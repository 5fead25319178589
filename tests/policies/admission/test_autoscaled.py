"""k8s-gpu-workload-autoscaled at admission: upstream manifests of every kind with its own
autoscaler get the PR check's verdict and message through the CEL; the two-object part (an
HPA or ScaledObject naming a Deployment) is never judged at admission."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from policies.admission.cel.k8s_gpu_workload_autoscaled import ADMISSION
from policies.admission.evaluate import judge
from policies.sources.kubernetes import Manifest, to_changes

RULE = "k8s-gpu-workload-autoscaled"
POLICY = f"gpupool-{RULE}"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "kubernetes-workloads"
KINDS = {kind for _, kind in ADMISSION.kinds}


def _upstream() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") in KINDS:
                out.append((f"{path.name}:{doc['kind']}", doc))
    return out


UPSTREAM = _upstream()


def _python(harness: Any, obj: dict[str, Any]) -> list[str]:
    changes = to_changes([Manifest("u:1", "upstream", obj)])
    return [f.message for f in harness.python_findings(RULE, changes)]


def _cel(harness: Any, obj: dict[str, Any]) -> list[str]:
    return [m.removeprefix(f"{RULE}: ")
            for m in judge(harness.objects_for(RULE), obj).failures(POLICY)]


def test_every_kind_with_its_own_autoscaler_has_an_upstream_manifest() -> None:
    assert {doc["kind"] for _, doc in UPSTREAM} == KINDS


@pytest.mark.parametrize(("name", "obj"), UPSTREAM, ids=[n for n, _ in UPSTREAM])
def test_upstream_manifest_gets_the_pr_checks_verdict_and_message(harness: Any, name: str,
                                                                 obj: dict[str, Any]) -> None:
    python, cel = _python(harness, obj), _cel(harness, obj)
    assert cel == python[:1], (python, cel)


def test_fixing_an_upstream_manifest_passes_both_ways(harness: Any) -> None:
    ray = next(d for n, d in UPSTREAM if n.startswith("kuberay-rayservice"))
    assert _cel(harness, ray)  # 4 GPUs per worker, the autoscaler off
    fixed = copy.deepcopy(ray)
    config = fixed["spec"]["rayClusterConfig"]
    config["enableInTreeAutoscaling"] = True
    for group in config["workerGroupSpecs"]:
        group["maxReplicas"] = group.get("minReplicas", 0) + 2
    assert _python(harness, fixed) == [] and _cel(harness, fixed) == []


def _deployment(kind: str, gpus: int) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "llm"}}, "spec": {"containers": [{
        "name": "server", "image": "vllm/vllm-openai:v0.6.0",
        "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}
    if kind == "LeaderWorkerSet":
        return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": kind,
                "metadata": {"name": "llm", "namespace": "ml"},
                "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2,
                                                                 "workerTemplate": template}}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "llm", "namespace": "ml"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "llm"}},
                     "template": template}}


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "LeaderWorkerSet"])
def test_a_workload_an_hpa_scales_is_never_refused_for_lacking_one(harness: Any,
                                                                   kind: str) -> None:
    obj = _deployment(kind, 1)
    assert _python(harness, obj)  # the PR check, which sees every object, says so
    verdicts = [v for v in judge(harness.objects_for(RULE), obj).verdicts if v.policy == POLICY]
    assert [v.applies for v in verdicts] == [False]  # the policy does not even match it
    rules = next(o for o in harness.objects_for(RULE) if o["metadata"]["name"] == POLICY
                 and o["kind"] == "ValidatingAdmissionPolicy")["spec"]["matchConstraints"]
    assert {g for r in rules["resourceRules"] for g in r["apiGroups"]} == {
        "apps.nvidia.com", "ray.io", "serving.kserve.io"}


def test_a_gpu_resource_set_to_zero_holds_no_gpu(harness: Any) -> None:
    assert _python(harness, _deployment("Deployment", 0)) == []
    head = next(d for n, d in UPSTREAM if n.startswith("kuberay-raycluster-verl"))
    assert _cel(harness, head) and _python(harness, head)  # a head with 4 GPUs never scales
    parked = copy.deepcopy(head)
    for c in parked["spec"]["headGroupSpec"]["template"]["spec"]["containers"]:
        c["resources"]["limits"]["nvidia.com/gpu"] = 0
    assert _python(harness, parked) == _cel(harness, parked) == []
