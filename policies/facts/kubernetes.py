"""Kubernetes objects as rules read them, whatever wrote them.

Three shapes reach the rules: manifests and Pulumi resources (``kubernetes:apps/v1:Deployment``,
the object itself with snake_case keys), Terraform's typed resources (``kubernetes_deployment_v1``:
blocks as one-element lists, ``container`` for ``containers``, ``init_container``,
``scale_target_ref``, ``metric``), and Terraform's ``kubernetes_manifest`` (the object, camelCase,
under ``manifest``). :func:`k8s_object` turns each into one :class:`K8sObject`; the extractors
below step through either block style (:func:`policies.facts.values.block`), so a rule never
looks at a raw shape and a source difference is fixed here once.

Values unknown until apply stay :data:`UNKNOWN`; a GPU quantity that is not a number is kept as
text (:class:`Quantity` says why), never read as zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from policies.facts.values import Maybe, Side, block, blocks, inputs_of, is_map
from policies.model import UNKNOWN, ResourceChange, ResourceKind, normalise_inputs

# Extended resources that are whole GPUs (time-slicing's renamed shared GPU included).
GPU_RESOURCES: Final = ("nvidia.com/gpu", "nvidia.com/gpu.shared", "amd.com/gpu")
WORKLOAD_KINDS: Final = frozenset({
    "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod",
    "ReplicationController",
})
# Terraform's typed resources → Kubernetes kind.
_TERRAFORM_KINDS: Final = {
    **{f"kubernetes_{t}{v}": k for v in ("", "_v1") for t, k in (
        ("deployment", "Deployment"), ("stateful_set", "StatefulSet"),
        ("daemonset", "DaemonSet"), ("daemon_set", "DaemonSet"), ("job", "Job"),
        ("cron_job", "CronJob"), ("pod", "Pod"),
        ("replication_controller", "ReplicationController"), ("namespace", "Namespace"),
        ("resource_quota", "ResourceQuota"))},
    **{f"kubernetes_horizontal_pod_autoscaler{v}": "HorizontalPodAutoscaler"
       for v in ("", "_v1", "_v2", "_v2beta2")},
}
_QUANTITY: Final = re.compile(r"^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:e([+-]?[0-9]+))?"
                              r"(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_SUFFIX: Final = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
                  "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


@dataclass(frozen=True, slots=True)
class K8sObject:
    """One Kubernetes object: kind, identity, labels, and its spec (snake_case keys)."""

    kind: str
    api_version: str  # "" when the source does not say (Terraform's typed resources)
    name: str | Maybe | None
    namespace: str | Maybe | None  # None: not set (the namespace it is applied to)
    labels: Mapping[str, Any]
    spec: Mapping[str, Any] | Maybe | None
    terraform: bool  # Terraform's typed shape (blocks as lists, singular container)
    root: Mapping[str, Any] = field(default_factory=dict)

    @property
    def group(self) -> str:
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
    elif change.type in _TERRAFORM_KINDS:
        root, kind, terraform = inputs, _TERRAFORM_KINDS[change.type], True
    else:
        root = inputs
        kind = root.get("kind") or change.type.rsplit(":", 1)[-1]
    if not isinstance(kind, str):
        return None
    api = root.get("api_version")
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


# --------------------------------------------------------------------------- quantities


@dataclass(frozen=True, slots=True)
class Quantity:
    """A resource quantity: its value, or why it has none (unknown until apply, not a number)."""

    raw: Any
    value: float | None  # None when unknown or unreadable

    @property
    def unknown(self) -> bool:
        return self.raw is UNKNOWN

    @property
    def whole(self) -> bool:
        return self.value is not None and self.value >= 0 and float(self.value).is_integer()

    def shown(self) -> str:
        if self.unknown:
            return "unknown until apply"
        if self.whole:
            return str(int(self.value or 0))
        return repr(self.raw) if isinstance(self.raw, str) else str(self.raw)


def quantity(raw: Any) -> Quantity:
    """``1``, ``"2"``, ``"500m"``, ``"1e3"`` → a number; anything else keeps ``value=None``."""
    if raw is UNKNOWN or isinstance(raw, bool):
        return Quantity(raw, None)
    if isinstance(raw, int | float):
        return Quantity(raw, float(raw))
    if isinstance(raw, str):
        m = _QUANTITY.match(raw.strip())
        if m:
            value = float(m.group(1)) * 10 ** int(m.group(2) or 0) * _SUFFIX[m.group(3) or ""]
            return Quantity(raw, value)
    return Quantity(raw, None)


# --------------------------------------------------------------------------- pods and GPUs


@dataclass(frozen=True, slots=True)
class ContainerGpus:
    """The GPUs one container asks for: per GPU resource name, in limits and in requests."""

    name: str
    init: bool
    limits: Mapping[str, Quantity]
    requests: Mapping[str, Quantity]
    unknown: str | None = None  # the container's resources are unknown until apply

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.limits, *self.requests]))

    def count(self, resource: str) -> Quantity:
        """What the scheduler reserves: the limit (requests default to it), else the request."""
        return self.limits.get(resource) or self.requests.get(resource) or Quantity(0, 0.0)

    @property
    def total(self) -> float | None:
        """Every GPU of the container, or None when a count is unknown or unreadable."""
        out = 0.0
        for r in self.resources:
            q = self.count(r)
            if q.value is None:
                return None
            out += q.value
        return out


@dataclass(frozen=True, slots=True)
class PodGpus:
    """A pod template's containers and what they ask for; ``unknown`` says why it is unknown."""

    containers: tuple[ContainerGpus, ...] = ()
    unknown: str | None = None
    path: str = ""  # snake_case path of the pod spec, for messages (spec.template.spec)

    @property
    def gpu_containers(self) -> tuple[ContainerGpus, ...]:
        return tuple(c for c in self.containers if c.resources or c.unknown)

    @property
    def per_pod(self) -> float | None:
        """GPUs the pod holds: init containers run one at a time before the others, so the
        pod's effective request is max(largest init container, sum of the app containers)."""
        app, init = 0.0, 0.0
        for c in self.containers:
            if c.unknown:
                return None
            total = c.total
            if total is None:
                return None
            if c.init:
                init = max(init, total)
            else:
                app += total
        return max(app, init)


