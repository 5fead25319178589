"""How many GPU objects the Kubernetes rules judged, and which kinds they could not: what the
reports say beside the verdict, so a pass never hides a GPU workload that was skipped."""

from __future__ import annotations

from collections.abc import Iterable

from gpupool.record import Record
from policies.facts.k8s.reading import read
from policies.model import ChangeKind, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

_KINDS: Final = frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                           ResourceKind.K8S_OBJECT})
_OTHERS: Final = frozenset({ResourceKind.K8S_NAMESPACE, ResourceKind.K8S_RESOURCE_QUOTA,
                            ResourceKind.K8S_AUTOSCALER, ResourceKind.KARPENTER_NODE_POOL})
_GONE: Final = (ChangeKind.DELETE, ChangeKind.READ)


class Census(Record):
    """``objects``: Kubernetes objects read. ``judged``: those a reader read whose pods ask for
    GPUs (or may: unknown until apply). ``not_understood``: (kind, API version) → objects that
    ask for an accelerator and that no reader understands."""

    __slots__ = ("objects", "judged", "not_understood")

    objects: int
    judged: int
    not_understood: dict[tuple[str, str], int]

    def __init__(
        self,
        objects: int = 0,
        judged: int = 0,
        not_understood: dict[tuple[str, str], int] | None = None,
    ) -> None:
        self.objects = objects
        self.judged = judged
        self.not_understood = {} if not_understood is None else not_understood

    def add(self, changes: Iterable[ResourceChange]) -> Census:
        for change in changes:
            if change.change in _GONE:
                continue
            if change.kind in _OTHERS:
                self.objects += 1
            if change.kind not in _KINDS:
                continue
            found = read(change)
            if found is None:
                continue
            self.objects += 1
            if found.workload is not None:
                self.judged += found.workload.gpu
            elif found.stray:
                key = (found.obj.kind, found.obj.api_version)
                self.not_understood[key] = self.not_understood.get(key, 0) + 1
        return self
