"""What a reader is, and the small steps readers share (a pod template, a replica count)."""

from __future__ import annotations

from collections.abc import Callable

from gpupool.record import Frozen
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import PodGpus, labels_of, pod_spec
from policies.facts.k8s.quantities import whole_number
from policies.facts.k8s.workload import (
    ONE,
    Autoscaler,
    Deadline,
    Lifecycle,
    Replicas,
    Role,
    Workload,
)
from policies.facts.values import block, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Reader(Frozen):
    """Reads the kinds ``kinds`` (API group, kind; group "" is the core group and Terraform's
    typed resources) into a :class:`Workload`. ``roles``, ``autoscaled`` and ``deadline`` say,
    for docs/policies.md, which templates it reads, what counts as autoscaled for the kind and
    where its deadline lives."""

    __slots__ = ("name", "kinds", "lifecycle", "read", "roles", "autoscaled", "deadline")

    name: str
    kinds: tuple[tuple[str, str], ...]
    lifecycle: Lifecycle
    read: Callable[[K8sObject], Workload]
    roles: str
    autoscaled: str
    deadline: str

    def __init__(
        self,
        name: str,
        kinds: tuple[tuple[str, str], ...],
        lifecycle: Lifecycle,
        read: Callable[[K8sObject], Workload],
        roles: str,
        autoscaled: str = "",
        deadline: str = "",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "lifecycle", lifecycle)
        object.__setattr__(self, "read", read)
        object.__setattr__(self, "roles", roles)
        object.__setattr__(self, "autoscaled", autoscaled)
        object.__setattr__(self, "deadline", deadline)


def spec_of(obj: K8sObject) -> dict[str, Any]:
    """The object's spec as a mapping ({} when absent; readers are called with a known spec)."""
    spec = obj.spec
    return dict(spec) if is_map(spec) else {}


def template_role(name: str, template: Any, path: str, replicas: Replicas = ONE,
                  autoscaler: Autoscaler | None = None,
                  extra: tuple[tuple[str, bool], ...] = ()) -> Role:
    """A role from a pod template (``{metadata, spec}``) found at ``path``."""
    t = block(template)
    if t is UNKNOWN:
        return Role(name, PodGpus(unknown=f"{path.rsplit('.', 1)[-1]} unknown until apply",
                                  path=f"{path}.spec"), replicas, {}, UNKNOWN, autoscaler)
    spec = block(t.get("spec")) if is_map(t) else None
    return Role(name, pod_spec(spec, f"{path}.spec", extra=extra), replicas, labels_of(t),
                spec, autoscaler)


def count_at(node: Any, key: str, path: str, default: int | None = 1) -> Replicas:
    """A fixed count (``replicas``, ``parallelism``) under ``node`` at ``path``."""
    value = node.get(key) if is_map(node) else None
    if value is UNKNOWN:
        return Replicas(None, None, path, f"{key} unknown until apply")
    if value is None:
        return Replicas(default, default)
    n = whole_number(value, default)
    return Replicas(n, n, path)


def range_at(node: Any, lo: str, hi: str, path: str, default_min: int | None,
             default_max: int | None) -> Replicas:
    """A replica range (``minReplicas`` / ``maxReplicas``) under ``node``, ``path`` its parent."""
    values = [node.get(k) if is_map(node) else None for k in (lo, hi)]
    for k, v in zip((lo, hi), values, strict=True):
        if v is UNKNOWN:
            return Replicas(None, None, f"{path}.{k}", f"{k} unknown until apply")
    return Replicas(whole_number(values[0], default_min), whole_number(values[1], default_max),
                    path)


def deadline_at(node: Any, key: str, path: str) -> Deadline:
    value = node.get(key) if is_map(node) else None
    if value is UNKNOWN:
        return Deadline(path, UNKNOWN)
    return Deadline(path, whole_number(value, None))


def times(a: Replicas, b: Replicas) -> Replicas:
    """Pods of a role that runs ``b`` pods in each of ``a`` groups (JobSet, LeaderWorkerSet)."""
    unknown = a.unknown or b.unknown
    if unknown:
        return Replicas(None, None, a.path or b.path, unknown)
    lo = None if a.min is None or b.min is None else a.min * b.min
    hi = None if a.max is None or b.max is None else a.max * b.max
    return Replicas(lo, hi, a.path or b.path)
