"""Generate a Pulumi preview (``pulumi preview --json``, the engine's PreviewDigest) of N resources.

The same fleet as ``gen_tfplan.py``, written as the Pulumi engine writes it: per GPU pool a
``gpupool:GpuPool`` component (``custom: false``), and under it a launch template, an autoscaling
group (mixed instances policy, linked through ``propertyDependencies``), a target-tracking policy
on ``CWAgent/nvidia_smi_utilization_gpu``, a GPU instance, and six non-GPU resources (CPU
instance, security group, IAM role, S3 bucket, subnet, log group). One pool in ten upsizes its GPU
type (an ``update`` step with both states, outputs included); the others are ``create`` steps;
about one in twenty leaves IMDSv1 on. Inputs carry ``__defaults`` and a provider reference as the
engine writes them; ``propertyDependencies`` values are lists or ``null`` (Go's nil slice). The
document is indented by four spaces, as the CLI prints it. Deterministic for a given N.

Usage: ``python bench/gen_preview.py 10000 > preview.json``.
"""

from __future__ import annotations

import copy
import json
import random
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 1
PER_POOL = 10  # resources per pool (the component is not counted: it owns no infrastructure)
GPU_TYPES = [
    ("g4dn", "xlarge", "2xlarge"), ("g5", "xlarge", "4xlarge"), ("g6", "xlarge", "2xlarge"),
]
STACK, PROJECT = "prod", "ml-fleet"
PROVIDER = (f"urn:pulumi:{STACK}::{PROJECT}::pulumi:providers:aws::default_6_83_2"
            "::9b0f1c52-3f1e-4d55-b0a8-2c1f7e6d9a10")
COMPONENT = "gpupool:index:GpuPool"


def urn(rtype: str, name: str, parent: str | None = None) -> str:
    qualified = f"{parent}${rtype}" if parent else rtype
    return f"urn:pulumi:{STACK}::{PROJECT}::{qualified}::{name}"


def _tags(i: int) -> dict[str, str]:
    return {"team": f"team-{i % 17}", "cost-center": f"cc-{1000 + i % 23}", "environment": "prod"}


def _launch_template(t: str, i: int, imdsv2: bool) -> dict[str, Any]:
    return {
        "__defaults": ["name"],
        "blockDeviceMappings": [{"__defaults": [], "deviceName": "/dev/xvda", "ebs": {
            "__defaults": [], "encrypted": "true", "volumeSize": 100, "volumeType": "gp3"}}],
        "iamInstanceProfile": {"__defaults": [], "name": f"pool-{i}-profile"},
        "imageId": "ami-0123456789abcdef0",
        "instanceType": t,
        "metadataOptions": {"__defaults": [], "httpEndpoint": "enabled",
                            "httpPutResponseHopLimit": 2,
                            "httpTokens": "required" if imdsv2 else "optional"},
        "monitoring": {"__defaults": [], "enabled": True},
        "name": f"pool-{i}-lt-{i:07x}",
        "tagSpecifications": [{"__defaults": [], "resourceType": "instance", "tags": _tags(i)}],
        "tags": _tags(i),
        "updateDefaultVersion": True,
    }


def _asg(t: str, i: int) -> dict[str, Any]:
    return {
        "__defaults": ["forceDelete", "metricsGranularity", "waitForCapacityTimeout"],
        "capacityRebalance": True,
        "desiredCapacity": 1,
        "enabledMetrics": ["GroupInServiceInstances", "GroupDesiredCapacity"],
        "forceDelete": False,
        "maxSize": 8,
        "metricsGranularity": "1Minute",
        "minSize": 0,
        "mixedInstancesPolicy": {"__defaults": [], "instancesDistribution": {
            "__defaults": [], "onDemandBaseCapacity": 0,
            "onDemandPercentageAboveBaseCapacity": 30,
            "spotAllocationStrategy": "price-capacity-optimized"},
            "launchTemplate": {"__defaults": [], "launchTemplateSpecification": {
                "__defaults": [], "launchTemplateId": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
                "version": "$Latest"},
                "overrides": [{"__defaults": [], "instanceType": t}]}},
        "name": f"pool-{i}",
        "tags": [{"__defaults": [], "key": k, "propagateAtLaunch": True, "value": v}
                 for k, v in _tags(i).items()],
        "vpcZoneIdentifiers": [f"subnet-{i:017x}"],
        "waitForCapacityTimeout": "10m",
    }


