"""The remote-GPU proxy on a Kubernetes pool: Deployment + Service + NetworkPolicy + scaler.

Clients reach ``gpu-proxy.<namespace>`` by the Service name; only pods labelled
``gpupool.io/gpu-client: "true"`` get through the NetworkPolicy. The budget, when given, is
annotated on the Deployment, its pods and the Service. The Deployment rolls without surging
(a surge pod would need a GPU past the team's quota) and is ready when the proxy listens on its
port; ``pulumi up`` waits for that up to ``readyTimeoutMinutes`` (infra.k8s.awaits).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import CLIENT_LABEL, KubernetesPoolConfig, RemoteGpuConfig
from infra.k8s.awaits import ready_within
from infra.k8s.labels import app_labels, budget_annotations, selector
from infra.k8s.scaling import scaled_object
from infra.k8s.workloads import gpu_container, no_surge, pod_spec

PROXY_NAME: Final = "gpu-proxy"

_Meta = k8s.meta.v1.ObjectMetaArgs
_Core = k8s.core.v1
_Net = k8s.networking.v1


def remote_gpu_proxy(prefix: str, pool: KubernetesPoolConfig, proxy: RemoteGpuConfig,
                     namespace: str, labels: Mapping[str, str], opts: pulumi.ResourceOptions
                     ) -> k8s.core.v1.Service:
    """The proxy's objects; returns its Service."""
    own = app_labels(dict(labels), PROXY_NAME, "gpu-proxy")
    notes = budget_annotations(proxy.budget) or None
    listening = _Core.ProbeArgs(tcp_socket=_Core.TCPSocketActionArgs(port="serve"),
                                period_seconds=10, failure_threshold=3)
    container = gpu_container(PROXY_NAME, proxy.image, cpu="4", memory="16Gi", port=proxy.port,
                              readiness=listening)
    awaited = pulumi.ResourceOptions.merge(opts, ready_within(proxy.ready_timeout_minutes))
    deployment = k8s.apps.v1.Deployment(
        f"{prefix}-deployment",
        metadata=_Meta(name=PROXY_NAME, namespace=namespace, labels=own, annotations=notes),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(PROXY_NAME)),
            strategy=no_surge(),
            template=_Core.PodTemplateSpecArgs(metadata=_Meta(labels=own, annotations=notes),
                                               spec=pod_spec(pool, container)),
        ),
        opts=awaited,
    )
    service = _Core.Service(
        f"{prefix}-service",
        metadata=_Meta(name=PROXY_NAME, namespace=namespace, labels=own, annotations=notes),
        spec=_Core.ServiceSpecArgs(type="ClusterIP", selector=selector(PROXY_NAME), ports=[
            _Core.ServicePortArgs(name="remoting", port=proxy.port, target_port="serve",
                                  protocol="TCP")]),
        opts=awaited,
    )
    _Net.NetworkPolicy(
        f"{prefix}-clients-only",
        metadata=_Meta(name=f"{PROXY_NAME}-clients-only", namespace=namespace, labels=own),
        spec=_Net.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(PROXY_NAME)),
            policy_types=["Ingress"],
            ingress=[_Net.NetworkPolicyIngressRuleArgs(
                from_=[_Net.NetworkPolicyPeerArgs(
                    namespace_selector=k8s.meta.v1.LabelSelectorArgs(),
                    pod_selector=k8s.meta.v1.LabelSelectorArgs(
                        match_labels={CLIENT_LABEL: "true"}),
                )],
                ports=[_Net.NetworkPolicyPortArgs(port=proxy.port, protocol="TCP")],
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
