"""Stack models of remote-GPU proxy tiers (``gpupool:remoteGpu``) and how a tier is sized.

A tier serves GPUs to CPU-only clients over GPU API remoting: proxy hosts own the GPUs, clients
send CUDA calls over the network. Each tier is a GPU pool (it inherits every pool key: GPU,
sizes, spot, target utilisation, chargeback) plus what the network needs: the remoting port, the
one subnet it runs in, an optional client group, and its *budget*, the bandwidth and round-trip
time the application tolerates (DESIGN.md, idea 2).

Where the clients run sets what one flow gets (EC2's single-flow limit): 10 Gbps when they are
in the proxies' cluster placement group, 5 Gbps when they are not. A tier's client group always
launches into that group; clients the tier does not launch are taken to be outside it unless
``clientsInPlacementGroup: true`` says the services using the tier launch into it (the tier's
``placementGroupName`` output). The budget is sized, and tagged (``gpupool:remoting-clients``),
for where they are.

Sizing follows both ideas at once: the proxy is the smallest size for the GPU, unless the budget
needs more bandwidth per flow than that size's *baseline*; then it is the cheapest size of the
same GPU whose baseline meets the budget, never beyond (:mod:`gpupool.catalog.network`). A
budget no size or network kind can meet is a stack error, so a tier that validates also passes
the ``gpu-proxy-network-budget`` policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.network import (
    DEFAULT_RTT_FLOOR_US,
    KIND_LABELS,
    NetworkData,
    NetworkKind,
    best_kind,
    flow_cap_gbps,
    flow_gbps,
    kind_label,
    load_network_data,
    single_gpu_sizes,
    smallest_for_bandwidth,
)
from gpupool.config.pool import _SUBNET_ID, GpuPoolConfig, _Model, cross_field_error
from gpupool.config.remoting_keys import (  # the keys Kubernetes proxies share
    RTT_CEILING_US,
    BudgetConfig,
    ProfileProblem,
    RemotingPort,
    load_budget_profile,
    tag_number,
)
from gpupool.tags import CLIENTS_IN_GROUP, CLIENTS_OUTSIDE, CLIENTS_TAG, MAX_RTT_TAG, MIN_GBPS_TAG

_INSTANCE_TYPE = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"


class ClientGroupConfig(_Model):
    """CPU-only clients the tier launches next to its proxies (same placement group)."""

    instance_type: Annotated[str, Field(pattern=_INSTANCE_TYPE)]
    min_size: Annotated[int, Field(ge=0, le=1000)] = 0
    max_size: Annotated[int, Field(ge=1, le=1000)]
    desired_capacity: Annotated[int | None, Field(ge=0, le=1000)] = None
    root_volume_gib: Annotated[int, Field(ge=8, le=16384)] = 30

    @field_validator("instance_type")
    @classmethod
    def _cpu_type(cls, v: str) -> str:
        data = load_network_data()
        row = data.get(v)
        if row is None or row.gpu:
            known = ", ".join(sorted({t.split(".")[0] for t in data.client_types()}))
            why = ": it carries a GPU, and clients are CPU-only" if row is not None else ""
            raise ValueError(f"expected a CPU instance type of a client family ({known}), "
                             f"got {v!r}{why}")
        return v

    @model_validator(mode="after")
    def _sizes(self) -> ClientGroupConfig:
        if self.min_size > self.max_size:
            raise ValueError(f"expected minSize ({self.min_size}) at most maxSize "
                             f"({self.max_size})")
        if self.desired_capacity is not None and not (
                self.min_size <= self.desired_capacity <= self.max_size):
            raise ValueError(f"expected desiredCapacity between minSize ({self.min_size}) and "
                             f"maxSize ({self.max_size}), got {self.desired_capacity}")
        return self


def client_placement_problem(has_clients: bool, in_group: bool | None) -> str | None:
    """A client group always runs in the tier's placement group: false contradicts it."""
    if has_clients and in_group is False:
        return ("expected true or no value: the tier launches its client group (clients) into "
                "its placement group, got false")
    return None


