"""Where a budget can be met: the proxy type's network kinds, and the cheapest type and kind.

Both are judged at what a kind gives at best (:mod:`gpupool.remoting.kinds`): its RTT floor
and what ONE flow gets on the type (the baseline, capped per flow). A kind the type does not
support is shown with its figures but never meets the budget there.

The cheapest proxy is searched among the catalog's priced, whole-GPU NVIDIA types (CUDA API
remoting needs an NVIDIA GPU; g4ad's AMD GPUs do not apply), one GPU per proxy as the smallest
size of its GPU carries: the sizes of the proxy type's GPU when one is given (the profile's
local run was measured on it), every such GPU otherwise. Candidates are taken cheapest first,
so the search stops at the first that meets the budget.
"""

from __future__ import annotations

import math
from typing import Any

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.network import DEFAULT_RTT_FLOOR_US, NetworkKind, single_gpu_sizes
from gpupool.remoting.kinds import KindOption, kind_options
from gpupool.remoting.models import Model

TOLERANCE = 1e-9


def json_number(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded figure is null, and the caller says why."""
    return None if value is None or math.isinf(value) else value


def meets(overhead: float, eps: float) -> bool:
    return overhead <= eps * (1 + TOLERANCE)


def kind_json(o: KindOption) -> dict[str, Any]:
    return {"kind": str(o.kind), "kind_label": o.label, "flow_cap_gbps": o.flow_cap_gbps,
            "flow_gbps": o.flow_gbps, "rtt_floor_us": o.rtt_floor_us}


def lowest_floor() -> tuple[NetworkKind, float]:
    """The network kind with the least RTT floor, and that floor: below it, no kind reaches."""
    kind = min(DEFAULT_RTT_FLOOR_US, key=lambda k: DEFAULT_RTT_FLOOR_US[k])
    return kind, DEFAULT_RTT_FLOOR_US[kind]


def kinds_table(instance: InstanceType, model: Model, eps: float) -> list[dict[str, Any]]:
    """Every network kind of the proxy type with what one flow gets over it, the kind's RTT
    floor, and the budget at those figures: the overhead at (floor, per-flow bandwidth), the
    largest RTT at the per-flow bandwidth, the least per-flow bandwidth at the floor.
    ``feasible`` is ``supported and meets_budget``."""
    rows = []
    for o in kind_options(instance):
        over = model.overhead(o.rtt_floor_us, o.flow_gbps)
        r_max = model.rtt_max(o.flow_gbps)
        ok = meets(over, eps)
        rows.append({
            **kind_json(o),
            "supported": o.supported,
            "support": o.why,
            "predicted_overhead": over,
            "rtt_max_us": json_number(r_max),
            "rtt_unbounded": r_max == math.inf,
            "bandwidth_min_gbps": json_number(model.bandwidth_min(o.rtt_floor_us)),
            "meets_budget": ok,
            "feasible": o.supported and ok,
        })
    return rows


def _candidates(catalog: Catalog, instance: InstanceType | None) -> list[InstanceType]:
    if instance is not None:
        sizes = single_gpu_sizes(catalog, instance.instance_type)
    else:
        smallest = {t.instance_type: catalog.smallest_like(t.instance_type) for t in catalog}
        sizes = [t for t in catalog if t.gpu_maker == "NVIDIA" and not t.is_partitioned
                 and (s := smallest[t.instance_type]) is not None and t.gpu_count == s.gpu_count]
    return [t for t in sizes if t.price_per_hour is not None]


def cheapest_proxy(catalog: Catalog, model: Model, eps: float,
                   instance: InstanceType | None = None) -> dict[str, Any]:
    """The cheapest (type, supported kind) whose RTT floor and per-flow bandwidth keep the
    overhead within ``eps``; ``found`` is None when no candidate does."""
    options = [(t.price_per_hour or 0.0, rank, t.instance_type, t, o)
               for t in _candidates(catalog, instance)
               for rank, o in enumerate(kind_options(t)) if o.supported]
    options.sort(key=lambda c: c[:3])
    scope = (f"sizes of {instance.gpu_model} ({instance.instance_type}'s GPU)" if instance
             else "whole-GPU NVIDIA types of the catalog, the local run as profiled")
    out: dict[str, Any] = {"scope": scope, "price_region": catalog.price_region,
                           "candidates": len(options), "found": None}
    failed: list[tuple[float, float]] = []  # (floor, flow) pairs over the budget
    if options:  # the best figures any candidate has: when they fail, every candidate does
        best = (min(o.rtt_floor_us for *_, o in options), max(o.flow_gbps for *_, o in options))
        if not meets(model.overhead(*best), eps):
            failed.append(best)
    for price, _, _, t, o in options:
        # the overhead never falls with a longer RTT or a thinner flow: a pair no better than
        # one that failed fails too, without a replay
        if any(o.rtt_floor_us >= r and o.flow_gbps <= b for r, b in failed):
            continue
        over = model.overhead(o.rtt_floor_us, o.flow_gbps)
        if not meets(over, eps):
            failed.append((o.rtt_floor_us, o.flow_gbps))
        else:
            out["found"] = {"instance_type": t.instance_type, "gpu_model": t.gpu_model,
                            **kind_json(o), "predicted_overhead": over,
                            "price_per_hour": price,
                            "network_baseline_gbps": t.network_baseline_gbps}
            break
    return out
