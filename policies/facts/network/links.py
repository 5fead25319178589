"""How the network facts follow one resource to another: by a reference the plan proves
(Terraform configuration, Pulumi property dependencies) first, then by value (an id or a name of
a resource in the plan).

A value unknown until apply, or one naming a resource the plan does not hold, is an *unknown*
with its reason, never a pass and never a guess. :class:`LinkIndex` holds what every network
fact needs (resources by id and name, the plan's rules, attachments, addresses, interfaces,
launchers and templates) and is what the fact modules (``roles``, ``placement``, ``ingress``,
``exposure``) build on. It knows the plan only through :class:`PlanLinks`, so that the plan's
own index may hold a network index without an import circle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpupool.record import Frozen, Record
from policies.facts.values import _GONE, Side, blocks
from policies.model import UNKNOWN, ResourceChange, ResourceKind, get_path

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final, Protocol
else:
    Protocol = object  # a structural type to the type checker, a plain class at run time

LAUNCHERS: Final = frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE})
INSTANCE: Final = frozenset({ResourceKind.INSTANCE})
ASG: Final = frozenset({ResourceKind.AUTOSCALING_GROUP})
ENI: Final = frozenset({ResourceKind.NETWORK_INTERFACE})
_LAUNCH_TEMPLATE: Final = ResourceKind.LAUNCH_TEMPLATE
_KEYED: Final = (ResourceKind.PLACEMENT_GROUP, ResourceKind.SUBNET, ResourceKind.SECURITY_GROUP,
                 ResourceKind.INSTANCE, ResourceKind.NETWORK_INTERFACE,
                 ResourceKind.AUTOSCALING_GROUP, ResourceKind.TARGET_GROUP)


class Link(Frozen):
    """The resources a reference resolves to, or why it cannot be resolved."""

    __slots__ = ("targets", "unknown", "declared")

    targets: tuple[ResourceChange, ...]
    unknown: str | None
    declared: bool  # did the resource declare the link at all?

    def __init__(
        self,
        targets: tuple[ResourceChange, ...] = (),
        unknown: str | None = None,
        declared: bool = False,
    ) -> None:
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "declared", declared)


class PlanLinks(Protocol):
    """What the network facts read from the plan's index (:class:`policies.facts.PlanIndex`)."""

    by_address: dict[str, ResourceChange]

    def resolve(self, ref: str, origin: ResourceChange, kinds: frozenset[ResourceKind]
                ) -> tuple[ResourceChange, ...]: ...

    def launch_templates(self, change: ResourceChange, side: Side = "new") -> Link: ...


class Found(Frozen):
    """What a link resolved to: resources of the plan, values naming resources outside it,
    and why part of it is unknown."""

    __slots__ = ("targets", "outside", "unknown", "declared")

    targets: tuple[ResourceChange, ...]
    outside: tuple[str, ...]  # ids or names not in the plan
    unknown: str | None
    declared: bool

    def __init__(
        self,
        targets: tuple[ResourceChange, ...] = (),
        outside: tuple[str, ...] = (),
        unknown: str | None = None,
        declared: bool = False,
    ) -> None:
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "outside", outside)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "declared", declared)

    def merge(self, other: Found) -> Found:
        seen = {t.address for t in self.targets}
        targets = self.targets + tuple(t for t in other.targets if t.address not in seen)
        reasons = "; ".join(dict.fromkeys(r for r in (self.unknown, other.unknown) if r)) or None
        return Found(targets, self.outside + other.outside, reasons,
                     self.declared or other.declared)


class Pointers(Record):
    """Which resources a set of resources (rules, attachments, addresses) point at through one
    input, computed once: so that judging N proxies against M rules costs N + M, not N times M."""

    __slots__ = ("by_target", "unknown", "outside")

    by_target: dict[str, list[ResourceChange]]
    unknown: list[ResourceChange]  # the target is unknown
    outside: list[ResourceChange]  # names something not in the plan

    def __init__(
        self,
        by_target: dict[str, list[ResourceChange]] | None = None,
        unknown: list[ResourceChange] | None = None,
        outside: list[ResourceChange] | None = None,
    ) -> None:
        self.by_target = {} if by_target is None else by_target
        self.unknown = [] if unknown is None else unknown
        self.outside = [] if outside is None else outside

    def add(self, item: ResourceChange, found: Found) -> None:
        for t in found.targets:
            self.by_target.setdefault(t.address, []).append(item)
        if found.unknown and not found.targets:
            self.unknown.append(item)
        elif found.outside and not found.targets:
            self.outside.append(item)

    def at(self, target: ResourceChange) -> tuple[list[ResourceChange], list[ResourceChange]]:
        """(items proven to point at ``target``, items that might)."""
        maybe = list(self.unknown)
        if not has_own_id(target):
            maybe += self.outside  # its own id is unknown: a value outside may be it
        return self.by_target.get(target.address, []), maybe


def has_own_id(change: ResourceChange) -> bool:
    return any(isinstance(change.after.get(k), str) for k in ("id", "name", "arn"))


def unresolved(pointers: Pointers, targets: Iterable[ResourceChange]) -> list[ResourceChange]:
    """Items whose target is unknown, and those naming something outside the plan when one of
    ``targets`` has no known id of its own (it could be that something)."""
    out = list(pointers.unknown)
    if any(not has_own_id(t) for t in targets):
        out += pointers.outside
    return list({c.address: c for c in out}.values())


def key_matches(ref_key: str, path: str) -> bool:
    """Does a reference's key cover the input at ``path``? Pulumi names top-level properties
    (``placement``), Terraform the attribute path (``placement.group_name``,
    ``override[1].instance_type``)."""
    if ref_key == path or path.startswith(ref_key + "."):
        return True
    return ref_key.startswith(path + ".") or ref_key.startswith(path + "[")


