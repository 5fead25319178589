"""What provider 5.100 plans as "known after apply" on a new GPU proxy group, read through the
plan's configuration (and the ``.tf`` sources for dynamic blocks).

Every new ``aws_autoscaling_group`` of a real plan has ``availability_zones``,
``target_group_arns``, ``load_balancers`` and ``traffic_source`` unknown, set or not; a new
``aws_security_group`` without inline rules has ``ingress`` unknown. Read as unknown, every proxy
group got advisory "cannot verify" notes from ``gpu-proxy-placement`` and ``gpu-proxy-private``.
The fixture ``tests/fixtures/terraform/live/proxy-exposure/`` is a real plan (terraform 1.11,
hashicorp/aws 5.100, moto) of eight proxy groups; its README says what each one is.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from policies.engine import evaluate
from policies.model import UNKNOWN, Plan
from policies.settings import Settings
from policies.sources import load_plan, parse_document
from tests.cli.cli_support import run_in_process
from tests.fixtures import terraform_live as live

MODULE = live.LIVE / "proxy-exposure"
PLAN = MODULE / "plan-create.json"
GROUPS = ("safe", "spread", "attached", "traffic_attached", "declared_tg", "computed_tg",
          "dynamic_source", "computed_subnets")


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(PLAN.read_text(encoding="utf-8"))
    return doc


def _findings(plan: Plan) -> dict[tuple[str, str], list[tuple[str, str]]]:
    result = evaluate([plan], Settings.default())
    assert not result.errors
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for v in result.violations:
        out.setdefault((v.policy, v.resource), []).append((str(v.enforcement), v.message))
    return out


def _group(plan: Plan, name: str) -> dict[str, Any]:
    return dict(plan.by_address()[f"aws_autoscaling_group.{name}"].new or {})


def test_the_plan_holds_the_provider_shape_this_is_about() -> None:
    """Every group (set or not) plans the four as wholly unknown: nothing here is hand-made."""
    rows = {r["address"]: r["change"] for r in _doc()["resource_changes"]}
    for name in GROUPS:
        unknown = rows[f"aws_autoscaling_group.{name}"]["after_unknown"]
        for key in ("availability_zones", "target_group_arns", "load_balancers",
                    "traffic_source", "vpc_zone_identifier"):
            assert unknown[key] is True, (name, key)
    assert rows["aws_security_group.proxy"]["after_unknown"]["ingress"] is True


def test_what_the_configuration_does_not_set_is_not_set() -> None:
    plan = load_plan(PLAN)  # beside its .tf files
    safe = _group(plan, "safe")
    for key in ("availability_zones", "target_group_arns", "load_balancers", "traffic_source"):
        assert key not in safe, key
    assert safe["vpc_zone_identifier"] is UNKNOWN  # declared: judged through its reference
    assert plan.by_address()["aws_autoscaling_group.safe"].references[
        "vpc_zone_identifier"] == "aws_subnet.private"
    assert "ingress" not in (plan.by_address()["aws_security_group.proxy"].new or {})
    # declared from a computed value: stays unknown
    assert _group(plan, "declared_tg")["target_group_arns"] is UNKNOWN
    assert _group(plan, "computed_tg")["target_group_arns"] is UNKNOWN
    # a dynamic block over a value read at apply: the .tf source says so
    assert _group(plan, "dynamic_source")["traffic_source"] is UNKNOWN


def test_the_kit_s_shape_passes_and_what_is_set_is_judged() -> None:
    found = _findings(load_plan(PLAN))
    assert not [k for k in found if k[1] == "aws_autoscaling_group.safe"]
    spread = found[("gpu-proxy-placement", "aws_autoscaling_group.spread")]
    assert spread == [("mandatory", spread[0][1])]
    assert spread[0][1].startswith("GPU proxy spans 2 availability zones (us-east-1a, "
                                   "us-east-1b)")
    for name, what in (("attached", "attached (aws_autoscaling_attachment)"),
                       ("traffic_attached",
                        "traffic_attached (aws_autoscaling_traffic_source_attachment)"),
                       ("declared_tg", "its target_group_arns (proxies)")):
        (enforcement, message), = found[("gpu-proxy-private", f"aws_autoscaling_group.{name}")]
        assert enforcement == "mandatory"
        assert message.startswith(f"a load balancer is in the data path: {what};"), message


def test_a_module_s_variables_left_at_null_or_empty_are_not_set() -> None:
    """`target_group_arns = var.target_group_arns` (default []) and `availability_zones =
    var.availability_zones` (default null) are declared, but from values known at plan time
    that the plan shows unknown: null or empty, so not set. Given the plan's target group
    through the variable, the same argument is followed to it."""
    plan = load_plan(PLAN)
    safe = dict(plan.by_address()["module.pool_safe.aws_autoscaling_group.this"].new or {})
    for key in ("availability_zones", "target_group_arns", "load_balancers", "traffic_source"):
        assert key not in safe, key
    found = _findings(plan)
    assert not [k for k in found if k[1].startswith("module.pool_safe.")]
    (enforcement, message), = found[("gpu-proxy-private",
                                     "module.pool_tg.aws_autoscaling_group.this")]
    assert (enforcement, message.split(";")[0]) == (
        "mandatory", "a load balancer is in the data path: its target_group_arns (proxies)")


def test_set_from_values_read_at_apply_stays_cannot_verify() -> None:
    found = _findings(load_plan(PLAN))
    assert found[("gpu-proxy-private", "aws_autoscaling_group.computed_tg")] == [
        ("advisory", "cannot verify: target_group_arns unknown until apply")]
    (enforcement, message), = found[("gpu-proxy-private", "aws_autoscaling_group.dynamic_source")]
    assert enforcement == "advisory"
    assert message.startswith("cannot verify: traffic_source unknown until apply: the "
                              "configuration writes no static traffic_source block")
    assert found[("gpu-proxy-placement", "aws_autoscaling_group.computed_subnets")] == [
        ("advisory", "cannot verify: cannot tell whether the GPU proxy stays in one availability "
                     "zone (subnets unknown until apply)")]


def test_without_the_sources_a_dynamic_block_cannot_be_ruled_out() -> None:
    """Read from elsewhere (standard input, a copy without the .tf files), the plan's JSON
    configuration cannot tell an undeclared traffic_source from a dynamic one: fail closed, on
    every group that has no alternative declared, and the same for the inline ingress."""
    found = _findings(parse_document(_doc(), "plan.json"))
    for name in GROUPS:
        notes = found.get(("gpu-proxy-private", f"aws_autoscaling_group.{name}"), [])
        if name in ("attached", "traffic_attached", "declared_tg"):
            assert any(e == "mandatory" for e, _ in notes)  # still caught
        if name in ("declared_tg", "computed_tg"):
            continue  # target_group_arns declared: traffic_source conflicts with it
        assert any(e == "advisory" and "traffic_source unknown until apply" in m
                   for e, m in notes), name
        assert any("the ingress of security group proxy is unknown" in m for _, m in notes)


@pytest.mark.parametrize(("for_each", "kept"), [
    ("data.aws_subnets.tier.ids", True),  # read at apply: how many blocks is unknown
    ("[for s in data.aws_subnets.tier.ids : s]", True),
    ("[timestamp()]", True),  # a function known only at apply
    ("[]", False),  # known at plan: zero blocks, as the plan (wholly unknown) shows
    ("var.sources", False),  # a root variable: known at plan
])
def test_sources_that_write_a_dynamic_block(tmp_path: Path, for_each: str, kept: bool) -> None:
    """The reader follows the .tf source, not a guess: the same plan beside a source whose safe
    group writes `dynamic "traffic_source"` leaves that group's traffic_source unknown when the
    block's for_each is unknown at plan time; a for_each known at plan wrote none."""
    shutil.copytree(MODULE, tmp_path / "m")
    groups = tmp_path / "m" / "groups.tf"
    text = groups.read_text(encoding="utf-8")
    marker = 'resource "aws_autoscaling_group" "safe" {\n'
    assert marker in text
    groups.write_text(text.replace(marker, marker + (
        f'  dynamic "traffic_source" {{\n    for_each = {for_each}\n    content {{\n'
        '      identifier = traffic_source.value\n    }\n  }\n')), encoding="utf-8")
    plan = load_plan(tmp_path / "m" / "plan-create.json")
    assert (_group(plan, "safe").get("traffic_source") is UNKNOWN) is kept
    assert "traffic_source" not in _group(plan, "spread")


