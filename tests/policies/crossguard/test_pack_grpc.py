"""The gpupool pack over real gRPC, as `pulumi preview/up --policy-pack policies` runs it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.crossguard.config import config_properties
from policies.model import normalise_inputs
from policies.rules import ALL_RULES, get_rule
from policies.rules.base import ChangeKind, ResourceChange, resource_kind
from policies.testing import UNKNOWN, PackRpcError, PolicyPackHarness, Resource
from policies.testing.values import from_struct, to_struct

INSTANCE = "aws:ec2/instance:Instance"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
TAGS = {"team": "ml", "cost-center": "cc-42", "environment": "prod"}


def clean_template(instance_type: str) -> dict[str, Any]:
    """A launch template as the kit writes it: IMDSv2, encrypted gp3 root, chargeback tags."""
    return {
        "instanceType": instance_type,
        "metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda",
                                 "ebs": {"volumeType": "gp3", "encrypted": "true"}}],
        "tagSpecifications": [{"resourceType": "instance", "tags": TAGS}],
        "tags": TAGS,
    }


def clean_instance(instance_type: str) -> dict[str, Any]:
    return {
        "instanceType": instance_type,
        "metadataOptions": {"httpTokens": "required"},
        "rootBlockDevice": {"encrypted": True, "volumeType": "gp3"},
        "tags": TAGS,
    }


def engine_messages(rule_id: str, type_: str, urn: str, new: dict[str, Any],
                    old: dict[str, Any] | None = None) -> list[str]:
    """What the engine's rule says about the same change, in-process."""
    change = ResourceChange(
        address=urn, type=type_, name=urn.rsplit("::", 1)[1],
        change=ChangeKind.UPDATE if old is not None else ChangeKind.CREATE,
        new=normalise_inputs(new), old=None if old is None else normalise_inputs(old),
        source="test", kind=resource_kind(type_),
    )
    return [f.message for f in get_rule(rule_id).run([change], load_catalog())]


def write_baseline(path: Path, resources: list[tuple[str, str, dict[str, Any]]]) -> str:
    """A file shaped like `pulumi stack export` output."""
    path.write_text(json.dumps({
        "version": 3,
        "deployment": {
            "manifest": {"time": "2026-07-01T00:00:00Z", "version": "v3.200.0"},
            "resources": [
                {"urn": urn, "custom": True, "id": "lt-0123", "type": type_,
                 "inputs": inputs, "outputs": {**inputs, "arn": "arn:aws:..."}}
                for urn, type_, inputs in resources
            ],
        },
    }))
    return str(path)


# -- what the CLI learns about the pack ------------------------------------------------------


def test_analyzer_info_lists_every_rule_with_its_level_and_schema(pack: PolicyPackHarness) -> None:
    info = pack.get_analyzer_info()
    assert info.name == "gpupool" and info.supports_config
    assert info.policy_names == [r.meta.id for r in ALL_RULES]
    for rule in ALL_RULES:
        p = info.policy(rule.meta.id)
        assert p.description == rule.meta.title
        assert p.enforcement_level == str(rule.meta.default_enforcement)
        assert p.policy_type == rule.meta.scope
        # numbers travel as doubles, as they do to the CLI
        assert p.config_properties == from_struct(to_struct(config_properties(rule)))
    upsize = info.policy("gpu-no-vertical-upsize").config_properties
    assert upsize["baseline"]["type"] == "string"
    assert upsize["unknownEnforcement"]["enum"] == ["mandatory", "advisory"]
    assert pack.get_plugin_info()


# -- gpu-smallest-instance and gpu-no-vertical-upsize ---------------------------------------


@pytest.mark.parametrize(("type_", "props"), [(INSTANCE, clean_instance),
                                              (LT, clean_template)])
