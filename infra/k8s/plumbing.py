"""GPU plumbing of a cluster: the NVIDIA device plugin and the DCGM exporter.

The device plugin advertises ``nvidia.com/gpu`` on GPU nodes (skipped when the cluster runs
NVIDIA's GPU Operator, which brings its own); with time-slicing it advertises N replicas per
GPU. The DCGM exporter publishes ``DCGM_FI_DEV_GPU_UTIL`` per GPU with the pod, namespace and the
pod's chargeback labels attached (it reads pod labels, hence its read-only pod RBAC), on port
9400 behind a Service; a ServiceMonitor hands it to the Prometheus Operator when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import KubernetesPoolConfig
from infra.k8s.awaits import SKIP_AWAIT
from infra.k8s.images import DCGM_EXPORTER_IMAGE, DCGM_PORT, DEVICE_PLUGIN_IMAGE
from infra.k8s.labels import GPU_RESOURCE, app_labels, selector
from infra.k8s.nodes import gpu_tolerations, node_selector

SYSTEM_NAMESPACE: Final = "gpupool-system"
DEVICE_PLUGIN: Final = "nvidia-device-plugin"
DCGM_EXPORTER: Final = "dcgm-exporter"
TIME_SLICING_FILE: Final = "config.yaml"
# Pod labels the exporter copies onto GPU metrics: chargeback per team, and the workload.
METRIC_POD_LABELS: Final = "^(team|cost-center|environment|app.kubernetes.io/name)$"

_Meta = k8s.meta.v1.ObjectMetaArgs
_Core = k8s.core.v1


def system_namespace(prefix: str, labels: Mapping[str, str],
                     opts: pulumi.ResourceOptions) -> k8s.core.v1.Namespace:
    return _Core.Namespace(
        f"{prefix}-system-ns", metadata=_Meta(name=SYSTEM_NAMESPACE, labels=dict(labels)), opts=opts
    )


def device_plugin(prefix: str, pool: KubernetesPoolConfig, labels: Mapping[str, str],
                  opts: pulumi.ResourceOptions) -> k8s.apps.v1.DaemonSet:
    """The device plugin DaemonSet on GPU nodes, system-node-critical, optionally time-sliced."""
    own = app_labels(dict(labels), DEVICE_PLUGIN, "gpu-plumbing")
    volumes = [_Core.VolumeArgs(name="device-plugins", host_path=_Core.HostPathVolumeSourceArgs(
        path="/var/lib/kubelet/device-plugins", type="Directory"))]
    mounts = [_Core.VolumeMountArgs(name="device-plugins",
                                    mount_path="/var/lib/kubelet/device-plugins")]
    args: list[str] = []
    if pool.time_slicing_replicas is not None:
        config = _Core.ConfigMap(
            f"{prefix}-time-slicing",
            metadata=_Meta(name=f"{DEVICE_PLUGIN}-config", namespace=SYSTEM_NAMESPACE, labels=own),
            data={TIME_SLICING_FILE: time_slicing_config(pool.time_slicing_replicas)},
            opts=opts,
        )
        volumes.append(_Core.VolumeArgs(name="config", config_map=_Core.ConfigMapVolumeSourceArgs(
            name=config.metadata.name)))
        mounts.append(_Core.VolumeMountArgs(name="config", mount_path="/config", read_only=True))
        args = [f"--config-file=/config/{TIME_SLICING_FILE}"]
    return k8s.apps.v1.DaemonSet(
        f"{prefix}-device-plugin",
        metadata=_Meta(name=DEVICE_PLUGIN, namespace=SYSTEM_NAMESPACE, labels=own),
        spec=k8s.apps.v1.DaemonSetSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(DEVICE_PLUGIN)),
            update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
            template=_Core.PodTemplateSpecArgs(
                metadata=_Meta(labels=own),
                spec=_Core.PodSpecArgs(
                    priority_class_name="system-node-critical",
                    node_selector=node_selector(pool),
                    tolerations=gpu_tolerations(),
                    containers=[_Core.ContainerArgs(
                        name=DEVICE_PLUGIN,
                        image=DEVICE_PLUGIN_IMAGE,
                        args=args or None,
                        env=[_Core.EnvVarArgs(name="FAIL_ON_INIT_ERROR", value="false")],
                        security_context=_Core.SecurityContextArgs(
                            allow_privilege_escalation=False,
                            capabilities=_Core.CapabilitiesArgs(drop=["ALL"]),
                        ),
                        resources=_Core.ResourceRequirementsArgs(
                            requests={"cpu": "50m", "memory": "64Mi"},
                            limits={"memory": "256Mi"},
                        ),
                        volume_mounts=mounts,
                    )],
                    volumes=volumes,
                ),
            ),
        ),
        opts=opts,
    )


def time_slicing_config(replicas: int) -> str:
    """The device plugin's config file: each GPU advertised as ``replicas`` shared GPUs."""
    return (
        "version: v1\n"
        "sharing:\n"
        "  timeSlicing:\n"
        "    resources:\n"
        f"      - name: {GPU_RESOURCE}\n"
        f"        replicas: {replicas}\n"
    )


