"""k8s-gpu-limits: GPUs are set in limits, requests (if set) equal them, counts are whole."""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import k8s
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    lazy_examples,
)


def _pod(resources: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "notebook", "namespace": "ds"},
            "spec": {"containers": [{"name": "jupyter", "image": "jupyter/base-notebook:2024-07-29",
                                     "resources": resources}]}}


class K8sGpuLimits(Rule):
    meta = RuleMeta(
        id="k8s-gpu-limits",
        title="GPUs are set in limits, as whole devices",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "GPUs are extended resources, which Kubernetes never overcommits: a GPU must be "
            "given in limits (requests default to the limit), requests may only repeat the same "
            "number, and the count must be a whole number. The API server rejects anything else "
            "at apply time (\"Limit must be set for non overcommitable resources\", \"must be "
            "equal to … limit\", \"must be an integer\"), after the pull request merged; this "
            "rule catches it in the pull request. A fraction of a GPU is time-slicing or MIG, "
            "configured on the device plugin, not a quantity like 500m. Every container of "
            "every kind in the Kubernetes kinds table below (a NIMService's spec.resources, a "
            "TrainJob's resourcesPerNode: the resources block the operator copies into its "
            "pods)."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                         ResourceKind.K8S_OBJECT}),
        k8s_lifecycles=frozenset({"service", "batch", "per-node", "pod", "template"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="GPU in limits only (requests default to it)",
            allowed=True,
            resources=[{"type": "kubernetes:core/v1:Pod", "name": "notebook",
                        "new": _pod({"limits": {"nvidia.com/gpu": 1}})}],
        ),
        Example(
            title="Requests equal to limits",
            allowed=True,
            resources=[{"type": "kubernetes:core/v1:Pod", "name": "notebook",
                        "new": _pod({"limits": {"nvidia.com/gpu": "1"},
                                     "requests": {"nvidia.com/gpu": "1", "cpu": "2"}})}],
        ),
        Example(
            title="GPU in requests only: the API server would reject it",
            allowed=False,
            resources=[{"type": "kubernetes:core/v1:Pod", "name": "notebook",
                        "new": _pod({"requests": {"nvidia.com/gpu": 1}})}],
            message_contains=["nvidia.com/gpu is in spec.containers[0].resources.requests but "
                              "not in limits", "Limit must be set for non overcommitable"],
        ),
        Example(
            title="Requests differ from limits",
            allowed=False,
            resources=[{"type": "kubernetes:core/v1:Pod", "name": "notebook",
                        "new": _pod({"limits": {"nvidia.com/gpu": 1},
                                     "requests": {"nvidia.com/gpu": 2}})}],
            message_contains=["requests 2 ≠ limits 1"],
        ),
        Example(
            title="Half a GPU as a quantity",
            allowed=False,
            resources=[{"type": "kubernetes:core/v1:Pod", "name": "notebook",
                        "new": _pod({"limits": {"nvidia.com/gpu": "500m"}})}],
            message_contains=["'500m' is not a whole number of GPUs", "time-slicing or MIG"],
        ),
        Example(
            title="GPU requests unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "kubernetes:core/v1:Pod", "name": "notebook",
                        "new": _pod({"limits": {"nvidia.com/gpu": 1},
                                     "requests": {"nvidia.com/gpu": "(known after apply)"}})}],
            message_contains=["cannot verify", "unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        found = k8s.read(change)
        obj = found.obj if found is not None else None
        if obj is None or obj.spec is UNKNOWN:
            if obj is not None and change.kind is ResourceKind.K8S_MANIFEST:
                yield Finding(change.address, cannot_verify("the manifest is unknown until apply"),
                              unknown=True)
            return
        wl = found.workload if found is not None else None
        if wl is None:
            return
        if wl.unknown:
            yield Finding(change.address, cannot_verify(f"{wl.who()}: {wl.unknown}"),
                          unknown=True)
            return
        for role in wl.roles:
            who = wl.who(role)
            if role.pods.unknown:
                yield Finding(change.address, cannot_verify(f"{who}: {role.pods.unknown}"),
                              unknown=True)
                continue
            for c in role.pods.gpu_containers:
                if c.unknown:
                    yield Finding(change.address, cannot_verify(f"{who} container {c.name}: "
                                                                f"{c.unknown}"), unknown=True)
                    continue
                for resource in c.resources:
                    yield from _judge(change, who, c, resource)


def _judge(change: ResourceChange, who: str, c: k8s.ContainerGpus, resource: str
           ) -> Iterable[Finding]:
    address = change.address
    limit, request = c.limits.get(resource), c.requests.get(resource)
    if limit is not None and request is None and limit.whole:
        return  # the common case: a whole count in limits only
    where = prop(change.type, c.resources_path)
    for q in (limit, request):
        if q is not None and q.unknown:
            yield Finding(address, cannot_verify(
                f"{who} container {c.name}: {resource} unknown until apply"), unknown=True)
            return
    for q in (limit, request):
        if q is not None and not q.whole:
            yield Finding(address, (
                f"{who}: container {c.name}: {q.shown()} is not a whole number of GPUs "
                f"({where}, {resource}); Kubernetes rejects it: GPUs are whole devices (share "
                "one with the device plugin's time-slicing or MIG instead)"))
            return
    if limit is None and request is not None:
        yield Finding(address, (
            f"{who}: container {c.name}: {resource} is in {where}.requests but not in limits; "
            "the API server rejects it (\"Limit must be set for non overcommitable resources\"): "
            f"set limits {resource}: {request.shown()} (requests may then be left out)"))
    elif limit is not None and request is not None and limit.value != request.value:
        yield Finding(address, (
            f"{who}: container {c.name}: {resource} requests {request.shown()} ≠ limits "
            f"{limit.shown()} ({where}); GPUs cannot be overcommitted, so Kubernetes requires "
            "them equal: set both to the same count (or only limits)"))


RULE = K8sGpuLimits()
