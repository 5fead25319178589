"""GPU workload templates: an inference Deployment scaled by KEDA on GPU utilisation, a batch
Job, and the remote-GPU proxy (Deployment + Service + NetworkPolicy).

Every container gets exactly one GPU (``limits`` and ``requests`` equal, as Kubernetes requires
for extended resources); capacity grows with replicas, never with bigger pods.

Autoscaling is a KEDA ``ScaledObject`` with a Prometheus trigger on ``DCGM_FI_DEV_GPU_UTIL``
rather than an HPA on a prometheus-adapter metric: the query travels with the workload in its
own namespace (prometheus-adapter needs a cluster-wide rules ConfigMap per metric, and there can
be only one custom-metrics API server per cluster), and KEDA itself creates and owns the
``autoscaling/v2`` HPA. KEDA must be installed in the cluster (docs/kubernetes.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import (
    CLIENT_LABEL,
    KubernetesPoolConfig,
    RemoteGpuConfig,
    WorkloadConfig,
)
from infra.k8s.labels import GPU_RESOURCE, app_labels, budget_annotations, selector
from infra.k8s.plumbing import gpu_tolerations

UTILISATION_METRIC: Final = "DCGM_FI_DEV_GPU_UTIL"
PROXY_NAME: Final = "gpu-proxy"
SCALE_DOWN_WINDOW_S: Final = 300

_Meta = k8s.meta.v1.ObjectMetaArgs
_Core = k8s.core.v1


def gpu_container(name: str, image: str, *, cpu: str, memory: str, port: int | None = None,
                  command: list[str] | None = None, args: list[str] | None = None
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
        security_context=_Core.SecurityContextArgs(allow_privilege_escalation=False),
    )


def _pod_spec(pool: KubernetesPoolConfig, container: k8s.core.v1.ContainerArgs, *,
              restart: str = "Always") -> k8s.core.v1.PodSpecArgs:
    return _Core.PodSpecArgs(
        containers=[container],
        node_selector=dict(pool.node_selector),
        tolerations=gpu_tolerations(),
        restart_policy=restart,
        automount_service_account_token=False,
    )


def utilisation_query(namespace: str, deployment: str) -> str:
    """Summed GPU utilisation of a Deployment's pods (``<name>-<replicaset>-<pod>``)."""
    return (f'sum({UTILISATION_METRIC}{{namespace="{namespace}",'
            f'pod=~"{deployment}-[a-z0-9]+-[a-z0-9]+"}})')


def scaled_object(prefix: str, name: str, namespace: str, labels: Mapping[str, str], *,
                  min_replicas: int, max_replicas: int, target: float, prometheus: str,
                  opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    """KEDA ScaledObject: replicas = ceil(sum of GPU utilisation / target), within the bounds."""
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
        "minReplicaCount": min_replicas,
        "maxReplicaCount": max_replicas,
        "pollingInterval": 15,
        "cooldownPeriod": SCALE_DOWN_WINDOW_S,
        "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {
            "scaleDown": {"stabilizationWindowSeconds": SCALE_DOWN_WINDOW_S}}}},
        "triggers": [{
            "type": "prometheus",
            "metricType": "AverageValue",
            "metadata": {
                "serverAddress": prometheus,
                "query": utilisation_query(namespace, name),
                "threshold": f"{target:g}",
            },
        }],
    }
    return k8s.apiextensions.CustomResource(
        f"{prefix}-scaler",
        api_version="keda.sh/v1alpha1",
        kind="ScaledObject",
        metadata=_Meta(name=name, namespace=namespace, labels=dict(labels)),
        spec=spec,
        opts=opts,
    )


def inference(prefix: str, pool: KubernetesPoolConfig, w: WorkloadConfig, namespace: str,
              labels: Mapping[str, str], opts: pulumi.ResourceOptions) -> k8s.apps.v1.Deployment:
    """Deployment (no replicas: KEDA owns them) + Service + ScaledObject on GPU utilisation."""
    own = app_labels(dict(labels), w.name, "gpu-workload")
    container = gpu_container(w.name, w.image, cpu=w.cpu, memory=w.memory, port=w.port,
                              command=w.command, args=w.args)
    deployment = k8s.apps.v1.Deployment(
        f"{prefix}-deployment",
        metadata=_Meta(name=w.name, namespace=namespace, labels=own),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(w.name)),
            strategy=k8s.apps.v1.DeploymentStrategyArgs(
                type="RollingUpdate",
                # a GPU is not free to surge into: replace one pod at a time
                rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_surge=0,
                                                                       max_unavailable=1),
            ),
            template=_Core.PodTemplateSpecArgs(metadata=_Meta(labels=own),
                                               spec=_pod_spec(pool, container)),
        ),
        opts=opts,
    )
    _Core.Service(
        f"{prefix}-service",
        metadata=_Meta(name=w.name, namespace=namespace, labels=own),
        spec=_Core.ServiceSpecArgs(type="ClusterIP", selector=selector(w.name), ports=[
            _Core.ServicePortArgs(name="serve", port=w.port, target_port="serve", protocol="TCP")]),
        opts=opts,
    )
    scaled_object(prefix, w.name, namespace, own, min_replicas=w.min_replicas,
                  max_replicas=w.max_replicas, target=w.target_gpu_utilisation,
                  prometheus=pool.monitoring.prometheus_address,
                  opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                      depends_on=[deployment])))
    return deployment


