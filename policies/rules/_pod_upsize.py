# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""gpu-no-vertical-upsize on Kubernetes: a pod template whose GPUs per pod go up.

More GPUs per pod is vertical scaling (each pod needs a node with that many free GPUs, and
holds them busy or idle); the horizontal alternative is more replicas at the old GPUs per pod.
"""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import k8s
from policies.model import ResourceChange
from policies.rules._common import cannot_verify, count
from policies.rules.base import Finding


def pod_upsize(change: ResourceChange) -> Iterable[Finding]:
    """GPUs per pod of each pod template (role), old against new: more is vertical scaling."""
    new = k8s.read(change, "new")
    new_wl = new.workload if new is not None else None
    if new_wl is None:
        return
    old = k8s.read(change, "old") if change.old is not None else None
    old_wl = old.workload if old is not None else None
    old_roles = {r.name: r for r in old_wl.roles} if old_wl is not None else {}
    for role in new_wl.roles or (k8s.Role("", k8s.PodGpus(unknown=new_wl.unknown)),):
        old = old_roles.get(role.name)
        if old_wl is not None and old_wl.unknown:
            old = k8s.Role(role.name, k8s.PodGpus(unknown=old_wl.unknown))
        yield from _role_upsize(change, new_wl, role, old)


def _role_upsize(change: ResourceChange, wl: k8s.Workload, new: k8s.Role,
                 old: k8s.Role | None) -> Iterable[Finding]:
    new_gpus = new.pods.per_pod
    who = wl.who(new)
    if change.old is None:
        if new_gpus is None or new_gpus > 0:
            yield Finding(change.address, cannot_verify(
                f"the old pod template of {who} is not known (no baseline), so "
                "its GPUs per pod cannot be compared"), unknown=True)
        return
    old_gpus = old.pods.per_pod if old is not None else 0.0
    if old_gpus is None or new_gpus is None:
        if (old_gpus or 0) > 0 or (new_gpus or 0) > 0 or new_gpus is None:
            side = "new" if new_gpus is None else "old"
            yield Finding(change.address, cannot_verify(
                f"the {side} GPUs per pod of {who} are unknown until apply"),
                unknown=True)
        return
    if new_gpus <= old_gpus:
        return
    a, b = count(old_gpus), count(new_gpus)
    factor = count(new_gpus / old_gpus) if old_gpus else b
    yield Finding(change.address, (
        f"{who}: GPUs per pod {a} → {b} is vertical scaling (each pod now "
        f"needs a node with {b} free GPUs, and holds them busy or idle); keep {a or 1} GPU"
        f"{'s' if (old_gpus or 1) != 1 else ''} per pod and run {factor} × the replicas"),
        detail={"old_gpus_per_pod": old_gpus, "new_gpus_per_pod": new_gpus})
