"""Terraform plans real tools wrote (issue 7, items 1 and 3).

Verbatim files from Terraform's, Checkov's, Infracost's and terraform-compliance's test data
(``tests/fixtures/terraform/real/``, provenance in tests/fixtures/README.md). Item 3: in plans of
Terraform >= 0.12 a ``metadata_options`` or root volume the configuration does not declare is
"known after apply"; read with the plan's ``configuration`` it is "not set", a mandatory
violation as the same resource is in a Pulumi preview — not an advisory "cannot verify".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from policies.engine import evaluate
from policies.model import UNKNOWN, ChangeKind, Plan
from policies.result import Result
from policies.settings import Settings
from policies.sources import load_plan, parse_document

Write = Callable[[Any, str], Path]
REAL = Path(__file__).resolve().parents[2] / "fixtures" / "terraform" / "real"


def _check(plan: Plan) -> Result:
    return evaluate([plan], Settings.default())


def _findings(result: Result) -> set[tuple[str, str, str]]:
    return {(v.policy, v.resource, str(v.enforcement)) for v in result.violations}


# file → (changes read, mandatory findings, advisory findings)
READABLE: dict[str, tuple[int, int, int]] = {
    "checkov-plan_encodings-win_utf16.json": (1, 0, 0),  # UTF-16 with BOM, as PowerShell writes
    "checkov-plan_provisioners.json": (1, 2, 0),
    "infracost-examples-terraform-plan.json": (2, 2, 0),
    "terraform-compliance-issue-153.json": (2, 2, 0),
    "terraform-compliance-issue-456.json": (32, 30, 0),
    "terraform-compliance-issue-567.json": (9, 0, 0),
    "terraform-show-json-modules.json": (4, 0, 0),
}


@pytest.mark.parametrize("name", sorted(READABLE))
def test_every_real_plan_is_read_and_judged(name: str) -> None:
    plan = load_plan(REAL / name)
    result = _check(plan)
    summary = result.to_json()["summary"]
    assert (len(plan.changes), summary["mandatory"], summary["advisory"]) == READABLE[name]
    assert not result.errors


def test_terraform_1_5_instance_without_metadata_options_or_root_volume() -> None:
    """Checkov's plan_provisioners (Terraform 1.5.7): both blocks "known after apply"."""
    plan = load_plan(REAL / "checkov-plan_provisioners.json")
    (web,) = plan.changes
    assert "metadata_options" not in web.new and "root_block_device" not in web.new
    assert web.new["instance_type"] == "t3.micro"
    assert _findings(_check(plan)) == {
        ("imdsv2-required", "aws_instance.web", "mandatory"),
        ("ebs-encrypted", "aws_instance.web", "mandatory")}


def test_declared_block_without_encrypted_is_not_encrypted() -> None:
    """Infracost's example (Terraform 1.0.2): root_block_device and ebs_block_device declared
    with sizes only; their ``encrypted`` is "known after apply" but the configuration never set
    it, so AWS's default applies."""
    plan = load_plan(REAL / "infracost-examples-terraform-plan.json")
    web = plan.by_address()["aws_instance.web_app"]
    assert "encrypted" not in web.new["root_block_device"][0]
    assert web.new["root_block_device"][0]["volume_size"] == 50
    messages = [v.message for v in _check(plan).violations if v.policy == "ebs-encrypted"]
    assert messages == ["root volume is not encrypted; set encrypted = true; "
                        "EBS volume my_data is not encrypted; set encrypted = true"]


def test_standalone_volumes_without_encrypted() -> None:
    plan = load_plan(REAL / "terraform-compliance-issue-153.json")
    result = _check(plan)
    assert _findings(result) == {
        ("ebs-encrypted", "aws_ebs_volume.fail", "mandatory"),
        ("ebs-encrypted", "aws_ebs_volume.success", "mandatory")}
    assert all("account's default" in v.message for v in result.violations)


