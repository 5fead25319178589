"""The parts every group of GPU hosts is built from, shared by ``GpuPool`` and ``RemoteGpuTier``.

A least-privilege instance profile (CloudWatch agent and SSM, plus what a caller adds), HTTPS
egress to the VPC endpoints only, a launch template with IMDSv2, an encrypted gp3 root volume
and no public IP, an autoscaling group with group metrics and instance refresh, and target
tracking on the group's GPU utilisation. Each function declares its resources as children of
``owner`` with the names a pool always had (``<name>-lt``, ``<name>-asg``, …), so URNs stay put.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_aws as aws

from gpupool.config.models import GpuPoolConfig
from infra.aws import limits, user_data
from infra.aws.network import PoolNetwork

# AWS Deep Learning Base OSS NVIDIA Driver GPU AMI (Ubuntu 22.04), per architecture.
_DLAMI: Final = "base-oss-nvidia-driver-gpu-ubuntu-22.04"
AMI_PARAMETERS: Final = {
    arch: f"/aws/service/deeplearning/ami/{arch}/{_DLAMI}/latest/ami-id"
    for arch in ("x86_64", "arm64")
}
ROOT_DEVICE: Final = "/dev/sda1"  # Ubuntu AMIs' root device; pools read theirs from the image
MANAGED_POLICIES: Final = ("CloudWatchAgentServerPolicy", "AmazonSSMManagedInstanceCore")
GROUP_METRICS: Final = (
    "GroupMinSize",
    "GroupMaxSize",
    "GroupDesiredCapacity",
    "GroupInServiceInstances",
    "GroupPendingInstances",
    "GroupStandbyInstances",
    "GroupTerminatingInstances",
    "GroupTotalInstances",
)
HTTPS: Final = 443
INSTANCE_TAGGED: Final = ("instance", "volume", "network-interface")

# pulumi-aws's nested argument classes, named once so the code below stays readable.
_Distribution = aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs
_GroupTemplate = aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs
_GroupTemplateSpec = (
    aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs
)
_GroupOverride = aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs
_MetricSpec = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationArgs
_MetricDimension = (
    aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricDimensionArgs
)


def name_problem(name: str, children: Mapping[str, str]) -> str | None:
    """The first documented AWS limit a child's derived name breaks (``children``: type →
    suffix of ``<name>-<suffix>``, which Pulumi autonames with 8 more characters), if any: so
    that a component fails before it declares anything."""
    for type_, suffix in children.items():
        problems = list(limits.resource_problems(type_, f"{name}-{suffix}", {}))
        if problems:
            return problems[0]
    return None


def child_of(owner: pulumi.Resource) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=owner)


class ImageRefused(pulumi.RunError):
    """The image cannot boot the hosts as configured (architecture, root volume too small)."""


@dataclass(frozen=True, slots=True)
class HostImage:
    """The image a group boots, as EC2 describes it."""

    image_id: str
    name: str
    root_device_name: str  # the block device mapping that sizes the root volume
    root_snapshot_gib: int | None  # the smallest root volume the image allows
    pinned: bool  # from gpupool:images, or the DLAMI's latest parameter at first deployment


def host_image(owner: pulumi.Resource, arch: str, pinned: str | None, *,
               root_volume_gib: int, who: str) -> HostImage:
    """The image id (pinned, or AWS's ``latest`` DLAMI parameter), described by EC2.

    Its root device name is what the launch template's root mapping must name (any other name
    adds a second volume and leaves the root at the snapshot's size), and its root snapshot size
    is the least ``rootVolumeGib`` can be (less fails every launch): both are read here, at plan
    time, and a mismatch stops the program before anything is declared.
    """
    invoke = pulumi.InvokeOptions(parent=owner)
    image_id = pinned or aws.ssm.get_parameter(
        name=AMI_PARAMETERS[arch], opts=invoke).insecure_value
    image = aws.ec2.get_ami(
        filters=[aws.ec2.GetAmiFilterArgs(name="image-id", values=[image_id])], opts=invoke)
    if image.architecture and image.architecture != arch:
        raise ImageRefused(
            f"{who}: image {image_id} ({image.name}) is {image.architecture}, the pool is {arch}; "
            f"pin an {arch} image under gpupool:images.{arch}")
    root = image.root_device_name or ROOT_DEVICE
    sizes = [int(m.ebs["volume_size"]) for m in image.block_device_mappings or []
             if m.device_name == root and m.ebs and str(m.ebs.get("volume_size", "")).isdigit()]
    snapshot = sizes[0] if sizes else None
    if snapshot is not None and root_volume_gib < snapshot:
        raise ImageRefused(
            f"{who}: rootVolumeGib: expected at least {snapshot} (the root snapshot of "
            f"{image_id}, {image.name}, is {snapshot} GiB), got {root_volume_gib}")
    return HostImage(image_id, str(image.name or ""), root, snapshot, pinned is not None)


def instance_profile(
    owner: pulumi.Resource,
    name: str,
    description: str,
    tags: Mapping[str, str],
    partition: str,
    policies: Sequence[str] = MANAGED_POLICIES,
) -> tuple[aws.iam.InstanceProfile, aws.iam.Role, list[aws.iam.RolePolicyAttachment]]:
    """A role EC2 alone may assume, with the AWS managed policies its agents need (GPU hosts:
    the CloudWatch agent's and SSM's; a host without the agent: SSM's only)."""
    child = child_of(owner)
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
    role = aws.iam.Role(
        f"{name}-role",
        aws.iam.RoleArgs(
            assume_role_policy=json.dumps(trust), description=description, tags=dict(tags)
        ),
        opts=child,
    )
    attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}",
            aws.iam.RolePolicyAttachmentArgs(
                role=role.name, policy_arn=f"arn:{partition}:iam::aws:policy/{policy}"
            ),
            opts=child,
        )
        for policy in policies
    ]
    profile = aws.iam.InstanceProfile(
        f"{name}-profile",
        aws.iam.InstanceProfileArgs(role=role.name, tags=dict(tags)),
        opts=child,
    )
    return profile, role, attachments


