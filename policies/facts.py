"""What rules read from a resource, whatever shape its source wrote it in.

The one place that knows Terraform writes nested blocks as lists (``metadata_options: [{...}]``,
``mixed_instances_policy.launch_template.override[*]``, ASG ``tag`` blocks, scaling policy
``metric_dimension[*]``) where Pulumi, after :func:`policies.model.normalise_inputs`, writes
objects (``overrides[*]``, ASG ``tags`` list, ``metric_dimensions``). Rules never look at raw
inputs, so a source difference is fixed here once.

Every extractor returns :data:`UNKNOWN` (or a result that says *why* something is unknown) where
the plan does not know a value: never a guess, never a default that would let a rule pass.

:class:`PlanIndex` links resources within one plan (an ASG to its launch template, a scaling
policy to its group) in one linear pass, so rules never join resources quadratically.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind, _Unknown

Side = Literal["new", "old"]
Maybe = _Unknown  # for annotations: ``str | Maybe`` reads "a string, or unknown until apply"

_GONE = (ChangeKind.DELETE, ChangeKind.READ)


def is_map(value: object) -> bool:
    """``isinstance(value, Mapping)``, with a fast path for the dicts sources produce (the ABC
    check dominates evaluation time on 100k-resource plans otherwise)."""
    return type(value) is dict or isinstance(value, Mapping)


def inputs_of(change: ResourceChange, side: Side = "new") -> Mapping[str, Any]:
    return change.after if side == "new" else change.before


def blocks(value: Any) -> list[Any] | Maybe:
    """A nested block as a list of elements (Terraform lists, Pulumi objects, absent = [])."""
    if value is UNKNOWN:
        return UNKNOWN
    if is_map(value):
        return [value]
    if isinstance(value, list):
        return value
    return []


def block(value: Any) -> Mapping[str, Any] | Maybe | None:
    """A single nested block: Terraform's one-element list or Pulumi's object; None if absent."""
    items = blocks(value)
    if items is UNKNOWN:
        return UNKNOWN
    if not items:
        return None
    first = items[0]
    if first is UNKNOWN:
        return UNKNOWN
    return first if is_map(first) else None


def text(value: Any) -> str | Maybe | None:
    """A string value, UNKNOWN, or None when absent or empty."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str) and value:
        return value
    return None


