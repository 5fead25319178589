"""One answer to "is this network good enough for this application?", for the CLI and tools.

:func:`assess` takes a profile and whatever is known of the network (RTT, bandwidth, or both)
and returns the figures ``gpupool remoting`` prints, as a JSON-ready mapping whose keys
DESIGN.md fixes: ``profile``, ``max_overhead``, ``predicted_overhead`` (RTT and bandwidth
known), ``rtt_max_us`` (bandwidth known), ``bandwidth_min_gbps`` (RTT known), ``feasible``.

With a trace the figures come from the per-call replay (:mod:`gpupool.remoting.replay`) and the
first-order figures are given beside them (``first_order``), because the gap between the two is
what asynchronous calls and shadows already hide. ``latency`` says how requests in flight pay
the RTT (:mod:`gpupool.remoting.latency`); the other model's figures are given beside them
(``other_latency``). Advice is derived from the figures (:mod:`gpupool.remoting.advice`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpupool.errors import InputError
from gpupool.remoting import budget
from gpupool.remoting.advice import advice
from gpupool.remoting.latency import Latency
from gpupool.remoting.models import Model, NetworkGiven, first_order_model, replay_model
from gpupool.remoting.options import (
    cheapest_proxy,
    json_number,
    kind_json,
    kinds_table,
    lowest_floor,
    meets,
)
from gpupool.remoting.profile import Profile

if TYPE_CHECKING:
    from gpupool.remoting.replay import Replayer

__all__ = ["NetworkGiven", "assess", "shown_path"]

# What a reference ladder of networks allows, shown when only one figure is known.
BANDWIDTH_LADDER_GBPS = (5.0, 10.0, 25.0, 50.0, 100.0, 200.0, 400.0)
HEADLINE = ("predicted_overhead", "rtt_max_us", "bandwidth_min_gbps")


def _first_order(profile: Profile, net: NetworkGiven, eps: float,
                 latency: Latency) -> dict[str, Any]:
    out: dict[str, Any] = {}
    r, b = net.rtt_us, net.bandwidth_gbps
    if r is not None:
        out["latency_s"] = budget.latency_seconds(profile, r)
        if latency is Latency.SERIALISED:
            out["link_excess_s"] = budget.link_excess_seconds(profile, r, latency)
    if b is not None:
        out["transfer_s"] = budget.transfer_seconds(profile, b)
    if r is not None and b is not None:
        out["predicted_overhead"] = budget.predicted_overhead(profile, r, b, latency=latency)
    if b is not None:
        out["rtt_max_us"] = budget.rtt_max_us(profile, b, eps, latency=latency)
    if r is not None:
        out["bandwidth_min_gbps"] = budget.bandwidth_min_gbps(profile, r, eps, latency)
    return out


def _headline(model: Model, net: NetworkGiven, deciding_only: bool = False) -> dict[str, Any]:
    """The model's answers to what the network given leaves open."""
    out: dict[str, Any] = {}
    r, b = net.rtt_us, net.bandwidth_gbps
    if r is not None and b is not None:
        out["predicted_overhead"] = model.overhead(r, b)
        if deciding_only:
            return out
    if b is not None:
        out["rtt_max_us"] = model.rtt_max(b)
    if r is not None:
        out["bandwidth_min_gbps"] = model.bandwidth_min(r)
    return out


def _feasible(figures: dict[str, Any], eps: float, rtt_floor_us: float) -> bool:
    """Can the budget be met on the network given? Without an RTT, "some round trip the network
    can reach keeps it": at least the floor of the kind budgeted (an RTT max of 12 µs is no use
    on a network that never goes below 30), or of the fastest kind when none is named."""
    if "predicted_overhead" in figures:
        return meets(figures["predicted_overhead"], eps)
    if "rtt_max_us" in figures:
        r = figures["rtt_max_us"]
        return r is not None and r >= rtt_floor_us * (1 - 1e-9)
    b = figures.get("bandwidth_min_gbps")
    return b is not None and not math.isinf(b)


