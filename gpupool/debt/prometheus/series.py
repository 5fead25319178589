"""The answers of :mod:`queries`, parsed: nodes, pods, GPU devices and the cluster's state.

Label names are the pinned exporters' own: kube-state-metrics v2 (``node``, ``resource``,
``namespace``, ``pod``, ``label_<sanitised key>`` for allow-listed labels) and dcgm-exporter
4.x (``gpu``, ``UUID``, ``modelName``, ``Hostname``, ``GPU_I_ID``, ``GPU_I_PROFILE``, and
``namespace``/``pod``/``container`` where it mapped the pod; ``exported_*`` when Prometheus
scraped it without ``honor_labels``). A device's node is its ``node`` label when a scrape
config added one, else its ``Hostname`` (the exporter's ``NODE_NAME``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

Buckets = dict[int, float]
PodKey = tuple[str, str]  # (namespace, pod)


@dataclass
class DeviceReading:
    """One GPU, or one MIG instance of one, on one node."""

    node: str
    uuid: str
    gpu: str
    instance: str  # GPU_I_ID; "" for a whole GPU
    profile: str  # GPU_I_PROFILE, e.g. 3g.20gb
    model: str
    util: Buckets = field(default_factory=dict)  # fraction of the device busy (0-1)
    engine: Buckets = field(default_factory=dict)  # DCGM_FI_PROF_GR_ENGINE_ACTIVE (0-1)
    holders: dict[int, set[PodKey]] = field(default_factory=dict)
    impossible: int = 0

    def value(self, i: int) -> float | None:
        """The bucket's use: the graphics engine's activity where DCGM has it, else GPU_UTIL."""
        return self.engine.get(i, self.util.get(i))


@dataclass
class Readings:
    nodes: dict[str, dict[str, Buckets]] = field(default_factory=dict)  # node → resource → b
    requests: dict[tuple[str, str, str], dict[str, Buckets]] = field(default_factory=dict)
    devices: dict[tuple[str, str, str, str], DeviceReading] = field(default_factory=dict)
    node_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    namespace_label_sets: dict[str, int] = field(default_factory=dict)  # >1: labels changed
    quotas: dict[str, float] = field(default_factory=dict)  # namespace → hard GPU requests
    hpa_max: dict[tuple[str, str], float] = field(default_factory=dict)
    nodepool_limits: dict[str, float] = field(default_factory=dict)
    unknown_hosts: dict[str, int] = field(default_factory=dict)  # DCGM hosts that are no node


def _value(raw: Any) -> float | None:
    try:
        v = float(raw)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def matrix(results: Iterable[dict[str, Any]], bucket: Callable[[float], int | None]
           ) -> Iterable[tuple[dict[str, str], Buckets]]:
    for series in results:
        labels = series.get("metric") or {}
        points: Buckets = {}
        for pair in series.get("values") or ():
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                continue
            i = bucket(float(pair[0]))
            v = _value(pair[1])
            if i is not None and v is not None:
                points[i] = v
        yield {str(k): str(v) for k, v in labels.items()}, points


def read_capacity(out: Readings, results: Iterable[dict[str, Any]],
                  bucket: Callable[[float], int | None]) -> None:
    for labels, points in matrix(results, bucket):
        node, resource = labels.get("node", ""), labels.get("resource", "")
        if node and resource:
            out.nodes.setdefault(node, {}).setdefault(resource, {}).update(points)


def read_requests(out: Readings, results: Iterable[dict[str, Any]],
                  bucket: Callable[[float], int | None]) -> None:
    for labels, points in matrix(results, bucket):
        key = (labels.get("namespace", ""), labels.get("pod", ""), labels.get("node", ""))
        if all(key):
            target = out.requests.setdefault(key, {}).setdefault(labels.get("resource", ""), {})
            for i, v in points.items():
                target[i] = target.get(i, 0.0) + v


def holder(labels: dict[str, str]) -> PodKey | None:
    ns = labels.get("exported_namespace") or labels.get("namespace") or ""
    pod = labels.get("exported_pod") or labels.get("pod") or ""
    return (ns, pod) if ns and pod else None


def _node(labels: dict[str, str], known: set[str]) -> tuple[str, bool]:
    for key in ("node", "Hostname", "hostname"):
        if labels.get(key) in known:
            return labels[key], True
    return labels.get("Hostname") or labels.get("node") or labels.get("hostname") or "", False


def device(out: Readings, labels: dict[str, str]) -> DeviceReading | None:
    node, known = _node(labels, set(out.nodes))
    if not known:
        if node:
            out.unknown_hosts[node] = out.unknown_hosts.get(node, 0) + 1
        return None
    key = (node, labels.get("UUID", ""), labels.get("gpu", ""), labels.get("GPU_I_ID", ""))
    found = out.devices.get(key)
    if found is None:
        found = out.devices[key] = DeviceReading(node, key[1], key[2], key[3],
                                                 labels.get("GPU_I_PROFILE", ""),
                                                 labels.get("modelName", ""))
    return found


def read_use(out: Readings, results: Iterable[dict[str, Any]],
             bucket: Callable[[float], int | None], engine: bool) -> None:
    """A device's series repeat once per holder pod (time-sliced GPUs): one value a bucket,
    every holder kept."""
    for labels, points in matrix(results, bucket):
        d = device(out, labels)
        if d is None:
            continue
        target = d.engine if engine else d.util
        who = holder(labels)
        for i, v in points.items():
            share = v if engine else v / 100
            target[i] = max(target.get(i, 0.0), share)
            if who is not None:
                d.holders.setdefault(i, set()).add(who)


def _vector(results: Iterable[dict[str, Any]]) -> Iterable[tuple[dict[str, str], float]]:
    for series in results:
        value = series.get("value")
        v = _value(value[1]) if isinstance(value, list | tuple) and len(value) == 2 else None
        if v is not None:
            yield {str(k): str(x) for k, x in (series.get("metric") or {}).items()}, v


def read_state(out: Readings, results: Iterable[dict[str, Any]]) -> None:
    for labels, v in _vector(results):
        kind = labels.get("gpupool_series")
        if kind == "namespace" and labels.get("namespace"):
            ns = labels["namespace"]
            found = {k[6:]: x for k, x in labels.items() if k.startswith("label_") and x}
            if out.namespace_labels.get(ns, found) != found:
                out.namespace_label_sets[ns] = out.namespace_label_sets.get(ns, 1) + 1
            out.namespace_labels[ns] = max(out.namespace_labels.get(ns, {}), found,
                                           key=lambda d: sorted(d.items()))
        elif kind == "node" and labels.get("node"):
            out.node_labels[labels["node"]] = {k[6:]: x for k, x in labels.items()
                                               if k.startswith("label_") and x}
        elif kind == "quota" and labels.get("namespace"):
            ns = labels["namespace"]
            if labels.get("resource", "").startswith("requests.") or ns not in out.quotas:
                out.quotas[ns] = v
        elif kind == "hpa" and labels.get("namespace") and labels.get("horizontalpodautoscaler"):
            out.hpa_max[(labels["namespace"], labels["horizontalpodautoscaler"])] = v
        elif kind == "nodepool" and labels.get("nodepool"):
            out.nodepool_limits[labels["nodepool"]] = v


def read_impossible(out: Readings, results: Iterable[dict[str, Any]]) -> None:
    for labels, v in _vector(results):
        d = device(out, labels)
        if d is not None and v > 0:
            d.impossible += int(v)
