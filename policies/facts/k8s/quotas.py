"""What a ResourceQuota says about GPUs."""

from __future__ import annotations

from gpupool.record import Frozen
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.quantities import GPU_RESOURCES
from policies.facts.values import block, is_map
from policies.model import UNKNOWN


class QuotaGpus(Frozen):
    """The ``requests.<gpu>`` keys a ResourceQuota bounds."""

    __slots__ = ("resources", "scoped", "unknown")

    resources: tuple[str, ...]  # GPU resources with a requests.* hard limit
    scoped: bool  # scopes / scopeSelector: it covers only some pods
    unknown: bool

    def __init__(self, resources: tuple[str, ...], scoped: bool, unknown: bool = False) -> None:
        object.__setattr__(self, "resources", resources)
        object.__setattr__(self, "scoped", scoped)
        object.__setattr__(self, "unknown", unknown)


def quota_gpus(obj: K8sObject) -> QuotaGpus:
    spec = obj.spec
    if spec is UNKNOWN:
        return QuotaGpus((), False, True)
    if spec is None:
        return QuotaGpus((), False)
    hard = spec.get("hard")
    if hard is UNKNOWN:
        return QuotaGpus((), False, True)
    keys = hard if is_map(hard) else {}
    found = tuple(r for r in GPU_RESOURCES if f"requests.{r}" in keys)
    scoped = bool(spec.get("scopes")) or bool(block(spec.get("scope_selector")))
    return QuotaGpus(found, scoped)
