"""``GpuPool``: an autoscaling group of the smallest instance size for one GPU model.

The pool grows by adding instances (target tracking on measured GPU utilisation), never by a
bigger size: the launch template and the group's only override are the catalog's smallest type
for the GPU, and the component refuses any other. Everything a pool instance needs is here:
AMI from AWS's public SSM parameter, IMDSv2, encrypted gp3 root volume, a least-privilege
instance profile, a security group with no ingress and HTTPS-only egress to the VPC endpoints,
the CloudWatch agent publishing GPU metrics, and chargeback tags on every resource. The parts
are :mod:`infra.aws.gpu_host`'s, which ``RemoteGpuTier`` builds its proxies from too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import pulumi
import pulumi_aws as aws

from gpupool.catalog import InstanceType, load_catalog
from gpupool.config.models import GpuPoolConfig
from infra.aws import gpu_host, protection, user_data
from infra.aws.gpu_host import (  # re-exported: what users of a pool import from here
    AMI_PARAMETERS,
    GROUP_METRICS,
    HTTPS,
    MANAGED_POLICIES,
    ROOT_DEVICE,
    spot_distribution,
)
from infra.aws.network import PoolNetwork

__all__ = [
    "AMI_PARAMETERS",
    "GROUP_METRICS",
    "HTTPS",
    "MANAGED_POLICIES",
    "ROOT_DEVICE",
    "GpuPool",
    "GpuPoolArgs",
    "NotSmallestSize",
    "spot_distribution",
]


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
    "aws:iam/rolePolicy:RolePolicy": "scale-in-protection",
}


@dataclass(frozen=True, slots=True)
class GpuPoolArgs:
    pool: GpuPoolConfig
    instance_type: InstanceType  # the config loader's resolved smallest size for pool.gpu
    network: PoolNetwork
    region: str
    tags: Mapping[str, str] = field(default_factory=dict)  # StackConfig.chargeback(pool)
    partition: str = "aws"
    image: str | None = None  # pinned AMI id (gpupool:images); None: the DLAMI, kept once taken


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

        profile, role, attachments = gpu_host.instance_profile(
            self, name, f"gpupool pool {pool.name}: CloudWatch agent and SSM only", tags,
            args.partition)
        sg = aws.ec2.SecurityGroup(
            f"{name}-sg",
            aws.ec2.SecurityGroupArgs(
                vpc_id=args.network.vpc_id,
                description=f"gpupool pool {pool.name}: no ingress, HTTPS to AWS endpoints",
                tags=dict(tags),
            ),
            opts=gpu_host.child_of(self),
        )
        gpu_host.endpoint_egress(self, name, sg, args.network, f"gpupool pool {pool.name}")
        image = gpu_host.host_image(self, itype.arch, args.image,
                                    root_volume_gib=pool.root_volume_gib,
                                    who=f"pool {pool.name}")
        protected = pool.scale_in_protection
        template = gpu_host.launch_template(
            self, name,
            description=f"gpupool {pool.name}: {itype.instance_type} ({itype.gpu_model})",
            image_id=image.image_id,
            instance_type=itype.instance_type,
            user_data_b64=user_data.user_data(
                args.region, extra=protection.protection_script(args.region) if protected else ""),
            profile_arn=profile.arn,
            security_group_ids=[sg.id],
            root_volume_gib=pool.root_volume_gib,
            tags=tags,
            root_device_name=image.root_device_name,
            keep_image=not image.pinned,
        )
        group = gpu_host.gpu_group(
            self, name, pool, template=template, instance_type=itype.instance_type,
            subnet_ids=args.network.subnet_ids, tags=tags,
            depends_on=[*attachments, *args.network.endpoints],
            protect_from_scale_in=protected)
        if protected:
            protection.release_policy(self, name, role, group)
        gpu_host.utilisation_policy(self, name, pool, group)
        self.image = image

        self.group_name = group.name
        self.group_arn = group.arn
        self.launch_template_id = template.id
        self.security_group_id = sg.id
        self.role_name = role.name
        self.register_outputs(
            {
                "groupName": group.name,
                "launchTemplateId": template.id,
                "securityGroupId": sg.id,
                "instanceType": itype.instance_type,
            }
        )


def _require_valid_names(name: str) -> None:
    """Fail before declaring anything when AWS would refuse a derived name (an IAM role name is
    at most 64 characters: a long stack name plus a long pool name gets there)."""
    problem = gpu_host.name_problem(name, NAMED_CHILDREN)
    if problem:
        raise NameRefused(
            f"pool {name!r}: {problem} (Pulumi adds 8 characters to the logical name); "
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
