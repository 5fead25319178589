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

from typing import Annotated, Any, Final, Literal

from pydantic import Field, ValidationInfo, field_validator

from gpupool.config.base import ConfigModel, duplicate_names
from gpupool.config.k8s_names import (
    DNS_LABEL,
    K8S_VERSION,
    PATTERN_HINTS,
    is_label_value,
    karpenter_settable,
    labels,
)
from gpupool.config.k8s_workloads import RemoteGpuConfig, WorkloadConfig

__all__ = ["PATTERN_HINTS", "RemoteGpuConfig", "WorkloadConfig"]  # re-exported for readers

CLIENT_LABEL = "gpupool.io/gpu-client"
POOL_LABEL: Final = "gpupool.io/pool"
# Set on GPU nodes by NVIDIA's GPU Operator (from Node Feature Discovery's PCI labels) and by
# nothing else the kit or a plain cluster runs.
GPU_PRESENT_LABEL: Final = "nvidia.com/gpu.present"


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


class MonitoringConfig(ConfigModel):
    """DCGM exporter is always deployed; the ServiceMonitor needs the Prometheus Operator CRD."""

    service_monitor: bool = False
    # labels the cluster's Prometheus selects ServiceMonitors by: kube-prometheus-stack's
    # Prometheus takes only those labelled release: <its Helm release>
    service_monitor_labels: dict[str, str] = {}
    prometheus_address: Annotated[str, Field(pattern=r"^https?://[^\s]+$")] = (
        "http://prometheus-operated.monitoring.svc:9090"
    )
    scrape_interval: Annotated[str, Field(pattern=r"^[0-9]+(s|m)$")] = "15s"
    # a Grafana dashboard ConfigMap (label grafana_dashboard: "1") for the Grafana chart's
    # sidecar: the compute-debt picture from DCGM and kube-state-metrics; false: none
    grafana_dashboard: bool = True

    _labels = field_validator("service_monitor_labels")(classmethod(lambda cls, v: labels(v)))


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
    # gpupool render writes the kit's rules as ValidatingAdmissionPolicies beside the pool's
    # objects (admissionregistration.k8s.io/v1: Kubernetes 1.30 and later); false: it does not
    admission_policies: bool = True
    cluster: Annotated[ClusterConfig, Field(validate_default=True)] = ClusterConfig()
    gpu: Annotated[str, Field(min_length=1, max_length=40)] = "T4"  # model the GPU nodes carry
    arch: Literal["x86_64", "arm64"] = "x86_64"
    gpus: Annotated[int | None, Field(ge=1, le=100_000)] = None  # on-premises GPUs of the pool
    gpu_hourly_cost: Annotated[float, Field(ge=0, le=1000)] = 0.0  # on-premises, per GPU-hour
    gpu_operator: bool = False  # the cluster runs NVIDIA's GPU Operator: no device plugin here
    time_slicing_replicas: Annotated[int | None, Field(ge=2, le=48)] = None
    monitoring: MonitoringConfig = MonitoringConfig()
    teams: Annotated[list[TeamConfig], Field(min_length=1, max_length=200)]
    workloads: list[WorkloadConfig] = []
    remote_gpu: RemoteGpuConfig | None = None
    karpenter: KarpenterConfig | None = None
    # None: the label the kit guarantees (gpu_node_selector); {}: no selector at all
    node_selector: dict[str, str] | None = None

    @field_validator("time_slicing_replicas")
    @classmethod
    def _kit_device_plugin(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and info.data.get("gpu_operator"):
            raise ValueError(
                "expected no timeSlicingReplicas with gpuOperator: true: the GPU Operator runs "
                "its own device plugin, which takes time-slicing from its ClusterPolicy "
                "(devicePlugin.config), not from the kit")
        return v

    @field_validator("node_selector")
    @classmethod
    def _selector(cls, v: dict[str, str] | None, info: ValidationInfo) -> dict[str, str] | None:
        if v is None:
            return v
        labels(v)
        if info.data.get("karpenter") is not None:
            for key in v:
                if not karpenter_settable(key):
                    raise ValueError(
                        "expected node labels the Karpenter NodePool can set on its nodes "
                        "(Karpenter v1.0-v1.8 refuse the kubernetes.io and k8s.io domains, "
                        f"every v1 release karpenter.sh and karpenter.k8s.aws), got {key!r}")
        return v

    @property
    def gpu_node_selector(self) -> dict[str, str]:
        """The node labels the pool's GPU pods and GPU DaemonSets select, chosen so that some
        node carries them: on Karpenter the NodePool sets them on every node it launches;
        with the GPU Operator (and no Karpenter) the operator sets
        ``nvidia.com/gpu.present``; otherwise the pool's own label, which the cluster's GPU
        nodes carry as a prerequisite (docs/kubernetes.md). A configured ``nodeSelector``
        wins (on Karpenter the NodePool sets it too)."""
        if self.node_selector is not None:
            return dict(self.node_selector)
        if self.karpenter is None and self.gpu_operator:
            return {GPU_PRESENT_LABEL: "true"}
        return {POOL_LABEL: self.name}

    @property
    def node_label_prerequisite(self) -> str | None:
        """What the cluster's GPU nodes must carry that nothing the kit deploys sets, or None."""
        wanted = self.gpu_node_selector
        if self.karpenter is not None or not wanted:
            return None
        if self.node_selector is None and self.gpu_operator:
            return None  # the GPU Operator labels its nodes
        return ", ".join(f"{k}={v}" for k, v in sorted(wanted.items()))

    @field_validator("cluster")
    @classmethod
    def _admission_served(cls, v: ClusterConfig, info: ValidationInfo) -> ClusterConfig:
        if info.data.get("admission_policies") and tuple(map(int, v.version.split("."))) < (
                1, 30):
            raise ValueError(
                f"expected version 1.30 or later, or the pool's admissionPolicies: false: "
                f"Kubernetes {v.version} does not serve ValidatingAdmissionPolicy "
                "(admissionregistration.k8s.io/v1), so the rendered admission policies would "
                "fail to apply")
        return v

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
