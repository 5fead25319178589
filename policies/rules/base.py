"""What a rule is: metadata, parameters, examples, and a check over normalised changes.

One rule module per policy ID. Each module defines a :class:`Rule` subclass with its
:class:`RuleMeta`, its parameter model (pydantic, with defaults) and its allowed and denied
:class:`Example` s. The engine, the CrossGuard pack, the tests and the docs all read the same
objects, so nothing about a rule is written twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from gpupool.catalog import Catalog
from policies.model import ChangeKind, ResourceChange, ResourceKind, normalise_inputs, resource_kind


class Enforcement(StrEnum):
    MANDATORY = "mandatory"
    ADVISORY = "advisory"
    DISABLED = "disabled"


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class RuleMeta:
    id: str
    title: str
    default_enforcement: Enforcement
    rationale: str
    scope: Literal["resource", "stack"]
    kinds: frozenset[ResourceKind]  # resource kinds the rule looks at
    params: type[BaseModel] = NoParams
    # Does the rule need old inputs (the CrossGuard pack feeds them from a baseline)?
    needs_old_inputs: bool = False


@dataclass(frozen=True)
class Finding:
    """One thing a rule has to say about one resource.

    ``unknown`` findings say the rule could not decide (a value is unknown until apply); the
    engine reports them at the configured unknown-level, never as a pass. ``advisory_only``
    findings are information (e.g. a change to another GPU model) and never fail a check.
    """

    resource: str
    message: str
    unknown: bool = False
    advisory_only: bool = False
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RuleContext:
    catalog: Catalog
    params: BaseModel
    # Every change of the plan by address, so a rule can follow references (policy → group).
    index: Mapping[str, ResourceChange] = field(default_factory=dict)


@dataclass(frozen=True)
class Example:
    """A sample the docs show and the tests run: resources, and whether the rule allows them.

    Each resource is ``{"type", "name", "new", "old"?, "change"?, "references"?}`` with inputs
    written as a Pulumi user would (camelCase); they pass through the same normalisation as
    any source.
    """

    title: str
    allowed: bool
    resources: Sequence[Mapping[str, Any]]
    params: Mapping[str, Any] = field(default_factory=dict)
    message_contains: Sequence[str] = ()  # for denied examples: phrases the message must hold

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
                    new=None if new is None else normalise_inputs(new),
                    old=None if old is None else normalise_inputs(old),
                    source="example",
                    kind=resource_kind(r["type"]),
                    references=dict(r.get("references", {})),
                )
            )
        return out


class Rule(ABC):
    meta: ClassVar[RuleMeta]
    examples: ClassVar[Sequence[Example]]

    def applies_to(self, change: ResourceChange) -> bool:
        return change.kind in self.meta.kinds and change.change not in (
            ChangeKind.DELETE,
            ChangeKind.READ,
        )

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        """Stack-scope rules override this; resource-scope rules implement check_resource."""
        for change in changes:
            if self.applies_to(change):
                yield from self.check_resource(change, ctx)

    @abstractmethod
    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        """Findings for one resource (stack-scope rules may return nothing here)."""
