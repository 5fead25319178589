"""Stack configuration of Kubernetes GPU pools (``gpupool:kubernetes``): the hybrid half.

A Kubernetes pool is GPU capacity on a cluster the team already runs: on-premises or private
cloud through a kubeconfig, or EKS (where Karpenter adds nodes of the smallest size per GPU).
The same three ideas hold there: one GPU per container and more replicas rather than bigger
pods, GPU utilisation published (DCGM exporter) and scaled on (KEDA), and every GPU visible per
team (a namespace, a quota and chargeback labels per team).

Cross-key checks live in field validators that read the fields declared before them, so each
problem is reported at the key it is about (``gpupool:kubernetes[0].workloads: expected ...``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from gpupool.config.base import ConfigModel, duplicate_names
from gpupool.config.remoting_keys import BudgetConfig, RemotingPort

# Kubernetes names: DNS-1123 labels (namespaces, services) and label values.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
# An image reference pinned to a version: a tag other than "latest", or a digest.
IMAGE = r"^[a-z0-9][a-z0-9._/:-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$"
K8S_VERSION = r"^1\.(2[5-9]|3[0-9])$"
QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$"

# What each pattern means, in words (the loader prints these instead of the regex).
PATTERN_HINTS: dict[str, str] = {
    DNS_LABEL: "a Kubernetes name of 1-63 characters (a-z, 0-9, '-'), such as ml-research",
    IMAGE: "a container image pinned to a version tag or digest (not :latest), such as "
    "nvcr.io/nvidia/tritonserver:24.08-py3",
    K8S_VERSION: "a Kubernetes minor version between 1.25 and 1.39, such as \"1.31\" (quoted)",
    QUANTITY: "a Kubernetes quantity such as 2, 500m or 16Gi",
}

DEFAULT_NODE_SELECTOR = {"nvidia.com/gpu.present": "true"}  # set by NVIDIA's GPU feature discovery
CLIENT_LABEL = "gpupool.io/gpu-client"


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def _pinned(image: str) -> str:
    if image.endswith(":latest"):
        raise ValueError(f"expected an image pinned to a version, not :latest, got {image!r}")
    return image


def _at_least_min(v: int, info: ValidationInfo) -> int:
    low = info.data.get("min_replicas")
    if isinstance(low, int) and v < low:
        raise ValueError(f"expected at least minReplicas ({low}), got {v}")
    return v


def _labels(value: dict[str, str]) -> dict[str, str]:
    for key, v in value.items():
        if not _LABEL_KEY.match(key) or len(key) > 253:
            raise ValueError(f"expected Kubernetes label keys, got {key!r}")
        if not is_label_value(v):
            raise ValueError(
                f"expected Kubernetes label values (at most 63 of A-Z a-z 0-9 - _ .), got {v!r}"
            )
    return value


class ClusterConfig(ConfigModel):
    """How to reach the cluster: the explicit provider is the only place that knows it."""

    kubeconfig: Annotated[str | None, Field(min_length=1)] = None  # path; default KUBECONFIG
    context: Annotated[str | None, Field(min_length=1, max_length=253)] = None
    version: Annotated[str, Field(pattern=K8S_VERSION)] = "1.31"  # manifests validate against it
    distribution: Literal["generic", "eks"] = "generic"


class TeamConfig(ConfigModel):
    """A team's namespace, its GPU quota, and who pays for it."""

    name: Annotated[str, Field(pattern=DNS_LABEL)]
    namespace: Annotated[str | None, Field(pattern=DNS_LABEL)] = None  # default: the team name
    cost_center: Annotated[str | None, Field(min_length=1, max_length=63)] = None
    gpu_quota: Annotated[int, Field(ge=0, le=10_000)]  # requests.nvidia.com/gpu (hard)
    max_gpus_per_container: Annotated[int, Field(ge=1, le=16)] = 1  # LimitRange max

    @property
    def namespace_name(self) -> str:
        return self.namespace or self.name

    @field_validator("cost_center")
    @classmethod
    def _cost_center_label(cls, v: str | None) -> str | None:
        if v is not None and not is_label_value(v):
            raise ValueError(f"expected a Kubernetes label value (A-Z a-z 0-9 - _ .), got {v!r}")
        return v


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
    port: Annotated[int, Field(ge=1, le=65535)] = 8000  # inference: the Service port
    cpu: Annotated[str, Field(pattern=QUANTITY)] = "2"
    memory: Annotated[str, Field(pattern=QUANTITY)] = "8Gi"
    min_replicas: Annotated[int, Field(ge=1, le=1000)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=1000)] = 4
    target_gpu_utilisation: Annotated[float, Field(ge=40, le=90)] = 70.0
    parallelism: Annotated[int, Field(ge=1, le=1000)] = 1  # batch
    completions: Annotated[int, Field(ge=1, le=100_000)] = 1  # batch
    backoff_limit: Annotated[int, Field(ge=0, le=100)] = 3  # batch

    _image = field_validator("image")(classmethod(lambda cls, v: _pinned(v)))

    _replicas = field_validator("max_replicas")(
        classmethod(lambda cls, v, info: _at_least_min(v, info)))


