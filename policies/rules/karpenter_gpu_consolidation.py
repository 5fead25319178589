"""karpenter-gpu-consolidation: a GPU NodePool consolidates empty nodes, soon."""

from __future__ import annotations

import re
from collections.abc import Iterable

from policies.facts import k8s
from policies.facts.k8s.objects import K8sObject
from policies.facts.values import block, blocks, is_map
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules._gpu_nodes import is_node_pool, node_pool_gpus
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    lazy_examples,
)
from policies.rules.params import param

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

_POLICIES = {"v1": ("WhenEmpty", "WhenEmptyOrUnderutilized"),
             "v1beta1": ("WhenEmpty", "WhenUnderutilized")}
_DEFAULT_POLICY = {"v1": "WhenEmptyOrUnderutilized", "v1beta1": "WhenUnderutilized"}
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)")


class Params(RuleParams):
    max_consolidate_after_seconds: int = param(
        default=1800, ge=0,
        description=("The longest an empty GPU node may wait before Karpenter removes it "
                     "(disruption.consolidateAfter; Provisioner ttlSecondsAfterEmpty), in "
                     "seconds: default 30 minutes."))


def duration(text: str) -> float | None:
    """A Go duration (``30s``, ``1h30m``) in seconds; None when it is not one."""
    text = text.strip()
    if text in ("0", ""):
        return 0.0 if text == "0" else None
    pos, total = 0, 0.0
    for m in _PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    return total if pos == len(text) else None


def _nodepool(disruption: dict[str, Any] | None, api: str = "v1") -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"requirements": [
        {"key": "node.kubernetes.io/instance-type", "operator": "In",
         "values": ["g6.xlarge"]}]}}}
    if disruption is not None:
        spec["disruption"] = disruption
    return {"apiVersion": f"karpenter.sh/{api}", "kind": "NodePool",
            "metadata": {"name": "gpu"}, "spec": spec}


_NP = "kubernetes:karpenter.sh/v1:NodePool"


