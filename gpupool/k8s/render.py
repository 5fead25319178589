"""Lay out a stack's Kubernetes objects as plain YAML files for GitOps (Argo CD, Flux).

One file per object, ``<pool>/<NNN>-<kind>-<namespace>-<name>.yaml``, numbered in apply order
(Helm's install order: namespaces, quotas and RBAC before the workloads that need them, custom
resources last), so ``kubectl apply -f DIR/<pool>`` and a GitOps tool apply them in the same
order and a re-render of an unchanged stack changes no byte. Each file starts with a header
naming the stack it came from; files with that header that a render no longer produces are
removed, anything else in the directory is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from gpupool.k8s import schemas
from gpupool.k8s.grafana.validate import configmap_problems

HEADER: Final = "# Rendered by gpupool render"
# helm's releaseutil.InstallOrder; kinds it does not list (custom resources) come after, by name
INSTALL_ORDER: Final = (
    "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap",
    "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition",
    "ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role",
    "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
    "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler",
    "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
)
_RANK: Final = {kind: i for i, kind in enumerate(INSTALL_ORDER)}
_UNSAFE: Final = re.compile(r"[^a-z0-9.-]+")


@dataclass(frozen=True, slots=True)
class RenderedObject:
    pool: str
    obj: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    def order(self) -> tuple[int, str, str, str]:
        return (_RANK.get(self.kind, len(_RANK)), self.kind, self.namespace, self.name)

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


def ordered(objects: Sequence[RenderedObject]) -> list[RenderedObject]:
    return sorted(objects, key=lambda o: (o.pool, *o.order()))


def file_name(index: int, o: RenderedObject) -> str:
    parts = [o.kind.lower(), o.namespace or "cluster", o.name]
    return f"{index:03d}-" + "-".join(_UNSAFE.sub("-", p.lower()).strip("-") for p in parts) + \
        ".yaml"


def validate(objects: Sequence[RenderedObject], versions: Mapping[str, str], where: str
             ) -> list[str]:
    """Every schema problem of every object, one line each (empty when all are valid)."""
    out: list[str] = []
    for o in objects:
        version = versions[o.pool]
        try:
            for problem in schemas.problems(o.obj, version):
                out.append(f"{where}: pool {o.pool}: {o.describe()}: {problem}")
            for problem in configmap_problems(o.obj):  # a Grafana dashboard's own schema
                out.append(f"{where}: pool {o.pool}: {o.describe()}: {problem}")
        except schemas.SchemaMissing as e:
            out.append(f"{where}: pool {o.pool}: {o.describe()}: {e}")
    return out


_FIRST: Final = ("apiVersion", "kind", "metadata", "spec")


def canonical(obj: Mapping[str, Any]) -> dict[str, Any]:
    """apiVersion, kind, metadata, spec first (as people write manifests), every mapping's keys
    sorted below that: the same object always renders to the same bytes."""
    top = {k: _sorted(obj[k]) for k in _FIRST if k in obj}
    top.update({k: _sorted(obj[k]) for k in sorted(obj) if k not in top})
    return top


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def dump(obj: Mapping[str, Any]) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(canonical(obj), Dumper=dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=100)


def write(objects: Sequence[RenderedObject], out: Path, source: str) -> list[Path]:
    """Write every object (already validated) under ``out``; returns the files, in order.

    Through :func:`gpupool.outdir.write_tree`: never through a symbolic link below ``out``,
    every file renamed into place once all are written; stale files of ours are removed.
    """
    from gpupool.outdir import write_tree

    files: dict[str, str] = {}
    by_pool: dict[str, list[RenderedObject]] = {}
    for o in ordered(objects):
        by_pool.setdefault(o.pool, []).append(o)
    for pool, objs in by_pool.items():
        header = f"{HEADER} from {source} (pool {pool}): edit the stack, not this file\n"
        for i, o in enumerate(objs, 1):
            files[f"{pool}/{file_name(i, o)}"] = header + dump(o.obj)
    return write_tree(out, files, option="--out",
                      ours=lambda head: head.startswith(HEADER.encode()))
