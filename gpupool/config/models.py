"""Stack configuration: the pydantic models every stack file is validated against.

A stack file is Pulumi's own ``Pulumi.<stack>.yaml``; the kit reads the keys of the ``gpupool``
namespace (plus ``aws:region``). Keys are camelCase as Pulumi users write them; unknown keys are
errors, so a typo never silently drops a setting. New capabilities (remote-GPU proxies,
Kubernetes pools) arrive as new optional top-level keys, so existing stacks keep validating.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

Arch = Literal["x86_64", "arm64"]
Environment = Literal["dev", "staging", "prod", "sandbox", "test"]
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
_TAG_VALUE = re.compile(r"^[A-Za-z0-9_ .:/=+\-@]+$")


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        str_strip_whitespace=True,
    )


class NetworkConfig(_Model):
    """Either an existing VPC and its private subnets, or a VPC the stack creates."""

    vpc_id: Annotated[str | None, Field(pattern=r"^vpc-[0-9a-f]{8,17}$")] = None
    subnet_ids: list[Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")]] = []
    create_vpc: bool = False
    cidr: str = "10.64.0.0/16"
    az_count: Annotated[int, Field(ge=1, le=6)] = 2

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            net = ipaddress.ip_network(v, strict=True)
        except ValueError as e:
            raise ValueError(f"expected an IPv4 CIDR such as 10.64.0.0/16 ({e})") from None
        if net.version != 4 or not 16 <= net.prefixlen <= 24:
            raise ValueError("expected an IPv4 CIDR with a prefix between /16 and /24")
        return v

    @model_validator(mode="after")
    def _one_way(self) -> NetworkConfig:
        if self.create_vpc and (self.vpc_id or self.subnet_ids):
            raise ValueError("set either createVpc: true or vpcId with subnetIds, not both")
        if not self.create_vpc and not (self.vpc_id and self.subnet_ids):
            raise ValueError("expected createVpc: true, or vpcId together with subnetIds")
        return self


class GpuPoolConfig(_Model):
    """One autoscaling pool of the smallest instance size carrying one GPU model.

    There is deliberately no ``instanceType`` key: the kit picks the smallest size for the GPU,
    and capacity grows by ``maxSize`` (more instances), never by a bigger size.
    """

    name: Annotated[str, Field(pattern=_NAME.pattern)]
    gpu: Annotated[str, Field(min_length=1, description="GPU model (T4, A10G, L4, …) or family")]
    arch: Arch = "x86_64"
    min_size: Annotated[int, Field(ge=0, le=1000)] = 0
    max_size: Annotated[int, Field(ge=1, le=1000)]
    desired_capacity: Annotated[int | None, Field(ge=0, le=1000)] = None
    on_demand_base: Annotated[int, Field(ge=0, le=1000)] = 0
    spot_share: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    target_gpu_utilisation: Annotated[float, Field(ge=40, le=90)] = 70.0
    root_volume_gib: Annotated[int, Field(ge=30, le=16384)] = 100
    warmup_seconds: Annotated[int, Field(ge=0, le=3600)] = 300
    team: Annotated[str | None, Field(min_length=1, max_length=64)] = None
    cost_center: Annotated[str | None, Field(min_length=1, max_length=64)] = None

    @model_validator(mode="after")
    def _sizes(self) -> GpuPoolConfig:
        if self.min_size > self.max_size:
            raise ValueError(f"minSize ({self.min_size}) must not exceed maxSize ({self.max_size})")
        d = self.desired_capacity
        if d is not None and not self.min_size <= d <= self.max_size:
            raise ValueError(
                f"desiredCapacity ({d}) must lie between minSize ({self.min_size}) "
                f"and maxSize ({self.max_size})"
            )
        if self.on_demand_base > self.max_size:
            raise ValueError(f"onDemandBase ({self.on_demand_base}) exceeds maxSize")
        return self


class StackConfig(_Model):
    """Everything one stack declares. Validated before any resource is declared."""

    environment: Environment
    region: Annotated[str, Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$")] = "us-east-1"
    team: Annotated[str, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)]
    cost_center: Annotated[str, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)]
    tags: dict[str, Annotated[str, Field(max_length=256)]] = {}
    network: NetworkConfig
    pools: Annotated[list[GpuPoolConfig], Field(min_length=1, max_length=200)]

    @model_validator(mode="after")
    def _unique_pool_names(self) -> StackConfig:
        seen: set[str] = set()
        for p in self.pools:
            if p.name in seen:
                raise ValueError(f"pool name {p.name!r} is used twice")
            seen.add(p.name)
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
