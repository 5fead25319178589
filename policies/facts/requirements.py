"""Attribute-based instance type selection (``instance_requirements``), judged against the GPU
catalog: which GPU types an ASG override or a launch template can launch.

EC2 picks every current type whose attributes meet the requirements. Where the requirements
name no accelerator, EC2's default admits accelerated types too (AcceleratorCount: "Default: no
minimum or maximum limits"; "to exclude accelerator-enabled instance types, set Max to 0"), so a
CPU-sized group that does not set ``accelerator_count { max = 0 }`` can launch g4dn.2xlarge.

What is evaluated, per catalog type: vCPUs, memory, memory per vCPU, accelerator count, total
accelerator memory, accelerator type (every catalog type carries a GPU), manufacturer and name
(the catalog's GPU model, as EC2 spells it: ``t4``, ``a10g``, ``radeon-pro-v520``), the network
bandwidth range (against baseline … burst: a type matches when the ranges meet), bare metal
(excluded unless asked for, as EC2's default), burstable performance (no GPU type is burstable),
CPU manufacturer (arm64 types are Graviton, ``amazon-web-services``; an x86 type matches ``intel``
or ``amd``, which the catalog does not tell apart), and allowed/excluded type patterns (``*``
wildcards). Keys the catalog cannot judge (generations, local storage, EBS bandwidth, interfaces,
hibernation, price protection) exclude nothing: the answer is what the requirements *can*
launch, a superset, never fewer types than EC2 might pick.

Terraform's provider writes an unset ``max`` as 0 (``memory_mib { min = 16384 }`` plans as
``{"max": 0, "min": 16384}``) and sends a maximum only when it is not below the minimum, so
``{"min": 1, "max": 0}`` means "at least one" and ``{"min": 0, "max": 0}`` "none"; Pulumi leaves
an unset ``max`` out. Both read the same here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.model import names_gpu_family
from gpupool.record import Frozen
from policies.facts.values import block, is_map, number
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

# Accelerator names EC2 knows for GPUs the catalog has no row for (previous generations), and
# for accelerators that are not GPUs: naming them selects no catalog type.
UNCATALOGUED_GPU_NAMES: Final = frozenset({"k80", "m60", "k520"})
NOT_GPU_NAMES: Final = frozenset({"inferentia", "vu9p"})

Range = tuple[float, float | None]  # min (0 when not set), max (None: no maximum)

_RANGES: Final[dict[str, Callable[[InstanceType], float]]] = {
    "vcpu_count": lambda t: t.vcpus,
    "memory_mib": lambda t: t.memory_mib,
    "memory_gib_per_vcpu": lambda t: t.memory_mib / 1024 / max(t.vcpus, 1),
    # A fractional GPU (g6f.large: 1/8 L4) is one accelerator device to EC2.
    "accelerator_count": lambda t: max(t.gpu_count, 1.0),
    "accelerator_total_memory_mib": lambda t: t.gpu_count * t.gpu_memory_mib,
}
_LISTS: Final = ("accelerator_types", "accelerator_manufacturers", "accelerator_names",
                 "allowed_instance_types", "excluded_instance_types", "cpu_manufacturers")
_CHOICES: Final = ("bare_metal", "burstable_performance")


class Requirements(Frozen):
    """The modelled keys of one ``instance_requirements`` block, hashable for caching."""

    __slots__ = ("ranges", "network", "lists", "bare_metal", "burstable")

    ranges: tuple[tuple[str, Range], ...]
    network: Range | None
    lists: tuple[tuple[str, tuple[str, ...]], ...]
    bare_metal: str  # EC2's default
    burstable: str

    def __init__(
        self,
        ranges: tuple[tuple[str, Range], ...] = (),
        network: Range | None = None,
        lists: tuple[tuple[str, tuple[str, ...]], ...] = (),
        bare_metal: str = "excluded",
        burstable: str = "excluded",
    ) -> None:
        object.__setattr__(self, "ranges", ranges)
        object.__setattr__(self, "network", network)
        object.__setattr__(self, "lists", lists)
        object.__setattr__(self, "bare_metal", bare_metal)
        object.__setattr__(self, "burstable", burstable)

    def listed(self, key: str) -> tuple[str, ...] | None:
        return next((v for k, v in self.lists if k == key), None)

    def range(self, key: str) -> Range | None:
        return next((v for k, v in self.ranges if k == key), None)


class Selection(Frozen):
    """What one ``instance_requirements`` block can launch, as far as the catalog tells."""

    __slots__ = ("path", "types", "asks_for_gpus", "unknown", "uncatalogued")

    path: str  # snake_case key path of the block, for messages
    types: tuple[str, ...]  # catalog GPU types it can launch
    asks_for_gpus: bool  # only accelerated types: a GPU selection, not a CPU one
    unknown: str | None  # why it cannot be judged
    uncatalogued: tuple[str, ...]  # GPU names it asks for that the catalog has no row for

    def __init__(
        self,
        path: str,
        types: tuple[str, ...] = (),
        asks_for_gpus: bool = False,
        unknown: str | None = None,
        uncatalogued: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "types", types)
        object.__setattr__(self, "asks_for_gpus", asks_for_gpus)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "uncatalogued", uncatalogued)


def read(value: Any, path: str) -> Requirements | str | None:
    """The block at ``path`` as :class:`Requirements`; a reason string when a modelled key is
    unknown until apply or oddly written; None when there is no block."""
    req = block(value)
    if req is UNKNOWN:
        return f"{path} unknown until apply"
    if req is None or not req:
        return None
    ranges: list[tuple[str, Range]] = []
    for key in (*_RANGES, "network_bandwidth_gbps"):
        got = _range(req.get(key), f"{path}.{key}")
        if isinstance(got, str):
            return got
        if got is not None:
            ranges.append((key, got))
    lists: list[tuple[str, tuple[str, ...]]] = []
    for key in _LISTS:
        got_list = _strings(req.get(key), f"{path}.{key}")
        if isinstance(got_list, str):
            return got_list
        if got_list:
            lists.append((key, got_list))
    choices: dict[str, str] = {}
    for key in _CHOICES:
        raw = req.get(key)
        if raw is UNKNOWN:
            return f"{path}.{key} unknown until apply"
        if isinstance(raw, str) and raw:
            choices[key] = raw.strip().lower()
        elif raw not in (None, ""):
            return f"{path}.{key} has an unexpected value {str(raw)[:40]!r}"
    network = next((r for k, r in ranges if k == "network_bandwidth_gbps"), None)
    return Requirements(
        ranges=tuple((k, r) for k, r in ranges if k != "network_bandwidth_gbps"),
        network=network, lists=tuple(lists),
        bare_metal=choices.get("bare_metal", "excluded"),
        burstable=choices.get("burstable_performance", "excluded"),
    )


def select(value: Any, path: str, catalog: Catalog) -> Selection | None:
    """The GPU types an ``instance_requirements`` value can launch; None when there is none."""
    req = read(value, path)
    if req is None:
        return None
    if isinstance(req, str):
        return Selection(path, unknown=req)
    types, uncatalogued = _evaluate(catalog, req)
    return Selection(path, types, asks_for_gpus(req), None, uncatalogued)


def asks_for_gpus(req: Requirements) -> bool:
    """Only accelerated types: a minimum accelerator count or memory, accelerator types, names
    or manufacturers, or allowed types that all name GPU families."""
    count, memory = req.range("accelerator_count"), req.range("accelerator_total_memory_mib")
    if (count is not None and count[0] >= 1) or (memory is not None and memory[0] >= 1):
        return True
    if any(req.listed(k) for k in ("accelerator_types", "accelerator_names",
                                   "accelerator_manufacturers")):
        return True
    allowed = req.listed("allowed_instance_types")
    return bool(allowed) and all(names_gpu_family(p.lower()) for p in allowed)


@lru_cache(maxsize=512)
def _evaluate(catalog: Catalog, req: Requirements) -> tuple[tuple[str, ...], tuple[str, ...]]:
    names = req.listed("accelerator_names")
    uncatalogued = tuple(sorted(n for n in names or () if n in UNCATALOGUED_GPU_NAMES
                                or (n not in NOT_GPU_NAMES and not _named_in(catalog, n))))
    return tuple(t.instance_type for t in catalog if _admits(req, t)), uncatalogued


def _named_in(catalog: Catalog, name: str) -> bool:
    return any(accelerator_name(t) == name for t in catalog)


def accelerator_name(t: InstanceType) -> str:
    """The catalog's GPU model as EC2's AcceleratorNames spell it (T4 → t4)."""
    return t.gpu_model.lower().replace(" ", "-")


def _admits(req: Requirements, t: InstanceType) -> bool:
    for key, (lo, hi) in req.ranges:
        have = _RANGES[key](t)
        if have < lo or (hi is not None and have > hi):
            return False
    if req.network is not None:
        lo, hi = req.network
        if t.network_burst_gbps < lo or (hi is not None and t.network_baseline_gbps > hi):
            return False
    metal = t.size == "metal" or t.size.startswith("metal-")
    if (req.bare_metal == "excluded" and metal) or (req.bare_metal == "required" and not metal):
        return False
    if req.burstable == "required":  # no GPU type is burstable (T2, T3, T4g are CPU types)
        return False
    return all(_list_admits(key, values, t) for key, values in req.lists)


def _list_admits(key: str, values: tuple[str, ...], t: InstanceType) -> bool:
    if key == "accelerator_types":
        return "gpu" in values
    if key == "accelerator_manufacturers":
        return t.gpu_maker.lower() in values
    if key == "accelerator_names":
        return accelerator_name(t) in values
    if key == "cpu_manufacturers":
        if t.arch == "arm64":
            return "amazon-web-services" in values
        return "intel" in values or "amd" in values  # which one, the catalog does not record
    if key == "allowed_instance_types":  # matched loosely (case): never fewer types
        return any(_pattern(p.lower()).fullmatch(t.instance_type) for p in values)
    if key == "excluded_instance_types":  # matched as written: never more types excluded
        return not any(_pattern(p).fullmatch(t.instance_type) for p in values)
    return True


@lru_cache(maxsize=1024)
def _pattern(text: str) -> re.Pattern[str]:
    """EC2's type patterns: ``*`` matches any run of characters, nothing else is special."""
    return re.compile(".*".join(re.escape(part) for part in text.split("*")))


