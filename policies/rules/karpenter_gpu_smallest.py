# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""karpenter-gpu-smallest: a Karpenter NodePool launches only the smallest size per GPU."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from gpupool.catalog import Catalog, InstanceType
from policies.facts import k8s
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop, usd
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

_EPSILON = 1e-9
_CATEGORY = re.compile(r"^([a-z]+)(\d+)")
ARCH = {"x86_64": "amd64", "arm64": "arm64"}


class Params(RuleParams):
    max_per_gpu_premium_pct: float = param(
        default=0.0, ge=0,
        description=("How much more per GPU-hour than the smallest size an allowed type may "
                     "cost, in percent (as gpu-smallest-instance)."))


@lru_cache(maxsize=1024)
def labels_of(t: InstanceType) -> Mapping[str, str]:
    """The well-known labels Karpenter's AWS provider puts on a node of type ``t``, and EKS Auto
    Mode's: the same ``instance-*`` labels and values under ``eks.amazonaws.com/`` (its
    NodePools are Karpenter's; keys and formats as AWS's "Create a Node Pool for EKS Auto Mode"
    lists them)."""
    own = _karpenter_labels(t)
    eks = {f"{_EKS}{k.removeprefix(_KARPENTER_AWS)}": v for k, v in own.items()
           if k.startswith(_KARPENTER_AWS)}
    return {**own, **eks}


_KARPENTER_AWS = "karpenter.k8s.aws/"
_EKS = "eks.amazonaws.com/"


def _karpenter_labels(t: InstanceType) -> dict[str, str]:
    m = _CATEGORY.match(t.family)
    gpu_count = f"{t.gpu_count:g}" if float(t.gpu_count).is_integer() else "0"
    return {
        "node.kubernetes.io/instance-type": t.instance_type,
        "beta.kubernetes.io/instance-type": t.instance_type,
        "karpenter.k8s.aws/instance-family": t.family,
        "karpenter.k8s.aws/instance-size": t.size,
        "karpenter.k8s.aws/instance-category": m.group(1) if m else t.family,
        "karpenter.k8s.aws/instance-generation": m.group(2) if m else "",
        "karpenter.k8s.aws/instance-gpu-count": gpu_count,
        "karpenter.k8s.aws/instance-gpu-name": t.gpu_model.lower().replace(" ", "-"),
        "karpenter.k8s.aws/instance-gpu-manufacturer": t.gpu_maker.lower(),
        "karpenter.k8s.aws/instance-gpu-memory": str(t.gpu_memory_mib),
        "karpenter.k8s.aws/instance-cpu": str(t.vcpus),
        "karpenter.k8s.aws/instance-memory": str(t.memory_mib),
        "kubernetes.io/arch": ARCH.get(t.arch, t.arch),
        "beta.kubernetes.io/arch": ARCH.get(t.arch, t.arch),
    }


MODELLED = frozenset(labels_of(InstanceType("g4dn.xlarge", "g4dn", "xlarge", 4, 16384, "NVIDIA",
                                            "T4", 1, 15360, "x86_64", 5, 25, False, 0.526)))


def _matches(req: k8s.Requirement, labels: Mapping[str, str]) -> bool:
    value = labels.get(req.key)
    op = req.operator
    if op == "In":
        return value in req.values
    if op == "NotIn":
        return value not in req.values
    if op == "Exists":
        return bool(value)
    if op == "DoesNotExist":
        return not value
    if op in ("Gt", "Lt", "Gte", "Lte") and req.values:
        try:
            have, bound = int(value or ""), int(req.values[0])
        except ValueError:
            return False
        return {"Gt": have > bound, "Lt": have < bound, "Gte": have >= bound,
                "Lte": have <= bound}[op]
    return True  # an operator Kubernetes would reject: nothing excluded (fail closed)