def pod_spec_path(obj: K8sObject) -> str | None:
    """Where a kind keeps its pod spec (manifest spelling), or None for kinds without pods."""
    if obj.kind == "Pod":
        return "spec"
    if obj.kind == "CronJob":
        return "spec.job_template.spec.template.spec"
    if obj.kind in WORKLOAD_KINDS:
        return "spec.template.spec"
    return None


def pod_gpus(obj: K8sObject) -> PodGpus | None:
    """The GPUs of a workload's pod template; None for objects that run no pods."""
    path = pod_spec_path(obj)
    if path is None:
        return None
    node: Any = obj.root
    for part in path.split("."):
        node = block(node.get(part)) if is_map(node) else None
        if node is UNKNOWN:
            return PodGpus(unknown=f"{part} unknown until apply", path=path)
        if node is None:
            return PodGpus(path=path)
    containers: list[ContainerGpus] = []
    for init, keys in ((False, ("containers", "container")), (True, ("init_containers",
                                                                      "init_container"))):
        for key in keys:
            items = blocks(node.get(key))
            if items is UNKNOWN:
                return PodGpus(unknown=f"{key} unknown until apply", path=path)
            for i, c in enumerate(items):
                containers.append(_container(c, i, init))
    return PodGpus(tuple(containers), None, path)


