"""What a rule is: metadata, parameters, examples, and a check over normalised changes.

One rule module per policy ID. Each module defines a :class:`Rule` subclass with its
:class:`RuleMeta`, its parameters (a frozen class with defaults, validated by pydantic
only when configured: :mod:`policies.rules.params`) and its allowed and denied
:class:`Example` s. The engine, the CrossGuard pack, the tests and the docs all read the same
objects, so nothing about a rule is written twice.

Messages name a property with ``policies.rules._common.prop(change.type, "snake_path")`` so a
Pulumi user reads ``metadataOptions.httpTokens`` and a Terraform user
``metadata_options.http_tokens`` (tests/policies/rules/test_property_names.py holds every rule's
examples to it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property

from gpupool.catalog import Catalog
from gpupool.record import Frozen
from policies.facts import PlanIndex
from policies.model import (
    UNKNOWN,
    ChangeKind,
    ResourceChange,
    ResourceKind,
    normalise_inputs,
    resource_kind,
)
from policies.rules.params import Enforcement, RuleParams

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar, Literal

NoParams = RuleParams  # a rule without parameters of its own still takes unknownEnforcement


class RuleMeta(Frozen):
    __slots__ = (
        "id", "title", "default_enforcement", "rationale", "scope", "kinds", "params",
        "needs_old_inputs", "prop", "k8s_lifecycles", "proxy_tier"
    )
    id: str
    title: str
    default_enforcement: Enforcement
    rationale: str
    scope: Literal["resource", "stack"]
    kinds: frozenset[ResourceKind]  # resource kinds the rule looks at
    params: type[RuleParams]
    # Does the rule need old inputs (the CrossGuard pack feeds them from a baseline)?
    needs_old_inputs: bool
    # The input its findings are about (snake_case path), unless a Finding says otherwise:
    # reports point at the line that sets it (see Finding.prop).
    prop: str | None
    # Which Kubernetes workloads it judges, by the lifecycle their reader gives them
    # (policies.facts.k8s.Lifecycle values: "service", "batch", …): docs/policies.md's table of
    # kinds says from this which rule reads which kind.
    k8s_lifecycles: frozenset[str]
    # Does it judge only a plan's GPU proxy tier (its proxies and clients, by role tag)? The
    # engine then skips it on a plan with neither (policies.facts.network.roles.has_tier).
    proxy_tier: bool

    def __init__(
        self,
        id: str,
        title: str,
        default_enforcement: Enforcement,
        rationale: str,
        scope: Literal["resource", "stack"],
        kinds: frozenset[ResourceKind],
        params: type[RuleParams] = RuleParams,
        needs_old_inputs: bool = False,
        prop: str | None = None,
        k8s_lifecycles: frozenset[str] = frozenset(),
        proxy_tier: bool = False,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "default_enforcement", default_enforcement)
        object.__setattr__(self, "rationale", rationale)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "needs_old_inputs", needs_old_inputs)
        object.__setattr__(self, "prop", prop)
        object.__setattr__(self, "k8s_lifecycles", k8s_lifecycles)
        object.__setattr__(self, "proxy_tier", proxy_tier)


class _FindingFields:
    """Finding's fields, assignable: filled by plain slot stores, then the instance is given its
    (frozen) class, as :class:`policies.model.ResourceChange` is made (six
    ``object.__setattr__`` calls cost ~3x the whole finding made so)."""

    __slots__ = ("resource", "message", "unknown", "advisory_only", "detail", "prop")
    _fields: ClassVar[tuple[str, ...]] = __slots__


_new_fields = object.__new__


class Finding(_FindingFields, Frozen):
    """One thing a rule has to say about one resource.

    ``unknown`` findings say the rule could not decide (a value is unknown until apply); the
    engine reports them at the configured unknown-level, never as a pass. ``advisory_only``
    findings are information (e.g. a change to another GPU model) and never fail a check.
    """

    __slots__ = ()

    resource: str
    message: str
    unknown: bool
    advisory_only: bool
    detail: Mapping[str, Any]
    # The input the finding is about, as a snake_case path ("instance_type", "min_size"), so a
    # report can point at the line that sets it (a stack file key, see gpupool.config.provenance).
    prop: str | None

    def __new__(
        cls,
        resource: str,
        message: str,
        unknown: bool = False,
        advisory_only: bool = False,
        detail: Mapping[str, Any] | None = None,
        prop: str | None = None,
    ) -> Finding:
        self = _new_fields(_FindingFields)
        self.resource = resource
        self.message = message
        self.unknown = unknown
        self.advisory_only = advisory_only
        self.detail = {} if detail is None else detail
        self.prop = prop
        self.__class__ = cls  # type: ignore[assignment]  (same slots: see _FindingFields)
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: through the constructor
        return (self.__class__, self._key(self))


class RuleContext(Frozen):
    __slots__ = ("catalog", "params", "index", "plan_index", "__dict__")
    catalog: Catalog
    params: Any  # an instance of the rule's ``meta.params`` model
    # Every change of the plan by address, so a rule can follow references (policy → group).
    index: Mapping[str, ResourceChange]
    # The plan's link index; the engine builds one per plan and shares it between rules. When
    # absent (the CrossGuard pack, tests) it is built from ``index`` on first use.
    plan_index: PlanIndex | None

    def __init__(
        self,
        catalog: Catalog,
        params: Any,
        index: Mapping[str, ResourceChange] | None = None,
        plan_index: PlanIndex | None = None,
    ) -> None:
        object.__setattr__(self, "catalog", catalog)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "index", {} if index is None else index)
        object.__setattr__(self, "plan_index", plan_index)

    @cached_property
    def plan(self) -> PlanIndex:
        if self.plan_index is not None:
            return self.plan_index
        return PlanIndex(self.index.values(), self.catalog)


class Example(Frozen):
    """A sample the docs show and the tests run: resources, and whether the rule allows them.

    Each resource is ``{"type", "name", "new", "old"?, "change"?, "references"?, "address"?}``
    with inputs written as a Pulumi user would (camelCase) or as a Terraform plan holds them
    (snake_case, nested blocks as lists); they pass through the same normalisation as any
    source. The string ``(known after apply)`` stands for a value unknown until apply.
    """

    __slots__ = ("title", "allowed", "resources", "params", "message_contains", "unknown")

    title: str
    allowed: bool
    resources: Sequence[Mapping[str, Any]]
    params: Mapping[str, Any]
    message_contains: Sequence[str]  # for denied examples: phrases the message must hold
    # For denied examples: the finding is a "cannot verify" one (reported at unknownEnforcement).
    unknown: bool

    def __init__(
        self,
        title: str,
        allowed: bool,
        resources: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any] | None = None,
        message_contains: Sequence[str] = (),
        unknown: bool = False,
    ) -> None:
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "resources", resources)
        object.__setattr__(self, "params", {} if params is None else params)
        object.__setattr__(self, "message_contains", message_contains)
        object.__setattr__(self, "unknown", unknown)

    def changes(self) -> list[ResourceChange]:
        out = []
        for r in self.resources:
            new = r.get("new")
            old = r.get("old")
            default = ChangeKind.UPDATE if old is not None and new is not None else (
                ChangeKind.DELETE if new is None else ChangeKind.CREATE
            )
            address = r.get("address") or f"urn:pulumi:example::gpupool::{r['type']}::{r['name']}"
            out.append(
                ResourceChange(
                    address=address,
                    type=r["type"],
                    name=r["name"],
                    change=ChangeKind(r.get("change", default)),
                    new=None if new is None else _unknowns(normalise_inputs(new)),
                    old=None if old is None else _unknowns(normalise_inputs(old)),
                    source="example",
                    kind=resource_kind(r["type"]),
                    references=dict(r.get("references", {})),
                )
            )
        return out


class _LazyExamples:
    """A rule class's examples, built when first read (the docs, the tests and the CrossGuard
    pack read them; a check never does, and building them cost every rule module it imports
    a third of its import)."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Sequence[Example]]) -> None:
        self._build = build
        self._built: tuple[Example, ...] | None = None

    def __get__(self, rule: object, owner: type | None = None) -> tuple[Example, ...]:
        if self._built is None:
            self._built = tuple(self._build())
        return self._built


