# ruff: noqa: RUF001  (the multiplication sign users read in cost notes)
"""Run the enabled rules over normalised plans, apply waivers, and price the GPU changes.

Waivers are applied and judged by :mod:`policies.waivers`. One pass per plan and rule, in plan
order; the plan's links (ASG ↔ launch template
↔ scaling policy) are indexed once (:class:`policies.facts.PlanIndex`), so evaluation grows
linearly with the plan. A rule that raises becomes a :class:`RuleError` (the check fails); it
never takes the other rules down with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import partial

from gpupool.catalog import Catalog, load_catalog
from gpupool.gcpause import paused_gc
from policies.facts import PlanIndex, Side, block, number, override_weights
from policies.facts.k8s import Census
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, ResourceKind
from policies.result import CostLine, GpuObjects, KindCount, Result, RuleError, Violation
from policies.rules import ALL_RULES
from policies.rules._common import prices_of
from policies.rules.base import Enforcement, Finding, Rule, RuleContext
from policies.settings import PolicySettings, Settings
from policies.waivers import judge as judge_waivers

_SKIPPED = (ChangeKind.DELETE, ChangeKind.READ)


def evaluate(
    plans: Sequence[Plan],
    settings: Settings,
    *,
    catalog: Catalog | None = None,
    today: date | None = None,
    changed_only: bool = False,
) -> Result:
    """Evaluate every enabled rule over every plan; see the module docstring.

    Every resource of a plan is judged except those it deletes or only reads: unchanged
    (no-op) ones too, since a plan is what will run. ``changed_only`` judges only what the plan
    creates, updates or replaces; rules still follow links to unchanged resources (a changed
    scaling policy is judged against its unchanged group).

    The cyclic garbage collector is paused meanwhile (:mod:`gpupool.gcpause`): the findings,
    facts and index entries of a large plan are acyclic, and collections rescanning the plan
    cost a 100k-resource check a third of its evaluation.
    """
    with paused_gc():
        return _evaluate(plans, settings, catalog, today, changed_only)


def _evaluate(plans: Sequence[Plan], settings: Settings, catalog: Catalog | None,
              today: date | None, changed_only: bool) -> Result:
    catalog = catalog if catalog is not None else load_catalog()
    today = today if today is not None else date.today()
    enabled = [(r, settings.policies[r.meta.id]) for r in ALL_RULES
               if settings.policies[r.meta.id].enforcement is not Enforcement.DISABLED]
    violations: list[Violation] = []
    errors: list[RuleError] = []
    cost: list[CostLine] = []
    evaluated = 0
    regional: dict[str, Catalog] = {}
    census = Census()
    for plan in plans:
        index = PlanIndex(plan.changes, catalog)
        plan_catalog = priced_for(plan, catalog, regional)
        judged = plan.changes
        if changed_only:
            judged = tuple(c for c in plan.changes if c.change is not ChangeKind.NOOP)
        evaluated += len(judged)
        census.add(judged)
        found: list[Violation] = []
        for rule, policy in enabled:
            ctx = RuleContext(plan_catalog, policy.params, index.by_address, plan_index=index)
            emit = _Emitter(rule, policy, plan, index, found)
            if rule.meta.scope == "stack":
                _run(rule, partial(rule.check, plan.changes, ctx), emit, errors, None)
                continue
            kinds = rule.meta.kinds
            for change in judged:  # plan order: reports come out the same every run
                if change.kind in kinds and rule.applies_to(change):
                    _run(rule, partial(rule.check_resource, change, ctx), emit, errors,
                         change.address)
        if changed_only:  # stack-scope rules see the whole plan; keep what they say of changes
            found = [v for v in found if not _unchanged(index.by_address.get(v.resource))]
        violations.extend(by_cause(found, index))
        cost.extend(cost_lines(plan, index, plan_catalog))
    violations = judge_waivers(violations, settings, today)
    return Result(
        violations=violations,
        errors=errors,
        sources=[p.origin for p in plans],
        policies=[_policy_row(r, settings.policies[r.meta.id]) for r in ALL_RULES],
        resources_evaluated=evaluated,
        cost=cost,
        gpu_objects=GpuObjects(census.judged, tuple(
            KindCount(kind, api, n) for (kind, api), n in sorted(census.not_understood.items())),
            census.objects),
    )


def priced_for(plan: Plan, catalog: Catalog, cache: dict[str, Catalog]) -> Catalog:
    """The catalog priced for the region the plan deploys to (the catalog as given when the plan
    names no region: its prices are us-east-1's, and messages say the region is not known)."""
    region = plan.meta.get("region")
    if not isinstance(region, str) or not region:
        return catalog
    if region not in cache:
        cache[region] = catalog.for_region(region)
        cache[region].meta["price_region_from"] = "plan"
    return cache[region]


def _unchanged(change: ResourceChange | None) -> bool:
    return change is not None and change.change is ChangeKind.NOOP


@dataclass
class _Emitter:
    rule: Rule
    policy: PolicySettings
    plan: Plan
    index: PlanIndex
    out: list[Violation]

    def __call__(self, finding: Finding) -> None:
        change = self.index.by_address.get(finding.resource)
        self.out.append(Violation(
            policy=self.rule.meta.id,
            enforcement=level(finding, self.policy),
            resource=finding.resource,
            message=finding.message,
            resource_type=change.type if change is not None else "",
            source=(change.origin if change is not None and change.origin else self.plan.origin),
            unknown=finding.unknown,
            detail=dict(finding.detail),
            prop=finding.prop or self.rule.meta.prop,
        ))


_LAUNCHERS = frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE,
                        ResourceKind.EKS_NODE_GROUP})
