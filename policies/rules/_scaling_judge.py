# ruff: noqa: RUF001  (en dashes of ranges, as users read them in messages)
"""Does one scaling policy make its group scale on GPU utilisation? (gpu-pool-scales-on-
utilisation judges groups; this judges each policy linked to one.) Unknowns are never "ok".
"""

from __future__ import annotations

from gpupool.record import Frozen
from policies.facts import PlanIndex, scaling_policy, text
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import prop

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Literal, Protocol

    Status = Literal["ok", "bad", "unknown"]
else:
    Protocol = object  # a structural type to the type checker, a plain class at run time
    Status = str  # "ok", "bad" or "unknown"

GROUP_DIMENSION = "AutoScalingGroupName"
_ASG = frozenset({ResourceKind.AUTOSCALING_GROUP})


class Targets(Protocol):
    """What the rule's parameters say a GPU scaling policy tracks."""

    metric_names: list[str]
    namespaces: list[str]
    min_target: float
    max_target: float
    require_group_dimension: bool


class Judgement(Frozen):
    __slots__ = ("status", "reason")
    status: Status
    reason: str

    def __init__(self, status: Status, reason: str = "") -> None:
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "reason", reason)


_OK = Judgement("ok")  # (shared: immutable, and most policies judged are ok)


def judge(policy: ResourceChange, group: ResourceChange | None, plan: PlanIndex,
          params: Targets) -> Judgement:
    """Does this policy make the group scale on GPU utilisation? Unknowns are never ok.

    Without a group, the group-specific check (the metric's group dimension) is left out.
    """
    sp = scaling_policy(policy.after)
    if sp.enabled is UNKNOWN:
        return _unknown(policy, "whether it is enabled is")
    if sp.enabled is False:
        return Judgement("bad", f"{_who(policy)} is disabled")
    if sp.policy_type is UNKNOWN:
        return _unknown(policy, prop(policy.type, "policy_type"))
    if sp.policy_type != "TargetTrackingScaling":
        return Judgement("bad", f"{_who(policy)} is a {sp.policy_type} policy, not target "
                                "tracking")
    if sp.metric_math:
        return Judgement("unknown", f"{_who(policy)} tracks a metric math expression, which "
                                    "cannot be verified to measure GPU utilisation")
    if isinstance(sp.predefined_metric, str):
        kind = "CPU" if "CPU" in sp.predefined_metric else sp.predefined_metric
        what = f"CPU ({sp.predefined_metric})" if kind == "CPU" else kind
        return Judgement("bad", f"{_who(policy)} scales on {what}, not GPU utilisation")
    if sp.predefined_metric is UNKNOWN or sp.metric_name is UNKNOWN or sp.namespace is UNKNOWN:
        return _unknown(policy, "its metric is")
    if sp.metric_name is None:
        return Judgement("bad", f"{_who(policy)} tracks no metric")
    if sp.metric_name not in params.metric_names or sp.namespace not in params.namespaces:
        metric = f"{sp.namespace}/{sp.metric_name}"
        what = f"CPU ({metric})" if "cpu" in sp.metric_name.lower() else metric
        return Judgement("bad", f"{_who(policy)} scales on {what}, not GPU utilisation")
    if sp.target is UNKNOWN:
        return _unknown(policy, "its target is")
    if sp.target is None:
        return Judgement("bad", f"{_who(policy)} has no target value")
    if not params.min_target <= sp.target <= params.max_target:
        return Judgement("bad", f"{_who(policy)}: target {sp.target:g} % is outside "
                                f"{params.min_target:g}–{params.max_target:g} %")
    if sp.disable_scale_in is UNKNOWN:
        return _unknown(policy, f"{prop(policy.type, 'disable_scale_in')} is")
    if sp.disable_scale_in:
        return Judgement("bad", f"{_who(policy)} sets {prop(policy.type, 'disable_scale_in')}: "
                                "the pool never scales back in and idle GPUs keep costing")
    if params.require_group_dimension and group is not None:
        return _judge_dimension(policy, group, plan, sp.dimensions)
    return _OK


def _who(policy: ResourceChange) -> str:
    return f"scaling policy {policy.name}"


def _unknown(policy: ResourceChange, what: str) -> Judgement:
    return Judgement("unknown", f"{_who(policy)}: {what} unknown until apply")


def _judge_dimension(policy: ResourceChange, group: ResourceChange, plan: PlanIndex,
                     dimensions: object) -> Judgement:
    if dimensions is UNKNOWN:
        return Judgement("unknown", f"{_who(policy)}: metric dimensions unknown until apply")
    assert isinstance(dimensions, dict)
    if GROUP_DIMENSION not in dimensions:
        return Judgement("bad", f"{_who(policy)}: the metric has no {GROUP_DIMENSION} dimension, "
                                "so it measures no group and the policy never acts")
    raw = dimensions[GROUP_DIMENSION]
    if type(raw) is str and raw and raw == (group.new or {}).get("name"):
        return _OK  # it names the group (most policies): read without text() or the property
    value = text(raw)
    name = text(group.after.get("name"))
    if value is None:
        return Judgement("bad", f"{_who(policy)}: the metric's {GROUP_DIMENSION} dimension has "
                                "no value")
    if isinstance(value, str):
        if value == name:
            return _OK
        if isinstance(name, str):
            return Judgement("bad", f"{_who(policy)}: the metric measures group {value}, not "
                                    f"{name}")
        # The group's name is not in the plan (computed, or autonamed at apply), but the policy
        # is proven to scale this group by reference and names it with the same value.
        own = text(policy.after.get("autoscaling_group_name"))
        if isinstance(own, str) and any(
                t.address == group.address
                for t in plan.references(policy, "autoscaling_group_name", _ASG)):
            if value == own:
                return _OK
            return Judgement("bad", f"{_who(policy)}: the metric measures group {value}, not "
                                    f"{own} (the group it scales)")
        return Judgement("unknown", f"{_who(policy)}: the group's name is unknown until apply, "
                                    f"so the metric's {GROUP_DIMENSION} {value} cannot be "
                                    "matched")
    if any(t.address == group.address for t in plan.references(policy, "", _ASG)):
        return _OK  # the value is a reference to this group (its name)
    return Judgement("unknown", f"{_who(policy)}: the metric's {GROUP_DIMENSION} is unknown "
                                "until apply")
