"""Tags on a resource, on the instances a launch template starts, and on an autoscaling group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpupool.record import Frozen
from policies.facts.values import Maybe, blocks, flag, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any


class Tags(Frozen):
    """Tag keys set on a resource (with a non-empty or unknown value)."""

    __slots__ = ("keys", "incomplete")

    keys: frozenset[str]
    incomplete: bool  # part of the tags is unknown: a missing key may still be set

    def __init__(self, keys: frozenset[str], incomplete: bool = False) -> None:
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "incomplete", incomplete)

    def missing(self, required: Iterable[str]) -> list[str]:
        return [k for k in required if k not in self.keys]


def _tag_keys(value: Any) -> tuple[set[str], bool]:
    if value is UNKNOWN:
        return set(), True
    if not is_map(value):
        return set(), False
    keys = {str(k) for k, v in value.items() if v is UNKNOWN or (v is not None and v != "")}
    return keys, False


def resource_tags(inputs: Mapping[str, Any]) -> Tags:
    """``tags`` plus ``tags_all`` (Terraform's merge with the provider's default_tags)."""
    keys, incomplete = _tag_keys(inputs.get("tags"))
    more, unknown_all = _tag_keys(inputs.get("tags_all"))
    return Tags(frozenset(keys | more), incomplete or unknown_all)


def tags_set(inputs: Mapping[str, Any], required: Iterable[str]) -> bool:
    """True when every ``required`` key is set in ``tags`` or ``tags_all``: then
    ``resource_tags(inputs).missing(required)`` is empty, proven by one lookup per key instead
    of a set of every tag made per resource. False is no verdict: read :func:`resource_tags`."""
    tags, tags_all = inputs.get("tags"), inputs.get("tags_all")
    tags = tags if is_map(tags) else _NO_TAGS
    tags_all = tags_all if is_map(tags_all) else _NO_TAGS
    for k in required:
        v = tags.get(k)
        if v is UNKNOWN or (v is not None and v != ""):
            continue
        v = tags_all.get(k)
        if v is UNKNOWN or (v is not None and v != ""):
            continue
        return False  # (or set under a key that is not a string: the full reading says)
    return True


_NO_TAGS: Mapping[str, Any] = {}


def launch_tags(inputs: Mapping[str, Any]) -> Tags:
    """Tags a launch template puts on the instances it launches (``tag_specifications``)."""
    specs = blocks(inputs.get("tag_specifications"))
    if specs is UNKNOWN:
        return Tags(frozenset(), True)
    keys: set[str] = set()
    incomplete = False
    for spec in specs:
        if spec is UNKNOWN:
            incomplete = True
            continue
        if not is_map(spec):
            continue
        rtype = spec.get("resource_type")
        if rtype is UNKNOWN:
            incomplete = True
        elif rtype != "instance":
            continue
        found, unknown = _tag_keys(spec.get("tags"))
        if rtype == "instance":
            keys |= found
        incomplete = incomplete or unknown
    return Tags(frozenset(keys), incomplete)


class GroupTag(Frozen):
    __slots__ = ("key", "value", "propagate_at_launch")
    key: str
    value: Any
    propagate_at_launch: bool | Maybe

    def __init__(self, key: str, value: Any, propagate_at_launch: bool | Maybe) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "propagate_at_launch", propagate_at_launch)


def group_tags(inputs: Mapping[str, Any]) -> list[GroupTag] | Maybe:
    """An ASG's tags: Terraform ``tag`` blocks, Pulumi's (and old Terraform's) ``tags`` list."""
    out: list[GroupTag] = []
    for key in ("tag", "tags"):
        value = inputs.get(key)
        if key == "tags" and is_map(value):
            continue  # not the ASG shape
        items = blocks(value)
        if items is UNKNOWN:
            return UNKNOWN
        for item in items:
            if item is UNKNOWN:
                return UNKNOWN
            if not is_map(item):
                continue
            name = item.get("key")
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str) and name:
                out.append(GroupTag(name, item.get("value"), flag(item.get("propagate_at_launch"))))
    return out


def group_propagates(inputs: Mapping[str, Any], required: Iterable[str]) -> bool:
    """True when :func:`group_tags` is known and every ``required`` key is on a tag propagated
    at launch: then nothing is missing or unpropagated, read without a :class:`GroupTag` per
    tag. False is no verdict: read :func:`group_tags`."""
    wanted = set(required)
    propagated: set[str] = set()
    for key in ("tag", "tags"):
        value = inputs.get(key)
        if key == "tags" and is_map(value):
            continue  # not the ASG shape
        items = blocks(value)
        if items is UNKNOWN:
            return False
        for item in items:
            if item is UNKNOWN:
                return False
            if not is_map(item):
                continue
            name = item.get("key")
            if name is UNKNOWN:
                return False
            if isinstance(name, str) and name and name in wanted:
                p = item.get("propagate_at_launch")
                if p is True or flag(p) is True:
                    propagated.add(name)
    return len(propagated) == len(wanted)
