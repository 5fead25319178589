"""Every resource a GPU pool declares, and the inputs a pool's users and policies rely on."""

from __future__ import annotations

import base64
import json
import subprocess
from collections import Counter
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from gpupool.config import LoadedStack
from infra.aws.gpu_pool import AMI_PARAMETERS, GpuPool, GpuPoolArgs, NotSmallestSize
from infra.aws.user_data import agent_config_from_script
from infra.offline import OfflinePlan, PlannedResource, load_fixture

from .conftest import STACKS

CATALOG = load_catalog()
POOL_TYPE = "gpupool:aws:GpuPool"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
POLICY = "aws:autoscaling/policy:Policy"
SG = "aws:ec2/securityGroup:SecurityGroup"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ATTACH = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ROLE = "aws:iam/role:Role"
PROFILE = "aws:iam/instanceProfile:InstanceProfile"
CHARGEBACK = ("team", "cost-center", "environment")


def pool_children(plan: OfflinePlan, stack: str, pool: str) -> dict[str, list[PlannedResource]]:
    component = plan.by_urn()[f"urn:pulumi:{stack}::gpupool::{POOL_TYPE}::{stack}-{pool}"]
    out: dict[str, list[PlannedResource]] = {}
    for r in plan.children(component.urn):
        out.setdefault(r.type, []).append(r)
    return out


def one(children: dict[str, list[PlannedResource]], type_: str) -> dict[str, Any]:
    found = children[type_]
    assert len(found) == 1, (type_, [r.name for r in found])
    return dict(found[0].inputs)


def cases() -> list[tuple[str, str]]:
    from gpupool.config import load_stack

    from .conftest import ROOT

    return [
        (stack, pool.name)
        for stack in STACKS
        for pool in load_stack(str(ROOT / "stacks" / f"Pulumi.{stack}.yaml")).config.pools
    ]


CASES = cases()


@pytest.fixture
def pool_case(
    request: pytest.FixtureRequest, stack_plans: dict[str, tuple[LoadedStack, OfflinePlan]]
) -> tuple[LoadedStack, OfflinePlan, Any, dict[str, list[PlannedResource]]]:
    stack, pool_name = request.param
    loaded, plan = stack_plans[stack]
    pool = next(p for p in loaded.config.pools if p.name == pool_name)
    return loaded, plan, pool, pool_children(plan, stack, pool_name)


parametrize_pools = pytest.mark.parametrize(
    "pool_case", CASES, indirect=True, ids=[f"{s}-{p}" for s, p in CASES]
)


@parametrize_pools
def test_pool_declares_exactly_these_resources(pool_case: Any) -> None:
    _, _, pool, children = pool_case
    counts = Counter({t: len(rs) for t, rs in children.items()})
    expected = {LT: 1, ASG: 1, POLICY: 1, SG: 1, ROLE: 1, PROFILE: 1, ATTACH: 2, EGRESS: 2,
                INGRESS: 1}
    if pool.scale_in_protection:  # the instances may release their own protection
        expected["aws:iam/rolePolicy:RolePolicy"] = 1
    assert counts == Counter(expected)


@parametrize_pools
def test_launch_template_uses_the_smallest_size_for_the_gpu(pool_case: Any) -> None:
    loaded, _, pool, children = pool_case
    lt, asg = one(children, LT), one(children, ASG)
    smallest = CATALOG.smallest_for(pool.gpu, pool.arch)
    assert smallest is not None
    resolved = loaded.instance_types[pool.name].instance_type
    assert lt["instanceType"] == smallest.instance_type == resolved
    assert CATALOG.is_smallest(lt["instanceType"])
    overrides = asg["mixedInstancesPolicy"]["launchTemplate"]["overrides"]
    assert overrides == [{"instanceType": smallest.instance_type}]