def rule(
    owner: pulumi.Resource,
    name: str,
    group: pulumi.Input[str],
    description: str,
    *,
    port: int = HTTPS,
    ingress: bool = False,
    **peer: pulumi.Input[str],
) -> aws.vpc.SecurityGroupIngressRule | aws.vpc.SecurityGroupEgressRule:
    """One TCP rule on ``group``; ``peer`` names the other side (a group, a CIDR, a list)."""
    fields: dict[str, Any] = dict(
        security_group_id=group, ip_protocol="tcp", from_port=port, to_port=port,
        description=description, **peer,
    )
    if ingress:
        return aws.vpc.SecurityGroupIngressRule(
            name, aws.vpc.SecurityGroupIngressRuleArgs(**fields), opts=child_of(owner))
    return aws.vpc.SecurityGroupEgressRule(
        name, aws.vpc.SecurityGroupEgressRuleArgs(**fields), opts=child_of(owner))


def endpoint_egress(
    owner: pulumi.Resource, name: str, sg: aws.ec2.SecurityGroup, net: PoolNetwork, who: str
) -> None:
    """HTTPS out to the VPC interface endpoints (named by security group) and to S3 only."""
    endpoints = net.endpoint_security_group_id
    if endpoints is not None:
        rule(owner, f"{name}-to-endpoints", sg.id, "HTTPS to the VPC interface endpoints",
             referenced_security_group_id=endpoints)
        rule(owner, f"{name}-into-endpoints", endpoints, f"HTTPS from {who}", ingress=True,
             referenced_security_group_id=sg.id)
    else:
        assert net.vpc_cidr is not None
        rule(owner, f"{name}-to-vpc", sg.id, "HTTPS to the interface endpoints in the VPC CIDR",
             cidr_ipv4=net.vpc_cidr)
    rule(owner, f"{name}-to-s3", sg.id, "HTTPS to S3 through the gateway endpoint",
         prefix_list_id=net.s3_prefix_list_id)


def launch_template(
    owner: pulumi.Resource,
    name: str,
    *,
    description: str,
    image_id: pulumi.Input[str],
    instance_type: str,
    user_data_b64: pulumi.Input[str] | None,
    profile_arn: pulumi.Input[str],
    security_group_ids: Sequence[pulumi.Input[str]],
    root_volume_gib: int,
    tags: Mapping[str, str],
    placement_group: pulumi.Input[str] | None = None,
    ena_express: bool = False,
    root_device_name: str = ROOT_DEVICE,
    keep_image: bool = False,
) -> aws.ec2.LaunchTemplate:
    """IMDSv2 only, encrypted gp3 root, no public IP, tags on instances, volumes and interfaces.

    ``placement_group`` puts every instance launched from it in that group (by name);
    ``ena_express`` turns on ENA Express (SRD) for TCP and UDP on the primary interface;
    ``root_device_name`` is the image's root device (see :func:`host_image`); ``keep_image``
    keeps the image the template was created with when the id comes from a ``latest`` parameter,
    so a new release does not roll the group (pin an id to move it).
    """
    srd = None
    if ena_express:
        srd = aws.ec2.LaunchTemplateNetworkInterfaceEnaSrdSpecificationArgs(
            ena_srd_enabled=True,
            ena_srd_udp_specification=(
                aws.ec2.LaunchTemplateNetworkInterfaceEnaSrdSpecificationEnaSrdUdpSpecificationArgs(
                    ena_srd_udp_enabled=True)),
        )
    return aws.ec2.LaunchTemplate(
        f"{name}-lt",
        aws.ec2.LaunchTemplateArgs(
            description=description,
            image_id=image_id,
            instance_type=instance_type,
            update_default_version=True,
            user_data=user_data_b64,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile_arn),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",  # IMDSv2 only
                http_put_response_hop_limit=2,  # containers sit one hop further away
            ),
            monitoring=aws.ec2.LaunchTemplateMonitoringArgs(enabled=True),
            network_interfaces=[
                aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                    device_index=0,
                    associate_public_ip_address="false",
                    delete_on_termination="true",
                    security_groups=list(security_group_ids),
                    ena_srd_specification=srd,
                )
            ],
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=root_device_name,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_size=root_volume_gib,
                        volume_type="gp3",
                        encrypted="true",
                        delete_on_termination="true",
                    ),
                )
            ],
            placement=(None if placement_group is None else
                       aws.ec2.LaunchTemplatePlacementArgs(group_name=placement_group)),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=dict(tags))
                for kind in INSTANCE_TAGGED
            ],
            tags=dict(tags),
        ),
        opts=pulumi.ResourceOptions.merge(
            child_of(owner),
            pulumi.ResourceOptions(ignore_changes=["imageId"] if keep_image else None)),
    )


