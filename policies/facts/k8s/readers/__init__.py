"""The reader table: (API group, kind) → the one small module that reads that kind.

Adding a kind is one module with a ``READERS`` tuple, listed in :data:`MODULES`; nothing else
changes (the rules, the census and docs/policies.md read the table).
"""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers import (
    argo,
    builtin,
    jobset,
    keda,
    kserve,
    kserve_llm,
    kubeflow,
    lws,
    nim,
    no_pods,
    ray,
    trainer,
    volcano,
)
from policies.facts.k8s.readers._base import Reader
from policies.facts.k8s.workload import Workload
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

MODULES: Final = (builtin, kubeflow, trainer, jobset, lws, ray, kserve, kserve_llm, argo, volcano,
                   nim, keda, no_pods)
ALL_READERS: Final[tuple[Reader, ...]] = tuple(r for m in MODULES for r in m.READERS)
TABLE: Final[dict[tuple[str, str], Reader]] = {k: r for r in ALL_READERS for k in r.kinds}


def reader_for(obj: K8sObject) -> Reader | None:
    return TABLE.get((obj.group, obj.kind))


def workload(obj: K8sObject) -> Workload | None:
    """The object's pods as its reader reads them; None when no reader knows its kind."""
    reader = TABLE.get((obj.group, obj.kind))
    if reader is None:
        return None
    if obj.spec is UNKNOWN:
        return Workload(obj, reader.name, reader.lifecycle, unknown="spec unknown until apply")
    return reader.read(obj)


__all__ = ["ALL_READERS", "TABLE", "Reader", "reader_for", "workload"]
