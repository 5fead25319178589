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
