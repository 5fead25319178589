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
    if type(tags) is not dict:  # (dicts, what sources make: no is_map() call)
        tags = tags if is_map(tags) else _NO_TAGS
    if type(tags_all) is not dict:
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


def group_tag_items(inputs: Mapping[str, Any]) -> list[Mapping[str, Any]] | Maybe:
    """An ASG's tag blocks, in order: Terraform ``tag`` blocks, then Pulumi's (and old
    Terraform's) ``tags`` list; only those whose ``key`` is a non-empty string are tags. The one
    walk :func:`group_tags`, :func:`group_propagates` and the role tags read. UNKNOWN when the
    list, a tag or its key is unknown until apply: then no verdict can be given.

    A list, not a generator: resuming one per tag cost more than the walk it shared (ASGs are
    walked twice a check); lists and dicts, the shapes sources make, skip the :func:`blocks`
    and :func:`is_map` calls."""
    out: list[Mapping[str, Any]] = []
    for key in ("tag", "tags"):
        value = inputs.get(key)
        if value is None:
            continue
        if type(value) is list:  # the shape sources make: no blocks() call
            items = value
        elif key == "tags" and is_map(value):
            continue  # not the ASG shape
        else:
            items = blocks(value)
        if items is UNKNOWN:
            return UNKNOWN
        for item in items:
            if item is UNKNOWN:
                return UNKNOWN
            if type(item) is not dict and not is_map(item):
                continue
            name = item.get("key")
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str) and name:
                out.append(item)
    return out


def group_tags(inputs: Mapping[str, Any]) -> list[GroupTag] | Maybe:
    """An ASG's tags (:func:`group_tag_items`); UNKNOWN when they cannot all be read."""
    items = group_tag_items(inputs)
    if items is UNKNOWN:
        return UNKNOWN
    return [GroupTag(item["key"], item.get("value"), flag(item.get("propagate_at_launch")))
            for item in items]


def group_propagates(inputs: Mapping[str, Any], required: Iterable[str]) -> bool:
    """True when :func:`group_tags` is known and every ``required`` key is on a tag propagated
    at launch: then nothing is missing or unpropagated, read without a :class:`GroupTag` per
    tag. False is no verdict (an unknown tag among them too): read :func:`group_tags`."""
    items = group_tag_items(inputs)
    if items is UNKNOWN:
        return False
    wanted = set(required)
    propagated: set[str] = set()
    for item in items:
        name = item["key"]
        if name in wanted:
            p = item.get("propagate_at_launch")
            if p is True or flag(p) is True:
                propagated.add(name)
    return len(propagated) == len(wanted)
