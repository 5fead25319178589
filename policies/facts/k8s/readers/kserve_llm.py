# ruff: noqa: RUF003  (× and − are the signs people read in docs/policies.md)
"""KServe LLMInferenceService and LLMInferenceServiceConfig (``serving.kserve.io``): the
decode pods (``spec.template``, a pod spec), their multi-node ``worker`` pods, the same two for
``spec.prefill``, their replicas and the ``scaling`` autoscaler (KEDA or the workload variant
autoscaler)."""

from __future__ import annotations

from collections.abc import Mapping

from policies.facts.k8s.autoscalers import texts
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import PodGpus, pod_spec
from policies.facts.k8s.quantities import whole_number
from policies.facts.k8s.readers._base import Reader, count_at, range_at, spec_of, times
from policies.facts.k8s.workload import Autoscaler, Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


def _llmisvc(obj: K8sObject) -> Workload:
    lifecycle = Lifecycle.TEMPLATE if obj.kind.endswith("Config") else Lifecycle.SERVICE
    spec = spec_of(obj)
    roles = list(_part(spec, "spec", "decode"))
    prefill = block(spec.get("prefill"))
    if prefill is UNKNOWN:
        roles.append(Role("prefill", PodGpus(unknown="prefill unknown until apply",
                                             path="spec.prefill")))
    elif prefill is not None:
        roles += _part(prefill, "spec.prefill", "prefill")
    return Workload(obj, "kserve", lifecycle, tuple(roles))


def _part(spec: Mapping[str, Any], path: str, name: str) -> list[Role]:
    """Decode (the service itself) or prefill: its template and worker pod specs."""
    replicas = count_at(spec, "replicas", f"{path}.replicas")
    scaler = _scaling(spec.get("scaling"), f"{path}.scaling")
    if scaler is not None and scaler.enabled is True:
        replicas = Replicas(scaler.min, scaler.max, f"{path}.scaling")
    out: list[Role] = []
    template = block(spec.get("template"))
    if template is not None:
        out.append(Role(name, pod_spec(template, f"{path}.template"), replicas, {}, template,
                        scaler))
    worker = block(spec.get("worker"))
    if worker is not None:
        size = _group_size(spec.get("parallelism"))
        workers = Replicas(None, None) if size is None else times(
            replicas, Replicas(size - 1, size - 1, f"{path}.parallelism"))
        out.append(Role(f"{name} worker", pod_spec(worker, f"{path}.worker"), workers, {},
                        worker, scaler))
    return out


def _group_size(parallelism: Any) -> int | None:
    """Pods per replica when it spans nodes: data / dataLocal ranks, else pipeline stages."""
    p = block(parallelism)
    if not is_map(p):
        return None
    data, local = whole_number(p.get("data"), None), whole_number(p.get("data_local"), None)
    if data and local:
        return max(data // local, 1)
    return whole_number(p.get("pipeline"), None)


def _scaling(raw: Any, path: str) -> Autoscaler | None:
    scaling = block(raw)
    if scaling is None:
        return None
    name = "LLMInferenceService scaling"
    if scaling is UNKNOWN:
        return Autoscaler(name, UNKNOWN, path, None, None)
    bounds = range_at(scaling, "min_replicas", "max_replicas", path, 1, None)
    wva = scaling.get("wva") is not None  # the workload variant autoscaler: inference load
    metrics = tuple(texts(scaling.get("keda")))
    return Autoscaler(f"{name} ({'workload variant autoscaler' if wva else 'KEDA'})",
                      True if not bounds.unknown else UNKNOWN, f"{path}.max_replicas",
                      bounds.min, bounds.max, metrics, on_load=wva)


READERS = (
    Reader("kserve", (("serving.kserve.io", "LLMInferenceService"),), Lifecycle.SERVICE,
           _llmisvc,
           "spec.template (decode pods, spec.replicas) and spec.worker (the other nodes of each "
           "replica: parallelism data / dataLocal, or pipeline), the same under spec.prefill",
           "spec.scaling with maxReplicas above minReplicas: the workload variant autoscaler "
           "(wva, inference load) or KEDA triggers on a GPU metric"),
    Reader("kserve", (("serving.kserve.io", "LLMInferenceServiceConfig"),), Lifecycle.TEMPLATE,
           _llmisvc, "as LLMInferenceService (a base configuration services refer to)",
           "out of scope (a template)"),
)
