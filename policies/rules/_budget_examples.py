"""The proxy tiers ``gpu-proxy-network-budget``'s examples are made of (the examples
themselves stay beside the rule): a placement group, a proxy launch template tagged with a
budget, and for Terraform the group launching it and optionally a client group."""

from __future__ import annotations

from gpupool.tags import CLIENTS_IN_GROUP, CLIENTS_TAG, MAX_RTT_TAG, MIN_GBPS_TAG

_LT = "aws:ec2/launchTemplate:LaunchTemplate"
_PG = "aws:ec2/placementGroup:PlacementGroup"


def tags(min_gbps: str | None, max_rtt: str | None, clients: str | None = CLIENTS_IN_GROUP
          ) -> dict[str, str]:
    out = {"gpupool:role": "gpu-proxy"}
    if min_gbps is not None:
        out[MIN_GBPS_TAG] = min_gbps
    if max_rtt is not None:
        out[MAX_RTT_TAG] = max_rtt
    if clients is not None:
        out[CLIENTS_TAG] = clients
    return out


def tier(instance_type: str, tags: dict[str, str], *, terraform: bool = False,
          srd: bool = False, client_group: str | None = None) -> list[dict[str, object]]:
    """A proxy tier as a Pulumi program or a Terraform plan would hold it (Terraform: with a
    client launch template in ``client_group`` when given)."""
    if terraform:
        nic: dict[str, object] = {"device_index": 0}
        if srd:
            nic["ena_srd_specification"] = [{"ena_srd_enabled": True}]
        out: list[dict[str, object]] = [
            {"type": "aws_placement_group", "name": "tier", "address": "aws_placement_group.tier",
             "new": {"name": "tier", "strategy": "cluster"}},
            {"type": "aws_launch_template", "name": "proxy",
             "address": "aws_launch_template.proxy",
             "new": {"name": "proxy", "instance_type": instance_type,
                     "placement": [{"group_name": "tier"}], "network_interfaces": [nic],
                     "tag_specifications": [{"resource_type": "instance", "tags": tags}]}},
            {"type": "aws_autoscaling_group", "name": "proxy",
             "address": "aws_autoscaling_group.proxy",
             "new": {"launch_template": [{"name": "proxy"}], "vpc_zone_identifier": ["subnet-1"]}},
        ]
        if client_group is not None:
            out += [
                {"type": "aws_placement_group", "name": "apps",
                 "address": "aws_placement_group.apps",
                 "new": {"name": "apps", "strategy": "cluster"}},
                {"type": "aws_launch_template", "name": "client",
                 "address": "aws_launch_template.client",
                 "new": {"name": "client", "instance_type": "c6in.2xlarge",
                         "placement": [{"group_name": client_group}],
                         "tag_specifications": [{"resource_type": "instance",
                                                 "tags": {"gpupool:role": "gpu-client"}}]}},
                {"type": "aws_autoscaling_group", "name": "client",
                 "address": "aws_autoscaling_group.client",
                 "new": {"launch_template": [{"name": "client"}],
                         "vpc_zone_identifier": ["subnet-1"]}},
            ]
        return out
    pulumi_nic: dict[str, object] = {"deviceIndex": 0}
    if srd:
        pulumi_nic["enaSrdSpecification"] = {"enaSrdEnabled": True}
    return [
        {"type": _PG, "name": "tier", "new": {"name": "tier-pg", "strategy": "cluster"}},
        {"type": _LT, "name": "proxy",
         "new": {"name": "proxy-lt", "instanceType": instance_type,
                 "placement": {"groupName": "tier-pg"}, "networkInterfaces": [pulumi_nic],
                 "tags": tags}},
    ]