class MonitoringConfig(ConfigModel):
    """DCGM exporter is always deployed; the ServiceMonitor needs the Prometheus Operator CRD."""

    service_monitor: bool = False
    prometheus_address: Annotated[str, Field(pattern=r"^https?://[^\s]+$")] = (
        "http://prometheus-operated.monitoring.svc:9090"
    )
    scrape_interval: Annotated[str, Field(pattern=r"^[0-9]+(s|m)$")] = "15s"


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
    budget: BudgetConfig | None = None

    _image = field_validator("image")(classmethod(lambda cls, v: _pinned(v)))
    _replicas = field_validator("max_replicas")(
        classmethod(lambda cls, v, info: _at_least_min(v, info)))


class KarpenterConfig(ConfigModel):
    """EKS capacity: a Karpenter NodePool allowing only the smallest size for the pool's GPU."""

    cluster_name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")]
    node_role: Annotated[str, Field(min_length=1, max_length=64)]  # the Karpenter node IAM role
    max_gpus: Annotated[int, Field(ge=1, le=10_000)]  # NodePool limits: nodes scale out to this
    capacity_types: list[Literal["on-demand", "spot"]] = ["on-demand"]
    ami_alias: Annotated[str, Field(pattern=r"^(al2023|bottlerocket)@(latest|v[0-9.]+)$")] = (
        "al2023@latest"
    )
    root_volume_gib: Annotated[int, Field(ge=30, le=16384)] = 100


class KubernetesPoolConfig(ConfigModel):
    """One Kubernetes GPU pool: a cluster, its teams, GPU plumbing and workload templates."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")]
    cluster: ClusterConfig = ClusterConfig()
    gpu: Annotated[str, Field(min_length=1, max_length=40)] = "T4"  # model the GPU nodes carry
    arch: Literal["x86_64", "arm64"] = "x86_64"
    gpus: Annotated[int | None, Field(ge=1, le=100_000)] = None  # on-premises GPUs of the pool
    gpu_hourly_cost: Annotated[float, Field(ge=0, le=1000)] = 0.0  # on-premises, per GPU-hour
    gpu_operator: bool = False  # the cluster runs NVIDIA's GPU Operator: no device plugin here
    time_slicing_replicas: Annotated[int | None, Field(ge=2, le=48)] = None
    node_selector: dict[str, str] = DEFAULT_NODE_SELECTOR
    monitoring: MonitoringConfig = MonitoringConfig()
    teams: Annotated[list[TeamConfig], Field(min_length=1, max_length=200)]
    workloads: list[WorkloadConfig] = []
    remote_gpu: RemoteGpuConfig | None = None
    karpenter: KarpenterConfig | None = None

    @field_validator("node_selector")
    @classmethod
    def _selector(cls, v: dict[str, str]) -> dict[str, str]:
        return _labels(v)

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, v: list[TeamConfig]) -> list[TeamConfig]:
        for i, name in duplicate_names([t.name for t in v]):
            raise ValueError(f"expected unique team names, teams[{i}] reuses {name!r}")
        for i, ns in duplicate_names([t.namespace_name for t in v]):
            raise ValueError(f"expected one team per namespace, teams[{i}] reuses {ns!r}")
        return v

    @field_validator("workloads")
    @classmethod
    def _workload_teams(cls, v: list[WorkloadConfig], info: ValidationInfo
                        ) -> list[WorkloadConfig]:
        teams = info.data.get("teams")
        for i, name in duplicate_names([w.name for w in v]):
            raise ValueError(f"expected unique workload names, workloads[{i}] reuses {name!r}")
        if teams is not None:
            known = [t.name for t in teams]
            for i, w in enumerate(v):
                if w.team not in known:
                    raise ValueError(
                        f"expected workloads[{i}].team to be one of the pool's teams "
                        f"({', '.join(known)}), got {w.team!r}"
                    )
        return v

    @field_validator("remote_gpu")
    @classmethod
    def _proxy_team(cls, v: RemoteGpuConfig | None, info: ValidationInfo
                    ) -> RemoteGpuConfig | None:
        teams = info.data.get("teams")
        if v is not None and teams is not None and v.team not in [t.name for t in teams]:
            known = ", ".join(t.name for t in teams)
            raise ValueError(f"expected remoteGpu.team to be one of the pool's teams ({known}), "
                             f"got {v.team!r}")
        return v

    @field_validator("karpenter")
    @classmethod
    def _eks_only(cls, v: KarpenterConfig | None, info: ValidationInfo) -> KarpenterConfig | None:
        cluster = info.data.get("cluster")
        if v is not None and cluster is not None and cluster.distribution != "eks":
            raise ValueError("expected cluster.distribution: eks for Karpenter capacity, "
                             f"got {cluster.distribution}")
        return v

    def team(self, name: str) -> TeamConfig:
        return next(t for t in self.teams if t.name == name)


def kubernetes_problems(pools: list[KubernetesPoolConfig], data: dict[str, Any]) -> str | None:
    """Checks against the rest of the stack: pool names, chargeback values usable as labels."""
    aws_pools = data.get("pools") or []
    names = [getattr(p, "name", None) for p in aws_pools] + [p.name for p in pools]
    for i, name in duplicate_names(names):
        return (f"expected pool names unique across pools and kubernetes, {name!r} is used twice "
                f"(kubernetes[{i - len(aws_pools)}])")
    for key in ("team", "cost_center"):
        value = data.get(key)
        if pools and isinstance(value, str) and not is_label_value(value):
            shown = "team" if key == "team" else "costCenter"
            return (f"expected gpupool:{shown} to be usable as a Kubernetes label value "
                    f"(A-Z a-z 0-9 - _ ., at most 63), got {value!r}")
    return None
