"""Every name, description and tag the program emits, held against AWS's documented limits.

The mock runtime never runs AWS's own validation, so these tests stand in for it. The
constraints, with the API reference that states each one, are in ``infra/aws/limits.py``:

- security group name and description: EC2 API_CreateSecurityGroup (GroupName, GroupDescription:
  up to 255 of a-z, A-Z, 0-9, spaces and ._-:/()#,@[]+=&;{}!$*)
- security group rule description: EC2 API_IpRange (Description: same characters, 255)
- EC2 tags: EC2 API_Tag (keys up to 127 characters, not aws:; values up to 256)
- launch template name: EC2 API_CreateLaunchTemplate (3-128 of [a-zA-Z0-9().-/_])
- Auto Scaling group and scaling policy names, Auto Scaling tags: Auto Scaling API reference
  (CreateAutoScalingGroup, PutScalingPolicy, Tag)
- IAM role and instance profile names, role description, IAM tags: IAM API_CreateRole,
  API_CreateInstanceProfile, API_Tag (role name 1-64 of [\\w+=,.@-]; tags: letters, separators,
  numbers and _.:/=+-@)
- placement group name (EC2 API_CreatePlacementGroup), lifecycle hook name (Auto Scaling
  API_LifecycleHookSpecification), Cloud Map namespace and service names, descriptions and tags
  (API_CreatePrivateDnsNamespace, API_CreateService, API_Tag), the target-tracking metric's
  namespace, name and dimensions (CloudWatch API_PutMetricData, API_Dimension), the monitoring's
  alarm name and description, dashboard name, SNS topic name and their tags (CloudWatch
  API_PutMetricAlarm, API_PutDashboard, API_Tag; SNS API_CreateTopic, API_Tag)

Where the AWS SDK's service models (botocore, installed with boto3) record a constraint, the
table is held against them too; completeness is held by walking every input of every AWS
resource of the offline plans for keys that name, describe or tag.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import load_stack
from gpupool.errors import InputError
from infra.aws import limits
from infra.offline import OfflineError, OfflinePlan, run_offline

from .conftest import EXISTING_VPC_STACK, STACKS

# The longest names and tag values the stack models accept, with every character they allow.
WORST_CASE_STACK = """\
    config:
      aws:region: us-east-1
      gpupool:environment: staging
      gpupool:team: "Team_ .:/=+-@ Zz09"
      gpupool:costCenter: "cc_ .:/=+-@ 0123456789 0123456789 0123456789 0123456789 01234567"
      gpupool:tags:
        "ÄÖÜ key_ .:/=+-@ with every allowed character 0123456789": "välue_ .:/=+-@ ñ 9"
        "k": ""
      gpupool:network:
        createVpc: true
        cidr: 10.70.0.0/16
        azCount: 3
      gpupool:pools:
        - name: p0123456789abcdefghijklmnopqrst9
          gpu: A10G
          minSize: 1
          maxSize: 3
          team: "t_ .:/=+-@"
          costCenter: "c_ .:/=+-@"
      gpupool:remoteGpu:
        - name: r0123456789abcdefghijklmnopqrst9
          gpu: T4
          maxSize: 2
          port: 18515
          budget: {minGbps: 1, maxRttUs: 500}
          clients: {instanceType: c7i.xlarge, maxSize: 2}
      gpupool:monitoring: {createAlarmTopic: true}
