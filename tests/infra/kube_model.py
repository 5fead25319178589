"""What a real cluster does to the kit's objects, for tests with no API server: three behaviours
of Kubernetes, each written after its source so a test can hold rendered objects to them.

- ``limit_range_defaults``: the API server's defaulting of a LimitRange item
  (``SetDefaults_LimitRangeItem``, kubernetes ``pkg/apis/core/v1/defaults.go``): a Container item
  without ``default`` gets its ``max``, without ``defaultRequest`` its ``default``.
- ``admit``: the LimitRanger admission plugin on a pod (``PodLimitFunc`` and
  ``mergeContainerResources``, ``plugin/pkg/admission/limitranger/admission.go``): defaults fill
  each container's and init container's missing limits and requests, then ``max`` refuses a
  container above it or with no limit at all.
- ``unschedulable``: the scheduler's filters a GPU pod meets (NodeSelector, NodeAffinity's
  required terms, TaintToleration for NoSchedule/NoExecute, NodeResourcesFit for extended
  resources), returning why a node does not fit (nothing when it does).

Quantities here are the whole numbers the kit writes for GPUs ("0", "1", "2").
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def limit_range_defaults(item: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(item))
    if out.get("type") != "Container":
        return out
    default = out.setdefault("default", {})
    request = out.setdefault("defaultRequest", {})
    for key, value in (out.get("max") or {}).items():
        default.setdefault(key, value)
    for key, value in default.items():
        request.setdefault(key, value)
    for key, value in (out.get("min") or {}).items():
        request.setdefault(key, value)
    return out


def admit(pod_spec: Mapping[str, Any], limit_ranges: Sequence[Mapping[str, Any]]
          ) -> tuple[dict[str, Any], list[str]]:
    """The pod spec as LimitRanger leaves it, and its refusals (empty: admitted)."""
    spec = copy.deepcopy(dict(pod_spec))
    items = [limit_range_defaults(i) for lr in limit_ranges for i in lr["spec"]["limits"]]
    containers = [*spec.get("initContainers", []), *spec.get("containers", [])]
    for item in items:
        if item["type"] != "Container":
            continue
        for c in containers:
            resources = c.setdefault("resources", {})
            limits = resources.setdefault("limits", {})
            requests = resources.setdefault("requests", {})
            for key, value in item.get("default", {}).items():
                limits.setdefault(key, value)
            for key, value in item.get("defaultRequest", {}).items():
                requests.setdefault(key, value)
    errors: list[str] = []
    for item in items:  # max is enforced on app containers (PodLimitFunc)
        if item["type"] != "Container":
            continue
        for c in spec.get("containers", []):
            for key, most in (item.get("max") or {}).items():
                limit = c["resources"]["limits"].get(key)
                if limit is None:
                    errors.append(f"{c['name']}: maximum {key} usage per Container is {most}. "
                                  "No limit is specified.")
                elif int(limit) > int(most):
                    errors.append(f"{c['name']}: maximum {key} usage per Container is {most}, "
                                  f"but limit is {limit}.")
    return spec, errors


def gpus(container: Mapping[str, Any], resource: str = "nvidia.com/gpu") -> int:
    """The GPUs a container holds once admitted (its request; limits equal it)."""
    resources = container.get("resources") or {}
    return int((resources.get("requests") or {}).get(resource)
               or (resources.get("limits") or {}).get(resource) or 0)


@dataclass(frozen=True)
class Node:
    """A node as the scheduler sees it: labels, taints, allocatable extended resources."""

    name: str
    labels: Mapping[str, str]
    taints: Sequence[Mapping[str, str]] = ()
    allocatable: Mapping[str, int] = field(default_factory=dict)


def _tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, str]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _matches(term: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for e in term.get("matchExpressions", []):
        value, op = labels.get(e["key"]), e["operator"]
        if op == "In" and value not in e["values"]:
            return False
        if op == "NotIn" and value in e.get("values", []):
            return False
        if op == "Exists" and value is None:
            return False
        if op == "DoesNotExist" and value is not None:
            return False
    return True


def unschedulable(pod_spec: Mapping[str, Any], node: Node) -> list[str]:
    """Why ``node`` cannot take a pod of ``pod_spec`` (empty when it can)."""
    why: list[str] = []
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if node.labels.get(key) != value:
            why.append(f"nodeSelector {key}={value} not on the node")
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms and not any(_matches(t, node.labels) for t in terms):
        why.append("required node affinity does not match")
    for taint in node.taints:
        if taint["effect"] in ("NoSchedule", "NoExecute") and not _tolerates(
                pod_spec.get("tolerations") or [], taint):
            why.append(f"taint {taint['key']}:{taint['effect']} not tolerated")
    wanted: dict[str, int] = {}
    for c in pod_spec.get("containers", []):
        for key, value in ((c.get("resources") or {}).get("requests") or {}).items():
            if "/" in key:  # extended resources (nvidia.com/gpu); cpu/memory are not modelled
                wanted[key] = wanted.get(key, 0) + int(value)
    for key, count in wanted.items():
        if count > node.allocatable.get(key, 0):
            why.append(f"{count} {key} wanted, {node.allocatable.get(key, 0)} allocatable")
    return why
