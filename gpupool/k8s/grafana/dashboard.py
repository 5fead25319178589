"""A Kubernetes pool's Grafana dashboard: the compute-debt picture from DCGM and
kube-state-metrics, as ``gpupool debt`` draws it (capacity grey, allocated yellow, used green).

Queries (PromQL, the pool's nodes picked by its GPU node selector through
``kube_node_labels``, as :mod:`gpupool.debt.prometheus.queries` reads them):

- capacity: GPUs the nodes offer, ``kube_node_status_allocatable`` of the GPU resources;
- allocated: GPUs requested by running pods, ``kube_pod_container_resource_requests`` joined
  with ``kube_pod_status_phase{phase="Running"}``;
- used: the GPUs' busy share, ``DCGM_FI_DEV_GPU_UTIL`` / 100 summed over the pool's GPUs (a
  reading outside 0-100 % is left out, never clamped);
- per team: allocation by the namespace's ``team`` label (``kube_namespace_labels``), use by
  the ``team`` label the exporter copies from the GPU pod.

Every series is drawn as steps with ``spanNulls`` off and no ``or vector(0)``: a scrape gap is
a gap, never a zero. The unit is GPUs; the window is the dashboard's time range, and the stat
panels say so ("over the range"). The dashboard validates against Grafana's dashboard schema
(:mod:`gpupool.k8s.grafana.validate`, vendored with its source).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

SCHEMA_VERSION: Final = 41  # Grafana 12's dashboard JSON schema version
GPU_RESOURCES: Final = "nvidia_com_gpu|nvidia_com_gpu_shared|nvidia_com_mig_.+"
UTIL: Final = "DCGM_FI_DEV_GPU_UTIL"
ENGINE: Final = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
DATASOURCE: Final = {"type": "prometheus", "uid": "${datasource}"}
LABEL: Final = "grafana_dashboard"  # what the Grafana chart's dashboard sidecar looks for
# gpupool debt's colours (gpupool.debt.chart.COLOURS; a test holds them equal)
COLOURS: Final = {"capacity": "#b0b0b0", "allocated": "#f2c12e", "used": "#3a9a48"}


def kube_label(key: str) -> str:
    """kube-state-metrics' name for a Kubernetes label: ``gpupool.io/pool`` →
    ``label_gpupool_io_pool``."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def node_filter(selector: Mapping[str, str]) -> str:
    """``* on (node) group_left() max by (node) (kube_node_labels{…})``, or nothing for a pool
    without a node selector (every node's GPUs)."""
    if not selector:
        return ""
    match = ", ".join(f'{kube_label(k)}="{_quote(v)}"' for k, v in sorted(selector.items()))
    return f" * on (node) group_left() max by (node) (kube_node_labels{{{match}}})"


def queries(selector: Mapping[str, str]) -> dict[str, str]:
    on_nodes = node_filter(selector)
    running = ("* on (namespace, pod, uid) group_left() max by (namespace, pod, uid) "
               '(kube_pod_status_phase{phase="Running"} == 1)')
    requests = ("max by (namespace, pod, uid, container, node) "
                f'(kube_pod_container_resource_requests{{resource=~"{GPU_RESOURCES}"}}) '
                f"{running}")

    def device(metric: str, bounds: str, by: str) -> str:
        return (f'max by ({by}) (label_replace({metric} {bounds}, "node", "$1", "Hostname", '
                '"(.+)"))')

    # each device's busy share: GR_ENGINE_ACTIVE (0-1) where the exporter has it (MIG
    # instances, profiling on), else GPU_UTIL / 100, as gpupool debt prefers them
    busy = (f"({device(ENGINE, '>= 0 <= 1', 'node, gpu, UUID, GPU_I_ID, namespace')} or on "
            f"(node, gpu, UUID) {device(UTIL, '>= 0 <= 100', 'node, gpu, UUID, namespace')} "
            "/ 100)")
    team = ('* on (namespace) group_left(label_team) max by (namespace, label_team) '
            '(kube_namespace_labels)')

    def by_team(expr: str) -> str:
        return f'sum by (team) (label_replace({expr} {team}, "team", "$1", "label_team", "(.+)"))'

    return {
        "capacity": ("sum(max by (node) (kube_node_status_allocatable"
                     f'{{resource=~"{GPU_RESOURCES}"}}){on_nodes})'),
        "allocated": f"sum(({requests}){on_nodes})",
        "used": f"sum({busy}{on_nodes})",
        "team_allocated": by_team(f"({requests}){on_nodes}"),
        "team_used": by_team(f"{busy}{on_nodes}"),
    }


def _target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"refId": ref, "datasource": DATASOURCE, "expr": expr, "legendFormat": legend,
            "range": True, "editorMode": "code"}


def _colour(name: str, colour: str) -> dict[str, Any]:
    # byNames with its options object (Grafana's ByNamesMatcherOptions): the dashboard schema
    # types a matcher's options as an object, which byName's bare string is not
    return {"matcher": {"id": "byNames", "options": {"mode": "include", "names": [name]}},
            "properties": [{"id": "color", "value": {"mode": "fixed", "fixedColor": colour}}]}