def test_a_plan_without_configuration_keeps_every_unknown() -> None:
    doc = copy.deepcopy(_doc())
    del doc["configuration"]
    plan = parse_document(doc, "plan.json", MODULE)
    safe = _group(plan, "safe")
    for key in ("availability_zones", "target_group_arns", "load_balancers", "traffic_source"):
        assert safe[key] is UNKNOWN, key
    found = _findings(plan)
    assert ("gpu-proxy-placement", "aws_autoscaling_group.safe") in found


@pytest.mark.parametrize("where", ["beside", "tf-root", "elsewhere"])
def test_check_reads_the_sources_beside_the_plan_or_under_tf_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    monkeypatch.chdir(tmp_path)
    if where == "beside":
        shutil.copytree(MODULE, tmp_path / "infra")
        args = ["infra/plan-create.json"]
    else:
        (tmp_path / "plans").mkdir()
        shutil.copy(PLAN, tmp_path / "plans" / "plan.json")
        args = ["plans/plan.json"] + (["--tf-root", str(MODULE)] if where == "tf-root" else [])
    done = run_in_process(["check", *args, "--format", "json"])
    assert done.code == 1, done.err  # the mandatory findings above
    safe = [v for v in json.loads(done.out)["violations"]
            if v["resource"] == "aws_autoscaling_group.safe"]
    if where == "elsewhere":
        assert {v["enforcement"] for v in safe} == {"advisory"} and safe
    else:
        assert safe == []


