"""What every reader returns: a :class:`Workload` of :class:`Role` s, the same for every kind.

A rule asks :func:`policies.facts.k8s.workload` for an object and reads roles, replica ranges,
deadlines and autoscaling knobs without knowing whether they came from a Deployment, a
PyTorchJob's ``Worker`` replica spec or a RayCluster's worker group.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from gpupool.record import Frozen
from policies.facts.k8s.objects import K8sObject, describe
from policies.facts.k8s.pods import PodGpus
from policies.facts.values import Maybe

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Lifecycle(StrEnum):
    """How a kind's pods live: what the autoscaling and deadline rules expect of it."""

    SERVICE = "service"  # long-running replicas: should scale with load
    BATCH = "batch"  # runs to completion: should carry a deadline
    PER_NODE = "per-node"  # one pod per matching node (DaemonSet)
    POD = "pod"  # a bare pod
    TEMPLATE = "template"  # runs nothing itself: other objects run it (TrainingRuntime)
    NONE = "none"  # runs no pods (a quota, a NodePool): understood, nothing to count


class Replicas(Frozen):
    """How many pods of a role run. ``min == max``: fixed. ``max`` None: no bound the object
    sets (a DaemonSet's one per node, a fan-out). ``unknown``: why a count is unknown until
    apply. ``path``: where the count is set (snake_case), None when it is the kind's default."""

    __slots__ = ("min", "max", "path", "unknown")

    min: int | None
    max: int | None
    path: str | None
    unknown: str | None

    def __init__(
        self,
        min: int | None,
        max: int | None,
        path: str | None = None,
        unknown: str | None = None,
    ) -> None:
        object.__setattr__(self, "min", min)
        object.__setattr__(self, "max", max)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "unknown", unknown)

    @property
    def fixed(self) -> bool:
        return self.unknown is None and self.min is not None and self.min == self.max


ONE = Replicas(1, 1)


class Autoscaler(Frozen):
    """A kind's own autoscaling of a role (not an HPA or ScaledObject pointing at it).

    ``enabled`` UNKNOWN: unknown until apply. ``metrics``: what it scales on, as written
    (empty when the kind scales on load it measures itself: Ray's resource demand, Knative's
    concurrency). ``on_load``: scales on demand, not on CPU or memory alone. ``never``: why the
    kind never scales the role whatever it sets, and what to do instead ("" when it may)."""

    __slots__ = ("name", "enabled", "path", "min", "max", "metrics", "on_load", "never")

    name: str  # "RayCluster autoscaler", "KServe autoscaler (Knative)"
    enabled: bool | Maybe
    path: str  # where it is switched on or bounded (snake_case)
    min: int | None
    max: int | None  # None: no upper bound
    metrics: tuple[str, ...]
    on_load: bool
    never: str

    def __init__(
        self,
        name: str,
        enabled: bool | Maybe,
        path: str,
        min: int | None,
        max: int | None,
        metrics: tuple[str, ...] = (),
        on_load: bool = True,
        never: str = "",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "enabled", enabled)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "min", min)
        object.__setattr__(self, "max", max)
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "on_load", on_load)
        object.__setattr__(self, "never", never)

    @property
    def can_scale(self) -> bool:
        return self.max is None or self.min is None or self.max > self.min


class Role(Frozen):
    """One pod template of a workload and how many pods it runs.

    ``name`` is "" for kinds with one template, else the role as the kind names it (``Worker``,
    ``head``, ``worker group gpu-group``, ``leader``, ``predictor``). ``spec`` is the pod spec
    as written (node selectors, tolerations, affinity), None when the kind keeps only a
    resources block (NIMService)."""

    __slots__ = ("name", "pods", "replicas", "labels", "spec", "autoscaler")

    name: str
    pods: PodGpus
    replicas: Replicas
    labels: Mapping[str, Any] | None
    spec: Mapping[str, Any] | Maybe | None
    autoscaler: Autoscaler | None

    def __init__(
        self,
        name: str,
        pods: PodGpus,
        replicas: Replicas = ONE,
        labels: Mapping[str, Any] | None = None,
        spec: Mapping[str, Any] | Maybe | None = None,
        autoscaler: Autoscaler | None = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "pods", pods)
        object.__setattr__(self, "replicas", replicas)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "autoscaler", autoscaler)

    @property
    def path(self) -> str:
        return self.pods.path

    @property
    def gpu(self) -> bool:
        """Does a container ask for a GPU (or is what it asks unknown)?"""
        return bool(self.pods.unknown or self.pods.gpu_containers)


class Deadline(Frozen):
    """Where a kind bounds its run time, and what it is set to (None: not set)."""

    __slots__ = ("path", "seconds")

    path: str  # snake_case: spec.active_deadline_seconds, spec.run_policy.active_deadline_seconds
    seconds: int | Maybe | None

    def __init__(self, path: str, seconds: int | Maybe | None) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "seconds", seconds)


class Workload(Frozen):
    """An object as the rules read it: its roles (pod templates) and how they run.

    ``deadlines``: every place the kind bounds run time (the first is the one to set), () when
    it has none. ``scale_target``: an HPA or KEDA ScaledObject may name it in scaleTargetRef
    (it has a scale subresource). ``unknown``: why its pods cannot be read at all."""

    __slots__ = ("obj", "reader", "lifecycle", "roles", "deadlines", "scale_target", "unknown")

    obj: K8sObject
    reader: str  # the reader's name (its module): builtin, kubeflow, ray, …
    lifecycle: Lifecycle
    roles: tuple[Role, ...]
    deadlines: tuple[Deadline, ...]
    scale_target: bool
    unknown: str | None

    def __init__(
        self,
        obj: K8sObject,
        reader: str,
        lifecycle: Lifecycle,
        roles: tuple[Role, ...] = (),
        deadlines: tuple[Deadline, ...] = (),
        scale_target: bool = False,
        unknown: str | None = None,
    ) -> None:
        object.__setattr__(self, "obj", obj)
        object.__setattr__(self, "reader", reader)
        object.__setattr__(self, "lifecycle", lifecycle)
        object.__setattr__(self, "roles", roles)
        object.__setattr__(self, "deadlines", deadlines)
        object.__setattr__(self, "scale_target", scale_target)
        object.__setattr__(self, "unknown", unknown)

    @property
    def gpu_roles(self) -> tuple[Role, ...]:
        return tuple(r for r in self.roles if r.gpu)

    @property
    def gpu(self) -> bool:
        return bool(self.unknown) or any(r.gpu for r in self.roles)

    @property
    def gpu_resources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(x for r in self.roles for x in r.pods.gpu_resources))

    @property
    def batch(self) -> bool:
        return self.lifecycle is Lifecycle.BATCH

    def who(self, role: Role | None = None) -> str:
        """``PyTorchJob ml/train`` for messages, with the role when the kind has several
        (``PyTorchJob ml/train, Worker``)."""
        shown = describe(self.obj)
        return f"{shown}, {role.name}" if role is not None and role.name else shown