def dcgm_exporter(prefix: str, pool: KubernetesPoolConfig, labels: Mapping[str, str],
                  opts: pulumi.ResourceOptions) -> k8s.core.v1.Service:
    """Exporter DaemonSet + read-only pod RBAC + Service on 9400 (+ ServiceMonitor); the Service."""
    own = app_labels(dict(labels), DCGM_EXPORTER, "gpu-plumbing")
    account = _Core.ServiceAccount(
        f"{prefix}-dcgm-sa",
        metadata=_Meta(name=DCGM_EXPORTER, namespace=SYSTEM_NAMESPACE, labels=own),
        opts=opts,
    )
    role = k8s.rbac.v1.ClusterRole(
        f"{prefix}-dcgm-read-pods",
        metadata=_Meta(name=f"gpupool-{pool.name}-dcgm-read-pods", labels=own),
        rules=[k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["pods"],
                                          verbs=["get", "list", "watch"])],
        opts=opts,
    )
    k8s.rbac.v1.ClusterRoleBinding(
        f"{prefix}-dcgm-read-pods",
        metadata=_Meta(name=f"gpupool-{pool.name}-dcgm-read-pods", labels=own),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io",
                                         kind="ClusterRole", name=role.metadata.name),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=account.metadata.name,
                                          namespace=SYSTEM_NAMESPACE)],
        opts=opts,
    )
    env = [_Core.EnvVarArgs(name=k, value=v) for k, v in {
        "DCGM_EXPORTER_LISTEN": f":{DCGM_PORT}",
        "DCGM_EXPORTER_KUBERNETES": "true",
        "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS": "true",
        "DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX": METRIC_POD_LABELS,
    }.items()]
    # as upstream's manifest sets it: the exporter then watches only its own node's pods for
    # their labels (without it, every pod of the cluster, from every exporter)
    env.append(_Core.EnvVarArgs(name="NODE_NAME", value_from=_Core.EnvVarSourceArgs(
        field_ref=_Core.ObjectFieldSelectorArgs(field_path="spec.nodeName"))))
    k8s.apps.v1.DaemonSet(
        f"{prefix}-dcgm-exporter",
        metadata=_Meta(name=DCGM_EXPORTER, namespace=SYSTEM_NAMESPACE, labels=own),
        spec=k8s.apps.v1.DaemonSetSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector(DCGM_EXPORTER)),
            update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
            template=_Core.PodTemplateSpecArgs(
                metadata=_Meta(labels=own),
                spec=_Core.PodSpecArgs(
                    service_account_name=account.metadata.name,
                    node_selector=node_selector(pool),
                    tolerations=gpu_tolerations(),
                    containers=[_Core.ContainerArgs(
                        name=DCGM_EXPORTER,
                        image=DCGM_EXPORTER_IMAGE,
                        env=env,
                        ports=[_Core.ContainerPortArgs(name="metrics", container_port=DCGM_PORT)],
                        security_context=_Core.SecurityContextArgs(
                            run_as_non_root=False,
                            run_as_user=0,
                            allow_privilege_escalation=False,
                            capabilities=_Core.CapabilitiesArgs(add=["SYS_ADMIN"], drop=["ALL"]),
                        ),
                        resources=_Core.ResourceRequirementsArgs(
                            requests={"cpu": "100m", "memory": "128Mi"},
                            limits={"cpu": "200m", "memory": "256Mi"},
                        ),
                        volume_mounts=[_Core.VolumeMountArgs(
                            name="pod-resources", mount_path="/var/lib/kubelet/pod-resources",
                            read_only=True)],
                    )],
                    volumes=[_Core.VolumeArgs(name="pod-resources",
                                              host_path=_Core.HostPathVolumeSourceArgs(
                                                  path="/var/lib/kubelet/pod-resources"))],
                ),
            ),
        ),
        opts=opts,
    )
    service = _Core.Service(
        f"{prefix}-dcgm-exporter",
        # endpoints exist only once a GPU node runs the exporter (infra.k8s.awaits)
        metadata=_Meta(name=DCGM_EXPORTER, namespace=SYSTEM_NAMESPACE, labels=own,
                       annotations=SKIP_AWAIT),
        spec=_Core.ServiceSpecArgs(
            type="ClusterIP",
            selector=selector(DCGM_EXPORTER),
            ports=[_Core.ServicePortArgs(name="metrics", port=DCGM_PORT, target_port="metrics",
                                         protocol="TCP")],
        ),
        opts=opts,
    )
    if pool.monitoring.service_monitor:
        k8s.apiextensions.CustomResource(
            f"{prefix}-dcgm-servicemonitor",
            api_version="monitoring.coreos.com/v1",
            kind="ServiceMonitor",
            # the cluster's Prometheus selects ServiceMonitors by label (kube-prometheus-stack:
            # release: <its Helm release>); the configured labels win over the kit's own
            metadata=_Meta(name=DCGM_EXPORTER, namespace=SYSTEM_NAMESPACE,
                           labels={**own, **pool.monitoring.service_monitor_labels}),
            spec={
                "selector": {"matchLabels": selector(DCGM_EXPORTER)},
                "namespaceSelector": {"matchNames": [SYSTEM_NAMESPACE]},
                "endpoints": [{
                    "port": "metrics",
                    "interval": pool.monitoring.scrape_interval,
                    # keep the exporter's namespace/pod labels (the GPU pod's), not the
                    # exporter pod's own target labels
                    "honorLabels": True,
                }],
            },
            opts=opts,
        )
    return service