def assess(profile: Profile, net: NetworkGiven, max_overhead: float, *, top: int = 3,
           profile_path: str | None = None, trace_shown: str | None = None,
           latency: Latency = Latency.PIPELINED, cheapest: bool = True) -> dict[str, Any]:
    """The budget of ``profile`` on ``net`` as a JSON-ready mapping (see the module doc);
    ``cheapest``: also search the catalog for the cheapest proxy type and kind."""
    if net.rtt_us is None and net.bandwidth_gbps is None:
        raise InputError("expected --rtt-us, --bandwidth-gbps or --instance-type: the budget "
                         "needs at least one figure of the network")
    eps, latency = max_overhead, Latency(latency)
    other = Latency.PIPELINED if latency is Latency.SERIALISED else Latency.SERIALISED
    first = _first_order(profile, net, eps, latency)
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
        "latency": str(latency),
        "max_overhead": eps,
        "network": {
            "rtt_us": net.rtt_us,
            "bandwidth_gbps": net.bandwidth_gbps,
            "bandwidth_source": net.bandwidth_source,
        },
    }
    if net.kind is not None:
        result["network"].update(kind_json(net.kind))
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
        model, figures = first_order_model(profile, eps, latency), first
        other_model = first_order_model(profile, eps, other)
    else:
        rp, local_us = _prepare_trace(profile, result, latency)
        model = replay_model(rp, local_us, eps)
        other_model = replay_model(rp.with_latency(other), local_us, eps)
        figures = _headline(model, net)
        _what_if(rp, local_us, model, net, figures, top, result)
    for key in HEADLINE:
        if key in figures:
            result[key] = json_number(figures[key])
    if "rtt_max_us" in figures and figures["rtt_max_us"] == math.inf:
        result["rtt_unbounded"] = True  # null above means "no limit", not "infeasible"
    if figures.get("bandwidth_min_gbps") == 0.0:
        result["bandwidth_unbounded"] = True
    # the other model's deciding figure only (the overhead when both are known), not all three:
    # every solve is several replays of the trace
    theirs = _headline(other_model, net, deciding_only=True)
    result["other_latency"] = {"latency": str(other), "rtt_unbounded": theirs.get(
        "rtt_max_us") == math.inf, **{k: json_number(v) for k, v in theirs.items()}}
    if net.kind is not None:
        floor = net.kind.rtt_floor_us
    else:
        low_kind, floor = lowest_floor()
        if net.rtt_us is None and figures.get("rtt_max_us") is not None:
            result["lowest_rtt_floor"] = {"kind": str(low_kind), "rtt_floor_us": floor,
                                          "below": figures["rtt_max_us"] < floor * (1 - 1e-9)}
    result["feasible"] = _feasible(figures, eps, floor)
    result["first_order"] = {k: json_number(v) for k, v in first.items()}
    if net.instance is not None:
        result["network_kinds"] = kinds_table(net.instance, model, eps)
    if cheapest:
        from gpupool.catalog import load_catalog

        result["cheapest_proxy"] = cheapest_proxy(load_catalog(), model, eps, net.instance)
    # the first-order budget on a ladder of bandwidths: where this application could run
    ladder = [(bw, budget.rtt_max_us(profile, bw, eps, latency=latency))
              for bw in BANDWIDTH_LADDER_GBPS]
    result["budget_curve"] = [{"bandwidth_gbps": bw, "rtt_max_us": json_number(r),
                               "unbounded": r == math.inf} for bw, r in ladder]
    result["advice"] = advice(profile, net, eps, figures, first, result)
    return result


def _prepare_trace(profile: Profile, result: dict[str, Any],
                   latency: Latency) -> tuple[Replayer, float]:
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
    # prepared once for every replay that follows
    return replay.Replayer(trace, latency=latency), local_us


def _what_if(rp: Replayer, local_us: float, model: Model, net: NetworkGiven,
             figures: dict[str, Any], top: int, result: dict[str, Any]) -> None:
    """The what-if table, replayed at the network given, or at the budget's edge when one
    figure is missing (there the overhead is ε, and the table shows how far below ε each change
    goes)."""
    from gpupool.remoting import replay, whatif

    at_r = net.rtt_us if net.rtt_us is not None else figures.get("rtt_max_us")
    at_b = (net.bandwidth_gbps if net.bandwidth_gbps is not None
            else figures.get("bandwidth_min_gbps"))
    if at_r is None or not at_b or not math.isfinite(at_r) or not math.isfinite(at_b):
        return
    result["what_if"] = {
        "rtt_us": at_r,
        "bandwidth_gbps": at_b,
        "overhead": model.overhead(at_r, at_b),
        "rows": [
            {"calls": w.calls, "count": w.count, "as_async": w.as_async, "as_local": w.as_local}
            for w in whatif.what_if(rp, replay.Network(at_r, at_b), top, local_us)
        ],
    }


def shown_path(path: Path) -> str:
    """A path relative to the working directory when it lies under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)