class LinkIndex:
    """Placement groups, subnets, security groups, instances, interfaces and groups by id and
    name, and the plan's rules, attachments, addresses, interfaces, launchers and templates;
    built in one pass."""

    def __init__(self, plan: PlanLinks) -> None:
        self.plan = plan
        self._by_value: dict[tuple[ResourceKind, str], ResourceChange] | None = None
        self._keyed: list[ResourceChange] = []  # indexed by id and name on first by_value
        self.rules: list[ResourceChange] = []
        self.attachments: list[ResourceChange] = []
        self.addresses: list[ResourceChange] = []  # EIPs, EIP associations
        self.interfaces: list[ResourceChange] = []
        self.launchers: list[ResourceChange] = []
        self.templates: list[ResourceChange] = []
        self._gone_templates: list[ResourceChange] = []  # deleted or read: links may name them
        self._built: dict[str, Pointers] = {}
        listed = {ResourceKind.SECURITY_GROUP_RULE: self.rules,
                  ResourceKind.LB_ATTACHMENT: self.attachments,
                  ResourceKind.ELASTIC_IP: self.addresses,
                  ResourceKind.NETWORK_INTERFACE: self.interfaces,
                  ResourceKind.LAUNCH_TEMPLATE: self.templates}
        for c in plan.by_address.values():
            kind = c.kind
            if c.change in _GONE:
                if kind is _LAUNCH_TEMPLATE:
                    self._gone_templates.append(c)
                continue
            if kind in _KEYED:
                self._keyed.append(c)
            found = listed.get(kind)
            if found is not None:
                found.append(c)
            if kind in LAUNCHERS:
                self.launchers.append(c)

    def any_templates(self) -> list[ResourceChange]:
        """Every launch template of the plan, those it deletes or reads too: what a launcher's
        template link may resolve to."""
        return self.templates + self._gone_templates

    def refs(self, change: ResourceChange, path: str, kinds: frozenset[ResourceKind]
             ) -> tuple[ResourceChange, ...]:
        out: list[ResourceChange] = []
        for key, ref in change.references.items():
            if key_matches(key, path):
                for t in self.plan.resolve(ref, change, kinds):
                    if all(t.address != o.address for o in out):
                        out.append(t)
        return tuple(out)

    def link(self, change: ResourceChange, path: str, value: Any,
             kinds: frozenset[ResourceKind], what: str) -> Found:
        """The resources of ``kinds`` an input (one value or a list of them) names."""
        refs = self.refs(change, path, kinds)
        if refs:
            return Found(refs, (), None, True)
        if value is None or value == "" or value == []:
            return Found()
        items = blocks(value) if not isinstance(value, str) else [value]
        if items is UNKNOWN:
            return Found((), (), f"{what} unknown until apply", True)
        targets: list[ResourceChange] = []
        outside: list[str] = []
        unknown: list[str] = []
        for item in items:
            if item is UNKNOWN:
                unknown.append(f"{what} unknown until apply")
                continue
            if not isinstance(item, str) or not item:
                continue
            found = self.by_value(kinds, item)
            if found is None:
                outside.append(item)
            elif all(t.address != found.address for t in targets):
                targets.append(found)
        reason = "; ".join(dict.fromkeys(unknown)) or None
        return Found(tuple(targets), tuple(outside), reason, True)

    def by_value(self, kinds: frozenset[ResourceKind], value: str) -> ResourceChange | None:
        by_value = self._by_value
        if by_value is None:  # the first link by value: most plans without proxies make none
            by_value = self._by_value = {}
            for c in self._keyed:
                for k in ("id", "name", "arn", "placement_group_id", "network_interface_id"):
                    key = c.after.get(k)
                    if isinstance(key, str) and key:
                        by_value.setdefault((c.kind, key), c)
        for kind in kinds:
            found = by_value.get((kind, value))
            if found is not None:
                return found
        return None

    def template_of(self, change: ResourceChange) -> Found:
        """The launch template(s) a launcher starts from (a template is its own)."""
        if change.kind is ResourceKind.LAUNCH_TEMPLATE:
            return Found((change,), (), None, True)
        link = self.plan.launch_templates(change)
        return Found(link.targets, (), link.unknown, link.declared)

    def pointers(self, name: str, items: Iterable[ResourceChange],
                 paths: Iterable[tuple[str, frozenset[ResourceKind]]]) -> Pointers:
        """What ``items`` point at through ``paths``, built once per ``name``."""
        cached = self._built.get(name)
        if cached is not None:
            return cached
        out = Pointers()
        wanted = tuple(paths)
        for item in items:
            for path, kinds in wanted:
                value = get_path(item.after, path)
                if value is None and not self.refs(item, path, kinds):
                    continue
                out.add(item, self.link(item, path, value, kinds, path.replace("_", " ")))
        self._built[name] = out
        return out

    def interfaces_of(self, change: ResourceChange) -> list[ResourceChange]:
        """Network interfaces attached to an instance (proven links only)."""
        if change.kind is not ResourceKind.INSTANCE:
            return []
        found = self.pointers("eni", self.interfaces, (("attachment.instance", INSTANCE),))
        return found.at(change)[0]


def attachment_key(att: ResourceChange, keys: Iterable[str]) -> str | None:
    """The first of ``keys`` an attachment sets or refers through."""
    inputs: Mapping[str, Any] = att.after
    for key in keys:
        if key in inputs or any(key_matches(k, key) for k in att.references):
            return key
    return None
