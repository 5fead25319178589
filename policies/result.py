# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in reports)
"""What an evaluation returns: the shape every report format renders.

``to_json`` is the fixed ``--format json`` document of DESIGN.md:
``{"verdict", "violations": [{"policy", "enforcement", "resource", "message"}], "errors"}``
with more keys added alongside (``summary.kubernetes``: GPU objects judged, kinds not
understood).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpupool.record import Frozen
from policies.rules.params import Enforcement

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar, Literal


class Ref(Frozen):
    """A resource a finding names: its address (Terraform address or Pulumi URN) and type."""

    __slots__ = ("address", "type")

    address: str
    type: str

    def __init__(self, address: str, type: str = "") -> None:
        object.__setattr__(self, "address", address)
        object.__setattr__(self, "type", type)


class _ViolationFields:
    """Violation's fields, assignable: filled by plain slot stores, then the instance is given
    its (frozen) class, as :class:`policies.model.ResourceChange` is made (one per finding)."""

    __slots__ = (
        "policy", "enforcement", "resource", "message", "resource_type", "source", "unknown",
        "waived_by", "detail", "also", "prop"
    )
    _fields: ClassVar[tuple[str, ...]] = __slots__


_new_fields = object.__new__
# (read through their class, enum members cost a call each)
_MANDATORY, _ADVISORY = Enforcement.MANDATORY, Enforcement.ADVISORY


class Violation(_ViolationFields, Frozen):
    """One finding: one cause, on one resource or on several resources that share it.

    An autoscaling group and the launch template it launches from, both showing the same
    upsize, are one cause: the engine merges such findings (:func:`policies.engine.by_cause`)
    into one whose ``resource`` is the first in plan order and whose ``also`` holds the others,
    so every report counts and shows it once, naming all of them.
    """

    __slots__ = ()

    policy: str
    enforcement: Enforcement  # mandatory or advisory (disabled rules produce nothing)
    resource: str  # address (Terraform address or Pulumi URN)
    message: str
    resource_type: str
    source: str  # which plan it came from (file path or stack@ref)
    unknown: bool  # "cannot verify" rather than a proven violation
    waived_by: str | None  # waiver id when an active waiver covers it
    detail: Mapping[str, Any]
    also: tuple[Ref, ...]  # other resources with the same cause (see the class docstring)
    prop: str | None  # the input the finding is about, snake_case path ("min_size")

    def __new__(
        cls,
        policy: str,
        enforcement: Enforcement,
        resource: str,
        message: str,
        resource_type: str = "",
        source: str = "",
        unknown: bool = False,
        waived_by: str | None = None,
        detail: Mapping[str, Any] | None = None,
        also: tuple[Ref, ...] = (),
        prop: str | None = None,
    ) -> Violation:
        self = _new_fields(_ViolationFields)
        self.policy = policy
        self.enforcement = enforcement
        self.resource = resource
        self.message = message
        self.resource_type = resource_type
        self.source = source
        self.unknown = unknown
        self.waived_by = waived_by
        self.detail = {} if detail is None else detail
        self.also = also
        self.prop = prop
        self.__class__ = cls  # type: ignore[assignment]  (same slots: see _ViolationFields)
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: through the constructor
        return (self.__class__, self._key(self))

    @property
    def blocking(self) -> bool:
        return self.enforcement is Enforcement.MANDATORY and self.waived_by is None

    @property
    def resources(self) -> tuple[Ref, ...]:
        """Every resource the finding names, the primary one first."""
        return (Ref(self.resource, self.resource_type), *self.also)


class RuleError(Frozen):
    """A rule raised, or input could not be judged: always fails the check."""

    __slots__ = ("policy", "message", "resource")

    policy: str
    message: str
    resource: str | None

    def __init__(self, policy: str, message: str, resource: str | None = None) -> None:
        object.__setattr__(self, "policy", policy)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "resource", resource)


class _CostLineFields:
    """CostLine's fields, assignable (one line per GPU resource): see :class:`Violation`."""

    __slots__ = ("resource", "before_per_hour", "after_per_hour", "note")
    _fields: ClassVar[tuple[str, ...]] = __slots__


