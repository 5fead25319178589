"""Generate a Terraform plan JSON (``terraform show -json``, format_version 1.2) of N resources.

The plan looks like a platform team's: GPU pools in a module called with ``for_each``-style
indices (launch template, autoscaling group, target-tracking policy, a GPU instance) next to the
usual non-GPU resources (security group, IAM role, S3 bucket, subnet, log group, a CPU instance).
One pool in ten upsizes its GPU type (g4dn.xlarge → g4dn.2xlarge), so gpupool finds violations;
IMDSv2 is off on some, so Checkov's CKV_AWS_79 finds some too. ``planned_values`` and
``configuration`` (with ``references``) are filled in as Terraform does, because Checkov reads
the former and gpupool the latter.

Usage: ``python bench/gen_tfplan.py 10000 > plan.json`` (deterministic for a given N).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 2
PER_POOL = 10  # resources per module instance
GPU_TYPES = [
    ("g4dn", "xlarge", "2xlarge"),
    ("g5", "xlarge", "4xlarge"),
    ("g6", "xlarge", "2xlarge"),
]
MODULE = "module.pool"


def _tags(i: int) -> dict[str, str]:
    return {"team": f"team-{i % 17}", "cost-center": f"cc-{1000 + i % 23}", "environment": "prod"}


def _instance(gpu_type: str, i: int, imdsv2: bool, encrypted: bool) -> dict[str, Any]:
    return {
        "ami": "ami-0123456789abcdef0",
        "instance_type": gpu_type,
        "subnet_id": f"subnet-{i:017x}",
        "associate_public_ip_address": False,
        "ebs_optimized": True,
        "monitoring": True,
        "iam_instance_profile": f"pool-{i}-profile",
        "metadata_options": [
            {
                "http_endpoint": "enabled",
                "http_tokens": "required" if imdsv2 else "optional",
                "http_put_response_hop_limit": 2,
                "instance_metadata_tags": "disabled",
            }
        ],
        "root_block_device": [
            {"encrypted": encrypted, "volume_size": 100, "volume_type": "gp3", "iops": 3000}
        ],
        "tags": _tags(i),
        "tags_all": _tags(i),
        "user_data": None,
        "credit_specification": [],
    }


def _launch_template(gpu_type: str, i: int, imdsv2: bool) -> dict[str, Any]:
    return {
        "name_prefix": f"pool-{i}-",
        "image_id": "ami-0123456789abcdef0",
        "instance_type": gpu_type,
        "update_default_version": True,
        "metadata_options": [
            {
                "http_endpoint": "enabled",
                "http_tokens": "required" if imdsv2 else "optional",
                "http_put_response_hop_limit": 2,
            }
        ],
        "block_device_mappings": [
            {
                "device_name": "/dev/xvda",
                "ebs": [{"encrypted": "true", "volume_size": 100, "volume_type": "gp3"}],
            }
        ],
        "iam_instance_profile": [{"name": f"pool-{i}-profile"}],
        "monitoring": [{"enabled": True}],
        "tag_specifications": [{"resource_type": "instance", "tags": _tags(i)}],
        "tags": _tags(i),
        "tags_all": _tags(i),
    }


def _asg(i: int, gpu_type: str) -> dict[str, Any]:
    return {
        "max_size": 8,
        "min_size": 0,
        "desired_capacity": 1,
        "capacity_rebalance": True,
        "vpc_zone_identifier": [f"subnet-{i:017x}"],
        "enabled_metrics": ["GroupInServiceInstances", "GroupDesiredCapacity"],
        "mixed_instances_policy": [
            {
                "instances_distribution": [
                    {"on_demand_base_capacity": 0, "spot_allocation_strategy":
                     "price-capacity-optimized", "on_demand_percentage_above_base_capacity": 30}
                ],
                "launch_template": [
                    {"launch_template_specification": [{"version": "$Latest"}],
                     "override": [{"instance_type": gpu_type}]}
                ],
            }
        ],
        "tag": [
            {"key": k, "value": v, "propagate_at_launch": True} for k, v in _tags(i).items()
        ],
    }


def _policy(i: int) -> dict[str, Any]:
    return {
        "name": f"pool-{i}-gpu-utilisation",
        "policy_type": "TargetTrackingScaling",
        "estimated_instance_warmup": 300,
        "target_tracking_configuration": [
            {
                "target_value": 70,
                "disable_scale_in": False,
                "customized_metric_specification": [
                    {
                        "metric_name": "nvidia_smi_utilization_gpu",
                        "namespace": "CWAgent",
                        "statistic": "Average",
                        # the value is the group's name, unknown until apply: absent here,
                        # true in after_unknown, a reference in the configuration
                        "metric_dimension": [{"name": "AutoScalingGroupName"}],
                    }
                ],
                "predefined_metric_specification": [],
            }
        ],
    }


def _others(i: int) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ("aws_instance", "bastion", {**_instance("m5.large", i, True, True)}),
        (
            "aws_security_group",
            "pool",
            {
                "name": f"pool-{i}",
                "description": "GPU pool, no open ingress",
                "ingress": [],
                "egress": [{"from_port": 0, "to_port": 0, "protocol": "-1",
                            "cidr_blocks": ["0.0.0.0/0"]}],
                "tags": _tags(i),
            },
        ),
        ("aws_s3_bucket", "artifacts", {"bucket": f"pool-{i}-artifacts", "tags": _tags(i)}),
        (
            "aws_iam_role",
            "node",
            {
                "name": f"pool-{i}-node",
                "assume_role_policy": json.dumps(
                    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action":
                     "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}]}
                ),
                "tags": _tags(i),
            },
        ),
        ("aws_subnet", "pool", {"cidr_block": f"10.{i % 250}.{i // 250 % 250}.0/24",
                                 "vpc_id": "vpc-0123456789abcdef0", "tags": _tags(i)}),
        ("aws_cloudwatch_log_group", "pool", {"name": f"/gpupool/pool-{i}",
                                              "retention_in_days": 30, "tags": _tags(i)}),
    ]


def _unknown(after: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    return {k: True for k in keys if k not in after}


def pool_resources(i: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """The ten resource changes of pool ``i``."""
    family, small, big = GPU_TYPES[i % len(GPU_TYPES)]
    upsize = i % 10 == 3  # one pool in ten: the vertical upsize gpupool exists to stop
    imdsv2 = rng.random() > 0.05
    new_type = f"{family}.{big if upsize else small}"
    old_type = f"{family}.{small}"
    address = f'{MODULE}["p{i}"]'
    gpu = [
        ("aws_launch_template", "gpu", _launch_template(new_type, i, imdsv2), old_type),
        ("aws_autoscaling_group", "gpu", _asg(i, new_type), old_type),
        ("aws_autoscaling_policy", "gpu_utilisation", _policy(i), None),
        ("aws_instance", "gpu", _instance(new_type, i, imdsv2, True), old_type),
    ]
    for kind, name, after, old in [*gpu, *((k, n, a, None) for k, n, a in _others(i))]:
        if upsize and old is not None:
            before = json.loads(json.dumps(after))
            _retype(before, old)
            actions = ["update"]
        else:
            before = None
            actions = ["create"]
        unknown = _unknown(after, ["id", "arn", "name"] if kind != "aws_instance" else
                           ["id", "arn", "private_ip", "public_ip"])
        if kind == "aws_autoscaling_group":
            unknown["name"] = True  # the policy's autoscaling_group_name is unknown until apply
        if kind == "aws_autoscaling_policy":
            unknown["autoscaling_group_name"] = True
            unknown["target_tracking_configuration"] = [
                {"customized_metric_specification": [{"metric_dimension": [{"value": True}]}]}
            ]
        yield {
            "address": f"{address}.{kind}.{name}",
            "module_address": address,
            "mode": "managed",
            "type": kind,
            "name": name,
            "provider_name": "registry.terraform.io/hashicorp/aws",
            "change": {
                "actions": actions,
                "before": before,
                "after": after,
                "after_unknown": unknown,
                "before_sensitive": False if before is None else {},
                "after_sensitive": {},
            },
        }


def _retype(values: dict[str, Any], old: str) -> None:
    if "instance_type" in values:
        values["instance_type"] = old
    for mip in values.get("mixed_instances_policy", []):
        for lt in mip["launch_template"]:
            for o in lt["override"]:
                o["instance_type"] = old


def _configuration() -> dict[str, Any]:
    """The module's configuration once (Terraform writes it per module, not per instance)."""

    def ref(*refs: str) -> dict[str, Any]:
        return {"references": list(refs)}

    resources = [
        {"address": "aws_launch_template.gpu", "mode": "managed", "type": "aws_launch_template",
         "name": "gpu", "provider_config_key": "aws", "schema_version": 0,
         "expressions": {"instance_type": ref("var.instance_type")}},
        {"address": "aws_autoscaling_group.gpu", "mode": "managed",
         "type": "aws_autoscaling_group", "name": "gpu", "provider_config_key": "aws",
         "schema_version": 0,
         "expressions": {"mixed_instances_policy": [{"launch_template": [
             {"launch_template_specification": [{"launch_template_id": ref(
                 "aws_launch_template.gpu.id", "aws_launch_template.gpu")}]}]}]}},
        {"address": "aws_autoscaling_policy.gpu_utilisation", "mode": "managed",
         "type": "aws_autoscaling_policy", "name": "gpu_utilisation",
         "provider_config_key": "aws", "schema_version": 0,
         "expressions": {
             "autoscaling_group_name": ref("aws_autoscaling_group.gpu.name",
                                           "aws_autoscaling_group.gpu"),
             "target_tracking_configuration": [{"customized_metric_specification": [{
                 "metric_dimension": [{"name": {"constant_value": "AutoScalingGroupName"},
                                       "value": ref("aws_autoscaling_group.gpu.name",
                                                    "aws_autoscaling_group.gpu")}]}]}],
         }},
        {"address": "aws_instance.gpu", "mode": "managed", "type": "aws_instance", "name": "gpu",
         "provider_config_key": "aws", "schema_version": 1,
         "expressions": {"instance_type": ref("var.instance_type")}},
    ]
    resources += [
        {"address": f"{k}.{n}", "mode": "managed", "type": k, "name": n,
         "provider_config_key": "aws", "schema_version": 0, "expressions": {}}
        for k, n, _ in _others(0)
    ]
    return {
        "provider_config": {"aws": {"name": "aws", "full_name":
                                    "registry.terraform.io/hashicorp/aws"}},
        "root_module": {
            "module_calls": {
                "pool": {"source": "./modules/gpu-pool", "for_each_expression": ref("local.pools"),
                         "module": {"resources": resources,
                                    "variables": {"instance_type": {}}}}
            }
        },
    }


