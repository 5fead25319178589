"""GPU workload templates: an inference Deployment scaled by KEDA on GPU utilisation, and a
batch Job.

Every container gets exactly one GPU (``limits`` and ``requests`` equal, as Kubernetes requires
for extended resources); capacity grows with replicas, never with bigger pods. Pods select the
pool's GPU nodes and tolerate their taint (infra.k8s.nodes); what ``pulumi up`` waits for is
decided per kind in infra.k8s.awaits.

Batch pods carry ``karpenter.sh/do-not-disrupt: "true"`` (Karpenter never consolidates or
drifts a node away from under a running job; it has no effect elsewhere) and the Job an
``activeDeadlineSeconds``, so a hung run releases its GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.k8s_workloads import VolumeConfig
from gpupool.config.kubernetes import KubernetesPoolConfig, WorkloadConfig
from infra.k8s.awaits import SKIP_AWAIT, ready_within
from infra.k8s.labels import GPU_RESOURCE, app_labels, selector
from infra.k8s.nodes import gpu_tolerations, node_selector
from infra.k8s.scaling import scaled_object

DO_NOT_DISRUPT: Final = {"karpenter.sh/do-not-disrupt": "true"}
JOB_TTL_SECONDS: Final = 86_400

_Meta = k8s.meta.v1.ObjectMetaArgs
_Core = k8s.core.v1


def gpu_container(name: str, image: str, *, cpu: str, memory: str, port: int | None = None,
                  command: list[str] | None = None, args: list[str] | None = None,
                  mounts: list[k8s.core.v1.VolumeMountArgs] | None = None,
                  readiness: k8s.core.v1.ProbeArgs | None = None,
                  ) -> k8s.core.v1.ContainerArgs:
    """One container with one GPU: requests equal limits (the only form Kubernetes accepts)."""
    return _Core.ContainerArgs(
        name=name,
        image=image,
        command=command or None,
        args=args or None,
        ports=[_Core.ContainerPortArgs(name="serve", container_port=port)] if port else None,
        resources=_Core.ResourceRequirementsArgs(
            requests={"cpu": cpu, "memory": memory, GPU_RESOURCE: "1"},
            limits={"memory": memory, GPU_RESOURCE: "1"},
        ),
        volume_mounts=mounts or None,
        readiness_probe=readiness,
        security_context=_Core.SecurityContextArgs(allow_privilege_escalation=False),
    )


def pod_spec(pool: KubernetesPoolConfig, container: k8s.core.v1.ContainerArgs, *,
             restart: str = "Always", volumes: list[k8s.core.v1.VolumeArgs] | None = None
             ) -> k8s.core.v1.PodSpecArgs:
    return _Core.PodSpecArgs(
        containers=[container],
        node_selector=node_selector(pool),
        tolerations=gpu_tolerations(),
        restart_policy=restart,
        automount_service_account_token=False,
        volumes=volumes or None,
    )


def volumes(w: WorkloadConfig) -> tuple[list[k8s.core.v1.VolumeArgs],
                                        list[k8s.core.v1.VolumeMountArgs]]:
    """The workload's volumes and their mounts, in the order the stack lists them."""
    return ([_volume(v) for v in w.volumes],
            [_Core.VolumeMountArgs(name=v.name, mount_path=v.mount_path, read_only=v.read_only)
             for v in w.volumes])


def _volume(v: VolumeConfig) -> k8s.core.v1.VolumeArgs:
    if v.persistent_volume_claim is not None:
        return _Core.VolumeArgs(name=v.name, persistent_volume_claim=(
            _Core.PersistentVolumeClaimVolumeSourceArgs(claim_name=v.persistent_volume_claim,
                                                        read_only=v.read_only)))
    assert v.empty_dir is not None
    return _Core.VolumeArgs(name=v.name, empty_dir=_Core.EmptyDirVolumeSourceArgs(
        medium=v.empty_dir.medium or None, size_limit=v.empty_dir.size_limit))