class RemoteGpuTierConfig(GpuPoolConfig):
    """One proxy tier: a GPU pool in one subnet and a cluster placement group, with a budget."""

    port: RemotingPort
    budget: BudgetConfig
    subnet_id: Annotated[str | None, Field(pattern=_SUBNET_ID)] = None
    clients: ClientGroupConfig | None = None
    # None: in the group exactly when the tier launches its client group (always into it);
    # true: the services using the tier launch into its placement group (a promise the stack
    # makes; the tier outputs placementGroupName for them)
    clients_in_placement_group: bool | None = None
    network_kind: Literal["auto", "tcp"] = "auto"  # auto: ENA Express where both ends have it

    @model_validator(mode="after")
    def _client_placement(self) -> RemoteGpuTierConfig:
        problem = client_placement_problem(self.clients is not None,
                                           self.clients_in_placement_group)
        if problem:
            raise cross_field_error("clientsInPlacementGroup", problem)
        return self

    @property
    def clients_in_group(self) -> bool:
        """Do the tier's clients run in its cluster placement group (10 Gbps per flow)?"""
        if self.clients_in_placement_group is None:
            return self.clients is not None
        return self.clients_in_placement_group


# --------------------------------------------------------------------------- sizing


@dataclass(frozen=True, slots=True)
class ResolvedTier:
    """What a tier runs on and the budget its resources carry as tags."""

    name: str
    proxy: InstanceType
    smallest: InstanceType
    kind: NetworkKind
    flow_gbps: float  # what one flow can count on (baseline capped per flow)
    rtt_floor_us: float
    min_gbps: float
    max_rtt_us: float
    budget_source: str  # "stack config", or the profile and ε it was derived from
    predicted_overhead: float | None  # at the tier's RTT floor and per-flow bandwidth
    client_type: str | None
    client_arch: str | None
    ena_express: bool  # turned on in the proxies' (and clients') launch templates
    # the clients run in the tier's cluster placement group (TCP: 10 Gbps per flow, else 5)
    clients_in_group: bool = False
    # the profile makes no synchronous call: the model bounds no round trip, and max_rtt_us is
    # RTT_CEILING_US (a network still has to be there; it is not what limits the application)
    rtt_unbounded: bool = False

    @property
    def sized_for_bandwidth(self) -> bool:
        return self.proxy.instance_type != self.smallest.instance_type

    @property
    def why(self) -> str:
        if not self.sized_for_bandwidth:
            return f"smallest size for {self.proxy.gpu_model}"
        return (f"bandwidth, not GPU: {self.smallest.instance_type}'s baseline "
                f"{self.smallest.network_baseline_gbps:g} Gbps < {self.min_gbps:g} Gbps")

    @property
    def clients_text(self) -> str:
        """Where the clients are, as the budget assumed it (ASCII: it goes to logs too)."""
        if not self.clients_in_group:
            return "clients outside the tier's placement group"
        if self.client_type is not None:
            return f"clients ({self.client_type}) in the tier's placement group"
        return "clients in the tier's placement group (clientsInPlacementGroup)"

    @property
    def network_text(self) -> str:
        """The network kind and what one flow gets on it, with where the clients are."""
        return (f"{kind_label(self.kind, in_cluster=self.clients_in_group)}, "
                f"{self.flow_gbps:g} Gbps per flow, {self.clients_text}")

    @property
    def max_rtt_text(self) -> str:
        """The round-trip budget as a person reads it (ASCII units: it goes to logs too)."""
        if self.rtt_unbounded:
            return (f"any round trip (no synchronous call; tagged {tag_number(self.max_rtt_us)} "
                    "us, the ceiling of budget.maxRttUs)")
        return f"{self.max_rtt_us:g} us"

    def budget_tags(self) -> dict[str, str]:
        return {MIN_GBPS_TAG: tag_number(self.min_gbps), MAX_RTT_TAG: tag_number(self.max_rtt_us),
                CLIENTS_TAG: CLIENTS_IN_GROUP if self.clients_in_group else CLIENTS_OUTSIDE}


