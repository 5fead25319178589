"""One answer to "is this network good enough for this application?", for the CLI and tools.

:func:`assess` takes a profile and whatever is known of the network (RTT, bandwidth, or both)
and returns the figures ``gpupool remoting`` prints, as a JSON-ready mapping whose keys
DESIGN.md fixes: ``profile``, ``max_overhead``, ``predicted_overhead`` (RTT and bandwidth
known), ``rtt_max_us`` (bandwidth known), ``bandwidth_min_gbps`` (RTT known), ``feasible``.

With a trace the figures come from the per-call replay (:mod:`gpupool.remoting.replay`) and the
first-order figures are given beside them (``first_order``), because the gap between the two is
what asynchronous calls and shadows already hide. Advice is derived from the figures, never
written per profile.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpupool.catalog import InstanceType
from gpupool.catalog.network import (
    FLOW_CAP_CLUSTER_GBPS,
    FLOW_CAP_ENA_EXPRESS_GBPS,
    FLOW_CAP_OUTSIDE_CLUSTER_GBPS,
)
from gpupool.errors import InputError
from gpupool.remoting import budget
from gpupool.remoting.kinds import KindOption, kind_options
from gpupool.remoting.profile import Profile

if TYPE_CHECKING:
    from gpupool.remoting.replay import Replayer

# What a reference ladder of networks allows, shown when only one figure is known.
BANDWIDTH_LADDER_GBPS = (5.0, 10.0, 25.0, 50.0, 100.0, 200.0, 400.0)


@dataclass(frozen=True)
class NetworkGiven:
    """What the user told us of the network, and where the bandwidth came from."""

    rtt_us: float | None
    bandwidth_gbps: float | None
    bandwidth_source: str | None = None  # "--bandwidth-gbps", "g4dn.16xlarge: one TCP flow…"
    instance: InstanceType | None = None
    # the network kind the headline figures are for (with an instance type): its per-flow
    # bandwidth is the budget's bandwidth unless one was given, its RTT floor the least round
    # trip the budget can count on when no RTT was given
    kind: KindOption | None = None


@dataclass(frozen=True)
class _Model:
    """The profile's model (first order, or the replay of its trace) as three questions, each
    answer cached: the per-kind table asks the same ones again (TCP and ENA Express share a
    floor; small types share one per-flow figure across kinds)."""

    overhead: Callable[[float, float], float]
    rtt_max: Callable[[float], float | None]
    bandwidth_min: Callable[[float], float | None]


def _first_order_model(profile: Profile, eps: float) -> _Model:
    return _Model(
        overhead=cache(lambda r, b: budget.predicted_overhead(profile, r, b)),
        rtt_max=cache(lambda b: budget.rtt_max_us(profile, b, eps)),
        bandwidth_min=cache(lambda r: budget.bandwidth_min_gbps(profile, r, eps)),
    )


def _replay_model(rp: Replayer, local_us: float, eps: float) -> _Model:
    from gpupool.remoting import replay

    return _Model(
        overhead=cache(lambda r, b: replay.overhead(rp, replay.Network(r, b), local_us)),
        rtt_max=cache(lambda b: replay.rtt_max_us(rp, b, eps, local_us)),
        bandwidth_min=cache(lambda r: replay.bandwidth_min_gbps(rp, r, eps, local_us)),
    )


def _json_number(value: float | None) -> float | None:
    """JSON has no infinity: an unbounded figure is null, and the caller says why."""
    return None if value is None or math.isinf(value) else value


def _first_order(profile: Profile, net: NetworkGiven, eps: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    r, b = net.rtt_us, net.bandwidth_gbps
    if r is not None:
        out["latency_s"] = budget.latency_seconds(profile, r)
    if b is not None:
        out["transfer_s"] = budget.transfer_seconds(profile, b)
    if r is not None and b is not None:
        out["predicted_overhead"] = budget.predicted_overhead(profile, r, b)
    if b is not None:
        out["rtt_max_us"] = budget.rtt_max_us(profile, b, eps)
    if r is not None:
        out["bandwidth_min_gbps"] = budget.bandwidth_min_gbps(profile, r, eps)
    return out


def _feasible(figures: dict[str, Any], eps: float, rtt_floor_us: float | None = None) -> bool:
    """Can the budget be met on the network given? Without an RTT, "some round trip the network
    can reach keeps it": above 0, or at least the kind's floor when an instance type says which
    network it is (an RTT max of 12 µs is no use on a network that never goes below 30)."""
    if "predicted_overhead" in figures:
        return bool(figures["predicted_overhead"] <= eps * (1 + 1e-9))
    if "rtt_max_us" in figures:
        r = figures["rtt_max_us"]
        if r is None:
            return False
        return r >= rtt_floor_us * (1 - 1e-9) if rtt_floor_us is not None else r > 0
    b = figures.get("bandwidth_min_gbps")
    return b is not None and not math.isinf(b)


def assess(profile: Profile, net: NetworkGiven, max_overhead: float, *, top: int = 3,
           profile_path: str | None = None, trace_shown: str | None = None) -> dict[str, Any]:
    """The budget of ``profile`` on ``net`` as a JSON-ready mapping (see the module doc)."""
    if net.rtt_us is None and net.bandwidth_gbps is None:
        raise InputError("expected --rtt-us, --bandwidth-gbps or --instance-type: the budget "
                         "needs at least one figure of the network")
    eps = max_overhead
    first = _first_order(profile, net, eps)
    result: dict[str, Any] = {
        "profile": {
            "name": profile.name,
            "path": profile_path,
            "local_time_s": profile.local_time_s,
            "sync_calls": profile.sync_calls,
            "async_calls": profile.async_calls,
            "local_calls": profile.local_calls,
            "bytes_to_gpu": profile.bytes_to_gpu,
            "bytes_from_gpu": profile.bytes_from_gpu,
            "trace": trace_shown,
        },
        "model": "first-order" if profile.trace is None else "trace-replay",
        "max_overhead": eps,
        "network": {
            "rtt_us": net.rtt_us,
            "bandwidth_gbps": net.bandwidth_gbps,
            "bandwidth_source": net.bandwidth_source,
        },
    }
    if net.kind is not None:
        result["network"].update(_kind_json(net.kind))
    if net.instance is not None:
        t = net.instance
        result["instance_type"] = {
            "instance_type": t.instance_type,
            "gpu_model": t.gpu_model,
            "network_baseline_gbps": t.network_baseline_gbps,
            "network_burst_gbps": t.network_burst_gbps,
            "efa_supported": t.efa_supported,
        }
    if profile.trace is None:
        model, figures = _first_order_model(profile, eps), first
    else:
        rp, local_us = _prepare_trace(profile, result)
        model = _replay_model(rp, local_us, eps)
        figures = _replayed(rp, local_us, model, net, eps, top, result)
    for key in ("predicted_overhead", "rtt_max_us", "bandwidth_min_gbps"):
        if key in figures:
            result[key] = _json_number(figures[key])
    if "rtt_max_us" in figures and figures["rtt_max_us"] == math.inf:
        result["rtt_unbounded"] = True  # null above means "no limit", not "infeasible"
    if figures.get("bandwidth_min_gbps") == 0.0:
        result["bandwidth_unbounded"] = True
    floor = net.kind.rtt_floor_us if net.kind is not None and net.rtt_us is None else None
    result["feasible"] = _feasible(figures, eps, floor)
    result["first_order"] = {k: _json_number(v) for k, v in first.items()}
    if net.instance is not None:
        result["network_kinds"] = _kinds_table(net.instance, model, eps)
    # the first-order budget on a ladder of bandwidths: where this application could run
    result["budget_curve"] = [
        {"bandwidth_gbps": bw, "rtt_max_us": _json_number(budget.rtt_max_us(profile, bw, eps)),
         "unbounded": budget.rtt_max_us(profile, bw, eps) == math.inf}
        for bw in BANDWIDTH_LADDER_GBPS
    ]
    result["advice"] = advice(profile, net, eps, figures, first, result)
    return result


def _kind_json(o: KindOption) -> dict[str, Any]:
    return {"kind": str(o.kind), "kind_label": o.label, "flow_cap_gbps": o.flow_cap_gbps,
            "flow_gbps": o.flow_gbps, "rtt_floor_us": o.rtt_floor_us}


def _kinds_table(instance: InstanceType, model: _Model, eps: float) -> list[dict[str, Any]]:
    """Every network kind of the proxy type with what one flow gets over it, the kind's RTT
    floor, and the budget at those figures: the overhead at (floor, per-flow bandwidth), the
    largest RTT at the per-flow bandwidth, the least per-flow bandwidth at the floor. A kind the
    type does not support is shown with its figures (what it would give) but never meets the
    budget: ``feasible`` is ``supported and meets_budget``."""
    rows = []
    for o in kind_options(instance):
        over = model.overhead(o.rtt_floor_us, o.flow_gbps)
        r_max = model.rtt_max(o.flow_gbps)
        b_min = model.bandwidth_min(o.rtt_floor_us)
        meets = over <= eps * (1 + 1e-9)
        rows.append({
            **_kind_json(o),
            "supported": o.supported,
            "support": o.why,
            "predicted_overhead": over,
            "rtt_max_us": _json_number(r_max),
            "rtt_unbounded": r_max == math.inf,
            "bandwidth_min_gbps": _json_number(b_min),
            "meets_budget": meets,
            "feasible": o.supported and meets,
        })
    return rows


def _prepare_trace(profile: Profile, result: dict[str, Any]) -> tuple[Replayer, float]:
    """Read the profile's trace once, add its counts to ``result``, and prepare its replayer."""
    from gpupool.remoting import replay
    from gpupool.remoting.trace import ASYNC, LOCAL, SYNC, load_trace

    assert profile.trace is not None
    shown = result["profile"]["trace"] or str(profile.trace)
    trace = load_trace(profile.trace, shown)
    local_us = replay.local_time_us(trace)
    if local_us <= 0:
        raise InputError(f"{shown}: expected calls that take time on a local GPU (gap, process "
                         "or block times); every time in the trace is 0")
    result["trace"] = {
        "calls": len(trace),
        "sync_calls": trace.count(SYNC),
        "async_calls": trace.count(ASYNC),
        "local_calls": trace.count(LOCAL),
        "bytes_to_gpu": trace.total_bytes_to_gpu,
        "bytes_from_gpu": trace.total_bytes_from_gpu,
        "local_time_s": local_us / 1e6,
    }
    return replay.Replayer(trace), local_us  # prepared once for every replay that follows


