"""The Terraform reader's pass over the resources: per-resource work that only some need.

A resource's configuration view (``_Config``) is made, and ``drop_undeclared`` called, only when
something is wholly unknown where its tables look (``may_drop``); the type's kind and tables
are worked out once per type. The fast test must agree with the full one on every input, and
the reader must still report the first problem in the same order as before: every entry's
address first, then planned_values, the configuration, and the changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import policies.sources.terraform as terraform
from gpupool.errors import InputError
from policies.model import UNKNOWN
from policies.sources import load_plan, parse_document
from policies.sources.terraform_declared import (
    AWS_DEFAULT_WHEN_UNDECLARED,
    DECLARED_TYPES,
    EXCLUDED_BY_DECLARED,
    NESTED_DEFAULTS,
    NOT_SET_UNLESS_DYNAMIC,
    may_drop,
)


def test_a_valid_bench_plan_makes_no_configuration_view(
        bench_plan: Callable[[str, int], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []
    dropped: list[str] = []
    real_drop = terraform.drop_undeclared

    class Counting(terraform._Config):
        def __init__(self, *args: Any) -> None:
            made.append(args)
            super().__init__(*args)

    def counting_drop(new: dict[str, Any], rtype: str, config: Any) -> None:
        dropped.append(rtype)
        real_drop(new, rtype, config)

    monkeypatch.setattr(terraform, "_Config", Counting)
    monkeypatch.setattr(terraform, "drop_undeclared", counting_drop)
    plan = load_plan(bench_plan("gen_tfplan", 200))
    assert len(plan.changes) >= 200 and {c.type for c in plan.changes} & DECLARED_TYPES
    assert (made, dropped) == ([], [])


def _wholly(value: Any) -> bool:
    return value is UNKNOWN or (type(value) is list and len(value) == 1 and value[0] is UNKNOWN)


def _blocks(value: Any) -> list[dict[str, Any]]:
    if type(value) is dict:
        return [value]
    return [v for v in value if type(v) is dict] if type(value) is list else []


def _full_test(new: dict[str, Any], rtype: str) -> bool:
    """What drop_undeclared computed before it returns (its lists), written out."""
    keys = (*AWS_DEFAULT_WHEN_UNDECLARED.get(rtype, ()), *EXCLUDED_BY_DECLARED.get(rtype, {}),
            *NOT_SET_UNLESS_DYNAMIC.get(rtype, ()))
    nested = [(b, k) for b, k in NESTED_DEFAULTS.get(rtype, ())
              if any(_wholly(e.get(k)) for e in _blocks(new.get(b)))]
    return any(_wholly(new.get(k)) for k in keys) or bool(nested)


_VALUES = st.sampled_from([None, "x", True, [], ["a"], [UNKNOWN], [UNKNOWN, "b"], UNKNOWN, {}])
_ELEMENT = st.one_of(_VALUES, st.dictionaries(st.sampled_from(["encrypted", "volume_size"]),
                                              _VALUES, max_size=2))
_KEYS = sorted({k for table in (AWS_DEFAULT_WHEN_UNDECLARED, EXCLUDED_BY_DECLARED,
                                NOT_SET_UNLESS_DYNAMIC) for keys in table.values() for k in keys}
               | {b for pairs in NESTED_DEFAULTS.values() for b, _ in pairs} | {"name"})


@given(st.sampled_from(sorted(DECLARED_TYPES | {"aws_s3_bucket"})),
       st.dictionaries(st.sampled_from(_KEYS),
                       st.one_of(_VALUES, _ELEMENT, st.lists(_ELEMENT, max_size=3))))
def test_the_fast_test_agrees_with_the_full_one(rtype: str, new: dict[str, Any]) -> None:
    assert may_drop(new, rtype) is _full_test(new, rtype)


def _entry(i: int, **change: Any) -> dict[str, Any]:
    return {"address": f"aws_instance.a{i}", "mode": "managed", "type": "aws_instance",
            "name": f"a{i}", "change": {"actions": ["create"], "before": None,
                                        "after": {"instance_type": "g5.xlarge"}, **change}}


def _problem(doc: dict[str, Any]) -> str:
    with pytest.raises(InputError) as err:
        parse_document(doc, "plan.json")
    (line,) = err.value.problems
    return line


def test_problems_are_found_in_the_order_they_were() -> None:
    bad_change = _entry(0, actions="create")
    bad_address = {**_entry(1), "name": 5}
    doc: dict[str, Any] = {"format_version": "1.2", "resource_changes": [bad_change, bad_address],
                           "configuration": []}
    assert _problem(doc) == "plan.json: resource_changes[1].name: expected a string, got 5"
    doc["resource_changes"] = [bad_change, _entry(1)]
    assert _problem(doc) == "plan.json: configuration: expected an object, got array []"
    del doc["configuration"]
    assert _problem(doc).startswith("plan.json: resource_changes[0].change.actions: expected one")
    doc["resource_changes"] = [_entry(0), _entry(1, after={"instance_type": 5})]
    assert _problem(doc).startswith(
        "plan.json: resource_changes[1].change.after.instance_type: expected an instance type")


def test_a_deposed_object_is_no_instance_of_its_resource() -> None:
    live = {**_entry(0), "address": "aws_instance.a[0]", "name": "a", "index": 0}
    deposed = {**live, "deposed": "abc", "change": {"actions": ["delete"],
                                                    "before": {"instance_type": "g5.xlarge"},
                                                    "after": None}}
    policy = {"address": "aws_autoscaling_policy.p", "mode": "managed",
              "type": "aws_autoscaling_policy", "name": "p",
              "change": {"actions": ["create"], "before": None, "after": {}}}
    doc = {"format_version": "1.2", "resource_changes": [live, deposed, policy],
           "configuration": {"root_module": {"resources": [
               {"address": "aws_autoscaling_policy.p", "mode": "managed",
                "type": "aws_autoscaling_policy", "name": "p", "expressions": {
                    "autoscaling_group_name": {"references": ["aws_instance.a"]}}}]}}}
    plan = parse_document(doc, "plan.json")
    assert [c.address for c in plan.changes] == [
        "aws_instance.a[0]", "aws_instance.a[0] (deposed object abc)", "aws_autoscaling_policy.p"]
    # one live instance: the reference without a key names it (the deposed one is not counted)
    assert plan.changes[2].references == {"autoscaling_group_name": "aws_instance.a[0]"}


def test_flat_unknowns_are_merged_without_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = terraform._merge_unknown

    def counting(after: Any, unknown: Any) -> Any:
        calls.append(unknown)
        return real(after, unknown)

    monkeypatch.setattr(terraform, "_merge_unknown", counting)
    flat = _entry(0, after_unknown={"id": True, "arn": True, "tags": False})
    nested = _entry(1, after={"instance_type": "g5.xlarge", "root_block_device": [{}]},
                    after_unknown={"root_block_device": [{"volume_id": True}]})
    plan = parse_document({"format_version": "1.2", "resource_changes": [flat, nested]},
                          "plan.json")
    assert plan.changes[0].new == {"instance_type": "g5.xlarge", "id": UNKNOWN, "arn": UNKNOWN}
    assert plan.changes[1].new == {"instance_type": "g5.xlarge",
                                   "root_block_device": [{"volume_id": UNKNOWN}]}
    assert calls == [[{"volume_id": True}], {"volume_id": True}]  # only below the top level


def test_a_valid_plan_builds_no_set_of_planned_addresses(
        bench_plan: Callable[[str, int], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object) -> set[str]:
        raise AssertionError("the planned addresses were gathered on a valid plan")

    monkeypatch.setattr(terraform, "_planned_addresses", refused)
    assert len(load_plan(bench_plan("gen_tfplan", 100)).changes) == 100


_RESOURCE = st.one_of(st.none(), st.fixed_dictionaries(
    {"address": st.one_of(st.sampled_from(["a.x", "a.y", "b.z", "module.m.a.x"]), st.integers())},
    optional={"mode": st.sampled_from(["managed", "data", 5])}))
_MODULE = st.recursive(
    st.fixed_dictionaries({}, optional={"resources": st.one_of(st.lists(_RESOURCE, max_size=3),
                                                               _RESOURCE)}),
    lambda inner: st.fixed_dictionaries({}, optional={
        "resources": st.lists(_RESOURCE, max_size=3),
        "child_modules": st.one_of(st.lists(inner, max_size=2), inner)}), max_leaves=6)


@given(_MODULE, st.sets(st.sampled_from(["a.x", "a.y", "b.z", "module.m.a.x"])))
def test_all_listed_agrees_with_the_set_of_planned_addresses(module: Any, listed: set[str]
                                                             ) -> None:
    assert terraform._all_listed(module, 0, listed) is not bool(
        terraform._planned_addresses(module, 0) - listed)


def _reader_calls(path: Path) -> list[str]:
    """The Python-level calls into terraform.py while a plan is read (the JSON parsed first)."""
    import sys
    from types import FrameType

    from policies.sources.reading import read_json

    doc = read_json(path, "plan.json")
    seen: list[str] = []

    def profile(frame: FrameType, event: str, _: object) -> None:
        code = frame.f_code
        if event == "call" and code.co_filename == terraform.__file__:
            seen.append(code.co_name)

    sys.setprofile(profile)
    try:
        terraform.parse(doc, "plan.json")
    finally:
        sys.setprofile(None)
    # nested unknowns, and planned_values' module instances (10 resources each here)
    return [name for name in seen if name not in ("_merge_unknown", "_all_listed")]


def test_the_reader_makes_no_call_of_its_own_per_resource(
        bench_plan: Callable[[str, int], Path]) -> None:
    small, large = _reader_calls(bench_plan("gen_tfplan", 100)), _reader_calls(
        bench_plan("gen_tfplan", 300))
    assert sorted(small) == sorted(large)  # per plan and per module tree, not per resource