def generate(n: int, seed: int = 7) -> dict[str, Any]:
    """A plan of ``n`` resources (rounded up to whole pools of ten)."""
    rng = random.Random(seed)
    changes: list[dict[str, Any]] = []
    modules: list[dict[str, Any]] = []
    for i in range((n + PER_POOL - 1) // PER_POOL):
        rcs = list(pool_resources(i, rng))
        changes.extend(rcs)
        modules.append(
            {
                "address": rcs[0]["module_address"],
                "resources": [
                    {
                        "address": rc["address"],
                        "mode": "managed",
                        "type": rc["type"],
                        "name": rc["name"],
                        "provider_name": rc["provider_name"],
                        "schema_version": 0,
                        "values": rc["change"]["after"],
                        "sensitive_values": {},
                    }
                    for rc in rcs
                ],
            }
        )
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.8",
        "planned_values": {"root_module": {"child_modules": modules}},
        "resource_changes": changes,
        "configuration": _configuration(),
        "timestamp": "2026-11-29T00:00:00Z",
        "applyable": True,
        "complete": True,
        "errored": False,
    }


def write_plan(n: int, directory: Path) -> Path:
    """The plan for ``n`` resources, generated once per generator version and cached."""
    path = directory / f"tfplan-v{GENERATOR_VERSION}-{n}.json"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w") as f:
            json.dump(generate(n), f, separators=(",", ":"))
        tmp.replace(path)
    return path


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    json.dump(generate(count), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
