"""One object as every Kubernetes rule reads it: its workload, and the accelerators it asks
for that no reader read (the fail-closed net). Cached per change: five rules and the census
read the same objects.

:func:`read` answers a :class:`Reading`: ``workload`` from the object's reader (None when no
reader knows the kind) and ``stray``, the accelerator requests found in the object
(:func:`policies.facts.k8s.scan.accelerator_requests`) that its reader did not read — every one
of them when there is no reader. A rule that finds ``stray`` requests says "cannot verify",
never passes them. The built-in kinds are read whole (their pod spec is all a pod runs), and
kinds that run no pods have nothing to stray, so neither is scanned.
"""

from __future__ import annotations

from gpupool.record import Frozen
from policies.facts.k8s.objects import K8sObject, k8s_object
from policies.facts.k8s.readers import workload
from policies.facts.k8s.scan import Request, accelerator_requests
from policies.facts.k8s.workload import Workload
from policies.facts.values import Side
from policies.model import UNKNOWN, ResourceChange

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

_READ_WHOLE: Final = frozenset({"builtin", "no_pods"})
_CACHE_MAX: Final = 1 << 16


class Reading(Frozen):
    __slots__ = ("obj", "workload", "stray")
    obj: K8sObject
    workload: Workload | None
    stray: tuple[Request, ...]

    def __init__(
        self,
        obj: K8sObject,
        workload: Workload | None,
        stray: tuple[Request, ...] = (),
    ) -> None:
        object.__setattr__(self, "obj", obj)
        object.__setattr__(self, "workload", workload)
        object.__setattr__(self, "stray", stray)

    @property
    def understood(self) -> bool:
        return self.workload is not None

    @property
    def gpu(self) -> bool:
        """Does it ask for a GPU (or may it: unknown until apply)?"""
        return bool(self.stray) or (self.workload is not None and self.workload.gpu)


_cache: dict[tuple[int, str], tuple[ResourceChange, Reading | None]] = {}


def read(change: ResourceChange, side: Side = "new") -> Reading | None:
    """The reading of the object ``change`` declares on ``side``; None when it declares none."""
    key = (id(change), side)
    hit = _cache.get(key)
    if hit is not None and hit[0] is change:
        return hit[1]
    obj = k8s_object(change, side)
    out = None if obj is None else reading(obj)
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[key] = (change, out)
    return out


def reading(obj: K8sObject) -> Reading:
    wl = workload(obj)
    if wl is not None and wl.reader in _READ_WHOLE:
        return Reading(obj, wl)
    if obj.spec is UNKNOWN and wl is None:
        return Reading(obj, None)
    found = accelerator_requests(obj.root, skip_top=("metadata",))
    if not found or wl is None:
        return Reading(obj, wl, tuple(found))
    read_at: set[str] = set()
    unread: list[str] = []
    for role in wl.roles:
        if role.pods.unknown:
            unread.append(role.path)
        for c in role.pods.containers:
            read_at.update((f"{c.resources_path}.limits", f"{c.resources_path}.requests"))
    if wl.unknown:
        return Reading(obj, wl)
    stray = tuple(r for r in found if r.path not in read_at
                  and not any(r.path.startswith(u) for u in unread))
    return Reading(obj, wl, stray)
