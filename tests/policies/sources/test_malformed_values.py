"""Wrongly typed values the rules read are bad input, named where the file has them (issue 7,
item 5): never "internal error", never "cannot verify" (which passes at the advisory level),
and ``--format json`` never writes NaN or Infinity."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.errors import InputError
from policies.engine import evaluate
from policies.reports import render
from policies.settings import Settings
from policies.sources import load_plan, parse_document

Write = Callable[[Any, str], Path]


def _terraform(rtype: str, after: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": "1.2", "resource_changes": [{
        "address": f"{rtype}.x", "mode": "managed", "type": rtype, "name": "x",
        "change": {"actions": ["create"], "before": None, "after": after}}]}


def _pulumi(rtype: str, inputs: dict[str, Any]) -> dict[str, Any]:
    urn = f"urn:pulumi:dev::p::{rtype}::x"
    return {"steps": [{"op": "create", "urn": urn, "newState": {
        "urn": urn, "custom": True, "type": rtype, "inputs": inputs}}]}


def _offline(rtype: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "gpupool-plan", "version": 1, "stack": "dev", "resources": [
        {"urn": f"urn:pulumi:dev::p::{rtype}::x", "type": rtype, "name": "x", "custom": True,
         "inputs": inputs}]}


TF_ASG, PU_ASG = "aws_autoscaling_group", "aws:autoscaling/group:Group"
TF_LT, PU_LT = "aws_launch_template", "aws:ec2/launchTemplate:LaunchTemplate"
BAD_TYPES = [5, 1.5, ["g4dn.xlarge"], {"name": "g4dn.xlarge"}, True]
BAD_SIZES = ["inf", "Infinity", "NaN", -1, 1.5, 10**20, "1e3", "-3", 10**4000, True, [4], {}]


@pytest.mark.parametrize("value", BAD_TYPES, ids=repr)
@pytest.mark.parametrize(
    ("build", "rtype", "key", "path"),
    [
        (_terraform, TF_LT, "instance_type",
         "resource_changes[0].change.after.instance_type"),
        (_pulumi, PU_LT, "instanceType", "steps[0].newState.inputs.instanceType"),
        (_offline, PU_LT, "instanceType", "resources[0].inputs.instanceType"),
    ],
)
def test_instance_type_of_the_wrong_type(build: Any, rtype: str, key: str, path: str,
                                         value: Any) -> None:
    with pytest.raises(InputError) as err:
        parse_document(build(rtype, {key: value}), "plan.json")
    (line,) = err.value.problems
    assert line.startswith(f"plan.json: {path}: expected an instance type name"), line


@pytest.mark.parametrize("value", BAD_SIZES, ids=lambda v: repr(v)[:16])
@pytest.mark.parametrize(
    ("build", "rtype", "key", "path"),
    [
        (_terraform, TF_ASG, "max_size", "resource_changes[0].change.after.max_size"),
        (_pulumi, PU_ASG, "maxSize", "steps[0].newState.inputs.maxSize"),
        (_offline, PU_ASG, "minSize", "resources[0].inputs.minSize"),
    ],
)
def test_group_sizes_must_be_whole_numbers(build: Any, rtype: str, key: str, path: str,
                                           value: Any) -> None:
    with pytest.raises(InputError) as err:
        parse_document(build(rtype, {key: value}), "plan.json")
    (line,) = err.value.problems
    assert line.startswith(f"plan.json: {path}: expected a whole number from 0 to "
                           "2,147,483,647"), line


def test_override_and_old_side_are_checked_too() -> None:
    doc = _terraform(TF_ASG, {"mixed_instances_policy": [{"launch_template": [{
        "override": [{"instance_type": "g4dn.xlarge"}, {"instance_type": 7}]}]}]})
    with pytest.raises(InputError, match=r"after\.mixed_instances_policy\[0\]\.launch_template"
                                         r"\[0\]\.override\[1\]\.instance_type: expected"):
        parse_document(doc, "plan.json")
    doc = _pulumi(PU_ASG, {"maxSize": 4})
    doc["steps"][0]["op"] = "update"
    doc["steps"][0]["oldState"] = {**doc["steps"][0]["newState"], "inputs": {
        "mixedInstancesPolicy": {"launchTemplate": {"overrides": [
            {"instanceType": "g5.xlarge", "weightedCapacity": "0"}]}}}}
    with pytest.raises(InputError, match=r"steps\[0\]\.oldState\.inputs\.mixedInstancesPolicy"
                                         r"\.launchTemplate\.overrides\[0\]\.weightedCapacity: "
                                         "expected a whole number from 1 to 999"):
        parse_document(doc, "plan.json")


@pytest.mark.parametrize("value", ["nan", "inf", 10**400, [60]], ids=lambda v: repr(v)[:16])
def test_scaling_target_must_be_finite(value: Any) -> None:
    doc = _terraform("aws_autoscaling_policy", {
        "target_tracking_configuration": [{"target_value": value}]})
    with pytest.raises(InputError, match=r"target_tracking_configuration\[0\]\.target_value: "
                                         "expected a finite number"):
        parse_document(doc, "plan.json")


def test_good_values_and_unknowns_pass() -> None:
    doc = _terraform(TF_ASG, {"min_size": 0, "max_size": 4.0, "desired_capacity": "2",
                              "mixed_instances_policy": [{"launch_template": [{
                                  "override": [{"instance_type": "g4dn.xlarge",
                                                "weighted_capacity": "2"}]}]}]})
    doc["resource_changes"][0]["change"]["after_unknown"] = {"max_size": True}
    (change,) = parse_document(doc, "plan.json").changes
    assert change.new["min_size"] == 0


# --- the report never holds NaN or Infinity -------------------------------------------------

_ANY_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
              st.sampled_from(["inf", "-inf", "nan", "1e999", "g4dn.xlarge", "g4dn.12xlarge"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)


def _strict(name: str) -> Any:
    raise AssertionError(f"{name} in a JSON report")


@settings(max_examples=60, deadline=None)
@given(max_size=_ANY_JSON, instance_type=_ANY_JSON, weight=_ANY_JSON, target=_ANY_JSON)
def test_any_value_is_bad_input_or_a_strict_json_report(
    max_size: Any, instance_type: Any, weight: Any, target: Any
) -> None:
    doc = {"format_version": "1.2", "resource_changes": [
        {"address": "aws_autoscaling_group.g", "mode": "managed", "type": TF_ASG, "name": "g",
         "change": {"actions": ["update"],
                    "before": {"max_size": 2, "mixed_instances_policy": [{"launch_template": [
                        {"override": [{"instance_type": "g4dn.xlarge"}]}]}]},
                    "after": {"max_size": max_size, "mixed_instances_policy": [
                        {"launch_template": [{"override": [
                            {"instance_type": instance_type, "weighted_capacity": weight}]}]}]}}},
        {"address": "aws_autoscaling_policy.p", "mode": "managed",
         "type": "aws_autoscaling_policy", "name": "p",
         "change": {"actions": ["create"], "before": None, "after": {
             "policy_type": "TargetTrackingScaling", "autoscaling_group_name": "g",
             "target_tracking_configuration": [{"target_value": target}]}}},
    ]}
    try:
        plan = parse_document(json.loads(json.dumps(doc)), "plan.json")
    except InputError as e:
        assert len(e.problems) == 1 and "plan.json: resource_changes[" in e.problems[0]
        return
    result = evaluate([plan], Settings.default())
    assert not result.errors, result.errors  # no rule crashed on what the source let through
    json.loads(render(result, "json"), parse_constant=_strict)


def test_cli_names_file_and_key_and_exits_2(write: Write) -> None:
    from gpupool.cli import main

    path = write(_terraform(TF_ASG, {"max_size": "inf"}), "plan.json")
    assert main(["check", str(path), "--format", "json"]) == 2
    with pytest.raises(InputError):
        load_plan(path)
