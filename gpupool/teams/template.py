"""Stack templates: small documented YAML files that ``gpupool new-stack`` renders into stacks.

A template fixes a workload's shape (how it is sized, how its pool scales, per environment) and
leaves the GPU, the architecture and the size to the estimator and the team's quota. The
bundled ones live in ``gpupool/teams/templates/``; a platform team may keep its own anywhere and
pass its path to ``--template``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from gpupool.config.models import Environment, GpuPoolConfig, NetworkConfig
from gpupool.errors import InputError
from gpupool.suggest import did_you_mean
from gpupool.yamlio import parse_yaml, read_yaml

# Pool keys the estimator and the quota decide, never a template.
DECIDED = frozenset({"gpu", "arch", "maxSize", "team", "costCenter"})
POOL_KEYS = frozenset(f.alias or n for n, f in GpuPoolConfig.model_fields.items()) - DECIDED
NETWORK_KEYS = frozenset(f.alias or n for n, f in NetworkConfig.model_fields.items())


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel,
                              populate_by_name=True, allow_inf_nan=False)


class Sizing(_Model):
    """Defaults for the sizing flags (a flag on the command line wins)."""

    mode: Literal["inference", "training"] = "inference"
    dtype: Literal["fp32", "bf16", "fp16", "int8", "int4"] = "fp16"
    batch: Annotated[int, Field(ge=1, le=4096)] = 1
    seq_len: Annotated[int | None, Field(ge=1, le=1_048_576)] = None
    optimizer: Literal["adam", "adamw", "sgd"] = "adamw"
    gradient_checkpointing: bool = False


class Overrides(_Model):
    pool: dict[str, Any] = {}
    network: dict[str, Any] = {}

    @field_validator("pool")
    @classmethod
    def _pool_keys(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _known(v, POOL_KEYS, "pool")

    @field_validator("network")
    @classmethod
    def _network_keys(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _known(v, NETWORK_KEYS, "network")


class RemoteGpu(_Model):
    """What turns the template's pool into a remote-GPU proxy tier (``gpupool:remoteGpu``):
    CPU-only clients send their CUDA calls to it. The budget (the network the application
    tolerates) is the application's own: ``new-stack --profile`` gives it, or the template."""

    port: Annotated[int, Field(ge=1024, le=65535)]
    budget: dict[str, Any] | None = None
    clients: dict[str, Any] | None = None
    network_kind: Literal["auto", "tcp"] = "auto"


class Template(_Model):
    description: Annotated[str, Field(min_length=1, max_length=200)]
    sizing: Sizing = Sizing()
    gpu: str | None = None  # the GPU when no model is given (a notebook for exploring)
    max_gpus: Annotated[int, Field(ge=1, le=1000)] = 1
    pool: dict[str, Any]
    remote_gpu: RemoteGpu | None = None  # the pool is a proxy tier for CPU clients
    network: dict[str, Any] = {"createVpc": True}
    environments: dict[Environment, Overrides] = {}

    @field_validator("pool")
    @classmethod
    def _pool_keys(cls, v: dict[str, Any]) -> dict[str, Any]:
        if "name" not in v:
            raise ValueError("expected the pool's name")
        return _known(v, POOL_KEYS, "pool")

    @field_validator("network")
    @classmethod
    def _network_keys(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _known(v, NETWORK_KEYS, "network")

    def pool_for(self, environment: str) -> dict[str, Any]:
        extra = self.environments.get(environment)  # type: ignore[call-overload]
        return {**self.pool, **(extra.pool if extra else {})}

    def network_for(self, environment: str) -> dict[str, Any]:
        extra = self.environments.get(environment)  # type: ignore[call-overload]
        return {**self.network, **(extra.network if extra else {})}


def _known(v: dict[str, Any], allowed: frozenset[str], where: str) -> dict[str, Any]:
    unknown = sorted(set(v) - allowed)
    if unknown:
        decided = [k for k in unknown if k in DECIDED]
        why = (f"; {', '.join(decided)} come from sizing and the team's quota, not a template"
               if decided else "")
        raise ValueError(f"expected {where} keys among {', '.join(sorted(allowed))}, got "
                         f"{', '.join(unknown)}{why}")
    return v


def bundled_names() -> list[str]:
    root = resources.files("gpupool.teams").joinpath("templates")
    return sorted(p.name.removesuffix(".yaml") for p in root.iterdir()
                  if p.name.endswith(".yaml"))


def load_template(name_or_path: str) -> tuple[str, Template]:
    """(name, template) for a bundled template name or a template file's path."""
    if name_or_path.endswith((".yaml", ".yml")) or "/" in name_or_path:
        doc = read_yaml(name_or_path)
        name, shown = Path(name_or_path).stem, name_or_path
    else:
        names = bundled_names()
        if name_or_path not in names:
            raise InputError(f"--template {name_or_path}: expected one of {', '.join(names)} "
                             f"or the path of a template file{did_you_mean(name_or_path, names)}")
        res = resources.files("gpupool.teams").joinpath("templates", f"{name_or_path}.yaml")
        shown = f"template {name_or_path}"
        doc = parse_yaml(res.read_text(encoding="utf-8"), shown)
        name = name_or_path
    try:
        return name, Template.model_validate(doc)
    except ValidationError as e:
        raise InputError([f"{shown}: {'.'.join(str(p) for p in err['loc']) or '(top level)'}: "
                          f"{str(err['msg']).removeprefix('Value error, ')}"
                          for err in e.errors(include_url=False)]) from None
