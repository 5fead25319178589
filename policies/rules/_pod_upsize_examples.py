# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""gpu-no-vertical-upsize's pod-template examples (old and new objects), beside the rule's
Kubernetes part (:mod:`policies.rules._pod_upsize`) and its admission CEL
(:mod:`policies.admission.cel.gpu_no_vertical_upsize`); the docs and both tests read them."""

from __future__ import annotations

from policies.rules.base import Example

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


def _container(name: str, gpus: Any) -> dict[str, Any]:
    """A container asking for ``gpus`` (None: a CPU-only container)."""
    out: dict[str, Any] = {"name": name, "image": "vllm/vllm-openai:v0.6.3"}
    if gpus is not None:
        out["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return out


def _gpu_deployment(gpus: Any, *more: dict[str, Any], init: Any = None,
                    replicas: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [_container("server", gpus), *more]}
    if init is not None:
        spec["initContainers"] = [_container("warmup", init)]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "llm", "namespace": "ml"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "llm"}},
                     "template": {"metadata": {"labels": {"app": "llm"}}, "spec": spec}}}


def _pytorch_job(workers: int, master: int = 1) -> dict[str, Any]:
    def replica(n: int, gpus: int) -> dict[str, Any]:
        return {"replicas": n, "template": {"spec": {"containers": [{
            "name": "pytorch", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "finetune", "namespace": "ml"},
            "spec": {"runPolicy": {"activeDeadlineSeconds": 86400},
                     "pytorchReplicaSpecs": {"Master": replica(1, master),
                                             "Worker": replica(4, workers)}}}


def _change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return {"type": f"kubernetes:{new['apiVersion']}:{new['kind']}", "name": "w",
            "old": old, "new": new}


EXAMPLES: tuple[Example, ...] = (
    Example(
        title="Deployment's pods go from one GPU to four",
        allowed=False,
        resources=[_change(_gpu_deployment(1), _gpu_deployment(4))],
        message_contains=["Deployment ml/llm: GPUs per pod 1 → 4 is vertical scaling",
                          "run 4 × the replicas"],
    ),
    Example(
        title="Deployment scaled out: more replicas, one GPU per pod",
        allowed=True,
        resources=[_change(_gpu_deployment(1), _gpu_deployment(1, replicas=4))],
    ),
    Example(
        title="A second GPU container: the app containers' GPUs add up (1 + 1 → 1 + 2)",
        allowed=False,
        resources=[_change(_gpu_deployment(1, _container("sidecar", 1)),
                           _gpu_deployment(1, _container("sidecar", 2)))],
        message_contains=["GPUs per pod 2 → 3 is vertical scaling",
                          "keep 2 GPUs per pod and run 3/2 × the replicas"],
    ),
    Example(
        title="An init container runs before the others: the pod holds the larger of the two",
        allowed=True,
        resources=[_change(_gpu_deployment(1, init=2), _gpu_deployment(2, init=2))],
    ),
    Example(
        title="PyTorchJob workers go from one GPU to eight (the master stays at one)",
        allowed=False,
        resources=[_change(_pytorch_job(1), _pytorch_job(8))],
        message_contains=["PyTorchJob ml/finetune, Worker: GPUs per pod 1 → 8",
                          "run 8 × the replicas"],
    ),
    Example(
        title="A CPU-only Deployment starts asking for one GPU per pod: not an upsize",
        allowed=True,
        resources=[_change(_gpu_deployment(None), _gpu_deployment(1))],
    ),
    Example(
        title="A GPU count that is not a number cannot be compared, never passed",
        allowed=False,
        unknown=True,
        resources=[_change(_pytorch_job(1), _pytorch_job(1) | {"spec": {
            **_pytorch_job(1)["spec"], "pytorchReplicaSpecs": {
                **_pytorch_job(1)["spec"]["pytorchReplicaSpecs"],
                "Worker": {"replicas": 4, "template": {"spec": {"containers": [{
                    "name": "pytorch", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                    "resources": {"limits": {"nvidia.com/gpu": "eight"}}}]}}}}}})],
        message_contains=["cannot verify", "the new GPUs per pod of PyTorchJob ml/finetune, "
                          "Worker cannot be read"],
    ),
)
