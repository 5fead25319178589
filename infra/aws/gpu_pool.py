"""``GpuPool``: an autoscaling group of the smallest instance size for one GPU model.

The pool grows by adding instances (target tracking on measured GPU utilisation), never by a
bigger size: the launch template and the group's only override are the catalog's smallest type
for the GPU, and the component refuses any other. Everything a pool instance needs is here:
AMI from AWS's public SSM parameter, IMDSv2, encrypted gp3 root volume, a least-privilege
instance profile, a security group with no ingress and HTTPS-only egress to the VPC endpoints,
the CloudWatch agent publishing GPU metrics, and chargeback tags on every resource.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import pulumi
import pulumi_aws as aws

from gpupool.catalog import InstanceType, load_catalog
from gpupool.config.models import GpuPoolConfig
from infra.aws import limits, user_data
from infra.aws.network import PoolNetwork

# AWS Deep Learning Base OSS NVIDIA Driver GPU AMI (Ubuntu 22.04), per architecture.
_DLAMI: Final = "base-oss-nvidia-driver-gpu-ubuntu-22.04"
AMI_PARAMETERS: Final = {
    arch: f"/aws/service/deeplearning/ami/{arch}/{_DLAMI}/latest/ami-id"
    for arch in ("x86_64", "arm64")
}
ROOT_DEVICE: Final = "/dev/sda1"  # Ubuntu AMIs' root device
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


class NotSmallestSize(ValueError):
    """A pool was handed an instance type larger than the smallest one for its GPU."""


class NameRefused(pulumi.RunError):
    """A name the pool would give a resource breaks AWS's documented length or characters."""


# Children whose AWS name Pulumi derives from the logical name ("<pool>-<suffix>-<7 hex>").
NAMED_CHILDREN: Final = {
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:iam/role:Role": "role",
    "aws:iam/instanceProfile:InstanceProfile": "profile",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:autoscaling/group:Group": "asg",
    "aws:autoscaling/policy:Policy": "gpu-utilisation",
}


@dataclass(frozen=True, slots=True)
class GpuPoolArgs:
    pool: GpuPoolConfig
    instance_type: InstanceType  # the config loader's resolved smallest size for pool.gpu
    network: PoolNetwork
    region: str
    tags: Mapping[str, str] = field(default_factory=dict)  # StackConfig.chargeback(pool)
    partition: str = "aws"


def spot_distribution(pool: GpuPoolConfig) -> tuple[int, int]:
    """(on-demand base, on-demand % above base) for the group's instances distribution."""
    return pool.on_demand_base, round(100 * (1 - pool.spot_share))


