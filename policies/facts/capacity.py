"""What a GPU resource can grow to, and whose it is: GPUs and on-demand cost at its maximum size,
and the value of a chargeback tag (team, environment) wherever the resource's source put it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gpupool.catalog import Catalog, InstanceType
from gpupool.record import Frozen
from policies.facts.index import PlanIndex
from policies.facts.instances import override_weights
from policies.facts.tags import group_tags
from policies.facts.values import Maybe, block, blocks, is_map, number
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Capacity(Frozen):
    """GPUs and cost at max size; ``unknown`` says why they cannot be told (None: known)."""

    __slots__ = ("instance_type", "instances", "unknown")

    instance_type: InstanceType | None
    instances: int
    unknown: str | None

    def __init__(
        self,
        instance_type: InstanceType | None = None,
        instances: int = 0,
        unknown: str | None = None,
    ) -> None:
        object.__setattr__(self, "instance_type", instance_type)
        object.__setattr__(self, "instances", instances)
        object.__setattr__(self, "unknown", unknown)

    @property
    def gpus(self) -> float:
        return 0.0 if self.instance_type is None else self.instances * self.instance_type.gpu_count

    @property
    def per_hour(self) -> float | None:
        t = self.instance_type
        return None if t is None or t.price_per_hour is None else self.instances * t.price_per_hour


NOT_GPU = Capacity()


def gpu_capacity(change: ResourceChange, index: PlanIndex, catalog: Catalog) -> Capacity:
    """An instance is one; a group or node group is its max size (instances, by the weight of
    its first GPU type, the type on-demand capacity launches first)."""
    types = index.instance_types(change)
    if change.kind is ResourceKind.INSTANCE and not types.known and not types.unknown:
        link = index.launch_templates(change)
        if link.targets:
            types = index.own_types(link.targets[0])
        elif link.unknown:
            return Capacity(unknown=link.unknown)
    rows = [r for r in (catalog.get(t) for t in types.known) if r is not None]
    if not rows:
        return Capacity(unknown=types.unknown) if types.unknown else NOT_GPU
    row = rows[0]
    if change.kind is ResourceKind.INSTANCE:
        return Capacity(row, 1)
    inputs = change.after
    if change.kind is ResourceKind.EKS_NODE_GROUP:
        scaling = block(inputs.get("scaling_config"))
        size = UNKNOWN if scaling is UNKNOWN else (
            None if scaling is None else number(scaling.get("max_size")))
    else:
        size = number(inputs.get("max_size"))
    if size is UNKNOWN:
        return Capacity(row, 0, "max size unknown until apply")
    if size is None or not math.isfinite(size) or size < 0:
        return Capacity(row, 0, "max size not set")
    weights = override_weights(inputs) if change.kind is ResourceKind.AUTOSCALING_GROUP else {}
    return Capacity(row, math.ceil(size / weights.get(row.instance_type, 1.0)))


def tag_value(change: ResourceChange, key: str, index: PlanIndex) -> str | Maybe | None:
    """The value of tag ``key`` on the resource or on the instances it launches; UNKNOWN when the
    tags are unknown until apply, None when no tag says."""
    found = _map_value(change.after.get("tags"), key)
    if found is None:
        found = _map_value(change.after.get("tags_all"), key)
    if found is None and change.kind is ResourceKind.EKS_NODE_GROUP:
        found = _map_value(change.after.get("labels"), key)
    if found is None and change.kind is ResourceKind.AUTOSCALING_GROUP:
        tags = group_tags(change.after)
        if tags is UNKNOWN:
            return UNKNOWN
        found = next((_text(t.value) for t in tags if t.key == key), None)
    if found is None:
        link = index.launch_templates(change)
        for template in link.targets:
            found = _instance_tag(template.after, key)
            if found is not None:
                break
        if found is None and link.unknown:
            return UNKNOWN
    return found


def _text(value: Any) -> str | Maybe | None:
    if value is UNKNOWN:
        return UNKNOWN
    return value.strip() if isinstance(value, str) and value.strip() else None


def _map_value(tags: Any, key: str) -> str | Maybe | None:
    if tags is UNKNOWN:
        return UNKNOWN
    return _text(tags.get(key)) if is_map(tags) else None


def _instance_tag(template: Mapping[str, Any], key: str) -> str | Maybe | None:
    specs = blocks(template.get("tag_specifications"))
    if specs is UNKNOWN:
        return UNKNOWN
    for spec in specs:
        if is_map(spec) and spec.get("resource_type") == "instance":
            found = _map_value(spec.get("tags"), key)
            if found is not None:
                return found
    return _map_value(template.get("tags"), key)
