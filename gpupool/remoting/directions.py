"""The budget on a path whose two directions were measured apart (``gpupool netcheck probe``).

``bytes_to_gpu`` cross the client → GPU direction and ``bytes_from_gpu`` the GPU → client one;
a measured path need not be symmetric (asymmetric shaping, a busy proxy NIC, different instance
types at the two ends), so each direction's bytes are charged at that direction's bandwidth,
by the profile's own model (first order, or the per-call replay of its trace).

Each direction is also judged on its own: the least bandwidth it needs, at the median RTT and
with the other direction as measured. The budget is met exactly when both directions reach
their least bandwidth, so the per-direction figures say which direction fails it, and by how
much, where one overall figure would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpupool.remoting import budget
from gpupool.remoting.latency import Latency
from gpupool.remoting.profile import Profile

TO_GPU_LABEL = "client to GPU (bytes_to_gpu)"
FROM_GPU_LABEL = "GPU to client (bytes_from_gpu)"


@dataclass(frozen=True)
class Measured:
    """What the probe measured: median and p99 RTT (µs), each direction's Gbit/s."""

    rtt_p50_us: float
    rtt_p99_us: float
    to_gpu_gbps: float
    from_gpu_gbps: float


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isinf(x) else x


def judge_directions(profile: Profile, m: Measured, max_overhead: float,
                     latency: Latency = Latency.PIPELINED) -> dict[str, Any]:
    """JSON-ready figures: ``predicted_overhead`` (at p50, each direction at its bandwidth),
    ``predicted_overhead_at_p99``, ``rtt_max_us`` (at both measured bandwidths), ``directions``
    (``to_gpu`` / ``from_gpu``: measured, bytes, least bandwidth, meets) and ``feasible``."""
    eps = max_overhead
    if profile.trace is None:
        to_bytes, from_bytes = profile.bytes_to_gpu, profile.bytes_from_gpu

        def overhead(rtt: float) -> float:
            return budget.predicted_overhead(profile, rtt, m.to_gpu_gbps, m.from_gpu_gbps,
                                             latency)

        r_max = budget.rtt_max_us(profile, m.to_gpu_gbps, eps, m.from_gpu_gbps, latency)
        mins = {
            budget.TO_GPU: budget.direction_min_gbps(profile, m.rtt_p50_us, eps, budget.TO_GPU,
                                                     m.from_gpu_gbps, latency),
            budget.FROM_GPU: budget.direction_min_gbps(profile, m.rtt_p50_us, eps,
                                                       budget.FROM_GPU, m.to_gpu_gbps, latency),
        }
    else:
        from gpupool.remoting import replay, solve
        from gpupool.remoting.trace import load_trace

        rp = replay.Replayer(load_trace(profile.trace), latency=latency)
        local_us = replay.local_time_us(rp.trace)
        to_bytes, from_bytes = rp.trace.total_bytes_to_gpu, rp.trace.total_bytes_from_gpu

        def overhead(rtt: float) -> float:
            net = replay.Network(rtt, m.to_gpu_gbps, m.from_gpu_gbps)
            return replay.overhead(rp, net, local_us)

        r_max = solve.rtt_max_us(rp, m.to_gpu_gbps, eps, local_us, m.from_gpu_gbps)
        mins = {
            budget.TO_GPU: solve.direction_min_gbps(rp, m.rtt_p50_us, eps, True,
                                                    m.from_gpu_gbps, local_us),
            budget.FROM_GPU: solve.direction_min_gbps(rp, m.rtt_p50_us, eps, False,
                                                      m.to_gpu_gbps, local_us),
        }
    over = overhead(m.rtt_p50_us)
    directions = {}
    for key, label, gbps, moved in ((budget.TO_GPU, TO_GPU_LABEL, m.to_gpu_gbps, to_bytes),
                                    (budget.FROM_GPU, FROM_GPU_LABEL, m.from_gpu_gbps,
                                     from_bytes)):
        need = mins[key]
        directions[key] = {
            "direction": label,
            "measured_gbps": gbps,
            "bytes": moved,
            "transfer_s": 8.0 * moved / (gbps * budget.GBPS),
            "min_gbps": need,  # null: the rest of the budget is gone whatever this one does
            "meets": need is not None and gbps >= need * (1 - 1e-9),
        }
    return {
        "predicted_overhead": over,
        "predicted_overhead_at_p99": overhead(m.rtt_p99_us),
        "rtt_max_us": _finite(r_max),
        "rtt_unbounded": r_max == math.inf,
        "directions": directions,
        "feasible": over <= eps * (1 + 1e-9),
    }
