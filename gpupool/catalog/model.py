"""Catalog rows and the questions the rest of the kit asks of them.

The data file (``data/gpu-instance-types.json``) is written by ``gpupool catalog refresh`` from
EC2 DescribeInstanceTypes, the recorded supplement and the recorded prices; nothing here is typed
by hand. Rows carry us-east-1 prices (the catalog's price region); ``load_catalog(region=R)``
gives the same rows priced for region R from ``data/prices.json``.
"""

from __future__ import annotations

import json
import os
from functools import cache

from gpupool.record import Frozen, fields, replace

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

    from gpupool.catalog.prices import PriceTable

DATA_FILE = "gpu-instance-types.json"
HOURS_PER_MONTH = 730.0  # AWS's own convention for monthly estimates


def names_gpu_family(text: str) -> bool:
    r"""``re.match(r"(p|g|gr)\d", text)``: p, g or gr and a generation digit (P2..P6e, G2..G7e
    and Gr6 all carry GPUs), read without compiling a pattern at import (0.3 M instructions)."""
    return ((text[:1] in ("p", "g") and text[1:2].isdecimal())
            or (text[:2] == "gr" and text[2:3].isdecimal()))


def canonical_instance_type(name: str) -> str:
    """How EC2 names types: lowercase, no surrounding space (``" G4DN.XLARGE "`` → g4dn.xlarge).

    EC2 takes InstanceType as one of its listed lowercase values and refuses any other spelling
    (InvalidParameterValue); callers use this to judge what a mistyped value was meant to be,
    and say that AWS will refuse it as written.
    """
    return name.strip().lower()


def family_of(instance_type: str) -> str:
    return canonical_instance_type(instance_type).split(".", 1)[0]


class GpuKey(tuple[str, int, str]):
    """What makes two GPUs interchangeable: model, memory per GPU and host architecture.

    Memory is part of the key because an A100 40 GB (p4d) and an A100 80 GB (p4de) are not the
    same accelerator, and a fractional L4 slice (g6f) is not a whole L4.

    A named tuple written out (``typing.NamedTuple`` would import typing and compile its
    ``__new__`` at every start): the same tuple, fields, repr and pickling.
    """

    __slots__ = ()
    _fields = ("model", "memory_mib", "arch")

    def __new__(cls, model: str, memory_mib: int, arch: str) -> GpuKey:
        return tuple.__new__(cls, (model, memory_mib, arch))

    def __getnewargs__(self) -> tuple[str, int, str]:
        return (self[0], self[1], self[2])

    def __repr__(self) -> str:
        return f"GpuKey(model={self[0]!r}, memory_mib={self[1]!r}, arch={self[2]!r})"

    @property
    def model(self) -> str:
        return self[0]

    @property
    def memory_mib(self) -> int:
        return self[1]

    @property
    def arch(self) -> str:
        return self[2]


