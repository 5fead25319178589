"""What a ResourceQuota says about GPUs."""

from __future__ import annotations

from dataclasses import dataclass

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.quantities import GPU_RESOURCES
from policies.facts.values import block, is_map
from policies.model import UNKNOWN


@dataclass(frozen=True, slots=True)
class QuotaGpus:
    """The ``requests.<gpu>`` keys a ResourceQuota bounds."""

    resources: tuple[str, ...]  # GPU resources with a requests.* hard limit
    scoped: bool  # scopes / scopeSelector: it covers only some pods
    unknown: bool = False


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
