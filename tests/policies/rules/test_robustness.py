"""Arbitrary and mutated inputs: rules never raise, and always say something well-formed.

A rule that raised would fail the check (the engine turns it into an error), which is safe but
useless; this holds every rule to answering instead, whatever shape a source hands it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from policies.engine import evaluate
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, resource_kind
from policies.rules import ALL_RULES
from policies.settings import Settings

KEYS = [
    "instance_type", "instance_types", "name", "id", "max_size", "launch_template",
    "launch_template_id", "launch_template_name", "launch_template_specification",
    "mixed_instances_policy", "override", "overrides", "instance_requirements",
    "weighted_capacity", "metadata_options", "http_tokens", "http_endpoint",
    "root_block_device", "ebs_block_device", "ebs_block_devices", "block_device_mappings",
    "ebs", "encrypted", "device_name", "tags", "tags_all", "tag", "tag_specifications",
    "resource_type", "key", "value", "propagate_at_launch", "autoscaling_group_name",
    "policy_type", "enabled", "target_tracking_configuration", "target_value",
    "disable_scale_in", "customized_metric_specification", "predefined_metric_specification",
    "predefined_metric_type", "metric_name", "namespace", "statistic", "metric_dimension",
    "metric_dimensions", "metrics", "metric_stat", "metric", "dimensions", "expression",
    "launch_configuration", "scaling_config",
]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 100), st.floats(allow_nan=True),
    st.sampled_from(["g4dn.xlarge", "g4dn.16xlarge", "g5.12xlarge", "p5.48xlarge", "m7i.large",
                     "required", "optional", "disabled", "true", "false", "instance",
                     "TargetTrackingScaling", "StepScaling", "CWAgent", "AutoScalingGroupName",
                     "nvidia_smi_utilization_gpu", "ASGAverageCPUUtilization", "pool", "",
                     "g9.xlarge"]),
    st.just(UNKNOWN),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
    max_leaves=25,
)
INPUTS = st.one_of(st.none(), st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8))
TYPES = st.sampled_from([
    "aws_instance", "aws:ec2/launchTemplate:LaunchTemplate", "aws_launch_template",
    "aws_launch_configuration", "aws:autoscaling/group:Group", "aws_autoscaling_group",
    "aws_autoscaling_policy", "aws:autoscaling/policy:Policy", "aws_eks_node_group",
    "aws_security_group",
])


@st.composite
def changes(draw: st.DrawFn) -> list[ResourceChange]:
    n = draw(st.integers(1, 5))
    addresses = [f"r.{i}" for i in range(n)]
    out = []
    for address in addresses:
        rtype = draw(TYPES)
        new, old = draw(INPUTS), draw(INPUTS)
        kind = draw(st.sampled_from(list(ChangeKind)))
        refs = draw(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(
            [*addresses, "r", "module.m.r.0", "missing"]), max_size=2))
        out.append(ResourceChange(address, rtype, address, kind, new, old, "fuzz",
                                  resource_kind(rtype), refs))
    return out


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes())
def test_rules_answer_whatever_the_inputs(cs: list[ResourceChange]) -> None:
    catalog = load_catalog()
    for rule in ALL_RULES:
        for finding in rule.run(cs, catalog):
            assert isinstance(finding.message, str) and finding.message
            assert not (finding.unknown and finding.advisory_only)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes())
def test_engine_never_errors_on_odd_inputs(cs: list[ResourceChange]) -> None:
    result = evaluate([Plan("fuzz", "fuzz", tuple(cs))], Settings.default())
    assert result.errors == []
    assert result.to_json()["verdict"] in ("pass", "fail")


def test_wrongly_typed_instance_type_cannot_be_verified_rather_than_passed() -> None:
    weird: dict[str, Any] = {"instance_type": 123}
    c = ResourceChange("aws_instance.i", "aws_instance", "i", ChangeKind.CREATE, weird, None,
                       "t", resource_kind("aws_instance"))
    [f] = [f for f in ALL_RULES[1].run([c], load_catalog())]
    assert f.unknown and "instance_type has an unexpected value 123" in f.message