def _timeseries(panel_id: int, title: str, description: str, targets: list[dict[str, Any]],
                grid: dict[str, int], colours: Mapping[str, str] | None = None
                ) -> dict[str, Any]:
    return {
        "type": "timeseries", "id": panel_id, "title": title, "description": description,
        "datasource": DATASOURCE, "gridPos": grid, "targets": targets,
        "fieldConfig": {
            "defaults": {
                "unit": "none", "min": 0, "decimals": 1,
                "custom": {"drawStyle": "line", "lineInterpolation": "stepAfter",
                           "fillOpacity": 35, "lineWidth": 1, "spanNulls": False,
                           "insertNulls": False, "axisLabel": "GPUs", "showPoints": "never",
                           "stacking": {"mode": "none", "group": "A"}},
                "color": {"mode": "palette-classic"},
            },
            "overrides": [_colour(n, c) for n, c in (colours or {}).items()],
        },
        "options": {"legend": {"showLegend": True, "displayMode": "list",
                               "placement": "bottom"},
                    "tooltip": {"mode": "multi", "sort": "none"}},
    }


def _stat(panel_id: int, title: str, expr: str, unit: str, grid: dict[str, int],
          description: str) -> dict[str, Any]:
    return {
        "type": "stat", "id": panel_id, "title": title, "description": description,
        "datasource": DATASOURCE, "gridPos": grid,
        "targets": [{**_target(expr, title, "A"), "range": False, "instant": True}],
        "fieldConfig": {"defaults": {"unit": unit, "decimals": 1, "noValue": "not measured",
                                     "color": {"mode": "fixed", "fixedColor": "text"}},
                        "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "none", "graphMode": "none", "textMode": "value"},
    }


def dashboard(pool: str, selector: Mapping[str, str]) -> dict[str, Any]:
    """The dashboard of one pool (``selector``: its GPU node selector, {} for every node)."""
    q = queries(selector)
    step = "[$__range:$__interval]"
    hours = "$__interval_s / 3600"
    gpu_hours = {k: f"sum_over_time(({q[k]}){step}) * {hours}" for k in
                 ("capacity", "allocated", "used")}
    picture = ("Capacity grey (the nodes' allocatable GPUs), allocated yellow (GPUs requested "
               "by running pods), used green (the GPUs' busy share, DCGM): the yellow above the "
               "green is the compute debt. Unit: GPUs; window: the dashboard's time range; a "
               "gap is missing data, never zero.")
    full = {"h": 10, "w": 24, "x": 0}
    return {
        "uid": f"gpupool-{pool}"[:40],
        "title": f"gpupool: compute debt, pool {pool}",
        "description": "GPU capacity, allocation and use of the pool (gpupool render; the "
                       "same picture as gpupool debt).",
        "tags": ["gpupool", "gpu", "compute-debt"],
        "timezone": "utc",
        "editable": False,
        "graphTooltip": 1,
        "time": {"from": "now-7d", "to": "now"},
        "refresh": "5m",
        "schemaVersion": SCHEMA_VERSION,
        "templating": {"list": [{"type": "datasource", "name": "datasource",
                                 "label": "Prometheus", "query": "prometheus"}]},
        "annotations": {"list": []},
        "links": [],
        "panels": [
            _stat(1, "Utilisation over the range", f"({gpu_hours['used']}) / "
                  f"({gpu_hours['allocated']})", "percentunit",
                  {"h": 4, "w": 6, "x": 0, "y": 0}, "used / allocated GPU-hours"),
            _stat(2, "Debt over the range (GPU-hours)", f"({gpu_hours['allocated']}) - "
                  f"({gpu_hours['used']})", "none", {"h": 4, "w": 6, "x": 6, "y": 0},
                  "allocated minus used GPU-hours over the dashboard's time range"),
            _stat(3, "Allocated over the range (GPU-hours)", gpu_hours["allocated"], "none",
                  {"h": 4, "w": 6, "x": 12, "y": 0}, "GPU-hours requested by running pods"),
            _stat(4, "Idle capacity over the range (GPU-hours)", f"({gpu_hours['capacity']}) - "
                  f"({gpu_hours['allocated']})", "none", {"h": 4, "w": 6, "x": 18, "y": 0},
                  "capacity minus allocated GPU-hours"),
            _timeseries(5, f"GPUs of pool {pool}: capacity, allocated, used", picture,
                        [_target(q["capacity"], "capacity", "A"),
                         _target(q["allocated"], "allocated", "B"),
                         _target(q["used"], "used", "C")], {**full, "y": 4},
                        {"capacity": COLOURS["capacity"], "allocated": COLOURS["allocated"],
                         "used": COLOURS["used"]}),
            _timeseries(6, "GPUs allocated per team", "GPUs requested by running pods, by "
                        "their namespace's team label. Unit: GPUs.",
                        [_target(q["team_allocated"], "{{team}}", "A")], {**full, "y": 14}),
            _timeseries(7, "GPUs used per team", "The GPUs' busy share by the team label the "
                        "DCGM exporter copies from the pod. Unit: GPUs.",
                        [_target(q["team_used"], "{{team}}", "A")], {**full, "y": 24}),
        ],
    }