def test_module_instances_find_their_configuration() -> None:
    plan = load_plan(REAL / "terraform-compliance-issue-456.json")
    imds = {v.resource for v in _check(plan).violations if v.policy == "imdsv2-required"}
    assert 'module.ecr_repository_with_for["repository_1"].aws_instance.ecr_repository' in imds
    assert "module.other_ecr_repository_with_count[6].aws_instance.ecr_repository" in imds
    assert len(imds) == 15


def _doc(name: str) -> dict[str, Any]:
    return json.loads((REAL / name).read_text())


def test_without_configuration_unknown_stays_unknown() -> None:
    """No configuration, nothing proven: "cannot verify" at the advisory level, never a pass."""
    doc = _doc("checkov-plan_provisioners.json")
    del doc["configuration"]
    plan = parse_document(doc, "plan.json")
    assert plan.changes[0].new["metadata_options"] is UNKNOWN
    assert _findings(_check(plan)) == {
        ("imdsv2-required", "aws_instance.web", "advisory"),
        ("ebs-encrypted", "aws_instance.web", "advisory")}


def test_a_declared_block_with_unknown_values_stays_unknown() -> None:
    doc = _doc("checkov-plan_provisioners.json")
    config = doc["configuration"]["root_module"]["resources"][0]["expressions"]
    config["metadata_options"] = [{"http_tokens": {"references": ["var.tokens"]}}]
    config["root_block_device"] = [{"encrypted": {"references": ["var.encrypt"]}}]
    plan = parse_document(doc, "plan.json")
    assert plan.changes[0].new["metadata_options"] is UNKNOWN
    assert {(p, e) for p, _, e in _findings(_check(plan))} == {
        ("imdsv2-required", "advisory"), ("ebs-encrypted", "advisory")}


def test_terraform_1_0_writes_an_undeclared_block_as_null(write: Write) -> None:
    doc = copy.deepcopy(_doc("checkov-plan_provisioners.json"))
    doc["configuration"]["root_module"]["resources"][0]["expressions"]["metadata_options"] = None
    (web,) = load_plan(write(doc, "plan.json")).changes
    assert "metadata_options" not in web.new


def test_launch_template_and_module_resources_without_their_configuration(write: Write) -> None:
    """A module whose configuration is missing: the value stays unknown."""
    plan = {"format_version": "1.2", "resource_changes": [{
        "address": "module.m.aws_launch_template.lt", "module_address": "module.m",
        "mode": "managed", "type": "aws_launch_template", "name": "lt",
        "change": {"actions": ["create"], "before": None,
                   "after": {"instance_type": "g5.xlarge"},
                   "after_unknown": {"metadata_options": True}}}],
        "configuration": {"root_module": {"module_calls": {"m": {"source": "./m"}}}}}
    (lt,) = load_plan(write(plan, "plan.json")).changes
    assert lt.new["metadata_options"] is UNKNOWN
    plan["configuration"]["root_module"]["module_calls"]["m"]["module"] = {"resources": [
        {"address": "aws_launch_template.lt", "mode": "managed", "type": "aws_launch_template",
         "name": "lt", "expressions": {"instance_type": {"constant_value": "g5.xlarge"}}}]}
    (lt,) = load_plan(write(plan, "plan.json")).changes
    assert "metadata_options" not in lt.new


def test_no_op_of_an_instance_that_neither_exists_nor_is_planned() -> None:
    """terraform-compliance's issue-567 (Terraform 1.0.2): ``["no-op"]`` with before and after
    null for count instances; nothing to judge, and no longer bad input."""
    doc = _doc("terraform-compliance-issue-567.json")
    empty = [r["address"] for r in doc["resource_changes"]
             if r["change"]["actions"] == ["no-op"] and r["change"]["after"] is None]
    assert empty
    plan = load_plan(REAL / "terraform-compliance-issue-567.json")
    assert not set(empty) & set(plan.by_address())
    assert all(c.change is not ChangeKind.DELETE for c in plan.changes)
