"""What is known of the network, and the profile's model (first order, or the replay of its
trace) as three cached questions.

``gpupool remoting`` asks the same questions many times over: the headline figures, the proxy
type's network kinds (TCP and ENA Express share an RTT floor; small types share one per-flow
figure across kinds) and the search for the cheapest type and kind in the catalog. Each answer
is computed once per (RTT, bandwidth).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from gpupool.catalog import InstanceType
from gpupool.remoting import budget
from gpupool.remoting.kinds import KindOption
from gpupool.remoting.latency import Latency
from gpupool.remoting.profile import Profile

if TYPE_CHECKING:
    from gpupool.remoting.replay import Replayer


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
class Model:
    latency: Latency
    overhead: Callable[[float, float], float]  # (RTT µs, Gbps) -> overhead
    rtt_max: Callable[[float], float | None]  # Gbps -> largest RTT (µs)
    bandwidth_min: Callable[[float], float | None]  # RTT µs -> least Gbps


def first_order_model(profile: Profile, eps: float, latency: Latency) -> Model:
    return Model(
        latency=latency,
        overhead=cache(lambda r, b: budget.predicted_overhead(profile, r, b, latency=latency)),
        rtt_max=cache(lambda b: budget.rtt_max_us(profile, b, eps, latency=latency)),
        bandwidth_min=cache(lambda r: budget.bandwidth_min_gbps(profile, r, eps, latency)),
    )


def replay_model(rp: Replayer, local_us: float, eps: float) -> Model:
    """The replay of ``rp`` (under its own latency model)."""
    from gpupool.remoting import replay, solve

    return Model(
        latency=rp.latency,
        overhead=cache(lambda r, b: replay.overhead(rp, replay.Network(r, b), local_us)),
        rtt_max=cache(lambda b: solve.rtt_max_us(rp, b, eps, local_us)),
        bandwidth_min=cache(lambda r: solve.bandwidth_min_gbps(rp, r, eps, local_us)),
    )
