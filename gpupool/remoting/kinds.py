"""The network kinds a proxy instance type offers, as the budget sees them: what ONE flow gets.

A remoting client talks to its proxy over (usually) one connection. On EC2 one flow is capped
below the instance's bandwidth (10 Gbps in a cluster placement group, 25 Gbps with ENA Express,
no documented cap for EFA), and each kind has a least round trip it can reach (planning
defaults, :data:`gpupool.catalog.network.DEFAULT_RTT_FLOOR_US`). Budgeting against the
instance's baseline alone promises a g4dn.16xlarge client 50 Gbps that its one flow never sees;
this module gives, per kind, the figures a budget can count on, so that ``gpupool remoting
--instance-type`` and the proxy tier's sizing (:mod:`gpupool.config.remote_gpu`) read the same
numbers from :mod:`gpupool.catalog.network`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpupool.catalog import InstanceType
from gpupool.catalog.network import (
    DEFAULT_RTT_FLOOR_US,
    KIND_LABELS,
    NetworkData,
    NetworkKind,
    flow_cap_gbps,
    flow_gbps,
    load_network_data,
)


@dataclass(frozen=True, slots=True)
class KindOption:
    """One network kind on one proxy type: can it be had, and what one flow gets over it."""

    kind: NetworkKind
    supported: bool
    why: str  # where ``supported`` comes from, or what it needs
    flow_cap_gbps: float | None  # the kind's single-flow cap (None: none documented)
    flow_gbps: float  # the type's baseline, capped per flow
    rtt_floor_us: float  # the least round trip the kind reaches (planning default)

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


def kind_options(instance: InstanceType, data: NetworkData | None = None
                 ) -> list[KindOption]:
    """TCP over ENA in a cluster placement group, ENA Express and EFA on ``instance``, in that
    order (simplest first). Support comes from EC2 DescribeInstanceTypes as recorded in the
    catalog (EFA) and in ``ena-express.json`` (ENA Express); a type the ENA Express file does
    not record is not counted as supporting it (unknown is not a yes)."""
    data = data or load_network_data()
    baseline = instance.network_baseline_gbps
    srd = data.ena_express(instance.instance_type)
    if srd is None:
        srd_why = ("not recorded in the ENA Express data (DescribeInstanceTypes did not "
                   "describe this type)")
    elif srd:
        srd_why = ("EnaSrdSupported (DescribeInstanceTypes); the client type must support it "
                   "too, in the same subnet")
    else:
        srd_why = "EnaSrdSupported is false (DescribeInstanceTypes)"
    efa_why = ("EfaSupported (DescribeInstanceTypes); libfabric over SRD, not a TCP flow"
               if instance.efa_supported else "EfaSupported is false (DescribeInstanceTypes)")
    rows = [
        (NetworkKind.TCP, True, "every ENA type; proxies and clients in one cluster "
                                "placement group"),
        (NetworkKind.ENA_EXPRESS, bool(srd), srd_why),
        (NetworkKind.EFA, instance.efa_supported, efa_why),
    ]
    return [
        KindOption(kind=kind, supported=ok, why=why, flow_cap_gbps=flow_cap_gbps(kind),
                   flow_gbps=flow_gbps(baseline, kind), rtt_floor_us=DEFAULT_RTT_FLOOR_US[kind])
        for kind, ok, why in rows
    ]


def option(instance: InstanceType, kind: NetworkKind, data: NetworkData | None = None
           ) -> KindOption:
    """The figures of one kind on ``instance`` (supported or not: the caller decides)."""
    return next(o for o in kind_options(instance, data) if o.kind is kind)