def _policy(i: int) -> dict[str, Any]:
    return {
        "__defaults": ["name"],
        "autoscalingGroupName": f"pool-{i}",
        "estimatedInstanceWarmup": 300,
        "name": f"pool-{i}-gpu-utilisation-{i:07x}",
        "policyType": "TargetTrackingScaling",
        "targetTrackingConfiguration": {"__defaults": [], "customizedMetricSpecification": {
            "__defaults": [], "metricDimensions": [
                {"__defaults": [], "name": "AutoScalingGroupName", "value": f"pool-{i}"}],
            "metricName": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
            "statistic": "Average"}, "disableScaleIn": False, "targetValue": 70},
    }


def _instance(t: str, i: int, imdsv2: bool) -> dict[str, Any]:
    return {
        "__defaults": ["getPasswordData", "sourceDestCheck"],
        "ami": "ami-0123456789abcdef0",
        "associatePublicIpAddress": False,
        "ebsOptimized": True,
        "getPasswordData": False,
        "iamInstanceProfile": f"pool-{i}-profile",
        "instanceType": t,
        "metadataOptions": {"__defaults": [], "httpEndpoint": "enabled",
                            "httpPutResponseHopLimit": 2,
                            "httpTokens": "required" if imdsv2 else "optional"},
        "monitoring": True,
        "rootBlockDevice": {"__defaults": [], "encrypted": True, "volumeSize": 100,
                            "volumeType": "gp3"},
        "sourceDestCheck": True,
        "subnetId": f"subnet-{i:017x}",
        "tags": _tags(i),
    }


def _others(i: int) -> list[tuple[str, str, dict[str, Any]]]:
    role = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action":
                       "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}]})
    return [
        ("aws:ec2/instance:Instance", f"bastion-{i}", _instance("m5.large", i, True)),
        ("aws:ec2/securityGroup:SecurityGroup", f"sg-{i}", {
            "__defaults": ["revokeRulesOnDelete"], "description": "GPU pool, no open ingress",
            "egress": [{"__defaults": ["self"], "cidrBlocks": ["0.0.0.0/0"], "fromPort": 0,
                        "protocol": "-1", "self": False, "toPort": 0}],
            "ingress": [], "name": f"pool-{i}", "revokeRulesOnDelete": False,
            "tags": _tags(i)}),
        ("aws:s3/bucketV2:BucketV2", f"artifacts-{i}", {
            "__defaults": ["forceDestroy"], "bucket": f"pool-{i}-artifacts",
            "forceDestroy": False, "tags": _tags(i)}),
        ("aws:iam/role:Role", f"node-{i}", {
            "__defaults": ["forceDetachPolicies", "maxSessionDuration", "path"],
            "assumeRolePolicy": role, "forceDetachPolicies": False, "maxSessionDuration": 3600,
            "name": f"pool-{i}-node", "path": "/", "tags": _tags(i)}),
        ("aws:ec2/subnet:Subnet", f"subnet-{i}", {
            "__defaults": ["assignIpv6AddressOnCreation", "mapPublicIpOnLaunch"],
            "assignIpv6AddressOnCreation": False,
            "cidrBlock": f"10.{i % 250}.{i // 250 % 250}.0/24", "mapPublicIpOnLaunch": False,
            "tags": _tags(i), "vpcId": "vpc-0123456789abcdef0"}),
        ("aws:cloudwatch/logGroup:LogGroup", f"logs-{i}", {
            "__defaults": ["skipDestroy"], "name": f"/gpupool/pool-{i}",
            "retentionInDays": 30, "skipDestroy": False, "tags": _tags(i)}),
    ]


def _state(u: str, rtype: str, inputs: dict[str, Any], parent: str,
           deps: dict[str, list[str] | None], outputs: bool) -> dict[str, Any]:
    state: dict[str, Any] = {"urn": u, "custom": True, "type": rtype, "inputs": inputs,
                             "parent": parent, "provider": PROVIDER,
                             "propertyDependencies": deps}
    if outputs:  # an existing resource's state: its id and outputs (inputs, plus what AWS set)
        state["id"] = f"id-{zlib.crc32(u.encode()):08x}"
        state["outputs"] = {**{k: v for k, v in inputs.items() if k != "__defaults"},
                            "arn": f"arn:aws:service:us-east-1:123456789012:{u.rsplit('::', 1)[1]}",
                            "id": state["id"]}
    return state


