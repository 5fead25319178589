# ruff: noqa: RUF001, RUF002, RUF003  (× and − are the signs people read in docs/policies.md)
"""NVIDIA NIM operator (``apps.nvidia.com``): NIMService (``spec.resources``, a resources
block, not a pod template; ``replicas`` × the multi-node pipeline size; the operator's HPA in
``spec.scale``), NIMPipeline (a NIMService spec per service) and NIMCache (a caching job:
``spec.resources`` is CPU and memory only)."""

from __future__ import annotations

from collections.abc import Mapping

from policies.facts.k8s.autoscalers import texts
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import PodGpus, resources_block
from policies.facts.k8s.quantities import whole_number
from policies.facts.k8s.readers._base import Reader, count_at, range_at, spec_of, times
from policies.facts.k8s.workload import Autoscaler, Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, blocks, flag, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


def service_role(name: str, spec: Any, path: str) -> Role:
    """One NIMService spec at ``path`` as a role."""
    if spec is UNKNOWN or not is_map(spec):
        return Role(name, PodGpus(unknown=f"{path.rsplit('.', 1)[-1]} unknown until apply",
                                  path=path) if spec is UNKNOWN else PodGpus(path=path))
    nim = resources_block(spec.get("resources"), "nim", path, f"{path}.resources")
    replicas = count_at(spec, "replicas", f"{path}.replicas")
    scaler = _scale(spec.get("scale"), f"{path}.scale")
    if scaler is not None and scaler.enabled is True:
        replicas = Replicas(scaler.min, scaler.max, f"{path}.scale.hpa")
    stages = _pipeline(spec.get("multi_node"), f"{path}.multi_node.parallelism.pipeline")
    return Role(name, PodGpus((nim,), None, path), times(replicas, stages), _labels(spec), None,
                scaler)


def _pipeline(raw: Any, path: str) -> Replicas:
    multi = block(raw)
    parallel = block(multi.get("parallelism")) if is_map(multi) else None
    size = whole_number(parallel.get("pipeline"), 1) if is_map(parallel) else 1
    return Replicas(size, size, path if size != 1 else None)


def _scale(raw: Any, path: str) -> Autoscaler | None:
    scale = block(raw)
    if scale is None:
        return None
    name = "NIM operator HPA"
    if scale is UNKNOWN:
        return Autoscaler(name, UNKNOWN, path, None, None)
    enabled = flag(scale.get("enabled"))
    hpa = block(scale.get("hpa"))
    if hpa is UNKNOWN:
        return Autoscaler(name, UNKNOWN, f"{path}.hpa", None, None)
    bounds = range_at(hpa or {}, "min_replicas", "max_replicas", f"{path}.hpa", 1, None)
    metrics = tuple(texts((hpa or {}).get("metrics")))
    return Autoscaler(name, enabled, f"{path}.enabled", bounds.min, bounds.max,
                      metrics or ("cpu",), on_load=False)


def _labels(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = spec.get("labels")
    return labels if is_map(labels) else {}


def _service(obj: K8sObject) -> Workload:
    return Workload(obj, "nim", Lifecycle.SERVICE, (service_role("", obj.spec, "spec"),))


def _pipeline_services(obj: K8sObject) -> Workload:
    services = blocks(spec_of(obj).get("services"))
    if services is UNKNOWN:
        return Workload(obj, "nim", Lifecycle.SERVICE, unknown="services unknown until apply")
    roles = []
    for i, s in enumerate(services):
        if not is_map(s) or flag(s.get("enabled")) is False:
            continue
        name = s.get("name") if isinstance(s.get("name"), str) else f"#{i}"
        roles.append(service_role(f"service {name}", block(s.get("spec")),
                                  f"spec.services[{i}].spec"))
    return Workload(obj, "nim", Lifecycle.SERVICE, tuple(roles))


def _cache(obj: K8sObject) -> Workload:
    job = Role("caching job", PodGpus(path="spec"), Replicas(1, 1))
    return Workload(obj, "nim", Lifecycle.BATCH, (job,))


_HPA = ("spec.scale.enabled with spec.scale.hpa maxReplicas above minReplicas and a GPU "
        "metric (the operator's HPA; its default metric is CPU)")
READERS = (
    Reader("nim", (("apps.nvidia.com", "NIMService"),), Lifecycle.SERVICE, _service,
           "spec.resources (one container); pods = replicas × "
           "spec.multiNode.parallelism.pipeline", _HPA),
    Reader("nim", (("apps.nvidia.com", "NIMPipeline"),), Lifecycle.SERVICE,
           _pipeline_services, "spec.services[*].spec, each as a NIMService", _HPA),
    Reader("nim", (("apps.nvidia.com", "NIMCache"),), Lifecycle.BATCH, _cache,
           "the caching job: spec.resources holds CPU and memory only (no GPU request)",
           "out of scope (runs to completion)"),
)