class InstanceType(Frozen):
    __slots__ = (
        "instance_type", "family", "size", "vcpus", "memory_mib", "gpu_maker", "gpu_model",
        "gpu_count", "gpu_memory_mib", "arch", "network_baseline_gbps", "network_burst_gbps",
        "efa_supported", "price_per_hour"
    )
    instance_type: str
    family: str
    size: str
    vcpus: int
    memory_mib: int
    gpu_maker: str
    gpu_model: str
    gpu_count: float  # whole GPUs; a fraction for partitioned types such as g6f.large (0.125)
    gpu_memory_mib: int  # per GPU (per slice for partitioned types)
    arch: str
    network_baseline_gbps: float
    network_burst_gbps: float
    efa_supported: bool
    price_per_hour: float | None  # on-demand, the catalog's price region; None when not recorded

    def __init__(
        self,
        instance_type: str,
        family: str,
        size: str,
        vcpus: int,
        memory_mib: int,
        gpu_maker: str,
        gpu_model: str,
        gpu_count: float,
        gpu_memory_mib: int,
        arch: str,
        network_baseline_gbps: float,
        network_burst_gbps: float,
        efa_supported: bool,
        price_per_hour: float | None,
    ) -> None:
        object.__setattr__(self, "instance_type", instance_type)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "vcpus", vcpus)
        object.__setattr__(self, "memory_mib", memory_mib)
        object.__setattr__(self, "gpu_maker", gpu_maker)
        object.__setattr__(self, "gpu_model", gpu_model)
        object.__setattr__(self, "gpu_count", gpu_count)
        object.__setattr__(self, "gpu_memory_mib", gpu_memory_mib)
        object.__setattr__(self, "arch", arch)
        object.__setattr__(self, "network_baseline_gbps", network_baseline_gbps)
        object.__setattr__(self, "network_burst_gbps", network_burst_gbps)
        object.__setattr__(self, "efa_supported", efa_supported)
        object.__setattr__(self, "price_per_hour", price_per_hour)

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / 1024

    @property
    def gpu_memory_gib(self) -> float:
        return self.gpu_memory_mib / 1024

    @property
    def gpu_key(self) -> GpuKey:
        return GpuKey(self.gpu_model, self.gpu_memory_mib, self.arch)

    @property
    def price_per_gpu_hour(self) -> float | None:
        if self.price_per_hour is None or self.gpu_count <= 0:
            return None
        return self.price_per_hour / self.gpu_count

    @property
    def is_partitioned(self) -> bool:
        return self.gpu_count < 1


def _smallest_order(t: InstanceType) -> tuple[float, float, float, float, str]:
    """Cheapest per GPU first; unpriced types last; then least CPU and memory per GPU; then
    fewest GPUs (p3.2xlarge, not p3.16xlarge, when every size costs the same per GPU)."""
    per_gpu = t.price_per_gpu_hour
    count = max(t.gpu_count, 1e-9)
    return (
        per_gpu if per_gpu is not None else float("inf"),
        t.vcpus / count,
        t.memory_mib / count,
        t.gpu_count,
        t.instance_type,
    )