def _up(value: float, step: float = 1e-3) -> float:
    """Round a requirement up (a bandwidth tag never promises less than the model needs)."""
    return math.ceil(value / step - 1e-9) * step


def _down(value: float, step: float = 1e-1) -> float:
    """Round an allowance down (a round-trip tag never allows more than the model does)."""
    return value if math.isinf(value) else math.floor(value / step + 1e-9) * step


class TierProblem(ValueError):
    """A tier that cannot be built as configured; ``key`` is the config key to blame."""

    def __init__(self, key: str, expected: str) -> None:
        super().__init__(expected)
        self.key = key
        self.expected = expected


def resolve_tier(
    tier: RemoteGpuTierConfig,
    smallest: InstanceType,
    catalog: Catalog,
    data: NetworkData | None = None,
    base_dir: Path | None = None,
) -> ResolvedTier:
    """Size a tier whose GPU already resolved to ``smallest``; raise :class:`TierProblem`.

    ``base_dir`` is where a budget's relative profile path starts (the project folder; the
    working directory when not given, which is where ``pulumi up`` runs the program).
    """
    data = data or load_network_data()
    client_type, client_arch, client_srd = None, None, None
    client_gbps: float | None = None  # the client group's baseline: its side of every flow
    if tier.clients is not None:
        client_type = tier.clients.instance_type
        row = data.get(client_type)
        if row is None:  # pragma: no cover - refused by ClientGroupConfig
            raise TierProblem("clients.instanceType", f"expected a known type, got {client_type}")
        client_arch, client_srd, client_gbps = row.arch, row.ena_express, row.baseline_gbps

    def kind_of(t: InstanceType) -> NetworkKind:
        return best_kind(t, client_srd, data) if tier.network_kind == "auto" else NetworkKind.TCP

    budget, unbounded, in_group = tier.budget, False, tier.clients_in_group
    if budget.profile is not None:
        proxy, min_gbps, max_rtt, source, predicted, unbounded = _from_profile(
            tier, smallest, catalog, kind_of, base_dir, client_gbps)
    else:
        assert budget.min_gbps is not None and budget.max_rtt_us is not None
        min_gbps, max_rtt, source, predicted = (
            budget.min_gbps, budget.max_rtt_us, "stack config", None)
        proxy = _for_bandwidth(smallest, catalog, min_gbps, "budget.minGbps")
    kind = kind_of(proxy)
    flow = flow_gbps(proxy.network_baseline_gbps, kind, in_cluster=in_group)
    key = "budget.profile" if budget.profile is not None else "budget.minGbps"
    if flow < min_gbps:
        cap = flow_cap_gbps(kind, in_cluster=in_group)
        raise TierProblem(key, (
            f"expected at most {flow:g} Gbps: one flow of {kind_label(kind, in_cluster=in_group)} "
            f"is capped at {cap:g} Gbps ({proxy.instance_type} has "
            f"{proxy.network_baseline_gbps:g} Gbps baseline), got {min_gbps:g}; "
            + _faster_hint(kind, in_group)))
    if client_gbps is not None and client_gbps < min_gbps:
        raise _client_problem(tier, client_gbps, min_gbps, data)
    flow = flow if client_gbps is None else min(flow, client_gbps)
    floor = DEFAULT_RTT_FLOOR_US[kind]
    if max_rtt < floor:
        better = [k for k, f in DEFAULT_RTT_FLOOR_US.items() if f <= max_rtt]
        hint = (f"; {', '.join(KIND_LABELS[k] for k in better)} (~"
                f"{min(DEFAULT_RTT_FLOOR_US[k] for k in better):g} µs) would meet it"
                if better else "; no network tier reaches it, keep the GPU local")
        raise TierProblem("budget.profile" if budget.profile else "budget.maxRttUs", (
            f"expected at least {floor:g} µs, the least round trip {KIND_LABELS[kind]} reaches, "
            f"got {max_rtt:g}{hint}"))
    return ResolvedTier(
        name=tier.name, proxy=proxy, smallest=smallest, kind=kind, flow_gbps=flow,
        rtt_floor_us=floor, min_gbps=min_gbps, max_rtt_us=max_rtt, budget_source=source,
        predicted_overhead=predicted, client_type=client_type, client_arch=client_arch,
        ena_express=bool(data.ena_express(proxy.instance_type)), rtt_unbounded=unbounded,
        clients_in_group=in_group,
    )


