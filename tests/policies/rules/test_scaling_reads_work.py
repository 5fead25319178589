"""A scaling policy is read with its usual shapes inline (non-empty strings, booleans, Pulumi's
objects): it must say what the readings by text(), flag() and block() say, on every shape.
The scale-from-zero finding's words are made once per group type."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from policies.facts import PlanIndex, scaling_policy
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules import get_rule
from policies.rules import gpu_pool_scales_on_utilisation as pool_rule
from policies.rules._scaling_judge import judge


class _Str(str):
    """A string the inline reads do not take: it goes through text()."""


def _slow(value: Any) -> Any:
    """The same value in shapes only text(), flag() and block() read: str subclasses, booleans
    as strings, mappings that are not dicts."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _Str(value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: _slow(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_slow(v) for v in value]
    return value


_TEXT = st.one_of(st.sampled_from(["", "TargetTrackingScaling", "SimpleScaling", "CWAgent",
                                   "nvidia_smi_utilization_gpu", "Average", "pool"]),
                  st.just(UNKNOWN), st.none(), st.integers(0, 1))
_DIMS = st.one_of(st.just(UNKNOWN), st.lists(st.one_of(st.fixed_dictionaries(
    {"name": st.sampled_from(["AutoScalingGroupName", UNKNOWN]), "value": _TEXT}),
    st.just(UNKNOWN)), max_size=2))
_SPEC = st.fixed_dictionaries({}, optional={
    "metric_name": _TEXT, "namespace": _TEXT, "statistic": _TEXT, "metric_dimensions": _DIMS})
_TTC = st.fixed_dictionaries({}, optional={
    "target_value": st.one_of(st.integers(0, 100), st.just(UNKNOWN)),
    "disable_scale_in": st.one_of(st.booleans(), st.just(UNKNOWN)),
    "customized_metric_specification": st.one_of(_SPEC, st.lists(_SPEC, max_size=1),
                                                 st.just(UNKNOWN))})
_POLICY = st.fixed_dictionaries({}, optional={
    "policy_type": _TEXT, "autoscaling_group_name": _TEXT,
    "enabled": st.one_of(st.booleans(), st.just(UNKNOWN), st.none(), st.just("false")),
    "target_tracking_configuration": st.one_of(_TTC, st.lists(_TTC, max_size=1),
                                               st.just(UNKNOWN), st.none())})


def _change(address: str, kind: ResourceKind, new: Mapping[str, Any]) -> ResourceChange:
    return ResourceChange(address=address, type=address.split(".")[0], name="p",
                          change=ChangeKind.CREATE, new=new, old=None, source="test", kind=kind)


@settings(max_examples=400, deadline=None)
@given(policy=_POLICY, group_name=_TEXT)
def test_the_inline_reads_say_what_the_helpers_say(policy: dict[str, Any],
                                                   group_name: Any) -> None:
    assert scaling_policy(policy) == scaling_policy(_slow(policy))
    group = _change("aws_autoscaling_group.g", ResourceKind.AUTOSCALING_GROUP,
                    {"name": group_name})
    slow_group = _change("aws_autoscaling_group.g", ResourceKind.AUTOSCALING_GROUP,
                         {"name": _slow(group_name)})
    fast = _change("aws_autoscaling_policy.p", ResourceKind.SCALING_POLICY, policy)
    slow = _change("aws_autoscaling_policy.p", ResourceKind.SCALING_POLICY, _slow(policy))
    params = get_rule("gpu-pool-scales-on-utilisation").parse_params()
    assert judge(fast, group, PlanIndex([group, fast]), params) == judge(
        slow, slow_group, PlanIndex([slow_group, slow]), params)


def test_the_scale_from_zero_words_are_made_once_per_group_type() -> None:
    changes = []
    for i in range(10):
        changes.append(_change(f"aws_autoscaling_group.g{i}", ResourceKind.AUTOSCALING_GROUP, {
            "name": f"g{i}", "min_size": 0, "max_size": 2, "mixed_instances_policy": [{
                "launch_template": [{"override": [{"instance_type": "g5.xlarge"}]}]}]}))
        ttc = [{"target_value": 70, "customized_metric_specification": [{
            "metric_name": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
            "metric_dimension": [{"name": "AutoScalingGroupName", "value": f"g{i}"}]}]}]
        changes.append(_change(f"aws_autoscaling_policy.p{i}", ResourceKind.SCALING_POLICY, {
            "autoscaling_group_name": f"g{i}", "policy_type": "TargetTrackingScaling",
            "target_tracking_configuration": ttc}))
    pool_rule._FROM_ZERO.clear()
    with mock.patch.object(pool_rule, "prop", wraps=pool_rule.prop) as named:
        found = get_rule("gpu-pool-scales-on-utilisation").run(changes, load_catalog(), {})
    assert named.call_count == 1
    assert len(found) == 10 and len({f.message for f in found}) == 1
    assert found[0].message.startswith("min_size is 0: target tracking on GPU utilisation")
    assert all(f.advisory_only and f.prop == "min_size" for f in found)
