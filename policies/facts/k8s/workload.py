"""What every reader returns: a :class:`Workload` of :class:`Role` s, the same for every kind.

A rule asks :func:`policies.facts.k8s.workload` for an object and reads roles, replica ranges,
deadlines and autoscaling knobs without knowing whether they came from a Deployment, a
PyTorchJob's ``Worker`` replica spec or a RayCluster's worker group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from policies.facts.k8s.objects import K8sObject, describe
from policies.facts.k8s.pods import PodGpus
from policies.facts.values import Maybe


class Lifecycle(StrEnum):
    """How a kind's pods live: what the autoscaling and deadline rules expect of it."""

    SERVICE = "service"  # long-running replicas: should scale with load
    BATCH = "batch"  # runs to completion: should carry a deadline
    PER_NODE = "per-node"  # one pod per matching node (DaemonSet)
    POD = "pod"  # a bare pod
    TEMPLATE = "template"  # runs nothing itself: other objects run it (TrainingRuntime)
    NONE = "none"  # runs no pods (a quota, a NodePool): understood, nothing to count


@dataclass(frozen=True, slots=True)
class Replicas:
    """How many pods of a role run. ``min == max``: fixed. ``max`` None: no bound the object
    sets (a DaemonSet's one per node, a fan-out). ``unknown``: why a count is unknown until
    apply. ``path``: where the count is set (snake_case), None when it is the kind's default."""

    min: int | None
    max: int | None
    path: str | None = None
    unknown: str | None = None

    @property
    def fixed(self) -> bool:
        return self.unknown is None and self.min is not None and self.min == self.max


ONE = Replicas(1, 1)


@dataclass(frozen=True, slots=True)
class Autoscaler:
    """A kind's own autoscaling of a role (not an HPA or ScaledObject pointing at it).

    ``enabled`` UNKNOWN: unknown until apply. ``metrics``: what it scales on, as written
    (empty when the kind scales on load it measures itself: Ray's resource demand, Knative's
    concurrency). ``on_load``: scales on demand, not on CPU or memory alone. ``never``: why the
    kind never scales the role whatever it sets, and what to do instead ("" when it may)."""

    name: str  # "RayCluster autoscaler", "KServe autoscaler (Knative)"
    enabled: bool | Maybe
    path: str  # where it is switched on or bounded (snake_case)
    min: int | None
    max: int | None  # None: no upper bound
    metrics: tuple[str, ...] = ()
    on_load: bool = True
    never: str = ""

    @property
    def can_scale(self) -> bool:
        return self.max is None or self.min is None or self.max > self.min


@dataclass(frozen=True, slots=True)
class Role:
    """One pod template of a workload and how many pods it runs.

    ``name`` is "" for kinds with one template, else the role as the kind names it (``Worker``,
    ``head``, ``worker group gpu-group``, ``leader``, ``predictor``). ``spec`` is the pod spec
    as written (node selectors, tolerations, affinity), None when the kind keeps only a
    resources block (NIMService)."""

    name: str
    pods: PodGpus
    replicas: Replicas = ONE
    labels: Mapping[str, Any] | None = None
    spec: Mapping[str, Any] | Maybe | None = None
    autoscaler: Autoscaler | None = None

    @property
    def path(self) -> str:
        return self.pods.path

    @property
    def gpu(self) -> bool:
        """Does a container ask for a GPU (or is what it asks unknown)?"""
        return bool(self.pods.unknown or self.pods.gpu_containers)


@dataclass(frozen=True, slots=True)
class Deadline:
    """Where a kind bounds its run time, and what it is set to (None: not set)."""

    path: str  # snake_case: spec.active_deadline_seconds, spec.run_policy.active_deadline_seconds
    seconds: int | Maybe | None


@dataclass(frozen=True, slots=True)
class Workload:
    """An object as the rules read it: its roles (pod templates) and how they run.

    ``deadlines``: every place the kind bounds run time (the first is the one to set), () when
    it has none. ``scale_target``: an HPA or KEDA ScaledObject may name it in scaleTargetRef
    (it has a scale subresource). ``unknown``: why its pods cannot be read at all."""

    obj: K8sObject
    reader: str  # the reader's name (its module): builtin, kubeflow, ray, …
    lifecycle: Lifecycle
    roles: tuple[Role, ...] = ()
    deadlines: tuple[Deadline, ...] = ()
    scale_target: bool = False
    unknown: str | None = None

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