_LAUNCHED_FROM = frozenset({ResourceKind.LAUNCH_TEMPLATE, ResourceKind.LAUNCH_CONFIGURATION})


def by_cause(found: list[Violation], index: PlanIndex) -> list[Violation]:
    """One finding per cause: a group, instance or node group whose finding says exactly what
    its launch template's (or launch configuration's) finding says shares that cause, so the
    two become one finding naming both, at the position of the first in plan order.

    Linear: links come from the plan index (cached, the rules have mostly asked already), and
    only findings on resources that launch from something are looked at.
    """
    def key(v: Violation) -> tuple[str, Enforcement, bool, str]:
        return v.policy, v.enforcement, v.unknown, v.message

    # Findings on launch templates and configurations, by (cause, address): the only ones a
    # launcher's finding can share a cause with. Most plans have none to share, and then this
    # one pass is all it costs.
    at: dict[tuple[tuple[str, Enforcement, bool, str], str], int] = {}
    for i, v in enumerate(found):
        change = index.by_address.get(v.resource)
        if change is not None and change.kind in _LAUNCHED_FROM:
            at.setdefault((key(v), v.resource), i)
    if not at:
        return found
    causes = {k for k, _ in at}
    root = list(range(len(found)))  # union-find over positions

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    linked = False
    for i, v in enumerate(found):
        if key(v) not in causes:
            continue
        change = index.by_address.get(v.resource)
        if change is None or change.kind not in _LAUNCHERS:
            continue
        links = index.launch_templates(change).targets
        if change.kind is ResourceKind.AUTOSCALING_GROUP:
            links += index.launch_configuration(change).targets
        for target in links:
            j = at.get((key(v), target.address))
            if j is not None:
                a, b = find(i), find(j)
                if a != b:
                    root[max(a, b)] = min(a, b)  # the first in plan order stays the root
                    linked = True
    if not linked:
        return found
    members: dict[int, list[int]] = {}
    for i in range(len(found)):
        members.setdefault(find(i), []).append(i)
    out = []
    for i, v in enumerate(found):
        if find(i) != i:
            continue  # folded into the finding at its root
        others = tuple(r for j in members[i][1:] for r in found[j].resources)
        out.append(replace(v, also=v.also + others) if others else v)
    return out


def _run(rule: Rule, call: Callable[[], Iterable[Finding]], emit: _Emitter,
         errors: list[RuleError], address: str | None) -> None:
    try:
        for finding in call():
            emit(finding)
    except Exception as e:  # a rule bug must fail the check, not crash it or pass it
        where = f" on {address}" if address else ""
        errors.append(RuleError(rule.meta.id, f"rule raised {type(e).__name__}{where}: {e}",
                                address))


def level(finding: Finding, policy: PolicySettings) -> Enforcement:
    """Enforcement of one finding: information is advisory; "cannot verify" is reported at the
    rule's unknownEnforcement, never stricter than the rule itself."""
    if finding.advisory_only:
        return Enforcement.ADVISORY
    if finding.unknown:
        wanted = Enforcement(policy.params.unknown_enforcement)
        if policy.enforcement is Enforcement.ADVISORY:
            return Enforcement.ADVISORY
        return wanted
    return policy.enforcement


