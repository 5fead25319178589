"""Workloads of a Kubernetes GPU pool (``gpupool:kubernetes[].workloads``, ``.remoteGpu``).

A workload is an inference Deployment (autoscaled on GPU utilisation) or a batch Job. A key that
only one type reads is refused on the other (``parallelism`` on an inference workload, ``port``
on a batch one): the kit would accept it and ignore it, and the user would believe it applied.
pydantic runs field validators only on keys the stack gives, so defaults never trip them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

from gpupool.config.base import ConfigModel, duplicate_names
from gpupool.config.k8s_names import (
    ABSOLUTE_PATH,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    HTTP_PATH,
    IMAGE,
    QUANTITY,
    at_least_min,
    pinned,
)
from gpupool.config.remoting_keys import BudgetConfig, RemotingPort

# How long `pulumi up` waits for a Deployment (and its Service) to be ready: a GPU node to
# launch, a multi-GB image to pull and a model to load take longer than pulumi-kubernetes'
# 10-minute default.
READY_TIMEOUT_MINUTES = 30
JOB_DEADLINE_SECONDS = 86_400  # a day: a hung batch job never holds GPUs for longer

ReadyTimeout = Annotated[int, Field(ge=1, le=240)]


class EmptyDirConfig(ConfigModel):
    medium: Literal["", "Memory"] = ""  # Memory: a tmpfs, e.g. /dev/shm for PyTorch workers
    size_limit: Annotated[str | None, Field(pattern=QUANTITY)] = None


class VolumeConfig(ConfigModel):
    """A volume mounted into the workload's container: a claim (a model repository) or an
    emptyDir (scratch, shared memory). Exactly one source."""

    name: Annotated[str, Field(pattern=DNS_LABEL)]
    mount_path: Annotated[str, Field(pattern=ABSOLUTE_PATH, max_length=1024)]
    read_only: bool = True
    persistent_volume_claim: Annotated[str | None, Field(pattern=DNS_SUBDOMAIN,
                                                         max_length=253)] = None
    empty_dir: EmptyDirConfig | None = None

    @model_validator(mode="after")
    def _one_source(self) -> VolumeConfig:
        given = [k for k, v in (("persistentVolumeClaim", self.persistent_volume_claim),
                                ("emptyDir", self.empty_dir)) if v is not None]
        if len(given) != 1:
            raise ValueError("expected exactly one of persistentVolumeClaim or emptyDir, got "
                             + (" and ".join(given) or "neither"))
        return self


def _only(kind: str, info: ValidationInfo) -> None:
    got = info.data.get("type")
    if got is not None and got != kind:
        key, article = to_camel(str(info.field_name)), "an" if kind == "inference" else "a"
        raise ValueError(f"expected {key} only on {article} {kind} workload (type: {kind}); "
                         f"this one is {got}, which would ignore it")


class WorkloadConfig(ConfigModel):
    """A GPU workload template: an inference Deployment (autoscaled) or a batch Job.

    There is no GPUs-per-pod key: every container gets exactly one GPU; capacity grows with
    replicas (inference) or parallelism (batch), never with bigger pods.
    """

    name: Annotated[str, Field(pattern=DNS_LABEL)]
    team: Annotated[str, Field(pattern=DNS_LABEL)]
    type: Literal["inference", "batch"] = "inference"
    image: Annotated[str, Field(pattern=IMAGE)]
    command: list[str] = []
    args: list[str] = []
    cpu: Annotated[str, Field(pattern=QUANTITY)] = "2"
    memory: Annotated[str, Field(pattern=QUANTITY)] = "8Gi"
    volumes: Annotated[list[VolumeConfig], Field(max_length=16)] = []
    # inference
    port: Annotated[int, Field(ge=1, le=65535)] = 8000  # the Service port
    readiness_path: Annotated[str | None, Field(pattern=HTTP_PATH, max_length=256)] = None
    ready_timeout_minutes: ReadyTimeout = READY_TIMEOUT_MINUTES
    min_replicas: Annotated[int, Field(ge=1, le=1000)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=1000)] = 4
    target_gpu_utilisation: Annotated[float, Field(ge=40, le=90)] = 70.0
    # batch
    parallelism: Annotated[int, Field(ge=1, le=1000)] = 1
    completions: Annotated[int, Field(ge=1, le=100_000)] = 1
    backoff_limit: Annotated[int, Field(ge=0, le=100)] = 3
    active_deadline_seconds: Annotated[int, Field(ge=60, le=30 * 86_400)] = JOB_DEADLINE_SECONDS

    _image = field_validator("image")(classmethod(lambda cls, v: pinned(v)))
    _replicas = field_validator("max_replicas")(
        classmethod(lambda cls, v, info: at_least_min(v, info)))

    @field_validator("port", "readiness_path", "ready_timeout_minutes", "min_replicas",
                     "max_replicas", "target_gpu_utilisation")
    @classmethod
    def _inference_only(cls, v: object, info: ValidationInfo) -> object:
        _only("inference", info)
        return v

    @field_validator("parallelism", "completions", "backoff_limit", "active_deadline_seconds")
    @classmethod
    def _batch_only(cls, v: object, info: ValidationInfo) -> object:
        _only("batch", info)
        return v

    @field_validator("volumes")
    @classmethod
    def _unique_volumes(cls, v: list[VolumeConfig]) -> list[VolumeConfig]:
        for i, name in duplicate_names([m.name for m in v]):
            raise ValueError(f"expected unique volume names, volumes[{i}] reuses {name!r}")
        for i, path in duplicate_names([m.mount_path for m in v]):
            raise ValueError(f"expected one volume per mountPath, volumes[{i}] reuses {path!r}")
        return v


class RemoteGpuConfig(ConfigModel):
    """The remote-GPU proxy on GPU nodes: clients labelled ``gpupool.io/gpu-client`` reach it.

    ``port`` and ``budget`` are the AWS tier's keys (:mod:`gpupool.config.remoting_keys`: same
    model, bounds and meaning); ``gpu`` is the pool's. Replicas keep the Kubernetes spelling of
    the pool's workloads (``minReplicas``/``maxReplicas``: pods, not instances). The budget is
    carried, not sized for: the kit does not choose the cluster's nodes or network, so it puts
    the budget on the proxy's objects (annotations) for ``gpupool netcheck probe`` to be held
    against, and checks that a profile it names is readable.
    """

    team: Annotated[str, Field(pattern=DNS_LABEL)]
    image: Annotated[str, Field(pattern=IMAGE)]
    port: RemotingPort = 14833
    min_replicas: Annotated[int, Field(ge=1, le=100)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=100)] = 4
    target_gpu_utilisation: Annotated[float, Field(ge=40, le=90)] = 70.0
    ready_timeout_minutes: ReadyTimeout = READY_TIMEOUT_MINUTES
    budget: BudgetConfig | None = None

    _image = field_validator("image")(classmethod(lambda cls, v: pinned(v)))
    _replicas = field_validator("max_replicas")(
        classmethod(lambda cls, v, info: at_least_min(v, info)))
