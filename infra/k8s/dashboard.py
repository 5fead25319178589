"""The pool's Grafana dashboard as a ConfigMap the Grafana chart's sidecar loads.

The sidecar (``sidecar.dashboards.enabled``, on in kube-prometheus-stack) imports every
ConfigMap labelled ``grafana_dashboard: "1"`` in the namespaces it searches
(``sidecar.dashboards.searchNamespace``: kube-prometheus-stack searches ALL; otherwise add
``gpupool-system``). The dashboard itself is :mod:`gpupool.k8s.grafana.dashboard`, validated
against Grafana's dashboard schema by ``gpupool render``. ``monitoring.grafanaDashboard:
false`` in the pool's config leaves it out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from gpupool.config.kubernetes import KubernetesPoolConfig
from gpupool.k8s.grafana.dashboard import LABEL, dashboard
from infra.k8s.labels import app_labels
from infra.k8s.plumbing import SYSTEM_NAMESPACE

FOLDER_ANNOTATION = "grafana_folder"  # the sidecar's folderAnnotation, when it sets one


def grafana_dashboard(prefix: str, pool: KubernetesPoolConfig, labels: Mapping[str, str],
                      opts: pulumi.ResourceOptions) -> k8s.core.v1.ConfigMap:
    own = {**app_labels(dict(labels), "gpupool-dashboard", "monitoring"), LABEL: "1"}
    body = json.dumps(dashboard(pool.name, pool.gpu_node_selector), separators=(",", ":"),
                      sort_keys=True)
    return k8s.core.v1.ConfigMap(
        f"{prefix}-grafana-dashboard",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=f"gpupool-{pool.name}-dashboard", namespace=SYSTEM_NAMESPACE, labels=own,
            annotations={FOLDER_ANNOTATION: "gpupool"}),
        data={f"gpupool-{pool.name}.json": body + "\n"},
        opts=opts,
    )
