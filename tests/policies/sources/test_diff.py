"""Old and new inputs from two offline plans, diffed by URN."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpupool.errors import InputError
from policies.model import UNKNOWN, ChangeKind, get_path
from policies.sources.diff import diff_offline_plans
from policies.sources.pulumi_values import UNKNOWN_SENTINEL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gpupool"
BASE = json.loads((FIXTURES / "plan-dev-base.json").read_text(encoding="utf-8"))
HEAD = json.loads((FIXTURES / "plan-dev-head.json").read_text(encoding="utf-8"))


def test_diff_by_urn_gives_updates_no_ops_creates_and_deletes() -> None:
    plan = diff_offline_plans(BASE, HEAD, "stack dev @ base..head")
    assert plan.source == "gpupool-plan" and plan.origin == "stack dev @ base..head"
    assert [(c.name, c.change) for c in plan.changes] == [
        ("dev-inference-lt", ChangeKind.UPDATE),
        ("dev-inference-asg", ChangeKind.UPDATE),
        ("dev-inference-gpu-utilisation", ChangeKind.NOOP),
        ("dev-arm-inference-lt", ChangeKind.CREATE),
        ("dev-arm-inference-asg", ChangeKind.CREATE),
        ("dev-arm-inference-gpu-utilisation", ChangeKind.CREATE),
        ("dev-training-lt", ChangeKind.DELETE),
        ("dev-training-asg", ChangeKind.DELETE),
        ("dev-training-gpu-utilisation", ChangeKind.DELETE),
    ]
    by = {c.name: c for c in plan.changes}
    lt = by["dev-inference-lt"]
    assert (lt.old["instance_type"], lt.new["instance_type"]) == ("g4dn.xlarge", "g4dn.2xlarge")
    asg = by["dev-inference-asg"]
    path = "mixed_instances_policy.launch_template.overrides.instance_type"
    assert (get_path(asg.old, path), get_path(asg.new, path)) == ("g4dn.xlarge", "g4dn.2xlarge")
    assert (asg.old["max_size"], asg.new["max_size"]) == (4, 8)
    noop = by["dev-inference-gpu-utilisation"]
    assert noop.old == noop.new and noop.references["autoscaling_group_name"] == asg.address
    gone = by["dev-training-lt"]
    assert gone.new is None and gone.old["instance_type"] == "g5.xlarge"
    assert gone.parent == "urn:pulumi:dev::gpupool::gpupool:aws:GpuPool::dev-training"
    assert by["dev-arm-inference-lt"].old is None


def test_no_base_means_everything_is_created() -> None:
    plan = diff_offline_plans(None, HEAD, "stack dev")
    assert {c.change for c in plan.changes} == {ChangeKind.CREATE}
    assert len(plan.changes) == 6


def test_identical_plans_are_all_no_ops() -> None:
    plan = diff_offline_plans(BASE, copy.deepcopy(BASE), "same")
    assert {c.change for c in plan.changes} == {ChangeKind.NOOP}


def test_a_value_becoming_unknown_is_an_update() -> None:
    head = copy.deepcopy(BASE)
    head["resources"][2]["inputs"]["instanceType"] = UNKNOWN_SENTINEL
    plan = diff_offline_plans(BASE, head, "o")
    lt = plan.changes[0]
    assert lt.change is ChangeKind.UPDATE and lt.new["instance_type"] is UNKNOWN


@pytest.mark.parametrize(
    ("base", "head", "expected"),
    [
        ({"kind": "x"}, HEAD, 'o (base): kind: expected "gpupool-plan", got string "x"'),
        (BASE, [], "o (head): expected an object, got array"),
        (BASE, {**HEAD, "version": 9}, "o (head): version: expected 1"),
    ],
)
def test_bad_documents_are_input_errors_naming_the_side(
    base: object, head: object, expected: str
) -> None:
    with pytest.raises(InputError) as err:
        diff_offline_plans(base, head, "o")  # type: ignore[arg-type]
    assert err.value.problems[0].startswith(expected)
