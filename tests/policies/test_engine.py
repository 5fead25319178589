# ruff: noqa: RUF001, RUF003  (the multiplication sign of cost notes)
"""The engine: enforcement in force, unknowns, rule errors, waivers, cost lines, speed."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

import pytest

from policies.engine import evaluate
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, ResourceKind
from policies.result import Result
from policies.rules import get_rule
from policies.rules.base import Enforcement, Example, Finding, RuleContext
from policies.settings import Settings, Waiver, parse_config

TODAY = date(2026, 6, 1)


def plan(*resources: Mapping[str, Any], origin: str = "plan.json") -> Plan:
    return Plan("test", origin, tuple(Example("t", True, resources).changes()))


def check(*plans: Plan, config: Mapping[str, Any] | None = None,
          waivers: tuple[Waiver, ...] = ()) -> Result:
    settings = parse_config(dict(config or {}), "policy.yaml").with_waivers(waivers, "w.yaml")
    return evaluate(plans, settings, today=TODAY)


def policies_of(result: Result) -> list[tuple[str, str]]:
    return sorted((v.policy, v.enforcement.value) for v in result.violations)


GOOD_LT = {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "lt",
           "new": {"name": "lt", "instanceType": "g4dn.xlarge",
                   "metadataOptions": {"httpTokens": "required"},
                   "blockDeviceMappings": [{"deviceName": "/dev/xvda",
                                            "ebs": {"encrypted": "true"}}],
                   "tags": {"team": "ml", "cost-center": "cc", "environment": "dev"}}}
BIG_LT = {**GOOD_LT, "name": "big", "new": {**GOOD_LT["new"], "instanceType": "g4dn.2xlarge"}}


def test_a_clean_plan_passes_and_lists_every_policy() -> None:
    result = check(plan(GOOD_LT))
    assert result.verdict == "pass" and result.violations == [] and result.errors == []
    assert [p["id"] for p in result.policies][:2] == ["gpu-no-vertical-upsize",
                                                     "gpu-smallest-instance"]
    doc = result.to_json()
    assert {"verdict", "violations", "errors"} <= doc.keys()


def test_mandatory_violation_fails_and_config_can_soften_or_disable_it() -> None:
    p = plan(BIG_LT)
    assert policies_of(check(p)) == [("gpu-smallest-instance", "mandatory")]
    assert check(p).verdict == "fail" and check(p).exit_code == 1
    soft = check(p, config={"gpu-smallest-instance": "advisory"})
    assert policies_of(soft) == [("gpu-smallest-instance", "advisory")] and soft.verdict == "pass"
    assert check(p, config={"gpu-smallest-instance": "disabled"}).violations == []
    assert check(p, config={"all": "disabled"}).violations == []
    row = next(r for r in soft.policies if r["id"] == "gpu-smallest-instance")
    assert row["enforcement"] == "advisory" and row["default_enforcement"] == "mandatory"


def test_unknowns_are_reported_at_their_level_never_passed_silently() -> None:
    unknown = {"type": "aws_launch_template", "name": "lt", "address": "aws_launch_template.lt",
               "new": {**GOOD_LT["new"], "instance_type": "(known after apply)"}}
    default = check(plan(unknown))
    [v] = default.violations
    assert v.unknown and v.enforcement is Enforcement.ADVISORY and default.verdict == "pass"
    strict = check(plan(unknown), config={
        "gpu-smallest-instance": {"unknownEnforcement": "mandatory"}})
    assert strict.verdict == "fail"
    capped = check(plan(unknown), config={
        "gpu-smallest-instance": {"enforcementLevel": "advisory",
                                  "unknownEnforcement": "mandatory"}})
    assert capped.verdict == "pass"  # never stricter than the rule itself


def test_gpu_model_change_is_advisory_even_for_a_mandatory_rule() -> None:
    change = {**GOOD_LT, "old": {**GOOD_LT["new"]},
              "new": {**GOOD_LT["new"], "instanceType": "g5.xlarge"}}
    result = check(plan(change))
    assert policies_of(result) == [("gpu-no-vertical-upsize", "advisory")]
    assert result.verdict == "pass"


def test_a_rule_that_raises_is_an_error_that_fails_the_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rule = get_rule("ebs-encrypted")

    def boom(change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        raise RuntimeError("bad rule")

    monkeypatch.setattr(rule, "check_resource", boom)
    result = check(plan(GOOD_LT, BIG_LT))
    assert result.verdict == "fail" and len(result.errors) == 2
    assert result.errors[0].policy == "ebs-encrypted"
    assert "rule raised RuntimeError on urn:pulumi:example" in result.errors[0].message
    # the other rules still ran
    assert ("gpu-smallest-instance", "mandatory") in policies_of(result)
    assert result.to_json()["errors"][0]["message"].endswith("bad rule")


def test_a_stack_rule_that_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = get_rule("gpu-proxy-placement")  # reads launch templates (of a proxy tier)

    def boom(changes: object, ctx: RuleContext) -> Iterable[Finding]:
        yield from ()
        raise KeyError("x")

    monkeypatch.setattr(rule, "check", boom)
    proxy = {**GOOD_LT, "new": {**GOOD_LT["new"], "tags": {"gpupool:role": "gpu-proxy"}}}
    [e] = check(plan(proxy)).errors
    assert e.policy == "gpu-proxy-placement" and e.resource is None


def test_a_rule_runs_only_on_plans_holding_a_kind_it_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu-pool-scales-on-utilisation reads groups and scaling policies: a plan of a launch
    template alone never runs it (tests/policies/rules/test_registry.py: it could find
    nothing there), and it is still listed with its enforcement."""
    rule = get_rule("gpu-pool-scales-on-utilisation")

    def boom(changes: object, ctx: RuleContext) -> Iterable[Finding]:
        raise KeyError("ran")

    monkeypatch.setattr(rule, "check", boom)
    result = check(plan(GOOD_LT))
    assert result.errors == [] and result.verdict == "pass"
    assert "gpu-pool-scales-on-utilisation" in [p["id"] for p in result.policies]
    group = {"type": "aws:autoscaling/group:Group", "name": "asg",
             "new": {"minSize": 0, "maxSize": 2}}
    [e] = check(plan(GOOD_LT, group)).errors
    assert e.policy == "gpu-pool-scales-on-utilisation" and "KeyError" in e.message


