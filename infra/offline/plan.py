"""The offline plan: the resources a stack would create, its outputs and its GPU envelope.

``OfflinePlan.to_document()`` is the JSON of ``gpupool plan --format json`` (kind
``gpupool-plan``, version 1) that ``policies.sources`` reads; keep its keys stable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpupool.envelope import StackEnvelope

PLAN_KIND: Final = "gpupool-plan"
PLAN_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class PlannedResource:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: Mapping[str, Any]
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # how long the engine waits for the resource (pulumi-kubernetes: its await logic)
    custom_timeouts: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": dict(self.inputs),
        }
        if self.property_dependencies:
            # input key → URNs it was computed from (e.g. a scaling policy's group name)
            doc["propertyDependencies"] = {
                k: list(v) for k, v in self.property_dependencies.items()
            }
        if self.custom_timeouts:
            doc["customTimeouts"] = dict(self.custom_timeouts)
        return doc


@dataclass(frozen=True, slots=True)
class OfflinePlan:
    stack: str
    project: str
    region: str
    resources: tuple[PlannedResource, ...]  # parents before children, siblings by type, name
    outputs: Mapping[str, Any]
    envelope: StackEnvelope
    fixture: str  # where the data-source answers came from
    diagnostics: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()  # answers that are placeholders pulumi up resolves

    def by_urn(self) -> dict[str, PlannedResource]:
        return {r.urn: r for r in self.resources}

    def of_type(self, type_token: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_token]

    def children(self, urn: str | None) -> list[PlannedResource]:
        return [r for r in self.resources if r.parent == urn]

    def ancestors(self, resource: PlannedResource) -> Iterator[PlannedResource]:
        index = self.by_urn()
        parent = resource.parent
        while parent is not None:
            node = index[parent]
            yield node
            parent = node.parent

    def to_document(self) -> dict[str, Any]:
        return {
            "kind": PLAN_KIND,
            "version": PLAN_VERSION,
            "stack": self.stack,
            "project": self.project,
            "region": self.region,
            "resources": [r.to_dict() for r in self.resources],
            "outputs": dict(self.outputs),
            "envelope": self.envelope.to_dict(),
            "offline": {"fixture": self.fixture, "diagnostics": list(self.diagnostics),
                        "placeholders": list(self.placeholders)},
        }


def tree_order(resources: list[PlannedResource]) -> tuple[PlannedResource, ...]:
    """Depth first from the roots; siblings by (type, name) so every run orders alike."""
    kids: dict[str | None, list[PlannedResource]] = {}
    urns = {r.urn for r in resources}
    for r in resources:
        kids.setdefault(r.parent if r.parent in urns else None, []).append(r)
    out: list[PlannedResource] = []

    def walk(parent: str | None) -> None:
        for r in sorted(kids.get(parent, []), key=lambda r: (r.type, r.name)):
            out.append(r)
            walk(r.urn)

    walk(None)
    return tuple(out)
