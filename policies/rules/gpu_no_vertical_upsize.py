# ruff: noqa: RUF001, RUF002, RUF003  (× is the multiplication sign users read in messages)
"""gpu-no-vertical-upsize: a GPU resource changes size only to add GPUs, never CPU and memory.

Needs old and new inputs: the one thing CrossGuard alone cannot give a policy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from gpupool.catalog import Catalog
from gpupool.catalog.model import HOURS_PER_MONTH, GpuChange
from policies.model import ChangeKind, ResourceChange, ResourceKind
from policies.rules._common import (
    cannot_verify,
    cost_change,
    count,
    gpus,
    not_in_catalog,
    per_gpu_hour,
    prices_of,
    usd,
)
from policies.rules._proxy import bandwidth_sizing, proxy_min_gbps
from policies.rules._type_pairs import maybe_gpu, shown, type_pairs
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


class Params(RuleParams):
    allow_gpu_packing: bool = param(
        default=False,
        description=(
            "Allow a change to a size with more GPUs of the same model in one host (e.g. "
            "g4dn.xlarge → g4dn.12xlarge); set it for multi-GPU training that needs NVLink."
        ),
    )


KINDS = frozenset({
    ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE, ResourceKind.LAUNCH_CONFIGURATION,
    ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP,
    ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,  # pod templates: GPUs per pod
    ResourceKind.K8S_OBJECT,
})
POD_KINDS = frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                       ResourceKind.K8S_OBJECT})
# Bound once: on Python 3.11 an enum member read through its class costs a call (EnumType's
# __getattr__), ~10x a global; these are tested per resource.
_CHANGED = (ChangeKind.UPDATE, ChangeKind.REPLACE)


class GpuNoVerticalUpsize(Rule):
    meta = RuleMeta(
        id="gpu-no-vertical-upsize",
        title="Never scale a GPU instance vertically",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "A bigger size of the same GPU family usually carries the same GPU: g4dn.xlarge to "
            "g4dn.16xlarge keeps one T4 and costs 8.27× more. More vCPU and memory add cost, not "
            "GPU power; scale out with more of the smallest size instead. Packing more GPUs of "
            "the same model into one host (g4dn.xlarge → g4dn.12xlarge) costs more per GPU-hour "
            "and is denied unless allowGpuPacking is set. A change to another GPU model (T4 → "
            "A10G) is a GPU change, not vertical scaling: it is reported as information with both "
            "prices per GPU-hour. Looks at instance types of instances, launch templates, launch "
            "configurations, ASG override lists and EKS node groups, on updates and replacements; "
            "for attribute-based selection (instance_requirements), the smallest size it can "
            "launch per GPU, old against new. "
            "A GPU proxy (gpupool:role = gpu-proxy) may step up to the size its bandwidth budget "
            "(gpupool:remoting-min-gbps) needs and no further: bandwidth, not GPU. "
            "On Kubernetes the same idea applies to pods: a pod template whose GPUs per pod go "
            "up (1 → 4 nvidia.com/gpu) is vertical scaling; keep the GPUs per pod and run more "
            "replicas."
        ),
        scope="resource",
        kinds=KINDS,
        params=Params,
        needs_old_inputs=True,
        prop="instance_type",
        k8s_lifecycles=frozenset({"service", "batch", "per-node", "pod", "template"}),
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Instance upsized within the same GPU (one T4 either way)",
            allowed=False,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "trainer",
                "old": {"instanceType": "g4dn.xlarge"}, "new": {"instanceType": "g4dn.16xlarge"},
            }],
            message_contains=[
                "g4dn.xlarge → g4dn.16xlarge", "no GPU power",
                "+$3.826/h (+$2,792.98/month), no GPU added; "
                "add 1 × g4dn.xlarge for $0.526/h instead",
            ],
        ),
        Example(
            title="Launch template packs four T4s into one host",
            allowed=False,
            resources=[{
                "type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                "old": {"instanceType": "g4dn.xlarge"}, "new": {"instanceType": "g4dn.12xlarge"},
            }],
            message_contains=["g4dn.xlarge → g4dn.12xlarge", "1 × T4 → 4 × T4",
                              "+$3.386/h", "add 3 × g4dn.xlarge for $1.578/h instead"],
        ),
        Example(
            title="GPU packing allowed by parameter",
            allowed=True,
            params={"allowGpuPacking": True},
            resources=[{
                "type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                "old": {"instanceType": "g4dn.xlarge"}, "new": {"instanceType": "g4dn.12xlarge"},
            }],
        ),
        Example(
            title="Terraform ASG override list: g5.xlarge replaced by g5.4xlarge",
            allowed=False,
            resources=[{
                "type": "aws_autoscaling_group", "name": "pool",
                "address": "aws_autoscaling_group.pool",
                "old": {"mixed_instances_policy": [{"launch_template": [{
                    "override": [{"instance_type": "g5.xlarge"}]}]}]},
                "new": {"mixed_instances_policy": [{"launch_template": [{
                    "override": [{"instance_type": "g5.4xlarge"}]}]}]},
            }],
            message_contains=["g5.xlarge → g5.4xlarge", "no GPU power",
                              "add 1 × g5.xlarge for $1.006/h instead"],
        ),
        Example(
            title="Instance requirements whose vCPU minimum moves from 4 to 16 (Terraform)",
            allowed=False,
            resources=[{
                "type": "aws_launch_template", "name": "pool",
                "address": "aws_launch_template.pool",
                "old": {"instance_requirements": [{
                    "accelerator_names": ["t4"], "vcpu_count": [{"min": 4, "max": 8}],
                    "memory_mib": [{"min": 16384, "max": None}]}]},
                "new": {"instance_requirements": [{
                    "accelerator_names": ["t4"], "vcpu_count": [{"min": 16, "max": 16}],
                    "memory_mib": [{"min": 16384, "max": None}]}]},
            }],
            message_contains=["g4dn.xlarge → g4dn.4xlarge", "no GPU power"],
        ),
        Example(
            title="EKS node group upsized",
            allowed=False,
            resources=[{
                "type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu",
                "old": {"instanceTypes": ["g6.xlarge"]}, "new": {"instanceTypes": ["g6.2xlarge"]},
            }],
            message_contains=["g6.xlarge → g6.2xlarge", "no GPU power"],
        ),
        Example(
            title="p3.2xlarge to p3.16xlarge: one V100 becomes eight in one host",
            allowed=False,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "trainer",
                "old": {"instanceType": "p3.2xlarge"}, "new": {"instanceType": "p3.16xlarge"},
            }],
            message_contains=["p3.2xlarge → p3.16xlarge", "1 × V100 → 8 × V100",
                              "add 7 × p3.2xlarge"],
        ),
        Example(
            title="A type written in capitals is judged as the type it names",
            allowed=False,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "trainer",
                "old": {"instanceType": "g4dn.xlarge"}, "new": {"instanceType": "G4DN.16XLARGE"},
            }],
            message_contains=["g4dn.xlarge → g4dn.16xlarge", "no GPU power"],
        ),
        Example(
            title="A GPU-family type the catalog does not know cannot be judged, never passed",
            allowed=False,
            unknown=True,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "legacy",
                "old": {"instanceType": "p2.xlarge"}, "new": {"instanceType": "p2.16xlarge"},
            }],
            message_contains=["cannot verify", "p2.xlarge → p2.16xlarge",
                              "p2.xlarge is not in the GPU catalog"],
        ),
        Example(
            title="A GPU proxy steps up for its bandwidth budget (8 Gbps: g4dn.2xlarge)",
            allowed=True,
            resources=[{
                "type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
                "old": {"instanceType": "g4dn.xlarge"},
                "new": {"instanceType": "g4dn.2xlarge", "tags": {
                    "gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "8"}},
            }],
        ),
        Example(
            title="A GPU proxy steps beyond what its budget needs",
            allowed=False,
            resources=[{
                "type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
                "old": {"instanceType": "g4dn.xlarge"},
                "new": {"instanceType": "g4dn.8xlarge", "tags": {
                    "gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "8"}},
            }],
            message_contains=["g4dn.xlarge → g4dn.8xlarge adds", "justifies g4dn.2xlarge"],
        ),
        Example(
            title="Change to another GPU model (T4 → A10G) is information, not an upsize",
            allowed=True,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "inference",
                "old": {"instanceType": "g4dn.xlarge"}, "new": {"instanceType": "g5.xlarge"},
            }],
        ),
        Example(
            title="Downsize back to the smallest size",
            allowed=True,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "trainer",
                "old": {"instanceType": "g4dn.16xlarge"}, "new": {"instanceType": "g4dn.xlarge"},
            }],
        ),
        Example(
            title="A new instance is not an upsize (gpu-smallest-instance judges its size)",
            allowed=True,
            resources=[{
                "type": "aws:ec2/instance:Instance", "name": "fresh",
                "new": {"instanceType": "g4dn.xlarge"},
            }],
        ),
        Example(
            title="New instance type unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{
                "type": "aws_instance", "name": "trainer", "address": "aws_instance.trainer",
                "old": {"instance_type": "g4dn.xlarge"},
                "new": {"instance_type": "(known after apply)"},
            }],
            message_contains=["cannot verify", "instance type unknown until apply"],
        ),
        *_pod_examples(),  # pod templates: GPUs per pod, old against new
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        if change.change not in _CHANGED:
            return
        if change.kind in POD_KINDS:  # the Kubernetes readers are imported for pods only
            from policies.rules._pod_upsize import pod_upsize

            yield from pod_upsize(change)
            return
        params: Params = ctx.params
        catalog = ctx.catalog
        new = ctx.plan.own_types(change, "new")
        if change.old is None:
            if maybe_gpu(new, catalog):
                yield Finding(change.address, cannot_verify(
                    "the old inputs are not known (no baseline), so a change of instance type "
                    f"to {shown(new)} cannot be compared"), unknown=True)
            return
        old = ctx.plan.own_types(change, "old")
        if not old.complete or not new.complete:
            if maybe_gpu(old, catalog) and maybe_gpu(new, catalog):
                side = "new" if not new.complete else "old"
                reason = new.unknown if not new.complete else old.unknown
                yield Finding(change.address, cannot_verify(
                    f"{side} {reason} (was {shown(old)}, now {shown(new)})"), unknown=True)
            return
        pairs, unpaired = type_pairs(old, new, catalog)
        for a, b in pairs:
            delta = catalog.gpu_delta(a, b)
            if delta is not None:
                finding = self._judge(change.address, delta, catalog, params,
                                      proxy_min_gbps(change))
                if finding is not None:
                    yield finding
            elif catalog.may_carry_gpu(a) and catalog.may_carry_gpu(b):
                missing = a if catalog.get(a) is None else b
                yield Finding(change.address, cannot_verify(
                    f"{a} → {b}: {not_in_catalog(missing, catalog)}"), unknown=True,
                    detail={"old": a, "new": b})
        if unpaired:
            yield Finding(change.address, cannot_verify(
                f"{', '.join(unpaired)} replaced {shown(old)}: "
                + "; ".join(not_in_catalog(t, catalog) for t in unpaired)), unknown=True)

    def _judge(self, address: str, d: GpuChange, catalog: Catalog, params: Params,
               min_gbps: float | None = None) -> Finding | None:
        a, b = d.old, d.new
        price = d.price_delta_per_hour
        detail: dict[str, object] = {
            "old": a.instance_type, "new": b.instance_type,
            "delta_per_hour": None if price is None else round(price, 6),
            "delta_per_month": None if price is None else round(price * HOURS_PER_MONTH, 2),
            "price_region": catalog.meta.get("price_region", "us-east-1"),
        }
        basis = f" ({prices_of(catalog)})"
        if not d.same_gpu:
            return Finding(address, (
                f"GPU change {a.instance_type} → {b.instance_type} ({gpus(a)} → {gpus(b)}) is "
                f"not vertical scaling: {per_gpu_hour(a)} → {per_gpu_hour(b)}; "
                f"{cost_change(price)}{basis}"), advisory_only=True, detail=detail)
        if d.is_vertical_upsize:
            sizing = (bandwidth_sizing(catalog, b.instance_type, min_gbps)
                      if min_gbps is not None else None)
            if sizing is not None and sizing.allowed:
                return Finding(address, f"{a.instance_type} → {b.instance_type}: {sizing.reason}",
                               advisory_only=True, detail=detail)
            more = _more(d)
            why = f"; {sizing.reason}" if sizing is not None else ""
            return Finding(address, (
                f"{a.instance_type} → {b.instance_type} adds {more} but no GPU power "
                f"(still {gpus(b)}): {cost_change(price)}, no GPU added; "
                f"{_alternative(b.instance_type, 0, catalog, detail)}{why}{basis}"),
                detail=detail)
        if d.packs_more_gpus and not params.allow_gpu_packing:
            extra = d.gpu_count_delta
            return Finding(address, (
                f"{a.instance_type} → {b.instance_type} packs more GPUs into one host "
                f"({gpus(a)} → {gpus(b)}, +{count(extra)} GPU{'s' if extra != 1 else ''}) at "
                f"{per_gpu_hour(b)}: {cost_change(price)}; "
                f"{_alternative(b.instance_type, extra, catalog, detail)}{basis}"), detail=detail)
        return None


def _alternative(new_type: str, extra_gpus: float, catalog: Catalog,
                 detail: dict[str, object]) -> str:
    """The horizontal alternative: N × the smallest size carrying the same GPU."""
    smallest = catalog.smallest_like(new_type)
    if smallest is None:  # pragma: no cover - new_type is in the catalog
        return "scale out with more instances instead"
    n = max(1, math.ceil(extra_gpus / smallest.gpu_count - 1e-9))
    detail.update(alternative_type=smallest.instance_type, alternative_count=n)
    if smallest.price_per_hour is None:
        return f"add {n} × {smallest.instance_type} instead (no recorded price)"
    cost = n * smallest.price_per_hour
    detail["alternative_per_hour"] = round(cost, 6)
    return f"add {n} × {smallest.instance_type} for {usd(cost)}/h instead"


def _more(d: GpuChange) -> str:
    parts = []
    if d.vcpu_delta > 0:
        parts.append(f"{d.vcpu_delta} vCPU")
    if d.memory_mib_delta > 0:
        parts.append(f"{count(d.memory_mib_delta / 1024)} GiB memory")
    return " and ".join(parts)


def _pod_examples() -> tuple[Example, ...]:
    from policies.rules._pod_upsize_examples import EXAMPLES

    return tuple(EXAMPLES)


RULE = GpuNoVerticalUpsize()
