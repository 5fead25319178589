# ruff: noqa: RUF001  (the multiplication sign of the messages under test)
"""Issue 7 item 15: cost messages quote the prices of the region the plan deploys to (from the
Terraform provider, the Pulumi stack config or the offline plan), us-east-1 otherwise, and say
which."""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from policies.engine import evaluate
from policies.result import Result
from policies.settings import Settings
from policies.sources import parse_document
from policies.sources.region import terraform_region

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TERRAFORM = json.loads((FIXTURES / "terraform" / "upsize-g4dn.json").read_text())
PREVIEW = json.loads((FIXTURES / "pulumi" / "preview-upsize.json").read_text())


def run(doc: dict[str, Any]) -> Result:
    return evaluate([parse_document(doc, "plan.json")], Settings.default(), today=date(2026, 6, 1))


def upsizes(result: Result) -> list[str]:
    return [v.message for v in result.violations if v.policy == "gpu-no-vertical-upsize"]


def terraform_in(region: str) -> dict[str, Any]:
    doc = copy.deepcopy(TERRAFORM)
    doc["configuration"]["provider_config"]["aws"]["expressions"]["region"] = {
        "constant_value": region}
    return doc


def test_terraform_plan_in_eu_west_1_is_priced_at_eu_west_1() -> None:
    result = run(terraform_in("eu-west-1"))
    message = next(m for m in upsizes(result) if "aws_instance" not in m)
    # g4dn.xlarge $0.587 and g4dn.2xlarge $0.838 in eu-west-1 (us-east-1: $0.526, $0.752)
    assert "+$0.251/h (+$183.23/month)" in message
    assert "add 1 × g4dn.xlarge for $0.587/h instead (eu-west-1 on-demand prices)" in message
    cost = {c.resource: c for c in result.cost}
    assert cost["aws_instance.trainer"].delta_per_hour == pytest.approx(0.838 - 0.587)
    assert "eu-west-1 on-demand prices" in cost["aws_instance.trainer"].note


def test_pulumi_preview_region_comes_from_the_stack_config() -> None:
    doc = copy.deepcopy(PREVIEW)
    doc["config"]["aws:region"] = "eu-west-1"
    [message, *_] = upsizes(run(doc))
    assert "$0.587/h instead (eu-west-1 on-demand prices)" in message


def test_plan_without_a_region_is_priced_at_us_east_1_and_says_so() -> None:
    doc = copy.deepcopy(TERRAFORM)
    del doc["configuration"]["provider_config"]
    [message, *_] = upsizes(run(doc))
    assert message.endswith(
        "add 1 × g4dn.xlarge for $0.526/h instead "
        "(us-east-1 on-demand prices; the plan names no region)")


def test_offline_plan_carries_its_stack_region() -> None:
    doc = {"kind": "gpupool-plan", "version": 1, "stack": "eu", "region": "eu-west-1",
           "resources": []}
    assert parse_document(doc, "p.json").meta["region"] == "eu-west-1"


def test_region_in_a_root_variable_is_read() -> None:
    doc = copy.deepcopy(TERRAFORM)
    doc["configuration"]["provider_config"]["aws"]["expressions"]["region"] = {
        "references": ["var.region"]}
    doc["variables"] = {"region": {"value": "ap-northeast-1"}}
    assert terraform_region(doc) == "ap-northeast-1"


def test_providers_in_several_regions_name_no_single_region() -> None:
    doc = copy.deepcopy(TERRAFORM)
    doc["configuration"]["provider_config"]["aws.west"] = {
        "name": "aws", "alias": "west", "expressions": {"region": {"constant_value": "us-west-2"}}}
    assert terraform_region(doc) is None
    doc["configuration"]["provider_config"]["aws.west"]["expressions"]["region"] = {
        "constant_value": "us-east-1"}
    assert terraform_region(doc) == "us-east-1"