def _client_problem(tier: RemoteGpuTierConfig, client_gbps: float, need: float,
                    data: NetworkData) -> TierProblem:
    """The client group's own baseline is below what one flow must carry."""
    name = tier.clients.instance_type if tier.clients else ""
    arch = row.arch if (row := data.get(name)) is not None else None
    fits = sorted((r.baseline_gbps, t) for t in data.client_types()
                  if (r := data.get(t)) is not None and r.arch == arch and r.baseline_gbps >= need)
    hint = (f"; {fits[0][1]} ({fits[0][0]:g} Gbps baseline) is the least {arch} client "
            "baseline that carries it" if fits else f"; no {arch} client type's baseline does")
    return TierProblem("clients.instanceType", (
        f"expected a client type whose baseline carries the budget's {need:g} Gbps per flow, "
        f"got {name} ({client_gbps:g} Gbps baseline; its 'up to' burst does not count){hint}"))


def _faster_hint(kind: NetworkKind, in_group: bool) -> str:
    """What would carry more per flow, starting from where the clients are."""
    ways = ("ENA Express (25 Gbps per flow) needs a type that supports it at both ends, EFA a "
            "type with EFA")
    if kind is NetworkKind.TCP and not in_group:
        return ("clients in the tier's placement group get 10 Gbps per flow (declare clients, "
                "or set clientsInPlacementGroup: true where the services using the tier launch "
                f"into its placement group); {ways}")
    return ways


def _for_bandwidth(smallest: InstanceType, catalog: Catalog, min_gbps: float, key: str
                   ) -> InstanceType:
    """The cheapest size of the GPU whose baseline meets ``min_gbps`` (what the size rules
    accept for a tagged proxy), or a :class:`TierProblem` naming the highest baseline."""
    proxy = smallest_for_bandwidth(catalog, smallest.instance_type, min_gbps)
    if proxy is None:
        best = max(single_gpu_sizes(catalog, smallest.instance_type),
                   key=lambda t: t.network_baseline_gbps)
        raise TierProblem(key, (
            f"expected at most {best.network_baseline_gbps:g} Gbps, the highest baseline of any "
            f"{smallest.gpu_model} size ({best.instance_type}), got {min_gbps:g}; "
            "a faster GPU model's sizes may carry more"))
    return proxy