class Catalog:
    """Indexed, read-only view of the catalog rows."""

    def __init__(self, rows: list[InstanceType], meta: dict[str, Any], bundled: bool = False
                 ) -> None:
        self.meta, self._bundled = meta, bundled  # bundled: its offerings are read when asked
        self._rows = list(rows)
        self._by_type = {r.instance_type: r for r in rows}
        self._may_carry: dict[str, bool] = {}
        groups: dict[GpuKey, list[InstanceType]] = {}
        for r in rows:
            groups.setdefault(r.gpu_key, []).append(r)
        self._smallest = {key: min(ts, key=_smallest_order) for key, ts in groups.items()}
        self._groups = groups
        self._smallest_names: frozenset[str] | None = None  # made on first is_smallest

    def __len__(self) -> int:
        return len(self._by_type)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(self._by_type.values(), key=_display_order))

    def __contains__(self, instance_type: object) -> bool:
        return instance_type in self._by_type

    def get(self, instance_type: str) -> InstanceType | None:
        """The row for a type, or None when the type carries no GPU (or is unknown)."""
        return self._by_type.get(instance_type)

    def gpu_models(self) -> list[str]:
        return sorted({r.gpu_model for r in self._by_type.values()})

    @property
    def gpu_families(self) -> frozenset[str]:
        """Families known to carry GPUs: those with rows, and those recorded without rows."""
        without = self.meta.get("gpu_families_without_rows") or {}
        return frozenset(r.family for r in self._rows) | frozenset(without)

    def may_carry_gpu(self, instance_type: str) -> bool:
        """Could this type carry a GPU? Catalog types, types of a GPU family, and types of an
        unknown ``p``/``g``/``gr`` family: a GPU type the catalog cannot judge is never taken
        for a CPU type. The name is read as EC2 names types (lowercase, no spaces)."""
        if instance_type in self._by_type:  # the common case, on 100k-resource plans
            return True
        known = self._may_carry.get(instance_type)
        if known is None:
            name = canonical_instance_type(instance_type)
            family = family_of(name)
            known = (name in self._by_type or family in self.gpu_families
                     or names_gpu_family(family))
            if len(self._may_carry) < 4096:
                self._may_carry[instance_type] = known
        return known

    @property
    def offerings(self) -> dict[str, Any]:
        """Region offerings: the document's own, or the bundled ones read when first asked."""
        if self._bundled and self.meta.get("offerings") is None:
            from gpupool.catalog.offerings import load_offerings  # (a plan check asks for none)
            self.meta["offerings"] = load_offerings()
        return self.meta.get("offerings") or {}

    def offered_in(self, region: str) -> frozenset[str] | None:
        """The catalog types EC2 offers in ``region``, or None when that was not recorded."""
        found = (self.offerings.get("regions") or {}).get(region)
        return None if found is None else frozenset(found)

    def regions_offering(self, instance_type: str) -> list[str]:
        regions = self.offerings.get("regions") or {}
        return sorted(r for r, types in regions.items() if instance_type in types)

    @property
    def price_region(self) -> str:
        return str(self.meta.get("price_region", "us-east-1"))

    def for_region(self, region: str, table: PriceTable | None = None) -> Catalog:
        """The same rows priced for ``region`` (None where the region has no recorded price)."""
        from gpupool.catalog.prices import load_price_table

        table = table if table is not None else load_price_table()
        prices = (recorded := table.prices(region)) or {}
        rows = [r if type(p := prices.get(r.instance_type)) is type(r.price_per_hour)
                and p == r.price_per_hour else replace(r, price_per_hour=p) for r in self._rows]
        meta = {
            **self.meta,
            "price_region": region,
            "prices_recorded": recorded is not None,
            "price_source": table.describe(region),
        }
        return Catalog(rows, meta, self._bundled)

    def smallest_for(self, gpu_model: str, arch: str | None = None) -> InstanceType | None:
        """Cheapest-per-GPU type carrying a whole ``gpu_model`` GPU (any memory size) on ``arch``.

        Matches the model name case-insensitively, so stack files may say ``t4`` or ``T4``.
        """
        wanted = gpu_model.casefold()
        candidates = [
            s
            for key, s in self._smallest.items()
            if key.model.casefold() == wanted
            and (arch is None or key.arch == arch)
            and not s.is_partitioned
        ]
        return min(candidates, key=_smallest_order) if candidates else None

    def smallest_like(self, instance_type: str) -> InstanceType | None:
        """The smallest type carrying the same GPU (model, memory, arch) as ``instance_type``."""
        row = self.get(instance_type)
        return None if row is None else self._smallest[row.gpu_key]

    def is_smallest(self, instance_type: str) -> bool:
        """Asked per resource: a set of names made once per catalog, not a GPU key per call."""
        if (names := self._smallest_names) is None:
            names = self._smallest_names = frozenset(
                s.instance_type for s in self._smallest.values()
                if self._by_type.get(s.instance_type) is s)
        return instance_type in names

    def same_gpu_sizes(self, instance_type: str) -> list[InstanceType]:
        row = self.get(instance_type)
        return [] if row is None else sorted(self._groups[row.gpu_key], key=_display_order)

    def price_per_gpu_hour(self, instance_type: str) -> float | None:
        row = self.get(instance_type)
        return None if row is None else row.price_per_gpu_hour

    def gpu_delta(self, old: str, new: str) -> GpuChange | None:
        """How a type change moves GPU capacity; None when either type is not a GPU type."""
        a, b = self.get(old), self.get(new)
        if a is None or b is None:
            return None
        return GpuChange(
            old=a,
            new=b,
            same_gpu=a.gpu_key == b.gpu_key,
            gpu_count_delta=b.gpu_count - a.gpu_count,
            vcpu_delta=b.vcpus - a.vcpus,
            memory_mib_delta=b.memory_mib - a.memory_mib,
        )

    def adds_gpus(self, old: str, new: str) -> bool:
        change = self.gpu_delta(old, new)
        return change is not None and change.gpu_count_delta > 0

    def rows(self) -> list[dict[str, Any]]:
        """Rows in the JSON shape fixed by DESIGN.md (plus a few more keys)."""
        return [row_dict(r, smallest=self.is_smallest(r.instance_type)) for r in self]


