"""Terraform plans (terraform show -json) → normalised changes, from hand-written fixtures."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.errors import InputError
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceKind, get_path
from policies.sources import load_plan

Write = Callable[[Any, str], Path]


def _load(fixtures: Path, name: str) -> Plan:
    plan = load_plan(fixtures / "terraform" / name)
    assert plan.source == "terraform"
    return plan


def test_upsize_on_instance_launch_template_and_asg_overrides(fixtures: Path) -> None:
    plan = _load(fixtures, "upsize-g4dn.json")
    by = plan.by_address()
    assert list(by) == [
        "aws_instance.trainer", "aws_launch_template.gpu", "aws_autoscaling_group.gpu"]

    inst = by["aws_instance.trainer"]
    assert (inst.change, inst.kind, inst.type, inst.name) == (
        ChangeKind.UPDATE, ResourceKind.INSTANCE, "aws_instance", "trainer")
    assert (inst.old["instance_type"], inst.new["instance_type"]) == ("g4dn.xlarge", "g4dn.2xlarge")
    assert inst.old["public_ip"] == "54.210.17.4"
    assert inst.new["public_ip"] is UNKNOWN  # computed again after the resize
    assert get_path(inst.new, "metadata_options.http_tokens") == "required"
    assert get_path(inst.new, "root_block_device.encrypted") is True
    assert inst.new["tags"]["cost-center"] == "cc-ml-2001"  # tag keys are user data, verbatim

    lt = by["aws_launch_template.gpu"]
    assert lt.kind is ResourceKind.LAUNCH_TEMPLATE
    assert (lt.old["instance_type"], lt.new["instance_type"]) == ("g4dn.xlarge", "g4dn.2xlarge")
    assert (lt.old["latest_version"], lt.new["latest_version"]) == (3, UNKNOWN)

    asg = by["aws_autoscaling_group.gpu"]
    assert asg.kind is ResourceKind.AUTOSCALING_GROUP
    overrides = "mixed_instances_policy.launch_template.override"
    old_types = [o["instance_type"] for o in get_path(asg.old, overrides)]
    new_types = [o["instance_type"] for o in get_path(asg.new, overrides)]
    assert (old_types, new_types) == (["g4dn.xlarge", "g5.xlarge"], ["g4dn.2xlarge", "g5.xlarge"])
    spec = "mixed_instances_policy.launch_template.launch_template_specification"
    assert get_path(asg.new, f"{spec}.version") is UNKNOWN  # unknown inside nested blocks
    assert get_path(asg.old, f"{spec}.version") == "3"
    assert asg.references[f"{spec}.launch_template_id"] == "aws_launch_template.gpu"
    assert plan.meta == {"format_version": "1.2", "terraform_version": "1.7.5",
                         "region": "us-east-1"}  # the aws provider's, priced for it


def test_scaling_policy_with_unknown_group_name_is_linked_to_its_group(fixtures: Path) -> None:
    plan = _load(fixtures, "gpu-pool-unknown-asg-name.json")
    by = plan.by_address()
    policy = by["aws_autoscaling_policy.gpu_utilisation"]
    assert policy.kind is ResourceKind.SCALING_POLICY and policy.change is ChangeKind.CREATE
    assert policy.old is None
    assert policy.new["autoscaling_group_name"] is UNKNOWN
    assert policy.references["autoscaling_group_name"] == "aws_autoscaling_group.gpu"
    group = by[policy.references["autoscaling_group_name"]]
    assert group.kind is ResourceKind.AUTOSCALING_GROUP and group.new["name"] is UNKNOWN

    ttc = "target_tracking_configuration"
    assert get_path(policy.new, f"{ttc}.target_value") == 60
    metric = f"{ttc}.customized_metric_specification"
    assert get_path(policy.new, f"{metric}.metric_name") == "nvidia_smi_utilization_gpu"
    assert get_path(policy.new, f"{metric}.metric_dimension.name") == "AutoScalingGroupName"
    assert get_path(policy.new, f"{metric}.metric_dimension.value") is UNKNOWN
    assert policy.references[f"{metric}.metric_dimension.value"] == "aws_autoscaling_group.gpu"
    # true flags for a whole nested block make the block UNKNOWN, not absent
    override = get_path(group.new, "mixed_instances_policy.launch_template.override")
    assert override["instance_type"] == "g4dn.xlarge"
    assert override["instance_requirements"] is UNKNOWN


def test_modules_count_and_for_each(fixtures: Path) -> None:
    plan = _load(fixtures, "modules-count-foreach.json")
    by = plan.by_address()
    assert len(plan.changes) == 17
    assert all(c.change is ChangeKind.CREATE and c.old is None for c in plan.changes)
    pool = 'module.gpu_pool["inference"]'
    assert by[f"{pool}.aws_launch_template.this"].new["instance_type"] == "g4dn.xlarge"
    assert by['module.gpu_pool["training"].aws_launch_template.this'].new["instance_type"] == (
        "g5.xlarge")
    assert {c.name for c in plan.changes if c.type == "aws_instance"} == {"worker", "proxy"}

    refs = {a: dict(c.references) for a, c in by.items()}
    # within a for_each module instance: the same instance's group
    assert refs[f"{pool}.aws_autoscaling_policy.gpu_utilisation"]["autoscaling_group_name"] == (
        f"{pool}.aws_autoscaling_group.this")
    assert refs['module.gpu_pool["training"].aws_autoscaling_policy.gpu_utilisation'][
        "autoscaling_group_name"] == 'module.gpu_pool["training"].aws_autoscaling_group.this'
    # var.asg_name in a nested module → the caller's argument, in the caller's instance
    assert refs[f"{pool}.module.alarms.aws_cloudwatch_metric_alarm.low_utilisation"] == {
        "dimensions": f"{pool}.aws_autoscaling_group.this"}
    # module output at the root → the resource behind the output
    assert refs["aws_autoscaling_schedule.inference_nightly"] == {
        "autoscaling_group_name": f"{pool}.aws_autoscaling_group.this"}
    # count and for_each: the target instance with the referring resource's own key
    assert refs["aws_cloudwatch_metric_alarm.worker_idle[1]"] == {
        "dimensions": "aws_instance.worker[1]"}
    assert refs['aws_instance.proxy["us-east-1b"]'] == {
        "placement_group": 'aws_placement_group.proxy["us-east-1b"]'}
    # unknowns inside maps and lists of blocks
    alarm = by["aws_cloudwatch_metric_alarm.worker_idle[0]"]
    assert alarm.new["dimensions"] == {"InstanceId": UNKNOWN}
    worker = by["aws_instance.worker[0]"]
    assert worker.new["tags_all"] is UNKNOWN
    assert get_path(worker.new, "metadata_options.http_tokens") == "required"
    assert get_path(worker.new, "metadata_options.http_endpoint") is UNKNOWN


def test_replace_delete_no_op_and_data_sources(fixtures: Path) -> None:
    plan = _load(fixtures, "replace-delete-data.json")
    by = plan.by_address()
    kinds = {a: c.change for a, c in by.items()}
    assert kinds == {
        "data.aws_ssm_parameter.gpu_ami": ChangeKind.READ,
        "aws_instance.legacy": ChangeKind.REPLACE,  # ["delete", "create"]
        "aws_launch_template.blue": ChangeKind.REPLACE,  # ["create", "delete"]
        "aws_launch_template.blue (deposed object 6f1e9a2c)": ChangeKind.DELETE,
        "aws_security_group.old_ssh": ChangeKind.DELETE,
        "module.legacy.aws_launch_configuration.gpu": ChangeKind.DELETE,
        "aws_placement_group.proxies": ChangeKind.NOOP,
    }
    ami = by["data.aws_ssm_parameter.gpu_ami"]
    assert ami.new["value"] is UNKNOWN and ami.old is None

    legacy = by["aws_instance.legacy"]
    assert legacy.old["ami"] == "ami-0123456789abcdef0" and legacy.new["ami"] is UNKNOWN
    assert get_path(legacy.old, "metadata_options.http_tokens") == "optional"
    assert get_path(legacy.new, "metadata_options.http_tokens") == "required"
    assert legacy.references == {"ami": "data.aws_ssm_parameter.gpu_ami",
                                 "placement_group": "aws_placement_group.proxies"}

    deposed = by["aws_launch_template.blue (deposed object 6f1e9a2c)"]
    assert deposed.new is None and deposed.old["id"] == "lt-0ccc3333dddd4444e"
    assert by["aws_launch_template.blue"].old["id"] == "lt-0aaa1111bbbb2222c"

    sg = by["aws_security_group.old_ssh"]
    assert sg.new is None and sg.is_removal
    assert sg.old["ingress"][0]["cidr_blocks"] == ["0.0.0.0/0"]
    lc = by["module.legacy.aws_launch_configuration.gpu"]
    assert lc.kind is ResourceKind.LAUNCH_CONFIGURATION and lc.old["instance_type"] == "p3.2xlarge"
    noop = by["aws_placement_group.proxies"]
    assert noop.old == noop.new == {
        "id": "gpu-proxies", "name": "gpu-proxies", "strategy": "cluster"}


def test_format_0_1_and_empty_plan(fixtures: Path) -> None:
    old = _load(fixtures, "format-0.1.json")
    assert old.meta["format_version"] == "0.1"
    lt = old.by_address()["module.pool.aws_launch_template.gpu"]
    assert (lt.old["instance_type"], lt.new["instance_type"]) == ("g4dn.xlarge", "g4dn.4xlarge")
    inst = old.by_address()["aws_instance.gpu"]
    # a whole block unknown in the plan, but its configuration does not declare it: not set
    assert "metadata_options" not in inst.new
    assert get_path(inst.new, "root_block_device.volume_size") is UNKNOWN

    empty = _load(fixtures, "empty-plan.json")
    assert empty.changes == () and empty.meta["format_version"] == "1.2"


# --- minimal documents for the edge cases ---------------------------------------------------


def _rc(address: str, actions: list[str], *, before: Any = None, after: Any = None,
        unknown: Any = None, mode: str = "managed", module: str | None = None) -> dict[str, Any]:
    unkeyed = address[: address.rfind("[")] if address.endswith("]") else address
    rtype, name = unkeyed.split(".")[-2:]
    rc: dict[str, Any] = {"address": address, "mode": mode, "type": rtype, "name": name,
                          "change": {"actions": actions, "before": before, "after": after,
                                     "after_unknown": {} if unknown is None else unknown}}
    if module:
        rc["module_address"] = module
    return rc


def _doc(*changes: dict[str, Any], root: dict[str, Any] | None = None,
         version: Any = "1.2") -> dict[str, Any]:
    doc: dict[str, Any] = {"format_version": version, "planned_values": {},
                           "resource_changes": list(changes)}
    if root is not None:
        doc["configuration"] = {"root_module": root}
    return doc


def _cfg(address: str, expressions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    rtype, name = address.split(".")
    return {"address": address, "mode": "managed", "type": rtype, "name": name,
            "expressions": expressions, **extra}


def _ref(*refs: str) -> dict[str, Any]:
    return {"references": list(refs)}


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        (["no-op"], ChangeKind.NOOP),
        (["create"], ChangeKind.CREATE),
        (["read"], ChangeKind.READ),
        (["update"], ChangeKind.UPDATE),
        (["delete", "create"], ChangeKind.REPLACE),
        (["create", "delete"], ChangeKind.REPLACE),
        (["delete"], ChangeKind.DELETE),
        (["forget"], ChangeKind.DELETE),
    ],
)
def test_actions_map_to_change_kinds(
    write: Write, actions: list[str], expected: ChangeKind
) -> None:
    before = None if actions == ["create"] else {"instance_type": "g4dn.xlarge"}
    after = None if expected is ChangeKind.DELETE else {"instance_type": "g4dn.2xlarge"}
    plan = load_plan(write(_doc(_rc("aws_instance.a", actions, before=before, after=after)),
                           "plan.json"))
    (change,) = plan.changes
    assert change.change is expected
    assert change.new == (None if expected is ChangeKind.DELETE else after)
    assert change.old == (None if expected is ChangeKind.CREATE else before)


def test_unknown_merge_reaches_list_elements_and_keeps_known_ones(write: Write) -> None:
    after = {"list": ["a", None, "c"], "blocks": [{"x": 1}, {"x": 2}], "scalar": 5}
    unknown = {"list": [False, True, False], "blocks": [{}, {"y": True}], "extra": [True],
               "gone": {"deep": True}}
    plan = load_plan(write(_doc(_rc("aws_instance.a", ["create"], after=after, unknown=unknown)),
                           "plan.json"))
    new = plan.changes[0].new
    assert new == {"list": ["a", UNKNOWN, "c"], "blocks": [{"x": 1}, {"x": 2, "y": UNKNOWN}],
                   "scalar": 5, "extra": [UNKNOWN], "gone": {"deep": UNKNOWN}}


def test_data_source_wholly_unknown_is_read_with_no_inputs(write: Write) -> None:
    rc = _rc("data.aws_ami.gpu", ["read"], unknown=True, mode="data")
    (change,) = load_plan(write(_doc(rc), "plan.json")).changes
    assert (change.change, change.new, change.address) == (ChangeKind.READ, {}, "data.aws_ami.gpu")


def test_module_address_is_derived_when_absent(write: Write) -> None:
    policy = _rc('module.p["a"].aws_autoscaling_policy.s', ["create"], after={})
    group = _rc('module.p["a"].aws_autoscaling_group.g', ["create"], after={})
    root = {"module_calls": {"p": {"module": {"resources": [
        _cfg("aws_autoscaling_policy.s", {"autoscaling_group_name": _ref(
            "aws_autoscaling_group.g.name", "aws_autoscaling_group.g")}),
        _cfg("aws_autoscaling_group.g", {})]}}}}
    plan = load_plan(write(_doc(policy, group, root=root), "plan.json"))
    assert plan.changes[0].references == {
        "autoscaling_group_name": 'module.p["a"].aws_autoscaling_group.g'}


def _refs_of(write: Write, changes: list[dict[str, Any]], root: dict[str, Any],
             address: str) -> dict[str, str]:
    plan = load_plan(write(_doc(*changes, root=root), "plan.json"))
    return dict(plan.by_address()[address].references)


def test_reference_to_two_resources_gives_no_link(write: Write) -> None:
    changes = [_rc("aws_autoscaling_policy.p", ["create"], after={}),
               _rc("aws_autoscaling_group.a", ["create"], after={}),
               _rc("aws_autoscaling_group.b", ["create"], after={})]
    root = {"resources": [_cfg("aws_autoscaling_policy.p", {"autoscaling_group_name": _ref(
        "aws_autoscaling_group.a.name", "aws_autoscaling_group.a",
        "aws_autoscaling_group.b.name", "aws_autoscaling_group.b")})]}
    assert _refs_of(write, changes, root, "aws_autoscaling_policy.p") == {}


def test_count_targets_explicit_index_single_instance_and_ambiguous(write: Write) -> None:
    changes = [
        _rc("aws_instance.w[0]", ["create"], after={}),
        _rc("aws_instance.w[1]", ["create"], after={}),
        _rc("aws_placement_group.one[0]", ["create"], after={}),
        _rc("aws_cloudwatch_metric_alarm.a", ["create"], after={}),
    ]
    root = {"resources": [_cfg("aws_cloudwatch_metric_alarm.a", {
        "explicit": _ref("aws_instance.w[1].id", "aws_instance.w[1]", "aws_instance.w"),
        "splat": _ref("aws_instance.w"),  # all instances, from a resource without a key
        "single": _ref("aws_placement_group.one"),
        "absent": _ref("aws_iam_role.not_in_plan.arn", "aws_iam_role.not_in_plan"),
        "ignored": _ref("local.x", "var.y", "count.index", "each.key", "path.module"),
        "nested": [{"block": _ref("aws_instance.w[0]")}, {"block": _ref("aws_instance.w[1]")}],
    })]}
    assert _refs_of(write, changes, root, "aws_cloudwatch_metric_alarm.a") == {
        "explicit": "aws_instance.w[1]",
        "splat": "aws_instance.w",
        "single": "aws_placement_group.one[0]",
        "absent": "aws_iam_role.not_in_plan",
        "nested[0].block": "aws_instance.w[0]",
        "nested[1].block": "aws_instance.w[1]",
    }


def test_module_output_of_a_repeated_module_without_key_stays_ambiguous(write: Write) -> None:
    changes = [_rc('module.m["a"].aws_autoscaling_group.g', ["create"], after={},
                   module='module.m["a"]'),
               _rc('module.m["b"].aws_autoscaling_group.g', ["create"], after={},
                   module='module.m["b"]'),
               _rc("aws_autoscaling_schedule.s", ["create"], after={})]
    root = {
        "resources": [_cfg("aws_autoscaling_schedule.s", {
            "any": _ref("module.m", ),
            "all": _ref("module.m.name"),
            "one": _ref('module.m["b"].name', 'module.m["b"]')})],
        "module_calls": {"m": {"for_each_expression": _ref("var.x"), "module": {
            "outputs": {"name": {"expression": _ref("aws_autoscaling_group.g.name",
                                                    "aws_autoscaling_group.g")}},
            "resources": [_cfg("aws_autoscaling_group.g", {})]}}},
    }
    assert _refs_of(write, changes, root, "aws_autoscaling_schedule.s") == {
        "all": "module.m.aws_autoscaling_group.g",
        "one": 'module.m["b"].aws_autoscaling_group.g',
    }


def test_reference_cycles_through_modules_end_without_a_link(write: Write) -> None:
    changes = [_rc("module.m.aws_autoscaling_policy.p", ["create"], after={}, module="module.m")]
    root = {"module_calls": {"m": {
        "expressions": {"x": _ref("module.m.out")},
        "module": {"outputs": {"out": {"expression": _ref("var.x")}},
                   "resources": [_cfg("aws_autoscaling_policy.p", {"name": _ref("var.x")})]},
    }}}
    assert _refs_of(write, changes, root, "module.m.aws_autoscaling_policy.p") == {}


# --- every error path: one line naming the file, the key and what was expected ---------------


def _base() -> dict[str, Any]:
    return _doc(_rc("aws_instance.gpu", ["create"], after={"instance_type": "g4dn.xlarge"}),
                root={"resources": [_cfg("aws_instance.gpu", {})]})


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if value is _DELETE:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return apply


_DELETE = object()
RC = "resource_changes/0"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (_set("format_version", 2),
         'format_version: expected the plan format version `terraform show -json` writes '
         '(such as "1.2"), got 2'),
        (_set("format_version", "2.0"), 'format_version: expected major version 0 or 1'),
        (_set("format_version", "one"), 'format_version: expected a version like "1.2"'),
        (_set("format_version", "1.²"), 'format_version: expected a version like "1.2"'),
        (_set("errored", True), "errored: expected a complete plan"),
        (_set("resource_changes", {}), "resource_changes: expected an array, got object"),
        (_set(RC, "x"), 'resource_changes[0]: expected an object, got string "x"'),
        (_set(f"{RC}/address", _DELETE),
         "resource_changes[0].address: expected a string, got null"),
        (_set(f"{RC}/mode", "manged"), 'resource_changes[0].mode: expected "managed" or "data"'),
        (_set(f"{RC}/type", 5), "resource_changes[0].type: expected a string, got 5"),
        (_set(f"{RC}/name", None), "resource_changes[0].name: expected a string, got null"),
        (_set(f"{RC}/module_address", 3), "resource_changes[0].module_address: expected a string"),
        (_set(f"{RC}/module_address", "modul.x"),
         "resource_changes[0].module_address: expected a module address like module.NAME"),
        (_set(f"{RC}/address", "aws_instance.other"),
         "resource_changes[0].address: expected aws_instance.gpu or aws_instance.gpu[KEY]"),
        (_set(f"{RC}/address", "aws_instance.gpu0"), "resource_changes[0].address: expected"),
        (_set(f"{RC}/deposed", 1), "resource_changes[0].deposed: expected a string, got 1"),
        (_set(f"{RC}/change", None), "resource_changes[0].change: expected an object, got null"),
        (_set(f"{RC}/change/actions", ["explode"]),
         'resource_changes[0].change.actions: expected one of ["no-op"]'),
        (_set(f"{RC}/change/actions", "create"),
         'resource_changes[0].change.actions: expected one of ["no-op"], ["create"]'),
        (_set(f"{RC}/change/actions", [{}]), "resource_changes[0].change.actions: expected one of"),
        (_set(f"{RC}/change/before", []),
         "resource_changes[0].change.before: expected an object or null, got array"),
        (_set(f"{RC}/change/after", "x"),
         'resource_changes[0].change.after: expected an object or null, got string "x"'),
        (_set(f"{RC}/change/after", None),
         "resource_changes[0].change.after: expected an object for create, got null"),
        (_set(f"{RC}/change/after_unknown", []),
         "resource_changes[0].change.after_unknown: expected an object or boolean, got array"),
        (_set(f"{RC}/change/after_unknown", True),
         "resource_changes[0].change.after_unknown: expected an object (a planned resource "
         "cannot be wholly unknown)"),
        (_set("configuration", []), "configuration: expected an object, got array"),
        (_set("configuration/root_module/resources", {}),
         "configuration.root_module.resources: expected an array"),
        (_set("configuration/root_module/resources/0/type", None),
         "configuration.root_module.resources[0].type: expected a string, got null"),
        (_set("configuration/root_module/resources/0/mode", "x"),
         'configuration.root_module.resources[0].mode: expected "managed" or "data"'),
        (_set("configuration/root_module/resources/0/expressions", []),
         "configuration.root_module.resources[0].expressions: expected an object"),
        (_set("configuration/root_module/module_calls", []),
         "configuration.root_module.module_calls: expected an object"),
        (_set("configuration/root_module/module_calls", {"m": {"module": 1}}),
         "configuration.root_module.module_calls.m.module: expected an object, got 1"),
        (_set("configuration/root_module/outputs", {"o": []}),
         "configuration.root_module.outputs.o: expected an object, got array"),
    ],
)
def test_errors_name_file_key_and_expectation(
    write: Write, mutate: Callable[[dict[str, Any]], None], expected: str
) -> None:
    doc = copy.deepcopy(_base())
    mutate(doc)
    path = write(doc, "tf-plan.json")
    with pytest.raises(InputError) as err:
        load_plan(path)
    (line,) = err.value.problems
    assert line.startswith(f"{path}: ") and "\n" not in line
    assert expected in line, line


def test_base_document_is_valid(write: Write) -> None:
    (change,) = load_plan(write(_base(), "plan.json")).changes
    assert change.new == {"instance_type": "g4dn.xlarge"}
