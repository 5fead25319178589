"""Stack models of remote-GPU proxy tiers (``gpupool:remoteGpu``) and how a tier is sized.

A tier serves GPUs to CPU-only clients over GPU API remoting: proxy hosts own the GPUs, clients
send CUDA calls over the network. Each tier is a GPU pool (it inherits every pool key: GPU,
sizes, spot, target utilisation, chargeback) plus what the network needs: the remoting port, the
one subnet it runs in, an optional client group, and its *budget*, the bandwidth and round-trip
time the application tolerates (DESIGN.md, idea 2).

Sizing follows both ideas at once: the proxy is the smallest size for the GPU, unless the budget
needs more bandwidth per flow than that size's *baseline*; then it is the cheapest size of the
same GPU whose baseline meets the budget, never beyond (:mod:`gpupool.catalog.network`). A
budget no size or network kind can meet is a stack error, so a tier that validates also passes
the ``gpu-proxy-network-budget`` policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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
    load_network_data,
    single_gpu_sizes,
    smallest_for_bandwidth,
)
from gpupool.config.models import _SUBNET_ID, GpuPoolConfig, StackConfig, _Model

ROLE_TAG = "gpupool:role"
PROXY_ROLE = "gpu-proxy"
CLIENT_ROLE = "gpu-client"
MIN_GBPS_TAG = "gpupool:remoting-min-gbps"
MAX_RTT_TAG = "gpupool:remoting-max-rtt-us"
TIER_TAG = "gpupool:tier"
_INSTANCE_TYPE = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"


class BudgetConfig(_Model):
    """The network a tier's application tolerates: explicit figures, or derived from a profile.

    ``minGbps``: the least bandwidth of one client↔proxy flow; ``maxRttUs``: the largest round
    trip. Both are what ``gpupool remoting PROFILE`` prints as ``bandwidth_min_gbps`` and
    ``rtt_max_us``.
    """

    min_gbps: Annotated[float, Field(gt=0, le=10000, allow_inf_nan=False)]
    max_rtt_us: Annotated[float, Field(gt=0, le=1_000_000, allow_inf_nan=False)]


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


class RemoteGpuTierConfig(GpuPoolConfig):
    """One proxy tier: a GPU pool in one subnet and a cluster placement group, with a budget."""

    port: Annotated[int, Field(ge=1024, le=65535, description="the remoting server's TCP port")]
    budget: BudgetConfig
    subnet_id: Annotated[str | None, Field(pattern=_SUBNET_ID)] = None
    clients: ClientGroupConfig | None = None
    network_kind: Literal["auto", "tcp"] = "auto"  # auto: ENA Express where both ends have it


# StackConfig names RemoteGpuTierConfig for its optional ``remoteGpu`` key; it is complete now.
StackConfig.model_rebuild(_types_namespace={"RemoteGpuTierConfig": RemoteGpuTierConfig})


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
    budget_source: str
    client_type: str | None
    client_arch: str | None
    ena_express: bool  # turned on in the proxies' (and clients') launch templates

    @property
    def sized_for_bandwidth(self) -> bool:
        return self.proxy.instance_type != self.smallest.instance_type

    @property
    def why(self) -> str:
        if not self.sized_for_bandwidth:
            return f"smallest size for {self.proxy.gpu_model}"
        return (f"bandwidth, not GPU: {self.smallest.instance_type}'s baseline "
                f"{self.smallest.network_baseline_gbps:g} Gbps < {self.min_gbps:g} Gbps")

    def budget_tags(self) -> dict[str, str]:
        return {MIN_GBPS_TAG: tag_number(self.min_gbps), MAX_RTT_TAG: tag_number(self.max_rtt_us)}


def tag_number(value: float) -> str:
    """A budget figure as a tag value: at most 3 decimals, no float noise, "inf" when unbounded."""
    if math.isinf(value):
        return "inf"
    return f"{round(value, 3):g}"


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
) -> ResolvedTier:
    """Size a tier whose GPU already resolved to ``smallest``; raise :class:`TierProblem`."""
    data = data or load_network_data()
    client_type, client_arch, client_srd = None, None, None
    if tier.clients is not None:
        client_type = tier.clients.instance_type
        row = data.get(client_type)
        if row is None:  # pragma: no cover - refused by ClientGroupConfig
            raise TierProblem("clients.instanceType", f"expected a known type, got {client_type}")
        client_arch, client_srd = row.arch, row.ena_express
    budget = tier.budget
    proxy = smallest_for_bandwidth(catalog, smallest.instance_type, budget.min_gbps)
    if proxy is None:
        best = max(single_gpu_sizes(catalog, smallest.instance_type),
                   key=lambda t: t.network_baseline_gbps)
        raise TierProblem("budget.minGbps", (
            f"expected at most {best.network_baseline_gbps:g} Gbps, the highest baseline of any "
            f"{smallest.gpu_model} size ({best.instance_type}), got {budget.min_gbps:g}; "
            "a faster GPU model's sizes may carry more"))
    kind = best_kind(proxy, client_srd, data) if tier.network_kind == "auto" else NetworkKind.TCP
    flow = flow_gbps(proxy.network_baseline_gbps, kind)
    if flow < budget.min_gbps:
        cap = flow_cap_gbps(kind)
        raise TierProblem("budget.minGbps", (
            f"expected at most {flow:g} Gbps: one flow of {KIND_LABELS[kind]} is capped at "
            f"{cap:g} Gbps ({proxy.instance_type} has {proxy.network_baseline_gbps:g} Gbps "
            f"baseline), got {budget.min_gbps:g}; ENA Express (25 Gbps per flow) needs a type "
            "that supports it at both ends, EFA a type with EFA"))
    floor = DEFAULT_RTT_FLOOR_US[kind]
    if budget.max_rtt_us < floor:
        better = [k for k, f in DEFAULT_RTT_FLOOR_US.items() if f <= budget.max_rtt_us]
        hint = (f"; {', '.join(KIND_LABELS[k] for k in better)} (~"
                f"{min(DEFAULT_RTT_FLOOR_US[k] for k in better):g} µs) would meet it"
                if better else "; no network tier reaches it, keep the GPU local")
        raise TierProblem("budget.maxRttUs", (
            f"expected at least {floor:g} µs, the least round trip {KIND_LABELS[kind]} reaches, "
            f"got {budget.max_rtt_us:g}{hint}"))
    return ResolvedTier(
        name=tier.name, proxy=proxy, smallest=smallest, kind=kind, flow_gbps=flow,
        rtt_floor_us=floor, min_gbps=budget.min_gbps, max_rtt_us=budget.max_rtt_us,
        budget_source="stack config", client_type=client_type, client_arch=client_arch,
        ena_express=bool(data.ena_express(proxy.instance_type)),
    )
