# ruff: noqa: RUF002, RUF003  (×, − and – are the signs users read)
"""One node, one bucket: its GPUs, who was allocated them, and who used what.

In GPUs (shares of physical GPUs, :mod:`slots`), for bucket *i* of node *n*:

- capacity = Σ allocatable(resource) × share(resource);
- a running pod's allocation = Σ requested(resource) × share(resource);
- a device's use = its reading (0–1) × its share (1, or a MIG instance's).

Use goes to the pods the exporter labelled the device with. A device several pods hold (a
time-sliced GPU: the exporter repeats its series once per pod) is split between them in
proportion to their allocation, and no pod is given more than it was allocated: a time slice is
never used above 100 %. Pods the exporter labelled on no device are **unattributed** when the
node has devices with no pod label: the node's use is known, whose it is is not, so their
allocation and the unlabelled devices' use (at most that allocation) are counted apart, never
given to anyone. A node with no reading in the bucket is **unmeasured**: its pods' allocation
is kept out of use and debt, never read as idle; so is a pod whose GPUs have no series at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gpupool.debt.prometheus.series import DeviceReading, PodKey
from gpupool.debt.prometheus.slots import profile_share

State = Literal["measured", "unmeasured", "unattributed"]


@dataclass(frozen=True, slots=True)
class PodUse:
    pod: PodKey
    allocated: float
    used: float | None  # None unless measured
    state: State


@dataclass
class NodeBucket:
    capacity: float | None
    pods: list[PodUse] = field(default_factory=list)
    unattributed_used: float = 0.0
    measured: bool = False
    shared_devices: int = 0  # devices held by more than one pod

    @property
    def allocated(self) -> float:
        return sum(p.allocated for p in self.pods)


def usable_devices(devices: Sequence[DeviceReading]) -> list[DeviceReading]:
    """A MIG-enabled GPU's instances, not its parent's series as well (no double count)."""
    split = {d.uuid for d in devices if d.instance}
    return [d for d in devices if d.instance or d.uuid not in split]


def node_bucket(i: int, capacity: float | None, allocation: Mapping[PodKey, float],
                devices: Sequence[DeviceReading]) -> NodeBucket:
    """Who used what on one node in bucket ``i`` (see the module docstring)."""
    out = NodeBucket(capacity)
    pods = {k: a for k, a in allocation.items() if a > 0}
    readings: list[tuple[DeviceReading, float]] = []
    for d in devices:
        v = d.value(i)
        if v is not None:
            readings.append((d, v * profile_share(d.profile, d.model)))
    if not readings:
        out.pods = [PodUse(k, a, None, "unmeasured") for k, a in sorted(pods.items())]
        return out
    out.measured = True
    share: dict[PodKey, float] = {}
    unlabelled = 0.0
    for d, used in readings:
        holders = [h for h in d.holders.get(i, ()) if h in pods]
        if not holders:
            unlabelled += used
            continue
        if len(holders) > 1:
            out.shared_devices += 1
        total = sum(pods[h] for h in holders)
        for h in holders:
            share[h] = share.get(h, 0.0) + used * pods[h] / total
    orphans = [k for k in pods if k not in share]
    has_unlabelled = any(not [h for h in d.holders.get(i, ()) if h in pods]
                         for d, _ in readings)
    for k, a in sorted(pods.items()):
        if k in share:
            out.pods.append(PodUse(k, a, min(share[k], a), "measured"))
        elif has_unlabelled:
            out.pods.append(PodUse(k, a, None, "unattributed"))
        else:  # its GPUs have no series although the node's others do: not measured
            out.pods.append(PodUse(k, a, None, "unmeasured"))
    if has_unlabelled and orphans:
        out.unattributed_used = min(unlabelled, sum(pods[k] for k in orphans))
    return out
