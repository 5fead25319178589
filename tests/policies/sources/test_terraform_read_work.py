"""The Terraform reader's per-resource work, counted: what only an error needs is made on error.

A typed resource's inputs are checked (``fields.check``) twice, ``after`` and ``before``; the
message path of each is a closure over the row. Made per resource they cost a function object
each on every valid plan, so the first check gets a plain function and only a failing check is
run again with the closures: the message still names the key as the file spells it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import policies.sources.fields as fields
import policies.sources.terraform as terraform
from gpupool.errors import InputError
from policies.model import UNKNOWN, ResourceKind
from policies.sources import load_plan, parse_document
from policies.sources.terraform_declared import drop_undeclared
from policies.sources.terraform_refs import References


def test_a_valid_plan_makes_no_message_closure(
        bench_plan: Callable[[str, int], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Callable[[str], str]] = []
    real = fields.check

    def counting(kind: Any, inputs: Any, origin: str, where: Callable[[str], str]) -> None:
        calls.append(where)
        real(kind, inputs, origin, where)

    monkeypatch.setattr(fields, "check", counting)
    plan = load_plan(bench_plan("gen_tfplan", 200))
    assert len(calls) >= 100 and len(plan.changes) >= 200  # the fleet's typed half, both sides
    assert [w for w in calls if w.__closure__ is not None] == []


def _plan(actions: list[str], before: Any, after: Any) -> dict[str, Any]:
    return {"format_version": "1.2", "resource_changes": [
        {"address": "aws_instance.a", "mode": "managed", "type": "aws_instance", "name": "a",
         "change": {"actions": ["no-op"], "before": {"instance_type": "g4dn.xlarge"},
                    "after": {"instance_type": "g4dn.xlarge"}}},
        {"address": "aws_autoscaling_group.g", "mode": "managed",
         "type": "aws_autoscaling_group", "name": "g",
         "change": {"actions": actions, "before": before, "after": after}}]}


@pytest.mark.parametrize(("before", "after", "path"), [
    ({"max_size": 4}, {"max_size": "inf"}, "resource_changes[1].change.after.max_size"),
    ({"max_size": "inf"}, {"max_size": 4}, "resource_changes[1].change.before.max_size"),
    ({"max_size": "inf"}, {"max_size": -1}, "resource_changes[1].change.after.max_size"),
])
def test_a_wrong_type_is_named_as_the_file_spells_it(before: Any, after: Any, path: str) -> None:
    with pytest.raises(InputError) as err:
        parse_document(_plan(["update"], before, after), "plan.json")
    (line,) = err.value.problems
    assert line.startswith(f"plan.json: {path}: expected a whole number from 0 to"), line


@pytest.mark.parametrize(("value", "ok"), [(2**1023, True), (-(2**1023), True),
                                           (2**1023 + 1, False), (10**400, False)])
def test_an_integer_target_value_is_bounded_as_a_float(value: int, ok: bool) -> None:
    doc = {"format_version": "1.2", "resource_changes": [
        {"address": "aws_autoscaling_policy.p", "mode": "managed",
         "type": "aws_autoscaling_policy", "name": "p",
         "change": {"actions": ["create"], "before": None, "after": {
             "target_tracking_configuration": [{"target_value": value}]}}}]}
    if ok:
        assert len(parse_document(doc, "plan.json").changes) == 1
        return
    with pytest.raises(InputError, match=r"target_tracking_configuration\[0\]\.target_value: "
                                         "expected a finite number"):
        parse_document(doc, "plan.json")


def _comprehensions_run(body: Callable[[], object]) -> int:
    """How many list comprehensions of terraform_declared ``body`` runs (3.11: each a call)."""
    seen = 0

    def profile(frame: FrameType, event: str, _: object) -> None:
        nonlocal seen
        code = frame.f_code
        if event == "call" and code.co_name == "<listcomp>" and \
                code.co_filename.endswith("terraform_declared.py"):
            seen += 1

    sys.setprofile(profile)
    try:
        body()
    finally:
        sys.setprofile(None)
    return seen


class _NoConfig:
    def expressions(self) -> None:
        raise AssertionError("read although nothing is wholly unknown")


@given(st.dictionaries(
    st.sampled_from(["target_group_arns", "load_balancers", "mixed_instances_policy",
                     "availability_zones", "vpc_zone_identifier", "traffic_source", "name"]),
    st.sampled_from([None, "x", [], ["a"], [UNKNOWN, "b"], {"k": UNKNOWN}])))
def test_nothing_wholly_unknown_is_one_pass_without_lists(new: dict[str, Any]) -> None:
    was = dict(new)
    runs = _comprehensions_run(
        lambda: drop_undeclared(new, "aws_autoscaling_group", _NoConfig()))  # type: ignore[arg-type]
    assert (runs, new) == (0, was)


def test_resource_kinds_and_module_names_once_per_plan_not_per_resource(
        bench_plan: Callable[[str, int], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    kinds: list[str] = []
    names: list[object] = []
    real_kind, real_names = terraform.resource_kind, References._names

    def counting_kind(rtype: str) -> ResourceKind:
        kinds.append(rtype)
        return real_kind(rtype)

    def counting_names(self: References, segments: tuple[Any, ...]) -> tuple[str, ...]:
        names.append(segments)
        return real_names(self, segments)

    monkeypatch.setattr(terraform, "_TYPES", {})
    monkeypatch.setattr(terraform, "resource_kind", counting_kind)
    monkeypatch.setattr(References, "_names", counting_names)
    plan = load_plan(bench_plan("gen_tfplan", 200))
    types = {c.type for c in plan.changes}
    assert len(plan.changes) >= 200 and sorted(kinds) == sorted(types)
    assert names == []  # module call names come with the row, worked out per module instance
    assert [c.kind for c in plan.changes] == [real_kind(c.type) for c in plan.changes]
