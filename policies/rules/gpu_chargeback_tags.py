"""gpu-chargeback-tags: every GPU resource says who pays for it."""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import (
    Tags,
    group_propagates,
    group_tags,
    launch_tags,
    resource_tags,
    tags_set,
)
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
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

# Bound once: on Python 3.11 an enum member read through its class costs a call (EnumType's
# __getattr__), ~10x a global; these are tested per resource.
_ASG, _LAUNCH_TEMPLATE = ResourceKind.AUTOSCALING_GROUP, ResourceKind.LAUNCH_TEMPLATE
_GROUPS = (_ASG, ResourceKind.EKS_NODE_GROUP)


class Params(RuleParams):
    required_tags: list[str] = param(
        default_factory=lambda: ["team", "cost-center", "environment"],
        min_length=1,
        description="Tag keys every GPU resource carries (with a non-empty value).",
    )


class GpuChargebackTags(Rule):
    meta = RuleMeta(
        id="gpu-chargeback-tags",
        title="GPU resources carry chargeback tags",
        default_enforcement=Enforcement.ADVISORY,
        rationale=(
            "Compute debt (GPUs allocated minus GPUs used) can only be charged back to a team "
            "when every GPU resource says whose it is. Instances and EKS node groups need the "
            "tags themselves (Terraform's provider default_tags, seen in tags_all, count); a "
            "launch template needs them on itself or in its instance tag_specifications; an "
            "autoscaling group needs them with propagate_at_launch (or in the instance "
            "tag_specifications of its launch template), because only propagated tags reach "
            "the instances that cost money."
        ),
        scope="resource",
        kinds=frozenset({
            ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
            ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP,
        }),
        params=Params,
        prop="tags",
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Launch template tagging the instances it launches",
            allowed=True,
            resources=[{"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                        "new": {"instanceType": "g4dn.xlarge", "tagSpecifications": [{
                            "resourceType": "instance",
                            "tags": {"team": "ml", "cost-center": "cc-42",
                                     "environment": "dev"}}]}}],
        ),
        Example(
            title="GPU instance without a cost-center",
            allowed=False,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "trainer",
                        "new": {"instanceType": "g5.xlarge",
                                "tags": {"team": "ml", "environment": "prod"}}}],
            message_contains=["missing chargeback tags: cost-center"],
        ),
        Example(
            title="Terraform ASG tag not propagated at launch",
            allowed=False,
            resources=[{"type": "aws_autoscaling_group", "name": "pool",
                        "address": "aws_autoscaling_group.pool",
                        "new": {"mixed_instances_policy": [{"launch_template": [{
                                    "override": [{"instance_type": "g6.xlarge"}]}]}],
                                "tag": [
                                    {"key": "team", "value": "ml",
                                     "propagate_at_launch": True},
                                    {"key": "cost-center", "value": "cc-42",
                                     "propagate_at_launch": False},
                                    {"key": "environment", "value": "dev",
                                     "propagate_at_launch": True}]}}],
            message_contains=["not propagated at launch: cost-center",
                              "set propagate_at_launch = true"],
        ),
        Example(
            title="Tags from the provider's default_tags (Terraform tags_all)",
            allowed=True,
            resources=[{"type": "aws_instance", "name": "gpu", "address": "aws_instance.gpu",
                        "new": {"instance_type": "g4dn.xlarge", "tags": {"team": "ml"},
                                "tags_all": {"team": "ml", "cost-center": "cc-42",
                                             "environment": "dev"}}}],
        ),
        Example(
            title="Tags unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "aws_instance", "name": "gpu", "address": "aws_instance.gpu",
                        "new": {"instance_type": "g4dn.xlarge", "tags": {"team": "ml"},
                                "tags_all": "(known after apply)"}}],
            message_contains=["cannot verify", "cost-center, environment"],
        ),
        Example(
            title="Non-GPU instances are out of scope",
            allowed=True,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "bastion",
                        "new": {"instanceType": "t3.micro"}}],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        required: list[str] = ctx.params.required_tags
        kind = change.kind
        plan = ctx.plan
        types = plan.instance_types(change) if kind in _GROUPS else plan.own_types(change)
        is_gpu = False
        for t in types.known:  # (a loop: most resources have one type)
            if ctx.catalog.may_carry_gpu(t):
                is_gpu = True
                break
        if not is_gpu and types.complete:
            return
        # Most resources carry every required tag: proven by lookups, before any set is made.
        if kind is _ASG:
            if group_propagates(change.after, required):
                return
            missing, unpropagated, incomplete = self._group(change, ctx, required)
        else:
            if tags_set(change.after, required):
                return
            tags = resource_tags(change.after)
            if kind is _LAUNCH_TEMPLATE:
                extra = launch_tags(change.after)
                tags = Tags(tags.keys | extra.keys, tags.incomplete or extra.incomplete)
            missing, unpropagated = tags.missing(required), []
            incomplete = _TAGS_UNKNOWN if tags.incomplete else None
        if not missing and not unpropagated:
            return
        problem = "; ".join(filter(None, (
            f"missing chargeback tags: {', '.join(missing)} (required: {', '.join(required)})"
            if missing else "",
            f"tags not propagated at launch: {', '.join(unpropagated)}, so the group's "
            f"instances will not carry them (set {prop(change.type, 'propagate_at_launch')} "
            "= true)" if unpropagated else "",
        )))
        if incomplete or not is_gpu:
            why = [r for r in (incomplete, None if is_gpu else
                               f"whether it runs GPU instances is unknown ({types.unknown})") if r]
            yield Finding(change.address, cannot_verify(
                "; ".join(why) + f"; as planned: {problem}"), unknown=True)
        else:
            yield Finding(change.address, problem,
                          detail={"missing": missing, "unpropagated": unpropagated})

    def _group(self, change: ResourceChange, ctx: RuleContext, required: list[str]
               ) -> tuple[list[str], list[str], str | None]:
        """Required tags missing, present but not propagated, and why that may be incomplete."""
        tags = group_tags(change.after)
        if tags is UNKNOWN:
            return list(required), [], _TAGS_UNKNOWN
        propagated = {t.key for t in tags if t.propagate_at_launch is True}
        maybe = {t.key for t in tags if t.propagate_at_launch is UNKNOWN}
        present = {t.key for t in tags}
        link = ctx.plan.launch_templates(change)
        from_template: set[str] = set()
        incomplete = _TAGS_UNKNOWN if maybe else None
        for template in link.targets:
            extra = launch_tags(template.after)
            from_template |= extra.keys
            incomplete = incomplete or (_TAGS_UNKNOWN if extra.incomplete else None)
        reaching = propagated | maybe | from_template
        missing = [k for k in required if k not in present and k not in reaching]
        unpropagated = [k for k in required if k in present and k not in reaching]
        if link.unknown and (missing or unpropagated) and not incomplete:
            incomplete = f"the launch template's instance tags cannot be read ({link.unknown})"
        return missing, unpropagated, incomplete


_TAGS_UNKNOWN = "tags unknown until apply"


RULE = GpuChargebackTags()