def _policy_row(rule: Rule, policy: PolicySettings) -> dict[str, str]:
    return {
        "id": rule.meta.id,
        "title": rule.meta.title,
        "enforcement": policy.enforcement.value,
        "default_enforcement": rule.meta.default_enforcement.value,
        "scope": rule.meta.scope,
        "rationale": rule.meta.rationale,
    }


# --------------------------------------------------------------------------- cost


@dataclass(frozen=True, slots=True)
class _Price:
    per_hour: float | None  # None: cannot be priced
    gpu: bool  # does this side run GPU instances?
    note: str = ""


_NOTHING = _Price(0.0, False)


def cost_lines(plan: Plan, index: PlanIndex, catalog: Catalog) -> list[CostLine]:
    """On-demand cost before and after for the plan's GPU instances, groups and node groups.

    Groups are priced at their maximum size (the most the plan lets them cost) with the first of
    their GPU types, the one on-demand capacity is launched from; launch templates and
    configurations cost nothing by themselves.
    """
    out = []
    for change in plan.changes:
        if change.change in (ChangeKind.NOOP, ChangeKind.READ):
            continue
        if change.kind is ResourceKind.INSTANCE:
            price = _instance_price
        elif change.kind in (ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP):
            price = _group_price
        else:
            continue
        before = price(change, "old", index, catalog)
        after = price(change, "new", index, catalog)
        if not (before.gpu or after.gpu):
            continue
        notes = [n for n in (f"before: {before.note}" if before.note else "",
                             f"after: {after.note}" if after.note else "") if n]
        if before.note and before.note == after.note:
            notes = [before.note]
        out.append(CostLine(change.address, _round(before.per_hour), _round(after.per_hour),
                            "; ".join([change.change.value, prices_of(catalog), *notes])))
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _side_present(change: ResourceChange, side: Side) -> bool | None:
    """Does the resource exist on this side? None: it does, but its inputs are not known."""
    if side == "old":
        if change.change is ChangeKind.CREATE:
            return False
        return None if change.old is None else True
    return change.change is not ChangeKind.DELETE and change.new is not None


def _instance_price(change: ResourceChange, side: Side, index: PlanIndex,
                    catalog: Catalog) -> _Price:
    present = _side_present(change, side)
    if present is False:
        return _NOTHING
    if present is None:
        return _Price(None, False, "old inputs not known")
    types = index.own_types(change, side)
    if types.unknown:
        return _Price(None, False, types.unknown)
    if not types.known:  # an instance launched from a launch template of the plan
        link = index.launch_templates(change, side)
        if link.targets:
            types = index.own_types(link.targets[0], side)
    row = catalog.get(types.known[0]) if types.known else None
    if row is None:
        return _Price(None, False)
    if row.price_per_hour is None:
        return _Price(None, True, f"no recorded price for {row.instance_type}")
    return _Price(row.price_per_hour, True)


def _group_price(change: ResourceChange, side: Side, index: PlanIndex,
                 catalog: Catalog) -> _Price:
    present = _side_present(change, side)
    if present is False:
        return _NOTHING
    if present is None:
        return _Price(None, False, "old inputs not known")
    inputs = change.after if side == "new" else change.before
    types = index.instance_types(change, side)
    rows = [r for r in (catalog.get(t) for t in types.known) if r is not None]
    if not rows:
        return _Price(None, False, types.unknown or "")
    if change.kind is ResourceKind.EKS_NODE_GROUP:
        scaling = block(inputs.get("scaling_config"))
        size = UNKNOWN if scaling is UNKNOWN else (
            None if scaling is None else number(scaling.get("max_size")))
    else:
        size = number(inputs.get("max_size"))
    if not isinstance(size, float):
        what = "unknown until apply" if size is UNKNOWN else "not set"
        return _Price(None, True, f"max size {what}")
    weights = override_weights(inputs) if change.kind is ResourceKind.AUTOSCALING_GROUP else {}
    row = rows[0]  # on-demand capacity takes the types in priority order: the first one
    if row.price_per_hour is None:
        return _Price(None, True, f"no recorded price for {row.instance_type}")
    instances = math.ceil(size / weights.get(row.instance_type, 1.0))
    total = instances * row.price_per_hour
    note = f"at max size {instances} × {row.instance_type}"
    if len(rows) > 1:
        note += " (the first of its GPU types, on-demand priority order)"
    if types.unknown:
        note += f"; {types.unknown}"
    return _Price(total, True, note)