def pool_steps(i: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """The component's step and the ten resource steps of pool ``i``."""
    family, small, big = GPU_TYPES[i % len(GPU_TYPES)]
    upsize = i % 10 == 3  # one pool in ten: the vertical upsize gpupool exists to stop
    imdsv2 = rng.random() > 0.05
    new_type, old_type = f"{family}.{big if upsize else small}", f"{family}.{small}"
    comp = urn(COMPONENT, f"pool-{i}")
    yield {"op": "update" if upsize else "create", "urn": comp,
           "newState": {"urn": comp, "custom": False, "type": COMPONENT,
                        "parent": urn("pulumi:pulumi:Stack", f"{PROJECT}-{STACK}")},
           "detailedDiff": None}
    lt = urn("aws:ec2/launchTemplate:LaunchTemplate", f"lt-{i}", COMPONENT)
    asg = urn("aws:autoscaling/group:Group", f"asg-{i}", COMPONENT)
    gpu: list[tuple[str, str, dict[str, Any], dict[str, list[str] | None], bool]] = [
        ("aws:ec2/launchTemplate:LaunchTemplate", f"lt-{i}", _launch_template(new_type, i, imdsv2),
         {"instanceType": None, "metadataOptions": None}, True),
        ("aws:autoscaling/group:Group", f"asg-{i}", _asg(new_type, i),
         {"mixedInstancesPolicy": [lt], "maxSize": None, "minSize": None}, True),
        ("aws:autoscaling/policy:Policy", f"scale-{i}", _policy(i),
         {"autoscalingGroupName": [asg], "targetTrackingConfiguration": [asg]}, False),
        ("aws:ec2/instance:Instance", f"gpu-{i}", _instance(new_type, i, imdsv2),
         {"instanceType": None}, True),
    ]
    others = [(t, n, inp, {}, False) for t, n, inp in _others(i)]
    for rtype, name, inputs, deps, typed in [*gpu, *others]:
        u = urn(rtype, name, COMPONENT)
        new = _state(u, rtype, inputs, comp, deps, outputs=False)
        step: dict[str, Any] = {"op": "create", "urn": u, "provider": PROVIDER,
                                "newState": new}
        if upsize and typed:
            old_inputs = copy.deepcopy(inputs)
            _retype(old_inputs, old_type)
            step["op"] = "update"
            step["oldState"] = _state(u, rtype, old_inputs, comp, deps, outputs=True)
            step["diffReasons"] = ["instanceType"]
            step["detailedDiff"] = {"instanceType": {"kind": "update", "inputDiff": True}}
        else:
            step["detailedDiff"] = None
        yield step


def _retype(inputs: dict[str, Any], old: str) -> None:
    if "instanceType" in inputs:
        inputs["instanceType"] = old
    mip = inputs.get("mixedInstancesPolicy")
    if mip:
        for o in mip["launchTemplate"]["overrides"]:
            o["instanceType"] = old


def generate(n: int, seed: int = 7) -> dict[str, Any]:
    """A preview of ``n`` resources (rounded up to whole pools of ten), plus the stack,
    the provider and one component per pool."""
    rng = random.Random(seed)
    stack = urn("pulumi:pulumi:Stack", f"{PROJECT}-{STACK}")
    steps: list[dict[str, Any]] = [
        {"op": "same", "urn": stack, "newState": {"urn": stack, "custom": False,
                                                  "type": "pulumi:pulumi:Stack"}},
        {"op": "same", "urn": PROVIDER, "newState": {
            "urn": PROVIDER, "custom": True, "type": "pulumi:providers:aws",
            "inputs": {"region": "us-east-1", "version": "6.83.2"}}},
    ]
    pools = (n + PER_POOL - 1) // PER_POOL
    for i in range(pools):
        steps.extend(pool_steps(i, rng))
    upsized = sum(1 for i in range(pools) if i % 10 == 3)
    return {
        "config": {"aws:region": "us-east-1", f"{PROJECT}:team": "research"},
        "steps": steps,
        "duration": 41_000_000_000,
        "changeSummary": {"create": len(steps) - 2 - upsized * 5, "update": upsized * 5,
                          "same": 2},
    }


def write_preview(n: int, directory: Path) -> Path:
    """The preview for ``n`` resources, generated once per generator version and cached."""
    path = directory / f"preview-v{GENERATOR_VERSION}-{n}.json"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w") as f:
            json.dump(generate(n), f, indent=4)
        tmp.replace(path)
    return path


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    json.dump(generate(count), sys.stdout, indent=4)
    sys.stdout.write("\n")