def _range(value: Any, path: str) -> Range | str | None:
    item = block(value)
    if item is UNKNOWN:
        return f"{path} unknown until apply"
    if item is None:
        return None
    raw_lo, raw_hi = item.get("min"), item.get("max")
    if raw_lo is UNKNOWN or raw_hi is UNKNOWN:
        return f"{path} unknown until apply"
    lo = number(raw_lo) if raw_lo is not None else 0.0
    hi = number(raw_hi) if raw_hi is not None else None
    if (raw_lo is not None and not isinstance(lo, float)) or (
            raw_hi is not None and not isinstance(hi, float)):
        return f"{path} has an unexpected value {str(dict(item))[:60]}"
    assert isinstance(lo, float)
    # Terraform's provider sends the maximum only when it is not below the minimum (an unset
    # max is 0 in its plans); Pulumi's programs go through the same provider.
    return lo, (hi if isinstance(hi, float) and hi >= lo else None)


def _strings(value: Any, path: str) -> tuple[str, ...] | str:
    if value is UNKNOWN:
        return f"{path} unknown until apply"
    if value is None:
        return ()
    if not isinstance(value, list | tuple | set | frozenset) or is_map(value):
        return f"{path} has an unexpected value {str(value)[:40]!r}"
    out: list[str] = []
    for item in value:
        if item is UNKNOWN:
            return f"{path} unknown until apply"
        if not isinstance(item, str):
            return f"{path} has an unexpected value {str(item)[:40]!r}"
        if item.strip():
            out.append(item.strip())
    # Names and manufacturers are EC2 enum values (lowercase); patterns keep their case.
    if not path.endswith("instance_types"):
        out = [v.lower() for v in out]
    return tuple(dict.fromkeys(out))


__all__ = ["Requirements", "Selection", "accelerator_name", "asks_for_gpus", "read", "select"]
