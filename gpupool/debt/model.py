"""The report model: pools of every platform, what each team is charged, series over the window.

One model for the hybrid fleet, built by the AWS reader (:mod:`gpupool.debt.figures`) and the
Prometheus reader (:mod:`gpupool.debt.prometheus`) and read by the report, its renderers, the
chart and whatever comes next (a rightsizer, more accounts and regions, forecasts):

- a :class:`PoolFigures` per pool: its :class:`PoolInfo` (name, ``platform`` ``aws`` |
  ``kubernetes`` | ``on-prem``, team, type and GPUs), its status, its :class:`Sums` over the
  window and its :class:`Timeline` (GPUs per bucket, the window's buckets, ``None`` where
  unknown), its findings;
- the pool's :class:`Charge` lines, what :func:`gpupool.debt.report.group_by_team` adds up: an
  AWS pool is one line (its team pays for all of it); a Kubernetes pool has a line per
  namespace (its team's allocation and use), one for the use the exporter could not attribute
  (``(unattributed)``) and one for its nodes' capacity (the pool's owner);
- for Kubernetes pools, :class:`PodFigures`, one per pod: the finest grain the report gives.

Every figure is in GPUs (per bucket) or GPU-hours (over the window); a fraction of a GPU is a
time slice or a MIG instance's share of its GPU. Missing is ``None``, never zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

Status = Literal["measured", "partial", "not measured", "no group metrics", "no allocation",
                 "no cluster metrics"]
Platform = Literal["aws", "kubernetes", "on-prem"]
ChargeKind = Literal["pool", "namespace", "unattributed", "capacity"]
UNTAGGED = "(untagged)"
UNATTRIBUTED = "(unattributed)"


@dataclass(frozen=True, slots=True)
class Timeline:
    """GPUs per bucket (None where unknown): what the chart draws and the sums are made of."""

    capacity: tuple[float | None, ...]
    allocated: tuple[float | None, ...]
    used: tuple[float | None, ...]
    measured: tuple[float | None, ...]  # the part of ``allocated`` whose use is known

    @staticmethod
    def add(timelines: Sequence[Timeline], buckets: int) -> Timeline:
        """Bucket-wise sums; a bucket is None only when no timeline knows it."""
        def total(pick: str) -> tuple[float | None, ...]:
            out: list[float | None] = []
            for i in range(buckets):
                known = [v for t in timelines if (v := getattr(t, pick)[i]) is not None]
                out.append(sum(known) if known else None)
            return tuple(out)

        return Timeline(total("capacity"), total("allocated"), total("used"), total("measured"))

    @staticmethod
    def empty(buckets: int) -> Timeline:
        none: tuple[float | None, ...] = (None,) * buckets
        return Timeline(none, none, none, none)


@dataclass
class Sums:
    """GPU-hours (and dollars) of one pool, charge line, team or the whole report."""

    capacity_gpu_hours: float | None = None
    allocated_gpu_hours: float | None = None
    used_gpu_hours: float | None = None
    measured_gpu_hours: float = 0.0  # allocation in buckets whose use is known
    unmeasured_gpu_hours: float = 0.0
    # allocation whose use is known on its node but not per pod (the exporter did not label
    # it): counted in the pool's use and debt, charged to no team but (unattributed)
    unattributed_gpu_hours: float = 0.0
    idle_gpu_hours: float | None = None
    allocated_usd: float | None = None
    debt_usd: float | None = None

    @property
    def debt_gpu_hours(self) -> float | None:
        if self.used_gpu_hours is None:
            return None
        return max(self.measured_gpu_hours - self.used_gpu_hours, 0.0)

    @property
    def utilisation(self) -> float | None:
        if self.used_gpu_hours is None or self.measured_gpu_hours <= 0:
            return None
        return self.used_gpu_hours / self.measured_gpu_hours


def add(a: float | None, b: float | None) -> float | None:
    """Unknown plus known is known; unknown plus unknown stays unknown."""
    if a is None:
        return b
    return a if b is None else a + b


class PoolInfo(Protocol):
    """What every pool says about itself, whatever runs it."""

    @property
    def name(self) -> str: ...
    @property
    def platform(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def team(self) -> str | None: ...
    @property
    def cost_center(self) -> str | None: ...
    @property
    def instance_type_name(self) -> str: ...
    @property
    def gpu_model(self) -> str: ...
    @property
    def gpus_per_instance(self) -> float: ...


@dataclass(frozen=True)
class KubePool:
    """A Kubernetes pool as Prometheus shows it: GPU nodes and the pods on them.

    ``platform`` is ``kubernetes`` when its nodes carry a catalog instance type (a cloud's,
    priced from the catalog), ``on-prem`` otherwise (priced at the pool's ``gpuHourlyCost``).
    """

    name: str
    platform: str
    source: str  # the Prometheus URL it was read from
    team: str | None  # the owner: who pays for its nodes' idle capacity
    cost_center: str | None
    instance_type_name: str  # the nodes' instance type, "mixed (a, b)", or "" when unlabelled
    gpu_model: str
    gpus_per_instance: float  # physical GPUs per node (the most common count)
    nodes: int
    role: str = "pool"
    arn: str = ""
    min_size: int | None = None
    max_size: int | None = None
    desired_capacity: int | None = None
    target_utilisation: float | None = None
    spot_share: float | None = None
    gpu_limit: float | None = None  # Karpenter NodePool limits.nvidia.com/gpu, when exported


@dataclass
class Charge:
    """What one team is charged in one pool over the window (see the module docstring)."""

    pool: str
    team: str
    kind: ChargeKind
    status: Status
    sums: Sums
    timeline: Timeline
    namespace: str | None = None
    cost_center: str | None = None
    pods: tuple[str, ...] = ()  # unattributed: the pods whose use could not be told apart
    scope: str = ""  # "account/region" of an AWS pool when the report reads several

    @property
    def pool_key(self) -> str:
        """The pool's name, with its account and region when the report reads several."""
        return f"{self.pool} ({self.scope})" if self.scope else self.pool

    @property
    def name(self) -> str:
        return self.pool if self.namespace is None else f"{self.pool}/{self.namespace}"


@dataclass(frozen=True)
class PodFigures:
    """One pod of a Kubernetes pool: its GPUs over the window, as requested and as used."""

    pool: str
    namespace: str
    pod: str
    node: str
    team: str
    status: str  # measured | partial | not measured | unattributed (its use: see findings)
    allocated_gpu_hours: float
    used_gpu_hours: float | None
    measured_gpu_hours: float
    unmeasured_gpu_hours: float
    unattributed_gpu_hours: float
    debt_usd: float | None
    # GPUs per bucket (a rightsizer's per-workload need); not written by the renderers
    timeline: Timeline | None = None

    @property
    def debt_gpu_hours(self) -> float | None:
        if self.used_gpu_hours is None:
            return None
        return max(self.measured_gpu_hours - self.used_gpu_hours, 0.0)

    @property
    def utilisation(self) -> float | None:
        if self.used_gpu_hours is None or self.measured_gpu_hours <= 0:
            return None
        return self.used_gpu_hours / self.measured_gpu_hours


@dataclass
class PoolFigures:
    pool: PoolInfo
    status: Status
    sums: Sums
    timeline: Timeline
    memory_utilisation: float | None
    price_per_gpu_hour: float | None
    group_metric_hours: float  # hours of the window with capacity data (group or node metrics)
    expected_hours: float  # hours of the window the pool existed
    peak_in_service: float | None
    findings: list[dict[str, str]] = field(default_factory=list)
    impossible_readings: int = 0  # datapoints left out: outside 0-100 %, or negative sizes
    lines: list[Charge] = field(default_factory=list)  # empty: the pool is one line
    pods: list[PodFigures] = field(default_factory=list)
    namespace_quota: dict[str, float] = field(default_factory=dict)  # namespace → GPU quota
    autoscalers: list[dict[str, object]] = field(default_factory=list)  # KEDA/HPA max replicas
    # the labels of the pool's namespaces (kube_namespace_labels, label_ prefix dropped): who
    # made them (the kit's managed-by, environment, gpupool.io/pool), for a rightsizer
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.pool.name

    @property
    def team(self) -> str:
        return self.pool.team or UNTAGGED

    @property
    def platform(self) -> str:
        return self.pool.platform

    def charges(self) -> list[Charge]:
        """The lines the pool's teams are charged (an AWS pool: itself, to its team)."""
        if self.lines:
            return self.lines
        account = getattr(self.pool, "account", None)
        scope = f"{account}/{getattr(self.pool, 'region', '')}" if account else ""
        return [Charge(self.name, self.team, "pool", self.status, self.sums, self.timeline,
                       cost_center=self.pool.cost_center, scope=scope)]


def combine(items: Iterable[PoolFigures | Charge]) -> Sums:
    """Sums over several pools or lines: unknown parts stay unknown, never zero.

    Use, debt and their dollars add up over the items that have them; ``measured_gpu_hours``
    says how much allocation they cover, so utilisation is used / measured.
    """
    out = Sums()
    for item in items:
        s = item.sums
        out.capacity_gpu_hours = add(out.capacity_gpu_hours, s.capacity_gpu_hours)
        out.allocated_gpu_hours = add(out.allocated_gpu_hours, s.allocated_gpu_hours)
        out.idle_gpu_hours = add(out.idle_gpu_hours, s.idle_gpu_hours)
        out.allocated_usd = add(out.allocated_usd, s.allocated_usd)
        out.unmeasured_gpu_hours += s.unmeasured_gpu_hours
        out.unattributed_gpu_hours += s.unattributed_gpu_hours
        if s.used_gpu_hours is not None:
            out.used_gpu_hours = add(out.used_gpu_hours, s.used_gpu_hours)
            out.measured_gpu_hours += s.measured_gpu_hours
            out.debt_usd = add(out.debt_usd, s.debt_usd)
    return out
