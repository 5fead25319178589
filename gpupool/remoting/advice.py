"""What to do about a remoting budget's figures, in a reviewer's words.

Every line is derived from the figures :func:`gpupool.remoting.assess.assess` computed (never
written per profile): what alone breaks the budget, which lever (round trips or bytes) is the
larger share of the network time, what the what-ifs of the trace save, whether the budget is
reachable on any network kind, and the cheapest proxy type and network kind that meet it.
"""

from __future__ import annotations

import math
from typing import Any

from gpupool.catalog import InstanceType
from gpupool.catalog.network import (
    FLOW_CAP_CLUSTER_GBPS,
    FLOW_CAP_ENA_EXPRESS_GBPS,
    FLOW_CAP_OUTSIDE_CLUSTER_GBPS,
)
from gpupool.remoting import budget
from gpupool.remoting.kinds import KindOption
from gpupool.remoting.latency import Latency
from gpupool.remoting.models import NetworkGiven
from gpupool.remoting.profile import Profile


def pct(x: float) -> str:
    return f"{x * 100:.3g} %"


def seconds(s: float) -> str:
    return f"{s * 1e3:,.3g} ms" if s < 1 else f"{s:,.3g} s"


def network_share(latency_s: float, transfer_s: float) -> tuple[float, str] | None:
    """The larger of the two parts of the first-order network time, as (its share, its name)."""
    total = latency_s + transfer_s
    if total <= 0:
        return None
    if latency_s >= transfer_s:
        return latency_s / total, "waiting on round trips"
    return transfer_s / total, "bytes moved"


