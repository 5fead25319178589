"""Shared wording helpers of the rules."""

from __future__ import annotations

import pytest

from policies.rules._common import prop


@pytest.mark.parametrize(
    ("rtype", "path", "expected"),
    [
        ("aws:ec2/launchTemplate:LaunchTemplate", "metadata_options.http_tokens",
         "metadataOptions.httpTokens"),
        ("aws_launch_template", "metadata_options.http_tokens", "metadata_options.http_tokens"),
        ("aws:autoscaling/group:Group", "min_size", "minSize"),
        ("aws:autoscaling/group:Group", "max_size", "maxSize"),
        ("kubernetes:apps/v1:Deployment", "spec", "spec"),
        ("aws:ec2/instance:Instance", "ebs_block_device.encrypted", "ebsBlockDevices.encrypted"),
        ("aws_instance", "ebs_block_device.encrypted", "ebs_block_device.encrypted"),
        ("aws:autoscaling/group:Group", "tag.propagate_at_launch", "tags.propagateAtLaunch"),
        ("aws:autoscaling/policy:Policy",
         "target_tracking_configuration.customized_metric_specification.metric_dimension",
         "targetTrackingConfiguration.customizedMetricSpecification.metricDimensions"),
    ],
)
def test_property_names_follow_the_source(rtype: str, path: str, expected: str) -> None:
    assert prop(rtype, path) == expected


def test_pulumis_renamed_blocks_are_the_sdks_own_names() -> None:
    """prop()'s table of blocks Pulumi pluralises, held against pulumi-aws's typed args."""
    import inspect
    import re

    import pulumi_aws as aws

    from policies.rules._common import _PULUMI_RENAMED

    where = {
        "ebs_block_device": aws.ec2.InstanceArgs,
        "ephemeral_block_device": aws.ec2.InstanceArgs,
        "network_interface": aws.ec2.InstanceArgs,
        "tag": aws.autoscaling.GroupArgs,
        "override": aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs,
        "metric_dimension":
            aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationArgs,
        "step_adjustment": aws.autoscaling.PolicyArgs,
    }
    assert set(where) == set(_PULUMI_RENAMED)
    for tf_name, args in where.items():
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", _PULUMI_RENAMED[tf_name]).lower()
        params = inspect.signature(args.__init__).parameters
        assert snake in params and tf_name not in params, (tf_name, args.__name__)