def waiver(**kw: Any) -> Waiver:
    base = {"id": "W-1", "policy": "gpu-smallest-instance", "resource": "urn:*::big",
            "owner": "ml-platform", "reason": "benchmark", "expires": date(2026, 12, 31)}
    return Waiver.model_validate({**base, **kw})


def test_active_waiver_keeps_the_violation_but_unblocks() -> None:
    result = check(plan(BIG_LT), waivers=(waiver(),))
    [v] = result.violations
    assert v.waived_by == "W-1" and not v.blocking and result.verdict == "pass"
    assert v.detail["waiver"]["owner"] == "ml-platform"
    assert result.to_json()["summary"]["waived"] == 1
    other = check(plan(BIG_LT), waivers=(waiver(policy="ebs-encrypted"),))
    assert other.verdict == "fail"


@pytest.mark.parametrize(("kw", "says"), [
    ({"expires": date(2026, 5, 31)}, "expired: its last day was 2026-05-31"),
    ({"owner": None}, "no owner"),
    ({"reason": "  "}, "no reason"),
    ({"expires": None}, "no expires"),
])
def test_expired_or_incomplete_waiver_is_a_violation_and_waives_nothing(
        kw: dict[str, Any], says: str) -> None:
    result = check(plan(BIG_LT), waivers=(waiver(**kw),))
    assert result.verdict == "fail"
    bad = [v for v in result.violations if v.policy == "gpupool-waiver"]
    assert len(bad) == 1 and bad[0].resource == "W-1" and says in bad[0].message
    assert bad[0].enforcement is Enforcement.MANDATORY and bad[0].source == "w.yaml"
    assert all(v.waived_by is None for v in result.violations)