def _container(c: Any, i: int, init: bool) -> ContainerGpus:
    if not is_map(c):
        return ContainerGpus(f"#{i}", init, {}, {},
                             "unknown until apply" if c is UNKNOWN else None)
    name = c.get("name") if isinstance(c.get("name"), str) else f"#{i}"
    res = block(c.get("resources"))
    if res is UNKNOWN:
        return ContainerGpus(name, init, {}, {}, "resources unknown until apply")
    if res is None:
        return ContainerGpus(name, init, {}, {})
    sides: list[dict[str, Quantity]] = []
    for key in ("limits", "requests"):
        raw = res.get(key)
        if raw is UNKNOWN:
            return ContainerGpus(name, init, {}, {}, f"resources.{key} unknown until apply")
        values = raw if is_map(raw) else {}
        sides.append({r: quantity(values[r]) for r in GPU_RESOURCES if r in values})
    return ContainerGpus(name, init, sides[0], sides[1])


def replicas(obj: K8sObject) -> int | Maybe | None:
    """A Deployment/StatefulSet/ReplicaSet's replicas (None: not set, Kubernetes' default 1)."""
    spec = obj.spec
    if spec is UNKNOWN:
        return UNKNOWN
    if spec is None:
        return None
    value = spec.get("replicas")
    if value is UNKNOWN:
        return UNKNOWN
    q = quantity(value)
    return int(q.value) if q.whole and q.value is not None else None


# --------------------------------------------------------------------------- namespaces & quotas


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


@dataclass(frozen=True, slots=True)
class QuotaGpus:
    """What a ResourceQuota says about GPUs: the ``requests.<gpu>`` keys it bounds."""

    resources: tuple[str, ...]  # GPU resources with a requests.* hard limit
    scoped: bool  # scopes / scopeSelector: it covers only some pods
    unknown: bool = False


def quota_gpus(obj: K8sObject) -> QuotaGpus:
    spec = obj.spec
    if spec is UNKNOWN:
        return QuotaGpus((), False, True)
    if spec is None:
        return QuotaGpus((), False)
    hard = spec.get("hard")
    if hard is UNKNOWN:
        return QuotaGpus((), False, True)
    keys = hard if is_map(hard) else {}
    found = tuple(r for r in GPU_RESOURCES if f"requests.{r}" in keys)
    scoped = bool(spec.get("scopes")) or bool(block(spec.get("scope_selector")))
    return QuotaGpus(found, scoped)


# --------------------------------------------------------------------------- autoscalers


@dataclass(frozen=True, slots=True)
class ScaleTarget:
    """What an HPA or a KEDA ScaledObject scales, and on what."""

    kind: str | Maybe
    name: str | Maybe | None
    metrics: tuple[str, ...]  # every metric name, query or trigger text (for "is it GPU?")
    min_replicas: int | None
    max_replicas: int | None
    unknown: str | None = None


def scale_target(obj: K8sObject) -> ScaleTarget | None:
    """The target and metrics of an autoscaler object; None for anything else."""
    spec = obj.spec
    if obj.kind not in ("HorizontalPodAutoscaler", "ScaledObject"):
        return None
    if spec is UNKNOWN or spec is None:
        return ScaleTarget(UNKNOWN, UNKNOWN, (), None, None,
                           "spec unknown until apply" if spec is UNKNOWN else "no spec")
    ref = block(spec.get("scale_target_ref"))
    if ref is UNKNOWN:
        return ScaleTarget(UNKNOWN, UNKNOWN, (), None, None, "scaleTargetRef unknown until apply")
    ref = ref or {}
    default_kind = "Deployment" if obj.kind == "ScaledObject" else None
    kind = ref.get("kind", default_kind)
    name = ref.get("name")
    if obj.kind == "ScaledObject":
        metrics = tuple(_texts(spec.get("triggers")))
        lo, hi = _int(spec.get("min_replica_count"), 0), _int(spec.get("max_replica_count"), 100)
    else:
        found = list(_texts(spec.get("metrics"))) + list(_texts(spec.get("metric")))
        if spec.get("target_cpu_utilization_percentage") is not None:
            found.append("cpu")
        if not found and not obj.terraform and obj.api_version.endswith("/v1"):
            found.append("cpu")  # autoscaling/v1 without a target: 80 % CPU by default
        metrics = tuple(found)
        lo, hi = _int(spec.get("min_replicas"), 1), _int(spec.get("max_replicas"), None)
    return ScaleTarget(kind if isinstance(kind, str) or kind is UNKNOWN else None,
                       name if isinstance(name, str) or name is UNKNOWN else None,
                       metrics, lo, hi)


