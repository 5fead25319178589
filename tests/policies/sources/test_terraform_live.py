"""Plans real ``terraform plan`` wrote (issue 16, items 4-6).

``tests/fixtures/terraform/live/`` holds Terraform modules and the ``terraform show -json`` of
their plans, made with terraform 1.11 and hashicorp/aws 5.100 against a moto server
(``tests/fixtures/terraform_live.py``, provenance in that directory's README). The committed
plans are always judged; the live tests plan the same modules again on this machine (skipped,
with the reason, where terraform or the provider mirror is missing) and hold the result to the
same findings, so a Terraform or provider that writes another shape fails here.

Item 4: a new group with a plain ``launch_template { id = aws_launch_template.x.id }`` plans its
``mixed_instances_policy`` as "known after apply"; it was read as unknown, the template never
followed, and a GPU pool scaling on CPU passed with an advisory "cannot verify". The same group
once it exists (the update plan) was a mandatory FAIL all along.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policies.engine import evaluate
from policies.model import UNKNOWN, Plan
from policies.settings import Settings
from policies.sources import load_plan, parse_document
from tests.fixtures import terraform_live as live

Findings = set[tuple[str, str, str]]

# committed plan → every finding (policy, resource, enforcement) it must give
_CREATED: Findings = {
    # item 4: a plain launch_template block, scaling on CPU
    ("gpu-pool-scales-on-utilisation", "aws_autoscaling_group.cpu_scaled", "mandatory"),
    # item 5: requirements that can launch bigger sizes (any_size, l4_any_size), and a CPU-sized
    # selection that does not exclude accelerators; "smallest" and "cpu_only" pass
    ("gpu-smallest-instance", "aws_autoscaling_group.any_size", "mandatory"),
    ("gpu-smallest-instance", "aws_autoscaling_group.gpu_not_excluded", "mandatory"),
    ("gpu-smallest-instance", "aws_launch_template.l4_any_size", "mandatory"),
    # a local module called with for_each: its "training" pool asks for g4dn.2xlarge
    ("gpu-smallest-instance", 'module.pool["training"].aws_launch_template.this', "mandatory"),
}
_RAISED = ("cpu_scaled", "gpu_scaled", "any_size", "smallest")  # GPU groups, max_size 4 → 8
EXPECTED: dict[str, Findings] = {
    "gpu-asgs/plan-create.json": _CREATED,
    "gpu-asgs/plan-update.json": _CREATED | {
        ("gpu-capacity-vs-utilisation", f"aws_autoscaling_group.{g}", "advisory")
        for g in _RAISED},
    # issue 15 section 3: GPU node groups without a NoSchedule taint (AMI type AL2_x86_64_GPU;
    # a PREFER_NO_SCHEDULE taint; g4dn.xlarge from the launch template, instance_types unset
    # and so "known after apply"); the tainted L4 group and the CPU group pass
    "eks-node-groups/plan-create.json": {
        ("gpu-nodes-tainted", f"aws_eks_node_group.{g}", "mandatory")
        for g in ("gpu_untainted", "gpu_prefer", "gpu_from_template")},
    # issue 16 item 16: g4dn.2xlarge proxies under an 8 Gbps budget. in_group (clients in the
    # proxies' placement group, tagged so) passes the budget; untagged (clients taken to be
    # outside: 5 Gbps per flow) and elsewhere (tagged in-group, but its client group launches
    # into another placement group) fail it, elsewhere's client fails placement too; the
    # bandwidth note on each proxy template. What provider 5.100 plans as "known after apply"
    # on any new group (zones, target groups, load balancers, traffic sources), which the
    # configuration does not set, is judged as not set (tests/policies/sources/
    # test_terraform_unknowns.py), not "cannot verify".
    "proxy-tiers/plan-create.json": {
        ("gpu-proxy-network-budget", f"module.{t}.aws_autoscaling_group.proxy", "mandatory")
        for t in ("untagged", "elsewhere")} | {
        ("gpu-proxy-placement", "module.elsewhere.aws_autoscaling_group.client[0]", "mandatory")
    } | {("gpu-smallest-instance", f"module.{t}.aws_launch_template.proxy", "advisory")
         for t in ("in_group", "untagged", "elsewhere")},
    # Eight new proxy groups (main.tf, groups.tf): nothing set passes (safe) or fails on what
    # is set (spread: two zones); attachment resources and a target group reference attach a
    # load balancer; values read at apply and a dynamic block over them stay "cannot verify".
    "proxy-exposure/plan-create.json": {
        ("gpu-proxy-placement", "aws_autoscaling_group.spread", "mandatory"),
        ("gpu-proxy-placement", "aws_autoscaling_group.computed_subnets", "advisory"),
        ("gpu-proxy-private", "aws_autoscaling_group.attached", "mandatory"),
        ("gpu-proxy-private", "aws_autoscaling_group.traffic_attached", "mandatory"),
        ("gpu-proxy-private", "aws_autoscaling_group.declared_tg", "mandatory"),
        ("gpu-proxy-private", "aws_autoscaling_group.computed_tg", "advisory"),
        ("gpu-proxy-private", "aws_autoscaling_group.dynamic_source", "advisory"),
        # modules.tf: a module declaring every argument from a variable (null or [] unless
        # given); only the call that gives target_group_arns attaches a load balancer
        ("gpu-proxy-private", "module.pool_tg.aws_autoscaling_group.this", "mandatory"),
    },
}


def _findings(plan: Plan) -> Findings:
    result = evaluate([plan], Settings.default())
    assert not result.errors
    return {(v.policy, v.resource, str(v.enforcement)) for v in result.violations}


def _doc(name: str) -> dict[str, Any]:
    return json.loads((live.LIVE / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_committed_plan_findings(name: str) -> None:
    assert _findings(load_plan(live.LIVE / name)) == EXPECTED[name]


def test_every_committed_plan_is_listed_and_real() -> None:
    assert set(live.PLANS) >= set(EXPECTED)
    for name in live.PLANS:
        doc = _doc(name)
        assert doc["terraform_version"].startswith("1.11.")
        assert doc["configuration"]["provider_config"]["aws"]["version_constraint"] == "5.100.0"


def test_new_group_with_a_plain_launch_template_is_judged_by_its_template() -> None:
    """Item 4: the plan says mixed_instances_policy is "known after apply"; the configuration
    declares a launch_template, so the group has no mixed instances policy and launches the
    template's g4dn.xlarge."""
    doc = _doc("gpu-asgs/plan-create.json")
    row = next(r for r in doc["resource_changes"]
               if r["address"] == "aws_autoscaling_group.cpu_scaled")
    assert row["change"]["after_unknown"]["mixed_instances_policy"] is True
    plan = parse_document(doc, "plan.json")
    group = plan.by_address()["aws_autoscaling_group.cpu_scaled"]
    assert "mixed_instances_policy" not in group.new
    assert group.references["launch_template.id"] == "aws_launch_template.gpu"
    messages = [v.message for v in evaluate([plan], Settings.default()).violations
                if v.resource == group.address]
    assert messages and all("scales on CPU (ASGAverageCPUUtilization)" in m for m in messages)