"""


def problems_of(plan: OfflinePlan) -> list[str]:
    out = []
    for r in plan.resources:
        if r.custom:
            out += [f"{r.type} {r.name}: {p}"
                    for p in limits.resource_problems(r.type, r.name, r.inputs)]
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_kit_stacks_emit_only_what_aws_accepts(stack: str, stack_plans: dict[str, Any]) -> None:
    _, plan = stack_plans[stack]
    assert problems_of(plan) == []


def test_existing_vpc_stack_emits_only_what_aws_accepts(
    write_stack: Callable[[str, str], Path],
) -> None:
    """Regression: the pool's egress rule to an existing VPC said "the VPC's own endpoints", and
    AWS refuses an apostrophe in a security group rule description."""
    plan = run_offline(load_stack(str(write_stack("edge", EXISTING_VPC_STACK))))
    rules = [r for r in plan.resources if r.type.startswith("aws:vpc/securityGroup")]
    assert rules and all("'" not in r.inputs["description"] for r in rules)
    assert problems_of(plan) == []


def test_worst_case_stack_emits_only_what_aws_accepts(
    write_stack: Callable[[str, str], Path],
) -> None:
    loaded = load_stack(str(write_stack("s-1", WORST_CASE_STACK)))
    plan = run_offline(loaded)
    assert len(plan.resources) > 30
    assert problems_of(plan) == []


@pytest.mark.parametrize(
    ("limit", "value", "expected"),
    [
        (limits.SG_RULE_DESCRIPTION, "HTTPS to the VPC's own endpoints", "characters AWS refuses"),
        (limits.SG_DESCRIPTION, "x" * 256, "0-255 characters"),
        (limits.ROLE_NAME, "r" * 65, "1-64 characters"),
        (limits.ROLE_NAME, "team role", "characters AWS refuses"),
        (limits.LT_NAME, "pool:lt", "characters AWS refuses"),
        (limits.IAM_TAG_VALUE, "R&D", "characters AWS refuses"),
        (limits.EC2_TAG_KEY, "k" * 128, "1-127 characters"),
    ],
)
def test_limits_refuse_what_aws_refuses(limit: limits.Limit, value: str, expected: str) -> None:
    (problem,) = limit.problems(value)
    assert expected in problem
    assert limit.source.startswith("https://docs.aws.amazon.com/")


def test_reserved_tag_prefix_is_refused() -> None:
    found = list(limits.tag_problems("aws:ec2/vpc:Vpc", {"tags": {"aws:owner": "x"}}))
    assert found == ["EC2 tag key 'aws:owner' may not begin with aws: (reserved for AWS)"]


def test_autoname_too_long_for_iam_fails_at_plan_time(
    write_stack: Callable[[str, str], Path],
) -> None:
    """Stack name + pool name + "-role" + Pulumi's 8 characters must fit IAM's 64."""
    text = textwrap.dedent(WORST_CASE_STACK)
    path = write_stack("ml-research-platform-production", text)
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(path)))
    (line,) = e.value.problems
    assert "IAM role name must be 1-64 characters" in line
    assert "shorten the stack name or the pool name" in line


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("gpupool:tags", {"owner": "R&D"}, "gpupool:tags.owner: expected letters, digits"),
        ("gpupool:tags", {"aws:owner": "x"}, "do not begin with aws:"),
        ("gpupool:tags", {"k" * 128: "x"}, "expected at most 127 characters"),
    ],
)
def test_config_refuses_tags_aws_would_refuse(key: str, value: Any, expected: str,
                                             write_stack: Callable[[str, str], Path]) -> None:
    import yaml

    doc = yaml.safe_load(textwrap.dedent(EXISTING_VPC_STACK))
    doc["config"][key] = value
    path = write_stack("t", yaml.safe_dump(doc))
    with pytest.raises(InputError) as e:
        load_stack(str(path))
    assert any(expected in line for line in e.value.problems), e.value.problems


def test_pool_team_with_a_character_iam_refuses_is_a_config_error(
    write_stack: Callable[[str, str], Path],
) -> None:
    text = textwrap.dedent(EXISTING_VPC_STACK).replace(
        "targetGpuUtilisation: 55", "targetGpuUtilisation: 55\n      team: R&D")
    with pytest.raises(InputError) as e:
        load_stack(str(write_stack("t", text)))
    assert any("pools[0].team: expected a tag value" in line for line in e.value.problems)


# --------------------------------------------------------------------------- completeness

# Keys that name, describe or tag (``name``, ``…Name``, ``description``, ``…Description``,
# ``tags``) whose value is not the program's to constrain: another resource's name or id (held
# where that resource is declared), or a value AWS itself defines.
NOT_OURS: dict[tuple[str, str], str] = {
    ("aws:autoscaling/policy:Policy", "autoscalingGroupName"): "the group's name",
    ("aws:autoscaling/lifecycleHook:LifecycleHook", "autoscalingGroupName"): "the group's name",
    ("aws:ec2/launchTemplate:LaunchTemplate", "placement.groupName"): "the placement group's",
    ("aws:ec2/launchTemplate:LaunchTemplate", "blockDeviceMappings[].deviceName"):
        "read from the image (aws.ec2.get_ami)",
    ("aws:ec2/vpcEndpoint:VpcEndpoint", "serviceName"): "AWS's endpoint service name",
    ("aws:servicediscovery/service:Service", "namespaceId"): "the namespace's id",
    ("aws:servicediscovery/service:Service", "dnsConfig.namespaceId"): "the namespace's id",
}


def _names_a_thing(key: str) -> bool:
    return key in ("name", "description", "tags") or key.endswith(("Name", "Description"))


def emitted_paths(inputs: Any, path: str = "") -> set[str]:
    """Input paths whose key names, describes or tags something (``[]``: a list's items)."""
    out: set[str] = set()
    if isinstance(inputs, dict):
        for key, value in inputs.items():
            here = f"{path}.{key}" if path else key
            if _names_a_thing(key):
                out.add(here)
                if key == "tags":
                    continue
            out |= emitted_paths(value, here)
    elif isinstance(inputs, list):
        for item in inputs:
            out |= emitted_paths(item, f"{path}[]")
    return out


@pytest.fixture(scope="module")
def every_plan(stack_plans: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
               ) -> dict[str, OfflinePlan]:
    folder = tmp_path_factory.mktemp("limits")
    plans = {name: plan for name, (_, plan) in stack_plans.items()}
    for name, text in (("edge", EXISTING_VPC_STACK), ("s-1", WORST_CASE_STACK)):
        path = folder / f"Pulumi.{name}.yaml"
        path.write_text(textwrap.dedent(text))
        plans[name] = run_offline(load_stack(str(path)))
    return plans


def test_every_name_description_and_tag_emitted_is_held_against_a_limit(
    every_plan: dict[str, OfflinePlan],
) -> None:
    """A new resource type, or a new named field, fails here until its limit is recorded."""
    unchecked: set[tuple[str, str]] = set()
    types: set[str] = set()
    for plan in every_plan.values():
        for r in plan.resources:
            if not r.custom or not r.type.startswith("aws:"):
                continue  # Kubernetes objects: held against their schemas (test_render.py)
            types.add(r.type)
            allowed = limits.checked_paths(r.type)
            unchecked |= {(r.type, p) for p in emitted_paths(dict(r.inputs))
                          if not _covered(p, allowed) and (r.type, p) not in NOT_OURS}
            if r.type in limits.NAMES:  # the name AWS sees is checked, given or autonamed
                assert limits.physical_name(r.type, r.name, r.inputs)
    assert unchecked == set()
    assert {"aws:ec2/placementGroup:PlacementGroup",  # the tiers and monitoring are planned
            "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace",
            "aws:servicediscovery/service:Service", "aws:cloudwatch/metricAlarm:MetricAlarm",
            "aws:cloudwatch/dashboard:Dashboard", "aws:sns/topic:Topic", "aws:kms/key:Key",
            "aws:autoscaling/lifecycleHook:LifecycleHook"} <= types


def test_every_autonamed_type_has_its_name_checked(every_plan: dict[str, OfflinePlan]) -> None:
    """An autonamed resource has no name among its inputs: Pulumi makes one from the logical
    name. Every type whose args take ``name`` (pulumi-aws's typed args) is in the name table."""
    import importlib
    import inspect

    missing = set()
    for plan in every_plan.values():
        for r in plan.resources:
            if not r.custom or not r.type.startswith("aws:"):
                continue
            _, module, cls = r.type.split(":")
            args = getattr(importlib.import_module(f"pulumi_aws.{module.split('/')[0]}"),
                           f"{cls}Args")
            takes = set(inspect.signature(args.__init__).parameters)
            if {"name", "name_prefix"} & takes and r.type not in limits.NAMES:
                missing.add(r.type)
    assert missing == set()


def _covered(path: str, checked: frozenset[str]) -> bool:
    """Checked itself, or inside a checked map or list (a tag map, alarm dimensions)."""
    return any(path == c or path.startswith((f"{c}.", f"{c}[]")) for c in checked)


def test_worst_case_tier_names_are_at_the_limits(every_plan: dict[str, OfflinePlan]) -> None:
    plan = every_plan["s-1"]
    (namespace,) = plan.of_type("aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace")
    assert namespace.inputs["name"] == "r0123456789abcdefghijklmnopqrst9.s-1.gpupool.internal"
    (hook,) = plan.of_type("aws:autoscaling/lifecycleHook:LifecycleHook")
    assert hook.inputs["name"] == "gpupool-deregister"


@pytest.mark.parametrize(
    ("type_", "inputs", "expected"),
    [
        ("aws:autoscaling/lifecycleHook:LifecycleHook", {"name": "deregister proxy"},
         "lifecycle hook name 'deregister proxy' has characters AWS refuses"),
        ("aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace",
         {"name": "tier.stack.gpupool.internal ", "description": "d"},
         "Cloud Map private DNS namespace name"),
        ("aws:servicediscovery/service:Service", {"name": "-proxy"},
         "Cloud Map service name '-proxy' has characters AWS refuses"),
        ("aws:servicediscovery/service:Service", {"name": "proxy", "description": "d" * 1025},
         "Cloud Map description must be 0-1024 characters"),
        ("aws:servicediscovery/service:Service", {"name": "proxy", "tags": {"k" * 129: "v"}},
         "Cloud Map tag key must be 1-128 characters"),
        ("aws:autoscaling/policy:Policy", {"targetTrackingConfiguration": {
            "customizedMetricSpecification": {"namespace": ":CWAgent", "metricName": "m",
                                              "metricDimensions": [{"name": "n", "value": ""}]}}},
         "CloudWatch namespace ':CWAgent' has characters AWS refuses"),
        ("aws:autoscaling/policy:Policy", {"targetTrackingConfiguration": {
            "customizedMetricSpecification": {"namespace": "CWAgent", "metricName": "m",
                                              "metricDimensions": [{"name": "n", "value": ""}]}}},
         "CloudWatch dimension value must be 1-1024 characters"),
        ("aws:autoscaling/group:Group",
         {"tags": [{"key": "k" * 128, "value": "v", "propagateAtLaunch": True}]},
         "EC2 tag key must be 1-127 characters"),
        ("aws:ec2/placementGroup:PlacementGroup", {"name": "grupo-de-colocación"},
         "placement group name 'grupo-de-colocación' has characters AWS refuses"),
        ("aws:cloudwatch/dashboard:Dashboard", {"dashboardName": "gpupool.prod"},
         "CloudWatch dashboard name 'gpupool.prod' has characters AWS refuses"),
        ("aws:cloudwatch/metricAlarm:MetricAlarm",
         {"alarmDescription": "d" * 1025, "dimensions": {"AutoScalingGroupName": ""}},
         "CloudWatch alarm description must be 0-1024 characters"),
        ("aws:cloudwatch/metricAlarm:MetricAlarm", {"dimensions": {"": "g"}},
         "CloudWatch dimension name must be 1-255 characters"),
        ("aws:cloudwatch/metricAlarm:MetricAlarm", {"dimensions": {"AutoScalingGroupName": ""}},
         "CloudWatch dimension value must be 1-1024 characters"),
        ("aws:sns/topic:Topic", {"name": "gpu.alerts"},
         "SNS topic name 'gpu.alerts' has characters AWS refuses"),
    ],
)
def test_nested_and_tier_values_aws_refuses(type_: str, inputs: dict[str, Any],
                                            expected: str) -> None:
    found = list(limits.resource_problems(type_, "x", inputs))
    assert any(expected in p for p in found), found


# --------------------------------------------------------------------------- the SDK's models

# (limit, botocore service, shape): AWS's own service models, as the SDKs are generated from.
# EC2's security group texts, launch template and placement group names, CloudWatch's dashboard
# name and SNS's topic name are documented in the API reference only (their models record no
# constraint).
MODELLED: list[tuple[limits.Limit, str, str]] = [
    (limits.LT_DESCRIPTION, "ec2", "VersionDescription"),
    (limits.ASG_NAME, "autoscaling", "XmlStringMaxLen255"),
    (limits.ASG_POLICY_NAME, "autoscaling", "XmlStringMaxLen255"),
    (limits.ASG_TAG_KEY, "autoscaling", "TagKey"),
    (limits.ASG_TAG_VALUE, "autoscaling", "TagValue"),
    (limits.LIFECYCLE_HOOK_NAME, "autoscaling", "AsciiStringMaxLen255"),
    (limits.ROLE_NAME, "iam", "roleNameType"),
    (limits.ROLE_DESCRIPTION, "iam", "roleDescriptionType"),
    (limits.ROLE_POLICY_NAME, "iam", "policyNameType"),
    (limits.PROFILE_NAME, "iam", "instanceProfileNameType"),
    (limits.IAM_TAG_KEY, "iam", "tagKeyType"),
    (limits.IAM_TAG_VALUE, "iam", "tagValueType"),
    (limits.NAMESPACE_NAME, "servicediscovery", "NamespaceNamePrivate"),
    (limits.SERVICE_NAME, "servicediscovery", "ServiceName"),
    (limits.CLOUD_MAP_DESCRIPTION, "servicediscovery", "ResourceDescription"),
    (limits.CLOUD_MAP_TAG_KEY, "servicediscovery", "TagKey"),
    (limits.CLOUD_MAP_TAG_VALUE, "servicediscovery", "TagValue"),
    (limits.METRIC_NAME, "cloudwatch", "MetricName"),
    (limits.METRIC_NAMESPACE, "cloudwatch", "Namespace"),
    (limits.DIMENSION_NAME, "cloudwatch", "DimensionName"),
    (limits.DIMENSION_VALUE, "cloudwatch", "DimensionValue"),
    (limits.ALARM_NAME, "cloudwatch", "AlarmName"),
    (limits.ALARM_DESCRIPTION, "cloudwatch", "AlarmDescription"),
    (limits.CLOUDWATCH_TAG_KEY, "cloudwatch", "TagKey"),
    (limits.CLOUDWATCH_TAG_VALUE, "cloudwatch", "TagValue"),
    (limits.SNS_TAG_KEY, "sns", "TagKey"),
    (limits.SNS_TAG_VALUE, "sns", "TagValue"),
    (limits.KMS_DESCRIPTION, "kms", "DescriptionType"),
    (limits.KMS_TAG_KEY, "kms", "TagKeyType"),
    (limits.KMS_TAG_VALUE, "kms", "TagValueType"),
]

# characters that tell character sets apart: ASCII, Latin-1, other scripts, separators,
# symbols, the edges of XmlString, a character beyond the BMP
_PROBES = [chr(c) for c in range(0x7f)] + list("\u00a0\u00a1\u00e9\u00ff\u0100ñ€ß中\u2028"
                                                 "\u3000\ud7ff\ue000\ufffd\ufffe") + ["\U0001f600"]


def _python_pattern(java: str) -> str | None:
    """A model's (Java) pattern for ``re``: supplementary planes as Python spells them;
    None when it uses Unicode properties ``re`` lacks."""
    if "\\p{" in java:
        return None
    return java.replace("\\uD800\\uDC00-\\uDBFF\\uDFFF", "\\U00010000-\\U0010FFFF")


@pytest.mark.parametrize(("limit", "service", "shape"), MODELLED,
                         ids=[f"{s}.{n}" for _, s, n in MODELLED])
def test_limits_agree_with_the_aws_sdk_service_models(limit: limits.Limit, service: str,
                                                      shape: str) -> None:
    import re

    import botocore.session

    model = botocore.session.get_session().get_service_model(service).shape_for(shape).metadata
    assert "max" in model or "pattern" in model  # a constraint to agree with
    assert limit.max_len == model.get("max", limit.max_len)
    assert limit.min_len == model.get("min", limit.min_len)
    pattern = _python_pattern(model.get("pattern", ""))
    if not pattern:
        return  # IAM's tag characters: Unicode properties, held by the tests of _iam_tag_chars
    for probe in [*_PROBES, *(p * 2 for p in _PROBES), "arn:x", "a.b", "a" * 64]:
        if limit.min_len <= len(probe) <= limit.max_len:
            theirs = re.fullmatch(pattern, probe) is not None
            assert (limit.problems(probe) == []) == theirs, (limit.what, probe, pattern)