def _replayed(rp: Replayer, local_us: float, model: _Model, net: NetworkGiven, eps: float,
              top: int, result: dict[str, Any]) -> dict[str, Any]:
    """Figures of the per-call replay; adds the what-if table."""
    from gpupool.remoting import replay

    out: dict[str, Any] = {}
    r, b = net.rtt_us, net.bandwidth_gbps
    if r is not None and b is not None:
        out["predicted_overhead"] = model.overhead(r, b)
    if b is not None:
        out["rtt_max_us"] = model.rtt_max(b)
    if r is not None:
        out["bandwidth_min_gbps"] = model.bandwidth_min(r)
    # the what-ifs are replayed at the network given, or at the budget's edge when one figure
    # is missing (there the overhead is ε, and the table shows how far below ε each change goes)
    at_r = r if r is not None else out.get("rtt_max_us")
    at_b = b if b is not None else out.get("bandwidth_min_gbps")
    if at_r is not None and at_b and math.isfinite(at_r) and math.isfinite(at_b):
        net_at = replay.Network(at_r, at_b)
        now = model.overhead(at_r, at_b)
        result["what_if"] = {
            "rtt_us": at_r,
            "bandwidth_gbps": at_b,
            "overhead": now,
            "rows": [
                {"calls": w.calls, "count": w.count, "as_async": w.as_async,
                 "as_local": w.as_local}
                for w in replay.what_if(rp, net_at, top, local_us)
            ],
        }
    return out