class GpuChange(Frozen):
    __slots__ = ("old", "new", "same_gpu", "gpu_count_delta", "vcpu_delta", "memory_mib_delta")
    old: InstanceType
    new: InstanceType
    same_gpu: bool
    gpu_count_delta: float
    vcpu_delta: int
    memory_mib_delta: int

    def __init__(
        self,
        old: InstanceType,
        new: InstanceType,
        same_gpu: bool,
        gpu_count_delta: float,
        vcpu_delta: int,
        memory_mib_delta: int,
    ) -> None:
        object.__setattr__(self, "old", old)
        object.__setattr__(self, "new", new)
        object.__setattr__(self, "same_gpu", same_gpu)
        object.__setattr__(self, "gpu_count_delta", gpu_count_delta)
        object.__setattr__(self, "vcpu_delta", vcpu_delta)
        object.__setattr__(self, "memory_mib_delta", memory_mib_delta)

    @property
    def price_delta_per_hour(self) -> float | None:
        if self.old.price_per_hour is None or self.new.price_per_hour is None:
            return None
        return self.new.price_per_hour - self.old.price_per_hour

    @property
    def is_vertical_upsize(self) -> bool:
        """Same GPU, same count, more CPU or memory: cost without GPU power."""
        return (self.same_gpu and self.gpu_count_delta == 0
                and (self.vcpu_delta > 0 or self.memory_mib_delta > 0))

    @property
    def packs_more_gpus(self) -> bool:
        """Same GPU, more of them in one host: vertical scaling by GPU count."""
        return self.same_gpu and self.gpu_count_delta > 0


def _display_order(t: InstanceType) -> tuple[str, float, int, str]:
    return (t.family, t.gpu_count, t.vcpus, t.instance_type)


def row_dict(r: InstanceType, *, smallest: bool) -> dict[str, Any]:
    d = {n: getattr(r, n) for n in fields(r)}
    d["memory_gib"] = round(r.memory_gib, 3)
    d["gpu_memory_gib"] = round(r.gpu_memory_gib, 3)
    per_gpu = r.price_per_gpu_hour
    d["price_per_gpu_hour"] = None if per_gpu is None else round(per_gpu, 6)
    d["smallest_for_gpu"] = smallest
    return d


def catalog_from_document(doc: dict[str, Any], bundled: bool = False) -> Catalog:
    known = set(fields(InstanceType))
    rows = [InstanceType(**(t if t.keys() <= known else {k: v for k, v in t.items()
                                                          if k in known})) for t in doc["types"]]
    meta = {k: v for k, v in doc.items() if k != "types"}
    return Catalog(rows, meta, bundled)


@cache
def load_catalog(path: str | None = None, region: str | None = None) -> Catalog:
    """The bundled catalog (cached), or the one at ``path``; priced for ``region`` when given
    (the data file's own prices are us-east-1's)."""
    if region is not None:
        return load_catalog(path).for_region(region)
    if path is not None:
        with open(path) as f:  # (as Path.read_text: no pathlib on a check's start-up)
            return catalog_from_document(json.loads(f.read()))
    # beside this module (not importlib.resources: with tempfile and zipfile, 4 ms of a check)
    with open(os.path.join(os.path.dirname(__file__), "data", DATA_FILE)) as f:
        text = f.read()
    return catalog_from_document(json.loads(text), bundled=True)  # offerings: when asked
