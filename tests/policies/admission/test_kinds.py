"""The kinds table at admission covers the reader table: every kind whose pods a reader
reads is matched and read in CEL, or listed with the reason it is not."""

from __future__ import annotations

from typing import Any

import pytest

from policies.admission.evaluate import judge
from policies.admission.kinds import KINDS, NOT_AT_ADMISSION
from policies.facts.k8s import ALL_READERS, Lifecycle
from policies.rules import get_rule


def test_every_reader_kind_with_pods_is_matched_or_said_not_to_be() -> None:
    wanted = {k for r in ALL_READERS if r.lifecycle is not Lifecycle.NONE for k in r.kinds
              if k[0] or k[1] in ("Pod", "ReplicationController")}
    missing = wanted - set(KINDS) - set(NOT_AT_ADMISSION)
    assert not missing, missing
    assert not set(KINDS) & set(NOT_AT_ADMISSION)


def _pod(gpus: int) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "x",
                            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}


def _tmpl(gpus: int) -> dict[str, Any]:
    return {"spec": _pod(gpus)}


SAMPLES = {
    ("batch", "CronJob"): lambda n: {"jobTemplate": {"spec": {"template": _tmpl(n)}}},
    ("jobset.x-k8s.io", "JobSet"): lambda n: {"replicatedJobs": [
        {"name": "w", "template": {"spec": {"template": _tmpl(n)}}}]},
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): lambda n: {
        "leaderWorkerTemplate": {"size": 2, "workerTemplate": _tmpl(n)}},
    ("ray.io", "RayService"): lambda n: {"rayClusterConfig": {
        "headGroupSpec": {"template": _tmpl(0)},
        "workerGroupSpecs": [{"groupName": "g", "template": _tmpl(n)}]}},
    ("serving.kserve.io", "InferenceService"): lambda n: {"predictor": {
        "model": {"modelFormat": {"name": "x"}, "resources": {"limits": {
            "nvidia.com/gpu": n}}}}},
    ("serving.kserve.io", "LLMInferenceService"): lambda n: {"template": _pod(n)},
    ("argoproj.io", "Workflow"): lambda n: {"templates": [
        {"name": "t", "container": _pod(n)["containers"][0]}]},
    ("batch.volcano.sh", "Job"): lambda n: {"tasks": [{"name": "t", "template": _tmpl(n)}]},
    ("apps.nvidia.com", "NIMService"): lambda n: {"resources": {"limits": {
        "nvidia.com/gpu": n}}},
    ("apps.nvidia.com", "NIMPipeline"): lambda n: {"services": [
        {"name": "s", "enabled": True, "spec": {"resources": {"limits": {"nvidia.com/gpu": n}}}}]},
    ("trainer.kubeflow.org", "TrainJob"): lambda n: {"trainer": {"resourcesPerNode": {
        "limits": {"nvidia.com/gpu": n}}}},
    ("keda.sh", "ScaledJob"): lambda n: {"jobTargetRef": {"template": _tmpl(n)}},
}


@pytest.mark.parametrize("kind", sorted(SAMPLES), ids=lambda k: f"{k[0]}/{k[1]}")
def test_each_kind_is_read_where_its_reader_reads_it(harness: Any, kind: tuple[str, str]
                                                     ) -> None:
    from policies.sources.kubernetes import Manifest, to_changes

    group, name = kind
    objects = harness.objects_for("k8s-gpu-per-container")
    for gpus, denied in ((1, False), (4, True)):
        obj = {"apiVersion": f"{group}/v1", "kind": name,
               "metadata": {"name": "w", "namespace": "web"}, "spec": SAMPLES[kind](gpus)}
        findings = get_rule("k8s-gpu-per-container").run(
            to_changes([Manifest("s:1", "sample", obj)]), harness.catalog)
        assert bool(findings) == denied, (kind, gpus, findings)
        said = judge(objects, obj).failures("gpupool-k8s-gpu-per-container")
        assert bool(said) == denied, (kind, gpus, said)