class KarpenterGpuConsolidation(Rule):
    meta = RuleMeta(
        id="karpenter-gpu-consolidation",
        title="GPU NodePools consolidate empty nodes",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "An empty GPU node bills its GPUs by the hour and runs nothing: it is compute "
            "debt. A NodePool that can launch GPU types must let Karpenter remove empty nodes, "
            "and soon: disruption.consolidationPolicy WhenEmpty or WhenEmptyOrUnderutilized "
            "(v1beta1: WhenEmpty or WhenUnderutilized; both are the default when unset) with "
            "disruption.consolidateAfter no longer than maxConsolidateAfterSeconds (Never "
            "fails), and no always-on disruption budget of 0 nodes that covers empty nodes "
            "(a budget without a schedule, nodes \"0\", whose reasons include Empty or are "
            "unset). Provisioners (v1alpha5) need spec.consolidation.enabled or "
            "spec.ttlSecondsAfterEmpty within the bound. Values unknown until apply are cannot "
            "verify."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.KARPENTER_NODE_POOL, ResourceKind.K8S_MANIFEST}),
        params=Params,
        prop="spec.disruption",
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Empty or underutilised GPU nodes go after 5 minutes",
            allowed=True,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(
                {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "5m"})}],
        ),
        Example(
            title="Karpenter's defaults (no disruption block)",
            allowed=True,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(None)}],
        ),
        Example(
            title="consolidateAfter Never",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(
                {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"})}],
            message_contains=["NodePool gpu", "spec.disruption.consolidateAfter is Never",
                              "empty GPU nodes"],
        ),
        Example(
            title="Empty GPU nodes kept for two hours",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(
                {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "2h"})}],
            message_contains=["consolidateAfter is 2h (7200 s)",
                              "maxConsolidateAfterSeconds 1800"],
        ),
        Example(
            title="A budget of zero nodes, always on",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(
                {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1m",
                 "budgets": [{"nodes": "0"}]})}],
            message_contains=["spec.disruption.budgets[0]", "nodes \"0\""],
        ),
        Example(
            title="A v1beta1 NodePool consolidating when underutilised",
            allowed=True,
            resources=[{"type": "kubernetes:karpenter.sh/v1beta1:NodePool", "name": "gpu",
                        "new": _nodepool({"consolidationPolicy": "WhenUnderutilized"},
                                         "v1beta1")}],
        ),
        Example(
            title="consolidateAfter unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool(
                {"consolidationPolicy": "WhenEmpty",
                 "consolidateAfter": "(known after apply)"})}],
            message_contains=["cannot verify", "consolidateAfter unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        obj = k8s.k8s_object(change)
        if obj is None:
            return
        if not is_node_pool(obj):
            if obj.spec is UNKNOWN and change.kind is ResourceKind.K8S_MANIFEST:
                yield Finding(change.address, cannot_verify("the manifest is unknown until "
                                                            "apply"), unknown=True)
            return
        name = f"{obj.kind} {obj.name if isinstance(obj.name, str) else '?'}"
        gpus = node_pool_gpus(obj, ctx.catalog)
        if gpus.unknown:
            yield Finding(change.address, cannot_verify(f"{name}: {gpus.unknown}"), unknown=True)
            return
        if not gpus.types:
            return
        judge = _provisioner if obj.kind == "Provisioner" else _node_pool
        for problem, path, unknown in judge(obj, ctx.params):
            where = prop(change.type, path)
            if unknown:
                yield Finding(change.address, cannot_verify(f"{name}: {problem}"),
                              unknown=True, prop=path)
                continue
            yield Finding(change.address, (
                f"{name} can launch GPU nodes ({gpus.shown()}) but {where} {problem}: empty "
                "GPU nodes would stay up, billed, running nothing; let Karpenter consolidate "
                f"them within {ctx.params.max_consolidate_after_seconds} s "
                "(consolidationPolicy WhenEmpty or WhenEmptyOrUnderutilized, consolidateAfter "
                "5m)"), prop=path)


def _node_pool(obj: K8sObject, params: Params) -> Iterable[tuple[str, str, bool]]:
    version = "v1beta1" if obj.api_version.endswith("v1beta1") else "v1"
    spec: Any = obj.spec or {}
    d = block(spec.get("disruption")) if is_map(spec) else None
    base = "spec.disruption"
    if d is UNKNOWN:
        yield "disruption unknown until apply", base, True
        return
    d = d or {}
    policy = d.get("consolidation_policy")
    after = d.get("consolidate_after")
    for key, value in (("consolidationPolicy", policy), ("consolidateAfter", after)):
        if value is UNKNOWN:
            yield f"{key} unknown until apply", base, True
            return
    policy = policy if policy is not None else _DEFAULT_POLICY[version]
    if policy not in _POLICIES[version]:
        yield (f"is {policy} (Karpenter {version} consolidates empty "
               f"nodes with {' or '.join(_POLICIES[version])})",
               f"{base}.consolidation_policy", False)
        return
    if after is not None:
        yield from _bound(str(after), f"{base}.consolidate_after", params)
    budgets = blocks(d.get("budgets"))
    if budgets is UNKNOWN:
        yield "budgets unknown until apply", f"{base}.budgets", True
        return
    for i, b in enumerate(budgets):
        if is_map(b) and _blocks_empty(b):
            yield ('holds nodes "0" at all times for empty nodes (no schedule)',
                   f"{base}.budgets[{i}]", False)


def _blocks_empty(budget: Any) -> bool:
    if budget.get("schedule") is not None or str(budget.get("nodes")).strip() not in ("0", "0%"):
        return False
    reasons = budget.get("reasons")
    return not isinstance(reasons, list) or not reasons or "Empty" in reasons


def _bound(text: str, path: str, params: Params) -> Iterable[tuple[str, str, bool]]:
    if text == "Never":
        yield "is Never", path, False
        return
    seconds = duration(text)
    if seconds is None:
        yield f"is {text!r}, not a duration (Karpenter takes 30s, 5m, 1h or Never)", path, False
    elif seconds > params.max_consolidate_after_seconds:
        yield (f"is {text} ({seconds:g} s), longer than maxConsolidateAfterSeconds "
               f"{params.max_consolidate_after_seconds}"), path, False


def _provisioner(obj: K8sObject, params: Params) -> Iterable[tuple[str, str, bool]]:
    spec: Any = obj.spec or {}
    consolidation = block(spec.get("consolidation"))
    if consolidation is UNKNOWN or (is_map(consolidation)
                                    and consolidation.get("enabled") is UNKNOWN):
        yield "consolidation unknown until apply", "spec.consolidation", True
        return
    if is_map(consolidation) and consolidation.get("enabled") is True:
        return
    ttl = spec.get("ttl_seconds_after_empty")
    if ttl is UNKNOWN:
        yield "ttlSecondsAfterEmpty unknown until apply", "spec.ttl_seconds_after_empty", True
    elif ttl is None:
        yield ("is unset and spec.consolidation is not enabled",
               "spec.ttl_seconds_after_empty", False)
    elif isinstance(ttl, int) and ttl > params.max_consolidate_after_seconds:
        yield (f"is {ttl} s, longer than maxConsolidateAfterSeconds "
               f"{params.max_consolidate_after_seconds}"), "spec.ttl_seconds_after_empty", False


RULE = KarpenterGpuConsolidation()
