"""Pulumi previews (pulumi preview --json) → normalised changes, from hand-written fixtures."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.errors import InputError
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceKind, get_path
from policies.sources import load_plan
from policies.sources.pulumi_values import SECRET_SIG, SIG_KEY, UNKNOWN_SENTINEL

Write = Callable[[Any, str], Path]
STAGING = "urn:pulumi:staging::gpupool::"


def _load(fixtures: Path, name: str) -> Plan:
    plan = load_plan(fixtures / "pulumi" / name)
    assert plan.source == "pulumi-preview"
    return plan


def test_upsize_preview(fixtures: Path) -> None:
    plan = _load(fixtures, "preview-upsize.json")
    by = {c.name: c for c in plan.changes}
    assert [c.type for c in plan.changes] == [  # the stack step is bookkeeping, not a change
        "aws:ec2/launchTemplate:LaunchTemplate", "aws:autoscaling/group:Group",
        "aws:ec2/instance:Instance"]
    component = "urn:pulumi:prod::gpupool::gpupool:aws:GpuPool::inference"
    lt = next(c for c in plan.changes if c.kind is ResourceKind.LAUNCH_TEMPLATE)
    assert lt.change is ChangeKind.UPDATE and lt.parent == component
    assert lt.address == ("urn:pulumi:prod::gpupool::gpupool:aws:GpuPool$"
                          "aws:ec2/launchTemplate:LaunchTemplate::inference")
    assert (lt.old["instance_type"], lt.new["instance_type"]) == ("g4dn.xlarge", "g4dn.2xlarge")
    assert get_path(lt.new, "metadata_options.http_tokens") == "required"  # camelCase → snake
    assert get_path(lt.new, "block_device_mappings.ebs.encrypted") == "true"
    assert lt.new["tags"] == {"cost-center": "cc-ml-1042", "environment": "prod",
                              "team": "ml-platform"}

    asg = next(c for c in plan.changes if c.kind is ResourceKind.AUTOSCALING_GROUP)
    path = "mixed_instances_policy.launch_template.overrides.instance_type"
    assert (get_path(asg.old, path), get_path(asg.new, path)) == ("g4dn.xlarge", "g4dn.2xlarge")
    assert asg.references == {"mixed_instances_policy": lt.address}

    inst = by["trainer"]
    assert inst.kind is ResourceKind.INSTANCE and inst.parent is None  # parented to the stack
    assert (inst.old["instance_type"], inst.new["instance_type"]) == ("g4dn.xlarge", "g4dn.2xlarge")
    assert plan.meta["change_summary"] == {"same": 14, "update": 3}


def test_mixed_preview_creates_replace_delete_unknowns_secrets_components(fixtures: Path) -> None:
    plan = _load(fixtures, "preview-mixed.json")
    kinds = {c.address.removeprefix(STAGING): c.change for c in plan.changes}
    assert kinds == {
        "gpupool:aws:GpuPool$aws:ec2/launchTemplate:LaunchTemplate::training": ChangeKind.CREATE,
        "gpupool:aws:GpuPool$aws:autoscaling/group:Group::training": ChangeKind.CREATE,
        "gpupool:aws:GpuPool$aws:autoscaling/policy:Policy::training-gpu-utilisation":
            ChangeKind.CREATE,
        "aws:ec2/instance:Instance::proxy": ChangeKind.REPLACE,  # three steps, one change
        "aws:ec2/securityGroup:SecurityGroup::old-ssh": ChangeKind.DELETE,
        "aws:ec2/vpc:Vpc::shared": ChangeKind.READ,
        "aws:ec2/placementGroup:PlacementGroup::proxies": ChangeKind.NOOP,
    }  # no stack, no provider, no component
    by = plan.by_address()
    component = f"{STAGING}gpupool:aws:GpuPool::training"
    lt = by[f"{STAGING}gpupool:aws:GpuPool$aws:ec2/launchTemplate:LaunchTemplate::training"]
    assert lt.parent == component and lt.old is None
    assert lt.new["user_data"] is UNKNOWN  # "[secret]": hidden, so unknown to a rule
    assert get_path(lt.new, "iam_instance_profile.arn") is UNKNOWN  # the unknown sentinel
    assert lt.new["instance_type"] == "g5.xlarge"

    group = f"{STAGING}gpupool:aws:GpuPool$aws:autoscaling/group:Group::training"
    policy = by[f"{STAGING}gpupool:aws:GpuPool$aws:autoscaling/policy:Policy::"
                "training-gpu-utilisation"]
    assert policy.kind is ResourceKind.SCALING_POLICY
    assert policy.new["autoscaling_group_name"] is UNKNOWN
    assert policy.references["autoscaling_group_name"] == group and group in by
    metric = "target_tracking_configuration.customized_metric_specification"
    assert get_path(policy.new, f"{metric}.metric_dimensions.value") is UNKNOWN
    assert get_path(policy.new, "target_tracking_configuration.target_value") == 70

    proxy = by[f"{STAGING}aws:ec2/instance:Instance::proxy"]
    assert proxy.old["ami"] == "ami-0123456789abcdef0"
    assert proxy.new["ami"] == "ami-0a5c3558529277641"
    assert proxy.new["user_data"] == "#!/bin/bash\nsystemctl enable --now gpu-proxy\n"  # plaintext
    assert proxy.old["user_data"] is UNKNOWN  # ciphertext only
    assert proxy.parent is None

    sg = by[f"{STAGING}aws:ec2/securityGroup:SecurityGroup::old-ssh"]
    assert sg.new is None and sg.old["ingress"][0]["cidr_blocks"] == ["0.0.0.0/0"]
    assert by[f"{STAGING}aws:ec2/vpc:Vpc::shared"].new == {}
    same = by[f"{STAGING}aws:ec2/placementGroup:PlacementGroup::proxies"]
    assert same.old == same.new and same.new["strategy"] == "cluster"


def test_empty_preview_has_no_changes(fixtures: Path) -> None:
    plan = _load(fixtures, "preview-empty.json")
    assert plan.changes == () and plan.meta["change_summary"] == {"same": 21}


# --- minimal documents --------------------------------------------------------------------

URN = "urn:pulumi:dev::proj::aws:ec2/launchTemplate:LaunchTemplate::lt"


def _state(inputs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"urn": URN, "custom": True, "type": "aws:ec2/launchTemplate:LaunchTemplate",
            "inputs": inputs, **extra}


def _step(op: str, old: dict[str, Any] | None = None, new: dict[str, Any] | None = None,
          urn: str = URN) -> dict[str, Any]:
    step: dict[str, Any] = {"op": op, "urn": urn}
    if old is not None:
        step["oldState"] = _state(old)
    if new is not None:
        step["newState"] = _state(new)
    return step


def _plan(write: Write, *steps: dict[str, Any], **top: Any) -> Plan:
    return load_plan(write({"steps": list(steps), **top}, "preview.json"))


OLD = {"instanceType": "g4dn.xlarge"}
NEW = {"instanceType": "g4dn.2xlarge"}


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        ("same", ChangeKind.NOOP), ("create", ChangeKind.CREATE), ("update", ChangeKind.UPDATE),
        ("delete", ChangeKind.DELETE), ("replace", ChangeKind.REPLACE),
        ("create-replacement", ChangeKind.REPLACE), ("delete-replaced", ChangeKind.DELETE),
        ("read", ChangeKind.READ), ("refresh", ChangeKind.READ), ("import", ChangeKind.NOOP),
        ("import-replacement", ChangeKind.REPLACE), ("discard", ChangeKind.READ),
    ],
)
def test_ops_map_to_change_kinds(write: Write, op: str, expected: ChangeKind) -> None:
    (change,) = _plan(write, _step(op, OLD, NEW)).changes
    assert change.change is expected
    new, old = {"instance_type": "g4dn.2xlarge"}, {"instance_type": "g4dn.xlarge"}
    assert change.new == (None if expected is ChangeKind.DELETE else new)
    assert change.old == (None if expected is ChangeKind.CREATE else old)


def test_delete_before_replace_order_counts_once(write: Write) -> None:
    plan = _plan(write, _step("delete-replaced", OLD), _step("replace", OLD, NEW),
                 _step("create-replacement", OLD, NEW))
    (change,) = plan.changes
    assert change.change is ChangeKind.REPLACE
    assert (change.old, change.new) == ({"instance_type": "g4dn.xlarge"},
                                        {"instance_type": "g4dn.2xlarge"})


def test_refresh_then_delete_keeps_no_new_inputs(write: Write) -> None:
    (change,) = _plan(write, _step("refresh", OLD, OLD), _step("delete", OLD)).changes
    assert change.change is ChangeKind.DELETE and change.new is None


def test_type_and_name_come_from_the_urn_when_states_lack_them(write: Write) -> None:
    step = {"op": "create", "urn": URN, "newState": {"inputs": {"instanceType": "g5.xlarge"}}}
    (change,) = _plan(write, step).changes
    assert (change.type, change.name, change.kind) == (
        "aws:ec2/launchTemplate:LaunchTemplate", "lt", ResourceKind.LAUNCH_TEMPLATE)


def test_property_dependencies_on_several_resources_give_no_link(write: Write) -> None:
    a = "urn:pulumi:dev::proj::aws:autoscaling/group:Group::a"
    b = "urn:pulumi:dev::proj::aws:autoscaling/group:Group::b"
    provider = "urn:pulumi:dev::proj::pulumi:providers:aws::default"
    step = _step("create", new={"autoscalingGroupName": UNKNOWN_SENTINEL, "x": 1, "y": 2})
    step["newState"]["propertyDependencies"] = {
        "autoscalingGroupName": [a, provider], "x": [a, b], "y": []}
    (change,) = _plan(write, step).changes
    assert change.references == {"autoscaling_group_name": a}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({SIG_KEY: SECRET_SIG, "plaintext": '{"httpTokens": "required"}'},
         {"http_tokens": "required"}),
        ({SIG_KEY: SECRET_SIG, "plaintext": "not json"}, "not json"),
        ({SIG_KEY: SECRET_SIG, "ciphertext": "v1:abc"}, UNKNOWN),
        ({SIG_KEY: "d0e6a833031e9bbcd3f4e8bde6ca49a4", "value": "g5.xlarge"}, "g5.xlarge"),
        ({SIG_KEY: "d0e6a833031e9bbcd3f4e8bde6ca49a4", "secret": True}, UNKNOWN),
        ({SIG_KEY: "5cf8f73096256a8f31e491e813e4eb8e", "urn": URN, "id": "lt-1"}, "lt-1"),
        ({SIG_KEY: "5cf8f73096256a8f31e491e813e4eb8e", "urn": URN, "id": ""}, URN),
        (["[secret]", UNKNOWN_SENTINEL, "x"], [UNKNOWN, UNKNOWN, "x"]),
    ],
)
def test_pulumi_value_markers(write: Write, value: Any, expected: Any) -> None:
    (change,) = _plan(write, _step("create", new={"value": value})).changes
    assert change.new == {"value": expected}


def test_secret_tag_values_are_unknown_but_keys_stay_verbatim(write: Write) -> None:
    (change,) = _plan(write, _step("create", new={"tags": {"cost-center": "[secret]"}})).changes
    assert change.new == {"tags": {"cost-center": UNKNOWN}}


def test_a_failed_preview_is_refused(write: Write) -> None:
    diag = [{"message": "warning only", "severity": "warning"},
            {"message": "error: program failed\nstack trace", "severity": "error"}]
    with pytest.raises(InputError) as err:
        _plan(write, _step("create", new=NEW), diagnostics=diag)
    (line,) = err.value.problems
    assert "diagnostics[1]: expected a preview that completed, got an error " \
           "(error: program failed)" in line


def _base() -> dict[str, Any]:
    step = _step("update", OLD, NEW)
    step["newState"]["parent"] = "urn:pulumi:dev::proj::gpupool:aws:GpuPool::p"
    step["newState"]["propertyDependencies"] = {"instanceType": []}
    return {"steps": [step], "changeSummary": {"update": 1}}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return apply


S = "steps/0"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (_set("steps", {}), "steps: expected an array, got object"),
        (_set(S, 1), "steps[0]: expected an object, got 1"),
        (_set(f"{S}/op", "explode"), 'steps[0].op: expected a Pulumi step op'),
        (_set(f"{S}/op", None), "steps[0].op: expected a Pulumi step op"),
        (_set(f"{S}/urn", 7), "steps[0].urn: expected a string, got 7"),
        (_set(f"{S}/urn", "arn:aws:x"), 'steps[0].urn: expected a Pulumi URN'),
        (_set(f"{S}/oldState", []), "steps[0].oldState: expected an object or null, got array"),
        (_set(f"{S}/newState", "x"), "steps[0].newState: expected an object or null"),
        (_set(f"{S}/newState", None),
         "steps[0].newState: expected an object with the new inputs of this update, got null"),
        (_set(f"{S}/newState/type", 1), "steps[0].newState.type: expected a string, got 1"),
        (_set(f"{S}/newState/custom", "yes"), 'steps[0].newState.custom: expected a boolean'),
        (_set(f"{S}/newState/inputs", []), "steps[0].newState.inputs: expected an object"),
        (_set(f"{S}/oldState/inputs", 3), "steps[0].oldState.inputs: expected an object, got 3"),
        (_set(f"{S}/newState/parent", "p"), "steps[0].newState.parent: expected a Pulumi URN"),
        (_set(f"{S}/newState/propertyDependencies", []),
         "steps[0].newState.propertyDependencies: expected an object"),
        (_set(f"{S}/newState/propertyDependencies/instanceType", "u"),
         "steps[0].newState.propertyDependencies.instanceType: expected an array"),
        (_set(f"{S}/newState/propertyDependencies/instanceType", [1]),
         "steps[0].newState.propertyDependencies.instanceType[0]: expected a string, got 1"),
        (_set("diagnostics", {}), "diagnostics: expected an array, got object"),
        (_set("diagnostics", [3]), "diagnostics[0]: expected an object, got 3"),
    ],
)
def test_errors_name_file_key_and_expectation(
    write: Write, mutate: Callable[[dict[str, Any]], None], expected: str
) -> None:
    doc = copy.deepcopy(_base())
    mutate(doc)
    path = write(doc, "preview.json")
    with pytest.raises(InputError) as err:
        load_plan(path)
    (line,) = err.value.problems
    assert line.startswith(f"{path}: ") and "\n" not in line
    assert expected in line, line


def test_base_document_is_valid(write: Write) -> None:
    (change,) = load_plan(write(_base(), "preview.json")).changes
    assert change.parent == "urn:pulumi:dev::proj::gpupool:aws:GpuPool::p"
