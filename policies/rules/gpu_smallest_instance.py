# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""gpu-smallest-instance: GPU capacity comes in the cheapest-per-GPU size, scaled out."""

from __future__ import annotations

from collections.abc import Iterable

from gpupool.catalog import Catalog
from policies.facts.requirements import Selection
from policies.model import ResourceChange, ResourceKind
from policies.rules._common import (
    cannot_verify,
    not_in_catalog,
    prices_of,
    prop,
    respelled,
    usd,
)
from policies.rules._proxy import bandwidth_sizing, proxy_min_gbps
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

_EPSILON = 1e-9  # prices are recorded to 1e-6; equal per-GPU prices must compare equal
# Bound once: on Python 3.11 an enum member read through its class costs a call (EnumType's
# __getattr__), ~10x a global; these are tested per resource.
_NODE_GROUP = ResourceKind.EKS_NODE_GROUP


class Params(RuleParams):
    allowed_instance_types: list[str] = param(
        default_factory=list,
        description="GPU instance types allowed whatever their size (e.g. p5.48xlarge for EFA).",
    )
    max_per_gpu_premium_pct: float = param(
        default=0.0,
        ge=0,
        description=(
            "How much more per GPU-hour than the smallest size a type may cost, in percent "
            "(0: no premium)."
        ),
    )


