"""The EBS volumes a resource declares and whether each is encrypted.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpupool.record import Frozen
from policies.facts.values import Maybe, Side, block, blocks, flag, inputs_of, is_map, text
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

# Kinds tested per resource, bound once: on Python 3.11 reading an enum member through its class
# is a Python-level call (EnumType defines __getattr__), ~10x reading a global.
_LAUNCH_TEMPLATE, _EBS_VOLUME = ResourceKind.LAUNCH_TEMPLATE, ResourceKind.EBS_VOLUME


class Volume(Frozen):
    __slots__ = ("label", "encrypted", "declared")
    label: str  # "root volume", "EBS volume /dev/sdf"
    encrypted: bool | Maybe
    declared: bool  # False: nothing set, the volume comes from the AMI as it is

    def __init__(self, label: str, encrypted: bool | Maybe, declared: bool = True) -> None:
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "encrypted", encrypted)
        object.__setattr__(self, "declared", declared)


def volumes(change: ResourceChange, side: Side = "new") -> list[Volume]:
    """The EBS volumes a resource declares, each with its encryption (or UNKNOWN).

    An instance or launch configuration without ``root_block_device`` gets an undeclared root
    volume (its encryption is the AMI snapshot's: not encrypted as far as the plan can tell); a
    launch template without ``block_device_mappings`` likewise.
    """
    inputs = inputs_of(change, side)
    kind = change.kind
    if kind is _LAUNCH_TEMPLATE:
        return _template_volumes(inputs)
    if kind is _EBS_VOLUME:
        encrypted = inputs.get("encrypted")
        if encrypted is None:  # not set: the account's default for the region decides
            return [Volume("EBS volume", False, declared=False)]
        return [Volume("EBS volume", flag(encrypted))]
    out: list[Volume] = []
    root = block(inputs.get("root_block_device"))
    if root is UNKNOWN:
        out.append(Volume("root volume", UNKNOWN))
    elif root is None:
        out.append(Volume("root volume", False, declared=False))
    else:
        out.append(Volume("root volume", flag(root.get("encrypted"))))
    for key in ("ebs_block_device", "ebs_block_devices"):
        items = blocks(inputs.get(key))
        if items is UNKNOWN:
            out.append(Volume("EBS volumes", UNKNOWN))
            continue
        for item in items:
            if item is UNKNOWN:
                out.append(Volume("an EBS volume", UNKNOWN))
            elif is_map(item):
                out.append(Volume(_device_label(item), flag(item.get("encrypted"))))
    return out


def all_encrypted(change: ResourceChange, side: Side = "new") -> bool:
    """True when every volume :func:`volumes` finds is encrypted, an instance's root declared:
    then a rule has nothing to say of its storage, proven without a :class:`Volume` (or its
    label) made per volume. False is no verdict: read :func:`volumes`."""
    inputs = inputs_of(change, side)
    kind = change.kind
    if kind is _LAUNCH_TEMPLATE:
        items = blocks(inputs.get("block_device_mappings"))
        if items is UNKNOWN or not items:
            return False
        for item in items:
            if item is UNKNOWN:
                return False
            if not is_map(item):
                continue
            ebs = block(item.get("ebs"))
            if ebs is UNKNOWN or (ebs is not None and flag(ebs.get("encrypted")) is not True):
                return False
        return True
    if kind is _EBS_VOLUME:
        encrypted = inputs.get("encrypted")
        return encrypted is not None and flag(encrypted) is True
    root = block(inputs.get("root_block_device"))
    if root is UNKNOWN or root is None or flag(root.get("encrypted")) is not True:
        return False
    for key in ("ebs_block_device", "ebs_block_devices"):
        items = blocks(inputs.get(key))
        if items is UNKNOWN:
            return False
        for item in items:
            if item is UNKNOWN or (is_map(item) and flag(item.get("encrypted")) is not True):
                return False
    return True


def _template_volumes(inputs: Mapping[str, Any]) -> list[Volume]:
    items = blocks(inputs.get("block_device_mappings"))
    if items is UNKNOWN:
        return [Volume("block device mappings", UNKNOWN)]
    if not items:
        return [Volume("root volume", False, declared=False)]
    out: list[Volume] = []
    for item in items:
        if item is UNKNOWN:
            out.append(Volume("a block device mapping", UNKNOWN))
            continue
        if not is_map(item):
            continue
        ebs = block(item.get("ebs"))
        if ebs is UNKNOWN:
            out.append(Volume(_device_label(item), UNKNOWN))
        elif ebs is not None:  # None: instance store (virtual_name) or no_device
            out.append(Volume(_device_label(item), flag(ebs.get("encrypted"))))
    return out


def _device_label(item: Mapping[str, Any]) -> str:
    name = text(item.get("device_name"))
    return f"EBS volume {name}" if isinstance(name, str) else "an EBS volume"
