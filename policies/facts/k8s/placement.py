"""Where a pod spec may run: the taints it tolerates and the node labels it requires.

:func:`placement` reads a pod spec as written (manifests and Pulumi: ``tolerations``,
``node_selector``, ``affinity.node_affinity``; Terraform's typed resources: ``toleration``
blocks and one-element ``affinity`` lists) into a :class:`Placement`: its tolerations and the
node requirements every node it lands on must meet (``nodeSelector`` entries as ``In`` with one
value, and the required node-affinity terms). The node hygiene rules ask it whether a pod can
land on tainted GPU nodes, or asks for them, without knowing the kind that holds the pod.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpupool.record import Frozen
from policies.facts.k8s.karpenter import Requirement
from policies.facts.values import block, blocks, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Toleration(Frozen):
    __slots__ = ("key", "operator", "value", "effect")
    key: str  # "" with operator Exists: tolerates every taint
    operator: str  # Equal (the default) | Exists
    value: str
    effect: str  # "" tolerates every effect

    def __init__(self, key: str, operator: str, value: str, effect: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "operator", operator)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "effect", effect)

    def tolerates(self, key: str, effect: str, value: str | None = None) -> bool:
        """Kubernetes' rule: an empty key with Exists matches every taint; otherwise keys
        match, the effect is empty or the same, and Equal compares the value."""
        if self.effect and self.effect != effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != key:
            return False
        return self.operator == "Exists" or value is None or self.value == value


class Placement(Frozen):
    """A pod spec's tolerations and required node labels. ``terms`` are the required
    node-affinity terms (OR of ANDs), each already joined with the nodeSelector entries;
    () means any node. ``unknown``: why a part of it is unknown until apply."""

    __slots__ = ("tolerations", "terms", "unknown", "selector")

    tolerations: tuple[Toleration, ...]
    terms: tuple[tuple[Requirement, ...], ...]
    unknown: str | None
    selector: tuple[Requirement, ...]  # the nodeSelector part of every term

    def __init__(
        self,
        tolerations: tuple[Toleration, ...] = (),
        terms: tuple[tuple[Requirement, ...], ...] = (),
        unknown: str | None = None,
        selector: tuple[Requirement, ...] = (),
    ) -> None:
        object.__setattr__(self, "tolerations", tolerations)
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "selector", selector)

    def tolerates(self, key: str, effect: str = "NoSchedule", value: str | None = None) -> bool:
        return any(t.tolerates(key, effect, value) for t in self.tolerations)

    @property
    def required(self) -> tuple[Requirement, ...]:
        """Requirements every term holds (what the pod needs whichever term matches)."""
        if not self.terms:
            return ()
        first, *rest = self.terms
        return tuple(r for r in first if all(r in t for t in rest))


def placement(spec: Any) -> Placement:
    """The placement of the pod spec ``spec`` (a mapping, UNKNOWN or None)."""
    if spec is UNKNOWN:
        return Placement(unknown="the pod spec is unknown until apply")
    if not is_map(spec):
        return Placement()
    tolerations, why = _tolerations(spec)
    if why:
        return Placement(unknown=why)
    selector, why = _selector(spec.get("node_selector"))
    if why:
        return Placement(tolerations, unknown=why)
    terms, why = _affinity_terms(spec.get("affinity"))
    if why:
        return Placement(tolerations, unknown=why)
    if not terms:
        return Placement(tolerations, (selector,) if selector else (), None, selector)
    return Placement(tolerations, tuple(selector + t for t in terms), None, selector)


def _tolerations(spec: Mapping[str, Any]) -> tuple[tuple[Toleration, ...], str | None]:
    raw = spec.get("tolerations", spec.get("toleration"))
    items = blocks(raw)
    if items is UNKNOWN:
        return (), "tolerations unknown until apply"
    out = []
    for t in items:
        if not is_map(t) or any(v is UNKNOWN for v in t.values()):
            return (), "a toleration is unknown until apply"
        out.append(Toleration(str(t.get("key") or ""), str(t.get("operator") or "Equal"),
                              str(t.get("value") or ""), str(t.get("effect") or "")))
    return tuple(out), None


def _selector(raw: Any) -> tuple[tuple[Requirement, ...], str | None]:
    node = block(raw)
    if node is UNKNOWN:
        return (), "nodeSelector unknown until apply"
    if not is_map(node):
        return (), None
    if any(v is UNKNOWN for v in node.values()):
        return (), "a nodeSelector value is unknown until apply"
    return tuple(Requirement(str(k), "In", (str(v),)) for k, v in node.items()), None


_REQUIRED = "required_during_scheduling_ignored_during_execution"


def _affinity_terms(raw: Any) -> tuple[tuple[tuple[Requirement, ...], ...], str | None]:
    node: Any = block(raw)
    for part in ("node_affinity", _REQUIRED):
        if node is UNKNOWN:
            return (), f"affinity unknown until apply ({part})"
        node = block(node.get(part)) if is_map(node) else None
    if node is UNKNOWN:
        return (), "required node affinity unknown until apply"
    if not is_map(node):
        return (), None
    terms = blocks(node.get("node_selector_terms", node.get("node_selector_term")))
    if terms is UNKNOWN:
        return (), "nodeSelectorTerms unknown until apply"
    out = []
    for term in terms:
        exprs = blocks(term.get("match_expressions")) if is_map(term) else UNKNOWN
        if exprs is UNKNOWN:
            return (), "a node selector term is unknown until apply"
        reqs = []
        for e in exprs:
            if not is_map(e) or any(v is UNKNOWN for v in e.values()):
                return (), "a node affinity expression is unknown until apply"
            values = e.get("values")
            vals = tuple(str(v) for v in values) if isinstance(values, list) else ()
            reqs.append(Requirement(str(e.get("key") or ""), str(e.get("operator") or ""), vals))
        out.append(tuple(reqs))
    return tuple(out), None
