"""gpupool offline plans (``gpupool plan STACK --format json``) → Plan.

The document is ``{"kind": "gpupool-plan", "version": 1, "stack", "project", "resources":
[{"urn", "type", "name", "parent", "custom", "inputs"}], "outputs", "envelope"}``; inputs are
Pulumi camelCase as the program passed them. One offline plan says what a stack *would* create,
so every resource is a CREATE; :mod:`policies.sources.diff` compares two of them for old and new
values. Component resources (``custom: false``) are no changes of their own, but their
children's ``parent`` still names them.
"""

from __future__ import annotations

from collections.abc import Mapping

import policies.sources.fields as fields
from gpupool.record import Frozen
from policies.model import ChangeKind, Plan, ResourceChange, resource_kind
from policies.sources.fields import camel_path
from policies.sources.pulumi_values import (
    dependency_references,
    inputs,
    is_engine_resource,
    parent_link,
    urn_type_name,
)
from policies.sources.reading import fail, want_list, want_obj, want_str

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

SOURCE: Final = "gpupool-plan"
KIND: Final = "gpupool-plan"
VERSION: Final = 1


class OfflineResource(Frozen):
    __slots__ = ("urn", "type", "name", "parent", "inputs", "references")
    urn: str
    type: str
    name: str
    parent: str | None
    inputs: dict[str, Any]  # normalised (snake_case, UNKNOWN)
    references: dict[str, str]

    def __init__(
        self,
        urn: str,
        type: str,
        name: str,
        parent: str | None,
        inputs: dict[str, Any],
        references: dict[str, str],
    ) -> None:
        object.__setattr__(self, "urn", urn)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "references", references)


class OfflinePlan(Frozen):
    __slots__ = ("stack", "project", "resources", "meta")
    stack: str
    project: str | None
    resources: tuple[OfflineResource, ...]  # custom resources only, in plan order
    meta: Mapping[str, Any]

    def __init__(
        self,
        stack: str,
        project: str | None,
        resources: tuple[OfflineResource, ...],
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "stack", stack)
        object.__setattr__(self, "project", project)
        object.__setattr__(self, "resources", resources)
        object.__setattr__(self, "meta", {} if meta is None else meta)


def read(doc: Any, origin: str) -> OfflinePlan:
    """Validate an offline plan document; every shape problem is a one-line InputError."""
    plan = want_obj(doc, origin, "")
    if plan.get("kind") != KIND:
        fail(origin, "kind", f'"{KIND}"', plan.get("kind"))
    version = plan.get("version")
    if type(version) is not int or version != VERSION:
        fail(origin, "version", f"{VERSION} (the offline plan format this gpupool reads)", version)
    stack = want_str(plan.get("stack"), origin, "stack")
    project = plan.get("project")
    if project is not None:
        want_str(project, origin, "project")
    resources: list[OfflineResource] = []
    seen: set[str] = set()
    for i, r in enumerate(want_list(plan.get("resources"), origin, "resources")):
        res = _resource(r, i, origin)
        if res is None:
            continue
        if res.urn in seen:
            fail(origin, f"resources[{i}].urn", "each URN once", res.urn)
        seen.add(res.urn)
        resources.append(res)
    meta = {k: plan[k] for k in ("stack", "project", "region", "envelope", "outputs") if k in plan}
    return OfflinePlan(stack=stack, project=project, resources=tuple(resources), meta=meta)


def _resource(r: Any, i: int, origin: str) -> OfflineResource | None:
    where = f"resources[{i}]"
    res = want_obj(r, origin, where)
    urn = want_str(res.get("urn"), origin, f"{where}.urn")
    parsed = urn_type_name(urn)
    if parsed is None:
        fail(origin, f"{where}.urn", "a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)", urn)
    rtype = want_str(res.get("type", parsed[0]), origin, f"{where}.type")
    name = want_str(res.get("name", parsed[1]), origin, f"{where}.name")
    custom = res.get("custom", True)
    if type(custom) is not bool:
        fail(origin, f"{where}.custom", "a boolean", custom)
    parent = parent_link(res.get("parent"), origin, f"{where}.parent")
    raw = res.get("inputs")
    if raw is not None:
        want_obj(raw, origin, f"{where}.inputs")
    references = dependency_references(
        res.get("propertyDependencies"), origin, f"{where}.propertyDependencies"
    )
    if not custom or is_engine_resource(rtype):
        return None
    normalised = inputs(raw or {})
    fields.check(resource_kind(rtype), normalised, origin,
                 lambda path: f"{where}.inputs.{camel_path(path)}")
    return OfflineResource(urn, rtype, name, parent, normalised, references)


def change(res: OfflineResource, kind: ChangeKind, old: dict[str, Any] | None) -> ResourceChange:
    """The ResourceChange of an offline resource (new inputs from it, old as given)."""
    return ResourceChange(
        address=res.urn,
        type=res.type,
        name=res.name,
        change=kind,
        new=res.inputs,
        old=old,
        source=SOURCE,
        kind=resource_kind(res.type),
        references=res.references,
        parent=res.parent,
    )


def parse(doc: dict[str, Any], origin: str) -> Plan:
    """A single offline plan: everything in it would be created."""
    plan = read(doc, origin)
    changes = tuple(change(r, ChangeKind.CREATE, None) for r in plan.resources)
    return Plan(source=SOURCE, origin=origin, changes=changes, meta=plan.meta)