class CostLine(_CostLineFields, Frozen):
    """The cost effect of one GPU resource's change (per hour, on-demand)."""

    __slots__ = ()

    resource: str
    before_per_hour: float | None
    after_per_hour: float | None
    note: str

    def __new__(
        cls,
        resource: str,
        before_per_hour: float | None,
        after_per_hour: float | None,
        note: str = "",
    ) -> CostLine:
        self = _new_fields(_CostLineFields)
        self.resource = resource
        self.before_per_hour = before_per_hour
        self.after_per_hour = after_per_hour
        self.note = note
        self.__class__ = cls  # type: ignore[assignment]  (same slots: see _CostLineFields)
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: through the constructor
        return (self.__class__, self._key(self))

    @property
    def delta_per_hour(self) -> float | None:
        if self.before_per_hour is None or self.after_per_hour is None:
            return None
        return self.after_per_hour - self.before_per_hour


class KindCount(Frozen):
    """Objects of one kind that ask for an accelerator and that no reader understands."""

    __slots__ = ("kind", "api_version", "objects")

    kind: str
    api_version: str
    objects: int

    def __init__(self, kind: str, api_version: str, objects: int) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "api_version", api_version)
        object.__setattr__(self, "objects", objects)

    def shown(self) -> str:
        api = f" {self.api_version}" if self.api_version else ""
        return f"{self.kind}{api}" + (f" × {self.objects}" if self.objects != 1 else "")


class GpuObjects(Frozen):
    """Kubernetes objects asking for GPUs: how many the rules judged, which were not understood
    (their findings say 'cannot verify'): so a pass never hides a skipped GPU workload."""

    __slots__ = ("judged", "not_understood", "objects")

    judged: int
    not_understood: tuple[KindCount, ...]
    objects: int  # Kubernetes objects read

    def __init__(
        self,
        judged: int = 0,
        not_understood: tuple[KindCount, ...] = (),
        objects: int = 0,
    ) -> None:
        object.__setattr__(self, "judged", judged)
        object.__setattr__(self, "not_understood", not_understood)
        object.__setattr__(self, "objects", objects)

    @property
    def seen(self) -> bool:
        return bool(self.objects or self.judged or self.not_understood)

    @property
    def skipped(self) -> int:
        return sum(k.objects for k in self.not_understood)

    def sentence(self) -> str:
        """``4 GPU objects judged (of 9 objects); 1 not understood: Experiment
        kubeflow.org/v1beta1``."""
        out = f"{self.judged} GPU object{'s' if self.judged != 1 else ''} judged"
        if self.objects:
            out += f" (of {self.objects} object{'s' if self.objects != 1 else ''})"
        if self.not_understood:
            kinds = ", ".join(k.shown() for k in self.not_understood)
            out += f"; {self.skipped} not understood: {kinds}"
        return out