@parametrize_pools
def test_launch_template_hardening(pool_case: Any) -> None:
    loaded, _, pool, children = pool_case
    lt = one(children, LT)
    assert lt["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 2,
    }
    (root,) = lt["blockDeviceMappings"]
    assert root["deviceName"] == "/dev/sda1"
    assert root["ebs"]["encrypted"] == "true"
    assert root["ebs"]["volumeType"] == "gp3"
    assert root["ebs"]["volumeSize"] == pool.root_volume_gib
    assert lt["monitoring"] == {"enabled": True}
    (nic,) = lt["networkInterfaces"]
    assert nic["associatePublicIpAddress"] == "false"
    assert "keyName" not in lt  # no SSH keys: access is through SSM
    fixture = load_fixture(loaded.config.region)
    arch = loaded.instance_types[pool.name].arch
    assert lt["imageId"] == fixture.table("ssmParameters")[AMI_PARAMETERS[arch]]["value"]


@parametrize_pools
def test_chargeback_tags_on_instances_volumes_and_group(pool_case: Any) -> None:
    loaded, _, pool, children = pool_case
    expected = loaded.config.chargeback(pool)
    lt, asg = one(children, LT), one(children, ASG)
    specs = {s["resourceType"]: s["tags"] for s in lt["tagSpecifications"]}
    assert {"instance", "volume"} <= set(specs)
    for tags in specs.values():
        assert expected.items() <= tags.items()
        assert all(tags.get(k) for k in CHARGEBACK)
    asg_tags = {t["key"]: t for t in asg["tags"]}
    for key, value in expected.items():
        assert asg_tags[key]["value"] == value
    assert all(t["propagateAtLaunch"] is True for t in asg["tags"])


@parametrize_pools
def test_group_sizes_distribution_and_lifecycle(pool_case: Any) -> None:
    _, _, pool, children = pool_case
    asg = one(children, ASG)
    assert (asg["minSize"], asg["maxSize"]) == (pool.min_size, pool.max_size)
    assert asg.get("desiredCapacity") == pool.desired_capacity
    dist = asg["mixedInstancesPolicy"]["instancesDistribution"]
    assert dist == {
        "onDemandBaseCapacity": pool.on_demand_base,
        "onDemandPercentageAboveBaseCapacity": round(100 * (1 - pool.spot_share)),
        "spotAllocationStrategy": "price-capacity-optimized",
    }
    assert asg["capacityRebalance"] is True
    assert {"GroupDesiredCapacity", "GroupInServiceInstances"} <= set(asg["enabledMetrics"])
    assert asg["instanceRefresh"]["strategy"] == "Rolling"
    lt_urn = children[LT][0].urn
    spec = asg["mixedInstancesPolicy"]["launchTemplate"]["launchTemplateSpecification"]
    assert spec["launchTemplateId"].startswith("lt-")
    assert spec["version"] == "1"  # the template's latest version: a change triggers a refresh
    assert children[ASG][0].property_dependencies["mixedInstancesPolicy"] == (lt_urn,)


@parametrize_pools
def test_scaling_policy_tracks_gpu_utilisation_of_its_own_group(pool_case: Any) -> None:
    _, plan, pool, children = pool_case
    policy = one(children, POLICY)
    group_name = plan.outputs["groupNames"][pool.name]
    assert policy["policyType"] == "TargetTrackingScaling"
    assert policy["autoscalingGroupName"] == group_name
    ttc = policy["targetTrackingConfiguration"]
    assert ttc["targetValue"] == pool.target_gpu_utilisation
    assert ttc["customizedMetricSpecification"] == {
        "namespace": "CWAgent",
        "metricName": "nvidia_smi_utilization_gpu",
        "statistic": "Average",
        "metricDimensions": [{"name": "AutoScalingGroupName", "value": group_name}],
    }
    assert children[POLICY][0].property_dependencies["autoscalingGroupName"] == (
        children[ASG][0].urn,
    )


@parametrize_pools
def test_user_data_publishes_the_metric_the_policy_tracks(pool_case: Any) -> None:
    loaded, _, _, children = pool_case
    script = base64.b64decode(one(children, LT)["userData"]).decode()
    assert script.startswith("#!/bin/bash\n")
    assert "set -euo pipefail" in script
    assert f"amazoncloudwatch-agent-{loaded.config.region}.s3." in script
    syntax = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert syntax.returncode == 0, syntax.stderr
    metrics = agent_config_from_script(script)["metrics"]
    assert metrics["namespace"] == "CWAgent"
    assert metrics["append_dimensions"] == {"AutoScalingGroupName": "${aws:AutoScalingGroupName}"}
    assert metrics["aggregation_dimensions"] == [["AutoScalingGroupName"]]
    assert metrics["metrics_collected"]["nvidia_gpu"]["measurement"] == [
        "utilization_gpu",
        "utilization_memory",
        "memory_used",
        "memory_total",
        "temperature_gpu",
        "power_draw",
    ]