def test_cost_lines_for_instances_and_groups() -> None:
    instance = {"type": "aws_instance", "name": "i", "address": "aws_instance.i",
                "old": {"instance_type": "g4dn.xlarge"},
                "new": {"instance_type": "g4dn.16xlarge"}}
    group = {"type": "aws:autoscaling/group:Group", "name": "pool",
             "new": {"name": "pool", "maxSize": 4, "launchTemplate": {"name": "lt"}}}
    weighted = {"type": "aws_autoscaling_group", "name": "w",
                "address": "aws_autoscaling_group.w",
                "new": {"max_size": 8, "mixed_instances_policy": [{"launch_template": [{
                    "override": [{"instance_type": "g4dn.xlarge", "weighted_capacity": "1"},
                                 {"instance_type": "g4dn.12xlarge",
                                  "weighted_capacity": "4"}]}]}]}}
    gone = {"type": "aws_instance", "name": "old", "address": "aws_instance.old",
            "old": {"instance_type": "g5.xlarge"}, "new": None}
    cpu = {"type": "aws_instance", "name": "web", "address": "aws_instance.web",
           "new": {"instance_type": "m7i.large"}}
    node = {"type": "aws_eks_node_group", "name": "n", "address": "aws_eks_node_group.n",
            "new": {"instance_types": ["g6.xlarge"], "scaling_config": [{"max_size": 3}]}}
    result = check(plan(GOOD_LT, instance, group, weighted, gone, cpu, node))
    lines = {c.resource.rsplit(":", 1)[-1]: c for c in result.cost}
    assert set(lines) == {"aws_instance.i", "pool", "aws_autoscaling_group.w",
                          "aws_instance.old", "aws_eks_node_group.n"}
    i = lines["aws_instance.i"]
    assert (i.before_per_hour, i.after_per_hour) == (0.526, 4.352)
    assert i.delta_per_hour == pytest.approx(3.826)
    pool = lines["pool"]
    assert (pool.before_per_hour, pool.after_per_hour) == (0.0, 2.104)
    assert "at max size 4 × g4dn.xlarge" in pool.note
    w = lines["aws_autoscaling_group.w"]  # 8 × the first override, g4dn.xlarge
    assert w.after_per_hour == pytest.approx(4.208) and "the first of its GPU types" in w.note
    assert (lines["aws_instance.old"].before_per_hour,
            lines["aws_instance.old"].after_per_hour) == (1.006, 0.0)
    assert lines["aws_eks_node_group.n"].after_per_hour == pytest.approx(3 * 0.8048)
    assert result.to_json()["summary"]["cost_delta_per_hour"] == pytest.approx(
        3.826 + 2.104 + 4.208 - 1.006 + 3 * 0.8048)


def test_cost_line_with_unknown_size_or_old_inputs_is_not_a_number() -> None:
    group = {"type": "aws_autoscaling_group", "name": "g", "address": "aws_autoscaling_group.g",
             "new": {"max_size": "(known after apply)", "mixed_instances_policy": [{
                 "launch_template": [{"override": [{"instance_type": "g5.xlarge"}]}]}]}}
    no_baseline = {"type": "aws_instance", "name": "i", "address": "aws_instance.i",
                   "change": "update", "new": {"instance_type": "g5.xlarge"}}
    lines = {c.resource: c for c in check(plan(group, no_baseline)).cost}
    assert lines["aws_autoscaling_group.g"].after_per_hour is None
    assert "max size unknown until apply" in lines["aws_autoscaling_group.g"].note
    assert lines["aws_instance.i"].before_per_hour is None
    assert lines["aws_instance.i"].delta_per_hour is None