def _from_profile(
    tier: RemoteGpuTierConfig, smallest: InstanceType, catalog: Catalog,
    kind_of: Callable[[InstanceType], NetworkKind], base_dir: Path | None,
    client_gbps: float | None = None,
) -> tuple[InstanceType, float, float, str, float, bool]:
    """The cheapest size whose per-flow bandwidth, at its network kind's RTT floor, keeps the
    profile's predicted overhead within ε; and the budget figures at that size.

    ``min_gbps`` is the least bandwidth that keeps the overhead within ε at the tier's best
    round trip; ``max_rtt_us`` the largest round trip at the tier's per-flow bandwidth, at most
    :data:`RTT_CEILING_US` (reached, and flagged unbounded, when the profile makes no synchronous
    call: the model's largest round trip is then infinite). The real
    network must satisfy the profile between those two ends (``gpupool netcheck probe
    --profile`` measures it). ``client_gbps`` (the client group's baseline) bounds each flow.
    """
    from gpupool.remoting import bandwidth_min_gbps, predicted_overhead, rtt_max_us

    budget = tier.budget
    try:
        profile = load_budget_profile(budget, base_dir)
    except ProfileProblem as e:
        raise TierProblem("budget.profile", str(e)) from None
    eps = budget.epsilon
    in_group = tier.clients_in_group
    sizes = sorted(single_gpu_sizes(catalog, smallest.instance_type),
                   key=lambda t: (t.price_per_hour if t.price_per_hour is not None else math.inf,
                                  t.vcpus, t.instance_type))
    best: tuple[float, InstanceType, NetworkKind] | None = None
    for size in sizes:
        kind = kind_of(size)
        floor = DEFAULT_RTT_FLOOR_US[kind]
        flow = flow_gbps(size.network_baseline_gbps, kind, in_cluster=in_group)
        if client_gbps is not None:
            flow = min(flow, client_gbps)
        overhead = predicted_overhead(profile, floor, flow)
        if best is None or overhead < best[0]:
            best = (overhead, size, kind)
        if overhead > eps:
            continue
        need = bandwidth_min_gbps(profile, floor, eps)
        allow = rtt_max_us(profile, flow, eps)
        assert need is not None and allow is not None  # feasible at (floor, flow)
        min_gbps = min(_up(need), flow)
        max_rtt = min(max(_down(allow), floor), RTT_CEILING_US)
        source = f"profile {budget.profile} ({profile.name}), max overhead {eps:g}"
        justified = smallest_for_bandwidth(catalog, smallest.instance_type, min_gbps)
        if justified is not None and justified.instance_type != size.instance_type:
            cheaper = kind_of(justified)
            raise TierProblem("budget.profile", (
                f"expected a budget one size serves: the profile needs {min_gbps:g} Gbps per "
                f"flow, which {justified.instance_type}'s baseline has but one flow of "
                f"{kind_label(cheaper, in_cluster=in_group)} on it does not "
                f"({flow_cap_gbps(cheaper, in_cluster=in_group):g} Gbps cap); "
                f"only {size.instance_type} carries it, a size the size policies refuse"))
        return size, min_gbps, max_rtt, source, overhead, math.isinf(allow)
    assert best is not None
    if client_gbps is not None:  # would a client type with more bandwidth do it?
        for size in sizes:
            floor = DEFAULT_RTT_FLOOR_US[kind_of(size)]
            flow = flow_gbps(size.network_baseline_gbps, kind_of(size), in_cluster=in_group)
            need = bandwidth_min_gbps(profile, floor, eps)
            if predicted_overhead(profile, floor, flow) <= eps and need is not None:
                raise _client_problem(tier, client_gbps, _up(need), load_network_data())
    overhead, size, kind = best
    floor = DEFAULT_RTT_FLOOR_US[kind]
    flow = min(flow_gbps(size.network_baseline_gbps, kind, in_cluster=in_group),
               math.inf if client_gbps is None else client_gbps)
    closer = ""
    if not in_group:  # would the clients' being in the group do it?
        near = next((t for t in sizes if predicted_overhead(profile, DEFAULT_RTT_FLOOR_US[
            kind_of(t)], flow_gbps(t.network_baseline_gbps, kind_of(t))) <= eps), None)
        if near is not None:
            closer = (f"with the clients in the tier's placement group (clients, or "
                      f"clientsInPlacementGroup: true) {near.instance_type} gets "
                      f"{flow_gbps(near.network_baseline_gbps, kind_of(near)):g} Gbps per flow "
                      "and serves it; or ")
    raise TierProblem("budget.profile", (
        f"expected a profile some {smallest.gpu_model} size serves within maxOverhead {eps:g}: "
        f"at best, {size.instance_type} over {kind_label(kind, in_cluster=in_group)} ({flow:g} "
        f"Gbps per flow, ~{floor:g} µs round trip), {profile.name} runs {100 * overhead:.1f} % "
        f"slower; {closer}make calls asynchronous, shadow them, or keep the GPU local"))
