"""One GPU pool's keys (``gpupool:pools[]``), the names and tag values they take.

A module of its own because two models build on it: :class:`~gpupool.config.models.StackConfig`
lists pools, and a remote-GPU tier (:mod:`gpupool.config.remote_gpu`) *is* a pool with a network
budget; the stack holds tiers, so neither may import the other's module for this.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from gpupool.config.base import ConfigModel

Arch = Literal["x86_64", "arm64"]
Environment = Literal["dev", "staging", "prod", "sandbox", "test"]
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
_TAG_VALUE = re.compile(r"^[A-Za-z0-9_ .:/=+\-@]+$")
_SUBNET_ID = r"^subnet-[0-9a-f]{8,17}$"

_Model = ConfigModel


def cross_field_error(field: str, expected: str) -> PydanticCustomError:
    """An error about one key that depends on others; the loader reports it under ``field``."""
    return PydanticCustomError(
        "cross_field", "{field}: {expected}", {"field": field, "expected": expected}
    )


def size_problems(
    min_size: int, max_size: int, desired: int | None, on_demand_base: int
) -> list[tuple[str, str]]:
    """(key, expectation) for every inconsistency between a pool's sizes."""
    out: list[tuple[str, str]] = []
    if min_size > max_size:
        out.append(("minSize", f"expected at most maxSize ({max_size}), got {min_size}"))
    elif desired is not None and not min_size <= desired <= max_size:
        out.append(
            (
                "desiredCapacity",
                f"expected a value between minSize ({min_size}) and maxSize ({max_size}), "
                f"got {desired}",
            )
        )
    if on_demand_base > max_size:
        out.append(("onDemandBase", f"expected at most maxSize ({max_size}), got {on_demand_base}"))
    return out


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
    team: Annotated[
        str | None, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)
    ] = None
    cost_center: Annotated[
        str | None, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)
    ] = None
    # Training pools: instances launch protected from scale-in, so target tracking never
    # terminates one that runs a job; the job scheduler (or the instance itself, with
    # gpupool-scale-in-protection off) releases it when the job is done.
    scale_in_protection: bool = False

    @model_validator(mode="after")
    def _sizes(self) -> GpuPoolConfig:
        for key, expected in size_problems(
            self.min_size, self.max_size, self.desired_capacity, self.on_demand_base
        ):
            raise cross_field_error(key, expected)
        return self