def _references(resource: dict[str, Any], call: dict[str, Any] | None = None,
                variables: tuple[str, ...] = ("x",)) -> Any:
    from policies.sources.terraform_refs import References

    module = {"resources": [{"address": "aws_autoscaling_group.g", "mode": "managed",
                             "type": "aws_autoscaling_group", "name": "g",
                             "expressions": resource}],
              "variables": {v: {} for v in variables}}
    config = {"root_module": {"module_calls": {"m": {"source": "./m", "expressions": call or {},
                                                     "module": module}}}}
    return References(config, "plan.json", {})


@pytest.mark.parametrize(("resource", "call", "known"), [
    ({"constant_value": []}, None, True),  # `target_group_arns = []`
    ({"constant_value": None}, None, True),
    ({"references": ["var.x"]}, None, True),  # the variable's default
    ({"references": ["var.x"]}, {"x": {"constant_value": None}}, True),
    ({"references": ["var.x"]}, {"x": {"references": ["var.root"]}}, True),  # a root variable
    ({"references": ["var.x"]}, {"x": {"references": ["aws_lb_target_group.t.arn",
                                                      "aws_lb_target_group.t"]}}, False),
    ({"references": ["var.x"]}, {"x": {"references": ["each.value"]}}, False),
    ({"references": ["var.x"]}, {"x": {"references": ["local.arns"]}}, False),
    ({"references": ["var.x", "count.index"]}, None, True),
    ({"references": ["var.y"]}, None, False),  # not a variable the module declares
    ({}, None, False),  # no constant and no reference: timestamp(), uuid()
    ([{"identifier": {"constant_value": "arn"}}], None, False),  # a block, not an argument
])
def test_known_at_plan(resource: Any, call: dict[str, Any] | None, known: bool) -> None:
    refs = _references({"target_group_arns": resource}, call)
    assert refs.known_at_plan((("m", None),), "aws_autoscaling_group.g",
                              "target_group_arns") is known


@pytest.mark.parametrize(("source", "refs"), [
    ("var.traffic_sources", ("var.traffic_sources",)),
    ("length(var.a) > 0 ? [for s in var.b : s.arn] : local.c", ("var.a", "var.b", "s.arn",
                                                                "local.c")),
    ("aws_lb_target_group.t[*].arn", ("aws_lb_target_group.t",)),
    ('"${var.p}-x"', ("var.p",)),
    ('toset(["a", "b"])', ()),
    ("[timestamp()]", None),
])
def test_for_each_references_read_from_the_source(source: str, refs: tuple[str, ...] | None
                                                  ) -> None:
    import hcl2

    from policies.tfsource.refs import references

    attribute = hcl2.parses_to_tree(f"x = {source}\n").children[0].children[0]
    assert references([c for c in attribute.children if hasattr(c, "data")][-1]) == refs