def test_a_larger_size_gets_a_mandatory_smallest_instance_diagnostic(
    pack: PolicyPackHarness, type_: str, props: Any
) -> None:
    pack.configure({})
    result = pack.analyze(type_, "gpu", props("g4dn.2xlarge"))
    urn = pack.urn(type_, "gpu")
    [d] = result.diagnostics
    assert (d.policy_name, d.enforcement_level, d.urn) == ("gpu-smallest-instance", "mandatory",
                                                           urn)
    assert d.description == get_rule("gpu-smallest-instance").meta.title
    assert [d.detail] == engine_messages("gpu-smallest-instance", type_, urn,
                                         props("g4dn.2xlarge"))
    assert "g4dn.2xlarge is not the smallest size" in d.detail and "g4dn.xlarge" in d.detail


@pytest.mark.parametrize(("type_", "props"), [(INSTANCE, clean_instance),
                                              (LT, clean_template)])
def test_with_a_baseline_the_upsize_is_blocked_too(
    pack: PolicyPackHarness, tmp_path: Path, type_: str, props: Any
) -> None:
    urn = pack.urn(type_, "gpu")
    baseline = write_baseline(tmp_path / "baseline.json", [(urn, type_, props("g4dn.xlarge"))])
    pack.configure({"gpu-no-vertical-upsize": {"baseline": baseline}})
    result = pack.analyze(type_, "gpu", props("g4dn.2xlarge"))
    assert sorted(d.policy_name for d in result.mandatory) == [
        "gpu-no-vertical-upsize", "gpu-smallest-instance"]
    [up] = result.for_policy("gpu-no-vertical-upsize")
    assert up.urn == urn
    assert [up.detail] == engine_messages("gpu-no-vertical-upsize", type_, urn,
                                          props("g4dn.2xlarge"), old=props("g4dn.xlarge"))
    assert "g4dn.xlarge → g4dn.2xlarge" in up.detail and "no GPU power" in up.detail
    # The same URN at its baseline size is an unchanged update: nothing to say.
    assert pack.analyze(type_, "gpu", props("g4dn.xlarge")).diagnostics == []
    # A resource the baseline does not hold is new: judged on its size only.
    fresh = pack.analyze(type_, "other", props("g4dn.2xlarge"))
    assert fresh.policies == {"gpu-smallest-instance"}


def test_a_clean_smallest_launch_template_gets_no_diagnostic(pack: PolicyPackHarness) -> None:
    pack.configure({})
    assert pack.analyze(LT, "pool", clean_template("g4dn.xlarge")).diagnostics == []


def test_disabling_a_policy_by_config_silences_it(pack: PolicyPackHarness) -> None:
    pack.configure({"gpu-smallest-instance": "disabled"})
    assert pack.analyze(LT, "pool", clean_template("g4dn.2xlarge")).diagnostics == []
    pack.configure({"gpu-smallest-instance": {"allowedInstanceTypes": ["g4dn.2xlarge"]}})
    assert pack.analyze(LT, "pool", clean_template("g4dn.2xlarge")).diagnostics == []
    pack.configure({"gpu-smallest-instance": "advisory"})
    [d] = pack.analyze(LT, "pool", clean_template("g4dn.2xlarge")).diagnostics
    assert d.enforcement_level == "advisory"


def test_without_a_baseline_require_baseline_makes_the_upsize_rule_say_cannot_verify(
    pack: PolicyPackHarness,
) -> None:
    pack.configure({"gpu-no-vertical-upsize": {"requireBaseline": True}})
    [d] = pack.analyze(LT, "pool", clean_template("g4dn.xlarge")).diagnostics
    assert (d.policy_name, d.enforcement_level) == ("gpu-no-vertical-upsize", "advisory")
    assert d.detail.startswith("cannot verify: the old inputs are not known (no baseline)")
    pack.configure({"gpu-no-vertical-upsize": {"requireBaseline": True,
                                               "unknownEnforcement": "mandatory"}})
    [d] = pack.analyze(LT, "pool", clean_template("g4dn.xlarge")).diagnostics
    assert d.enforcement_level == "mandatory"  # fail closed: no `pulumi up` without a baseline


# -- unknowns during preview -----------------------------------------------------------------


