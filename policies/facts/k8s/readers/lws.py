# ruff: noqa: RUF001, RUF002, RUF003  (× and − are the signs people read in docs/policies.md)
"""LeaderWorkerSet (``leaderworkerset.x-k8s.io``): ``replicas`` groups of ``size`` pods, a
leader (``leaderTemplate``, or the worker template when there is none) and size − 1 workers."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers._base import Reader, count_at, spec_of, template_role, times
from policies.facts.k8s.workload import Lifecycle, Replicas, Workload
from policies.facts.values import block
from policies.model import UNKNOWN


def _lws(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    groups = count_at(spec, "replicas", "spec.replicas")
    lwt = block(spec.get("leader_worker_template"))
    if lwt is UNKNOWN:
        return Workload(obj, "lws", Lifecycle.SERVICE, scale_target=True,
                        unknown="leader_worker_template unknown until apply")
    lwt = lwt or {}
    base = "spec.leader_worker_template"
    size = count_at(lwt, "size", f"{base}.size")
    leader = lwt.get("leader_template")
    if leader is None:  # every pod of a group from the worker template
        worker = template_role("worker", lwt.get("worker_template"), f"{base}.worker_template",
                               times(groups, size))
        return Workload(obj, "lws", Lifecycle.SERVICE, (worker,), scale_target=True)
    workers = Replicas(None, None, size.path, size.unknown) if size.unknown else Replicas(
        None if size.min is None else size.min - 1, None if size.max is None else size.max - 1,
        size.path)
    roles = (template_role("leader", leader, f"{base}.leader_template", groups),
             template_role("worker", lwt.get("worker_template"), f"{base}.worker_template",
                           times(groups, workers)))
    return Workload(obj, "lws", Lifecycle.SERVICE, roles, scale_target=True)


READERS = (
    Reader("lws", (("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),), Lifecycle.SERVICE, _lws,
           "spec.leaderWorkerTemplate.leaderTemplate (replicas pods) and .workerTemplate "
           "(replicas × (size − 1) pods)",
           "a HorizontalPodAutoscaler or KEDA ScaledObject whose scaleTargetRef names the "
           "LeaderWorkerSet (it has a scale subresource), on a GPU metric, max above min"),
)
