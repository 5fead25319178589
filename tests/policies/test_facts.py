"""Facts read the same from Terraform-shaped and Pulumi-shaped inputs, and never guess."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from policies.facts import (
    PlanIndex,
    group_tags,
    http_tokens,
    launch_tags,
    own_instance_types,
    resource_tags,
    scaling_policy,
    volumes,
)
from policies.model import UNKNOWN, ResourceChange, normalise_inputs
from policies.rules.base import Example

U = "(known after apply)"


def one(resource: Mapping[str, Any]) -> ResourceChange:
    [c] = Example("t", True, [resource]).changes()
    return c


def plan(*resources: Mapping[str, Any]) -> PlanIndex:
    return PlanIndex(Example("t", True, resources).changes())


TF_ASG = {"type": "aws_autoscaling_group", "name": "g", "address": "aws_autoscaling_group.g",
          "new": {"name": "pool", "max_size": 4,
                  "mixed_instances_policy": [{"launch_template": [{
                      "launch_template_specification": [{"launch_template_id": U}],
                      "override": [{"instance_type": "g4dn.xlarge", "weighted_capacity": "2"},
                                   {"instance_type": "g5.xlarge"}]}]}],
                  "tag": [{"key": "team", "value": "ml", "propagate_at_launch": True},
                          {"key": "env", "value": "dev", "propagate_at_launch": False}]}}
PULUMI_ASG = {"type": "aws:autoscaling/group:Group", "name": "g",
              "new": {"name": "pool", "maxSize": 4,
                      "mixedInstancesPolicy": {"launchTemplate": {
                          "launchTemplateSpecification": {"launchTemplateId": U},
                          "overrides": [{"instanceType": "g4dn.xlarge", "weightedCapacity": "2"},
                                        {"instanceType": "g5.xlarge"}]}},
                      "tags": [{"key": "team", "value": "ml", "propagateAtLaunch": True},
                               {"key": "env", "value": "dev", "propagateAtLaunch": False}]}}


@pytest.mark.parametrize("asg", [TF_ASG, PULUMI_ASG], ids=["terraform", "pulumi"])
def test_asg_overrides_and_tags_in_both_shapes(asg: Mapping[str, Any]) -> None:
    c = one(asg)
    types = own_instance_types(c)
    assert types.known == ("g4dn.xlarge", "g5.xlarge") and types.complete
    tags = group_tags(c.after)
    assert tags is not UNKNOWN
    assert [(t.key, t.propagate_at_launch) for t in tags] == [("team", True), ("env", False)]


TF_POLICY = {"type": "aws_autoscaling_policy", "name": "p", "address": "aws_autoscaling_policy.p",
             "new": {"autoscaling_group_name": "pool", "policy_type": "TargetTrackingScaling",
                     "target_tracking_configuration": [{
                         "target_value": 70, "disable_scale_in": False,
                         "customized_metric_specification": [{
                             "metric_name": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
                             "statistic": "Average",
                             "metric_dimension": [{"name": "AutoScalingGroupName",
                                                   "value": "pool"}]}]}]}}
PULUMI_POLICY = {"type": "aws:autoscaling/policy:Policy", "name": "p",
                 "new": {"autoscalingGroupName": "pool", "policyType": "TargetTrackingScaling",
                         "targetTrackingConfiguration": {
                             "targetValue": 70, "disableScaleIn": False,
                             "customizedMetricSpecification": {
                                 "metricName": "nvidia_smi_utilization_gpu",
                                 "namespace": "CWAgent", "statistic": "Average",
                                 "metricDimensions": [{"name": "AutoScalingGroupName",
                                                       "value": "pool"}]}}}}


@pytest.mark.parametrize("policy", [TF_POLICY, PULUMI_POLICY], ids=["terraform", "pulumi"])
def test_scaling_policy_in_both_shapes(policy: Mapping[str, Any]) -> None:
    sp = scaling_policy(one(policy).after)
    assert (sp.policy_type, sp.group_name, sp.metric_name, sp.namespace, sp.statistic,
            dict(sp.dimensions), sp.target, sp.disable_scale_in, sp.enabled) == (  # type: ignore[arg-type]
        "TargetTrackingScaling", "pool", "nvidia_smi_utilization_gpu", "CWAgent", "Average",
        {"AutoScalingGroupName": "pool"}, 70.0, False, True)


def test_scaling_policy_unknowns_and_defaults() -> None:
    sp = scaling_policy(normalise_inputs({"autoscalingGroupName": "pool"}))
    assert sp.policy_type == "SimpleScaling" and sp.metric_name is None
    unknown_ttc = scaling_policy({"policy_type": "TargetTrackingScaling",
                                  "target_tracking_configuration": UNKNOWN})
    assert unknown_ttc.metric_name is UNKNOWN and unknown_ttc.target is UNKNOWN
    predefined = scaling_policy(normalise_inputs({
        "policyType": "TargetTrackingScaling",
        "targetTrackingConfiguration": {"targetValue": 50, "predefinedMetricSpecification": {
            "predefinedMetricType": "ASGAverageCPUUtilization"}}}))
    assert predefined.predefined_metric == "ASGAverageCPUUtilization"


@pytest.mark.parametrize(("inputs", "expected"), [
    ({"metadata_options": [{"http_tokens": "required"}]}, "required"),  # Terraform
    (normalise_inputs({"metadataOptions": {"httpTokens": "required"}}), "required"),  # Pulumi
    ({"metadata_options": [{"http_tokens": "optional"}]}, "optional"),
    ({}, None),
    ({"metadata_options": []}, None),
    ({"metadata_options": UNKNOWN}, UNKNOWN),
    ({"metadata_options": [{"http_tokens": UNKNOWN}]}, UNKNOWN),
])
def test_http_tokens(inputs: Mapping[str, Any], expected: object) -> None:
    assert http_tokens(inputs) is expected or http_tokens(inputs) == expected


def test_volumes_of_instances_templates_and_configurations() -> None:
    tf_instance = one({"type": "aws_instance", "name": "i", "address": "aws_instance.i",
                       "new": {"root_block_device": [{"encrypted": True}],
                               "ebs_block_device": [{"device_name": "/dev/sdf",
                                                     "encrypted": U}]}})
    assert [(v.label, v.encrypted) for v in volumes(tf_instance)] == [
        ("root volume", True), ("EBS volume /dev/sdf", UNKNOWN)]
    pulumi_lt = one({"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "lt",
                     "new": {"blockDeviceMappings": [
                         {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}},
                         {"deviceName": "/dev/sdf", "ebs": {"encrypted": "false"}}]}})
    assert [v.encrypted for v in volumes(pulumi_lt)] == [True, False]
    bare_lc = one({"type": "aws:ec2/launchConfiguration:LaunchConfiguration", "name": "lc",
                   "new": {"instanceType": "g4dn.xlarge"}})
    [root] = volumes(bare_lc)
    assert root.encrypted is False and root.declared is False


def test_tags_include_default_tags_and_launch_tag_specifications() -> None:
    tags = resource_tags({"tags": {"team": "ml"}, "tags_all": {"team": "ml", "env": "dev"}})
    assert tags.keys == {"team", "env"} and not tags.incomplete
    assert resource_tags({"tags": {"team": "ml"}, "tags_all": UNKNOWN}).incomplete
    tf_specs = launch_tags({"tag_specifications": [
        {"resource_type": "instance", "tags": {"team": "ml"}},
        {"resource_type": "volume", "tags": {"env": "dev"}}]})
    assert tf_specs.keys == {"team"}
    pulumi = normalise_inputs({"tagSpecifications": [
        {"resourceType": "instance", "tags": {"cost-center": "cc"}}]})
    assert launch_tags(pulumi).keys == {"cost-center"}  # user tag keys are not snake_cased


def test_eks_node_group_types() -> None:
    tf = one({"type": "aws_eks_node_group", "name": "n", "address": "aws_eks_node_group.n",
              "new": {"instance_types": ["g5.xlarge", U]}})
    types = own_instance_types(tf)
    assert types.known == ("g5.xlarge",) and not types.complete


def test_group_types_follow_references_ids_and_names() -> None:
    lt_tf = {"type": "aws_launch_template", "name": "lt", "address": "aws_launch_template.lt",
             "old": {"id": "lt-0123", "name": "gpu", "instance_type": "g4dn.xlarge"},
             "new": {"id": "lt-0123", "name": "gpu", "instance_type": "g4dn.2xlarge"}}
    by_id = {"type": "aws_autoscaling_group", "name": "a", "address": "aws_autoscaling_group.a",
             "old": {"launch_template": [{"id": "lt-0123"}]},
             "new": {"launch_template": [{"id": "lt-0123"}]}}
    index = plan(lt_tf, by_id)
    group = index.by_address["aws_autoscaling_group.a"]
    assert index.instance_types(group).known == ("g4dn.2xlarge",)
    assert index.instance_types(group, "old").known == ("g4dn.xlarge",)
    by_ref = {**by_id, "new": {"launch_template": [{"id": U}]},
              "references": {"launch_template.id": "aws_launch_template.lt"}}
    index = plan(lt_tf, by_ref)
    group = index.by_address["aws_autoscaling_group.a"]
    assert index.instance_types(group).via == "aws_launch_template.lt"
    unknown = {**by_id, "new": {"launch_template": [{"id": U}]}}
    index = plan(lt_tf, unknown)
    types = index.instance_types(index.by_address["aws_autoscaling_group.a"])
    assert types.known == () and types.unknown == "launch template id unknown until apply"


def test_group_types_through_a_launch_configuration() -> None:
    lc = {"type": "aws_launch_configuration", "name": "lc",
          "address": "aws_launch_configuration.lc",
          "new": {"name": "gpu-lc", "instance_type": "p3dn.24xlarge"}}
    asg = {"type": "aws_autoscaling_group", "name": "a", "address": "aws_autoscaling_group.a",
           "new": {"launch_configuration": "gpu-lc"}}
    index = plan(lc, asg)
    assert index.instance_types(index.by_address["aws_autoscaling_group.a"]).known == (
        "p3dn.24xlarge",)
    missing = plan({**asg, "new": {"launch_configuration": "elsewhere"}})
    types = missing.instance_types(missing.by_address["aws_autoscaling_group.a"])
    assert types.unknown == "launch configuration elsewhere is not in the plan"
