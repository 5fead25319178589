"""Which old instance type each new one replaced, for gpu-no-vertical-upsize.

Written types (an instance's ``instance_type``, an override list) pair by position when the
lists are as long, else by GPU. Types chosen by attributes (``instance_requirements``) are a set
EC2 picks from, in no order: per GPU (model, memory, architecture) the smallest size each side
can launch is compared, so requirements whose vCPU minimum moves from 4 to 16 read as
g4dn.xlarge → g4dn.4xlarge.
"""

from __future__ import annotations

from gpupool.catalog import Catalog, GpuKey, InstanceType
from policies.facts import InstanceTypes

Pairs = tuple[list[tuple[str, str]], list[str]]


def maybe_gpu(types: InstanceTypes, catalog: Catalog) -> bool:
    return not types.complete or any(catalog.may_carry_gpu(t) for t in types.known)


def shown(types: InstanceTypes) -> str:
    text = ", ".join(types.known)
    if not types.complete:
        text = f"{text}, unknown" if text else "unknown"
    return text or "none"


def type_pairs(old: InstanceTypes, new: InstanceTypes, catalog: Catalog) -> Pairs:
    """(old, new) type pairs to judge, and added types whose predecessor cannot be told."""
    old_chosen, new_chosen = set(old.selected), set(new.selected)
    pairs, unpaired = written_pairs(tuple(t for t in old.known if t not in old_chosen),
                                    tuple(t for t in new.known if t not in new_chosen), catalog)
    return pairs + _selection_pairs(old.selected, new.selected, catalog), unpaired


def _selection_pairs(old: tuple[str, ...], new: tuple[str, ...], catalog: Catalog
                     ) -> list[tuple[str, str]]:
    a, b = _smallest_per_gpu(old, catalog), _smallest_per_gpu(new, catalog)
    return [(a[key].instance_type, b[key].instance_type) for key in a
            if key in b and a[key] is not b[key]]


def _smallest_per_gpu(types: tuple[str, ...], catalog: Catalog) -> dict[GpuKey, InstanceType]:
    out: dict[GpuKey, InstanceType] = {}
    for name in types:
        row = catalog.get(name)
        if row is None:
            continue
        prior = out.get(row.gpu_key)
        if prior is None or _size(row) < _size(prior):
            out[row.gpu_key] = row
    return out


def _size(t: InstanceType) -> tuple[float, int, int, str]:
    return (t.gpu_count, t.vcpus, t.memory_mib, t.instance_type)


def written_pairs(old: tuple[str, ...], new: tuple[str, ...], catalog: Catalog) -> Pairs:
    """Which old type each new type replaced: position for equal-length lists, else same GPU.

    Also the added types that could not be paired although they may carry a GPU the catalog
    does not know, while GPU types were removed: what they replaced cannot be told.
    """
    if len(old) == len(new):
        return [(a, b) for a, b in zip(old, new, strict=True) if a != b], []
    removed = [t for t in old if t not in new]
    pairs = []
    unpaired = []
    for b in (t for t in new if t not in old):
        row = catalog.get(b)
        partner = next((a for a in removed if row is not None and catalog.get(a) is not None
                        and catalog.get(a).gpu_key == row.gpu_key), None)  # type: ignore[union-attr]
        if partner is not None:
            removed.remove(partner)
            pairs.append((partner, b))
        elif row is None and catalog.may_carry_gpu(b):
            unpaired.append(b)
    if not any(catalog.may_carry_gpu(a) for a in removed):
        unpaired = []
    return pairs, unpaired
