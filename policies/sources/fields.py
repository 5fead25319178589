"""The typed inputs rules read, checked as a plan is read: a wrong type is bad input, not unknown.

A rule that finds ``instance_type: 5`` or ``max_size: "inf"`` cannot judge the resource, and
"cannot verify" would let such a plan pass at the default advisory level. No provider writes
those values (Terraform's and Pulumi's schemas type them), so a plan holding them was written
by hand or broken on the way: it is refused with the file, the key as the file spells it and
what was expected (exit 2). Values unknown until apply stay unknown; absent values stay absent.

Checked, per resource kind (normalised snake_case paths):

- instances, launch templates and configurations: ``instance_type`` — a string;
- autoscaling groups: ``min_size``, ``max_size``, ``desired_capacity`` — whole numbers from 0 to
  2,147,483,647 (AWS's Integer); each mixed-instances override's ``instance_type`` (a string) and
  ``weighted_capacity`` (a whole number from 1 to 999, as a number or numeric string; ``""``
  is "not set", as the AWS provider reads back an override without a weight);
- EKS node groups: ``instance_types`` — a list of strings; ``scaling_config``'s sizes as above;
- scaling policies: ``target_tracking_configuration.target_value`` — a finite number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

from policies.model import UNKNOWN, ResourceKind
from policies.sources.reading import fail

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

MAX_INT32: Final = 2**31 - 1
_FLOAT_BOUND: Final = 2**1023  # a constant: 3.11 does not fold a power this large
# Where a message points: normalised key path → the path as the file spells it.
Where = Callable[[str], str]

_SIZES: Final = ("min_size", "max_size", "desired_capacity")
_NODE_SIZES: Final = ("min_size", "max_size", "desired_size")
TYPED: Final = frozenset({  # the kinds check reads: for any other it returns at once
    ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE, ResourceKind.LAUNCH_CONFIGURATION,
    ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP, ResourceKind.SCALING_POLICY,
})
# Read per resource as globals: on 3.11 a member read through its enum class is a Python-level call.
_ASG: Final = ResourceKind.AUTOSCALING_GROUP
_NODE_GROUP: Final = ResourceKind.EKS_NODE_GROUP
_SCALING_POLICY: Final = ResourceKind.SCALING_POLICY


def check(kind: ResourceKind, inputs: Mapping[str, Any] | None, origin: str,
          where: Where) -> None:
    """Raise a one-line InputError for the first wrongly typed input of one side."""
    if kind not in TYPED or not inputs:
        return
    if (kind is _ASG or kind is _SCALING_POLICY) and _plainly_valid(kind, inputs):
        return  # the common case, proved without key paths, generators or a call per value
    if kind is _ASG:
        for key in _SIZES:
            _whole(inputs.get(key), origin, where, key, 0, MAX_INT32)
        for path, item in _overrides(inputs):
            _type_name(item.get("instance_type"), origin, where, f"{path}.instance_type")
            weight = item.get("weighted_capacity")
            if weight != "":
                _whole(weight, origin, where, f"{path}.weighted_capacity", 1, 999)
    elif kind is _NODE_GROUP:
        _type_list(inputs.get("instance_types"), origin, where, "instance_types")
        for path, block in _blocks(inputs, "scaling_config"):
            for key in _NODE_SIZES:
                _whole(block.get(key), origin, where, f"{path}.{key}", 0, MAX_INT32)
    elif kind is _SCALING_POLICY:
        for path, block in _blocks(inputs, "target_tracking_configuration"):
            _finite(block.get("target_value"), origin, where, f"{path}.target_value")
    else:
        name = inputs.get("instance_type")
        if name is not None and name is not UNKNOWN and type(name) is not str:
            _type_name(name, origin, where, "instance_type")


def _plainly_valid(kind: ResourceKind, inputs: Mapping[str, Any]) -> bool:
    """True only if :func:`check` would pass a group's or scaling policy's inputs: their
    values of the plain types (ints in range, strings, finite floats) or unknown or absent.
    False is no verdict: check then reads them as ever, naming the key of a wrong one."""
    get = inputs.get
    if kind is _SCALING_POLICY:
        blocks = get("target_tracking_configuration")
        for block in (blocks,) if type(blocks) is dict else blocks if type(blocks) is list else ():
            if type(block) is dict:
                target = block.get("target_value")
                if not (target is None or target is UNKNOWN or (
                        type(target) is int and -_FLOAT_BOUND <= target <= _FLOAT_BOUND) or (
                        type(target) is float and math.isfinite(target))):
                    return False
        return True
    for key in _SIZES:
        size = get(key)
        if not (size is None or size is UNKNOWN or (type(size) is int and 0 <= size <= MAX_INT32)):
            return False
    mips = get("mixed_instances_policy")
    for mip in (mips,) if type(mips) is dict else mips if type(mips) is list else ():
        if type(mip) is not dict:
            continue
        lts = mip.get("launch_template")
        for lt in (lts,) if type(lts) is dict else lts if type(lts) is list else ():
            if type(lt) is not dict:
                continue
            for key in ("override", "overrides"):
                items = lt.get(key)
                for item in (items,) if type(items) is dict else items if type(items) is list \
                        else ():
                    if type(item) is not dict:
                        continue
                    name = item.get("instance_type")
                    if not (name is None or name is UNKNOWN or type(name) is str):
                        return False
                    weight = item.get("weighted_capacity")
                    if not (weight is None or weight is UNKNOWN or weight == "" or (
                            type(weight) is int and 1 <= weight <= 999)):
                        return False
    return True


def camel_path(path: str) -> str:
    """``mixed_instances_policy.overrides[1].instance_type`` → Pulumi's
    ``mixedInstancesPolicy.overrides[1].instanceType`` (the keys as the preview wrote them)."""
    out = []
    for part in path.split("."):
        name, bracket, rest = part.partition("[")
        head, *tail = name.split("_")
        out.append(head + "".join(w[:1].upper() + w[1:] for w in tail) + bracket + rest)
    return ".".join(out)


def _type_name(value: Any, origin: str, where: Where, path: str) -> None:
    if value is None or value is UNKNOWN or type(value) is str:
        return
    fail(origin, where(path), "an instance type name (a string such as g4dn.xlarge)", value)


def _type_list(value: Any, origin: str, where: Where, path: str) -> None:
    if value is None or value is UNKNOWN:
        return
    if type(value) is not list:
        fail(origin, where(path), "a list of instance type names", value)
    for i, item in enumerate(value):
        _type_name(item, origin, where, f"{path}[{i}]")


def _whole(value: Any, origin: str, where: Where, path: str, low: int, high: int) -> None:
    if value is None or value is UNKNOWN:
        return
    number: float | int | None = None
    if type(value) is int or (
            type(value) is float and math.isfinite(value) and value.is_integer()):
        number = value
    elif type(value) is str and value.strip().isascii() and value.strip().isdigit():
        digits = value.strip()
        number = int(digits) if len(digits) <= 12 else high + 1  # no 5,000-digit int()
    if number is None or not low <= number <= high:
        fail(origin, where(path), f"a whole number from {low:,} to {high:,}", value)


def _finite(value: Any, origin: str, where: Where, path: str) -> None:
    if value is None or value is UNKNOWN:
        return
    ok = False
    if type(value) is int:
        ok = abs(value) <= _FLOAT_BOUND
    elif type(value) is float:
        ok = math.isfinite(value)
    elif type(value) is str:
        try:
            ok = math.isfinite(float(value))
        except ValueError:
            ok = False
    if not ok:
        fail(origin, where(path), "a finite number", value)


def _blocks(inputs: Mapping[str, Any], key: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """A nested block written once: Terraform's ``[{...}]`` (path ``key[0]``) or an object."""
    value = inputs.get(key)
    if type(value) is dict:
        yield key, value
    elif type(value) is list:
        for i, item in enumerate(value):
            if type(item) is dict:
                yield f"{key}[{i}]", item


def _overrides(inputs: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for mip_path, mip in _blocks(inputs, "mixed_instances_policy"):
        for lt_path, lt in _blocks(mip, "launch_template"):
            for key in ("override", "overrides"):
                for path, item in _blocks(lt, key):
                    yield f"{mip_path}.{lt_path}.{path}", item
