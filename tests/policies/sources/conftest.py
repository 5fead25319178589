"""Helpers for the plan-source tests: fixture paths, writing documents, generated plans."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def write(tmp_path: Path) -> Callable[[Any, str], Path]:
    """Write a document (JSON-encoded unless bytes/str) to a file and return its path."""

    def _write(doc: Any, name: str = "plan.json") -> Path:
        path = tmp_path / name
        if isinstance(doc, bytes):
            path.write_bytes(doc)
        elif isinstance(doc, str):
            path.write_text(doc, encoding="utf-8")
        else:
            path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    return _write


def terraform_plan(pools: int) -> dict[str, Any]:
    """A Terraform plan of ``pools`` GPU pools in a for_each module, 10 resources each.

    Each pool has a launch template (updated: g4dn.xlarge → g4dn.2xlarge), an autoscaling group
    whose name is unknown, a target-tracking policy referencing it, a count of 2 instances and
    2 alarms referencing them by index, a security group, an IAM role and a placement group:
    the shapes the rules read, with unknowns in nested blocks and configuration references.
    """
    changes: list[dict[str, Any]] = []
    for p in range(pools):
        mod = f'module.pool["p{p}"]'
        changes += _pool_changes(mod, p)
    return {
        "format_version": "1.2",
        "terraform_version": "1.8.2",
        "planned_values": {"root_module": {}},
        "resource_changes": changes,
        "configuration": {"root_module": {"module_calls": {"pool": {
            "source": "./modules/pool",
            "for_each_expression": {"references": ["var.pools"]},
            "module": _POOL_MODULE_CONFIG,
        }}}},
    }


def _rc(mod: str, rtype: str, name: str, actions: list[str], before: Any, after: Any,
        unknown: Any, index: int | None = None) -> dict[str, Any]:
    key = "" if index is None else f"[{index}]"
    rc = {
        "address": f"{mod}.{rtype}.{name}{key}", "module_address": mod, "mode": "managed",
        "type": rtype, "name": name, "provider_name": "registry.terraform.io/hashicorp/aws",
        "change": {"actions": actions, "before": before, "after": after, "after_unknown": unknown,
                   "before_sensitive": {}, "after_sensitive": {}},
    }
    if index is not None:
        rc["index"] = index
    return rc


def _pool_changes(mod: str, p: int) -> list[dict[str, Any]]:
    tags = {"team": f"team-{p % 7}", "cost-center": f"cc-{p % 13}", "environment": "prod"}
    lt_before = {
        "id": f"lt-{p:017x}", "name": f"pool-{p}", "image_id": "ami-0a5c3558529277641",
        "instance_type": "g4dn.xlarge", "latest_version": 3,
        "block_device_mappings": [{"device_name": "/dev/xvda", "ebs": [
            {"encrypted": "true", "volume_size": 100, "volume_type": "gp3"}]}],
        "metadata_options": [{"http_tokens": "required", "http_put_response_hop_limit": 2}],
        "tags": tags,
    }
    lt_after = {k: v for k, v in lt_before.items() if k != "latest_version"}
    lt_after = {**lt_after, "instance_type": "g4dn.2xlarge",
                "block_device_mappings": [{"device_name": "/dev/xvda", "ebs": [
                    {"encrypted": "true", "volume_size": 100, "volume_type": "gp3"}]}],
                "metadata_options": [{"http_tokens": "required", "http_put_response_hop_limit": 2}]}
    asg_after = {
        "name_prefix": f"pool-{p}-", "min_size": 0, "max_size": 8, "capacity_rebalance": True,
        "mixed_instances_policy": [{"launch_template": [{"launch_template_specification": [{}],
                                    "override": [{"instance_type": "g4dn.xlarge"}]}]}],
        "tag": [{"key": k, "value": v, "propagate_at_launch": True} for k, v in tags.items()],
    }
    asg_unknown = {"id": True, "arn": True, "name": True, "mixed_instances_policy": [
        {"launch_template": [{"launch_template_specification": [
            {"launch_template_id": True, "version": True}], "override": [{}]}]}]}
    policy_after = {"name": "gpu-utilisation", "policy_type": "TargetTrackingScaling",
                    "target_tracking_configuration": [{"target_value": 60,
                     "customized_metric_specification": [{"namespace": "CWAgent",
                      "metric_name": "nvidia_smi_utilization_gpu", "statistic": "Average",
                      "metric_dimension": [{"name": "AutoScalingGroupName"}]}]}]}
    policy_unknown = {"id": True, "arn": True, "autoscaling_group_name": True,
                      "target_tracking_configuration": [{"customized_metric_specification": [
                          {"metric_dimension": [{"value": True}]}]}]}
    out = [
        _rc(mod, "aws_launch_template", "gpu", ["update"], lt_before, lt_after,
            {"latest_version": True}),
        _rc(mod, "aws_autoscaling_group", "gpu", ["create"], None, asg_after, asg_unknown),
        _rc(mod, "aws_autoscaling_policy", "gpu", ["create"], None, policy_after, policy_unknown),
        _rc(mod, "aws_security_group", "gpu", ["no-op"], {"id": f"sg-{p}", "name": f"pool-{p}"},
            {"id": f"sg-{p}", "name": f"pool-{p}"}, {}),
        _rc(mod, "aws_iam_role", "gpu", ["no-op"], {"name": f"pool-{p}"}, {"name": f"pool-{p}"},
            {}),
        _rc(mod, "aws_placement_group", "gpu", ["create"], None,
            {"name": f"pool-{p}", "strategy": "cluster"}, {"id": True, "arn": True}),
    ]
    for i in range(2):
        out.append(_rc(mod, "aws_instance", "worker", ["create"], None,
                       {"instance_type": "g4dn.xlarge", "tags": tags,
                        "metadata_options": [{"http_tokens": "required"}],
                        "root_block_device": [{"encrypted": True}]},
                       {"id": True, "arn": True, "private_ip": True}, index=i))
        out.append(_rc(mod, "aws_cloudwatch_metric_alarm", "idle", ["create"], None,
                       {"alarm_name": f"pool-{p}-{i}", "dimensions": {}},
                       {"id": True, "dimensions": {"InstanceId": True}}, index=i))
    return out


_POOL_MODULE_CONFIG: dict[str, Any] = {
    "resources": [
        {"address": "aws_launch_template.gpu", "mode": "managed", "type": "aws_launch_template",
         "name": "gpu", "expressions": {"instance_type": {"references": ["var.instance_type"]}}},
        {"address": "aws_autoscaling_group.gpu", "mode": "managed",
         "type": "aws_autoscaling_group", "name": "gpu", "expressions": {
             "mixed_instances_policy": [{"launch_template": [{"launch_template_specification": [{
                 "launch_template_id": {"references": ["aws_launch_template.gpu.id",
                                                       "aws_launch_template.gpu"]},
                 "version": {"references": ["aws_launch_template.gpu.latest_version",
                                            "aws_launch_template.gpu"]}}]}]}]}},
        {"address": "aws_autoscaling_policy.gpu", "mode": "managed",
         "type": "aws_autoscaling_policy", "name": "gpu", "expressions": {
             "autoscaling_group_name": {"references": ["aws_autoscaling_group.gpu.name",
                                                       "aws_autoscaling_group.gpu"]}}},
        {"address": "aws_instance.worker", "mode": "managed", "type": "aws_instance",
         "name": "worker", "count_expression": {"constant_value": 2},
         "expressions": {"placement_group": {"references": ["aws_placement_group.gpu.id",
                                                            "aws_placement_group.gpu"]}}},
        {"address": "aws_cloudwatch_metric_alarm.idle", "mode": "managed",
         "type": "aws_cloudwatch_metric_alarm", "name": "idle",
         "count_expression": {"constant_value": 2},
         "expressions": {"dimensions": {"references": ["aws_instance.worker", "count.index"]}}},
    ],
}


def generated_plan_file(directory: Path, resources: int) -> Path:
    """A generated Terraform plan file of ``resources`` resources (a multiple of 10)."""
    path = directory / f"tf-{resources}.json"
    path.write_text(json.dumps(terraform_plan(max(1, resources // 10))), encoding="utf-8")
    return path


@pytest.fixture
def generated_plan(tmp_path: Path) -> Callable[[int], Path]:
    return lambda resources: generated_plan_file(tmp_path, resources)
