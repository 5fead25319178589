# ruff: noqa: RUF001  (en dashes of ranges, as users read them in messages)
"""gpu-pool-scales-on-utilisation: every GPU autoscaling group tracks GPU utilisation.

Allocation is not utilisation: a GPU pool that scales on CPU, or not at all, keeps paying for
idle GPUs. Stack scope, because the policy and the group are separate resources linked by name
or by reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policies.facts import PlanIndex, number
from policies.model import ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules._scaling_judge import judge
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    lazy_examples,
)
from policies.rules.params import param


class Params(RuleParams):
    metric_names: list[str] = param(
        default_factory=lambda: ["nvidia_smi_utilization_gpu"],
        description="Metric names that measure GPU utilisation (CloudWatch agent nvidia_gpu).",
    )
    namespaces: list[str] = param(
        default_factory=lambda: ["CWAgent"], description="Namespaces those metrics live in."
    )
    min_target: float = param(default=40, ge=0, le=100, description="Lowest target, in %.")
    max_target: float = param(default=90, ge=0, le=100, description="Highest target, in %.")
    require_group_dimension: bool = param(
        default=True,
        description=(
            "The metric must carry the AutoScalingGroupName dimension of the group it scales: "
            "a metric without it measures no group and the policy never acts."
        ),
    )

    def __post_init__(self) -> None:
        if self.min_target > self.max_target:
            raise ValueError("minTarget must not exceed maxTarget")


class GpuPoolScalesOnUtilisation(Rule):
    meta = RuleMeta(
        id="gpu-pool-scales-on-utilisation",
        title="GPU pools scale out on GPU utilisation",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Allocation is not utilisation: fleets often use 5–30 % of the GPUs they pay for. "
            "Every autoscaling group of GPU instances needs a target-tracking scaling policy on "
            "GPU utilisation (CloudWatch agent nvidia_gpu → CWAgent/nvidia_smi_utilization_gpu, "
            "per AutoScalingGroupName) with a target between minTarget and maxTarget, so that it "
            "scales out under load and back in when idle. CPU utilisation says nothing about a "
            "GPU-bound workload. The policy is linked to its group by autoscaling_group_name or "
            "by a plan reference; when unknowns prevent proving the link, the group is reported "
            "as 'cannot verify', never passed."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.SCALING_POLICY}),
        params=Params,
        prop="target_tracking_configuration",
    )

    examples = lazy_examples(lambda: (
        Example(
            title="GPU group with a target-tracking policy on GPU utilisation (Pulumi)",
            allowed=True,
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "pool",
                 "new": {"name": "gpu-pool", "maxSize": 4, "mixedInstancesPolicy": {
                     "launchTemplate": {"overrides": [{"instanceType": "g4dn.xlarge"}]}}}},
                {"type": "aws:autoscaling/policy:Policy", "name": "gpu-util",
                 "new": {"autoscalingGroupName": "gpu-pool",
                         "policyType": "TargetTrackingScaling",
                         "targetTrackingConfiguration": {
                             "targetValue": 70,
                             "customizedMetricSpecification": {
                                 "metricName": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metricDimensions": [
                                     {"name": "AutoScalingGroupName", "value": "gpu-pool"}]}}}},
            ],
        ),
        Example(
            title="Terraform: group name unknown until apply, linked by reference",
            allowed=True,
            resources=[
                {"type": "aws_launch_template", "name": "gpu",
                 "address": "aws_launch_template.gpu",
                 "new": {"name": "gpu", "instance_type": "g5.xlarge"}},
                {"type": "aws_autoscaling_group", "name": "pool",
                 "address": "aws_autoscaling_group.pool",
                 "new": {"name": "(known after apply)", "max_size": 8,
                         "launch_template": [{"id": "(known after apply)"}]},
                 "references": {"launch_template.id": "aws_launch_template.gpu"}},
                {"type": "aws_autoscaling_policy", "name": "gpu",
                 "address": "aws_autoscaling_policy.gpu",
                 "new": {"autoscaling_group_name": "(known after apply)",
                         "policy_type": "TargetTrackingScaling",
                         "target_tracking_configuration": [{
                             "target_value": 60,
                             "customized_metric_specification": [{
                                 "metric_name": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metric_dimension": [{"name": "AutoScalingGroupName",
                                                       "value": "(known after apply)"}]}]}]},
                 "references": {
                     "autoscaling_group_name": "aws_autoscaling_group.pool",
                     "target_tracking_configuration": "aws_autoscaling_group.pool"}},
            ],
        ),
        Example(
            title="GPU group scaling on CPU",
            allowed=False,
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "pool",
                 "new": {"name": "gpu-pool", "mixedInstancesPolicy": {
                     "launchTemplate": {"overrides": [{"instanceType": "g5.xlarge"}]}}}},
                {"type": "aws:autoscaling/policy:Policy", "name": "cpu",
                 "new": {"autoscalingGroupName": "gpu-pool",
                         "policyType": "TargetTrackingScaling",
                         "targetTrackingConfiguration": {
                             "targetValue": 50,
                             "predefinedMetricSpecification": {
                                 "predefinedMetricType": "ASGAverageCPUUtilization"}}}},
            ],
            message_contains=["scales on CPU (ASGAverageCPUUtilization)",
                              "not GPU utilisation"],
        ),
        Example(
            title="GPU group without any scaling policy",
            allowed=False,
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "pool",
                 "new": {"name": "gpu-pool", "mixedInstancesPolicy": {
                     "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]}}}},
            ],
            message_contains=["no target-tracking scaling policy on GPU utilisation"],
        ),
        Example(
            title="Target outside 40–90 %",
            allowed=False,
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "pool",
                 "new": {"name": "gpu-pool", "mixedInstancesPolicy": {
                     "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]}}}},
                {"type": "aws:autoscaling/policy:Policy", "name": "gpu-util",
                 "new": {"autoscalingGroupName": "gpu-pool",
                         "policyType": "TargetTrackingScaling",
                         "targetTrackingConfiguration": {
                             "targetValue": 99,
                             "customizedMetricSpecification": {
                                 "metricName": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metricDimensions": [
                                     {"name": "AutoScalingGroupName", "value": "gpu-pool"}]}}}},
            ],
            message_contains=["target 99 % is outside 40–90 %"],
        ),
        Example(
            title="Policy whose group name is unknown and not linked by reference",
            allowed=False,
            unknown=True,
            resources=[
                {"type": "aws_autoscaling_group", "name": "pool",
                 "address": "aws_autoscaling_group.pool",
                 "new": {"name": "(known after apply)", "mixed_instances_policy": [{
                     "launch_template": [{"override": [{"instance_type": "g4dn.xlarge"}]}]}]}},
                {"type": "aws_autoscaling_policy", "name": "gpu",
                 "address": "aws_autoscaling_policy.gpu",
                 "new": {"autoscaling_group_name": "(known after apply)",
                         "policy_type": "TargetTrackingScaling",
                         "target_tracking_configuration": [{
                             "target_value": 60,
                             "customized_metric_specification": [{
                                 "metric_name": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metric_dimension": [{"name": "AutoScalingGroupName",
                                                       "value": "(known after apply)"}]}]}]}},
            ],
            message_contains=["cannot verify",
                              "autoscaling_group_name of scaling policy gpu is unknown"],
        ),
        Example(
            title="GPU group at min size 0: advisory, target tracking cannot scale from zero",
            allowed=True,
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "pool",
                 "new": {"name": "gpu-pool", "minSize": 0, "maxSize": 4, "mixedInstancesPolicy": {
                     "launchTemplate": {"overrides": [{"instanceType": "g4dn.xlarge"}]}}}},
                {"type": "aws:autoscaling/policy:Policy", "name": "gpu-util",
                 "new": {"autoscalingGroupName": "gpu-pool",
                         "policyType": "TargetTrackingScaling",
                         "targetTrackingConfiguration": {
                             "targetValue": 70,
                             "customizedMetricSpecification": {
                                 "metricName": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metricDimensions": [
                                     {"name": "AutoScalingGroupName", "value": "gpu-pool"}]}}}},
            ],
            message_contains=["minSize is 0", "keep minSize ≥ 1", "cannot scale out from zero"],
        ),
        Example(
            title="Groups without GPUs are out of scope",
            allowed=True,
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "web",
                 "new": {"name": "web", "mixedInstancesPolicy": {
                     "launchTemplate": {"overrides": [{"instanceType": "m7i.large"}]}}}},
            ],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # stack scope: see check

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        plan = (ctx.plan if (ctx.plan_index is not None or ctx.index)
                else PlanIndex(changes, ctx.catalog))
        params: Params = ctx.params
        # Policies that may target any group: judged once (without the group-specific
        # dimension check), so that many of them never make this quadratic.
        usable: dict[int, list[ResourceChange]] = {}
        for group in plan.groups:
            shared = plan.unlinked_policies(group)
            if id(shared) not in usable:
                usable[id(shared)] = [p for p in shared
                                      if judge(p, None, plan, params).status != "bad"]
            finding = self._judge_group(group, plan, ctx, params, usable[id(shared)])
            if finding is not None:
                yield finding

    def _judge_group(self, group: ResourceChange, plan: PlanIndex, ctx: RuleContext,
                     params: Params, unlinked: list[ResourceChange]) -> Finding | None:
        types = plan.instance_types(group)
        gpu_types = [t for t in types.known if ctx.catalog.may_carry_gpu(t)]
        if not gpu_types and types.complete:
            return None  # not a GPU group
        links = plan.policies_of(group)
        linked = [(p, judge(p, group, plan, params)) for p in links.linked]
        if any(j.status == "ok" for _, j in linked):
            return _scale_from_zero(group) if gpu_types else None
        problem: Finding
        unknown_linked = [j.reason for _, j in linked if j.status == "unknown"]
        possible = [p for p in links.possible if judge(p, group, plan, params).status != "bad"]
        possible += unlinked[:3]
        expected = _expected(params)
        if unknown_linked:
            problem = Finding(group.address, cannot_verify("; ".join(unknown_linked)),
                              unknown=True)
        elif possible:
            names = ", ".join(p.name for p in possible[:3]) + (" …" if len(possible) > 3 else "")
            key = prop(possible[0].type, "autoscaling_group_name")
            problem = Finding(group.address, cannot_verify(
                f"the {key} of scaling policy {names} is unknown until apply "
                "and no reference links it to this group"), unknown=True)
        elif linked:
            problem = Finding(group.address, (
                "GPU autoscaling group does not scale on GPU utilisation: "
                + "; ".join(j.reason for _, j in linked) + f"; expected {expected}"))
        else:
            problem = Finding(group.address, (
                f"GPU autoscaling group has no target-tracking scaling policy on GPU utilisation "
                f"({expected}): it cannot scale out, or back in, on GPU load"))
        if gpu_types:
            return Finding(problem.resource, problem.message, problem.unknown,
                           detail={"instance_types": gpu_types})
        return Finding(group.address, cannot_verify(
            f"cannot tell whether the group runs GPU instances ({types.unknown}); if it does: "
            + problem.message.removeprefix("cannot verify: ")), unknown=True)


def _scale_from_zero(group: ResourceChange) -> Finding | None:
    """Target tracking cannot start a group at zero: no instance, no metric, no scale-out."""
    if number(group.after.get("min_size")) != 0:
        return None
    message = _FROM_ZERO.get(group.type)
    if message is None:  # (the same words for every group of a type: made once per type)
        key = prop(group.type, "min_size")
        message = _FROM_ZERO[group.type] = (
            f"{key} is 0: target tracking on GPU utilisation cannot scale out from zero, because "
            f"no running instance publishes the metric; keep {key} ≥ 1, or add a scale-from-zero "
            "trigger (e.g. step scaling on queue depth)")
    return Finding(group.address, message, advisory_only=True, prop="min_size")


_FROM_ZERO: dict[str, str] = {}  # group type → the scale-from-zero finding's message


def _expected(params: Params) -> str:
    metrics = " or ".join(f"{ns}/{m}" for ns in params.namespaces for m in params.metric_names)
    return f"target tracking on {metrics}, target {params.min_target:g}–{params.max_target:g} %"


RULE = GpuPoolScalesOnUtilisation()
