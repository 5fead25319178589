"""The budget on a replay: the largest RTT and the least bandwidth within an overhead.

The replayed run time is convex, piecewise linear and non-decreasing in the RTT and in 1/BW, in
either latency model (:mod:`gpupool.remoting.replay`), so the edge of the budget is found by
bracketing and regula falsi on a few replays (:func:`_largest_within`). A :class:`Replayer`
carries its latency model; a bare trace is replayed pipelined.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from gpupool.remoting.latency import Latency
from gpupool.remoting.replay import Network, Replayer, local_time_us, prepared
from gpupool.remoting.trace import ASYNC, SYNC, Trace


def _largest_within(
    f: Callable[[float], float], target: float, start: float, cap: float
) -> float | None:
    """Largest u ≥ 0 with f(u) ≤ target, for f convex and non-decreasing; inf past ``cap``.

    Convexity gives a bracket cheaply: the chord from 0 through a point under the target,
    extended, lies under f, so where it reaches the target f is already at or over it. The
    bracket is then closed by the Illinois variant of regula falsi, which keeps a point within
    the budget at every step and, on a piecewise linear f, ends in a few evaluations.
    """
    tol = 1e-9 * max(abs(target), 1.0)
    f0 = f(0.0)
    if f0 > target + tol:
        return None
    lo, f_lo = 0.0, f0
    hi = max(start, 1e-6)
    f_hi = f(hi)
    while f_hi <= target:
        if hi > cap:
            return math.inf
        lo, f_lo = hi, f_hi
        grow = (target - f_hi) * hi / (f_hi - f0) if f_hi > f0 else 3.0 * hi
        hi = hi + max(grow, 1e-3 * hi)
        f_hi = f(hi)
    side = 0
    for _ in range(100):
        if f_hi - f_lo <= tol or hi - lo <= 1e-12 * hi:
            break
        u = hi - (f_hi - target) * (hi - lo) / (f_hi - f_lo)
        u = min(max(u, lo), hi)
        fu = f(u)
        if abs(fu - target) <= tol:
            return u if fu <= target + tol else lo
        if fu < target:
            lo, f_lo = u, fu
            if side == -1:
                f_hi = target + (f_hi - target) / 2.0  # Illinois: halve the stale end
            side = -1
        else:
            hi, f_hi = u, fu
            if side == 1:
                f_lo = target - (target - f_lo) / 2.0
            side = 1
    return lo


def rtt_max_us(trace: Trace | Replayer, bandwidth_gbps: float, max_overhead: float,
               local_us: float | None = None, from_gpu_gbps: float | None = None
               ) -> float | None:
    """Largest RTT (µs) with the replayed overhead ≤ ``max_overhead`` at ``bandwidth_gbps``
    (and ``from_gpu_gbps`` GPU → client, when given).

    None when even a zero RTT exceeds the budget; ``math.inf`` when no RTT would.
    """
    replayer = prepared(trace)
    local_us = local_time_us(replayer.trace) if local_us is None else local_us
    waits = int(np.count_nonzero(replayer.kind == SYNC))
    if replayer.latency is Latency.SERIALISED:  # the link carries every sent call's RTT/2 in turn
        waits += int(np.count_nonzero(replayer.kind == ASYNC)) // 2
    return _largest_within(
        lambda r: replayer.run_time_us(Network(r, bandwidth_gbps, from_gpu_gbps)),
        (1.0 + max_overhead) * local_us,
        start=max_overhead * local_us / max(waits, 1),  # first order, bytes ignored
        cap=1e12,
    )


def bandwidth_min_gbps(trace: Trace | Replayer, rtt_us: float, max_overhead: float,
                       local_us: float | None = None) -> float | None:
    """Least bandwidth (Gbit/s) with the replayed overhead ≤ ``max_overhead`` at ``rtt_us``.

    None when even an infinite bandwidth exceeds the budget; 0.0 when any bandwidth will do.
    """
    replayer = prepared(trace)
    trace = replayer.trace
    local_us = local_time_us(trace) if local_us is None else local_us

    def at(w: float) -> float:  # w = 1 / bandwidth in Gbit/s
        return replayer.run_time_us(Network(rtt_us, math.inf if w == 0 else 1.0 / w))

    bits = 8.0 * (trace.total_bytes_to_gpu + trace.total_bytes_from_gpu)
    start = max_overhead * local_us * 1e3 / bits if bits else 1.0  # first order: 1/Gbps
    w = _largest_within(at, (1.0 + max_overhead) * local_us, start=start, cap=1e12)
    if w is None or w == 0:
        return None
    return 0.0 if math.isinf(w) else 1.0 / w


def direction_min_gbps(trace: Trace | Replayer, rtt_us: float, max_overhead: float,
                       to_gpu: bool, other_gbps: float, local_us: float | None = None
                       ) -> float | None:
    """Least bandwidth of ONE direction (client → GPU when ``to_gpu``, else GPU → client) with
    the replayed overhead ≤ ``max_overhead`` at ``rtt_us``, the other direction at
    ``other_gbps``. None when even an infinite bandwidth exceeds the budget; 0.0 when any will.
    """
    replayer = prepared(trace)
    trace = replayer.trace
    local_us = local_time_us(trace) if local_us is None else local_us

    def at(w: float) -> float:  # w = 1 / bandwidth in Gbit/s of the direction asked about
        mine = math.inf if w == 0 else 1.0 / w
        net = (Network(rtt_us, mine, other_gbps) if to_gpu
               else Network(rtt_us, other_gbps, mine))
        return replayer.run_time_us(net)

    bits = 8.0 * (trace.total_bytes_to_gpu if to_gpu else trace.total_bytes_from_gpu)
    start = max_overhead * local_us * 1e3 / bits if bits else 1.0
    w = _largest_within(at, (1.0 + max_overhead) * local_us, start=start, cap=1e12)
    if w is None or w == 0:
        return None
    return 0.0 if math.isinf(w) else 1.0 / w