def flag(value: Any) -> bool | Maybe:
    """AWS booleans arrive as bools or strings (launch template ``encrypted = "true"``)."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return value is True


def number(value: Any) -> float | Maybe | None:
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


# --------------------------------------------------------------------------- instance types


@dataclass(frozen=True, slots=True)
class InstanceTypes:
    """The instance types a resource launches, and why part of them is unknown (if it is)."""

    known: tuple[str, ...] = ()
    unknown: str | None = None  # reason, e.g. "instance type unknown until apply"
    via: str = ""  # where they came from: "", "overrides", a launch template's address

    @property
    def complete(self) -> bool:
        return self.unknown is None

    def merge(self, other: InstanceTypes) -> InstanceTypes:
        known = self.known + tuple(t for t in other.known if t not in self.known)
        reasons = [r for r in (self.unknown, other.unknown) if r]
        why = "; ".join(dict.fromkeys(reasons)) or None
        return InstanceTypes(known, why, self.via or other.via)


_TYPE_UNKNOWN = "instance type unknown until apply"


def own_instance_types(change: ResourceChange, side: Side = "new") -> InstanceTypes:
    """Instance types written on the resource itself (no links followed).

    Instance, launch template, launch configuration: ``instance_type``. Autoscaling group: the
    mixed instances policy's override list. EKS node group: ``instance_types``.
    """
    inputs = inputs_of(change, side)
    kind = change.kind
    if kind in (ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
                ResourceKind.LAUNCH_CONFIGURATION):
        raw = inputs.get("instance_type")
        value = text(raw)
        if value is UNKNOWN:
            return InstanceTypes(unknown=_TYPE_UNKNOWN)
        if value is None and raw not in (None, ""):
            return InstanceTypes(unknown=_odd("instance_type", raw))
        return InstanceTypes((value,)) if value else InstanceTypes()
    if kind is ResourceKind.AUTOSCALING_GROUP:
        return override_types(inputs)
    if kind is ResourceKind.EKS_NODE_GROUP:
        return _type_list(inputs.get("instance_types"), "instance_types")
    return InstanceTypes()


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
    known = tuple(dict.fromkeys(t for t in items if isinstance(t, str) and t))
    reasons = [_TYPE_UNKNOWN if t is UNKNOWN else _odd(what, t)
               for t in items if not (isinstance(t, str) and t)]
    return InstanceTypes(known, "; ".join(dict.fromkeys(reasons)) or None)


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


def override_types(inputs: Mapping[str, Any]) -> InstanceTypes:
    items = overrides(inputs)
    if items is UNKNOWN:
        return InstanceTypes(unknown="mixed instances policy unknown until apply", via="overrides")
    known: list[str] = []
    reasons: list[str] = []
    for item in items:
        if not is_map(item):
            if item is UNKNOWN:
                reasons.append("an override is unknown until apply")
            continue
        raw = item.get("instance_type")
        value = text(raw)
        if value is UNKNOWN:
            reasons.append(_TYPE_UNKNOWN)
        elif value is None and raw not in (None, ""):
            reasons.append(_odd("instance_type", raw))
        elif value:
            if value not in known:
                known.append(value)
        elif item.get("instance_requirements"):
            reasons.append("an override selects types by attributes (instance_requirements)")
    return InstanceTypes(tuple(known), "; ".join(dict.fromkeys(reasons)) or None, "overrides")


def override_weights(inputs: Mapping[str, Any]) -> dict[str, float]:
    """Weighted capacity per override type (1 when not set or not known)."""
    items = overrides(inputs)
    out: dict[str, float] = {}
    if items is UNKNOWN:
        return out
    for item in items:
        if is_map(item) and isinstance(item.get("instance_type"), str):
            weight = number(item.get("weighted_capacity"))
            out[item["instance_type"]] = weight if isinstance(weight, float) and weight > 0 else 1.0
    return out


# --------------------------------------------------------------------------- IMDS


def metadata_options(inputs: Mapping[str, Any]) -> Mapping[str, Any] | Maybe | None:
    return block(inputs.get("metadata_options"))


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


# --------------------------------------------------------------------------- EBS


@dataclass(frozen=True, slots=True)
class Volume:
    label: str  # "root volume", "EBS volume /dev/sdf"
    encrypted: bool | Maybe
    declared: bool = True  # False: nothing set, the volume comes from the AMI as it is


def volumes(change: ResourceChange, side: Side = "new") -> list[Volume]:
    """The EBS volumes a resource declares, each with its encryption (or UNKNOWN).

    An instance or launch configuration without ``root_block_device`` gets an undeclared root
    volume (its encryption is the AMI snapshot's: not encrypted as far as the plan can tell); a
    launch template without ``block_device_mappings`` likewise.
    """
    inputs = inputs_of(change, side)
    if change.kind is ResourceKind.LAUNCH_TEMPLATE:
        return _template_volumes(inputs)
    out: list[Volume] = []
    root = block(inputs.get("root_block_device"))
    if root is UNKNOWN:
        out.append(Volume("root volume", UNKNOWN))
    elif root is None:
        out.append(Volume("root volume", False, declared=False))
    else:
        out.append(Volume("root volume", flag(root.get("encrypted"))))
    for key in ("ebs_block_device", "ebs_block_devices"):
        items = blocks(inputs.get(key))
        if items is UNKNOWN:
            out.append(Volume("EBS volumes", UNKNOWN))
            continue
        for item in items:
            if item is UNKNOWN:
                out.append(Volume("an EBS volume", UNKNOWN))
            elif is_map(item):
                out.append(Volume(_device_label(item), flag(item.get("encrypted"))))
    return out


def _template_volumes(inputs: Mapping[str, Any]) -> list[Volume]:
    items = blocks(inputs.get("block_device_mappings"))
    if items is UNKNOWN:
        return [Volume("block device mappings", UNKNOWN)]
    if not items:
        return [Volume("root volume", False, declared=False)]
    out: list[Volume] = []
    for item in items:
        if item is UNKNOWN:
            out.append(Volume("a block device mapping", UNKNOWN))
            continue
        if not is_map(item):
            continue
        ebs = block(item.get("ebs"))
        if ebs is UNKNOWN:
            out.append(Volume(_device_label(item), UNKNOWN))
        elif ebs is not None:  # None: instance store (virtual_name) or no_device
            out.append(Volume(_device_label(item), flag(ebs.get("encrypted"))))
    return out


def _device_label(item: Mapping[str, Any]) -> str:
    name = text(item.get("device_name"))
    return f"EBS volume {name}" if isinstance(name, str) else "an EBS volume"


# --------------------------------------------------------------------------- tags


@dataclass(frozen=True, slots=True)
class Tags:
    """Tag keys set on a resource (with a non-empty or unknown value)."""

    keys: frozenset[str]
    incomplete: bool = False  # part of the tags is unknown: a missing key may still be set

    def missing(self, required: Iterable[str]) -> list[str]:
        return [k for k in required if k not in self.keys]


def _tag_keys(value: Any) -> tuple[set[str], bool]:
    if value is UNKNOWN:
        return set(), True
    if not is_map(value):
        return set(), False
    keys = {str(k) for k, v in value.items() if v is UNKNOWN or (v is not None and v != "")}
    return keys, False


def resource_tags(inputs: Mapping[str, Any]) -> Tags:
    """``tags`` plus ``tags_all`` (Terraform's merge with the provider's default_tags)."""
    keys, incomplete = _tag_keys(inputs.get("tags"))
    more, unknown_all = _tag_keys(inputs.get("tags_all"))
    return Tags(frozenset(keys | more), incomplete or unknown_all)


def launch_tags(inputs: Mapping[str, Any]) -> Tags:
    """Tags a launch template puts on the instances it launches (``tag_specifications``)."""
    specs = blocks(inputs.get("tag_specifications"))
    if specs is UNKNOWN:
        return Tags(frozenset(), True)
    keys: set[str] = set()
    incomplete = False
    for spec in specs:
        if spec is UNKNOWN:
            incomplete = True
            continue
        if not is_map(spec):
            continue
        rtype = spec.get("resource_type")
        if rtype is UNKNOWN:
            incomplete = True
        elif rtype != "instance":
            continue
        found, unknown = _tag_keys(spec.get("tags"))
        if rtype == "instance":
            keys |= found
        incomplete = incomplete or unknown
    return Tags(frozenset(keys), incomplete)


@dataclass(frozen=True, slots=True)
class GroupTag:
    key: str
    value: Any
    propagate_at_launch: bool | Maybe


def group_tags(inputs: Mapping[str, Any]) -> list[GroupTag] | Maybe:
    """An ASG's tags: Terraform ``tag`` blocks, Pulumi's (and old Terraform's) ``tags`` list."""
    out: list[GroupTag] = []
    for key in ("tag", "tags"):
        value = inputs.get(key)
        if key == "tags" and is_map(value):
            continue  # not the ASG shape
        items = blocks(value)
        if items is UNKNOWN:
            return UNKNOWN
        for item in items:
            if item is UNKNOWN:
                return UNKNOWN
            if not is_map(item):
                continue
            name = item.get("key")
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str) and name:
                out.append(GroupTag(name, item.get("value"), flag(item.get("propagate_at_launch"))))
    return out


# --------------------------------------------------------------------------- scaling policies


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    """What a scaling policy tracks. Fields are UNKNOWN when the plan does not know them."""

    policy_type: str | Maybe
    group_name: str | Maybe | None
    enabled: bool | Maybe
    predefined_metric: str | Maybe | None
    metric_name: str | Maybe | None
    namespace: str | Maybe | None
    statistic: str | Maybe | None
    dimensions: Mapping[str, Any] | Maybe  # name → value (a value may be UNKNOWN)
    target: float | Maybe | None
    disable_scale_in: bool | Maybe
    metric_math: bool = False  # a math expression over several metrics: cannot be judged


def scaling_policy(inputs: Mapping[str, Any]) -> ScalingPolicy:
    policy_type = text(inputs.get("policy_type")) or "SimpleScaling"  # AWS's default
    group = text(inputs.get("autoscaling_group_name"))
    enabled_raw = inputs.get("enabled", True)
    enabled = True if enabled_raw is None else flag(enabled_raw)
    ttc = block(inputs.get("target_tracking_configuration"))
    if ttc is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, *([UNKNOWN] * 7))  # type: ignore[arg-type]
    if ttc is None:
        return ScalingPolicy(policy_type, group, enabled, None, None, None, None, {}, None, False)
    target = number(ttc.get("target_value"))
    scale_in_raw = ttc.get("disable_scale_in")
    disable_scale_in = False if scale_in_raw is None else flag(scale_in_raw)
    predefined_spec = block(ttc.get("predefined_metric_specification"))
    predefined: str | Maybe | None = (
        predefined_spec if predefined_spec is UNKNOWN
        else None if predefined_spec is None
        else text(predefined_spec.get("predefined_metric_type"))
    )
    spec = block(ttc.get("customized_metric_specification"))
    if spec is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if spec is None:
        return ScalingPolicy(policy_type, group, enabled, predefined, None, None, None, {},
                             target, disable_scale_in)
    queries = blocks(spec.get("metrics"))
    if queries is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if queries:
        return _metric_query(policy_type, group, enabled, predefined, queries, target,
                             disable_scale_in)
    dims_key = "metric_dimension" if "metric_dimension" in spec else "metric_dimensions"
    return ScalingPolicy(
        policy_type, group, enabled, predefined,
        text(spec.get("metric_name")), text(spec.get("namespace")), text(spec.get("statistic")),
        _dimensions(spec.get(dims_key)), target, disable_scale_in,
    )