def overhead_at(profile: Profile, rtt_us: float, bandwidth_gbps: float) -> float:
    """The predicted overhead alone (no solving, no what-ifs), by the profile's model."""
    if profile.trace is None:
        return budget.predicted_overhead(profile, rtt_us, bandwidth_gbps)
    from gpupool.remoting import replay
    from gpupool.remoting.trace import load_trace

    return replay.overhead(load_trace(profile.trace), replay.Network(rtt_us, bandwidth_gbps))


def _pct(x: float) -> str:
    return f"{x * 100:.3g} %"


def _seconds(s: float) -> str:
    return f"{s * 1e3:,.3g} ms" if s < 1 else f"{s:,.3g} s"


def advice(profile: Profile, net: NetworkGiven, eps: float, figures: dict[str, Any],
           first: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """What to do about the figures, in a reviewer's words; derived, never canned per profile."""
    out: list[str] = []
    allowed = eps * profile.local_time_s
    lat, tx = first.get("latency_s"), first.get("transfer_s")
    if tx is not None and tx > allowed:
        need = budget.bandwidth_min_gbps(profile, 0.0, eps)
        out.append(
            f"The bytes alone take {_seconds(tx)} at {net.bandwidth_gbps:g} Gbps, more than the "
            f"whole budget ({_seconds(allowed)}): even a zero RTT needs at least "
            f"{need:,.3g} Gbps. Keep tensors resident on the GPU between calls, or budget a "
            "network (or a larger proxy baseline) that carries them.")
    if lat is not None and lat > allowed:
        r_need = allowed / profile.sync_calls * 1e6 if profile.sync_calls else math.inf
        out.append(
            f"The {profile.sync_calls:,} synchronous calls alone wait {_seconds(lat)} at "
            f"{net.rtt_us:g} µs, more than the budget ({_seconds(allowed)}): they need an RTT "
            f"under {r_need:.3g} µs, or fewer of them. Send calls without waiting (outstanding "
            "requests) and answer queries from shadows on the client.")
    if lat is not None and tx is not None and lat + tx > 0 and not out:
        share = lat / (lat + tx)
        what = "round trips of synchronous calls" if share >= 0.5 else "bytes moved"
        out.append(f"{share * 100:.0f} % of the network time is {what} (first order): that is "
                   "the lever to pull first.")
    if profile.sync_calls and lat is not None:
        per_k = 1000 * (net.rtt_us or 0.0) * 1e-6 / profile.local_time_s
        out.append(f"Each 1,000 synchronous calls made asynchronous or shadowed save "
                   f"{_pct(per_k)} of the local run at {net.rtt_us:g} µs.")
    wi = result.get("what_if")
    if wi and wi["rows"]:
        best = min(wi["rows"], key=lambda r: min(r["as_async"], r["as_local"] if
                                                  r["as_local"] is not None else math.inf))
        low = min(best["as_async"], best["as_local"] if best["as_local"] is not None
                  else math.inf)
        if low < 0.9 * wi["overhead"]:
            out.append(f"Replayed: changing {best['calls']} ({best['count']:,} calls) takes "
                       f"the overhead from {_pct(wi['overhead'])} to {_pct(low)}.")
        else:
            out.append("Replayed: no single synchronous call name is worth changing here; the "
                       "overhead is elsewhere (bytes, serialising, or work that waits for them).")
    inst = net.instance
    if inst is not None and net.bandwidth_gbps is not None \
            and net.bandwidth_gbps > inst.network_baseline_gbps:
        out.append(f"{net.bandwidth_gbps:g} Gbps is above {inst.instance_type}'s baseline "
                   f"({inst.network_baseline_gbps:g} Gbps): budget against the baseline, the "
                   "burst ('up to') figure is not sustained.")
    elif net.kind is not None and net.bandwidth_gbps is not None \
            and net.bandwidth_gbps > net.kind.flow_gbps:
        out.append(f"{net.bandwidth_gbps:g} Gbps is more than one flow of {net.kind.label} "
                   f"gets on {inst.instance_type if inst else 'this type'} "
                   f"({net.kind.flow_gbps:g} Gbps): a remoting client's calls travel on one "
                   "connection; budget against the per-flow figure.")
    if inst is not None and net.kind is not None:
        out.extend(_kind_advice(inst, net.kind, result))
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


def _kind_advice(inst: InstanceType, kind: KindOption, result: dict[str, Any]) -> list[str]:
    """Which of the type's network kinds meets the budget, when the one budgeted does not."""
    rows = result.get("network_kinds") or []
    if result["feasible"] or not rows:
        return []
    better = [r for r in rows if r["feasible"] and r["kind"] != str(kind.kind)]
    if better:
        return [f"{r['kind_label']} on {inst.instance_type} meets the budget: "
                f"{_pct(r['predicted_overhead'])} at its ~{r['rtt_floor_us']:g} µs floor and "
                f"{r['flow_gbps']:g} Gbps per flow (--network {r['kind']})." for r in better]
    elsewhere = [r for r in rows if r["meets_budget"] and not r["supported"]]
    if elsewhere:
        return [f"{r['kind_label']} would meet the budget ({_pct(r['predicted_overhead'])} at "
                f"~{r['rtt_floor_us']:g} µs and {r['flow_gbps']:g} Gbps per flow), but "
                f"{inst.instance_type} lacks it ({r['support']}): a type with it would do."
                for r in elsewhere]
    return [f"None of {inst.instance_type}'s network kinds meets the budget at its RTT floor "
            "and per-flow bandwidth: make calls asynchronous, shadow them, move fewer bytes, "
            "or keep the GPU local."]


def budget_tags(net: NetworkGiven, figures: dict[str, Any]) -> tuple[float, float] | None:
    """(max RTT µs, min Gbps): a pair on the budget's edge, for the tier's budget tags."""
    r_max, b_min = figures.get("rtt_max_us"), figures.get("bandwidth_min_gbps")
    if net.bandwidth_gbps is not None and r_max is not None and math.isfinite(r_max) \
            and r_max > 0:
        return r_max, net.bandwidth_gbps
    if net.rtt_us is not None and b_min is not None and math.isfinite(b_min) and b_min > 0:
        return net.rtt_us, b_min
    return None


def shown_path(path: Path) -> str:
    """A path relative to the working directory when it lies under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)
