"""gpu-proxy-network-budget: a GPU proxy's network can deliver the budget its tags declare.

A tier's budget is a bandwidth and a round-trip time (``gpupool:remoting-min-gbps``,
``gpupool:remoting-max-rtt-us``, from ``gpupool remoting PROFILE``). The bandwidth is checked
against the proxy type's *baseline* (the catalog), never its "up to" burst, capped by the
single-flow limit of the network kind and of where the clients are (TCP: 10 Gbps per flow when
they are in the proxies' cluster placement group, 5 when not; ``gpupool:remoting-clients``, see
:mod:`policies.facts.network.clients`); the round trip against a floor per network kind (TCP
over ENA in a cluster placement group, ENA Express, EFA), configurable because AWS publishes no
such figure. Stack scope: the type and the network interfaces come from the launch template.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from gpupool.catalog import Catalog, InstanceType
from gpupool.catalog.network import (
    DEFAULT_RTT_FLOOR_US,
    KIND_LABELS,
    NetworkKind,
    flow_cap_gbps,
    flow_gbps,
    kind_label,
    load_network_data,
    single_gpu_sizes,
    smallest_for_bandwidth,
)
from gpupool.tags import CLIENTS_IN_GROUP, CLIENTS_TAG
from policies.facts import Budget, NetworkIndex
from policies.facts.network import MAX_RTT_TAG, MIN_GBPS_TAG, ClientsWhere
from policies.model import ResourceChange, ResourceKind
from policies.rules._budget_examples import tags as _tags
from policies.rules._budget_examples import tier as _tier
from policies.rules._common import cannot_verify, prop, usd
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    lazy_examples,
)
from policies.rules.params import param


class Params(RuleParams):
    tcp_rtt_floor_us: float = param(
        default=DEFAULT_RTT_FLOOR_US[NetworkKind.TCP], gt=0,
        description="Least round trip (µs) TCP over ENA in a cluster placement group reaches.")
    ena_express_rtt_floor_us: float = param(
        default=DEFAULT_RTT_FLOOR_US[NetworkKind.ENA_EXPRESS], gt=0,
        description="Least round trip (µs) with ENA Express (it cuts tail latency, not the "
                    "median).")
    efa_rtt_floor_us: float = param(
        default=DEFAULT_RTT_FLOOR_US[NetworkKind.EFA], gt=0,
        description="Least round trip (µs) over EFA (OS bypass).")

    def floor(self, kind: NetworkKind) -> float:
        return {NetworkKind.TCP: self.tcp_rtt_floor_us,
                NetworkKind.ENA_EXPRESS: self.ena_express_rtt_floor_us,
                NetworkKind.EFA: self.efa_rtt_floor_us}[kind]


class GpuProxyNetworkBudget(Rule):
    meta = RuleMeta(
        id="gpu-proxy-network-budget",
        title="A GPU proxy's network meets its tier's remoting budget",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Remote GPUs need a network budget, not a guess. A proxy (gpupool:role = gpu-proxy) "
            "carries its tier's budget as tags: gpupool:remoting-min-gbps, the least bandwidth "
            "of one client's flow, and gpupool:remoting-max-rtt-us, the largest round trip "
            "(`gpupool remoting PROFILE` derives both from an application profile). The proxy "
            "type's baseline bandwidth (the catalog; never the 'up to' burst) must reach "
            "min-gbps within the single-flow cap of its network kind and of where its clients "
            "are (AWS: TCP 10 Gbps per flow between instances of one cluster placement group, "
            "5 otherwise; 25 with ENA Express; EFA is bounded by the baseline only). "
            "gpupool:remoting-clients = in-group says the clients launch into the proxies' "
            "cluster placement group; without it (or = outside, or when the plan shows a client "
            "of the tier in another placement group or the proxy in none) the clients are "
            "taken to be outside, at 5 Gbps. The kind's round-trip floor (the parameters; "
            "planning "
            "defaults, since AWS publishes none) must not exceed max-rtt-us. A budget the tier "
            "cannot reach is a violation that names the size or network kind that would; a "
            "proxy without budget tags is 'cannot verify', never a pass."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE,
                         ResourceKind.LAUNCH_TEMPLATE, ResourceKind.PLACEMENT_GROUP}),
        params=Params,
        proxy_tier=True,
    )

    examples = lazy_examples(lambda: (
        Example(
            title="g4dn.2xlarge (10 Gbps baseline) for an 8 Gbps, 200 µs budget, clients in "
                  "the proxies' placement group",
            allowed=True,
            resources=_tier("g4dn.2xlarge", _tags("8", "200")),
        ),
        Example(
            title="The same budget with the clients outside the placement group (5 Gbps per "
                  "flow)",
            allowed=False,
            resources=_tier("g4dn.2xlarge", _tags("8", "200", clients="outside")),
            message_contains=["one flow of TCP over ENA to clients outside the placement group "
                              "is capped at 5 Gbps (g4dn.2xlarge has 10 Gbps baseline), below "
                              "the budget's 8 Gbps", "gpupool:remoting-clients = outside",
                              "clients in the proxies' cluster placement group (tag "
                              "gpupool:remoting-clients = in-group) get 10 Gbps per flow"],
        ),
        Example(
            title="Terraform: no gpupool:remoting-clients tag, so the clients are outside",
            allowed=False,
            resources=_tier("g4dn.2xlarge", _tags("8", "200", clients=None), terraform=True),
            message_contains=["capped at 5 Gbps",
                              "gpupool:remoting-clients is not set, so the clients are taken "
                              "to be outside the placement group"],
        ),
        Example(
            title="Terraform: in-group claimed, but the plan's client launches into another "
                  "placement group",
            allowed=False,
            resources=_tier("g4dn.2xlarge", _tags("8", "200"), terraform=True,
                            client_group="apps"),
            message_contains=["capped at 5 Gbps", "gpupool:remoting-clients = in-group, but "
                              "client aws_autoscaling_group.client launches into placement group "
                              "apps, not the proxies'", "clients in the proxies' cluster "
                              "placement group (launch them there) get 10 Gbps per flow"],
        ),
        Example(
            title="Terraform: in-group, and the plan's client is in the proxies' placement group",
            allowed=True,
            resources=_tier("g4dn.2xlarge", _tags("8", "200"), terraform=True,
                            client_group="tier"),
        ),
        Example(
            title="A 5 Gbps budget fits one flow from outside the placement group",
            allowed=True,
            resources=_tier("g4dn.xlarge", _tags("5", "200", clients="outside")),
        ),
        Example(
            title="Where the clients are is in-group or outside",
            allowed=False,
            resources=_tier("g4dn.xlarge", _tags("1", "200", clients="same-rack")),
            message_contains=["gpupool:remoting-clients = 'same-rack' is neither in-group nor "
                              "outside"],
        ),
        Example(
            title="Terraform: a g5g.xlarge proxy (1.25 Gbps baseline) under a 5 Gbps budget",
            allowed=False,
            resources=_tier("g5g.xlarge", _tags("5", "200"), terraform=True),
            message_contains=["g5g.xlarge's baseline bandwidth is 1.25 Gbps",
                              "below the budget's 5 Gbps",
                              "g5g.4xlarge (5 Gbps baseline, $0.828/h) is the smallest T4g size "
                              "that meets it"],
        ),
        Example(
            title="Budget above TCP's 10 Gbps per flow on a type without ENA Express",
            allowed=False,
            resources=_tier("g4dn.4xlarge", _tags("15", "200")),
            message_contains=["one flow of TCP over ENA in a cluster placement group is capped "
                              "at 10 Gbps", "EFA on g4dn.8xlarge would do"],
        ),
        Example(
            title="ENA Express lifts one flow to 25 Gbps (p5.4xlarge)",
            allowed=True,
            resources=_tier("p5.4xlarge", _tags("20", "100"), srd=True),
        ),
        Example(
            title="A round trip below what TCP reaches",
            allowed=False,
            resources=_tier("g4dn.xlarge", _tags("1", "20")),
            message_contains=["allows a 20 µs round trip", "reaches ~30 µs at best",
                              "EFA (~15 µs) would do, e.g. on g4dn.8xlarge"],
        ),
        Example(
            title="Floors are parameters: a measured 18 µs TCP round trip",
            allowed=True,
            params={"tcpRttFloorUs": 18},
            resources=_tier("g4dn.xlarge", _tags("1", "20")),
        ),
        Example(
            title="Proxy without budget tags",
            allowed=False,
            unknown=True,
            resources=_tier("g4dn.xlarge", _tags(None, None)),
            message_contains=["cannot verify", "carries no budget tags"],
        ),
        Example(
            title="Budget tag that is not a number",
            allowed=False,
            resources=_tier("g4dn.xlarge", _tags("fast", "200")),
            message_contains=["gpupool:remoting-min-gbps = 'fast' is not a number of Gbps"],
        ),
        Example(
            title="A round trip of zero µs is no budget",
            allowed=False,
            resources=_tier("g4dn.xlarge", _tags("1", "0")),
            message_contains=["gpupool:remoting-max-rtt-us = '0' is not a positive number of µs"],
        ),
        Example(
            title="A profile that moves no byte needs no bandwidth (0 Gbps)",
            allowed=True,
            resources=_tier("g4dn.xlarge", _tags("0", "200")),
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # stack scope: see check

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        net = ctx.plan.network
        for proxy in net.proxies():
            yield from self._judge(proxy, net, ctx)

    def _judge(self, proxy: ResourceChange, net: NetworkIndex, ctx: RuleContext
               ) -> Iterable[Finding]:
        params: Params = ctx.params
        budget = net.budget(proxy)
        for key, value in budget.malformed:
            yield Finding(proxy.address, (
                f"budget tag {key} = {value!r} is not "
                + ("a number of Gbps, 0 or more" if key == MIN_GBPS_TAG
                   else "a positive number of µs")))
        if budget.unknown:
            yield Finding(proxy.address, cannot_verify(
                f"budget tag(s) {', '.join(budget.unknown)} unknown until apply"), unknown=True)
        if len(budget.missing) == 2:
            yield Finding(proxy.address, cannot_verify(
                f"the GPU proxy carries no budget tags ({MIN_GBPS_TAG}, {MAX_RTT_TAG}), so its "
                "bandwidth and round trip cannot be judged; `gpupool remoting PROFILE` prints "
                "them"), unknown=True)
            return
        if budget.missing:
            yield Finding(proxy.address, cannot_verify(
                f"budget tag {budget.missing[0]} is not set"), unknown=True)
        types = (ctx.plan.own_types(proxy) if proxy.kind is ResourceKind.LAUNCH_TEMPLATE
                 else ctx.plan.instance_types(proxy))
        if types.unknown:
            yield Finding(proxy.address, cannot_verify(types.unknown), unknown=True)
        kind, kind_unknown = net.network_kind(proxy)
        if kind_unknown:
            yield Finding(proxy.address, cannot_verify(kind_unknown), unknown=True)
        where = net.clients_where(proxy)
        if where.malformed is not None:
            yield Finding(proxy.address, f"budget tag {where.why}",
                          detail={"tag": CLIENTS_TAG, "value": where.malformed})
        for name in types.known:
            row = ctx.catalog.get(name)
            if row is None:  # a proxy's type should carry a GPU: never judged unseen
                yield Finding(proxy.address, cannot_verify(
                    f"{name} is not in the GPU catalog, so its baseline bandwidth is not "
                    "known"), unknown=True)
                continue
            own_kind = kind
            if kind is NetworkKind.ENA_EXPRESS and not load_network_data().ena_express(name):
                own_kind = NetworkKind.TCP  # AWS refuses ENA Express on such a type
            yield from self._bandwidth(proxy, row, own_kind, where, budget, ctx.catalog)
            yield from self._round_trip(proxy, row, own_kind, budget, params, ctx.catalog)

    def _bandwidth(self, proxy: ResourceChange, row: InstanceType, kind: NetworkKind,
                   where: ClientsWhere, budget: Budget, catalog: Catalog) -> Iterable[Finding]:
        need = budget.min_gbps
        if need is None:
            return
        base = row.network_baseline_gbps
        in_cluster = where.in_group
        flow = flow_gbps(base, kind, in_cluster=in_cluster)
        if flow >= need:
            return
        detail = {"instance_type": row.instance_type, "baseline_gbps": base,
                  "flow_gbps": flow, "min_gbps": need, "network": str(kind),
                  "clients": "in-group" if in_cluster else "outside"}
        if base < need:
            bigger = smallest_for_bandwidth(catalog, row.instance_type, need)
            if bigger is not None:
                price = (f", {usd(bigger.price_per_hour)}/h"
                         if bigger.price_per_hour is not None else "")
                hint = (f"{bigger.instance_type} ({bigger.network_baseline_gbps:g} Gbps "
                        f"baseline{price}) is the smallest {row.gpu_model} size that meets it "
                        "(a bigger size for bandwidth, not GPU, is the one that "
                        "gpu-smallest-instance accepts for a tagged proxy)")
            else:
                hint = (f"no {row.gpu_model} size has a {need:g} Gbps baseline; a GPU model "
                        "whose sizes carry more, or a smaller transfer per call, would")
            yield Finding(proxy.address, (
                f"{row.instance_type}'s baseline bandwidth is {base:g} Gbps (its 'up to' "
                f"{row.network_burst_gbps:g} does not count), below the budget's {need:g} Gbps "
                f"({MIN_GBPS_TAG}); {hint}"), detail=detail)
            return
        cap = flow_cap_gbps(kind, in_cluster=in_cluster)
        closer = ""
        if not in_cluster and flow_gbps(base, kind) >= need:
            how = ("launch them there" if where.claimed
                   else f"tag {CLIENTS_TAG} = {CLIENTS_IN_GROUP}")
            closer = (f"clients in the proxies' cluster placement group ({how}) get "
                      f"{flow_gbps(base, kind):g} Gbps per flow; or ")
        yield Finding(proxy.address, (
            f"one flow of {kind_label(kind, in_cluster=in_cluster)} is capped at {cap:g} Gbps "
            f"({row.instance_type} has {base:g} Gbps baseline), below the budget's {need:g} Gbps "
            f"({MIN_GBPS_TAG}; {where.why}); {closer}"
            f"{self._faster(row, need, catalog, proxy)}"), detail=detail)

    @staticmethod
    def _faster(row: InstanceType, need: float, catalog: Catalog, proxy: ResourceChange) -> str:
        data = load_network_data()
        sizes = sorted(single_gpu_sizes(catalog, row.instance_type),
                       key=lambda t: (t.price_per_hour or math.inf, t.instance_type))
        srd = next((t for t in sizes if data.ena_express(t.instance_type)
                    and min(t.network_baseline_gbps, 25.0) >= need), None)
        efa = next((t for t in sizes if t.efa_supported and t.network_baseline_gbps >= need), None)
        options = []
        if srd is not None:
            key = prop(proxy.type if ":" in proxy.type else "aws_launch_template",
                       "network_interfaces.ena_srd_specification")
            options.append(f"ENA Express (25 Gbps per flow; {key}) on {srd.instance_type}")
        if efa is not None:
            options.append(f"EFA on {efa.instance_type}")
        if not options:
            return f"no {row.gpu_model} size offers ENA Express or EFA at {need:g} Gbps"
        return " or ".join(options) + " would do"

    def _round_trip(self, proxy: ResourceChange, row: InstanceType, kind: NetworkKind,
                    budget: Budget, params: Params, catalog: Catalog) -> Iterable[Finding]:
        limit = budget.max_rtt_us
        if limit is None or math.isinf(limit):
            return
        floor = params.floor(kind)
        if floor <= limit:
            return
        data = load_network_data()
        sizes = sorted(single_gpu_sizes(catalog, row.instance_type),
                       key=lambda t: (t.price_per_hour or math.inf, t.instance_type))
        better: list[str] = []
        for other in (NetworkKind.ENA_EXPRESS, NetworkKind.EFA):
            if other is kind or params.floor(other) > limit:
                continue
            ok = [t for t in sizes
                  if (data.ena_express(t.instance_type) if other is NetworkKind.ENA_EXPRESS
                      else t.efa_supported)]
            example = f", e.g. on {ok[0].instance_type}" if ok else (
                f" (no {row.gpu_model} size supports it)")
            better.append(f"{KIND_LABELS[other]} (~{params.floor(other):g} µs) would do{example}")
        hint = "; ".join(better) if better else (
            "no network kind reaches it: keep this GPU local, or make calls asynchronous")
        yield Finding(proxy.address, (
            f"the budget allows a {limit:g} µs round trip ({MAX_RTT_TAG}), but "
            f"{KIND_LABELS[kind]} reaches ~{floor:g} µs at best; {hint}"),
            detail={"instance_type": row.instance_type, "max_rtt_us": limit,
                    "rtt_floor_us": floor, "network": str(kind)})


RULE = GpuProxyNetworkBudget()