def test_where_the_clients_are_sets_the_proxies_per_flow_cap() -> None:
    """Item 16 on a real plan: the same proxy and budget, judged at 10 Gbps per flow only where
    the plan bears the proxies' in-group tag out, and at 5 Gbps otherwise, saying why."""
    result = evaluate([load_plan(live.LIVE / "proxy-tiers/plan-create.json")], Settings.default())
    budget = {v.resource: v.message for v in result.violations
              if v.policy == "gpu-proxy-network-budget"}
    assert set(budget) == {"module.untagged.aws_autoscaling_group.proxy",
                           "module.elsewhere.aws_autoscaling_group.proxy"}
    for message in budget.values():
        assert message.startswith(
            "one flow of TCP over ENA to clients outside the placement group is capped at 5 Gbps "
            "(g4dn.2xlarge has 10 Gbps baseline), below the budget's 8 Gbps")
    assert ("gpupool:remoting-clients is not set, so the clients are taken to be outside the "
            "placement group); clients in the proxies' cluster placement group (tag "
            "gpupool:remoting-clients = in-group) get 10 Gbps per flow"
            ) in budget["module.untagged.aws_autoscaling_group.proxy"]
    assert ("gpupool:remoting-clients = in-group, but client "
            "module.elsewhere.aws_autoscaling_group.client[0] launches into placement group "
            "apps, not the proxies'); clients in the proxies' cluster placement group (launch "
            "them there) get 10 Gbps per flow"
            ) in budget["module.elsewhere.aws_autoscaling_group.proxy"]