class Result(Frozen):
    __slots__ = (
        "violations", "errors", "sources", "policies", "resources_evaluated", "cost", "gpu_objects",
        "soft_fail"
    )
    violations: Sequence[Violation]  # includes waived ones (waived_by set)
    errors: Sequence[RuleError]
    sources: Sequence[str]  # plan origins evaluated
    policies: Sequence[Mapping[str, Any]]  # id, title, enforcement in force, rationale
    resources_evaluated: int
    cost: Sequence[CostLine]
    gpu_objects: GpuObjects
    # ``check --soft-fail``: violations are reported, the verdict says what they are, and the
    # exit code is 0 all the same; a rule error still fails (the check did not finish).
    soft_fail: bool

    def __init__(
        self,
        violations: Sequence[Violation],
        errors: Sequence[RuleError],
        sources: Sequence[str],
        policies: Sequence[Mapping[str, Any]],
        resources_evaluated: int,
        cost: Sequence[CostLine] = (),
        gpu_objects: GpuObjects | None = None,
        soft_fail: bool = False,
    ) -> None:
        object.__setattr__(self, "violations", violations)
        object.__setattr__(self, "errors", errors)
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "policies", policies)
        object.__setattr__(self, "resources_evaluated", resources_evaluated)
        object.__setattr__(self, "cost", cost)
        object.__setattr__(self, "gpu_objects",
                           GpuObjects() if gpu_objects is None else gpu_objects)
        object.__setattr__(self, "soft_fail", soft_fail)

    @property
    def verdict(self) -> Literal["pass", "fail"]:
        """Fail on any error or blocking violation (Violation.blocking's test, read inline:
        asked of every violation, several times per report)."""
        if self.errors:
            return "fail"
        for v in self.violations:
            if v.enforcement is _MANDATORY and v.waived_by is None:
                return "fail"
        return "pass"

    @property
    def exit_code(self) -> int:
        if self.soft_fail and not self.errors:
            return 0
        return 1 if self.verdict == "fail" else 0

    def _counts(self) -> tuple[int, int, int]:
        """Blocking, advisory (not waived) and waived violations: one pass, no call per
        violation (Violation.blocking's test inline; enum members bound once)."""
        mandatory = advisory = waived = 0
        for v in self.violations:
            if v.waived_by is not None:
                waived += 1
            elif v.enforcement is _MANDATORY:
                mandatory += 1
            elif v.enforcement is _ADVISORY:
                advisory += 1
        return mandatory, advisory, waived

    def to_json(self) -> dict[str, Any]:
        mandatory, advisory, waived = self._counts()
        # Each line's delta once (CostLine.delta_per_hour's sum, read inline: no property call
        # per line, twice): for the summary's total and the line's row.
        deltas = [None if c.before_per_hour is None or c.after_per_hour is None
                  else c.after_per_hour - c.before_per_hour for c in self.cost]
        return {
            "verdict": self.verdict,
            "violations": [
                {
                    "policy": v.policy,
                    "enforcement": str(v.enforcement),
                    "resource": v.resource,
                    "message": v.message,
                    "resource_type": v.resource_type,
                    "source": v.source,
                    "unknown": v.unknown,
                    "waived_by": v.waived_by,
                    # (Violation.resources' addresses, without a Ref made per violation)
                    "resources": [v.resource, *[r.address for r in v.also]] if v.also
                    else [v.resource],
                    **({"property": v.prop} if v.prop else {}),
                    **({"detail": dict(v.detail)} if v.detail else {}),
                }
                for v in self.violations
            ],
            "errors": [
                {"policy": e.policy, "resource": e.resource, "message": e.message}
                for e in self.errors
            ],
            "summary": {
                "resources_evaluated": self.resources_evaluated,
                "sources": list(self.sources),
                "mandatory": mandatory,
                "advisory": advisory,
                "waived": waived,
                "cost_delta_per_hour": _sum_known(deltas),
                "kubernetes": {
                    "objects": self.gpu_objects.objects,
                    "gpu_objects_judged": self.gpu_objects.judged,
                    "gpu_objects_not_understood": self.gpu_objects.skipped,
                    "kinds_not_understood": [
                        {"kind": k.kind, "api_version": k.api_version, "objects": k.objects}
                        for k in self.gpu_objects.not_understood
                    ],
                },
            },
            "cost": [
                {
                    "resource": c.resource,
                    "before_per_hour": c.before_per_hour,
                    "after_per_hour": c.after_per_hour,
                    "delta_per_hour": delta,
                    "note": c.note,
                }
                for c, delta in zip(self.cost, deltas, strict=True)
            ],
            "policies": [dict(p) for p in self.policies],
            "exit_code": self.exit_code,
            **({"soft_fail": True} if self.soft_fail else {}),
        }


def _sum_known(values: Any) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known), 6) if known else None
