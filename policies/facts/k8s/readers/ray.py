# ruff: noqa: RUF001, RUF003  (× and − are the signs people read in docs/policies.md)
"""KubeRay (``ray.io``): RayCluster, RayService (``rayClusterConfig``) and RayJob
(``rayClusterSpec``, and its submitter pod): the head and each worker group, with their
replica ranges and the cluster's autoscaler."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers._base import (
    Reader,
    count_at,
    deadline_at,
    range_at,
    spec_of,
    template_role,
    times,
)
from policies.facts.k8s.workload import ONE, Autoscaler, Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, blocks, flag, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

_AUTOSCALER = "RayCluster autoscaler"
_MAX = 2147483647  # KubeRay's default maxReplicas: no bound


def cluster_roles(cluster: Any, base: str) -> tuple[tuple[Role, ...], str | None]:
    """The head and worker groups of a RayCluster spec found at ``base``."""
    if cluster is UNKNOWN:
        return (), f"{base.rsplit('.', 1)[-1]} unknown until apply"
    if not is_map(cluster):
        return (), None
    enabled = flag(cluster.get("enable_in_tree_autoscaling"))
    head = block(cluster.get("head_group_spec"))
    roles = [template_role("head", UNKNOWN if head is UNKNOWN else (head or {}).get("template"),
                           f"{base}.head_group_spec.template", ONE)]
    groups = blocks(cluster.get("worker_group_specs"))
    if groups is UNKNOWN:
        return tuple(roles), "worker_group_specs unknown until apply"
    for i, g in enumerate(groups):
        path = f"{base}.worker_group_specs[{i}]"
        if not is_map(g):
            roles.append(template_role(f"worker group #{i}", UNKNOWN if g is UNKNOWN else None,
                                       path))
            continue
        name = g.get("group_name") if isinstance(g.get("group_name"), str) else f"#{i}"
        hosts = count_at(g, "num_of_hosts", f"{path}.num_of_hosts")
        bounds = range_at(g, "min_replicas", "max_replicas", path, 0, _MAX)
        fixed = count_at(g, "replicas", f"{path}.replicas", default=bounds.min)
        if g.get("suspend") is True:
            fixed = Replicas(0, 0, f"{path}.suspend")
        top = None if bounds.max in (None, _MAX) else bounds.max
        scaler = Autoscaler(_AUTOSCALER, enabled, f"{base}.enable_in_tree_autoscaling",
                            bounds.min, top)
        pods = times(Replicas(bounds.min, top, path, bounds.unknown), hosts) if enabled is True \
            else times(fixed, hosts)
        roles.append(template_role(f"worker group {name}", g.get("template"),
                                   f"{path}.template", pods, scaler))
    return tuple(roles), None


def _cluster(obj: K8sObject) -> Workload:
    roles, unknown = cluster_roles(obj.spec, "spec")
    return Workload(obj, "ray", Lifecycle.SERVICE, roles, unknown=unknown)


def _service(obj: K8sObject) -> Workload:
    roles, unknown = cluster_roles(block(spec_of(obj).get("ray_cluster_config")),
                                   "spec.ray_cluster_config")
    return Workload(obj, "ray", Lifecycle.SERVICE, roles, unknown=unknown)


def _job(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    deadline = deadline_at(spec, "active_deadline_seconds", "spec.active_deadline_seconds")
    roles, unknown = cluster_roles(block(spec.get("ray_cluster_spec")), "spec.ray_cluster_spec")
    submitter = spec.get("submitter_pod_template")
    if submitter is not None:
        roles = (*roles, template_role("submitter", submitter, "spec.submitter_pod_template"))
    return Workload(obj, "ray", Lifecycle.BATCH, roles, (deadline,), unknown=unknown)


_AUTOSCALED = ("its autoscaler on (spec.enableInTreeAutoscaling: true) and maxReplicas above "
               "minReplicas on every GPU worker group; a head group holding GPUs never scales")
READERS = (
    Reader("ray", (("ray.io", "RayCluster"),), Lifecycle.SERVICE, _cluster,
           "spec.headGroupSpec.template and spec.workerGroupSpecs[*].template; pods = "
           "replicas (or minReplicas…maxReplicas with the autoscaler) × numOfHosts",
           _AUTOSCALED),
    Reader("ray", (("ray.io", "RayService"),), Lifecycle.SERVICE, _service,
           "spec.rayClusterConfig, as a RayCluster", _AUTOSCALED),
    Reader("ray", (("ray.io", "RayJob"),), Lifecycle.BATCH, _job,
           "spec.rayClusterSpec, as a RayCluster, and spec.submitterPodTemplate",
           "out of scope (runs to completion)", "spec.activeDeadlineSeconds"),
)