def test_group_declaring_no_launch_source_statically_stays_unknown() -> None:
    """A `dynamic "launch_template"` block is not in the JSON configuration: with no static
    alternative declared, the mixed instances policy may be set, so it stays unknown."""
    doc = copy.deepcopy(_doc("gpu-asgs/plan-create.json"))
    for r in doc["configuration"]["root_module"]["resources"]:
        if r["address"] == "aws_autoscaling_group.cpu_scaled":
            del r["expressions"]["launch_template"]
    plan = parse_document(doc, "plan.json")
    assert plan.by_address()["aws_autoscaling_group.cpu_scaled"].new[
        "mixed_instances_policy"] is UNKNOWN
    found = _findings(plan)
    assert ("gpu-pool-scales-on-utilisation", "aws_autoscaling_group.cpu_scaled",
            "advisory") in found


# --------------------------------------------------------------------------- live terraform

LIVE_PLANS = sorted(n for n, spec in live.PLANS.items() if not spec.applied and n in EXPECTED)


@pytest.fixture(scope="module")
def planned(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[dict[str, dict[str, Any]]]:
    """One ``terraform init`` + ``plan`` per module (creates only: no apply), one plugin cache."""
    why = live.unavailable()
    if why is not None:
        pytest.skip(f"real terraform plans cannot be made here: {why}")
    scratch = tmp_path_factory.mktemp("terraform")
    with live.terraform_env(scratch) as env:
        yield {name: live.make_plan(live.PLANS[name], moto_endpoint, scratch, env)
               for name in LIVE_PLANS}


@pytest.mark.parametrize("name", LIVE_PLANS)
def test_terraform_plans_the_same_today(planned: dict[str, dict[str, Any]], name: str) -> None:
    doc = planned[name]
    committed = _doc(name)
    assert doc["terraform_version"].split(".")[:2] == committed["terraform_version"].split(".")[:2]
    shape = [(r["address"], r["change"]["actions"]) for r in doc["resource_changes"]]
    assert shape == [(r["address"], r["change"]["actions"])
                     for r in committed["resource_changes"]]
    sources = live.LIVE / live.PLANS[name].module  # the .tf files the plan was made from
    assert _findings(parse_document(doc, f"live {name}", sources)) == EXPECTED[name]


def test_the_cli_config_installs_from_the_mirror_only(tmp_path: Path) -> None:
    text = live.cli_config(Path("/opt/mirror"), tmp_path)
    assert 'path    = "/opt/mirror"' in text
    assert 'exclude = ["registry.terraform.io/hashicorp/aws"]' in text
    assert f'plugin_cache_dir = "{tmp_path}"' in text


def test_an_existing_override_without_a_weight_is_read() -> None:
    """Read back from AWS, an override without a weight has ``weighted_capacity: ""`` (a string
    attribute): not set, where it was refused as bad input before."""
    doc = _doc("gpu-asgs/plan-update.json")
    row = next(r for r in doc["resource_changes"]
               if r["address"] == "aws_autoscaling_group.any_size")
    override = row["change"]["after"]["mixed_instances_policy"][0]["launch_template"][0][
        "override"][0]
    assert override["weighted_capacity"] == ""
    assert load_plan(live.LIVE / "gpu-asgs/plan-update.json").by_address()[
        "aws_autoscaling_group.any_size"].change.value == "update"