def _metric_query(
    policy_type: str | Maybe, group: str | Maybe | None, enabled: bool | Maybe,
    predefined: str | Maybe | None, queries: Sequence[Any], target: float | Maybe | None,
    disable_scale_in: bool | Maybe,
) -> ScalingPolicy:
    """The ``metrics`` form: judgeable only when it returns one plain metric (no math)."""
    def math() -> ScalingPolicy:
        return ScalingPolicy(policy_type, group, enabled, predefined, None, None, None, {},
                             target, disable_scale_in, metric_math=True)

    if any(not is_map(q) for q in queries):
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if any(q.get("expression") for q in queries) or len(queries) != 1:
        return math()
    stat = block(queries[0].get("metric_stat"))
    metric = stat if stat is UNKNOWN or stat is None else block(stat.get("metric"))
    if metric is UNKNOWN or stat is UNKNOWN:
        return ScalingPolicy(policy_type, group, enabled, predefined, UNKNOWN, UNKNOWN, UNKNOWN,
                             UNKNOWN, target, disable_scale_in)
    if metric is None or stat is None:
        return math()
    return ScalingPolicy(
        policy_type, group, enabled, predefined,
        text(metric.get("metric_name")), text(metric.get("namespace")), text(stat.get("stat")),
        _dimensions(metric.get("dimensions")), target, disable_scale_in,
    )


