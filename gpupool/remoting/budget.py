"""The first-order remoting budget: how much slower an application runs with a remote GPU.

Wang et al. (arXiv 2401.13354) model the cost of API remoting per call; summed over a run and
with asynchronous calls fully hidden behind the GPU's work, it reduces to

    overhead = (sync_calls x RTT + 8 x (bytes_to_gpu + bytes_from_gpu) / BW) / local_time_s

a fraction of the local run time (0.05 = 5 % slower). Every synchronous call waits one round
trip; every byte crosses the network once. Asynchronous calls (outstanding requests) and calls
answered on the client (shadow resources) cost nothing here: that is the point of those
optimisations, and the per-call replay (:mod:`gpupool.remoting.replay`) checks how far it holds.

Units are the paper's and the data centre's: RTT in microseconds, bandwidth in Gbit/s (10⁹
bit/s), bytes in bytes. Solving the inequality ``overhead ≤ ε`` for one variable gives the
largest RTT (at a bandwidth) or the least bandwidth (at an RTT). ``None`` means infeasible: the
other term alone already exceeds ε, so no value of the unknown can help; never a negative RTT.

With ``latency=serialised`` (the authors' model, :mod:`gpupool.remoting.latency`) the link
carries every request's RTT/2 one after another: ``async_calls x RTT/2 + sync_calls x RTT +
bytes / BW`` is then a floor of the remote run whatever the application overlaps, and the part
of it beyond the local run is added (the run is link-bound)::

    overhead = (sync_calls x RTT + bytes / BW + max(0, async_calls x RTT/2 - local_time_s))
               / local_time_s

Both forms are linear in RTT and 1/BW piece by piece, so the budget still solves in closed form.
"""

from __future__ import annotations

import math
from typing import Protocol

from gpupool.remoting.latency import Latency

US = 1e-6  # seconds per microsecond
GBPS = 1e9  # bits per second per Gbit/s


class Demand(Protocol):
    """What the budget needs of a profile (a :class:`~gpupool.remoting.profile.Profile`)."""

    @property
    def local_time_s(self) -> float: ...
    @property
    def sync_calls(self) -> int: ...
    @property
    def async_calls(self) -> int: ...
    @property
    def bytes_to_gpu(self) -> float: ...
    @property
    def bytes_from_gpu(self) -> float: ...


def _check(name: str, value: float, positive: bool = True) -> None:
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        kind = "a positive" if positive else "a non-negative"
        raise ValueError(f"{name}: expected {kind} finite number, got {value!r}")


def latency_seconds(profile: Demand, rtt_us: float) -> float:
    """Time the synchronous calls spend waiting for round trips."""
    return profile.sync_calls * rtt_us * US


def link_excess_seconds(profile: Demand, rtt_us: float, latency: Latency) -> float:
    """Serialised latency only: how far the link's own time for the one-way trips of the
    asynchronous calls (``async_calls x RTT/2``) runs past the local run; 0 when pipelined."""
    if latency is not Latency.SERIALISED:
        return 0.0
    return max(0.0, profile.async_calls * rtt_us / 2 * US - profile.local_time_s)


def _hops(profile: Demand) -> float:
    """Round trips the serialised link carries in turn: one per sync call, half per async."""
    return profile.sync_calls + profile.async_calls / 2


def transfer_seconds(profile: Demand, bandwidth_gbps: float,
                     from_gpu_gbps: float | None = None) -> float:
    """Time the bytes (both directions, one after the other) spend on the wire.

    ``from_gpu_gbps``: the GPU → client direction's bandwidth when it differs from the client →
    GPU one (a measured path need not be symmetric); ``bytes_from_gpu`` cross at it.
    """
    back = bandwidth_gbps if from_gpu_gbps is None else from_gpu_gbps
    return 8.0 * (profile.bytes_to_gpu / (bandwidth_gbps * GBPS)
                  + profile.bytes_from_gpu / (back * GBPS))


def predicted_overhead(profile: Demand, rtt_us: float, bandwidth_gbps: float,
                       from_gpu_gbps: float | None = None,
                       latency: Latency = Latency.PIPELINED) -> float:
    """Slowdown as a fraction of the local run time (0.05 = 5 %) at an RTT and a bandwidth
    (``bandwidth_gbps`` both ways, or client → GPU only when ``from_gpu_gbps`` is given)."""
    _check("rtt_us", rtt_us, positive=False)
    _check("bandwidth_gbps", bandwidth_gbps)
    if from_gpu_gbps is not None:
        _check("from_gpu_gbps", from_gpu_gbps)
    network = (latency_seconds(profile, rtt_us)
               + transfer_seconds(profile, bandwidth_gbps, from_gpu_gbps)
               + link_excess_seconds(profile, rtt_us, latency))
    return network / profile.local_time_s


