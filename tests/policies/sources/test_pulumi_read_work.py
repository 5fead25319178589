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
from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.errors import InputError
from policies.model import ResourceChange
from policies.sources import load_plan, parse_document, pulumi_preview, pulumi_values

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
    """The URNs the reader parses (pulumi_values' urn_type_name, each step's own urn_parts),
    with its caches empty to start (the reader probes the parents' cache itself)."""
    parents: dict[str, str | None] = {}
    monkeypatch.setattr(pulumi_values, "_PARENTS", parents, raising=False)
    monkeypatch.setattr(pulumi_preview, "_PARENTS", parents, raising=False)
    monkeypatch.setattr(pulumi_values, "_LINKABLE", {}, raising=False)
    parsed: list[str] = []
    real, real_parts = pulumi_values.urn_type_name, pulumi_values.urn_parts

    def urn_type_name(urn: str) -> tuple[str, str] | None:
        parsed.append(urn)
        return real(urn)

    def urn_parts(urn: str) -> list[str] | None:
        parsed.append(urn)
        return real_parts(urn)

    monkeypatch.setattr(pulumi_values, "urn_type_name", urn_type_name)
    monkeypatch.setattr(pulumi_preview, "urn_parts", urn_parts)  # each step's own
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


def test_a_good_step_makes_no_place_at_all() -> None:
    """Places are made only for a message: a step without dependencies or parent names none."""
    _Place.made = 0
    bodies = [_policy(i) for i in range(20)]
    for body in bodies:
        del body["newState"]["parent"]
        body["newState"]["propertyDependencies"] = {}
    steps = [pulumi_preview.Step(body, _Place(f"steps[{i}]")) for i, body in enumerate(bodies)]
    plan = pulumi_preview.plan_of_steps(steps, "preview.json", None, defer=True)
    assert len(plan.changes) == 20 and all(c.parent is None for c in plan.changes)
    assert _Place.made == 0  # main: 20 (each new state's place, made for every step)


_OPS = ["create", "update", "delete", "same", "replace", "create-replacement",
        "delete-replaced", "read", "import"]
_TYPES = ["aws:autoscaling/policy:Policy", "aws:ec2/instance:Instance", "aws:iam/role:Role",
          "pulumi:providers:aws"]


def _state(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    state: dict[str, Any] = {"custom": draw(st.booleans()), "type": draw(st.sampled_from(_TYPES))}
    if draw(st.booleans()):
        state["inputs"] = {"instanceType": draw(st.sampled_from(["g5.xlarge", 5, None])),
                           "maxSize": draw(st.integers(-1, 3))}
    if draw(st.booleans()):
        state["parent"] = draw(st.sampled_from([POOL, "", None, 5]))
    if draw(st.booleans()):
        state["propertyDependencies"] = draw(st.sampled_from(
            [{}, None, {"instanceType": [ASG]}, {"x": [ASG, POOL]}, [], {"y": 3}]))
    return state


@st.composite
def _steps(draw: st.DrawFn) -> list[dict[str, Any]]:
    steps = []
    for _ in range(draw(st.integers(0, 6))):
        urn = draw(st.sampled_from([ASG, POOL, f"{STACK}aws:iam/role:Role::r", "urn:x", 3]))
        step: dict[str, Any] = {"op": draw(st.sampled_from([*_OPS, "bogus"])), "urn": urn}
        for key in ("oldState", "newState"):
            state = _state(draw)
            if state is not None:
                step[key] = state
        steps.append(step)
    return steps


def _events(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    renamed = [{{"oldState": "old", "newState": "new"}.get(k, k): v for k, v in s.items()}
               for s in steps]
    return [*({"type": "resourcePreEvent", "resourcePreEvent": {"metadata": m}}
              for m in renamed),
            {"type": "summaryEvent", "summaryEvent": {"resourceChanges": {}}}]


@settings(max_examples=300, deadline=None)
@given(_steps())
def test_a_digest_and_an_event_stream_of_the_same_steps_read_alike(
        steps: list[dict[str, Any]]) -> None:
    """The digest's steps (placed by index) and the events' (placed by text) share one merge:
    the same changes, or both refused at the same key of the same step."""
    def read(doc: dict[str, Any]) -> Any:
        try:
            return parse_document(copy.deepcopy(doc), "p.json", from_json=True).changes
        except InputError as e:
            (line,) = e.problems
            return line.removeprefix("p.json: ").split(": ", 2)

    digest, events = read({"steps": steps}), read({"events": _events(steps)})
    if isinstance(digest, tuple):
        assert digest == events
    else:  # steps[3].newState.type: ... against events[3]: resourcePreEvent.metadata.new.type
        place, *rest = digest
        index, _, path = place.removeprefix("steps[").partition("]")
        path = path.replace(".oldState", ".old").replace(".newState", ".new")
        assert [events[0], events[1].removeprefix("resourcePreEvent.metadata"), *events[2:]] == [
            f"events[{index}]", path, *rest], (digest, events)


def test_a_dependency_on_a_resource_not_seen_before_makes_no_place(counted: list[str]) -> None:
    _Place.made = 0
    deps = {f"input{i}": [f"{STACK}aws:ec2/subnet:Subnet::s{i}"] for i in range(10)}
    links = pulumi_values.dependency_references(deps, "preview.json", _Place("steps[0]"),
                                                "propertyDependencies")
    assert len(links) == 10 and len(counted) == 10  # each URN parsed, once
    assert _Place.made == 0  # main: 10, one place per URN first seen
    with pytest.raises(InputError, match=r"steps\[0\]\.propertyDependencies\.x\[1\]: expected a"):
        pulumi_values.dependency_references({"x": [deps["input0"][0], 5]}, "preview.json",
                                            _Place("steps[0]"), "propertyDependencies")


def test_inputs_that_depend_on_nothing_link_nothing_and_bad_ones_are_refused() -> None:
    for deps in ({"a": None}, {"a": [], "b": None}):
        doc = _with(["propertyDependencies"], deps)
        assert [c.references for c in pulumi_preview.parse(doc, "p.json").changes][1] == {}
    for bad, got in ((0, "0"), ("", 'string ""'), (False, "false"), ({}, "object")):
        doc = _with(["propertyDependencies"], {"a": None, "name": bad})
        with pytest.raises(InputError, match=r"steps\[1\]\.newState\.propertyDependencies\.name: "
                                             f"expected an array of URNs or null, got {got}"):
            pulumi_preview.parse(doc, "p.json")


def test_changes_are_made_by_the_constructors_code_without_the_types_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``ResourceChange(...)`` reaches ``__new__`` through the type's call and new slots (~1k
    instructions a change); the reader calls that code itself: no ``__init__`` runs."""
    calls: list[object] = []
    monkeypatch.setattr(ResourceChange, "__init__",
                        lambda self, *args, **kwargs: calls.append(self), raising=False)
    plan = pulumi_preview.parse({"steps": [_policy(i) for i in range(20)]}, "p.json", True)
    assert len(plan.changes) == 20 and all(type(c) is ResourceChange for c in plan.changes)
    assert calls == []  # main: 20
