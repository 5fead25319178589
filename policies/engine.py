"""Run the enabled rules over normalised plans, apply waivers, and price the GPU changes.

Waivers are applied and judged by :mod:`policies.waivers`, prices by :mod:`policies.cost`. One
pass per plan and rule, in plan order; the plan's links (ASG ↔ launch template ↔ scaling
policy) are indexed once (:class:`policies.facts.PlanIndex`), so evaluation grows linearly
with the plan. Only the rules that read a kind of resource the plan holds are imported and run
(:mod:`policies.rules.registry`), the proxy-tier ones only when it holds a GPU proxy or client
(:func:`policies.facts.network.roles.has_tier`). A rule that raises becomes a
:class:`RuleError` (the check fails); it never takes the other rules down with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

from gpupool.catalog import Catalog, load_catalog
from gpupool.gcpause import paused_gc
from gpupool.record import Record, replace
from policies.cost import cost_lines
from policies.facts import PlanIndex
from policies.facts.network.roles import has_tier
from policies.model import ChangeKind, Plan, ResourceChange, ResourceKind
from policies.result import CostLine, GpuObjects, KindCount, Result, RuleError, Violation
from policies.rules.base import NOT_JUDGED, Enforcement, Finding, Rule, RuleContext
from policies.rules.registry import INFOS, RuleInfo, load
from policies.settings import PolicySettings, Settings

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from datetime import date
    from typing import Any


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
    enabled = [(i, settings.policies[i.id]) for i in INFOS
               if settings.policies[i.id].enforcement is not Enforcement.DISABLED]
    violations: list[Violation] = []
    errors: list[RuleError] = []
    cost: list[CostLine] = []
    evaluated = 0
    regional: dict[str, Catalog] = {}
    census = _Census()
    for plan in plans:
        index = PlanIndex(plan.changes, catalog)
        plan_catalog = priced_for(plan, catalog, regional)
        judged = plan.changes
        if changed_only:
            judged = tuple(c for c in plan.changes if c.change is not ChangeKind.NOOP)
        evaluated += len(judged)
        kinds = {c.kind for c in plan.changes}
        census.add(judged, kinds)
        subjects = _Subjects(judged)
        found: list[Violation] = []
        for rule, policy in _to_run(enabled, kinds, errors, plan.changes):
            ctx = RuleContext(plan_catalog, policy.params, index.by_address, plan_index=index)
            emit = _Emitter(rule, policy, plan, index, found)
            if rule.meta.scope == "stack":
                _run(rule, partial(rule.check, plan.changes, ctx), emit, errors, None)
                continue
            _run_resources(rule, subjects.of(rule), ctx, emit, errors)
        if changed_only:  # stack-scope rules see the whole plan; keep what they say of changes
            found = [v for v in found if not _unchanged(index.by_address.get(v.resource))]
        violations.extend(by_cause(found, index))
        cost.extend(cost_lines(plan, index, plan_catalog))
    if settings.waivers:  # (with none, judging them changes nothing: not even imported)
        from datetime import date

        from policies.waivers import judge as judge_waivers

        violations = judge_waivers(violations, settings,
                                   today if today is not None else date.today())
    return Result(
        violations=violations,
        errors=errors,
        sources=[p.origin for p in plans],
        policies=[_policy_row(i, settings.policies[i.id]) for i in INFOS],
        resources_evaluated=evaluated,
        cost=cost,
        gpu_objects=census.gpu_objects(),
    )


def _to_run(enabled: Sequence[tuple[RuleInfo, PolicySettings]], kinds: set[ResourceKind],
            errors: list[RuleError], changes: Sequence[ResourceChange]
            ) -> list[tuple[Rule, PolicySettings]]:
    """The enabled rules that read a kind of resource the plan has, each module imported now.

    A rule reads only the kinds its metadata names (tests/policies/rules/test_registry.py runs
    every rule on every example without them: nothing), so the others cannot find anything and
    their modules are not imported. Likewise a ``proxy_tier`` rule on a plan without a GPU
    proxy or client (asked once per plan, of the changes; a question that raises runs them). A
    rule module that cannot be imported is a rule error."""
    out = []
    tier: bool | None = None
    for info, policy in enabled:
        if kinds.isdisjoint(info.kinds):
            continue
        if info.proxy_tier:
            if tier is None:
                tier = _has_tier(changes)
            if not tier:
                continue
        try:
            out.append((load(info.id), policy))
        except Exception as e:  # a broken rule module fails the check, never passes it
            errors.append(RuleError(info.id, f"rule could not be loaded: {type(e).__name__}: "
                                             f"{e}"))
    return out


def _has_tier(changes: Sequence[ResourceChange]) -> bool:
    """:func:`policies.facts.network.roles.has_tier`, failing closed: True when it raises."""
    try:
        return has_tier(changes)
    except Exception:  # the rules then run, and say what they cannot read
        return True


_K8S_KINDS = frozenset({ResourceKind.K8S_WORKLOAD, ResourceKind.K8S_MANIFEST,
                        ResourceKind.K8S_OBJECT, ResourceKind.K8S_NAMESPACE,
                        ResourceKind.K8S_RESOURCE_QUOTA, ResourceKind.K8S_AUTOSCALER,
                        ResourceKind.KARPENTER_NODE_POOL})


class _Census:
    """:class:`policies.facts.k8s.Census` over the plans that hold Kubernetes objects (the
    Kubernetes readers are imported only then)."""

    def __init__(self) -> None:
        self.census: Any = None

    def add(self, changes: Sequence[ResourceChange], kinds: set[ResourceKind]) -> None:
        if kinds.isdisjoint(_K8S_KINDS):
            return
        if self.census is None:
            from policies.facts.k8s import Census

            self.census = Census()
        self.census.add(changes)

    def gpu_objects(self) -> GpuObjects:
        c = self.census
        if c is None:
            return GpuObjects(0, (), 0)
        return GpuObjects(c.judged, tuple(
            KindCount(kind, api, n) for (kind, api), n in sorted(c.not_understood.items())),
            c.objects)


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


class _Emitter(Record):
    __slots__ = ("rule", "policy", "plan", "index", "out")
    rule: Rule
    policy: PolicySettings
    plan: Plan
    index: PlanIndex
    out: list[Violation]

    def __init__(
        self,
        rule: Rule,
        policy: PolicySettings,
        plan: Plan,
        index: PlanIndex,
        out: list[Violation],
    ) -> None:
        self.rule = rule
        self.policy = policy
        self.plan = plan
        self.index = index
        self.out = out

    def __call__(self, finding: Finding) -> None:
        change = self.index.by_address.get(finding.resource)
        meta = self.rule.meta
        # level(), its common case inlined: a finding that is neither advisory-only nor unknown
        # takes the rule's enforcement (one call less per finding)
        enforcement = (self.policy.enforcement
                       if not finding.advisory_only and not finding.unknown
                       else level(finding, self.policy))
        self.out.append(Violation(
            meta.id, enforcement, finding.resource, finding.message,
            change.type if change is not None else "",
            change.origin if change is not None and change.origin else self.plan.origin,
            finding.unknown, None, dict(finding.detail), (), finding.prop or meta.prop,
        ))


_LAUNCHERS = frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE,
                        ResourceKind.EKS_NODE_GROUP})
_LAUNCHED_FROM = frozenset({ResourceKind.LAUNCH_TEMPLATE, ResourceKind.LAUNCH_CONFIGURATION})
# Bound once: on Python 3.11 an enum member read through its class costs a call (EnumType's
# __getattr__), ~10x a global; these are read per finding.
_ASG = ResourceKind.AUTOSCALING_GROUP
_ADVISORY = Enforcement.ADVISORY


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
        if change.kind is _ASG:
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


class _Subjects:
    """The judged changes of one plan a resource-scope rule is called for, in plan order: those
    of the kinds it reads (a rule is never called for another kind) and, unless the rule says
    otherwise (:meth:`Rule.applies_to`), not deleted nor only read. Grouped by kind once per
    plan, so a rule's call costs its own resources, not the plan's."""

    def __init__(self, judged: Sequence[ResourceChange]) -> None:
        self._judged = judged
        self._by_kind: dict[ResourceKind, list[ResourceChange]] = {}
        for c in judged:
            self._by_kind.setdefault(c.kind, []).append(c)
        self._of: dict[tuple[frozenset[ResourceKind], bool], list[ResourceChange]] = {}

    def of(self, rule: Rule) -> list[ResourceChange]:
        kinds = rule.meta.kinds
        own = getattr(rule.applies_to, "__func__", None) is not Rule.applies_to  # its own: asked
        key = (kinds, own)
        found = self._of.get(key)
        if found is None:
            present = [k for k in kinds if k in self._by_kind]
            if len(present) == 1:
                found = self._by_kind[present[0]]
            else:
                found = [c for c in self._judged if c.kind in kinds]
            if not own:
                found = [c for c in found if c.change not in NOT_JUDGED]
            self._of[key] = found
        return [c for c in found if rule.applies_to(c)] if own else found


def _run_resources(rule: Rule, changes: Sequence[ResourceChange], ctx: RuleContext,
                   emit: _Emitter, errors: list[RuleError]) -> None:
    """:func:`_run` of ``rule.check_resource`` on each change, in a loop of its own."""
    check = rule.check_resource
    for change in changes:
        try:
            for finding in check(change, ctx):
                emit(finding)
        except Exception as e:  # a rule bug must fail the check, not crash it or pass it
            errors.append(_raised(rule, e, change.address))


def _run(rule: Rule, call: Callable[[], Iterable[Finding]], emit: _Emitter,
         errors: list[RuleError], address: str | None) -> None:
    try:
        for finding in call():
            emit(finding)
    except Exception as e:  # a rule bug must fail the check, not crash it or pass it
        errors.append(_raised(rule, e, address))


def _raised(rule: Rule, e: Exception, address: str | None) -> RuleError:
    """The error a rule that raised leaves in the result (naming the resource it was judging)."""
    where = f" on {address}" if address else ""
    return RuleError(rule.meta.id, f"rule raised {type(e).__name__}{where}: {e}", address)


def level(finding: Finding, policy: PolicySettings) -> Enforcement:
    """Enforcement of one finding: information is advisory; "cannot verify" is reported at the
    rule's unknownEnforcement, never stricter than the rule itself."""
    if finding.advisory_only:
        return _ADVISORY
    if finding.unknown:
        wanted = Enforcement(policy.params.unknown_enforcement)
        if policy.enforcement is _ADVISORY:
            return _ADVISORY
        return wanted
    return policy.enforcement


def _policy_row(rule: RuleInfo, policy: PolicySettings) -> dict[str, str]:
    return {
        "id": rule.id,
        "title": rule.title,
        "enforcement": policy.enforcement.value,
        "default_enforcement": rule.default_enforcement.value,
        "scope": rule.scope,
        "rationale": rule.rationale,
    }
