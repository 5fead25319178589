"""What an HPA or a KEDA ScaledObject scales, and on what."""

from __future__ import annotations

import re

from gpupool.record import Frozen
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.quantities import whole_number
from policies.facts.values import Maybe, block, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

AUTOSCALER_KINDS: Final = frozenset({"HorizontalPodAutoscaler", "ScaledObject"})


class ScaleTarget(Frozen):
    """What an HPA or a KEDA ScaledObject scales, and on what."""

    __slots__ = ("kind", "name", "metrics", "min_replicas", "max_replicas", "unknown")

    kind: str | Maybe
    name: str | Maybe | None
    metrics: tuple[str, ...]  # every metric name, query or trigger text (for "is it GPU?")
    min_replicas: int | None
    max_replicas: int | None
    unknown: str | None

    def __init__(
        self,
        kind: str | Maybe,
        name: str | Maybe | None,
        metrics: tuple[str, ...],
        min_replicas: int | None,
        max_replicas: int | None,
        unknown: str | None = None,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "min_replicas", min_replicas)
        object.__setattr__(self, "max_replicas", max_replicas)
        object.__setattr__(self, "unknown", unknown)


def scale_target(obj: K8sObject) -> ScaleTarget | None:
    """The target and metrics of an autoscaler object; None for anything else."""
    spec = obj.spec
    if obj.kind not in AUTOSCALER_KINDS:
        return None
    if spec is UNKNOWN or spec is None:
        return ScaleTarget(UNKNOWN, UNKNOWN, (), None, None,
                           "spec unknown until apply" if spec is UNKNOWN else "no spec")
    ref = block(spec.get("scale_target_ref"))
    if ref is UNKNOWN:
        return ScaleTarget(UNKNOWN, UNKNOWN, (), None, None, "scaleTargetRef unknown until apply")
    ref = ref or {}
    default_kind = "Deployment" if obj.kind == "ScaledObject" else None
    kind = ref.get("kind", default_kind)
    name = ref.get("name")
    if obj.kind == "ScaledObject":
        metrics = tuple(texts(spec.get("triggers")))
        lo = whole_number(spec.get("min_replica_count"), 0)
        hi = whole_number(spec.get("max_replica_count"), 100)
    else:
        found = list(texts(spec.get("metrics"))) + list(texts(spec.get("metric")))
        if spec.get("target_cpu_utilization_percentage") is not None:
            found.append("cpu")
        if not found and not obj.terraform and obj.api_version.endswith("/v1"):
            found.append("cpu")  # autoscaling/v1 without a target: 80 % CPU by default
        metrics = tuple(found)
        lo = whole_number(spec.get("min_replicas"), 1)
        hi = whole_number(spec.get("max_replicas"), None)
    return ScaleTarget(kind if isinstance(kind, str) or kind is UNKNOWN else None,
                       name if isinstance(name, str) or name is UNKNOWN else None,
                       metrics, lo, hi)


def texts(value: Any) -> list[str]:
    """Every string under ``value`` (metric names, selectors, PromQL), flattened."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif is_map(v):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


# A metric, query or trigger text naming GPUs (the admission CEL matches the same pattern).
GPU_METRIC: Final = re.compile(r"gpu|dcgm", re.IGNORECASE)


def is_gpu_metric(metrics: tuple[str, ...]) -> bool:
    return any(GPU_METRIC.search(t) for t in metrics)