def rtt_max_us(profile: Demand, bandwidth_gbps: float, max_overhead: float,
               from_gpu_gbps: float | None = None,
               latency: Latency = Latency.PIPELINED) -> float | None:
    """The largest RTT (µs) that keeps the overhead ≤ ``max_overhead`` at ``bandwidth_gbps``
    (and ``from_gpu_gbps`` for the bytes from the GPU, when given).

    ``math.inf`` when the profile has no synchronous calls and the bytes fit (any RTT will do);
    ``None`` when the bytes alone exceed the budget, or exactly fill it while synchronous calls
    remain (then only a zero RTT would do, which no network has).
    """
    _check("bandwidth_gbps", bandwidth_gbps)
    _check("max_overhead", max_overhead)
    if from_gpu_gbps is not None:
        _check("from_gpu_gbps", from_gpu_gbps)
    bytes_s = transfer_seconds(profile, bandwidth_gbps, from_gpu_gbps)
    slack = max_overhead * profile.local_time_s - bytes_s
    if slack < 0:
        return None
    # overhead ≤ ε is every piece within it: the round trips in what the bytes leave of ε·T,
    # and (serialised) the whole chain of trips within (1 + ε)·T
    limits = [math.inf if profile.sync_calls == 0 else slack / (profile.sync_calls * US)]
    if latency is Latency.SERIALISED and _hops(profile) > 0:
        limits.append(((1 + max_overhead) * profile.local_time_s - bytes_s)
                      / (_hops(profile) * US))
    if slack == 0 and profile.sync_calls:
        return None
    return min(limits)


def _slack_s(profile: Demand, rtt_us: float, max_overhead: float, latency: Latency) -> float:
    """What the round trips leave of the budget for the bytes (seconds)."""
    slack = max_overhead * profile.local_time_s - latency_seconds(profile, rtt_us)
    if latency is Latency.SERIALISED:
        chain = (1 + max_overhead) * profile.local_time_s - _hops(profile) * rtt_us * US
        slack = min(slack, chain)
    return slack


def bandwidth_min_gbps(profile: Demand, rtt_us: float, max_overhead: float,
                       latency: Latency = Latency.PIPELINED) -> float | None:
    """The least bandwidth (Gbit/s) that keeps the overhead ≤ ``max_overhead`` at ``rtt_us``.

    ``0.0`` when the profile moves no bytes and its round trips fit; ``None`` when the round
    trips alone exceed the budget (or exactly fill it while bytes remain to move).
    """
    _check("rtt_us", rtt_us, positive=False)
    _check("max_overhead", max_overhead)
    slack = _slack_s(profile, rtt_us, max_overhead, latency)
    bits = 8.0 * (profile.bytes_to_gpu + profile.bytes_from_gpu)
    if slack < 0:
        return None
    if bits == 0:
        return 0.0
    if slack == 0:
        return None
    return bits / slack / GBPS


TO_GPU = "to_gpu"
FROM_GPU = "from_gpu"


def direction_min_gbps(profile: Demand, rtt_us: float, max_overhead: float, direction: str,
                       other_gbps: float, latency: Latency = Latency.PIPELINED) -> float | None:
    """The least bandwidth of ONE direction (``TO_GPU``: client → GPU, carrying
    ``bytes_to_gpu``; ``FROM_GPU``: GPU → client, ``bytes_from_gpu``) that keeps the overhead
    ≤ ``max_overhead`` at ``rtt_us`` while the other direction runs at ``other_gbps``.

    Each direction is judged against what the round trips and the other direction leave of the
    budget: the overhead is within it exactly when both directions reach their least bandwidth.
    ``0.0`` when this direction moves no bytes and the rest fits; ``None`` when the round trips
    and the other direction's bytes alone use the whole budget.
    """
    _check("rtt_us", rtt_us, positive=False)
    _check("max_overhead", max_overhead)
    _check("other_gbps", other_gbps)
    if direction not in (TO_GPU, FROM_GPU):
        raise ValueError(f"direction: expected {TO_GPU!r} or {FROM_GPU!r}, got {direction!r}")
    mine, other = ((profile.bytes_to_gpu, profile.bytes_from_gpu) if direction == TO_GPU
                   else (profile.bytes_from_gpu, profile.bytes_to_gpu))
    slack = (_slack_s(profile, rtt_us, max_overhead, latency)
             - 8.0 * other / (other_gbps * GBPS))
    if slack < 0:
        return None
    if mine == 0:
        return 0.0
    if slack == 0:
        return None
    return 8.0 * mine / slack / GBPS
