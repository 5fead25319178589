"""Which instance type a GPU model or family resolves to, and whether a region offers it.

A pool names a GPU (T4, A10G) or a family (g4dn), never an instance type: the kit picks the
smallest whole-GPU size for it (DESIGN.md, idea 1), and refuses GPUs the pools' image cannot
drive (AMD, pre-Turing NVIDIA) with the reason.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.config.models import GpuPoolConfig, StackConfig

_AMD = ("g4ad", "radeon", "v520")  # g4ad carries AMD Radeon Pro V520 GPUs
# NVIDIA GPUs older than Turing, by architecture. Pools boot AWS's Deep Learning Base *OSS* NVIDIA
# Driver AMI: NVIDIA's open kernel modules drive Turing and newer GPUs only, and the AMI does not
# list P2, P3 or G3 among its supported instances. A pool of them would boot without a working
# driver and never publish GPU utilisation, so target tracking could never scale it.
PRE_TURING: dict[str, str] = {"v100": "Volta", "k80": "Kepler", "k520": "Kepler",
                              "m60": "Maxwell"}



def resolve_pool(pool: GpuPoolConfig, catalog: Catalog) -> InstanceType:
    """The smallest instance type that carries the pool's GPU model (or family) on its arch."""
    return resolve_gpu(pool.gpu, pool.arch, catalog)


def resolve_gpu(gpu: str, arch: str, catalog: Catalog) -> InstanceType:
    """The smallest whole-GPU type for a GPU model (T4, a10g) or family (g4dn) on ``arch``.

    Raises ``ValueError`` whose text says what was expected, for the caller to put after the key.
    """
    wanted = gpu.strip().casefold()
    if wanted.startswith(_AMD) or "radeon" in wanted:
        raise ValueError(
            f"expected an NVIDIA GPU, got {gpu!r}: g4ad carries AMD Radeon Pro V520 GPUs, and the "
            "NVIDIA driver, nvidia_gpu metrics and CUDA tooling the pool relies on do not apply"
        )
    gpu = gpu.strip()
    chosen = catalog.smallest_for(gpu, arch)
    if chosen is None:  # maybe a family name such as g4dn or g5g
        family = [t for t in catalog if t.family == wanted and not t.is_partitioned]
        on_arch = [t for t in family if t.arch == arch]
        if on_arch:
            chosen = catalog.smallest_for(on_arch[0].gpu_model, arch)
        elif family:
            raise ValueError(
                f"expected a GPU family available on {arch}, got {gpu!r}, which is "
                f"{family[0].arch} only (set arch: {family[0].arch})"
            )
    if chosen is None:
        elsewhere = [a for a in ("x86_64", "arm64") if a != arch and catalog.smallest_for(gpu, a)]
        if elsewhere:
            raise ValueError(
                f"expected a GPU model available on {arch}, got {gpu!r}, which is "
                f"{elsewhere[0]} only (set arch: {elsewhere[0]})"
            )
        models = [m for m in catalog.gpu_models() if catalog.smallest_for(m, arch)]
        close = difflib.get_close_matches(gpu, models, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ValueError(
            f"expected a GPU model or family available on {arch}, got {gpu!r} "
            f"({hint}models: {', '.join(models)}; or a family such as g4dn)"
        )
    if chosen.gpu_maker.upper() != "NVIDIA":
        raise ValueError(
            f"expected an NVIDIA GPU, got {chosen.gpu_maker} on {chosen.instance_type}"
        )
    generation = PRE_TURING.get(chosen.gpu_model.casefold())
    if generation is not None:
        raise ValueError(
            f"expected a Turing or newer NVIDIA GPU, got {gpu!r}: {chosen.instance_type} carries "
            f"{chosen.gpu_model} ({generation}), which the pools' image cannot drive (the Deep "
            "Learning Base OSS NVIDIA Driver AMI uses NVIDIA's open kernel modules, Turing and "
            "newer only), so the pool would never publish GPU utilisation; use T4 (g4dn), A10G "
            "(g5), L4 (g6) or newer"
        )
    return chosen


def offering_problems(
    config: StackConfig, resolved: Mapping[str, InstanceType], catalog: Catalog
) -> list[tuple[int, str]]:
    """(pool index, expectation) for pools whose instance type the region does not offer."""
    region = config.region
    offered = catalog.offered_in(region)
    if offered is None:
        return []  # not recorded: not checked (``gpupool validate`` says so)
    out = []
    for i, pool in enumerate(config.pools):
        itype = resolved[pool.name].instance_type
        if itype in offered:
            continue
        usable = sorted(
            (t for m in catalog.gpu_models()
             if (t := catalog.smallest_for(m, pool.arch)) is not None
             and t.instance_type in offered and t.gpu_maker.upper() == "NVIDIA"
             and m.casefold() not in PRE_TURING),
            key=lambda t: (t.price_per_gpu_hour or float("inf"), t.gpu_model))
        there = [f"{t.gpu_model} ({t.instance_type})" for t in usable[:4]]
        elsewhere = catalog.regions_offering(itype)
        instead = (f"use a GPU {region} offers ({', '.join(there)})" if there else
                   f"{region} offers no GPU of the catalog on {pool.arch}")
        out.append((i, (
            f"expected a GPU offered in {region}: {pool.gpu} resolves to {itype}, which "
            f"{region} does not offer (EC2 DescribeInstanceTypeOfferings); {instead}, or deploy "
            f"to a region that offers {itype} ({', '.join(elsewhere) or 'none recorded'})"
        )))
    return out


def offerings_note(config: StackConfig, catalog: Catalog | None = None) -> str:
    """One line for ``gpupool validate``: whether the region's offerings were checked."""
    catalog = catalog or load_catalog()
    offered = catalog.offered_in(config.region)
    source = catalog.offerings
    if offered is None:
        return (f"{config.region}: no recorded instance type offerings, so whether it offers "
                "the pools' types was not checked (python -m gpupool.catalog.record_offerings "
                "records them)")
    return (f"{config.region} offers every pool's instance type ({source.get('source', '?')}, "
            f"recorded {source.get('recorded_at', '?')})")