def test_several_plans_keep_their_sources() -> None:
    result = check(plan(BIG_LT, origin="a.json"), plan(BIG_LT, origin="b.json"))
    assert [v.source for v in result.violations] == ["a.json", "b.json"]
    assert result.sources == ["a.json", "b.json"] and result.resources_evaluated == 2


def _pool(i: int) -> list[ResourceChange]:
    lt = ResourceChange(
        f"aws_launch_template.lt[{i}]", "aws_launch_template", "lt", ChangeKind.UPDATE,
        new={"name": f"lt{i}", "instance_type": "g4dn.2xlarge" if i % 3 else "g4dn.xlarge",
             "metadata_options": [{"http_tokens": "required"}],
             "block_device_mappings": [{"device_name": "/dev/xvda",
                                        "ebs": [{"encrypted": "true"}]}]},
        old={"name": f"lt{i}", "instance_type": "g4dn.xlarge"}, source="t",
        kind=ResourceKind.LAUNCH_TEMPLATE)
    asg = ResourceChange(
        f"aws_autoscaling_group.g[{i}]", "aws_autoscaling_group", "g", ChangeKind.CREATE,
        new={"name": UNKNOWN, "max_size": 4, "launch_template": [{"id": UNKNOWN}]}, old=None,
        source="t", kind=ResourceKind.AUTOSCALING_GROUP,
        references={"launch_template.id": f"aws_launch_template.lt[{i}]"})
    policy = ResourceChange(
        f"aws_autoscaling_policy.p[{i}]", "aws_autoscaling_policy", "p", ChangeKind.CREATE,
        new={"autoscaling_group_name": UNKNOWN, "policy_type": "TargetTrackingScaling",
             "target_tracking_configuration": [{"target_value": 70,
                                                "customized_metric_specification": [{
                 "metric_name": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
                 "metric_dimension": [{"name": "AutoScalingGroupName", "value": UNKNOWN}]}]}]},
        old=None, source="t", kind=ResourceKind.SCALING_POLICY,
        references={"autoscaling_group_name": f"aws_autoscaling_group.g[{i}]"})
    instance = ResourceChange(
        f"aws_instance.i[{i}]", "aws_instance", "i", ChangeKind.UPDATE,
        new={"instance_type": "g5.xlarge", "metadata_options": [{"http_tokens": "optional"}],
             "root_block_device": [{"encrypted": True}]},
        old={"instance_type": "g5.xlarge"}, source="t", kind=ResourceKind.INSTANCE)
    sg = ResourceChange(f"aws_security_group.s[{i}]", "aws_security_group", "s",
                        ChangeKind.CREATE, new={"name": "x"}, old=None, source="t",
                        kind=ResourceKind.SECURITY_GROUP)
    return [lt, asg, policy, instance, sg]


def _cpu_seconds(n: int) -> float:
    p = Plan("t", "bench", tuple(c for i in range(n // 5) for c in _pool(i)))
    settings = Settings.default()
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        result = evaluate([p], settings, today=TODAY)
        best = min(best, time.process_time() - start)
    assert result.resources_evaluated == n
    assert not any(v.policy == "gpu-pool-scales-on-utilisation" for v in result.violations)
    return best


def test_ten_thousand_resources_well_under_a_second_and_linear() -> None:
    small, large = _cpu_seconds(1000), _cpu_seconds(10_000)
    assert large < 2.0, large  # ~0.7 s CPU; a busy machine inflates even CPU time a little
    assert large / small < 20, (small, large)  # linear: 10× the resources, ~10× the time


def test_the_census_is_skipped_only_for_plans_without_its_kinds() -> None:
    """The engine leaves the Kubernetes readers unimported for a plan without Kubernetes kinds:
    the kinds it tests are exactly those the census counts."""
    from policies import engine
    from policies.facts.k8s import census

    assert engine._K8S_KINDS == census._KINDS | census._OTHERS