def lazy_examples(build: Callable[[], Sequence[Example]]) -> Sequence[Example]:
    """``examples = lazy_examples(lambda: (Example(...), ...))`` in a rule class: the tuple
    the lambda gives, made on first read (``rule.examples`` and ``RuleClass.examples`` alike)."""
    return _LazyExamples(build)  # type: ignore[return-value]


KNOWN_AFTER_APPLY = "(known after apply)"
# What a resource-scope rule is not called for unless its own applies_to says so: a resource
# being deleted or only read is no longer (or never was) the plan's to judge.
NOT_JUDGED = (ChangeKind.DELETE, ChangeKind.READ)


def _unknowns(value: Any) -> Any:
    """Example inputs: Terraform's ``(known after apply)`` marker becomes :data:`UNKNOWN`."""
    if value == KNOWN_AFTER_APPLY:
        return UNKNOWN
    if isinstance(value, Mapping):
        return {k: _unknowns(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unknowns(v) for v in value]
    return value


class Rule(ABC):
    meta: ClassVar[RuleMeta]
    examples: ClassVar[Sequence[Example]]

    def parse_params(self, raw: Mapping[str, Any] | None = None) -> RuleParams:
        """Validate camelCase (or snake_case) parameters; raises pydantic.ValidationError.
        With nothing given, the defaults: pydantic is not imported (the tests validate every
        rule's defaults, tests/policies/rules/test_params.py)."""
        if not raw:
            return self.meta.params()
        from policies.rules.param_schema import validate

        return validate(self.meta.params, raw)

    def run(
        self,
        changes: Sequence[ResourceChange],
        catalog: Catalog,
        params: Mapping[str, Any] | None = None,
    ) -> list[Finding]:
        """All findings over ``changes`` as one plan: what the examples, docs and tests use."""
        ctx = RuleContext(
            catalog=catalog,
            params=self.parse_params(params),
            index={c.address: c for c in changes},
        )
        return list(self.check(changes, ctx))

    def applies_to(self, change: ResourceChange) -> bool:
        return change.kind in self.meta.kinds and change.change not in NOT_JUDGED

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        """Stack-scope rules override this; resource-scope rules implement check_resource."""
        for change in changes:
            if self.applies_to(change):
                yield from self.check_resource(change, ctx)

    @abstractmethod
    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        """Findings for one resource (stack-scope rules may return nothing here)."""