def _dimensions(value: Any) -> Mapping[str, Any] | Maybe:
    items = blocks(value)
    if items is UNKNOWN:
        return UNKNOWN
    out: dict[str, Any] = {}
    for item in items:
        if item is UNKNOWN:
            return UNKNOWN
        if is_map(item):
            name = item.get("name")
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str):
                out[name] = item.get("value")
    return out


# --------------------------------------------------------------------------- plan links


_INDEX_SUFFIX = re.compile(r"\[[^\[\]]*\]$")
_MODULE_PREFIX = re.compile(r"^((?:module\.[^.\[]+(?:\[[^\]]*\])?\.)*)")


def _base(address: str) -> str:
    return _INDEX_SUFFIX.sub("", address)


@dataclass(frozen=True, slots=True)
class Link:
    """The resources a reference resolves to, or why it cannot be resolved."""

    targets: tuple[ResourceChange, ...] = ()
    unknown: str | None = None
    declared: bool = False  # did the resource declare the link at all?


@dataclass(frozen=True, slots=True)
class GroupPolicies:
    """The scaling policies of one group: proven links, and policies that might be linked."""

    linked: tuple[ResourceChange, ...]
    possible: tuple[ResourceChange, ...]


class PlanIndex:
    """One linear pass over a plan's changes: addresses, launch templates by id and name, groups
    by name, and scaling policies per group (built on first use)."""

    def __init__(self, changes: Iterable[ResourceChange]) -> None:
        self.by_address: dict[str, ResourceChange] = {}
        self._by_base: dict[str, list[ResourceChange]] = {}
        self._templates: dict[tuple[str, str], ResourceChange] = {}
        self._configs: dict[str, ResourceChange] = {}
        self.groups: list[ResourceChange] = []
        self.policies: list[ResourceChange] = []
        self._policy_links: dict[str, GroupPolicies] | None = None
        # Facts several rules ask for, computed once per resource and side.
        self._memo: dict[tuple[str, str, Side], tuple[ResourceChange, Any]] = {}
        self._unlinked_unknown: tuple[ResourceChange, ...] = ()
        self._unlinked_any: tuple[ResourceChange, ...] = ()
        for c in changes:
            self.by_address[c.address] = c
            if c.address.endswith("]"):
                self._by_base.setdefault(_base(c.address), []).append(c)
            if c.kind is ResourceKind.LAUNCH_TEMPLATE:
                for inputs in (c.before, c.after):
                    for key in ("id", "name"):
                        value = inputs.get(key)
                        if isinstance(value, str) and value:
                            self._templates.setdefault((key, value), c)
            elif c.kind is ResourceKind.LAUNCH_CONFIGURATION:
                for inputs in (c.before, c.after):
                    value = inputs.get("name")
                    if isinstance(value, str) and value:
                        self._configs.setdefault(value, c)
            elif c.change not in _GONE:
                if c.kind is ResourceKind.AUTOSCALING_GROUP:
                    self.groups.append(c)
                elif c.kind is ResourceKind.SCALING_POLICY:
                    self.policies.append(c)

    def _cached(self, what: str, change: ResourceChange, side: Side,
                compute: Callable[[ResourceChange, Side], Any]) -> Any:
        key = (what, change.address, side)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is change:
            return hit[1]
        value = compute(change, side)
        self._memo[key] = (change, value)
        return value

    def own_types(self, change: ResourceChange, side: Side = "new") -> InstanceTypes:
        """:func:`own_instance_types`, computed once per resource and side."""
        return self._cached("own", change, side, own_instance_types)  # type: ignore[no-any-return]

    # -- references

    def resolve(self, ref: str, origin: ResourceChange, kinds: frozenset[ResourceKind]
                ) -> tuple[ResourceChange, ...]:
        """Changes an address reference points at (of the wanted kinds).

        A reference without a count/for_each key to a resource with several instances means
        "all of them" (Terraform's reading): every instance is returned and callers treat more
        than one as ambiguous, never as a guess. A reference missing the module path of the
        referring resource is also tried inside that module.
        """
        prefix = _MODULE_PREFIX.match(origin.address)
        candidates = [ref]
        if prefix and prefix.group(1) and not ref.startswith(prefix.group(1)):
            candidates.append(prefix.group(1) + ref)
        for address in candidates:
            found = self.by_address.get(address)
            if found is not None and found.kind in kinds:
                return (found,)
            many = tuple(c for c in self._by_base.get(address, ()) if c.kind in kinds)
            if many:
                return many
        return ()

    def references(self, change: ResourceChange, key_part: str,
                   kinds: frozenset[ResourceKind]) -> tuple[ResourceChange, ...]:
        out: list[ResourceChange] = []
        for key, ref in change.references.items():
            if key_part in key:
                seen = {t.address for t in out}
                out.extend(t for t in self.resolve(ref, change, kinds) if t.address not in seen)
        return tuple(out)

    # -- launch templates and configurations

    def launch_templates(self, change: ResourceChange, side: Side = "new") -> Link:
        """The launch template(s) an instance, ASG or EKS node group uses."""
        return self._cached("lt", change, side, self._launch_templates)  # type: ignore[no-any-return]

    def _launch_templates(self, change: ResourceChange, side: Side) -> Link:
        kinds = frozenset({ResourceKind.LAUNCH_TEMPLATE})
        # Any reference to a launch template is the one it launches from, whatever the key:
        # Terraform paths name the attribute, Pulumi names only the top-level property
        # (``mixed_instances_policy``).
        refs = self.references(change, "", kinds)
        inputs = inputs_of(change, side)
        specs: list[Mapping[str, Any]] = []
        unknown: list[str] = []
        top = block(inputs.get("launch_template"))
        if top is UNKNOWN:
            unknown.append("launch template unknown until apply")
        elif top is not None:
            specs.append(top)
        mip = block(inputs.get("mixed_instances_policy"))
        if mip is UNKNOWN:
            unknown.append("mixed instances policy unknown until apply")
        elif mip is not None:
            lt = block(mip.get("launch_template"))
            if lt is UNKNOWN:
                unknown.append("mixed instances policy unknown until apply")
            elif lt is not None:
                spec = block(lt.get("launch_template_specification"))
                if spec is UNKNOWN:
                    unknown.append("launch template unknown until apply")
                elif spec is not None:
                    specs.append(spec)
        declared = bool(specs or unknown or refs)
        if len(refs) > 1 and all(_base(r.address) == _base(refs[0].address) for r in refs):
            return Link((), f"the launch template reference to {_base(refs[0].address)} is "
                            "ambiguous (several instances)", True)
        if refs:
            return Link(refs, None, True)
        targets: list[ResourceChange] = []
        for spec in specs:
            found, why = self._template_for(spec)
            if found is not None and all(t.address != found.address for t in targets):
                targets.append(found)
            elif why:
                unknown.append(why)
        return Link(tuple(targets), "; ".join(dict.fromkeys(unknown)) or None, declared)

    def _template_for(self, spec: Mapping[str, Any]) -> tuple[ResourceChange | None, str | None]:
        ident = spec.get("id", spec.get("launch_template_id"))
        name = spec.get("name", spec.get("launch_template_name"))
        for key, value in (("id", ident), ("name", name)):
            if isinstance(value, str) and value:
                found = self._templates.get((key, value))
                if found is not None:
                    return found, None
        for value in (ident, name):
            if isinstance(value, str) and value:
                return None, f"launch template {value} is not in the plan"
        if ident is UNKNOWN or name is UNKNOWN:
            return None, "launch template id unknown until apply"
        return None, None

    def launch_configuration(self, change: ResourceChange, side: Side = "new") -> Link:
        kinds = frozenset({ResourceKind.LAUNCH_CONFIGURATION})
        refs = self.references(change, "", kinds)
        if refs:
            return Link(refs, None, True)
        value = inputs_of(change, side).get("launch_configuration")
        if value is UNKNOWN:
            return Link((), "launch configuration unknown until apply", True)
        if isinstance(value, str) and value:
            found = self._configs.get(value)
            if found is None:
                return Link((), f"launch configuration {value} is not in the plan", True)
            return Link((found,), None, True)
        return Link()

    def instance_types(self, change: ResourceChange, side: Side = "new") -> InstanceTypes:
        """Instance types a resource launches, following an ASG's or node group's template."""
        return self._cached("types", change, side, self._instance_types)  # type: ignore[no-any-return]

    def _instance_types(self, change: ResourceChange, side: Side) -> InstanceTypes:
        own = self.own_types(change, side)
        if change.kind is ResourceKind.AUTOSCALING_GROUP:
            if own.known or own.unknown:
                return own
            result = self._linked_types(self.launch_templates(change, side), side)
            if result is not None:
                return result
            via_lc = self._linked_types(self.launch_configuration(change, side), side)
            return via_lc if via_lc is not None else InstanceTypes()
        if change.kind is ResourceKind.EKS_NODE_GROUP:
            if own.known or own.unknown:
                return own
            result = self._linked_types(self.launch_templates(change, side), side)
            return result if result is not None else InstanceTypes()  # AWS default: t3.medium
        return own

    def _linked_types(self, link: Link, side: Side) -> InstanceTypes | None:
        if not link.declared:
            return None
        out = InstanceTypes(unknown=link.unknown)
        for target in link.targets:
            types = self.own_types(target, side)
            out = out.merge(InstanceTypes(types.known, types.unknown, target.address))
        return out

    # -- scaling policies

    def policies_of(self, group: ResourceChange) -> GroupPolicies:
        """Scaling policies proven to target ``group``, and those referring to it ambiguously.

        Policies whose group cannot be told at all are not repeated per group (that would be
        quadratic): see :meth:`unlinked_policies`.
        """
        if self._policy_links is None:
            self._link_policies()
        assert self._policy_links is not None
        return self._policy_links.get(group.address, GroupPolicies((), ()))

    def unlinked_policies(self, group: ResourceChange) -> tuple[ResourceChange, ...]:
        """Policies that might target ``group``: their group name is unknown until apply (and
        no reference says which group), or it names no group of the plan while ``group``'s own
        name is unknown. Shared tuples: the same object for every group."""
        if self._policy_links is None:
            self._link_policies()
        if isinstance(text(group.after.get("name")), str):
            return self._unlinked_unknown
        return self._unlinked_any

    def _link_policies(self) -> None:
        kinds = frozenset({ResourceKind.AUTOSCALING_GROUP})
        by_name: dict[str, ResourceChange] = {}
        for g in self.groups:
            name = g.after.get("name")
            if isinstance(name, str) and name:
                by_name.setdefault(name, g)
        linked: dict[str, list[ResourceChange]] = {}
        possible: dict[str, list[ResourceChange]] = {}
        unknown_name: list[ResourceChange] = []
        known_unmatched: list[ResourceChange] = []
        for p in self.policies:
            targets = self.references(p, "autoscaling_group_name", kinds)
            if len(targets) == 1:
                linked.setdefault(targets[0].address, []).append(p)
                continue
            if len(targets) > 1:  # a reference to a counted group without a matching key
                for t in targets:
                    possible.setdefault(t.address, []).append(p)
                continue
            name = p.after.get("autoscaling_group_name")
            if isinstance(name, str) and name:
                group = by_name.get(name)
                if group is not None:
                    linked.setdefault(group.address, []).append(p)
                else:
                    known_unmatched.append(p)
            elif name is UNKNOWN:
                unknown_name.append(p)
        addresses = set(linked) | set(possible)
        self._policy_links = {
            a: GroupPolicies(tuple(linked.get(a, ())), tuple(possible.get(a, ())))
            for a in addresses
        }
        self._unlinked_unknown = tuple(unknown_name)
        self._unlinked_any = tuple(unknown_name + known_unmatched)
