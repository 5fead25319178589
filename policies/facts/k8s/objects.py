"""One Kubernetes object, whatever source wrote it: :func:`k8s_object` and what names it.

Three shapes reach the rules: manifests and Pulumi resources (``kubernetes:apps/v1:Deployment``,
the object itself with snake_case keys), Terraform's typed resources (``kubernetes_deployment_v1``:
blocks as one-element lists, ``container`` for ``containers``, ``init_container``,
``scale_target_ref``, ``metric``), and Terraform's ``kubernetes_manifest`` (the object, camelCase,
under ``manifest``). Each becomes one :class:`K8sObject`.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpupool.record import Frozen
from policies.facts.values import Maybe, Side, block, inputs_of, is_map
from policies.model import UNKNOWN, ResourceChange, ResourceKind, normalise_inputs

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

# Terraform's typed resources → Kubernetes kind.
TERRAFORM_KINDS: Final = {
    **{f"kubernetes_{t}{v}": k for v in ("", "_v1") for t, k in (
        ("deployment", "Deployment"), ("stateful_set", "StatefulSet"),
        ("daemonset", "DaemonSet"), ("daemon_set", "DaemonSet"), ("job", "Job"),
        ("cron_job", "CronJob"), ("pod", "Pod"),
        ("replication_controller", "ReplicationController"), ("namespace", "Namespace"),
        ("resource_quota", "ResourceQuota"))},
    **{f"kubernetes_horizontal_pod_autoscaler{v}": "HorizontalPodAutoscaler"
       for v in ("", "_v1", "_v2", "_v2beta2")},
}


class K8sObject(Frozen):
    """One Kubernetes object: kind, identity, labels, and its spec (snake_case keys)."""

    __slots__ = ("kind", "api_version", "name", "namespace", "labels", "spec", "terraform", "root")

    kind: str
    api_version: str  # "" when the source does not say (Terraform's typed resources)
    name: str | Maybe | None
    namespace: str | Maybe | None  # None: not set (the namespace it is applied to)
    labels: Mapping[str, Any]
    spec: Mapping[str, Any] | Maybe | None
    terraform: bool  # Terraform's typed shape (blocks as lists, singular container)
    root: Mapping[str, Any]

    def __init__(
        self,
        kind: str,
        api_version: str,
        name: str | Maybe | None,
        namespace: str | Maybe | None,
        labels: Mapping[str, Any],
        spec: Mapping[str, Any] | Maybe | None,
        terraform: bool,
        root: Mapping[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "api_version", api_version)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "terraform", terraform)
        object.__setattr__(self, "root", {} if root is None else root)

    @property
    def group(self) -> str:
        """The API group: ``apps``, ``ray.io``; "" for the core group and Terraform's types."""
        return self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""


def k8s_object(change: ResourceChange, side: Side = "new") -> K8sObject | None:
    """The Kubernetes object a change declares on ``side``; None when it declares none."""
    inputs = inputs_of(change, side)
    if not inputs:
        return None
    terraform = False
    if change.kind is ResourceKind.K8S_MANIFEST:
        raw = inputs.get("manifest")
        if raw is UNKNOWN:
            return K8sObject("", "", UNKNOWN, UNKNOWN, {}, UNKNOWN, False)
        if not is_map(raw):
            return None
        # Terraform keeps the manifest as written (camelCase): normalise it like any source
        root = normalise_inputs(raw)
        kind = root.get("kind")
    elif change.type in TERRAFORM_KINDS:
        root, kind, terraform = inputs, TERRAFORM_KINDS[change.type], True
    else:
        root = inputs
        kind = root.get("kind") or change.type.rsplit(":", 1)[-1]
    if not isinstance(kind, str):
        return None
    api = root.get("api_version")
    if not isinstance(api, str) and change.type.startswith("kubernetes:"):
        api = _api_of(change.type)  # a Pulumi resource's inputs may leave it to the type
    meta = block(root.get("metadata"))
    if meta is UNKNOWN:
        name: Any = UNKNOWN
        namespace: Any = UNKNOWN
        labels: Mapping[str, Any] = {}
    elif meta is None:
        name, namespace, labels = None, None, {}
    else:
        name, namespace = meta.get("name"), meta.get("namespace")
        raw_labels = meta.get("labels")
        labels = raw_labels if is_map(raw_labels) else {}
        namespace = namespace if namespace not in ("",) else None
    return K8sObject(kind, api if isinstance(api, str) else "", name, namespace, labels,
                     block(root.get("spec")), terraform, root)


def _api_of(type_token: str) -> str:
    """``kubernetes:apps/v1:Deployment`` → ``apps/v1``; ``kubernetes:core/v1:Pod`` → ``v1``."""
    parts = type_token.split(":")
    if len(parts) != 3:
        return ""
    group_version = parts[1]
    return group_version.removeprefix("core/")


def describe(obj: K8sObject) -> str:
    """``Deployment ml/embeddings`` for messages (``generateName*`` when the server names it,
    ``?`` where a name is unknown)."""
    name = obj.name if isinstance(obj.name, str) else _generated(obj)
    ns = obj.namespace if isinstance(obj.namespace, str) else None
    return f"{obj.kind} {ns}/{name}" if ns else f"{obj.kind} {name}"


def _generated(obj: K8sObject) -> str:
    meta = block(obj.root.get("metadata"))
    prefix = meta.get("generate_name") if is_map(meta) else None
    return f"{prefix}*" if isinstance(prefix, str) and prefix else "?"


def namespace_key(change: ResourceChange, obj: K8sObject) -> str | Maybe | None:
    """Which namespace an object lives in: its name, None (not set: the namespace it is applied
    to), or — when the name is unknown until apply (a Pulumi-autonamed Namespace) — the address
    of the Namespace resource its metadata depends on, as ``@<address>``; UNKNOWN otherwise."""
    if obj.kind == "Namespace":
        if isinstance(obj.name, str) and obj.name:
            return obj.name
        return f"@{change.address}"
    ns = obj.namespace
    if isinstance(ns, str):
        return ns
    if ns is UNKNOWN:
        ref = change.references.get("metadata")
        return f"@{ref}" if ref else UNKNOWN
    return None