def test_an_unknown_instance_type_is_an_advisory_cannot_verify(pack: PolicyPackHarness) -> None:
    pack.configure({})
    props = clean_template("g4dn.xlarge") | {"instanceType": UNKNOWN}
    [d] = pack.analyze(LT, "pool", props).diagnostics
    assert (d.policy_name, d.enforcement_level) == ("gpu-smallest-instance", "advisory")
    assert d.detail == "cannot verify: instance type unknown until apply"
    assert d.urn == pack.urn(LT, "pool")
    # unknownEnforcement raises it; a pack never crashes on an unknown value.
    pack.configure({"gpu-smallest-instance": {"unknownEnforcement": "mandatory"}})
    [d] = pack.analyze(LT, "pool", props).diagnostics
    assert d.enforcement_level == "mandatory"


def test_unknowns_everywhere_never_crash_and_never_pass_silently(pack: PolicyPackHarness) -> None:
    pack.configure({})
    props = {k: UNKNOWN for k in clean_template("g4dn.xlarge")}
    result = pack.analyze(LT, "pool", props)
    assert result.diagnostics, "an all-unknown GPU template cannot pass silently"
    assert all("cannot verify" in d.detail or d.enforcement_level == "advisory"
               for d in result.diagnostics)
    assert not [d for d in result.diagnostics if "can't run policy" in d.message]


# -- stack policies --------------------------------------------------------------------------


def test_an_asg_without_a_gpu_scaling_policy_fails_analyze_stack(pack: PolicyPackHarness) -> None:
    pack.configure({})
    lt_urn = pack.urn(LT, "pool")
    group = {"name": "gpu-pool", "maxSize": 4, "minSize": 1, "tags": [
        {"key": k, "value": v, "propagateAtLaunch": True} for k, v in TAGS.items()],
        "mixedInstancesPolicy": {"launchTemplate": {
            "launchTemplateSpecification": {"launchTemplateId": UNKNOWN, "version": "$Latest"},
            "overrides": [{"instanceType": "g4dn.xlarge"}]}}}
    resources = [
        Resource(LT, "pool", clean_template("g4dn.xlarge")),
        Resource(ASG, "pool", group, dependencies=[lt_urn],
                 property_dependencies={"mixedInstancesPolicy": [lt_urn]}),
    ]
    result = pack.analyze_stack(resources)
    [d] = result.mandatory
    assert (d.policy_name, d.urn) == ("gpu-pool-scales-on-utilisation", pack.urn(ASG, "pool"))
    assert "no target-tracking scaling policy on GPU utilisation" in d.detail

    policy = {"autoscalingGroupName": "gpu-pool", "policyType": "TargetTrackingScaling",
              "targetTrackingConfiguration": {"targetValue": 70, "customizedMetricSpecification": {
                  "metricName": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
                  "statistic": "Average", "metricDimensions": [
                      {"name": "AutoScalingGroupName", "value": "gpu-pool"}]}}}
    fixed = pack.analyze_stack([*resources, Resource("aws:autoscaling/policy:Policy", "gpu",
                                                     policy)])
    assert fixed.mandatory == []


# -- bad config ------------------------------------------------------------------------------


def test_bad_config_is_refused_at_configure_with_every_problem(
    pack: PolicyPackHarness, tmp_path: Path
) -> None:
    with pytest.raises(PackRpcError) as e:
        pack.configure({
            "gpu-smallest-instance": {"maxPerGpuPremiumPct": -5},
            "gpu-no-vertical-upsize": {"baseline": str(tmp_path / "missing.json")},
            "gpu-smallest-instanse": "disabled",
        }, as_cli=False)
    msg = str(e.value)
    assert "INVALID_ARGUMENT" in msg and "invalid policy pack config for gpupool" in msg
    assert "gpu-smallest-instance: maxPerGpuPremiumPct:" in msg
    assert f"baseline {tmp_path / 'missing.json'}: cannot read it" in msg
    assert ("gpu-smallest-instanse: pack gpupool has no such policy (did you mean "
            "gpu-smallest-instance?)") in msg
    # Had the CLI carried on, the policy would not pass either: it reports the problem.
    [d] = pack.analyze(LT, "pool", clean_template("g4dn.xlarge")).for_policy(
        "gpu-smallest-instance")
    assert d.enforcement_level == "mandatory" and "invalid policy config" in d.detail
    pack.configure({})