def spot_distribution(pool: GpuPoolConfig) -> tuple[int, int]:
    """(on-demand base, on-demand % above base) for the group's instances distribution."""
    return pool.on_demand_base, round(100 * (1 - pool.spot_share))


def gpu_group(
    owner: pulumi.Resource,
    name: str,
    pool: GpuPoolConfig,
    *,
    template: aws.ec2.LaunchTemplate,
    instance_type: str,
    subnet_ids: pulumi.Input[Sequence[str]],
    tags: Mapping[str, str],
    depends_on: Sequence[pulumi.Resource],
    protect_from_scale_in: bool = False,
) -> aws.autoscaling.Group:
    """The pool's instances: one size only, spot above an on-demand base, refreshed in place.

    An instance refresh launches each replacement before it terminates the instance it
    replaces (minimum healthy 100 %, maximum 200 %), so a one-instance group never drops to
    zero. ``protect_from_scale_in`` launches instances protected from scale-in (training pools:
    target tracking must not terminate a running job); a refresh leaves protected instances
    alone until their protection is released. Lifecycle hooks are resources of their own
    (``aws.autoscaling.LifecycleHook``): the group's ``initial_lifecycle_hooks`` apply only when
    the group is created, so a hook added to an existing group would never exist.
    """
    base, above_base = spot_distribution(pool)
    return aws.autoscaling.Group(
        f"{name}-asg",
        aws.autoscaling.GroupArgs(
            min_size=pool.min_size,
            max_size=pool.max_size,
            desired_capacity=pool.desired_capacity,
            vpc_zone_identifiers=subnet_ids,
            capacity_rebalance=True,
            protect_from_scale_in=protect_from_scale_in,
            default_instance_warmup=pool.warmup_seconds,
            health_check_type="EC2",
            health_check_grace_period=pool.warmup_seconds,
            enabled_metrics=list(GROUP_METRICS),
            metrics_granularity="1Minute",
            mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
                instances_distribution=_Distribution(
                    on_demand_base_capacity=base,
                    on_demand_percentage_above_base_capacity=above_base,
                    spot_allocation_strategy="price-capacity-optimized",
                ),
                launch_template=_GroupTemplate(
                    launch_template_specification=_GroupTemplateSpec(
                        launch_template_id=template.id,
                        version=template.latest_version.apply(str),
                    ),
                    overrides=[_GroupOverride(instance_type=instance_type)],
                ),
            ),
            instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
                strategy="Rolling",
                preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                    min_healthy_percentage=100,  # launch before terminate: capacity kept
                    max_healthy_percentage=200,
                    instance_warmup=str(pool.warmup_seconds),
                    skip_matching=True,
                    scale_in_protected_instances="Ignore" if protect_from_scale_in else None,
                ),
            ),
            tags=[
                aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
                for k, v in sorted(tags.items())
            ],
        ),
        # Target tracking owns the desired capacity once the group exists; a later
        # `pulumi up` must not reset it.
        opts=pulumi.ResourceOptions.merge(
            child_of(owner),
            pulumi.ResourceOptions(depends_on=list(depends_on),
                                   ignore_changes=["desiredCapacity"]),
        ),
    )


def utilisation_policy(
    owner: pulumi.Resource, name: str, pool: GpuPoolConfig, group: aws.autoscaling.Group
) -> aws.autoscaling.Policy:
    """Target tracking on the group's mean GPU utilisation: more instances, never bigger."""
    spec = _MetricSpec(
        namespace=user_data.NAMESPACE,
        metric_name=user_data.UTILISATION_METRIC,
        statistic="Average",
        metric_dimensions=[_MetricDimension(name=user_data.GROUP_DIMENSION, value=group.name)],
    )
    return aws.autoscaling.Policy(
        f"{name}-gpu-utilisation",
        aws.autoscaling.PolicyArgs(
            autoscaling_group_name=group.name,
            policy_type="TargetTrackingScaling",
            estimated_instance_warmup=pool.warmup_seconds,
            target_tracking_configuration=aws.autoscaling.PolicyTargetTrackingConfigurationArgs(
                target_value=float(pool.target_gpu_utilisation),
                customized_metric_specification=spec,
            ),
        ),
        opts=child_of(owner),
    )
