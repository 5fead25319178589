"""The network rules beyond their documented examples: links by reference, id and name in
Terraform and Pulumi shapes, every way a proxy gets a public address or a load balancer, and
the bandwidth exception of the size rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.rules import get_rule
from policies.rules.base import Example, Finding

U = "(known after apply)"
PROXY = {"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "4",
         "gpupool:remoting-max-rtt-us": "200"}
CLIENT = {"gpupool:role": "gpu-client"}


def run(rule_id: str, *resources: Mapping[str, Any], **params: Any) -> list[Finding]:
    return get_rule(rule_id).run(Example("t", True, resources).changes(), load_catalog(), params)


def blocking(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings if not f.unknown and not f.advisory_only]


def unknown(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings if f.unknown]


def tf(type_: str, name: str, new: dict[str, Any], **refs: str) -> dict[str, Any]:
    return {"type": type_, "name": name, "address": f"{type_}.{name}", "new": new,
            "references": refs}


def pg(strategy: str = "cluster", name: str = "tier") -> dict[str, Any]:
    return tf("aws_placement_group", name, {"name": name, "strategy": strategy,
                                             "id": name})


def tf_tier(*, pg_ref: bool = True, subnets: list[str] | None = None,
            nic: dict[str, Any] | None = None, itype: str = "g4dn.xlarge",
            tags: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """A Terraform proxy tier whose links are unknown values proven by configuration refs."""
    lt_refs = {"placement.group_name": "aws_placement_group.tier"} if pg_ref else {}
    lt = tf("aws_launch_template", "proxy", {
        "id": U, "name": "proxy", "instance_type": itype,
        "placement": [{"group_name": U if pg_ref else "tier"}],
        "network_interfaces": [nic or {"associate_public_ip_address": "false",
                                       "security_groups": [U]}],
        "tag_specifications": [{"resource_type": "instance", "tags": tags or PROXY}],
    }, **lt_refs, **{"network_interfaces.security_groups": "aws_security_group.proxy"})
    asg = tf("aws_autoscaling_group", "proxy", {
        "name": U, "vpc_zone_identifier": subnets or [U],
        "launch_template": [{"id": U, "version": "$Latest"}],
    }, **{"launch_template.id": "aws_launch_template.proxy",
          "vpc_zone_identifier": "aws_subnet.a"})
    sg = tf("aws_security_group", "proxy", {"id": U, "name": "proxy", "ingress": U})
    subnet = tf("aws_subnet", "a", {"id": U, "availability_zone": "us-east-1a",
                                    "map_public_ip_on_launch": False})
    return [pg(), lt, asg, sg, subnet]


# --------------------------------------------------------------------------- placement


def test_terraform_links_by_configuration_reference_although_every_id_is_unknown() -> None:
    resources = tf_tier()
    assert run("gpu-proxy-placement", *resources) == []
    spread = [pg("spread"), *resources[1:]]
    [f] = run("gpu-proxy-placement", *spread)
    assert "has strategy spread" in f.message
    assert f.resource == "aws_autoscaling_group.proxy"


def test_placement_group_by_id_on_the_group_itself() -> None:
    group = {"type": "aws:autoscaling/group:Group", "name": "proxy",
             "new": {"placementGroup": "pg-0abc", "vpcZoneIdentifiers": ["subnet-1"],
                     "tags": [{"key": "gpupool:role", "value": "gpu-proxy",
                               "propagateAtLaunch": True}]}}
    placement = {"type": "aws:ec2/placementGroup:PlacementGroup", "name": "tier",
                 "new": {"name": "tier", "placementGroupId": "pg-0abc", "strategy": "partition"}}
    [f] = run("gpu-proxy-placement", group, placement)
    assert "placement group tier has strategy partition" in f.message


def test_placement_group_outside_the_plan_cannot_be_verified() -> None:
    instance = tf("aws_instance", "proxy", {"instance_type": "g4dn.xlarge",
                                            "placement_group": "shared", "tags": PROXY})
    [f] = run("gpu-proxy-placement", instance)
    assert f.unknown and "placement group shared is not in the plan" in f.message


def test_clients_join_the_proxies_group_or_are_told_which_one() -> None:
    proxy = tf("aws_instance", "proxy", {"instance_type": "g4dn.xlarge",
                                         "placement_group": "tier", "tags": PROXY})
    good = tf("aws_instance", "client", {"instance_type": "c7i.large",
                                         "placement_group": "tier", "tags": CLIENT})
    assert run("gpu-proxy-placement", pg(), proxy, good) == []
    alone = tf("aws_instance", "client", {"instance_type": "c7i.large", "tags": CLIENT})
    [f] = run("gpu-proxy-placement", pg(), proxy, alone)
    assert f.resource == "aws_instance.client"
    assert "GPU client is in no placement group" in f.message and "(tier)" in f.message


def test_unknown_subnet_zones_are_not_a_pass() -> None:
    group = tf("aws_autoscaling_group", "proxy", {
        "placement_group": "tier", "vpc_zone_identifier": ["subnet-x", "subnet-y"],
        "tag": [{"key": "gpupool:role", "value": "gpu-proxy", "propagate_at_launch": True}]})
    [f] = run("gpu-proxy-placement", pg(), group)
    assert f.unknown and "subnet(s) subnet-x, subnet-y are not in the plan" in f.message


def test_deleted_proxies_and_other_roles_are_out_of_scope() -> None:
    gone = {"type": "aws_instance", "name": "old", "address": "aws_instance.old",
            "old": {"instance_type": "g4dn.xlarge", "tags": PROXY}, "new": None}
    other = tf("aws_instance", "web", {"instance_type": "g4dn.xlarge",
                                       "tags": {"gpupool:role": "trainer"}})
    for rule in ("gpu-proxy-placement", "gpu-proxy-private", "gpu-proxy-network-budget"):
        assert run(rule, gone, other) == []


# --------------------------------------------------------------------------- private


def test_terraform_tier_with_private_interfaces_passes_and_unknown_ingress_is_said() -> None:
    findings = run("gpu-proxy-private", *tf_tier())
    assert blocking(findings) == []
    assert unknown(findings) == [
        "cannot verify: the ingress of security group proxy is unknown until apply"]


def test_subnet_that_maps_public_ips_when_the_template_says_nothing() -> None:
    resources = tf_tier(nic={"security_groups": [U]})
    resources[3]["new"]["ingress"] = []
    resources[4]["new"]["map_public_ip_on_launch"] = True
    [message] = blocking(run("gpu-proxy-private", *resources))
    assert message == ("GPU proxy gets a public IP: subnet a maps public IPs on launch and "
                       "network_interfaces.associate_public_ip_address does not turn it off")


def test_public_ip_from_the_launch_template_in_pulumi_spelling() -> None:
    lt = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
          "new": {"name": "p", "instanceType": "g4dn.xlarge", "tags": PROXY,
                  "networkInterfaces": [{"associatePublicIpAddress": "true",
                                         "securityGroups": ["sg-1"]}]}}
    sg = {"type": "aws:ec2/securityGroup:SecurityGroup", "name": "sg", "new": {"name": "sg-1"}}
    [message] = blocking(run("gpu-proxy-private", lt, sg))
    assert "(networkInterfaces.associatePublicIpAddress = true)" in message


def test_elastic_ip_on_a_proxy_instance_or_its_interface() -> None:
    sg = tf("aws_security_group", "p", {"id": "sg-1", "ingress": []})
    proxy = tf("aws_instance", "proxy", {"id": "i-1", "instance_type": "g4dn.xlarge",
                                         "associate_public_ip_address": False,
                                         "vpc_security_group_ids": ["sg-1"], "tags": PROXY})
    eip = tf("aws_eip", "ip", {"instance": U}, instance="aws_instance.proxy")
    [message] = blocking(run("gpu-proxy-private", sg, proxy, eip))
    assert "GPU proxy has a public IP (elastic IP ip)" in message
    eni = tf("aws_network_interface", "second", {
        "id": "eni-2", "security_groups": ["sg-1"], "attachment": [{"instance": "i-1"}]})
    assoc = tf("aws_eip_association", "ip2", {"network_interface_id": "eni-2"})
    [message] = blocking(run("gpu-proxy-private", sg, proxy, eni, assoc))
    assert "elastic IP ip2 on interface second" in message


@pytest.mark.parametrize("rule", [
    {"type": "aws_security_group_rule", "new": {"type": "ingress", "ipv6_cidr_blocks": ["::/0"],
                                                "from_port": 22, "to_port": 22,
                                                "protocol": "tcp", "security_group_id": "sg-1"}},
    {"type": "aws_vpc_security_group_ingress_rule",
     "new": {"cidr_ipv4": "0.0.0.0/0", "ip_protocol": "-1", "security_group_id": "sg-1"}},
])
def test_standalone_ingress_rules_open_to_the_world(rule: dict[str, Any]) -> None:
    sg = tf("aws_security_group", "p", {"id": "sg-1", "ingress": []})
    proxy = tf("aws_instance", "proxy", {"instance_type": "g4dn.xlarge",
                                         "associate_public_ip_address": False,
                                         "vpc_security_group_ids": ["sg-1"], "tags": PROXY})
    open_rule = tf(rule["type"], "open", rule["new"])
    [message] = blocking(run("gpu-proxy-private", sg, proxy, open_rule))
    assert message.startswith("ingress rule open admits ")
    assert "into security group p" in message
    egress = tf("aws_security_group_rule", "out", {"type": "egress", "cidr_blocks": ["0.0.0.0/0"],
                                                   "security_group_id": "sg-1"})
    assert blocking(run("gpu-proxy-private", sg, proxy, egress)) == []


def test_world_ingress_on_another_group_is_not_the_proxys_business() -> None:
    sg = tf("aws_security_group", "p", {"id": "sg-1", "ingress": []})
    web = tf("aws_security_group", "web", {"id": "sg-web", "ingress": [
        {"cidr_blocks": ["0.0.0.0/0"], "from_port": 443, "to_port": 443, "protocol": "tcp"}]})
    rule = tf("aws_vpc_security_group_ingress_rule", "web", {
        "cidr_ipv4": "0.0.0.0/0", "security_group_id": "sg-web"})
    proxy = tf("aws_instance", "proxy", {"instance_type": "g4dn.xlarge",
                                         "associate_public_ip_address": False,
                                         "vpc_security_group_ids": ["sg-1"], "tags": PROXY})
    assert run("gpu-proxy-private", sg, web, rule, proxy) == []


@pytest.mark.parametrize(("att", "target"), [
    ({"type": "aws_lb_target_group_attachment",
      "new": {"target_group_arn": "arn:tg", "target_id": U}}, "target_id"),
    ({"type": "aws_autoscaling_traffic_source_attachment",
      "new": {"autoscaling_group_name": U,
              "traffic_source": [{"identifier": "arn:tg", "type": "elbv2"}]}},
     "autoscaling_group_name"),
    ({"type": "aws_elb_attachment", "new": {"elb": "classic", "instance": U}}, "instance"),
])
def test_load_balancer_attachments_by_reference(att: dict[str, Any], target: str) -> None:
    kind = "aws_autoscaling_group" if "autoscaling" in target else "aws_instance"
    proxy = tf(kind, "proxy", {"instance_type": "g4dn.xlarge", "tags": PROXY,
                               "associate_public_ip_address": False,
                               "tag": [{"key": "gpupool:role", "value": "gpu-proxy",
                                        "propagate_at_launch": True}]})
    attachment = tf(att["type"], "front", att["new"], **{target: f"{kind}.proxy"})
    messages = blocking(run("gpu-proxy-private", proxy, attachment))
    assert [m for m in messages if "a load balancer is in the data path: front" in m]
    unlinked = tf(att["type"], "front", att["new"])
    findings = run("gpu-proxy-private", proxy, unlinked)
    assert not [m for m in blocking(findings) if "load balancer" in m]
    assert [m for m in unknown(findings) if "front" in m and "unknown until apply" in m]


def test_target_groups_written_on_the_group_itself() -> None:
    group = {"type": "aws:autoscaling/group:Group", "name": "proxy",
             "new": {"targetGroupArns": ["arn:aws:elasticloadbalancing:tg/alb"],
                     "tags": [{"key": "gpupool:role", "value": "gpu-proxy",
                               "propagateAtLaunch": True}]}}
    messages = blocking(run("gpu-proxy-private", group))
    assert [m for m in messages if "its target_group_arns (arn:aws:elasticloadbalancing" in m]


# --------------------------------------------------------------------------- budget


def budget_tier(itype: str, min_gbps: str, rtt: str = "200", *, strategy: str = "cluster",
                srd: bool = False, clients: str | None = "in-group") -> list[dict[str, Any]]:
    nic: dict[str, Any] = {"deviceIndex": 0}
    if srd:
        nic["enaSrdSpecification"] = {"enaSrdEnabled": True}
    tags = {"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": min_gbps,
            "gpupool:remoting-max-rtt-us": rtt}
    if clients is not None:
        tags["gpupool:remoting-clients"] = clients
    return [
        {"type": "aws:ec2/placementGroup:PlacementGroup", "name": "tier",
         "new": {"name": "tier", "strategy": strategy}},
        {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
         "new": {"name": "lt", "instanceType": itype, "placement": {"groupName": "tier"},
                 "networkInterfaces": [nic]}},
        {"type": "aws:autoscaling/group:Group", "name": "proxy",
         "new": {"launchTemplate": {"name": "lt"},
                 "tags": [{"key": k, "value": v, "propagateAtLaunch": True}
                          for k, v in tags.items()]}},
    ]


def test_outside_a_cluster_group_one_flow_gets_5_gbps() -> None:
    assert run("gpu-proxy-network-budget", *budget_tier("g4dn.2xlarge", "8")) == []
    [f] = run("gpu-proxy-network-budget", *budget_tier("g4dn.2xlarge", "8", strategy="spread"))
    assert ("one flow of TCP over ENA to clients outside the placement group is capped at 5 "
            "Gbps" in f.message)
    assert ("gpupool:remoting-clients = in-group, but the proxy is in no cluster placement "
            "group the plan shows" in f.message)
    assert f.detail is not None and f.detail["clients"] == "outside"


@pytest.mark.parametrize(("clients", "why"), [
    (None, "gpupool:remoting-clients is not set, so the clients are taken to be outside"),
    ("outside", "gpupool:remoting-clients = outside"),
    ("In-Group", "gpupool:remoting-clients = 'In-Group' is neither in-group nor outside"),
])
def test_clients_not_said_to_be_in_the_group_get_5_gbps(clients: str | None, why: str) -> None:
    """Issue 16 item 16: the 10 Gbps cap holds only between instances of one cluster placement
    group; the proxies' being in one says nothing about their clients."""
    findings = run("gpu-proxy-network-budget",
                   *budget_tier("g4dn.2xlarge", "8", clients=clients))
    capped = [f for f in findings if "capped at 5 Gbps" in f.message]
    assert len(capped) == 1 and why in capped[0].message
    assert ("clients in the proxies' cluster placement group (tag gpupool:remoting-clients = "
            "in-group) get 10 Gbps per flow; or EFA on g4dn.8xlarge would do") in capped[0].message
    assert len(findings) == (2 if clients == "In-Group" else 1)  # a bad value is its own finding
    # a budget that one flow from outside carries passes without the tag
    assert run("gpu-proxy-network-budget", *budget_tier("g4dn.2xlarge", "5", clients=clients)
               ) == ([] if clients != "In-Group" else findings[:1])