def advice(profile: Profile, net: NetworkGiven, eps: float, figures: dict[str, Any],
           first: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """The advice lines for ``result`` (see the module doc)."""
    out: list[str] = []
    allowed = eps * profile.local_time_s
    tx, lat = first.get("transfer_s"), first.get("latency_s")
    excess = first.get("link_excess_s", 0.0)
    if tx is not None and tx > allowed:
        need = budget.bandwidth_min_gbps(profile, 0.0, eps)
        out.append(
            f"The bytes alone take {seconds(tx)} at {net.bandwidth_gbps:g} Gbps, more than the "
            f"whole budget ({seconds(allowed)}): even a zero RTT needs at least "
            f"{need:,.3g} Gbps. Keep tensors resident on the GPU between calls, or budget a "
            "network (or a larger proxy baseline) that carries them.")
    if lat is not None and lat > allowed:
        r_need = allowed / profile.sync_calls * 1e6 if profile.sync_calls else math.inf
        out.append(
            f"The {profile.sync_calls:,} synchronous calls alone wait {seconds(lat)} at "
            f"{net.rtt_us:g} µs, more than the budget ({seconds(allowed)}): they need an RTT "
            f"under {r_need:.3g} µs, or fewer of them. Send calls without waiting (outstanding "
            "requests) and answer queries from shadows on the client.")
    if excess > allowed:
        out.append(
            f"Serialised, the link carries the {profile.async_calls:,} asynchronous calls' "
            f"one-way trips ({net.rtt_us or 0.0:g} µs / 2 each) one after another: "
            f"{seconds(excess)} past the local run, more than the budget. Batch launches "
            "(CUDA graphs, fewer and larger kernels), or use a layer that keeps requests in "
            "flight (then --latency pipelined).")
    share = (network_share(lat + excess, tx) if lat is not None and tx is not None else None)
    if share is not None and not out:
        out.append(f"{share[0] * 100:.0f} % of the network time is {share[1]} (first order): "
                   "that is the lever to pull first.")
    if profile.sync_calls and lat is not None:
        unit = next(u for u in (1000, 100, 10, 1) if profile.sync_calls >= u)
        per = unit * (net.rtt_us or 0.0) * 1e-6 / profile.local_time_s
        out.append(f"Each {unit:,} synchronous call{'s' if unit > 1 else ''} made asynchronous "
                   f"or shadowed save{'s' if unit == 1 else ''} {pct(per)} of the local run at "
                   f"{net.rtt_us:g} µs.")
    out += _what_if_advice(result)
    out += _latency_advice(result, eps)
    out += _bandwidth_advice(net)
    inst = net.instance
    if inst is not None and net.kind is not None:
        out.extend(_kind_advice(inst, net.kind, result))
    out += _reach_advice(result)
    if inst is not None:
        out.append(f"One TCP flow is capped below an instance's bandwidth on EC2 "
                   f"({FLOW_CAP_OUTSIDE_CLUSTER_GBPS:g} Gbps outside a cluster placement group, "
                   f"{FLOW_CAP_CLUSTER_GBPS:g} Gbps inside one, {FLOW_CAP_ENA_EXPRESS_GBPS:g} "
                   "Gbps with ENA Express) and RTT floors are planning defaults: measure the "
                   "flow the remoting layer uses with `gpupool netcheck probe`.")
    tags = budget_tags(net, figures)
    if tags is not None:
        out.append(f"Budget for the proxy tier: gpupool:remoting-max-rtt-us = {tags[0]:.3g}, "
                   f"gpupool:remoting-min-gbps = {tags[1]:.3g} (one pair on the budget's edge).")
    return out


def _what_if_advice(result: dict[str, Any]) -> list[str]:
    wi = result.get("what_if")
    if not wi or not wi["rows"]:
        return []

    def low(r: dict[str, Any]) -> float:
        return min(r["as_async"], r["as_local"] if r["as_local"] is not None else math.inf)

    best = min(wi["rows"], key=low)
    if low(best) < 0.9 * wi["overhead"]:
        return [f"Replayed: changing {best['calls']} ({best['count']:,} calls) takes the "
                f"overhead from {pct(wi['overhead'])} to {pct(low(best))}."]
    return ["Replayed: no single synchronous call name is worth changing here; the overhead is "
            "elsewhere (bytes, serialising, or work that waits for them)."]


def _latency_advice(result: dict[str, Any], eps: float) -> list[str]:
    """When the two latency models disagree on the verdict, say what decides between them."""
    other = result.get("other_latency")
    if not other or "predicted_overhead" not in other or "predicted_overhead" not in result:
        return []
    mine, theirs = result["predicted_overhead"], other["predicted_overhead"]
    if (mine <= eps * (1 + 1e-9)) == (theirs <= eps * (1 + 1e-9)):
        return []
    if result["latency"] == Latency.SERIALISED:
        return [f"Over the budget with serialised latency (the authors' model), within it "
                f"pipelined ({pct(theirs)}): it passes only if the remoting layer keeps many "
                "requests in flight on one connection; check that, then --latency pipelined "
                "(docs/remoting-model.md)."]
    return [f"Within the budget pipelined, over it serialised ({pct(theirs)}, the authors' "
            "model): a layer that waits for each request to arrive before the next one's "
            "latency starts (or an emulator that does) misses it (docs/remoting-model.md)."]


def _bandwidth_advice(net: NetworkGiven) -> list[str]:
    inst, b = net.instance, net.bandwidth_gbps
    if inst is not None and b is not None and b > inst.network_baseline_gbps:
        return [f"{b:g} Gbps is above {inst.instance_type}'s baseline "
                f"({inst.network_baseline_gbps:g} Gbps): budget against the baseline, the "
                "burst ('up to') figure is not sustained."]
    if net.kind is not None and b is not None and b > net.kind.flow_gbps:
        return [f"{b:g} Gbps is more than one flow of {net.kind.label} gets on "
                f"{inst.instance_type if inst else 'this type'} ({net.kind.flow_gbps:g} Gbps): "
                "a remoting client's calls travel on one connection; budget against the "
                "per-flow figure."]
    return []


def _kind_advice(inst: InstanceType, kind: KindOption, result: dict[str, Any]) -> list[str]:
    """Which of the type's network kinds meets the budget, when the one budgeted does not."""
    rows = result.get("network_kinds") or []
    if result["feasible"] or not rows:
        return []
    better = [r for r in rows if r["feasible"] and r["kind"] != str(kind.kind)]
    if better:
        return [f"{r['kind_label']} on {inst.instance_type} meets the budget: "
                f"{pct(r['predicted_overhead'])} at its ~{r['rtt_floor_us']:g} µs floor and "
                f"{r['flow_gbps']:g} Gbps per flow (--network {r['kind']})." for r in better]
    elsewhere = [r for r in rows if r["meets_budget"] and not r["supported"]]
    if elsewhere:
        return [f"{r['kind_label']} would meet the budget ({pct(r['predicted_overhead'])} at "
                f"~{r['rtt_floor_us']:g} µs and {r['flow_gbps']:g} Gbps per flow), but "
                f"{inst.instance_type} lacks it ({r['support']}): a type with it would do."
                for r in elsewhere]
    return [f"None of {inst.instance_type}'s network kinds meets the budget at its RTT floor "
            "and per-flow bandwidth: make calls asynchronous, shadow them, move fewer bytes, "
            "or keep the GPU local."]


def _reach_advice(result: dict[str, Any]) -> list[str]:
    """Is the budget reachable on any network kind, and where most cheaply?"""
    out = []
    low = result.get("lowest_rtt_floor")
    if low is not None and low["below"]:
        out.append(f"The largest RTT, {result['rtt_max_us']:.3g} µs, is below every network "
                   f"kind's floor (the least is {low['kind']}'s ~{low['rtt_floor_us']:g} µs): "
                   "infeasible on any network kind at this bandwidth.")
    cheap = result.get("cheapest_proxy")
    if cheap is None:
        return out
    found = cheap["found"]
    if found is None:
        out.append(f"No proxy meets the budget at its network kinds' RTT floors and per-flow "
                   f"bandwidth ({cheap['candidates']} type and kind pairs of the "
                   f"{cheap['scope']}).")
        return out
    out.append(f"Cheapest proxy that meets the budget ({cheap['scope']}, at each kind's RTT "
               f"floor and per-flow bandwidth): {found['instance_type']} ({found['gpu_model']}) "
               f"over {found['kind_label']}, {pct(found['predicted_overhead'])} at "
               f"~{found['rtt_floor_us']:g} µs and {found['flow_gbps']:g} Gbps per flow, "
               f"${found['price_per_hour']:,.4g}/h on demand ({cheap['price_region']}).")
    return out


def budget_tags(net: NetworkGiven, figures: dict[str, Any]) -> tuple[float, float] | None:
    """(max RTT µs, min Gbps): a pair on the budget's edge, for the tier's budget tags."""
    r_max, b_min = figures.get("rtt_max_us"), figures.get("bandwidth_min_gbps")
    if net.bandwidth_gbps is not None and r_max is not None and math.isfinite(r_max) \
            and r_max > 0:
        return r_max, net.bandwidth_gbps
    if net.rtt_us is not None and b_min is not None and math.isfinite(b_min) and b_min > 0:
        return net.rtt_us, b_min
    return None
