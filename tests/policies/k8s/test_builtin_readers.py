"""The reader API on the built-in kinds: one uniform Workload (roles with their pod spec path,
replicas, lifecycle, deadlines, scale target) whatever the kind or the source's shape."""

from __future__ import annotations

from typing import Any

from policies.facts import k8s
from policies.model import UNKNOWN, ChangeKind, ResourceChange, normalise_inputs, resource_kind


def read(obj: dict[str, Any], type_: str | None = None) -> k8s.Workload:
    token = type_ or f"kubernetes:{obj['apiVersion'] if '/' in obj['apiVersion'] else 'core/v1'}" \
        f":{obj['kind']}"
    change = ResourceChange("x", token, "x", ChangeKind.CREATE, normalise_inputs(obj), None,
                            "test", resource_kind(token))
    o = k8s.k8s_object(change)
    assert o is not None
    wl = k8s.workload(o)
    assert wl is not None
    return wl


def pod(gpus: int = 1) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "i",
                            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}


def test_deployment_is_a_service_with_fixed_replicas() -> None:
    wl = read({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"replicas": 3, "template": {"metadata": {"labels": {"a": "b"}},
                                                    "spec": pod(2)}}})
    (role,) = wl.roles
    assert wl.lifecycle is k8s.Lifecycle.SERVICE and wl.scale_target and not wl.batch
    assert role.replicas == k8s.Replicas(3, 3, "spec.replicas") and role.replicas.fixed
    assert role.path == "spec.template.spec" and role.labels == {"a": "b"}
    (c,) = role.pods.gpu_containers
    assert c.resources_path == "spec.template.spec.containers[0].resources"
    assert role.pods.per_pod == 2 and wl.gpu_resources == ("nvidia.com/gpu",)


def test_job_and_cron_job_are_batch_with_their_deadline_paths() -> None:
    job = read({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"parallelism": 4, "activeDeadlineSeconds": 3600,
                         "template": {"spec": pod()}}})
    assert job.batch and job.deadlines == (k8s.Deadline("spec.active_deadline_seconds", 3600),)
    assert job.roles[0].replicas.min == 4
    cron = read({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                 "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {
                     "spec": pod()}}}}})
    assert cron.deadlines == (k8s.Deadline(
        "spec.job_template.spec.active_deadline_seconds", None),)
    assert cron.roles[0].path == "spec.job_template.spec.template.spec"


def test_terraform_typed_shape_and_unknowns() -> None:
    wl = read({"metadata": [{"name": "d"}], "spec": [{
        "replicas": UNKNOWN, "template": [{"spec": [{"container": [{
            "name": "c", "resources": [{"limits": {"nvidia.com/gpu": "1"}}]}]}]}]}]},
        "kubernetes_deployment_v1")
    (role,) = wl.roles
    assert role.replicas.unknown == "replicas unknown until apply"
    assert role.pods.containers[0].resources_path == "spec.template.spec.container[0].resources"
    ds = read({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
               "spec": {"template": UNKNOWN}})
    assert ds.lifecycle is k8s.Lifecycle.PER_NODE
    assert ds.roles[0].pods.unknown == "template unknown until apply"


def test_kinds_are_read_by_api_group() -> None:
    # a custom resource that happens to be called Job is not a batch/v1 Job
    change = ResourceChange("x", "kubernetes:example.com/v1:Job", "x", ChangeKind.CREATE,
                            normalise_inputs({"apiVersion": "example.com/v1", "kind": "Job",
                                              "spec": {"template": {"spec": pod()}}}),
                            None, "test", resource_kind("kubernetes:example.com/v1:Job"))
    obj = k8s.k8s_object(change)
    assert obj is not None and obj.group == "example.com" and k8s.workload(obj) is None
