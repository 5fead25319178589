"""The instance types a resource launches, as written on the resource itself (links to launch
templates are followed by :class:`policies.facts.index.PlanIndex`), and its metadata options.

Types chosen by attributes (``instance_requirements`` on an override or a launch template) are
the catalog GPU types the requirements can launch (:mod:`policies.facts.requirements`): in
``known`` when the requirements ask for accelerators, else in ``incidental`` (a CPU-sized
selection that EC2's default lets launch GPU types too).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpupool.catalog import Catalog, canonical_instance_type, load_catalog
from gpupool.record import Frozen
from policies.facts.requirements import Selection, select
from policies.facts.values import (
    Maybe,
    Side,
    block,
    blocks,
    is_map,
    number,
    text,
)
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar

# Kinds tested per resource, bound once: on Python 3.11 reading an enum member through its class
# is a Python-level call (EnumType defines __getattr__), ~10x reading a global.
_LAUNCH_TEMPLATE = ResourceKind.LAUNCH_TEMPLATE
_TYPED = (ResourceKind.INSTANCE, _LAUNCH_TEMPLATE, ResourceKind.LAUNCH_CONFIGURATION)
_ASG, _NODE_GROUP = ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP


class _InstanceTypesFields:
    """InstanceTypes' fields, assignable: filled by plain slot stores, then the instance is
    given its (frozen) class, as :class:`policies.result.Violation` is (one or more per GPU
    resource and side)."""

    __slots__ = ("known", "unknown", "via", "respelled", "selections")
    _fields: ClassVar[tuple[str, ...]] = __slots__


_new_fields = object.__new__


class InstanceTypes(_InstanceTypesFields, Frozen):
    """The instance types a resource launches, and why part of them is unknown (if it is)."""

    __slots__ = ()

    known: tuple[str, ...]  # as EC2 names them (lowercase, no surrounding spaces)
    unknown: str | None  # reason, e.g. "instance type unknown until apply"
    via: str  # where they came from: "", "overrides", a launch template's address
    # (as written, as EC2 names it) for values written otherwise ("G4DN.XLARGE", " g5.xlarge "):
    # they are judged as the type they name, and rules say that AWS refuses them as written.
    respelled: tuple[tuple[str, str], ...]
    selections: tuple[Selection, ...]  # instance_requirements blocks, judged

    def __new__(
        cls,
        known: tuple[str, ...] = (),
        unknown: str | None = None,
        via: str = "",
        respelled: tuple[tuple[str, str], ...] = (),
        selections: tuple[Selection, ...] = (),
    ) -> InstanceTypes:
        self = _new_fields(_InstanceTypesFields)
        self.known = known
        self.unknown = unknown
        self.via = via
        self.respelled = respelled
        self.selections = selections
        self.__class__ = cls  # type: ignore[assignment]  (same slots: see _InstanceTypesFields)
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: through the constructor
        return (self.__class__, self._key(self))

    @property
    def complete(self) -> bool:
        return self.unknown is None

    @property
    def selected(self) -> tuple[str, ...]:
        """Of ``known``, the types chosen by requirements that ask for accelerators."""
        return _union(s.types for s in self.selections if s.asks_for_gpus)

    @property
    def incidental(self) -> tuple[str, ...]:
        """GPU types that requirements naming no accelerator can launch (not in ``known``)."""
        return _union(s.types for s in self.selections if not s.asks_for_gpus)

    def merge(self, other: InstanceTypes) -> InstanceTypes:
        known = self.known + tuple(t for t in other.known if t not in self.known)
        reasons = [r for r in (self.unknown, other.unknown) if r]
        why = "; ".join(dict.fromkeys(reasons)) or None
        respelled = self.respelled + tuple(r for r in other.respelled if r not in self.respelled)
        return InstanceTypes(known, why, self.via or other.via, respelled,
                             self.selections + other.selections)


def _union(groups: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for g in groups for t in g))


def _with_selections(types: InstanceTypes, selections: list[Selection]) -> InstanceTypes:
    """Add what requirements select: GPU selections' types to ``known``, their reasons to
    ``unknown`` (a value unknown until apply, GPU names the catalog has no row for)."""
    if not selections:
        return types
    known = list(types.known)
    reasons = [types.unknown] if types.unknown else []
    for s in selections:
        if s.unknown:
            reasons.append(s.unknown)
        if s.uncatalogued:
            reasons.append(f"{s.path} asks for {', '.join(s.uncatalogued)}, which the GPU "
                           "catalog has no types for")
        if s.asks_for_gpus:
            known += [t for t in s.types if t not in known]
    return InstanceTypes(tuple(known), "; ".join(dict.fromkeys(reasons)) or None, types.via,
                         types.respelled, tuple(selections))


def _named(values: list[str]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Types as EC2 names them, and which of them were written otherwise."""
    known: list[str] = []
    respelled: list[tuple[str, str]] = []
    for value in values:
        name = canonical_instance_type(value)
        if name != value and (value, name) not in respelled:
            respelled.append((value, name))
        if name and name not in known:
            known.append(name)
    return tuple(known), tuple(respelled)


