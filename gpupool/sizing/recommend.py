"""Which catalog GPU holds an estimate most cheaply: one GPU, or the fewest of one size.

Candidates are the catalog's whole NVIDIA GPUs with a recorded price on the wanted
architecture (fractional GPUs such as g6f are left out: the kit's pools never run them, see
``Catalog.smallest_for``; AMD GPUs have no CUDA). bf16 needs an Ampere-or-newer GPU, so T4,
T4g and V100 are left out for it. For each GPU model the fewest GPUs whose share holds the
estimate are found (:meth:`Estimate.per_gpu`); several GPUs sit in one instance when one size
carries enough of them (shards talk over the host's NVLink/PCIe), else on several instances of
the largest size (fully sharded across hosts: give it a fast network such as EFA). The cheapest
option per hour wins; ties go to fewer GPUs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpupool.catalog import Catalog, InstanceType
from gpupool.sizing.memory import GIB, Estimate

# NVIDIA GPU models in the catalog without bf16 arithmetic (compute capability below 8.0).
NO_BF16: frozenset[str] = frozenset({"T4", "T4g", "V100", "K80", "M60", "K520"})
# Models known to have it (Ampere, Ada, Hopper, Blackwell); others are skipped for bf16.
HAS_BF16: frozenset[str] = frozenset({
    "A10G", "A100", "L4", "L40S", "H100", "H200", "B200", "B300", "GB200",
    "RTX PRO 4500", "RTX PRO Server 6000",
})
MAX_HOSTS = 64  # beyond this the answer is a cluster design, not an instance type


@dataclass(frozen=True, slots=True)
class Option:
    instance_type: InstanceType
    instances: int
    gpus: int
    per_gpu_bytes: float

    @property
    def price_per_hour(self) -> float:
        assert self.instance_type.price_per_hour is not None
        return self.instance_type.price_per_hour * self.instances

    @property
    def sharding(self) -> str:
        if self.gpus == 1:
            return "none (one GPU)"
        where = ("in one instance" if self.instances == 1
                 else f"across {self.instances} instances (give them EFA or a fast network)")
        return (f"{self.gpus}-way: tensor parallelism for inference, fully sharded data "
                f"parallelism (FSDP / ZeRO-3) for training, {where}")

    def to_dict(self) -> dict[str, Any]:
        t = self.instance_type
        return {
            "instance_type": t.instance_type,
            "gpu_model": t.gpu_model,
            "gpus": self.gpus,
            "instances": self.instances,
            "gpu_memory_gib": round(t.gpu_memory_gib, 2),
            "per_gpu_gib": round(self.per_gpu_bytes / GIB, 3),
            "arch": t.arch,
            "price_per_hour": round(self.price_per_hour, 4),
            "price_per_gpu_hour": round(self.price_per_hour / self.gpus, 4),
            "sharding": self.sharding,
        }


@dataclass(frozen=True, slots=True)
class Recommendation:
    best: Option | None
    alternatives: tuple[Option, ...]  # the next cheapest GPU models
    skipped: tuple[str, ...]  # why some GPU models were not considered


def candidates(catalog: Catalog, arch: str, dtype: str,
               allowed: Iterable[str] | None = None) -> tuple[list[InstanceType], list[str]]:
    """Priced whole NVIDIA GPU types on ``arch`` (``any`` for both) that can run ``dtype``."""
    wanted = None if allowed is None else {m.casefold() for m in allowed}
    out: list[InstanceType] = []
    skipped: dict[str, str] = {}
    for t in catalog:
        if arch != "any" and t.arch != arch:
            continue
        if wanted is not None and t.gpu_model.casefold() not in wanted:
            continue
        if t.gpu_maker.upper() != "NVIDIA":
            skipped[t.gpu_model] = f"{t.gpu_model}: not an NVIDIA GPU (no CUDA)"
            continue
        if t.gpu_count < 1:
            continue
        if dtype == "bf16" and t.gpu_model not in HAS_BF16:
            why = ("no bf16 arithmetic (needs Ampere or newer)" if t.gpu_model in NO_BF16
                   else "bf16 support not recorded")
            skipped[t.gpu_model] = f"{t.gpu_model}: {why}"
            continue
        if t.price_per_hour is None:
            skipped.setdefault(t.gpu_model, f"{t.gpu_model}: no recorded price for "
                                            f"{t.instance_type}")
            continue
        out.append(t)
    priced = {t.gpu_model for t in out}
    notes = [why for model, why in sorted(skipped.items()) if model not in priced]
    return out, notes


def recommend(est: Estimate, catalog: Catalog, *, arch: str = "x86_64",
              allowed: Iterable[str] | None = None, single_gpu: bool = False) -> Recommendation:
    """The cheapest option per hour for ``est`` (``single_gpu``: one GPU per instance only)."""
    types, skipped = candidates(catalog, arch, est.workload.dtype, allowed)
    by_model: dict[tuple[str, int, str], list[InstanceType]] = {}
    for t in types:
        by_model.setdefault((t.gpu_model, t.gpu_memory_mib, t.arch), []).append(t)
    best_per_model: list[Option] = []
    for group in by_model.values():
        option = _fewest(est, group, single_gpu)
        if option is not None:
            best_per_model.append(option)
    best_per_model.sort(key=_order)
    best = best_per_model[0] if best_per_model else None
    return Recommendation(best, tuple(best_per_model[1:4]), tuple(skipped))


def _order(o: Option) -> tuple[float, int, str]:
    return (o.price_per_hour, o.gpus, o.instance_type.instance_type)


def _fewest(est: Estimate, group: list[InstanceType], single_gpu: bool) -> Option | None:
    """The cheapest way to hold ``est`` on the fewest GPUs of this model."""
    memory = group[0].gpu_memory_mib * 1024**2
    sizes = sorted({int(t.gpu_count) for t in group})
    if single_gpu:
        sizes = [1] if 1 in sizes else []
    largest = max(sizes, default=0)
    if not largest:
        return None
    n = 1
    limit = largest * (1 if single_gpu else MAX_HOSTS)
    while n <= limit and est.per_gpu(n) > memory:
        n += 1
    if n > limit:
        return None
    per_host = next((s for s in sizes if s >= n), largest)
    hosts = math.ceil(n / per_host)
    gpus = per_host * hosts
    cheapest = min((t for t in group if int(t.gpu_count) == per_host),
                   key=lambda t: (t.price_per_hour or math.inf, t.vcpus, t.instance_type))
    return Option(cheapest, hosts, gpus, est.per_gpu(gpus))