@parametrize_pools
def test_instance_role_is_least_privilege(pool_case: Any) -> None:
    _, _, _, children = pool_case
    role = one(children, ROLE)
    trust = json.loads(role["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    assert statement == {
        "Effect": "Allow",
        "Principal": {"Service": "ec2.amazonaws.com"},
        "Action": "sts:AssumeRole",
    }
    arns = sorted(a.inputs["policyArn"] for a in children[ATTACH])
    assert arns == [
        "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
        "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",
    ]
    role_name = children[ATTACH][0].inputs["role"]
    assert all(a.inputs["role"] == role_name for a in children[ATTACH])
    assert one(children, PROFILE)["role"] == role_name
    assert children[LT][0].property_dependencies["iamInstanceProfile"] == (
        children[PROFILE][0].urn,
    )


@parametrize_pools
def test_security_group_has_no_ingress_and_https_only_egress(pool_case: Any) -> None:
    _, plan, _, children = pool_case
    sg = children[SG][0]
    assert "ingress" not in sg.inputs and "egress" not in sg.inputs
    sg_urn = sg.urn
    # nothing anywhere in the plan admits traffic into the pool's group
    for r in plan.of_type(INGRESS):
        assert r.property_dependencies.get("securityGroupId") != (sg_urn,)
    for rule in children[EGRESS]:
        assert rule.property_dependencies["securityGroupId"] == (sg_urn,)
        i = rule.inputs
        assert (i["ipProtocol"], i["fromPort"], i["toPort"]) == ("tcp", 443, 443)
        assert "cidrIpv4" not in i or i["cidrIpv4"] not in ("0.0.0.0/0",)
        assert i.get("referencedSecurityGroupId") or i.get("prefixListId")
    # the pool opens the endpoints' group to itself, by naming its own group
    (into,) = children[INGRESS]
    assert into.property_dependencies["referencedSecurityGroupId"] == (sg_urn,)


@pytest.mark.parametrize("stack", STACKS)
def test_no_open_cidr_anywhere(stack: str, stack_plans: dict[str, Any]) -> None:
    _, plan = stack_plans[stack]
    text = json.dumps([dict(r.inputs) for r in plan.resources])
    assert "0.0.0.0/0" not in text and "::/0" not in text
    assert not plan.of_type("aws:ec2/internetGateway:InternetGateway")
    assert not plan.of_type("aws:ec2/natGateway:NatGateway")
    # Inline role policies: a remote-GPU tier's discovery policy, which names its own Cloud
    # Map service and hosted zone (tests/infra/test_remote_gpu.py checks its scope), and a
    # protected pool's, which names its own group (tests/infra/test_pool_lifecycle.py).
    inline = [r for r in plan.resources if r.type.startswith("aws:iam/rolePolicy:")]
    assert all(r.parent is not None and (
        (r.name.endswith("-discovery") and "RemoteGpuTier" in r.parent)
        or (r.name.endswith("-scale-in-protection") and "GpuPool" in r.parent))
        for r in inline)


def test_pool_refuses_a_bigger_size_of_the_same_gpu(stack_plans: dict[str, Any]) -> None:
    loaded, _ = stack_plans["dev"]
    bigger = CATALOG.get("g4dn.2xlarge")
    assert bigger is not None
    args = GpuPoolArgs(
        pool=loaded.config.pools[0],
        instance_type=bigger,
        network=None,  # type: ignore[arg-type]  # never reached
        region="us-east-1",
    )
    with pytest.raises(NotSmallestSize, match=r"g4dn\.2xlarge .*use g4dn\.xlarge"):
        GpuPool("x", args)