_TYPE_UNKNOWN = "instance type unknown until apply"


def own_instance_types(change: ResourceChange, side: Side = "new",
                       catalog: Catalog | None = None) -> InstanceTypes:
    """Instance types written on the resource itself (no links followed).

    Instance, launch template, launch configuration: ``instance_type`` (a launch template's
    ``instance_requirements`` when it has none). Autoscaling group: the mixed instances policy's
    override list. EKS node group: ``instance_types``. ``catalog`` judges requirements (the
    bundled one by default).
    """
    inputs = (change.new if side == "new" else change.old) or {}  # (inputs_of, inlined)
    kind = change.kind
    if kind in _TYPED:
        raw = inputs.get("instance_type")
        if type(raw) is str:  # a spelling read before is the same types (no text() call)
            found = _WRITTEN.get(raw)
            if found is not None:
                return found
        value = text(raw)
        if value is UNKNOWN:
            return _UNKNOWN_TYPE
        if value is None and raw not in (None, ""):
            return InstanceTypes(unknown=_odd("instance_type", raw))
        if not value:
            if kind is not _LAUNCH_TEMPLATE:
                return _NO_TYPES
            chosen = select(inputs.get("instance_requirements"), "instance_requirements",
                            catalog or load_catalog())
            return _with_selections(InstanceTypes(), [chosen] if chosen else [])
        if not value.strip():
            return InstanceTypes(unknown=_odd("instance_type", raw))
        return _written(value)
    if kind is _ASG:
        return override_types(inputs, catalog)
    if kind is _NODE_GROUP:
        return _type_list(inputs.get("instance_types"), "instance_types")
    return _NO_TYPES


_NO_TYPES = InstanceTypes()
_UNKNOWN_TYPE = InstanceTypes(unknown=_TYPE_UNKNOWN)
_WRITTEN: dict[str, InstanceTypes] = {}


def _written(value: str) -> InstanceTypes:
    """The types of one ``instance_type`` as written: made once per spelling (a plan writes the
    same few types on thousands of resources; the value is immutable, so it is shared)."""
    found = _WRITTEN.get(value)
    if found is None:
        known, respelled = _named([value])
        found = InstanceTypes(known, respelled=respelled)
        if len(_WRITTEN) < 4096:  # bounded: a plan of hand-made names cannot grow it forever
            _WRITTEN[value] = found
    return found


def _odd(key: str, value: Any) -> str:
    """Reason for a value of the wrong type: it cannot be judged, so it is not a pass."""
    shown = repr(value)
    return f"{key} has an unexpected value {shown[:40]}{'…' if len(shown) > 40 else ''}"