def test_the_clients_tag_may_be_unknown_until_apply() -> None:
    resources = budget_tier("g4dn.2xlarge", "8", clients=None)
    resources[2]["new"]["tags"].append({"key": "gpupool:remoting-clients",
                                        "value": "(known after apply)"})
    [f] = run("gpu-proxy-network-budget", *resources)
    assert "gpupool:remoting-clients is unknown until apply" in f.message


def test_ena_express_on_a_type_without_it_counts_as_tcp() -> None:
    [f] = run("gpu-proxy-network-budget", *budget_tier("g4dn.4xlarge", "15", srd=True))
    assert "TCP over ENA in a cluster placement group is capped at 10 Gbps" in f.message


def test_no_sync_calls_means_no_round_trip_bound() -> None:
    assert run("gpu-proxy-network-budget", *budget_tier("g4dn.xlarge", "1", "inf")) == []


def test_one_budget_tag_missing_is_said_and_the_other_still_judged() -> None:
    resources = budget_tier("g5g.xlarge", "5")
    tags = resources[2]["new"]["tags"]
    resources[2]["new"]["tags"] = [t for t in tags if t["key"] != "gpupool:remoting-max-rtt-us"]
    findings = run("gpu-proxy-network-budget", *resources)
    assert unknown(findings) == ["cannot verify: budget tag gpupool:remoting-max-rtt-us is not set"]
    assert [m for m in blocking(findings) if "g5g.xlarge's baseline bandwidth is 1.25" in m]