@lru_cache(maxsize=256)
def allowed_types(catalog: Catalog, requirements: tuple[k8s.Requirement, ...]
                  ) -> tuple[InstanceType, ...]:
    """Catalog GPU types the requirements let Karpenter launch (keys the catalog cannot judge,
    such as zones or capacity type, exclude none)."""
    judged = [r for r in requirements if r.key in MODELLED]
    return tuple(t for t in catalog if all(_matches(r, labels_of(t)) for r in judged))


def _nodepool(requirements: list[dict[str, Any]], node_class: str = "karpenter.k8s.aws"
              ) -> dict[str, Any]:
    kind = "NodeClass" if node_class == "eks.amazonaws.com" else "EC2NodeClass"
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": node_class, "kind": kind, "name": "gpu"},
                "requirements": requirements}}}}


_NP = "kubernetes:karpenter.sh/v1:NodePool"


class KarpenterGpuSmallest(Rule):
    meta = RuleMeta(
        id="karpenter-gpu-smallest",
        title="Karpenter NodePools launch only the smallest size per GPU",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Karpenter picks instance types from what a NodePool's requirements allow; left "
            "open, a GPU pod can bring up g4dn.16xlarge (one T4, 8.27× the price of "
            "g4dn.xlarge) or a 4-GPU host that strands three GPUs. A NodePool that can launch "
            "GPU instances must allow only the smallest size for each GPU it allows (or one "
            "costing no more per GPU-hour, plus maxPerGpuPremiumPct), and grow by more nodes. "
            "The rule evaluates the requirements (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, "
            "Lte) on "
            "instance type, family, size, category, generation, GPU count, name, manufacturer "
            "and memory, CPU, memory and architecture against every type of the GPU catalog; "
            "requirement keys it cannot evaluate (zones, capacity type, custom labels) exclude "
            "nothing. NodePool (karpenter.sh/v1, v1beta1) and Provisioner (v1alpha5); EKS Auto "
            "Mode NodePools' eks.amazonaws.com/instance-* keys are read as Karpenter's own "
            "karpenter.k8s.aws/instance-* keys."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.KARPENTER_NODE_POOL, ResourceKind.K8S_MANIFEST}),
        params=Params,
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Only the smallest T4 and A10G sizes",
            allowed=True,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool([
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                 "values": ["g4dn.xlarge", "g5.xlarge"]}])}],
        ),
        Example(
            title="GPU families open to every size",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool([
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                 "values": ["g4dn", "g5"]}])}],
            message_contains=["NodePool gpu can launch 13 GPU instance types", "g4dn.16xlarge",
                              "costs 8.27× g4dn.xlarge per GPU-hour",
                              "not the smallest size for their GPU",
                              "spec.template.spec.requirements", "g4dn.xlarge, g5.xlarge"],
        ),
        Example(
            title="One GPU per node, but any size",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool([
                {"key": "karpenter.k8s.aws/instance-category", "operator": "In",
                 "values": ["g"]},
                {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In",
                 "values": ["1"]}])}],
            message_contains=["g4dn.16xlarge", "g6.16xlarge"],
        ),
        Example(
            title="A CPU-only NodePool cannot launch GPUs",
            allowed=True,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool([
                {"key": "karpenter.k8s.aws/instance-category", "operator": "In",
                 "values": ["c", "m", "r"]}])}],
        ),
        Example(
            title="EKS Auto Mode NodePool limited to xlarge g5 and g6",
            allowed=True,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool([
                {"key": "eks.amazonaws.com/instance-family", "operator": "In",
                 "values": ["g5", "g6"]},
                {"key": "eks.amazonaws.com/instance-size", "operator": "In",
                 "values": ["xlarge"]}], node_class="eks.amazonaws.com")}],
        ),
        Example(
            title="EKS Auto Mode NodePool open to every g5 and g6 size",
            allowed=False,
            resources=[{"type": _NP, "name": "gpu", "new": _nodepool([
                {"key": "eks.amazonaws.com/instance-family", "operator": "In",
                 "values": ["g5", "g6"]}], node_class="eks.amazonaws.com")}],
            message_contains=["g5.16xlarge", "not the smallest size for their GPU",
                              "g5.xlarge, g6.xlarge"],
        ),
        Example(
            title="Terraform kubernetes_manifest with requirements unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "kubernetes_manifest", "name": "gpu",
                        "address": "kubernetes_manifest.gpu",
                        "new": {"manifest": {"apiVersion": "karpenter.sh/v1",
                                             "kind": "NodePool", "metadata": {"name": "gpu"},
                                             "spec": {"template": {"spec": {
                                                 "requirements": "(known after apply)"}}}}}}],
            message_contains=["cannot verify", "requirements unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        obj = k8s.k8s_object(change)
        if obj is None:
            return
        if obj.kind not in ("NodePool", "Provisioner") or (
                obj.group and not obj.group.startswith("karpenter.sh")):
            if obj.spec is UNKNOWN and change.kind is ResourceKind.K8S_MANIFEST:
                yield Finding(change.address, cannot_verify("the manifest is unknown until "
                                                            "apply"), unknown=True)
            return
        reqs = k8s.node_requirements(obj)
        name = obj.name if isinstance(obj.name, str) else "?"
        if reqs.unknown:
            yield Finding(change.address, cannot_verify(f"{obj.kind} {name}: {reqs.unknown}"),
                          unknown=True)
            return
        params: Params = ctx.params
        catalog = ctx.catalog
        allowed = allowed_types(catalog, reqs.requirements)
        bigger = [t for t in allowed if _too_big(t, catalog, params.max_per_gpu_premium_pct)]
        if not bigger:
            return
        smallest = sorted({s.instance_type for t in allowed
                           if (s := catalog.smallest_like(t.instance_type)) is not None})
        ranked = sorted(bigger, key=lambda t: -_premium(t, catalog))
        worst = ranked[0]
        shown = ", ".join(t.instance_type for t in ranked[:6])
        more = f" and {len(bigger) - 6} more" if len(bigger) > 6 else ""
        floor = catalog.smallest_like(worst.instance_type)
        cost = "" if floor is None or _premium(worst, catalog) in (0, float("inf")) else (
            f"; {worst.instance_type} costs {_premium(worst, catalog):.2f}× {floor.instance_type} "
            f"per GPU-hour ({_price(worst)} against {_price(floor)})")
        yield Finding(change.address, (
            f"{obj.kind} {name} can launch {len(bigger)} GPU instance type"
            f"{'s' if len(bigger) != 1 else ''} that are not the smallest size for their GPU "
            f"({shown}{more}{cost}): restrict {prop(change.type, reqs.path)} to the smallest "
            f"size per GPU ({', '.join(smallest[:8])}) with node.kubernetes.io/instance-type In, "
            "and scale out with more nodes"),
            detail={"too_big": [t.instance_type for t in bigger], "smallest": smallest})


def _premium(t: InstanceType, catalog: Catalog) -> float:
    """Price per GPU-hour against the smallest size's: 8.27 for g4dn.16xlarge (0 if unpriced)."""
    floor = catalog.smallest_like(t.instance_type)
    if floor is None or t.price_per_gpu_hour is None or not floor.price_per_gpu_hour:
        return 0.0
    return t.price_per_gpu_hour / floor.price_per_gpu_hour


def _price(t: InstanceType) -> str:
    return "an unknown price" if t.price_per_gpu_hour is None else usd(t.price_per_gpu_hour)


def _too_big(t: InstanceType, catalog: Catalog, premium_pct: float) -> bool:
    if catalog.is_smallest(t.instance_type):
        return False
    smallest = catalog.smallest_like(t.instance_type)
    if smallest is None:
        return False
    price, floor = t.price_per_gpu_hour, smallest.price_per_gpu_hour
    if price is None or floor is None:
        return True  # cannot show it costs no more: not the smallest
    return price > floor * (1 + premium_pct / 100) * (1 + _EPSILON)


RULE = KarpenterGpuSmallest()
