"""gpu-pool-scales-on-utilisation: linking policies to groups, judging what they track."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.model import ResourceChange
from policies.rules import get_rule
from policies.rules.base import Example, Finding, RuleContext

RULE = get_rule("gpu-pool-scales-on-utilisation")
U = "(known after apply)"


def changes(*resources: Mapping[str, Any]) -> list[ResourceChange]:
    return Example("test", True, resources).changes()


def run(*resources: Mapping[str, Any], **params: Any) -> list[Finding]:
    return RULE.run(changes(*resources), load_catalog(), params)


def group(name: str | None = "gpu-pool", itype: str = "g4dn.xlarge", rname: str = "pool",
          **extra: Any) -> dict[str, Any]:
    new: dict[str, Any] = {"mixedInstancesPolicy": {"launchTemplate": {
        "overrides": [{"instanceType": itype}]}}}
    if name is not None:
        new["name"] = name
    return {"type": "aws:autoscaling/group:Group", "name": rname, "new": new, **extra}


def policy(group_name: str = "gpu-pool", rname: str = "gpu-util", *, target: float = 70,
           metric: str = "nvidia_smi_utilization_gpu", namespace: str = "CWAgent",
           dimension: str | None = "gpu-pool", **ttc: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"metricName": metric, "namespace": namespace, "statistic": "Average"}
    if dimension is not None:
        spec["metricDimensions"] = [{"name": "AutoScalingGroupName", "value": dimension}]
    return {"type": "aws:autoscaling/policy:Policy", "name": rname,
            "new": {"autoscalingGroupName": group_name, "policyType": "TargetTrackingScaling",
                    "targetTrackingConfiguration": {"targetValue": target,
                                                    "customizedMetricSpecification": spec,
                                                    **ttc}}}


def test_linked_gpu_policy_passes_and_each_group_needs_its_own() -> None:
    assert run(group(), policy()) == []
    [f] = run(group(), group("other", rname="other"), policy())
    assert f.resource.endswith("::other")
    assert "no target-tracking scaling policy on GPU utilisation" in f.message


@pytest.mark.parametrize(("tweak", "phrase"), [
    ({"metric": "CPUUtilization", "namespace": "AWS/EC2"},
     "scales on CPU (AWS/EC2/CPUUtilization), not GPU utilisation"),
    ({"metric": "GPUMemoryUtilization"}, "scales on CWAgent/GPUMemoryUtilization"),
    ({"target": 20}, "target 20 % is outside 40–90 %"),  # noqa: RUF001
    ({"disableScaleIn": True}, "never scales back in"),
    ({"dimension": None}, "has no AutoScalingGroupName dimension"),
    ({"dimension": "someone-else"}, "measures group someone-else, not gpu-pool"),
])
def test_policies_that_do_not_scale_the_group_on_its_gpus(tweak: dict[str, Any],
                                                          phrase: str) -> None:
    [f] = run(group(), policy(**tweak))
    assert phrase in f.message and not f.unknown


def test_step_and_disabled_policies() -> None:
    step = policy()
    step["new"]["policyType"] = "StepScaling"
    [f] = run(group(), step)
    assert "is a StepScaling policy, not target tracking" in f.message
    off = policy()
    off["new"]["enabled"] = False
    [f] = run(group(), off)
    assert "is disabled" in f.message


def test_parameters_change_the_accepted_metric_and_range() -> None:
    assert run(group(), policy(metric="gpu_util", namespace="Custom"),
               metricNames=["gpu_util"], namespaces=["Custom"]) == []
    [f] = run(group(), policy(target=45), minTarget=50)
    assert "outside 50–90 %" in f.message  # noqa: RUF001
    assert run(group(), policy(dimension=None), requireGroupDimension=False) == []
    with pytest.raises(ValueError, match="minTarget must not exceed maxTarget"):
        RULE.parse_params({"minTarget": 95})


def test_metrics_query_form_single_metric_and_math() -> None:
    p = policy()
    p["new"]["targetTrackingConfiguration"]["customizedMetricSpecification"] = {"metrics": [{
        "id": "m1", "returnData": True, "metricStat": {"stat": "Average", "metric": {
            "metricName": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
            "dimensions": [{"name": "AutoScalingGroupName", "value": "gpu-pool"}]}}}]}
    assert run(group(), p) == []
    spec = p["new"]["targetTrackingConfiguration"]["customizedMetricSpecification"]
    spec["metrics"].append({"id": "e1", "expression": "m1 * 2", "returnData": True})
    [f] = run(group(), p)
    assert f.unknown and "metric math" in f.message


def test_terraform_shapes_and_reference_links() -> None:
    tf_group = {"type": "aws_autoscaling_group", "name": "pool",
                "address": "module.a.aws_autoscaling_group.pool",
                "new": {"name": U, "mixed_instances_policy": [{"launch_template": [{
                    "override": [{"instance_type": "g5.xlarge"}]}]}]}}
    tf_policy = {"type": "aws_autoscaling_policy", "name": "gpu",
                 "address": "module.a.aws_autoscaling_policy.gpu",
                 "new": {"autoscaling_group_name": U, "policy_type": "TargetTrackingScaling",
                         "target_tracking_configuration": [{
                             "target_value": 60,
                             "customized_metric_specification": [{
                                 "metric_name": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metric_dimension": [{"name": "AutoScalingGroupName",
                                                       "value": U}]}]}]},
                 # written without the module path: resolved inside the policy's module
                 "references": {"autoscaling_group_name": "aws_autoscaling_group.pool"}}
    assert run(tf_group, tf_policy) == []
    unlinked = {**tf_policy, "references": {}}
    [f] = run(tf_group, unlinked)
    assert f.unknown and "no reference links it" in f.message


def test_autonamed_group_linked_by_reference_and_named_alike_by_the_metric() -> None:
    # Pulumi's offline plan: the group's name is given at apply; the policy carries the name
    # the group will get (an output) both as its group and as the metric's dimension.
    g = group(name=None)
    p = policy("pool-asg-1a2b3c", dimension="pool-asg-1a2b3c")
    p["references"] = {"autoscaling_group_name": f"urn:pulumi:example::gpupool::{g['type']}::pool"}
    assert run(g, p) == []
    other_dimension = {**p, "new": policy("pool-asg-1a2b3c", dimension="else")["new"]}
    [f] = run(g, other_dimension)
    assert not f.unknown and "measures group else, not pool-asg-1a2b3c" in f.message
    unlinked = {**p, "references": {}}
    [f] = run(g, unlinked)
    assert f.unknown


def test_counted_groups_with_an_ambiguous_reference_are_not_guessed() -> None:
    def g(i: int) -> dict[str, Any]:
        return {"type": "aws_autoscaling_group", "name": "pool",
                "address": f"aws_autoscaling_group.pool[{i}]",
                "new": {"name": U, "mixed_instances_policy": [{"launch_template": [{
                    "override": [{"instance_type": "g6.xlarge"}]}]}]}}

    def p(i: int, ref: str) -> dict[str, Any]:
        out = policy(U, dimension=U)
        out.update(address=f"aws_autoscaling_policy.gpu[{i}]",
                   references={"autoscaling_group_name": ref})
        return out

    exact = run(g(0), g(1), p(0, "aws_autoscaling_group.pool[0]"),
                p(1, "aws_autoscaling_group.pool[1]"))
    assert exact == []
    ambiguous = run(g(0), g(1), p(0, "aws_autoscaling_group.pool"),
                    p(1, "aws_autoscaling_group.pool"))
    assert len(ambiguous) == 2 and all(f.unknown for f in ambiguous)


def test_group_types_through_its_launch_template() -> None:
    lt = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "lt",
          "new": {"name": "gpu-lt", "instanceType": "g5.xlarge"}}
    asg = {"type": "aws:autoscaling/group:Group", "name": "pool",
           "new": {"name": "gpu-pool", "launchTemplate": {"name": "gpu-lt"}}}
    [f] = run(lt, asg)
    assert "no target-tracking" in f.message and f.detail["instance_types"] == ["g5.xlarge"]
    cpu_lt = {**lt, "new": {"name": "gpu-lt", "instanceType": "m7i.large"}}
    assert run(cpu_lt, asg) == []


def test_group_whose_template_is_outside_the_plan() -> None:
    asg = {"type": "aws:autoscaling/group:Group", "name": "pool",
           "new": {"name": "gpu-pool", "launchTemplate": {"id": "lt-0abc"}}}
    [f] = run(asg)
    assert f.unknown
    assert "launch template lt-0abc is not in the plan" in f.message
    assert "no target-tracking" in f.message
    assert run(asg, policy()) == []  # the outcome would not differ: no finding


def test_deleted_groups_and_policies() -> None:
    gone = group(change="delete")
    gone["old"], gone["new"] = gone["new"], None
    assert run(gone) == []
    p = policy(change="delete")
    p["old"], p["new"] = p["new"], None
    [f] = run(group(), p)
    assert "no target-tracking" in f.message


def test_works_without_an_index_as_the_pack_calls_it() -> None:
    cs = changes(group(), group("other", rname="other"), policy())
    ctx = RuleContext(catalog=load_catalog(), params=RULE.parse_params())
    [f] = list(RULE.check(cs, ctx))
    assert f.resource.endswith("::other")


def _unlinkable_cpu_seconds(n: int) -> float:
    """CPU seconds (best of two) for n groups whose policies name no group: a busy machine
    stretches wall time, not this process's CPU time."""
    rs: list[dict[str, Any]] = []
    for i in range(n):
        rs.append({"type": "aws_autoscaling_group", "name": f"g{i}",
                   "address": f"aws_autoscaling_group.g{i}",
                   "new": {"name": f"g{i}", "mixed_instances_policy": [{"launch_template": [{
                       "override": [{"instance_type": "g4dn.xlarge"}]}]}]}})
        p = policy(U, dimension=U)
        p["address"] = f"aws_autoscaling_policy.p{i}"
        rs.append(p)
    cs = changes(*rs)
    catalog = load_catalog()
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        findings = RULE.run(cs, catalog)
        best = min(best, time.process_time() - start)
    assert len(findings) == n and all(f.unknown for f in findings)
    return best


def test_many_groups_and_unlinkable_policies_stay_linear() -> None:
    small, large = _unlinkable_cpu_seconds(750), _unlinkable_cpu_seconds(3000)
    assert large < 3.0, large  # ~0.3 s; a quadratic slip takes far longer
    assert large / small < 10, (small, large)  # linear: 4x the groups, ~4x the time