def batch(prefix: str, pool: KubernetesPoolConfig, w: WorkloadConfig, namespace: str,
          labels: Mapping[str, str], opts: pulumi.ResourceOptions) -> k8s.batch.v1.Job:
    """A Job of ``completions`` pods, ``parallelism`` at a time, one GPU each."""
    own = app_labels(dict(labels), w.name, "gpu-workload")
    container = gpu_container(w.name, w.image, cpu=w.cpu, memory=w.memory, command=w.command,
                              args=w.args)
    return k8s.batch.v1.Job(
        f"{prefix}-job",
        metadata=_Meta(name=w.name, namespace=namespace, labels=own),
        spec=k8s.batch.v1.JobSpecArgs(
            parallelism=w.parallelism,
            completions=w.completions,
            backoff_limit=w.backoff_limit,
            ttl_seconds_after_finished=86_400,
            template=_Core.PodTemplateSpecArgs(
                metadata=_Meta(labels=own), spec=_pod_spec(pool, container, restart="Never")),
        ),
        opts=opts,
    )


def remote_gpu_proxy(prefix: str, pool: KubernetesPoolConfig, proxy: RemoteGpuConfig,
                     namespace: str, labels: Mapping[str, str], opts: pulumi.ResourceOptions
                     ) -> k8s.core.v1.Service:
    """The GPU API remoting proxy: clients reach ``gpu-proxy.<namespace>`` by the Service name;
    only pods labelled ``gpupool.io/gpu-client: "true"`` get through the NetworkPolicy. The
    budget, when given, is annotated on the Deployment, its pods and the Service."""
    own = app_labels(dict(labels), PROXY_NAME, "gpu-proxy")
    notes = budget_annotations(proxy.budget) or None
    container = gpu_container(PROXY_NAME, proxy.image, cpu="4", memory="16Gi", port=proxy.port)
    deployment = k8s.apps.v1.Deployment(
        f"{prefix}-deployment",
        metadata=_Meta(name=PROXY_NAME, namespace=namespace, labels=own, annotations=notes),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(PROXY_NAME)),
            template=_Core.PodTemplateSpecArgs(metadata=_Meta(labels=own, annotations=notes),
                                               spec=_pod_spec(pool, container)),
        ),
        opts=opts,
    )
    service = _Core.Service(
        f"{prefix}-service",
        metadata=_Meta(name=PROXY_NAME, namespace=namespace, labels=own, annotations=notes),
        spec=_Core.ServiceSpecArgs(type="ClusterIP", selector=selector(PROXY_NAME), ports=[
            _Core.ServicePortArgs(name="remoting", port=proxy.port, target_port="serve",
                                  protocol="TCP")]),
        opts=opts,
    )
    k8s.networking.v1.NetworkPolicy(
        f"{prefix}-clients-only",
        metadata=_Meta(name=f"{PROXY_NAME}-clients-only", namespace=namespace, labels=own),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(PROXY_NAME)),
            policy_types=["Ingress"],
            ingress=[k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                from_=[k8s.networking.v1.NetworkPolicyPeerArgs(
                    namespace_selector=k8s.meta.v1.LabelSelectorArgs(),
                    pod_selector=k8s.meta.v1.LabelSelectorArgs(
                        match_labels={CLIENT_LABEL: "true"}),
                )],
                ports=[k8s.networking.v1.NetworkPolicyPortArgs(port=proxy.port, protocol="TCP")],
            )],
        ),
        opts=opts,
    )
    scaled_object(prefix, PROXY_NAME, namespace, own, min_replicas=proxy.min_replicas,
                  max_replicas=proxy.max_replicas, target=proxy.target_gpu_utilisation,
                  prometheus=pool.monitoring.prometheus_address,
                  opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                      depends_on=[deployment])))
    return service
