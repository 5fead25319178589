"""A Karpenter NodePool's (v1/v1beta1) or Provisioner's (v1alpha5) scheduling requirements."""

from __future__ import annotations

from gpupool.record import Frozen
from policies.facts.k8s.objects import K8sObject
from policies.facts.values import block, blocks, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Requirement(Frozen):
    __slots__ = ("key", "operator", "values")
    key: str
    operator: str
    values: tuple[str, ...]

    def __init__(self, key: str, operator: str, values: tuple[str, ...]) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "operator", operator)
        object.__setattr__(self, "values", values)


class NodeRequirements(Frozen):
    """A NodePool's or Provisioner's requirements, or why they are unknown."""

    __slots__ = ("requirements", "unknown", "path")

    requirements: tuple[Requirement, ...]
    unknown: str | None
    path: str

    def __init__(
        self,
        requirements: tuple[Requirement, ...] = (),
        unknown: str | None = None,
        path: str = "spec.template.spec.requirements",
    ) -> None:
        object.__setattr__(self, "requirements", requirements)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "path", path)


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


class Taint(Frozen):
    __slots__ = ("key", "value", "effect")
    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute

    def __init__(self, key: str, value: str, effect: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "effect", effect)


class NodeTaints(Frozen):
    """The taints a NodePool (``spec.template.spec.taints``) or Provisioner (``spec.taints``)
    puts on its nodes, or why they are unknown. Startup taints are left out: Karpenter expects
    a daemon to remove them, so they do not keep pods off for the node's life."""

    __slots__ = ("taints", "unknown", "path")

    taints: tuple[Taint, ...]
    unknown: str | None
    path: str

    def __init__(
        self,
        taints: tuple[Taint, ...] = (),
        unknown: str | None = None,
        path: str = "spec.template.spec.taints",
    ) -> None:
        object.__setattr__(self, "taints", taints)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "path", path)


def node_taints(obj: K8sObject) -> NodeTaints:
    provisioner = obj.kind == "Provisioner"
    path = "spec.taints" if provisioner else "spec.template.spec.taints"
    node: Any = obj.spec
    for part in () if provisioner else ("template", "spec"):
        if node is UNKNOWN:
            return NodeTaints(unknown=f"{part} unknown until apply", path=path)
        node = block(node.get(part)) if is_map(node) else None
    if node is UNKNOWN:
        return NodeTaints(unknown="spec unknown until apply", path=path)
    raw = blocks(node.get("taints")) if is_map(node) else []
    if raw is UNKNOWN:
        return NodeTaints(unknown="taints unknown until apply", path=path)
    out = []
    for t in raw:
        if not is_map(t) or any(v is UNKNOWN for v in t.values()):
            return NodeTaints(unknown="a taint is unknown until apply", path=path)
        out.append(Taint(str(t.get("key") or ""), str(t.get("value") or ""),
                         str(t.get("effect") or "")))
    return NodeTaints(tuple(out), None, path)
