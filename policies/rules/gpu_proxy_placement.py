"""gpu-proxy-placement: GPU proxies sit in one cluster placement group, in one zone, with their
clients.

GPU API remoting pays a network round trip for every synchronous CUDA call, so proxy hosts and
their clients belong as close together as EC2 allows: a cluster placement group (lowest latency,
10 Gbps per flow instead of 5) in a single availability zone. Stack scope: the group, its launch
template and the placement group are separate resources linked by reference, id or name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policies.facts import Found, NetworkIndex, text
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    lazy_examples,
)

_LT = "aws:ec2/launchTemplate:LaunchTemplate"
_ASG = "aws:autoscaling/group:Group"
_PG = "aws:ec2/placementGroup:PlacementGroup"
PROXY_TAGS = {"gpupool:role": "gpu-proxy"}
CLIENT_TAGS = {"gpupool:role": "gpu-client"}


def _where(change: ResourceChange) -> str:
    """The input that places a resource's instances, in the user's spelling."""
    if change.kind is ResourceKind.LAUNCH_TEMPLATE:
        return prop(change.type, "placement.group_name")
    return prop(change.type, "placement_group")


def _pg_names(found: Found) -> list[str]:
    return [t.name for t in found.targets] + list(found.outside)


class GpuProxyPlacement(Rule):
    meta = RuleMeta(
        id="gpu-proxy-placement",
        title="GPU proxies run in one cluster placement group, in one zone, with their clients",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "With GPU API remoting every synchronous CUDA call waits a network round trip, so "
            "the budget lives in microseconds. Groups, instances and launch templates tagged "
            "gpupool:role = gpu-proxy must launch into a placement group whose strategy is "
            "cluster (AWS's lowest-latency placement, and 10 Gbps per flow instead of 5), in "
            "a single availability zone; their clients (gpupool:role = gpu-client) belong in "
            "the same placement group. The placement group is found through the group's or "
            "instance's placement_group or its launch template's placement, by reference, id "
            "or name; one outside the plan, or a strategy or zone unknown until apply, is "
            "'cannot verify', never a pass."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE,
                         ResourceKind.LAUNCH_TEMPLATE, ResourceKind.PLACEMENT_GROUP,
                         ResourceKind.SUBNET}),
        proxy_tier=True,
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Proxy group and its clients in one cluster placement group, one subnet",
            allowed=True,
            resources=[
                {"type": _PG, "name": "tier", "new": {"name": "tier-pg", "strategy": "cluster"}},
                {"type": _LT, "name": "proxy",
                 "new": {"name": "proxy-lt", "instanceType": "g4dn.xlarge",
                         "placement": {"groupName": "tier-pg"}, "tags": PROXY_TAGS}},
                {"type": _ASG, "name": "proxy",
                 "new": {"launchTemplate": {"name": "proxy-lt"},
                         "vpcZoneIdentifiers": ["subnet-0a1"]}},
                {"type": _LT, "name": "client",
                 "new": {"name": "client-lt", "instanceType": "c7i.xlarge",
                         "placement": {"groupName": "tier-pg"}, "tags": CLIENT_TAGS}},
                {"type": _ASG, "name": "client",
                 "new": {"launchTemplate": {"name": "client-lt"},
                         "vpcZoneIdentifiers": ["subnet-0a1"]}},
            ],
        ),
        Example(
            title="Terraform: proxies in a spread placement group",
            allowed=False,
            resources=[
                {"type": "aws_placement_group", "name": "proxies",
                 "address": "aws_placement_group.proxies",
                 "new": {"name": "proxies", "strategy": "spread"}},
                {"type": "aws_instance", "name": "proxy", "address": "aws_instance.proxy",
                 "new": {"instance_type": "g5.xlarge", "placement_group": "proxies",
                         "tags": PROXY_TAGS}},
            ],
            message_contains=["placement group proxies has strategy spread",
                              "GPU proxies need cluster"],
        ),
        Example(
            title="Proxy group without a placement group",
            allowed=False,
            resources=[
                {"type": _ASG, "name": "proxy",
                 "new": {"vpcZoneIdentifiers": ["subnet-0a1"], "tags": [
                     {"key": "gpupool:role", "value": "gpu-proxy", "propagateAtLaunch": True}],
                     "mixedInstancesPolicy": {"launchTemplate": {
                         "overrides": [{"instanceType": "g6.xlarge"}]}}}},
            ],
            message_contains=["is in no placement group", "placementGroup"],
        ),
        Example(
            title="Proxy group across two availability zones",
            allowed=False,
            resources=[
                {"type": "aws_subnet", "name": "a", "address": "aws_subnet.a",
                 "new": {"id": "subnet-a", "availability_zone": "us-east-1a"}},
                {"type": "aws_subnet", "name": "b", "address": "aws_subnet.b",
                 "new": {"id": "subnet-b", "availability_zone": "us-east-1b"}},
                {"type": "aws_placement_group", "name": "tier",
                 "address": "aws_placement_group.tier",
                 "new": {"name": "tier", "strategy": "cluster"}},
                {"type": "aws_autoscaling_group", "name": "proxy",
                 "address": "aws_autoscaling_group.proxy",
                 "new": {"placement_group": "tier", "vpc_zone_identifier": ["subnet-a", "subnet-b"],
                         "tag": [{"key": "gpupool:role", "value": "gpu-proxy",
                                  "propagate_at_launch": True}]}},
            ],
            message_contains=["spans 2 availability zones (us-east-1a, us-east-1b)"],
        ),
        Example(
            title="Client outside the proxies' placement group",
            allowed=False,
            resources=[
                {"type": _PG, "name": "tier", "new": {"name": "tier-pg", "strategy": "cluster"}},
                {"type": _PG, "name": "other", "new": {"name": "other-pg", "strategy": "cluster"}},
                {"type": "aws:ec2/instance:Instance", "name": "proxy",
                 "new": {"instanceType": "g4dn.xlarge", "placementGroup": "tier-pg",
                         "tags": PROXY_TAGS}},
                {"type": "aws:ec2/instance:Instance", "name": "client",
                 "new": {"instanceType": "c7i.large", "placementGroup": "other-pg",
                         "tags": CLIENT_TAGS}},
            ],
            message_contains=["client's placement group other is not the proxies' (tier)"],
        ),
        Example(
            title="Terraform: a new group's zone from the subnet it references",
            allowed=True,
            resources=[
                {"type": "aws_subnet", "name": "tier", "address": "aws_subnet.tier",
                 "new": {"id": "(known after apply)", "availability_zone": "us-east-1a"}},
                {"type": "aws_placement_group", "name": "tier",
                 "address": "aws_placement_group.tier",
                 "new": {"name": "tier", "strategy": "cluster"}},
                {"type": "aws_autoscaling_group", "name": "proxy",
                 "address": "aws_autoscaling_group.proxy",
                 "new": {"placement_group": "tier", "vpc_zone_identifier": "(known after apply)",
                         "tag": [{"key": "gpupool:role", "value": "gpu-proxy",
                                  "propagate_at_launch": True}]},
                 "references": {"vpc_zone_identifier": "aws_subnet.tier"}},
            ],
        ),
        Example(
            title="Terraform: subnets from a data source read at apply",
            allowed=False,
            unknown=True,
            resources=[
                {"type": "aws_placement_group", "name": "tier",
                 "address": "aws_placement_group.tier",
                 "new": {"name": "tier", "strategy": "cluster"}},
                {"type": "aws_autoscaling_group", "name": "proxy",
                 "address": "aws_autoscaling_group.proxy",
                 "new": {"placement_group": "tier", "vpc_zone_identifier": "(known after apply)",
                         "tag": [{"key": "gpupool:role", "value": "gpu-proxy",
                                  "propagate_at_launch": True}]},
                 "references": {"vpc_zone_identifier": "data.aws_subnets.tier"}},
            ],
            message_contains=["cannot verify", "one availability zone",
                              "subnets unknown until apply"],
        ),
        Example(
            title="Placement group strategy unknown until apply",
            allowed=False,
            unknown=True,
            resources=[
                {"type": "aws_placement_group", "name": "tier",
                 "address": "aws_placement_group.tier",
                 "new": {"name": "tier", "strategy": "(known after apply)"}},
                {"type": "aws_instance", "name": "proxy", "address": "aws_instance.proxy",
                 "new": {"instance_type": "g4dn.xlarge", "placement_group": "tier",
                         "tags": PROXY_TAGS}},
            ],
            message_contains=["cannot verify", "strategy of placement group tier is unknown"],
        ),
        Example(
            title="Resources without the proxy role are out of scope",
            allowed=True,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "trainer",
                        "new": {"instanceType": "g5.xlarge"}}],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # stack scope: see check

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        net = ctx.plan.network
        proxy_groups: set[str] = set()  # addresses of proxies' placement groups
        proxy_names: set[str] = set()  # ... and ids/names of those outside the plan
        for proxy in net.proxies():
            found = net.placement_group(proxy)
            proxy_groups.update(t.address for t in found.targets)
            proxy_names.update(found.outside)
            yield from self._placement(proxy, found, "GPU proxy")
            yield from self._zones(proxy, net)
        names = sorted({*(net.plan.by_address[a].name for a in proxy_groups), *proxy_names})
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        for client in net.clients():
            yield from self._client(client, net, proxy_groups, proxy_names,
                                    shown or "none in this plan")

    def _placement(self, change: ResourceChange, found: Found, who: str) -> Iterable[Finding]:
        if not found.declared:
            if change.kind is ResourceKind.LAUNCH_TEMPLATE:
                yield Finding(change.address, cannot_verify(
                    f"the {who} launch template sets no placement group "
                    f"({_where(change)}); the group launching it, which is not in the plan, "
                    "must put it in a cluster placement group"), unknown=True)
                return
            yield Finding(change.address, (
                f"{who} is in no placement group: set {_where(change)} (or its launch "
                "template's placement) to a placement group with strategy cluster, in one "
                "availability zone, so that every CUDA call's round trip stays in microseconds "
                "and one flow gets 10 Gbps instead of 5"))
            return
        for pg in found.targets:
            strategy = text(pg.after.get("strategy"))
            if strategy is UNKNOWN:
                yield Finding(change.address, cannot_verify(
                    f"the strategy of placement group {pg.name} is unknown until apply"),
                    unknown=True)
            elif strategy != "cluster":
                yield Finding(change.address, (
                    f"placement group {pg.name} has strategy {strategy or 'unset'}: GPU proxies "
                    "need cluster, which packs instances close together for the lowest round "
                    "trip (spread and partition keep them on distinct hardware, apart)"),
                    detail={"placement_group": pg.address, "strategy": strategy})
        for value in found.outside:
            yield Finding(change.address, cannot_verify(
                f"placement group {value} is not in the plan, so its strategy cannot be "
                "checked"), unknown=True)
        if found.unknown and not found.targets and not found.outside:
            yield Finding(change.address, cannot_verify(found.unknown), unknown=True)

    def _zones(self, change: ResourceChange, net: NetworkIndex) -> Iterable[Finding]:
        zones, count, why = net.zones(change)
        if len(zones) > 1:
            yield Finding(change.address, (
                f"GPU proxy spans {len(zones)} availability zones ({', '.join(sorted(zones))}): "
                "a cluster placement group lives in one zone and a cross-zone round trip costs "
                "far more than the budget; give the proxies a single subnet"),
                detail={"zones": sorted(zones)})
        elif why and count != 1:
            yield Finding(change.address, cannot_verify(
                f"cannot tell whether the GPU proxy stays in one availability zone ({why})"),
                unknown=True)

    def _client(self, client: ResourceChange, net: NetworkIndex, proxy_groups: set[str],
                proxy_names: set[str], shown: str) -> Iterable[Finding]:
        found = net.placement_group(client)
        if not found.declared:
            if client.kind is ResourceKind.LAUNCH_TEMPLATE:
                yield Finding(client.address, cannot_verify(
                    "the GPU client launch template sets no placement group; the group launching "
                    "it is not in the plan"), unknown=True)
                return
            yield Finding(client.address, (
                f"GPU client is in no placement group: set {_where(client)} to the proxies' "
                f"cluster placement group ({shown}) so that calls stay in one rack's reach"))
            return
        if any(t.address in proxy_groups for t in found.targets) or (
                set(found.outside) & proxy_names):
            return
        if not proxy_groups and not proxy_names:
            yield from self._placement(client, found, "GPU client")
            return
        if found.targets:
            names = ", ".join(t.name for t in found.targets)
            yield Finding(client.address, (
                f"client's placement group {names} is not the proxies' ({shown}): clients of a "
                "proxy tier belong in the same cluster placement group"))
        elif found.outside:
            yield Finding(client.address, cannot_verify(
                f"the client's placement group {', '.join(found.outside)} is not in the plan, so "
                f"it cannot be matched with the proxies' ({shown})"), unknown=True)
        elif found.unknown:
            yield Finding(client.address, cannot_verify(found.unknown), unknown=True)


RULE = GpuProxyPlacement()