def test_type_outside_the_catalog_in_a_gpu_family_cannot_be_verified() -> None:
    findings = run("gpu-proxy-network-budget", *budget_tier("g9.xlarge", "1"))
    assert unknown(findings) == [
        "cannot verify: g9.xlarge is not in the GPU catalog, so its baseline bandwidth is not "
        "known"]


# --------------------------------------------------------------------------- ideas 1 and 2


def test_bandwidth_sizing_is_said_as_information_not_hidden() -> None:
    lt = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
          "new": {"instanceType": "g4dn.2xlarge",
                  "tags": {"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "8"}}}
    [f] = run("gpu-smallest-instance", lt)
    assert f.advisory_only
    assert f.message == (
        "g4dn.2xlarge is above the smallest size for T4 (g4dn.xlarge) for bandwidth, not GPU: "
        "this proxy's budget needs 8 Gbps per flow (gpupool:remoting-min-gbps), g4dn.xlarge's "
        "baseline is 5 Gbps, and g4dn.2xlarge (10 Gbps) is the smallest size that meets it")


@pytest.mark.parametrize(("tags", "why"), [
    ({"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "4"}, "justifies no bigger"),
    ({"gpupool:role": "gpu-client", "gpupool:remoting-min-gbps": "8"}, None),
    ({"gpupool:role": "gpu-proxy"}, None),
    ({"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "80"}, "no T4 size has"),
])
def test_no_exception_without_a_proxy_budget_that_needs_the_size(
        tags: dict[str, str], why: str | None) -> None:
    lt = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
          "new": {"instanceType": "g4dn.2xlarge", "tags": tags}}
    [f] = run("gpu-smallest-instance", lt)
    assert not f.advisory_only and "g4dn.2xlarge is not the smallest size" in f.message
    assert (why in f.message) if why else ("proxy" not in f.message)


def test_the_bandwidth_note_is_said_when_the_size_is_chosen_not_on_every_update() -> None:
    tags = {"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "8"}
    same = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
            "old": {"instanceType": "g4dn.2xlarge", "tags": tags},
            "new": {"instanceType": "g4dn.2xlarge", "tags": tags}}
    assert run("gpu-smallest-instance", same) == []
    stepped = {**same, "old": {"instanceType": "g4dn.xlarge", "tags": tags}}
    [f] = run("gpu-smallest-instance", stepped)
    assert f.advisory_only and "for bandwidth, not GPU" in f.message
    [f] = run("gpu-no-vertical-upsize", stepped)
    assert f.advisory_only and f.message.startswith("g4dn.xlarge → g4dn.2xlarge: g4dn.2xlarge is")


def test_unplaceable_rules_and_attachments_are_said_once_each_not_per_proxy() -> None:
    """N proxies and M rules or attachments of unknown target: N + M work and M findings (each
    on the rule or attachment), never N times M."""
    import time

    from policies.engine import evaluate
    from policies.model import Plan
    from policies.rules import rule_ids
    from policies.settings import parse_config

    n = 300
    rs: list[dict[str, Any]] = []
    for i in range(n):
        rs += [
            {"type": "aws:ec2/placementGroup:PlacementGroup", "name": f"pg{i}",
             "new": {"name": f"pg{i}", "strategy": "cluster"}},
            {"type": "aws:ec2/securityGroup:SecurityGroup", "name": f"sg{i}",
             "new": {"name": f"sg{i}", "ingress": []}},
            {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": f"lt{i}",
             "new": {"name": f"lt{i}", "instanceType": "g4dn.xlarge", "tags": PROXY,
                     "placement": {"groupName": f"pg{i}"},
                     "networkInterfaces": [{"associatePublicIpAddress": "false",
                                            "securityGroups": [f"sg{i}"]}]}},
            {"type": "aws:autoscaling/group:Group", "name": f"asg{i}",
             "new": {"launchTemplate": {"name": f"lt{i}"}, "vpcZoneIdentifiers": ["subnet-1"]}},
        ]
        if i % 10 == 0:
            rs += [tf("aws_vpc_security_group_ingress_rule", f"open{i}",
                      {"cidr_ipv4": "0.0.0.0/0", "security_group_id": U}),
                   tf("aws_autoscaling_attachment", f"front{i}", {"autoscaling_group_name": U})]
    plan = Plan("test", "many tiers", tuple(Example("t", True, rs).changes()))
    network = ("gpu-proxy-placement", "gpu-proxy-private", "gpu-proxy-network-budget")
    settings = parse_config({r: "disabled" for r in rule_ids() if r not in network}, "t")
    start = time.process_time()  # CPU, not wall: a loaded machine stretches only the latter
    result = evaluate([plan], settings)
    elapsed = time.process_time() - start
    said = [(v.policy, v.resource.split(".")[0]) for v in result.violations]
    assert sorted(set(said)) == [("gpu-proxy-private", "aws_autoscaling_attachment"),
                                 ("gpu-proxy-private", "aws_vpc_security_group_ingress_rule")]
    assert len(said) == 2 * n // 10
    assert elapsed < 10, elapsed  # a fraction of a second of CPU; a generous bound
