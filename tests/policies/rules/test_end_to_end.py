# ruff: noqa: RUF001  (the multiplication sign of the messages under test)
"""Fixture plans (Terraform, Pulumi preview, gpupool offline) through load_plan → evaluate:
the violations a user would expect, and nothing else that blocks."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gpupool.record import replace
from policies.engine import evaluate
from policies.model import Plan, ResourceKind
from policies.result import Result, Violation
from policies.settings import Settings
from policies.sources import load_plan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TODAY = date(2026, 6, 1)
UPSIZE_MESSAGE = ("g4dn.xlarge → g4dn.2xlarge adds 4 vCPU and 16 GiB memory but no GPU power "
                  "(still 1 × T4): +$0.226/h (+$164.98/month), no GPU added; "
                  "add 1 × g4dn.xlarge for $0.526/h instead (us-east-1 on-demand prices)")


def fixture(rel: str) -> str:
    path = FIXTURES / rel
    if not path.exists():
        pytest.skip(f"fixture {rel} not there yet")
    return str(path)


def run(*plans: Plan) -> Result:
    return evaluate(plans, Settings.default(), today=TODAY)


def blocking(result: Result) -> set[tuple[str, str]]:
    return {(v.policy, v.resource) for v in result.violations if v.blocking}


@pytest.mark.parametrize(("rel", "group", "template", "instance"), [
    ("terraform/upsize-g4dn.json", "aws_autoscaling_group.gpu", "aws_launch_template.gpu",
     "aws_instance.trainer"),
    ("pulumi/preview-upsize.json",
     "urn:pulumi:prod::gpupool::gpupool:aws:GpuPool$aws:autoscaling/group:Group::inference",
     "urn:pulumi:prod::gpupool::gpupool:aws:GpuPool$aws:ec2/launchTemplate:LaunchTemplate"
     "::inference",
     "urn:pulumi:prod::gpupool::aws:ec2/instance:Instance::trainer"),
])
def test_upsize_is_blocked_everywhere_it_happens(rel: str, group: str, template: str,
                                                 instance: str) -> None:
    result = run(load_plan(fixture(rel)))
    assert result.verdict == "fail" and result.errors == []
    upsizes = {tuple(r.address for r in v.resources): v.message for v in result.violations
               if v.policy == "gpu-no-vertical-upsize"}
    # the group launches from the template: one cause, one finding naming both (template first,
    # as in the plan); the stand-alone instance is a cause of its own
    assert upsizes == {(template, group): UPSIZE_MESSAGE, (instance,): UPSIZE_MESSAGE}
    assert blocking(result) == {
        *(("gpu-no-vertical-upsize", r) for r in (template, instance)),
        *(("gpu-smallest-instance", r) for r in (template, instance)),
        ("gpu-pool-scales-on-utilisation", group),  # the plan holds no scaling policy
    }
    cost = {c.resource: c for c in result.cost}
    assert cost[instance].delta_per_hour == pytest.approx(0.226)
    assert cost[group].delta_per_hour == pytest.approx(8 * 0.226)


def findings(result: Result) -> list[Violation]:
    """Violations other than the min-size-0 advisory (those fixtures' groups start at zero)."""
    return [v for v in result.violations if "cannot scale out from zero" not in v.message]


def test_scaling_policy_linked_by_reference_although_the_group_name_is_unknown() -> None:
    plan = load_plan(fixture("terraform/gpu-pool-unknown-asg-name.json"))
    result = run(plan)
    assert result.verdict == "pass"
    assert not [v for v in findings(result) if v.policy == "gpu-pool-scales-on-utilisation"]
    # the same plan without the configuration references: cannot verify, never a pass
    unlinked = replace(plan, changes=tuple(
        replace(c, references={}) if c.kind is ResourceKind.SCALING_POLICY else c
        for c in plan.changes))
    [v] = [v for v in run(unlinked).violations if v.policy == "gpu-pool-scales-on-utilisation"]
    assert v.unknown and v.resource == "aws_autoscaling_group.gpu"
    assert "cannot verify" in v.message


def test_modules_count_and_for_each_link_each_pool_to_its_own_policy() -> None:
    result = run(load_plan(fixture("terraform/modules-count-foreach.json")))
    assert result.errors == []
    assert not [v for v in findings(result) if v.policy in (
        "gpu-pool-scales-on-utilisation", "gpu-smallest-instance", "gpu-no-vertical-upsize")]
    groups = [c.resource for c in result.cost if "aws_autoscaling_group" in c.resource]
    assert groups == ['module.gpu_pool["inference"].aws_autoscaling_group.this',
                      'module.gpu_pool["training"].aws_autoscaling_group.this']


def test_deleted_and_data_resources_are_not_judged() -> None:
    plan = load_plan(fixture("terraform/replace-delete-data.json"))
    result = run(plan)
    deleted = {c.address for c in plan.changes if c.is_removal}
    assert deleted and not {v.resource for v in result.violations} & deleted
    assert ("ebs-encrypted", "aws_launch_template.blue") in blocking(result)


def test_pulumi_preview_with_a_clean_gpu_pool_only_advises() -> None:
    result = run(load_plan(fixture("pulumi/preview-mixed.json")))
    assert result.verdict == "pass", [v.message for v in result.violations if v.blocking]


def test_the_kits_dev_plan_passes_and_a_bigger_size_fails() -> None:
    base = run(load_plan(fixture("gpupool/plan-dev-base.json")))
    assert base.verdict == "pass" and findings(base) == []
    head = run(load_plan(fixture("gpupool/plan-dev-head.json")))
    assert {p for p, _ in blocking(head)} == {"gpu-smallest-instance"}
    assert all("g4dn.2xlarge is not the smallest size" in v.message
               for v in head.violations if v.blocking)


def test_every_fixture_evaluates_without_rule_errors() -> None:
    files = sorted(p for d in ("terraform", "pulumi", "gpupool")
                   for p in (FIXTURES / d).glob("*.json"))
    if not files:
        pytest.skip("no fixtures yet")
    for f in files:
        result = run(load_plan(str(f)))
        assert result.errors == [], (f.name, result.errors)


def test_offline_base_to_head_diff_blocks_the_upsize_and_prices_it() -> None:
    import json

    from policies.sources.diff import diff_offline_plans

    base = json.loads(Path(fixture("gpupool/plan-dev-base.json")).read_text())
    head = json.loads(Path(fixture("gpupool/plan-dev-head.json")).read_text())
    result = run(diff_offline_plans(base, head, "stack dev @ base..head"))
    upsizes = [[r.address.rsplit("::", 1)[-1] for r in v.resources] for v in result.violations
               if v.policy == "gpu-no-vertical-upsize"]
    assert upsizes == [["dev-inference-lt", "dev-inference-asg"]]  # one cause, both named
    assert all(v.message == UPSIZE_MESSAGE for v in result.violations
               if v.policy == "gpu-no-vertical-upsize")
    cost = {c.resource.rsplit("::", 1)[-1]: c for c in result.cost}
    assert (cost["dev-inference-asg"].before_per_hour,
            cost["dev-inference-asg"].after_per_hour) == (2.104, 6.016)  # 4 → 8 at max size
    assert cost["dev-training-asg"].after_per_hour == 0.0  # removed