class GpuPool(pulumi.ComponentResource):
    """One GPU pool: launch template, instance profile, security group, group, scaling policy."""

    group_name: pulumi.Output[str]
    group_arn: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    role_name: pulumi.Output[str]
    instance_type: str

    def __init__(
        self, name: str, args: GpuPoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        _require_smallest(args.instance_type)  # before anything is registered
        _require_valid_names(name)
        super().__init__("gpupool:aws:GpuPool", name, None, opts)
        pool, itype = args.pool, args.instance_type
        self.instance_type = itype.instance_type
        tags = {**args.tags, "Name": name}
        child = pulumi.ResourceOptions(parent=self)

        profile, attachments = self._instance_profile(name, args, tags, child)
        sg = self._security_group(name, args, tags, child)
        ami = aws.ssm.get_parameter_output(
            name=AMI_PARAMETERS[itype.arch], opts=pulumi.InvokeOutputOptions(parent=self)
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            aws.ec2.LaunchTemplateArgs(
                description=f"gpupool {pool.name}: {itype.instance_type} ({itype.gpu_model})",
                image_id=ami.insecure_value,  # a public parameter: no need to mark it secret
                instance_type=itype.instance_type,
                update_default_version=True,
                user_data=user_data.user_data(args.region),
                iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
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
                        security_groups=[sg.id],
                    )
                ],
                block_device_mappings=[
                    aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                        device_name=ROOT_DEVICE,
                        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                            volume_size=pool.root_volume_gib,
                            volume_type="gp3",
                            encrypted="true",
                            delete_on_termination="true",
                        ),
                    )
                ],
                tag_specifications=[
                    aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                    for kind in ("instance", "volume", "network-interface")
                ],
                tags=tags,
            ),
            opts=child,
        )
        group = self._group(name, args, template, tags, attachments, child)
        self._scaling_policy(name, pool, group, child)

        self.group_name = group.name
        self.group_arn = group.arn
        self.launch_template_id = template.id
        self.security_group_id = sg.id
        self.role_name = profile.role
        self.register_outputs(
            {
                "groupName": group.name,
                "launchTemplateId": template.id,
                "securityGroupId": sg.id,
                "instanceType": itype.instance_type,
            }
        )

    def _instance_profile(
        self,
        name: str,
        args: GpuPoolArgs,
        tags: Mapping[str, str],
        child: pulumi.ResourceOptions,
    ) -> tuple[aws.iam.InstanceProfile, list[aws.iam.RolePolicyAttachment]]:
        """A role EC2 alone may assume, with the two AWS managed policies the agents need."""
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
                assume_role_policy=json.dumps(trust),
                description=f"gpupool pool {args.pool.name}: CloudWatch agent and SSM only",
                tags=dict(tags),
            ),
            opts=child,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-{policy}",
                aws.iam.RolePolicyAttachmentArgs(
                    role=role.name, policy_arn=f"arn:{args.partition}:iam::aws:policy/{policy}"
                ),
                opts=child,
            )
            for policy in MANAGED_POLICIES
        ]
        profile = aws.iam.InstanceProfile(
            f"{name}-profile",
            aws.iam.InstanceProfileArgs(role=role.name, tags=dict(tags)),
            opts=child,
        )
        return profile, attachments

    def _security_group(
        self,
        name: str,
        args: GpuPoolArgs,
        tags: Mapping[str, str],
        child: pulumi.ResourceOptions,
    ) -> aws.ec2.SecurityGroup:
        """No ingress; HTTPS out to the endpoints (named by security group) and to S3 only."""
        net = args.network
        sg = aws.ec2.SecurityGroup(
            f"{name}-sg",
            aws.ec2.SecurityGroupArgs(
                vpc_id=net.vpc_id,
                description=f"gpupool pool {args.pool.name}: no ingress, HTTPS to AWS endpoints",
                tags=dict(tags),
            ),
            opts=child,
        )

        def https(suffix: str, group: pulumi.Input[str], description: str, *,
                  ingress: bool = False, **peer: pulumi.Input[str]) -> None:
            """One HTTPS rule on ``group``; ``peer`` names the other side (group, CIDR, list)."""
            fields = dict(security_group_id=group, ip_protocol="tcp", from_port=HTTPS,
                          to_port=HTTPS, description=description, **peer)
            if ingress:
                aws.vpc.SecurityGroupIngressRule(
                    f"{name}-{suffix}", aws.vpc.SecurityGroupIngressRuleArgs(**fields), opts=child)
            else:
                aws.vpc.SecurityGroupEgressRule(
                    f"{name}-{suffix}", aws.vpc.SecurityGroupEgressRuleArgs(**fields), opts=child)

        endpoints = net.endpoint_security_group_id
        if endpoints is not None:
            https("to-endpoints", sg.id, "HTTPS to the VPC interface endpoints",
                  referenced_security_group_id=endpoints)
            https("into-endpoints", endpoints, f"HTTPS from gpupool pool {args.pool.name}",
                  ingress=True, referenced_security_group_id=sg.id)
        else:
            assert net.vpc_cidr is not None
            https("to-vpc", sg.id, "HTTPS to the interface endpoints in the VPC CIDR",
                  cidr_ipv4=net.vpc_cidr)
        https("to-s3", sg.id, "HTTPS to S3 through the gateway endpoint",
              prefix_list_id=net.s3_prefix_list_id)
        return sg

    def _group(
        self,
        name: str,
        args: GpuPoolArgs,
        template: aws.ec2.LaunchTemplate,
        tags: Mapping[str, str],
        attachments: list[aws.iam.RolePolicyAttachment],
        child: pulumi.ResourceOptions,
    ) -> aws.autoscaling.Group:
        pool = args.pool
        base, above_base = spot_distribution(pool)
        return aws.autoscaling.Group(
            f"{name}-asg",
            aws.autoscaling.GroupArgs(
                min_size=pool.min_size,
                max_size=pool.max_size,
                desired_capacity=pool.desired_capacity,
                vpc_zone_identifiers=args.network.subnet_ids,
                capacity_rebalance=True,
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
                        overrides=[
                            _GroupOverride(instance_type=args.instance_type.instance_type)
                        ],
                    ),
                ),
                instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
                    strategy="Rolling",
                    preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                        min_healthy_percentage=90,
                        instance_warmup=str(pool.warmup_seconds),
                        skip_matching=True,
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
                child,
                pulumi.ResourceOptions(
                    depends_on=list(attachments), ignore_changes=["desiredCapacity"]
                ),
            ),
        )

    def _scaling_policy(
        self,
        name: str,
        pool: GpuPoolConfig,
        group: aws.autoscaling.Group,
        child: pulumi.ResourceOptions,
    ) -> aws.autoscaling.Policy:
        """Target tracking on the group's mean GPU utilisation: more instances, never bigger."""
        spec = _MetricSpec(
            namespace=user_data.NAMESPACE,
            metric_name=user_data.UTILISATION_METRIC,
            statistic="Average",
            metric_dimensions=[
                _MetricDimension(name=user_data.GROUP_DIMENSION, value=group.name)
            ],
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
            opts=child,
        )


def _require_valid_names(name: str) -> None:
    """Fail before declaring anything when AWS would refuse a derived name (an IAM role name is
    at most 64 characters: a long stack name plus a long pool name gets there)."""
    for type_, suffix in NAMED_CHILDREN.items():
        problems = list(limits.resource_problems(type_, f"{name}-{suffix}", {}))
        if problems:
            raise NameRefused(
                f"pool {name!r}: {problems[0]} (Pulumi adds 8 characters to the logical name); "
                "shorten the stack name or the pool name"
            )


def _require_smallest(itype: InstanceType) -> None:
    catalog = load_catalog()
    if not catalog.is_smallest(itype.instance_type):
        smallest = catalog.smallest_like(itype.instance_type)
        hint = f"; use {smallest.instance_type}" if smallest is not None else ""
        raise NotSmallestSize(
            f"{itype.instance_type} is not the smallest size carrying a {itype.gpu_model}{hint}: "
            "a pool grows by more instances, never by a bigger size"
        )