class GpuSmallestInstance(Rule):
    meta = RuleMeta(
        id="gpu-smallest-instance",
        title="GPU instances use the smallest size for their GPU",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "GPU capacity should come from the smallest size that carries the GPU (same model, "
            "memory and architecture), scaled out horizontally: g4dn.xlarge rather than "
            "g4dn.2xlarge, which adds CPU and memory for 43 % more per GPU-hour. A type passes "
            "when it is that smallest size, or when it costs no more per GPU-hour than the "
            "smallest size (plus maxPerGpuPremiumPct): p5.48xlarge, at p5.4xlarge's price per "
            "GPU, passes, and p4d.24xlarge passes because its A100 40 GB comes in no smaller "
            "size. Applies to instances, launch templates, launch configurations, ASG override "
            "lists and EKS node groups; types that carry no GPU are out of scope. Attribute-"
            "based selection (instance_requirements on an override or a launch template) is "
            "judged against the catalog like a Karpenter NodePool: every GPU type it can launch "
            "must be the smallest size for its GPU; requirements that name no accelerator admit "
            "GPU types by EC2's default, so a CPU group sets accelerator_count max = 0. One "
            "exception joins the remote-GPU idea: a resource tagged gpupool:role = gpu-proxy "
            "may run the cheapest size whose baseline bandwidth meets its budget "
            "(gpupool:remoting-min-gbps), because scaling out does not widen one client's "
            "flow; the report says so, and a size beyond it is still a violation."
        ),
        scope="resource",
        kinds=frozenset({
            ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
            ResourceKind.LAUNCH_CONFIGURATION, ResourceKind.AUTOSCALING_GROUP,
            ResourceKind.EKS_NODE_GROUP,
        }),
        params=Params,
        prop="instance_type",
    )

    examples = lazy_examples(lambda: (
        Example(
            title="The smallest T4 size",
            allowed=True,
            resources=[{"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                        "new": {"instanceType": "g4dn.xlarge"}}],
        ),
        Example(
            title="A bigger size of the same T4",
            allowed=False,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "trainer",
                        "new": {"instanceType": "g4dn.2xlarge"}}],
            message_contains=["g4dn.2xlarge is not the smallest size", "g4dn.xlarge",
                              "$0.752 per GPU-hour", "$0.526"],
        ),
        Example(
            title="Four T4s in one host cost more per GPU than four g4dn.xlarge",
            allowed=False,
            resources=[{"type": "aws_autoscaling_group", "name": "pool",
                        "address": "aws_autoscaling_group.pool",
                        "new": {"mixed_instances_policy": [{"launch_template": [{
                            "override": [{"instance_type": "g4dn.xlarge"},
                                         {"instance_type": "g4dn.12xlarge"}]}]}]}}],
            message_contains=["g4dn.12xlarge is not the smallest size", "$0.978 per GPU-hour"],
        ),
        Example(
            title="p5.48xlarge costs the same per GPU as p5.4xlarge",
            allowed=True,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "training",
                        "new": {"instanceType": "p5.48xlarge"}}],
        ),
        Example(
            title="p4d.24xlarge: the A100 40 GB comes in no smaller size",
            allowed=True,
            resources=[{"type": "aws:eks/nodeGroup:NodeGroup", "name": "training",
                        "new": {"instanceTypes": ["p4d.24xlarge"]}}],
        ),
        Example(
            title="A type allowed by parameter",
            allowed=True,
            params={"allowedInstanceTypes": ["g5.12xlarge"]},
            resources=[{"type": "aws:ec2/instance:Instance", "name": "multi",
                        "new": {"instanceType": "g5.12xlarge"}}],
        ),
        Example(
            title="A GPU-family type the catalog does not know is never a silent pass",
            allowed=False,
            unknown=True,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "legacy",
                        "new": {"instanceType": "p2.8xlarge"}}],
            message_contains=["cannot verify", "p2.8xlarge is not in the GPU catalog",
                              "NVIDIA K80"],
        ),
        Example(
            title="A type written in capitals is judged as the type it names",
            allowed=False,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "trainer",
                        "new": {"instanceType": "G4DN.16XLARGE"}}],
            message_contains=["g4dn.16xlarge is not the smallest size", "g4dn.xlarge"],
        ),
        Example(
            title="A GPU proxy sized for its bandwidth budget (8 Gbps: g4dn.2xlarge)",
            allowed=True,
            resources=[{"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "proxy",
                        "new": {"instanceType": "g4dn.2xlarge", "tags": {
                            "gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "8"}}}],
        ),
        Example(
            title="A GPU proxy bigger than its budget needs",
            allowed=False,
            resources=[{"type": "aws_launch_template", "name": "proxy",
                        "address": "aws_launch_template.proxy",
                        "new": {"instance_type": "g4dn.4xlarge", "tag_specifications": [
                            {"resource_type": "instance", "tags": {
                                "gpupool:role": "gpu-proxy",
                                "gpupool:remoting-min-gbps": "8"}}]}}],
            message_contains=["g4dn.4xlarge is not the smallest size",
                              "the proxy's budget (8 Gbps) justifies g4dn.2xlarge (10 Gbps "
                              "baseline) at most, never beyond"],
        ),
        Example(
            title="Attribute-based selection: one NVIDIA GPU of any size (Terraform override)",
            allowed=False,
            resources=[{"type": "aws_autoscaling_group", "name": "pool",
                        "address": "aws_autoscaling_group.pool",
                        "new": {"mixed_instances_policy": [{"launch_template": [{
                            "override": [{"instance_requirements": [{
                                "accelerator_count": [{"min": 1, "max": 1}],
                                "accelerator_manufacturers": ["nvidia"],
                                "vcpu_count": [{"min": 4, "max": 0}],
                                "memory_mib": [{"min": 16384, "max": 0}]}]}]}]}]}}],
            message_contains=["mixed_instances_policy.launch_template.override."
                              "instance_requirements can launch", "g4dn.16xlarge",
                              "costs 8.27× g4dn.xlarge per GPU-hour",
                              "not the smallest size for their GPU", "allowed_instance_types"],
        ),
        Example(
            title="Attribute-based selection of the smallest T4 size only (Pulumi)",
            allowed=True,
            resources=[{"type": "aws:autoscaling/group:Group", "name": "pool",
                        "new": {"maxSize": 4, "mixedInstancesPolicy": {"launchTemplate": {
                            "overrides": [{"instanceRequirements": {
                                "acceleratorNames": ["t4"],
                                "vcpuCount": {"min": 4, "max": 4},
                                "memoryMib": {"min": 16384, "max": 16384}}}]}}}}],
        ),
        Example(
            title="A launch template's requirements that name no accelerator admit GPU types",
            allowed=False,
            resources=[{"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "web",
                        "new": {"instanceRequirements": {"vcpuCount": {"min": 2, "max": 16},
                                                         "memoryMib": {"min": 4096}}}}],
            message_contains=["instanceRequirements names no accelerator",
                              "EC2's default then admits GPU types", "g4dn.4xlarge",
                              "set instanceRequirements.acceleratorCount.max = 0"],
        ),
        Example(
            title="A CPU group's requirements exclude accelerators (acceleratorCount max 0)",
            allowed=True,
            resources=[{"type": "aws:autoscaling/group:Group", "name": "web",
                        "new": {"mixedInstancesPolicy": {"launchTemplate": {
                            "overrides": [{"instanceRequirements": {
                                "acceleratorCount": {"max": 0},
                                "vcpuCount": {"min": 2, "max": 16},
                                "memoryMib": {"min": 4096}}}]}}}}],
        ),
        Example(
            title="Non-GPU types are out of scope",
            allowed=True,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "bastion",
                        "new": {"instanceType": "m7i.large"}}],
        ),
        Example(
            title="Instance type unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "aws_instance", "name": "gpu", "address": "aws_instance.gpu",
                        "new": {"instance_type": "(known after apply)"}}],
            message_contains=["cannot verify", "instance type unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        params: Params = ctx.params
        catalog = ctx.catalog
        types = ctx.plan.own_types(change)
        if types.unknown and change.kind is _NODE_GROUP and \
                ctx.plan.instance_types(change).via:
            return  # unset, so computed: its launch template's type, judged on the template
        if types.unknown:
            yield Finding(change.address, cannot_verify(types.unknown), unknown=True)
        for written, name in types.respelled:
            if catalog.may_carry_gpu(name):
                yield Finding(change.address, cannot_verify(respelled(written, name)),
                              unknown=True, detail={"written": written, "instance_type": name})
        # judged per instance_requirements block, below
        chosen = set(types.selected) if types.selections else ()
        for name in types.known:
            if name in params.allowed_instance_types or name in chosen:
                continue
            row = catalog.get(name)
            if row is None:
                if catalog.may_carry_gpu(name):
                    yield Finding(change.address, cannot_verify(not_in_catalog(name, catalog)),
                                  unknown=True, detail={"instance_type": name})
                continue
            if catalog.is_smallest(name):
                continue
            sizing = None
            min_gbps = proxy_min_gbps(change)
            if min_gbps is not None:
                sizing = bandwidth_sizing(catalog, name, min_gbps)
                if sizing is not None and sizing.allowed:
                    if name not in _old_types(change, ctx):  # said once, when it is chosen
                        yield Finding(change.address, sizing.reason, advisory_only=True,
                                      detail={"instance_type": name, "min_gbps": min_gbps})
                    continue
            smallest = catalog.smallest_like(name)
            assert smallest is not None  # name is in the catalog
            price, floor = row.price_per_gpu_hour, smallest.price_per_gpu_hour
            if price is None or floor is None:
                missing = name if price is None else smallest.instance_type
                yield Finding(change.address, cannot_verify(
                    f"{name} is not the smallest size for its GPU ({smallest.instance_type}) and "
                    f"{missing} has no recorded price ({prices_of(catalog)})"), unknown=True)
                continue
            ceiling = floor * (1 + params.max_per_gpu_premium_pct / 100)
            if price <= ceiling * (1 + _EPSILON):
                continue
            premium = (price / floor - 1) * 100
            why = f"; {sizing.reason}" if sizing is not None else ""
            yield Finding(
                change.address,
                f"{name} is not the smallest size for its GPU ({row.gpu_model}): "
                f"{usd(price)} per GPU-hour against "
                f"{usd(floor)} for {smallest.instance_type} (+{premium:.0f} %); use "
                f"{smallest.instance_type} and scale out horizontally{why} "
                f"({prices_of(catalog)})",
                detail={"instance_type": name, "smallest": smallest.instance_type,
                        "price_per_gpu_hour": round(price, 6),
                        "smallest_price_per_gpu_hour": round(floor, 6),
                        "price_region": catalog.meta.get("price_region", "us-east-1")},
            )


        for selection in types.selections:
            finding = _judge_selection(change, selection, catalog, params)
            if finding is not None:
                yield finding


def _too_big(name: str, catalog: Catalog, params: Params) -> bool | None:
    """Does ``name`` cost more per GPU-hour than the smallest size (plus the premium)? None
    when that cannot be told (no recorded price)."""
    if name in params.allowed_instance_types or catalog.is_smallest(name):
        return False
    row, smallest = catalog.get(name), catalog.smallest_like(name)
    if row is None or smallest is None:
        return False
    price, floor = row.price_per_gpu_hour, smallest.price_per_gpu_hour
    if price is None or floor is None:
        return None
    return price > floor * (1 + params.max_per_gpu_premium_pct / 100) * (1 + _EPSILON)


def _judge_selection(change: ResourceChange, selection: Selection, catalog: Catalog,
                     params: Params) -> Finding | None:
    """One finding per instance_requirements block: the sizes it can launch that are not the
    smallest for their GPU (as karpenter-gpu-smallest judges a NodePool)."""
    verdicts = {t: _too_big(t, catalog, params) for t in selection.types}
    bigger = sorted((t for t, v in verdicts.items() if v),
                    key=lambda t: -(_ratio(t, catalog) or 0.0))
    unpriced = [t for t, v in verdicts.items() if v is None]
    where = prop(change.type, selection.path)
    if not bigger:
        if unpriced:
            return Finding(change.address, cannot_verify(
                f"{where} can launch {', '.join(unpriced[:4])}, not the smallest size for its "
                f"GPU, with no recorded price ({prices_of(catalog)})"), unknown=True,
                prop=selection.path)
        return None
    smallest = sorted({s.instance_type for t in selection.types
                       if (s := catalog.smallest_like(t)) is not None})
    worst = bigger[0]
    floor = catalog.smallest_like(worst)
    ratio = _ratio(worst, catalog)
    cost = "" if floor is None or ratio is None else (
        f"; {worst} costs {ratio:.2f}× {floor.instance_type} per GPU-hour")
    shown = ", ".join(bigger[:6]) + (f" and {len(bigger) - 6} more" if len(bigger) > 6 else "")
    many = len(bigger) != 1
    launches = (f"can launch {len(bigger)} GPU instance type{'s' if many else ''} that "
                f"{'are' if many else 'is'} not the smallest size for their GPU ({shown}{cost})")
    floors = ", ".join(smallest[:8]) + (f" … {len(smallest)} in all" if len(smallest) > 8 else "")
    fix = (f"restrict it to the smallest size per GPU ({floors}) with "
           f"{prop(change.type, 'allowed_instance_types')}, or cap vCPUs and memory at that "
           "size's, and scale out horizontally")
    what = f"{where} {launches}"
    if not selection.asks_for_gpus:
        what = (f"{where} names no accelerator, and EC2's default then admits GPU types: "
                f"it {launches}")
        cap = prop(change.type, f"{selection.path}.accelerator_count.max")
        fix = f"set {cap} = 0 if it runs no GPU work; else {fix}"
    return Finding(change.address, f"{what}: {fix} ({prices_of(catalog)})",
                   detail={"too_big": bigger, "smallest": smallest,
                           "instance_requirements": selection.path},
                   prop=selection.path)


def _ratio(name: str, catalog: Catalog) -> float | None:
    row, floor = catalog.get(name), catalog.smallest_like(name)
    if row is None or floor is None or not row.price_per_gpu_hour or \
            not floor.price_per_gpu_hour:
        return None
    return row.price_per_gpu_hour / floor.price_per_gpu_hour


def _old_types(change: ResourceChange, ctx: RuleContext) -> tuple[str, ...]:
    return ctx.plan.own_types(change, "old").known if change.old is not None else ()


RULE = GpuSmallestInstance()
