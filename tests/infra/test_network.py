"""The network a pool runs in: a private-only VPC with endpoints, or an existing VPC."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import load_stack
from infra.aws.network import INTERFACE_SERVICES
from infra.offline import OfflineError, load_fixture, run_offline

from .conftest import EXISTING_VPC_STACK

VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ASG = "aws:autoscaling/group:Group"


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_created_vpc_is_private_with_one_subnet_per_usable_zone(
    stack: str, stack_plans: dict[str, Any]
) -> None:
    loaded, plan = stack_plans[stack]
    (vpc,) = plan.of_type(VPC)
    assert vpc.inputs["cidrBlock"] == loaded.config.network.cidr
    assert vpc.inputs["enableDnsSupport"] is True and vpc.inputs["enableDnsHostnames"] is True
    subnets = plan.of_type(SUBNET)
    assert len(subnets) == loaded.config.network.az_count
    assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in subnets)
    # every subnet's zone offers every pool's instance type (per the fixture's offerings)
    offers = load_fixture(loaded.config.region).table("instanceTypeOfferings")
    wanted = {t.instance_type for t in loaded.instance_types.values()}
    for s in subnets:
        assert wanted <= set(offers[s.inputs["availabilityZone"]])
    assert len({s.inputs["availabilityZone"] for s in subnets}) == len(subnets)
    # the pools' groups span exactly these subnets (a remote-GPU tier keeps to one zone)
    subnet_urns = tuple(sorted(s.urn for s in subnets))
    for asg in plan.of_type(ASG):
        if "gpupool:aws:GpuPool" not in (asg.parent or ""):
            continue
        assert asg.property_dependencies["vpcZoneIdentifiers"] == subnet_urns
        assert len(asg.inputs["vpcZoneIdentifiers"]) == len(subnets)


def test_zone_choice_skips_zones_without_the_gpu(stack_plans: dict[str, Any]) -> None:
    # prod asks for 3 zones with T4, A10G and L4; us-east-1e offers none of them in the fixture
    _, plan = stack_plans["prod"]
    zones = sorted(s.inputs["availabilityZone"] for s in plan.of_type(SUBNET))
    assert zones == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert "g4dn.xlarge" not in load_fixture("us-east-1").table("instanceTypeOfferings").get(
        "us-east-1e", []
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_endpoints_reach_aws_without_internet(stack: str, stack_plans: dict[str, Any]) -> None:
    loaded, plan = stack_plans[stack]
    region = loaded.config.region
    endpoints = {e.inputs["serviceName"]: e for e in plan.of_type(ENDPOINT)}
    # proxies of remote-GPU tiers register themselves in Cloud Map: its API endpoint too
    extra = ("servicediscovery",) if loaded.config.remote_gpu else ()
    # pools with scale-in protection release it through the Auto Scaling API
    if any(p.scale_in_protection for p in loaded.config.pools):
        extra += ("autoscaling",)
    interface = {f"com.amazonaws.{region}.{s}" for s in (*INTERFACE_SERVICES, *extra)}
    assert set(endpoints) == interface | {f"com.amazonaws.{region}.s3"}
    assert {"ssm", "ssmmessages", "ec2messages", "monitoring", "logs"} <= set(INTERFACE_SERVICES)
    groups = plan.of_type("aws:ec2/securityGroup:SecurityGroup")
    (endpoint_sg,) = [r for r in groups if r.name.endswith("-endpoints")]
    for name in interface:
        e = endpoints[name]
        assert e.inputs["vpcEndpointType"] == "Interface"
        assert e.inputs["privateDnsEnabled"] is True
        assert e.property_dependencies["securityGroupIds"] == (endpoint_sg.urn,)
        assert len(e.inputs["subnetIds"]) == loaded.config.network.az_count
    s3 = endpoints[f"com.amazonaws.{region}.s3"]
    assert s3.inputs["vpcEndpointType"] == "Gateway"
    assert len(s3.inputs["routeTableIds"]) == 1
    # the endpoints admit HTTPS only from pool (and tier) security groups, named as peers
    rules = [r for r in plan.of_type(INGRESS)
             if r.property_dependencies["securityGroupId"] == (endpoint_sg.urn,)]
    tiers = loaded.config.remote_gpu
    assert len(rules) == len(loaded.config.pools) + len(tiers) + sum(
        t.clients is not None for t in tiers)
    pool_sgs = {r.urn for r in groups if r.name.endswith(("-sg", "-clients"))}
    for rule in rules:
        assert rule.property_dependencies["securityGroupId"] == (endpoint_sg.urn,)
        (peer,) = rule.property_dependencies["referencedSecurityGroupId"]
        assert peer in pool_sgs
        assert (rule.inputs["fromPort"], rule.inputs["toPort"]) == (443, 443)
        assert "cidrIpv4" not in rule.inputs
    # and the VPC's default group is adopted with no rules at all
    (default_sg,) = plan.of_type("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert "ingress" not in default_sg.inputs and "egress" not in default_sg.inputs


def test_existing_vpc_is_wrapped_not_created(write_stack: Callable[[str, str], Path]) -> None:
    loaded = load_stack(str(write_stack("edge", EXISTING_VPC_STACK)))
    plan = run_offline(loaded)
    created = {r.type for r in plan.resources if r.custom}
    assert not created & {VPC, SUBNET, ENDPOINT, "aws:ec2/routeTable:RouteTable"}
    (asg,) = plan.of_type(ASG)
    assert asg.inputs["vpcZoneIdentifiers"] == [
        "subnet-0aaaaaaaaaaaaaaa1",
        "subnet-0bbbbbbbbbbbbbbb2",
    ]
    (sg,) = plan.of_type("aws:ec2/securityGroup:SecurityGroup")
    assert sg.inputs["vpcId"] == "vpc-0123456789abcdef0"
    fixture = load_fixture("us-east-1")
    egress = {r.name.rsplit("-", 1)[-1]: r.inputs for r in plan.of_type(EGRESS)}
    assert egress["vpc"]["cidrIpv4"] == fixture.table("vpcs")["vpc-0123456789abcdef0"]["cidrBlock"]
    assert egress["s3"]["prefixListId"] == fixture.table("prefixLists")[
        "com.amazonaws.us-east-1.s3"
    ]["id"]
    assert all((e["fromPort"], e["toPort"]) == (443, 443) for e in egress.values())
    assert not plan.of_type(INGRESS)
    assert plan.outputs["groupNames"]["l4"].startswith("edge-l4-asg-")


def test_existing_vpc_unknown_to_the_fixtures_fails_clearly(
    write_stack: Callable[[str, str], Path],
) -> None:
    text = EXISTING_VPC_STACK.replace("vpc-0123456789abcdef0", "vpc-0fedcba9876543210")
    path = write_stack("other", text)
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(path)))
    (line,) = e.value.problems
    assert line.startswith(f"{path}: offline plan: aws:ec2/getVpc:getVpc")
    assert "vpc-0fedcba9876543210" in line and "GPUPOOL_OFFLINE_FIXTURES" in line


def test_fixture_override_describes_an_existing_vpc(
    write_stack: Callable[[str, str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = EXISTING_VPC_STACK.replace("vpc-0123456789abcdef0", "vpc-0fedcba9876543210")
    path = write_stack("other", text)
    extra = tmp_path / "fixtures"
    extra.mkdir()
    (extra / "us-east-1.json").write_text(
        '{"vpcs": {"vpc-0fedcba9876543210": {"cidrBlock": "172.31.0.0/16"}}}'
    )
    monkeypatch.setenv("GPUPOOL_OFFLINE_FIXTURES", str(extra))
    plan = run_offline(load_stack(str(path)))
    cidrs = [r.inputs.get("cidrIpv4") for r in plan.of_type(EGRESS)]
    assert "172.31.0.0/16" in cidrs
    assert str(extra / "us-east-1.json") in plan.fixture


def test_too_many_zones_for_the_gpu_is_a_clear_error(
    write_stack: Callable[[str, str], Path],
) -> None:
    # g5g.xlarge (T4g) is offered in four us-east-1 zones of the fixture
    path = write_stack(
        "wide",
        """\
        config:
          gpupool:environment: test
          gpupool:team: t
          gpupool:costCenter: c
          gpupool:network: {createVpc: true, azCount: 5}
          gpupool:pools:
            - {name: arm, gpu: T4g, arch: arm64, maxSize: 2}
        """,
    )
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(path)))
    (line,) = e.value.problems
    assert line.startswith(f"{path}: gpupool:network.azCount: expected at most 4 in us-east-1")
    assert "g5g.xlarge" in line and line.endswith("got 5")