def _int(value: Any, default: int | None) -> int | None:
    q = quantity(value) if value is not None else None
    if q is None:
        return default
    return int(q.value) if q.whole and q.value is not None else None


def _texts(value: Any) -> list[str]:
    """Every string under ``value`` (metric names, selectors, PromQL), flattened."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif is_map(v):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


_GPU_METRIC: Final = re.compile(r"gpu|dcgm", re.IGNORECASE)


def is_gpu_metric(texts: tuple[str, ...]) -> bool:
    return any(_GPU_METRIC.search(t) for t in texts)


# --------------------------------------------------------------------------- Karpenter


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeRequirements:
    """A NodePool's (v1/v1beta1) or Provisioner's (v1alpha5) scheduling requirements."""

    requirements: tuple[Requirement, ...] = ()
    unknown: str | None = None
    path: str = "spec.template.spec.requirements"


def node_requirements(obj: K8sObject) -> NodeRequirements:
    spec = obj.spec
    path = "spec.requirements" if obj.kind == "Provisioner" else "spec.template.spec.requirements"
    if spec is UNKNOWN:
        return NodeRequirements(unknown="spec unknown until apply", path=path)
    node: Any = spec or {}
    if obj.kind != "Provisioner":
        for part in ("template", "spec"):
            node = block(node.get(part)) if is_map(node) else None
            if node is UNKNOWN:
                return NodeRequirements(unknown=f"{part} unknown until apply", path=path)
            node = node or {}
    raw = blocks(node.get("requirements")) if is_map(node) else []
    if raw is UNKNOWN:
        return NodeRequirements(unknown="requirements unknown until apply", path=path)
    out: list[Requirement] = []
    for r in raw:
        if not is_map(r) or r.get("key") is UNKNOWN or r.get("values") is UNKNOWN:
            return NodeRequirements(unknown="a requirement is unknown until apply", path=path)
        values = r.get("values")
        vals = tuple(str(v) for v in values) if isinstance(values, list) else ()
        out.append(Requirement(str(r.get("key", "")), str(r.get("operator", "")), vals))
    return NodeRequirements(tuple(out), None, path)


def container_path(obj: K8sObject, pods: PodGpus, container: ContainerGpus) -> str:
    """``spec.template.spec.containers[0]`` (Terraform: ``…spec.container[0]``), snake_case, for
    :func:`policies.rules._common.prop` to spell as the user wrote it."""
    key = "init_container" if container.init else "container"
    if not obj.terraform:
        key += "s"
    index = [c for c in pods.containers if c.init == container.init].index(container)
    return f"{pods.path}.{key}[{index}]"


def describe(obj: K8sObject) -> str:
    """``Deployment ml/embeddings`` for messages (``?`` where a name is unknown)."""
    name = obj.name if isinstance(obj.name, str) else "?"
    ns = obj.namespace if isinstance(obj.namespace, str) else None
    return f"{obj.kind} {ns}/{name}" if ns else f"{obj.kind} {name}"


def template_labels(obj: K8sObject) -> Mapping[str, Any]:
    """The pod template's labels (what the pods, and so their GPU metrics, carry)."""
    path = pod_spec_path(obj)
    if path is None or path == "spec":
        return obj.labels
    node: Any = obj.root
    for part in path.split(".")[:-1]:  # down to the template
        node = block(node.get(part)) if is_map(node) else None
        if not is_map(node):
            return {}
    meta = block(node.get("metadata"))
    labels = meta.get("labels") if is_map(meta) else None
    return labels if is_map(labels) else {}
