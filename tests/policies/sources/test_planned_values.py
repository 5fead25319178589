"""Which resources a Terraform plan is judged on (issue 7, item 4).

``resource_changes`` is what is judged. A file whose ``planned_values`` holds resources that
``resource_changes`` does not list is refused (it passed with 0 resources before): Terraform
always writes both, and ``planned_values`` omits values unknown until apply, so it cannot stand
in. ``--changed-only`` judges created, updated and replaced resources only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.errors import InputError
from policies.engine import evaluate
from policies.model import ChangeKind
from policies.settings import Settings
from policies.sources import load_plan

Write = Callable[[Any, str], Path]
REAL = Path(__file__).resolve().parents[2] / "fixtures" / "terraform" / "real"


def test_planned_values_without_resource_changes_is_refused() -> None:
    """Checkov's test data: format 0.2, two buckets in planned_values, no resource_changes."""
    path = REAL / "checkov-plan_with_resource_reference-graph.json"
    with pytest.raises(InputError) as err:
        load_plan(path)
    (line,) = err.value.problems
    assert line.startswith(f"{path}: resource_changes: expected the planned change of every "
                           "resource in planned_values, got none for 2 of them (first: "
                           "aws_s3_bucket.example)")


def test_planned_values_alone_without_a_format_version() -> None:
    path = REAL / "checkov-plan_vpc_endpoint.json"
    with pytest.raises(InputError, match="format_version: expected the plan format version"):
        load_plan(path)


def _plan(rcs: list[dict[str, Any]], planned: list[str]) -> dict[str, Any]:
    return {"format_version": "1.2",
            "planned_values": {"root_module": {"child_modules": [{"resources": [
                {"address": a, "mode": "managed", "type": a.split(".")[-2], "name": "x"}
                for a in planned]}]}},
            "resource_changes": rcs}


def _rc(address: str, actions: list[str], after: dict[str, Any]) -> dict[str, Any]:
    rtype, name = address.split(".")[-2:]
    return {"address": address, "mode": "managed", "type": rtype, "name": name,
            "change": {"actions": actions, "before": after if actions != ["create"] else None,
                       "after": after}}


def test_a_resource_missing_from_resource_changes_is_refused(write: Write) -> None:
    rc = _rc("aws_instance.a", ["no-op"], {"instance_type": "t3.micro"})
    doc = _plan([rc], ["aws_instance.a", "module.m.aws_instance.b"])
    with pytest.raises(InputError, match=r"got none for 1 of them \(first: module.m.aws_instance"):
        load_plan(write(doc, "plan.json"))
    doc["resource_changes"].append({**_rc("aws_instance.b", ["no-op"], {}),
                                    "address": "module.m.aws_instance.b",
                                    "module_address": "module.m"})
    assert len(load_plan(write(doc, "plan.json")).changes) == 2


def test_hcp_terraform_redacted_json_plan_is_read() -> None:
    """Terraform's own test data for the runs API's redacted plan (plan_format_version)."""
    (change,) = load_plan(REAL / "terraform-views-redacted-plan.json").changes
    assert change.change is ChangeKind.CREATE


# --- --changed-only ---------------------------------------------------------------------------

IMDSV1 = {"instance_type": "t3.micro", "metadata_options": [{"http_tokens": "optional"}],
          "root_block_device": [{"encrypted": True}]}


def mixed_plan() -> dict[str, Any]:
    """An IMDSv1 instance kept (no-op), one created, one updated."""
    return {"format_version": "1.2", "resource_changes": [
        _rc("aws_instance.old", ["no-op"], IMDSV1),
        _rc("aws_instance.new", ["create"], IMDSV1),
        _rc("aws_instance.changed", ["update"], {**IMDSV1, "instance_type": "t3.small"}),
    ]}


def _mixed(write: Write) -> Path:
    return write(mixed_plan(), "plan.json")


def test_all_resources_are_judged_by_default_and_changed_only_on_request(write: Write) -> None:
    plan = load_plan(_mixed(write))
    every = evaluate([plan], Settings.default())
    changed = evaluate([plan], Settings.default(), changed_only=True)
    assert {v.resource for v in every.violations} == {
        "aws_instance.old", "aws_instance.new", "aws_instance.changed"}
    assert {v.resource for v in changed.violations} == {"aws_instance.new",
                                                        "aws_instance.changed"}
    assert (every.resources_evaluated, changed.resources_evaluated) == (3, 2)


def test_changed_only_still_follows_links_to_unchanged_resources(write: Write) -> None:
    """A new GPU scaling policy on an unchanged group: the group is not judged, but the
    policy's link to it still resolves (no "cannot verify" on the policy)."""
    group = {"name": "gpu", "min_size": 1, "max_size": 4,
             "mixed_instances_policy": [{"launch_template": [{"override": [
                 {"instance_type": "g4dn.xlarge"}]}]}]}
    policy = {"name": "util", "autoscaling_group_name": "gpu",
              "policy_type": "TargetTrackingScaling",
              "target_tracking_configuration": [{"target_value": 50,
               "customized_metric_specification": [{"namespace": "x", "metric_name": "y",
                                                    "statistic": "Average"}]}]}
    plan = load_plan(write({"format_version": "1.2", "resource_changes": [
        _rc("aws_autoscaling_group.gpu", ["no-op"], group),
        _rc("aws_autoscaling_policy.util", ["create"], policy)]}, "plan.json"))
    every = evaluate([plan], Settings.default())
    changed = evaluate([plan], Settings.default(), changed_only=True)
    assert any(v.resource == "aws_autoscaling_group.gpu" for v in every.violations)
    assert all(v.resource != "aws_autoscaling_group.gpu" for v in changed.violations)
    assert not any(v.unknown for v in changed.violations)