def inference(prefix: str, pool: KubernetesPoolConfig, w: WorkloadConfig, namespace: str,
              labels: Mapping[str, str], opts: pulumi.ResourceOptions) -> k8s.apps.v1.Deployment:
    """Deployment (no replicas: KEDA owns them) + Service + ScaledObject on GPU utilisation."""
    own = app_labels(dict(labels), w.name, "gpu-workload")
    vols, mounts = volumes(w)
    readiness = (_Core.ProbeArgs(http_get=_Core.HTTPGetActionArgs(path=w.readiness_path,
                                                                  port="serve"),
                                 period_seconds=10, failure_threshold=3)
                 if w.readiness_path else None)
    container = gpu_container(w.name, w.image, cpu=w.cpu, memory=w.memory, port=w.port,
                              command=w.command, args=w.args, mounts=mounts,
                              readiness=readiness)
    awaited = pulumi.ResourceOptions.merge(opts, ready_within(w.ready_timeout_minutes))
    deployment = k8s.apps.v1.Deployment(
        f"{prefix}-deployment",
        metadata=_Meta(name=w.name, namespace=namespace, labels=own),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(w.name)),
            strategy=no_surge(),
            template=_Core.PodTemplateSpecArgs(metadata=_Meta(labels=own),
                                               spec=pod_spec(pool, container, volumes=vols)),
        ),
        opts=awaited,
    )
    _Core.Service(  # awaited like its Deployment: it has endpoints once the pods are ready
        f"{prefix}-service",
        metadata=_Meta(name=w.name, namespace=namespace, labels=own),
        spec=_Core.ServiceSpecArgs(type="ClusterIP", selector=selector(w.name), ports=[
            _Core.ServicePortArgs(name="serve", port=w.port, target_port="serve", protocol="TCP")]),
        opts=awaited,
    )
    scaled_object(prefix, w.name, namespace, own, min_replicas=w.min_replicas,
                  max_replicas=w.max_replicas, target=w.target_gpu_utilisation,
                  prometheus=pool.monitoring.prometheus_address,
                  opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                      depends_on=[deployment])))
    return deployment


def no_surge() -> k8s.apps.v1.DeploymentStrategyArgs:
    """Replace one pod at a time, never one above the replica count: a surge pod needs a GPU
    the team's quota (or the cluster) may not have, and the rollout would wait for it."""
    return k8s.apps.v1.DeploymentStrategyArgs(
        type="RollingUpdate",
        rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_surge=0, max_unavailable=1),
    )


def batch(prefix: str, pool: KubernetesPoolConfig, w: WorkloadConfig, namespace: str,
          labels: Mapping[str, str], opts: pulumi.ResourceOptions) -> k8s.batch.v1.Job:
    """A Job of ``completions`` pods, ``parallelism`` at a time, one GPU each."""
    own = app_labels(dict(labels), w.name, "gpu-workload")
    vols, mounts = volumes(w)
    container = gpu_container(w.name, w.image, cpu=w.cpu, memory=w.memory, command=w.command,
                              args=w.args, mounts=mounts)
    return k8s.batch.v1.Job(
        f"{prefix}-job",
        # pulumi up does not wait for the work to finish (infra.k8s.awaits)
        metadata=_Meta(name=w.name, namespace=namespace, labels=own, annotations=SKIP_AWAIT),
        spec=k8s.batch.v1.JobSpecArgs(
            parallelism=w.parallelism,
            completions=w.completions,
            backoff_limit=w.backoff_limit,
            active_deadline_seconds=w.active_deadline_seconds,
            ttl_seconds_after_finished=JOB_TTL_SECONDS,
            template=_Core.PodTemplateSpecArgs(
                metadata=_Meta(labels=own, annotations=DO_NOT_DISRUPT),
                spec=pod_spec(pool, container, restart="Never", volumes=vols)),
        ),
        opts=opts,
    )
