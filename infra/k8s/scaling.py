"""Autoscaling of GPU Deployments: a KEDA ``ScaledObject`` on measured GPU utilisation.

A Prometheus trigger on ``DCGM_FI_DEV_GPU_UTIL`` rather than an HPA on a prometheus-adapter
metric: the query travels with the workload in its own namespace (prometheus-adapter needs a
cluster-wide rules ConfigMap per metric, and there can be only one custom-metrics API server per
cluster), and KEDA itself creates and owns the ``autoscaling/v2`` HPA. KEDA must be installed in
the cluster (docs/kubernetes.md).

``ignoreNullValues: "false"``: KEDA's Prometheus scaler reads an empty result as 0 by default,
so a broken scrape (no exporter, a ServiceMonitor Prometheus does not select) would look like
idle GPUs and scale the workload down to its minimum; with it, no data is an error and KEDA
leaves the replicas where they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

UTILISATION_METRIC: Final = "DCGM_FI_DEV_GPU_UTIL"
SCALE_DOWN_WINDOW_S: Final = 300


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
                "ignoreNullValues": "false",  # no data is an error, never "0 % used"
            },
        }],
    }
    return k8s.apiextensions.CustomResource(
        f"{prefix}-scaler",
        api_version="keda.sh/v1alpha1",
        kind="ScaledObject",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=name, namespace=namespace, labels=dict(labels)),
        spec=spec,
        opts=opts,
    )