def _type_list(value: Any, what: str) -> InstanceTypes:
    items = blocks(value)
    if items is UNKNOWN:
        return InstanceTypes(unknown=f"{what} unknown until apply")
    if value is not None and not isinstance(value, list):
        return InstanceTypes(unknown=_odd(what, value))
    known, respelled = _named([t for t in items if isinstance(t, str) and t.strip()])
    reasons = [_TYPE_UNKNOWN if t is UNKNOWN else _odd(what, t)
               for t in items if not (isinstance(t, str) and t.strip())]
    return InstanceTypes(known, "; ".join(dict.fromkeys(reasons)) or None, respelled=respelled)


def overrides(inputs: Mapping[str, Any]) -> list[Any] | Maybe:
    """An ASG's instance overrides: TF ``...launch_template.override``, Pulumi ``overrides``."""
    mip = block(inputs.get("mixed_instances_policy"))
    if mip is UNKNOWN:
        return UNKNOWN
    if mip is None:
        return []
    lt = block(mip.get("launch_template"))
    if lt is UNKNOWN:
        return UNKNOWN
    if lt is None:
        return []
    return blocks(lt["override"] if "override" in lt else lt.get("overrides"))


_OVERRIDE = "mixed_instances_policy.launch_template.override"


def override_types(inputs: Mapping[str, Any], catalog: Catalog | None = None) -> InstanceTypes:
    items = overrides(inputs)
    if items is UNKNOWN:
        return InstanceTypes(unknown="mixed instances policy unknown until apply", via="overrides")
    written: list[str] = []
    reasons: list[str] = []
    selections: list[Selection] = []
    for i, item in enumerate(items):
        if not is_map(item):
            if item is UNKNOWN:
                reasons.append("an override is unknown until apply")
            continue
        raw = item.get("instance_type")
        value = text(raw)
        if value is UNKNOWN:
            reasons.append(_TYPE_UNKNOWN)
        elif (value is None and raw not in (None, "")) or (value and not value.strip()):
            reasons.append(_odd("instance_type", raw))
        elif value:
            written.append(value)
        else:
            where = f"{_OVERRIDE}[{i}]" if len(items) > 1 else _OVERRIDE
            chosen = select(item.get("instance_requirements"), f"{where}.instance_requirements",
                            catalog or load_catalog())
            if chosen is not None:
                selections.append(chosen)
    known, respelled = _named(written)
    return _with_selections(InstanceTypes(known, "; ".join(dict.fromkeys(reasons)) or None,
                                          "overrides", respelled), selections)


def override_weights(inputs: Mapping[str, Any]) -> dict[str, float]:
    """Weighted capacity per override type (1 when not set or not known)."""
    items = overrides(inputs)
    out: dict[str, float] = {}
    if items is UNKNOWN:
        return out
    for item in items:
        if is_map(item) and isinstance(item.get("instance_type"), str):
            weight = number(item.get("weighted_capacity"))
            name = canonical_instance_type(item["instance_type"])
            out[name] = weight if isinstance(weight, float) and weight > 0 else 1.0
    return out




# --------------------------------------------------------------------------- IMDS


def metadata_options(inputs: Mapping[str, Any]) -> Mapping[str, Any] | Maybe | None:
    raw = inputs.get("metadata_options")
    return raw if type(raw) is dict else block(raw)  # (Pulumi's object: no block() call)


def http_tokens(inputs: Mapping[str, Any]) -> str | Maybe | None:
    """``required`` / ``optional``; None when not set (IMDSv1 is then allowed)."""
    options = metadata_options(inputs)
    if options is UNKNOWN:
        return UNKNOWN
    return None if options is None else text(options.get("http_tokens"))


def http_endpoint(inputs: Mapping[str, Any]) -> str | Maybe | None:
    """``enabled`` / ``disabled``; None when not set (enabled)."""
    options = metadata_options(inputs)
    if options is UNKNOWN:
        return UNKNOWN
    return None if options is None else text(options.get("http_endpoint"))
