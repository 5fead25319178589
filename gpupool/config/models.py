"""Stack configuration: the pydantic models every stack file is validated against.

A stack file is Pulumi's own ``Pulumi.<stack>.yaml``; the kit reads the keys of the ``gpupool``
namespace (plus ``aws:region``). Keys are camelCase as Pulumi users write them; unknown keys are
errors, so a typo never silently drops a setting. New capabilities (remote-GPU proxies,
Kubernetes pools) arrive as new optional top-level keys, so existing stacks keep validating.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator, model_validator

from gpupool.config.base import duplicate_names
from gpupool.config.images import AMI_ID, ImagePins
from gpupool.config.kubernetes import PATTERN_HINTS as K8S_HINTS
from gpupool.config.kubernetes import KubernetesPoolConfig, kubernetes_problems
from gpupool.config.monitoring import PATTERN_HINTS as MONITORING_HINTS
from gpupool.config.monitoring import MonitoringConfig
from gpupool.config.pool import (  # re-exported: the pool's keys are part of the stack's model
    _NAME,
    _SUBNET_ID,
    _TAG_VALUE,
    Arch,
    Environment,
    GpuPoolConfig,
    _Model,
    cross_field_error,
    size_problems,
)
from gpupool.config.remote_gpu import RemoteGpuTierConfig

__all__ = [
    "PATTERN_HINTS",
    "Arch",
    "Environment",
    "GpuPoolConfig",
    "NetworkConfig",
    "RemoteGpuTierConfig",
    "StackConfig",
    "cross_field_error",
    "network_problems",
    "size_problems",
]

# Tags land on EC2, Auto Scaling and IAM resources: IAM's rules are the strictest (letters,
# separators, numbers and _ . : / = + - @; keys 1-128, EC2 keys at most 127; values at most 256).
_TAG_TEXT = r"^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$"
_VPC_ID = r"^vpc-[0-9a-f]{8,17}$"
_REGION = r"^[a-z]{2}(-gov)?-[a-z]+-\d$"
# China regions are another partition (aws-cn): the kit's trust policies name the global
# partition's service principals and the CloudWatch agent comes from the global download host,
# and no China price is recorded, so validate refuses them rather than deploy what cannot work.
CHINA_REFUSED = ("expected a region of the global AWS partition, got {region}: China regions are "
                 "the aws-cn partition, which gpupool does not support (its IAM trust policies "
                 "name global service principals, the CloudWatch agent download host is global "
                 "and no China price is recorded)")

# What each pattern means, in words a user can act on (pydantic would print the regex).
PATTERN_HINTS: dict[str, str] = {
    _NAME.pattern: "a lowercase name of 2-32 characters (a-z, 0-9, '-') that starts with a "
    "letter and does not end with '-', such as inference",
    _TAG_VALUE.pattern: "a tag value of letters, digits, spaces and _ . : / = + - @",
    _VPC_ID: "a VPC id such as vpc-0a1b2c3d4e5f67890",
    _SUBNET_ID: "a subnet id such as subnet-0a1b2c3d4e5f67890",
    _REGION: "an AWS region such as us-east-1",
    AMI_ID: "an AMI id such as ami-0a1b2c3d4e5f67890",
    _TAG_TEXT: "letters, digits, spaces and _ . : / = + - @ only (the characters AWS allows in "
    "tags of every service the pools use)",
    **K8S_HINTS,
    **MONITORING_HINTS,
}


def network_problems(
    create_vpc: bool, vpc_id: str | None, subnet_ids: Sequence[str]
) -> list[tuple[str, str]]:
    """(key, expectation) when the network is neither an existing VPC nor one to create."""
    if create_vpc and (vpc_id or subnet_ids):
        key = "vpcId" if vpc_id else "subnetIds"
        return [(key, "expected no existing VPC or subnets when createVpc is true")]
    if not create_vpc and not (vpc_id and subnet_ids):
        return [("createVpc", "expected createVpc: true, or vpcId together with subnetIds")]
    return []


class NetworkConfig(_Model):
    """Either an existing VPC and its private subnets, or a VPC the stack creates."""

    vpc_id: Annotated[str | None, Field(pattern=_VPC_ID)] = None
    subnet_ids: list[Annotated[str, Field(pattern=_SUBNET_ID)]] = []
    create_vpc: bool = False
    cidr: str = "10.64.0.0/16"
    az_count: Annotated[int, Field(ge=1, le=6)] = 2

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            net = ipaddress.ip_network(v, strict=True)
        except ValueError:
            raise ValueError(
                f"expected an IPv4 network address with a prefix, such as 10.64.0.0/16, got {v!r}"
            ) from None
        if net.version != 4 or not 16 <= net.prefixlen <= 24:
            raise ValueError(f"expected an IPv4 CIDR with a prefix between /16 and /24, got {v!r}")
        return v

    @model_validator(mode="after")
    def _one_way(self) -> NetworkConfig:
        for key, expected in network_problems(self.create_vpc, self.vpc_id, self.subnet_ids):
            raise cross_field_error(key, expected)
        return self


class StackConfig(_Model):
    """Everything one stack declares. Validated before any resource is declared."""

    environment: Environment
    region: Annotated[str, Field(pattern=_REGION)] = "us-east-1"
    team: Annotated[str, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)]
    cost_center: Annotated[str, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)]
    tags: dict[
        Annotated[str, Field(min_length=1, max_length=127, pattern=_TAG_TEXT)],
        Annotated[str, Field(max_length=256, pattern=_TAG_TEXT)],
    ] = {}
    network: NetworkConfig | None = None  # AWS pools and tiers need it; Kubernetes pools not
    pools: Annotated[list[GpuPoolConfig], Field(max_length=200)] = []
    kubernetes: Annotated[list[KubernetesPoolConfig], Field(max_length=50)] = []
    remote_gpu: Annotated[list[RemoteGpuTierConfig], Field(max_length=50)] = []
    images: ImagePins = ImagePins()  # pinned AMI per architecture (gpupool.config.images)
    monitoring: MonitoringConfig = MonitoringConfig()  # low-utilisation alarms, dashboard

    @field_validator("kubernetes")
    @classmethod
    def _kubernetes(cls, v: list[KubernetesPoolConfig], info: ValidationInfo
                    ) -> list[KubernetesPoolConfig]:
        problem = kubernetes_problems(v, info.data)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("region")
    @classmethod
    def _not_china(cls, region: str) -> str:
        if region.startswith("cn-"):
            raise ValueError(CHINA_REFUSED.format(region=region))
        return region

    @field_validator("tags")
    @classmethod
    def _no_aws_prefix(cls, tags: dict[str, str]) -> dict[str, str]:
        for key in tags:
            if key.lower().startswith("aws:"):
                raise ValueError(f"expected tag keys that do not begin with aws: (reserved "
                                 f"for AWS), got {key!r}")
        return tags

    @model_validator(mode="after")
    def _some_gpus(self) -> StackConfig:
        """A stack of remote-GPU tiers alone (a team's CPU services and their proxies) has no
        plain pool; a stack with neither declares nothing to run."""
        if not (self.pools or self.remote_gpu or self.kubernetes):
            raise cross_field_error("pools", "expected at least one pool (or a remoteGpu tier "
                                             "or kubernetes pool), got none")
        return self

    @model_validator(mode="after")
    def _network_for_aws(self) -> StackConfig:
        """Only AWS pools and remote-GPU tiers launch into the network: a stack of Kubernetes
        pools alone (a cluster the team already runs) has none to declare."""
        if self.network is None and (self.pools or self.remote_gpu):
            raise cross_field_error("network", "expected a network (createVpc, or vpcId and "
                                               "subnetIds) for the stack's AWS pools and tiers")
        return self

    @model_validator(mode="after")
    def _unique_pool_names(self) -> StackConfig:
        for i, name in duplicate_names([p.name for p in self.pools]):
            raise cross_field_error(
                f"pools[{i}].name", f"expected a unique name, {name!r} is used twice"
            )
        names = [p.name for p in self.pools] + [t.name for t in self.remote_gpu]
        for i, name in duplicate_names(names):
            if i >= len(self.pools):
                raise cross_field_error(f"remoteGpu[{i - len(self.pools)}].name",
                                        f"expected a name no pool or tier uses, {name!r} is")
        return self

    def chargeback(self, pool: GpuPoolConfig) -> dict[str, str]:
        """The tags a pool's resources carry: stack tags, then chargeback, pool overrides win."""
        return {
            **self.tags,
            "team": pool.team or self.team,
            "cost-center": pool.cost_center or self.cost_center,
            "environment": self.environment,
            "gpupool:pool": pool.name,
            "managed-by": "gpupool",
        }

