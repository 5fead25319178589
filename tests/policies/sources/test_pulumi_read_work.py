"""The Pulumi preview reader's work per resource, counted: URNs parsed, places formatted.

A preview names the same few URNs in many resources (every child of a component has its
parent; scaling policies depend on their group): each is parsed once, and the key paths error
messages name are made only for a value that is refused. The figures are in the speed report;
here what they rest on is counted, and a bad value after a good one is still refused.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpupool.errors import InputError
from policies.sources import load_plan, pulumi_preview, pulumi_values

Write = Callable[[Any, str], Path]
STACK = "urn:pulumi:dev::proj::"
POOL = f"{STACK}gpupool:index:GpuPool::pool"
ASG = f"{STACK}gpupool:index:GpuPool$aws:autoscaling/group:Group::asg"
PROVIDER = f"{STACK}pulumi:providers:aws::default"


def _policy(i: int) -> dict[str, Any]:
    urn = f"{STACK}gpupool:index:GpuPool$aws:autoscaling/policy:Policy::scale-{i}"
    return {"op": "create", "urn": urn, "newState": {
        "urn": urn, "custom": True, "type": "aws:autoscaling/policy:Policy",
        "inputs": {"autoscalingGroupName": "asg", "policyType": "TargetTrackingScaling"},
        "parent": POOL,
        "propertyDependencies": {"autoscalingGroupName": [ASG], "provider": [PROVIDER],
                                 "policyType": None, "name": []}}}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The URNs pulumi_values parses (urn_type_name), with its caches empty to start."""
    monkeypatch.setattr(pulumi_values, "_PARENTS", {}, raising=False)
    monkeypatch.setattr(pulumi_values, "_LINKABLE", {}, raising=False)
    parsed: list[str] = []
    real = pulumi_values.urn_type_name

    def urn_type_name(urn: str) -> tuple[str, str] | None:
        parsed.append(urn)
        return real(urn)

    monkeypatch.setattr(pulumi_values, "urn_type_name", urn_type_name)
    monkeypatch.setattr(pulumi_preview, "urn_type_name", urn_type_name)  # each step's own
    yield parsed


def test_shared_parents_and_dependencies_are_parsed_once(write: Write,
                                                         counted: list[str]) -> None:
    plan = load_plan(write({"steps": [_policy(i) for i in range(50)]}, "preview.json"))
    assert len(plan.changes) == 50
    assert {c.parent for c in plan.changes} == {POOL}
    assert {tuple(c.references.items()) for c in plan.changes} == {
        (("autoscaling_group_name", ASG),)}  # the provider is no link
    steps = [c.address for c in plan.changes]
    assert sorted(counted) == sorted([*steps, POOL, ASG, PROVIDER])  # main: 50 of each shared


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    steps = [_policy(0), _policy(1)]
    node: Any = steps[1]["newState"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return {"steps": steps}


@pytest.mark.parametrize(("path", "value", "expected"), [
    (["parent"], 5, "steps[1].newState.parent: expected a string, got 5"),
    (["parent"], "pool", 'steps[1].newState.parent: expected a Pulumi URN'),
    (["parent"], [POOL], "steps[1].newState.parent: expected a string, got array"),
    (["propertyDependencies", "autoscalingGroupName"], [ASG, 3],
     "steps[1].newState.propertyDependencies.autoscalingGroupName[1]: expected a string, got 3"),
    (["propertyDependencies", "autoscalingGroupName"], [[ASG]],
     "steps[1].newState.propertyDependencies.autoscalingGroupName[0]: expected a string"),
    (["propertyDependencies"], [], "steps[1].newState.propertyDependencies: expected an object"),
    (["propertyDependencies"], 0, "steps[1].newState.propertyDependencies: expected an object"),
    (["propertyDependencies"], "", "steps[1].newState.propertyDependencies: expected an object"),
    (["propertyDependencies"], [ASG], "steps[1].newState.propertyDependencies: expected an obj"),
    (["propertyDependencies"], "x", "steps[1].newState.propertyDependencies: expected an object"),
    (["propertyDependencies", "name"], 5,
     "steps[1].newState.propertyDependencies.name: expected an array of URNs or null, got 5"),
    (["inputs"], [], "steps[1].newState.inputs: expected an object, got array"),
    (["type"], None, "steps[1].newState.type: expected a string, got null"),
])
def test_a_bad_value_after_a_good_one_is_refused(write: Write, counted: list[str],
                                                 path: list[Any], value: Any,
                                                 expected: str) -> None:
    doc = _with(path, copy.deepcopy(value))
    target = write(doc, "preview.json")
    with pytest.raises(InputError) as err:
        load_plan(target)
    (line,) = err.value.problems
    assert line.startswith(f"{target}: ") and "\n" not in line
    assert expected in line, line


def test_empty_dependencies_and_no_parent_read_as_none(write: Write) -> None:
    doc = _with(["propertyDependencies"], {})
    del doc["steps"][1]["newState"]["parent"]
    first, second = load_plan(write(doc, "preview.json")).changes
    assert second.references == {} and second.parent is None
    assert first.parent == POOL


@pytest.mark.parametrize(("state", "expected"), [
    (5, "steps[1].oldState: expected an object or null, got 5"),
    ({"type": 5}, "steps[1].oldState.type: expected a string, got 5"),
    ({"custom": "yes"}, "steps[1].oldState.custom: expected a boolean"),
])
def test_a_bad_old_state_is_refused(write: Write, state: Any, expected: str) -> None:
    doc = _with(["custom"], True)
    doc["steps"][1]["op"] = "update"
    doc["steps"][1]["oldState"] = state
    target = write(doc, "preview.json")
    with pytest.raises(InputError) as err:
        load_plan(target)
    (line,) = err.value.problems
    assert line == f"{target}: {expected}" or (line.startswith(f"{target}: {expected}")
                                                 and "\n" not in line), line


class _Place(str):
    """A step's place that counts the messages' places made from it."""

    made = 0

    def __format__(self, spec: str) -> str:
        _Place.made += 1
        return str.__format__(self, spec)


def test_a_create_makes_the_place_of_its_new_state_only() -> None:
    _Place.made = 0
    steps = [pulumi_preview.Step(_policy(i), _Place(f"steps[{i}]")) for i in range(20)]
    plan = pulumi_preview.plan_of_steps(steps, "preview.json", None, defer=True)
    assert len(plan.changes) == 20
    assert _Place.made == 20  # main: 40, the old states' places too


def test_typed_inputs_are_checked_once_per_side_that_has_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[Any] = []
    real = pulumi_preview.fields.check

    def check(kind: Any, inputs: Any, origin: str, where: Any) -> None:
        checked.append(inputs)
        real(kind, inputs, origin, where)

    monkeypatch.setattr(pulumi_preview.fields, "check", check)
    steps = [pulumi_preview.Step(_policy(i), f"steps[{i}]") for i in range(5)]
    plan = pulumi_preview.plan_of_steps(steps, "preview.json", None, defer=True)
    assert len(plan.changes) == 5
    assert len(checked) == 5 and all(checked)  # creates: no old side (main: 10, 5 of None)


@pytest.mark.parametrize("step", [5, None, [], "create"])
def test_a_step_that_is_no_object_is_refused(write: Write, step: Any) -> None:
    target = write({"steps": [_policy(0), step]}, "preview.json")
    with pytest.raises(InputError) as err:
        load_plan(target)
    (line,) = err.value.problems
    assert line.startswith(f"{target}: steps[1]: expected an object, got ") and "\n" not in line
