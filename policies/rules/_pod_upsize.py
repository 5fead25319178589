# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""gpu-no-vertical-upsize on Kubernetes: a pod template whose GPUs per pod go up.

More GPUs per pod is vertical scaling (each pod needs a node with that many free GPUs, and
holds them busy or idle); the horizontal alternative is more replicas at the old GPUs per pod.
A pod template that had no GPUs (or a new role) is measured against one GPU per pod, the
smallest a GPU pod can be: asking for one is not an upsize, asking for four is.

The same check runs at admission on an UPDATE (``oldObject`` against ``object``):
:mod:`policies.admission.cel.gpu_no_vertical_upsize`; the examples both are held to are in
:mod:`policies.rules._pod_upsize_examples` (apart, so that the rule's module imports the
Kubernetes facts only when a plan holds pods).
"""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import k8s
from policies.model import UNKNOWN, ResourceChange
from policies.rules._common import cannot_verify
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
            side, pods = (("new", new.pods) if new_gpus is None or old is None
                          else ("old", old.pods))
            yield Finding(change.address, cannot_verify(
                f"the {side} GPUs per pod of {who} {_why_not_known(pods)}"), unknown=True)
        return
    base = old_gpus or 1.0  # no GPUs before: one GPU per pod is where a GPU pod starts
    if new_gpus <= old_gpus or new_gpus <= base:
        return
    a, b = shown(old_gpus), shown(new_gpus)
    factor = times(new_gpus, old_gpus) if old_gpus else b
    yield Finding(change.address, (
        f"{who}: GPUs per pod {a} → {b} is vertical scaling (each pod now "
        f"needs a node with {b} free GPUs, and holds them busy or idle); keep {shown(base)} GPU"
        f"{'s' if base != 1 else ''} per pod and run {factor} × the replicas"),
        detail={"old_gpus_per_pod": old_gpus, "new_gpus_per_pod": new_gpus})


# Numbers in messages, written so the admission CEL writes the same text from the same doubles
# (the same float operations, no formatting library): a whole number bare, else the smallest
# fraction with a denominator up to 64 that the value is exactly (3/2), else milli-units.
DENOMINATORS = range(2, 65)


def shown(x: float) -> str:
    """GPUs: ``4``, ``1/2``, ``3/2``; a value no small fraction is exactly: ``333m``."""
    if x.is_integer():
        return str(int(x))
    d = next((d for d in DENOMINATORS if (x * d).is_integer()), None)
    return f"{int(x * d)}/{d}" if d is not None else f"{int(x * 1000)}m"


def times(new: float, old: float) -> str:
    """``new / old`` as a factor: ``4``, ``3/2`` (lowest terms up to /64), else
    ``1006/1000`` (the two counts, as :func:`shown` writes them)."""
    if (new / old).is_integer():
        return str(int(new / old))
    d = next((d for d in DENOMINATORS if (new * d / old).is_integer()), None)
    return f"{int(new * d / old)}/{d}" if d is not None else f"{shown(new)}/{shown(old)}"


def _why_not_known(pods: k8s.PodGpus) -> str:
    """Unknown until apply (a plan's value), or a GPU count that is not a number."""
    if pods.unknown or any(c.unknown or any(c.count(r).raw is UNKNOWN for r in c.resources)
                           for c in pods.containers):
        return "are unknown until apply"
    return "cannot be read (a GPU count is not a number)"
