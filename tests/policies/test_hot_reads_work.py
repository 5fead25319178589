"""Reads every rule makes per resource, kept to as few Python calls as they need: a resource's
inputs, its own tags, a type already read under the same spelling, the references it makes.
Each must still say what the plain reading says."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from policies.facts import PlanIndex, own_instance_types, own_tag
from policies.facts import instances as instance_facts
from policies.facts.values import inputs_of
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind


def _calls(ask: Callable[[], Any]) -> list[str]:
    """Names of the Python functions the one ``ask`` calls calls (``ask``, a lambda, and that
    function left out)."""
    names: list[str] = []

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        ask()
    finally:
        sys.setprofile(None)
    return names[2:]


def _change(address: str, kind: ResourceKind, new: Any, old: Any = None,
            references: dict[str, str] | None = None) -> ResourceChange:
    rtype = address.rsplit(".", 2)[-2]
    return ResourceChange(address=address, type=rtype, name=address.rsplit(".", 1)[-1],
                          change=ChangeKind.UPDATE if old else ChangeKind.CREATE, new=new,
                          old=old, source="test", kind=kind, references=references)


def test_inputs_are_read_without_a_property_call() -> None:
    new, old = {"a": 1}, {"a": 0}
    change = _change("aws_instance.i", ResourceKind.INSTANCE, new, old)
    assert inputs_of(change) is new and inputs_of(change, "old") is old
    assert _calls(lambda: inputs_of(change)) == []
    gone = _change("aws_instance.i", ResourceKind.INSTANCE, None, None)
    assert inputs_of(gone) == {} == inputs_of(gone, "old")
    assert inputs_of(gone) == gone.after and inputs_of(gone, "old") == gone.before


def test_a_resources_own_dict_tags_are_read_with_no_helper_call() -> None:
    change = _change("aws_instance.i", ResourceKind.INSTANCE,
                     {"tags": {"gpupool:role": "gpu-proxy"}, "tags_all": UNKNOWN})
    assert own_tag(change, "gpupool:role") == "gpu-proxy"
    assert _calls(lambda: own_tag(change, "gpupool:role")) == []
    assert own_tag(change, "team") is UNKNOWN  # tags_all unknown: it may be there


def test_a_spelling_read_before_makes_no_further_call() -> None:
    first = _change("aws_instance.a", ResourceKind.INSTANCE, {"instance_type": "g6.xlarge"})
    again = _change("aws_instance.b", ResourceKind.INSTANCE, {"instance_type": "g6.xlarge"})
    types = own_instance_types(first)
    assert own_instance_types(again) is types and types.known == ("g6.xlarge",)
    assert _calls(lambda: own_instance_types(again)) == []


@given(raw=st.one_of(st.sampled_from(["g5.xlarge", " G5.XLARGE", "", " ", "p5.48xlarge"]),
                     st.just(UNKNOWN), st.none(), st.integers(0, 2)),
       kind=st.sampled_from([ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
                             ResourceKind.LAUNCH_CONFIGURATION]))
def test_a_remembered_spelling_reads_as_a_fresh_one(raw: Any, kind: ResourceKind) -> None:
    change = _change("aws_instance.a", kind, {"instance_type": raw})
    remembered = own_instance_types(change)
    saved = dict(instance_facts._WRITTEN)
    instance_facts._WRITTEN.clear()
    try:
        assert own_instance_types(change) == remembered
    finally:
        instance_facts._WRITTEN.update(saved)


def _reference_references(index: PlanIndex, change: ResourceChange, key_part: str,
                          kinds: frozenset[ResourceKind]) -> tuple[ResourceChange, ...]:
    """PlanIndex.references as it read before: the addresses seen remade for every key."""
    out: list[ResourceChange] = []
    for key, ref in change.references.items():
        if key_part in key:
            seen = {t.address for t in out}
            out.extend(t for t in index.resolve(ref, change, kinds) if t.address not in seen)
    return tuple(out)


_GROUPS = ["aws_autoscaling_group.a", "aws_autoscaling_group.b[0]", "aws_autoscaling_group.b[1]",
           "module.m.aws_autoscaling_group.c"]
_REFS = st.sampled_from(["aws_autoscaling_group.a", "aws_autoscaling_group.b",
                         "aws_autoscaling_group.b[1]", "aws_autoscaling_group.c",
                         "aws_launch_template.t", "aws_autoscaling_group.none"])


@given(refs=st.dictionaries(st.sampled_from(["autoscaling_group_name", "name",
                                             "autoscaling_group_name[0]", "other"]), _REFS,
                            max_size=4),
       inside=st.booleans(), key_part=st.sampled_from(["", "autoscaling_group_name"]),
       kinds=st.sampled_from([frozenset({ResourceKind.AUTOSCALING_GROUP}),
                              frozenset({ResourceKind.AUTOSCALING_GROUP,
                                         ResourceKind.LAUNCH_TEMPLATE})]))
def test_references_equal_the_reading_that_remade_what_it_had_seen(
        refs: dict[str, str], inside: bool, key_part: str,
        kinds: frozenset[ResourceKind]) -> None:
    changes = [_change(a, ResourceKind.AUTOSCALING_GROUP, {}) for a in _GROUPS]
    changes.append(_change("aws_launch_template.t", ResourceKind.LAUNCH_TEMPLATE, {}))
    policy = _change(("module.m." if inside else "") + "aws_autoscaling_policy.p",
                     ResourceKind.SCALING_POLICY, {}, references=refs)
    index = PlanIndex([*changes, policy])
    got = index.references(policy, key_part, kinds)
    assert got == _reference_references(index, policy, key_part, kinds)
    assert len({t.address for t in got}) == len(got)


def test_a_single_reference_makes_no_set_of_what_was_seen() -> None:
    group = _change("aws_autoscaling_group.a", ResourceKind.AUTOSCALING_GROUP, {})
    policy = _change("aws_autoscaling_policy.p", ResourceKind.SCALING_POLICY, {},
                     references={"autoscaling_group_name": "aws_autoscaling_group.a"})
    index = PlanIndex([group, policy])
    kinds = frozenset({ResourceKind.AUTOSCALING_GROUP})
    assert index.references(policy, "", kinds) == (group,)
    assert _calls(lambda: index.references(policy, "", kinds)) == ["resolve"]


def test_dict_tags_are_proven_set_with_no_helper_call() -> None:
    from policies.facts.tags import tags_set

    inputs = {"tags": {"team": "ml"}, "tags_all": {"cost-center": "cc"}}
    assert tags_set(inputs, ["team", "cost-center"])
    assert not tags_set(inputs, ["environment"])
    assert _calls(lambda: tags_set(inputs, ["team", "cost-center"])) == []


def test_a_groups_gpu_rows_are_read_with_no_generator() -> None:
    from gpupool.catalog import load_catalog
    from policies.rules._asg_raise import gpu_types

    catalog = load_catalog()
    group = _change("aws_autoscaling_group.g", ResourceKind.AUTOSCALING_GROUP, {
        "mixed_instances_policy": [{"launch_template": [{"override": [
            {"instance_type": "g5.xlarge"}, {"instance_type": "nope.large"},
            {"instance_type": "g5.2xlarge"}]}]}]})
    index = PlanIndex([group], catalog)
    rows, unknown = gpu_types(index, group, "new", catalog)
    assert [r.instance_type for r in rows] == ["g5.xlarge", "g5.2xlarge"] and unknown is None
    assert "<genexpr>" not in _calls(lambda: gpu_types(index, group, "new", catalog))
