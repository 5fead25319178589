"""Network facts of GPU proxy tiers: roles and budgets from tags, placement groups, zones,
public addresses, security group ingress and load balancers in front of a resource.

Every link is followed the way :class:`~policies.facts.index.PlanIndex` follows launch
templates: a reference the plan proves (Terraform configuration, Pulumi property dependencies)
first, then the value (an id or a name of a resource in the plan). A value unknown until apply,
or one naming a resource the plan does not hold, is an *unknown* with its reason, never a pass
and never a guess. Terraform writes nested blocks as lists where Pulumi writes objects; the
``values`` helpers absorb that, so each fact here is written once for every source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from gpupool.catalog.network import NetworkKind
from gpupool.tags import CLIENT_ROLE, MAX_RTT_TAG, MIN_GBPS_TAG, PROXY_ROLE, ROLE_TAG
from policies.facts.tags import group_tags
from policies.facts.values import (
    _GONE,
    Maybe,
    Side,
    block,
    blocks,
    flag,
    inputs_of,
    is_map,
    number,
    text,
)
from policies.model import UNKNOWN, ResourceChange, ResourceKind, get_path

if TYPE_CHECKING:
    from policies.facts.index import PlanIndex

PROXY: Final = PROXY_ROLE
CLIENT: Final = CLIENT_ROLE
WORLD: Final = frozenset({"0.0.0.0/0", "::/0"})

LAUNCHERS: Final = frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE})
_LT: Final = frozenset({ResourceKind.LAUNCH_TEMPLATE})
_PG: Final = frozenset({ResourceKind.PLACEMENT_GROUP})
_SG: Final = frozenset({ResourceKind.SECURITY_GROUP})
_SUBNET: Final = frozenset({ResourceKind.SUBNET})
_INSTANCE: Final = frozenset({ResourceKind.INSTANCE})
_ASG: Final = frozenset({ResourceKind.AUTOSCALING_GROUP})
_ENI: Final = frozenset({ResourceKind.NETWORK_INTERFACE})


# --------------------------------------------------------------------------- tags


def own_tag(change: ResourceChange, key: str, side: Side = "new") -> Any:
    """A tag's value as written on the resource itself: ``tags``/``tags_all``, an ASG's tag
    list, a launch template's instance tag specifications. None when absent, UNKNOWN when the
    plan does not know it (or does not know whether it is there)."""
    inputs = inputs_of(change, side)
    unknown = False
    for maps_key in ("tags", "tags_all"):
        tags = inputs.get(maps_key)
        if tags is UNKNOWN:
            unknown = True
        elif is_map(tags) and key in tags:
            value = tags[key]
            if value is UNKNOWN or (isinstance(value, str) and value):
                return value
    if change.kind is ResourceKind.AUTOSCALING_GROUP:
        listed = group_tags(inputs)
        if listed is UNKNOWN:
            unknown = True
        else:
            for tag in listed:
                if tag.key == key:
                    return tag.value
    if change.kind is ResourceKind.LAUNCH_TEMPLATE:
        specs = blocks(inputs.get("tag_specifications"))
        if specs is UNKNOWN:
            unknown = True
        else:
            for spec in specs:
                if not is_map(spec) or spec.get("resource_type") != "instance":
                    continue
                tags = spec.get("tags")
                if tags is UNKNOWN:
                    unknown = True
                elif is_map(tags) and key in tags:
                    return tags[key]
    return UNKNOWN if unknown else None


def budget_number(value: Any, *, zero: bool = False) -> float | Maybe | str | None:
    """A budget tag's value: a positive number (``inf`` for no bound; 0 too when ``zero``: a
    profile that moves no byte needs no bandwidth), UNKNOWN, None when absent, or the offending
    text when it is not such a number."""
    if value is None or value is UNKNOWN:
        return value
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            return str(value)
    if number != number or number < 0 or (number == 0 and not zero):  # NaN, negative, zero
        return str(value)
    return number


@dataclass(frozen=True, slots=True)
class Budget:
    """A proxy's budget tags: Gbps and µs, or why they cannot be read."""

    min_gbps: float | None = None
    max_rtt_us: float | None = None
    missing: tuple[str, ...] = ()  # tag keys not set
    unknown: tuple[str, ...] = ()  # tag keys whose value is unknown until apply
    malformed: tuple[tuple[str, str], ...] = ()  # (key, value) that is not a positive number
    where: str = ""  # the resource the tags were read from


# --------------------------------------------------------------------------- links


@dataclass(frozen=True, slots=True)
class Found:
    """What a link resolved to: resources of the plan, values naming resources outside it,
    and why part of it is unknown."""

    targets: tuple[ResourceChange, ...] = ()
    outside: tuple[str, ...] = ()  # ids or names not in the plan
    unknown: str | None = None
    declared: bool = False

    def merge(self, other: Found) -> Found:
        seen = {t.address for t in self.targets}
        targets = self.targets + tuple(t for t in other.targets if t.address not in seen)
        reasons = "; ".join(dict.fromkeys(r for r in (self.unknown, other.unknown) if r)) or None
        return Found(targets, self.outside + other.outside, reasons,
                     self.declared or other.declared)


@dataclass
class Pointers:
    """Which resources a set of resources (rules, attachments, addresses) point at through one
    input, computed once: so that judging N proxies against M rules costs N + M, not N times M."""

    by_target: dict[str, list[ResourceChange]] = field(default_factory=dict)
    unknown: list[ResourceChange] = field(default_factory=list)  # the target is unknown
    outside: list[ResourceChange] = field(default_factory=list)  # names something not in the plan

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
        if not any(isinstance(target.after.get(k), str) for k in ("id", "name", "arn")):
            maybe += self.outside  # its own id is unknown: a value outside may be it
        return self.by_target.get(target.address, []), maybe


def _key_matches(ref_key: str, path: str) -> bool:
    """Does a reference's key cover the input at ``path``? Pulumi names top-level properties
    (``placement``), Terraform the attribute path (``placement.group_name``,
    ``override[1].instance_type``)."""
    if ref_key == path or path.startswith(ref_key + "."):
        return True
    return ref_key.startswith(path + ".") or ref_key.startswith(path + "[")


@dataclass
class NetworkIndex:
    """Placement groups, subnets and security groups by id and name, ingress rules by security
    group, and what puts resources behind load balancers or gives them public addresses; built
    in one pass on first use (``PlanIndex.network``)."""

    plan: PlanIndex
    _by_value: dict[tuple[ResourceKind, str], ResourceChange] = field(default_factory=dict)
    rules: list[ResourceChange] = field(default_factory=list)
    attachments: list[ResourceChange] = field(default_factory=list)
    addresses: list[ResourceChange] = field(default_factory=list)  # EIPs, EIP associations
    interfaces: list[ResourceChange] = field(default_factory=list)
    launchers: list[ResourceChange] = field(default_factory=list)
    templates: list[ResourceChange] = field(default_factory=list)
    _built: dict[str, Pointers] = field(default_factory=dict)
    _open: dict[str, frozenset[str] | Maybe] | None = None
    _roles: dict[str, list[ResourceChange]] | None = None

    def __post_init__(self) -> None:
        keyed = (ResourceKind.PLACEMENT_GROUP, ResourceKind.SUBNET, ResourceKind.SECURITY_GROUP,
                 ResourceKind.INSTANCE, ResourceKind.NETWORK_INTERFACE,
                 ResourceKind.AUTOSCALING_GROUP, ResourceKind.TARGET_GROUP)
        for c in self.plan.by_address.values():
            if c.change in _GONE:
                continue
            if c.kind in keyed:
                for k in ("id", "name", "arn", "placement_group_id", "network_interface_id"):
                    value = c.after.get(k)
                    if isinstance(value, str) and value:
                        self._by_value.setdefault((c.kind, value), c)
            if c.kind is ResourceKind.SECURITY_GROUP_RULE:
                self.rules.append(c)
            elif c.kind is ResourceKind.LB_ATTACHMENT:
                self.attachments.append(c)
            elif c.kind is ResourceKind.ELASTIC_IP:
                self.addresses.append(c)
            elif c.kind is ResourceKind.NETWORK_INTERFACE:
                self.interfaces.append(c)
            elif c.kind is ResourceKind.LAUNCH_TEMPLATE:
                self.templates.append(c)
            if c.kind in LAUNCHERS:
                self.launchers.append(c)

    # -- generic resolution

    def refs(self, change: ResourceChange, path: str, kinds: frozenset[ResourceKind]
             ) -> tuple[ResourceChange, ...]:
        out: list[ResourceChange] = []
        for key, ref in change.references.items():
            if _key_matches(key, path):
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
        for kind in kinds:
            found = self._by_value.get((kind, value))
            if found is not None:
                return found
        return None

    # -- roles and budgets

    def tag(self, change: ResourceChange, key: str) -> tuple[Any, ResourceChange]:
        """A tag of a launcher, falling back on its launch template's (what instances get)."""
        value = own_tag(change, key)
        if value is not None or change.kind not in LAUNCHERS:
            return value, change
        link = self.plan.launch_templates(change)
        unknown = link.unknown is not None and not link.targets
        for t in link.targets:
            found = own_tag(t, key)
            if found is not None:
                return found, t
        return (UNKNOWN if unknown else None), change

    def role(self, change: ResourceChange) -> Any:
        return self.tag(change, ROLE_TAG)[0]

    def budget(self, change: ResourceChange) -> Budget:
        values: dict[str, Any] = {}
        where = change.address
        for key in (MIN_GBPS_TAG, MAX_RTT_TAG):
            value, source = self.tag(change, key)
            values[key] = budget_number(value, zero=key == MIN_GBPS_TAG)
            if value is not None and value is not UNKNOWN:
                where = source.address
        numbers = {k: v for k, v in values.items() if isinstance(v, float)}
        return Budget(
            min_gbps=numbers.get(MIN_GBPS_TAG),
            max_rtt_us=numbers.get(MAX_RTT_TAG),
            missing=tuple(k for k, v in values.items() if v is None),
            unknown=tuple(k for k, v in values.items() if v is UNKNOWN),
            malformed=tuple((k, v) for k, v in values.items() if isinstance(v, str)),
            where=where,
        )

    def proxies(self) -> list[ResourceChange]:
        """Groups and instances whose instances are GPU proxies, and proxy launch templates that
        nothing in the plan launches from (judged on their own)."""
        return self._with_role(PROXY)

    def clients(self) -> list[ResourceChange]:
        return self._with_role(CLIENT)

    def _with_role(self, role: str) -> list[ResourceChange]:
        if self._roles is None:  # once per plan: three rules ask
            roles: dict[str, list[ResourceChange]] = {PROXY: [], CLIENT: []}
            used: set[str] = set()
            for launcher in self.launchers:
                found = self.role(launcher)
                if found in roles:
                    roles[found].append(launcher)
                used.update(t.address for t in self.plan.launch_templates(launcher).targets)
            for t in self.templates:
                found = own_tag(t, ROLE_TAG)
                if found in roles and t.address not in used:
                    roles[found].append(t)
            self._roles = roles
        return list(self._roles[role])

    # -- placement

    def template_of(self, change: ResourceChange) -> Found:
        if change.kind is ResourceKind.LAUNCH_TEMPLATE:
            return Found((change,), (), None, True)
        link = self.plan.launch_templates(change)
        return Found(link.targets, (), link.unknown, link.declared)

    def placement_group(self, change: ResourceChange) -> Found:
        """The placement group a launcher (or template) puts its instances in."""
        inputs = change.after
        if change.kind is ResourceKind.AUTOSCALING_GROUP:
            own = self.link(change, "placement_group", inputs.get("placement_group"), _PG,
                            "placement group")
        elif change.kind is ResourceKind.INSTANCE:
            own = self.link(change, "placement_group", inputs.get("placement_group"), _PG,
                            "placement group")
            if not own.declared:
                own = self.link(change, "placement_group_id", inputs.get("placement_group_id"),
                                _PG, "placement group")
        else:
            own = Found()
        if own.declared:
            return own
        out = Found()
        templates = self.template_of(change)
        if templates.unknown and not templates.targets:
            return Found((), (), templates.unknown, True)
        for t in templates.targets:
            placement = block(t.after.get("placement"))
            if placement is UNKNOWN:
                out = out.merge(Found((), (), "launch template placement unknown until apply",
                                      True))
                continue
            if placement is None:
                continue
            for key in ("group_name", "group_id"):
                found = self.link(t, f"placement.{key}", placement.get(key), _PG,
                                  "placement group")
                if found.declared:
                    out = out.merge(found)
                    break
        return out

    def zones(self, change: ResourceChange) -> tuple[frozenset[str], int, str | None]:
        """(zones known, number of subnets or zones, why the zones are not all known)."""
        inputs = change.after
        if change.kind is ResourceKind.INSTANCE:
            return frozenset(), 1, None  # an instance lives in one zone
        if change.kind is ResourceKind.LAUNCH_TEMPLATE:
            placement = block(inputs.get("placement"))
            zone = text(placement.get("availability_zone")) if is_map(placement) else None
            return (frozenset({zone}) if isinstance(zone, str) else frozenset()), 1, None
        zones: set[str] = set()
        az_list = blocks(inputs.get("availability_zones"))
        if az_list is UNKNOWN:
            return frozenset(), 0, "availability zones unknown until apply"
        zones.update(z for z in az_list if isinstance(z, str))
        key = "vpc_zone_identifier" if "vpc_zone_identifier" in inputs else "vpc_zone_identifiers"
        subnets = self.link(change, key, inputs.get(key), _SUBNET, "subnets")
        raw = inputs.get(key)
        count = len(raw) if isinstance(raw, list) else len(subnets.targets)
        if subnets.unknown and not subnets.targets:
            return frozenset(zones), count, subnets.unknown
        why: list[str] = []
        for s in subnets.targets:
            zone = text(s.after.get("availability_zone"))
            if isinstance(zone, str):
                zones.add(zone)
            else:
                why.append(f"the zone of subnet {s.name} is unknown until apply")
        if subnets.outside:
            why.append(f"subnet(s) {', '.join(subnets.outside)} are not in the plan")
        if subnets.unknown:
            why.append(subnets.unknown)
        count = max(count, len(subnets.targets) + len(subnets.outside))
        return frozenset(zones), count, "; ".join(why) or None

    def subnets(self, change: ResourceChange) -> Found:
        inputs = change.after
        if change.kind is ResourceKind.INSTANCE:
            return self.link(change, "subnet_id", inputs.get("subnet_id"), _SUBNET, "subnet")
        if change.kind is ResourceKind.AUTOSCALING_GROUP:
            key = ("vpc_zone_identifier" if "vpc_zone_identifier" in inputs
                   else "vpc_zone_identifiers")
            return self.link(change, key, inputs.get(key), _SUBNET, "subnets")
        return Found()

    # -- security groups and ingress

    def security_groups(self, change: ResourceChange) -> Found:
        """The security groups a launcher's instances get (own, template, interfaces)."""
        out = Found()
        for c in (change, *self.template_of(change).targets):
            inputs = c.after
            for key in ("vpc_security_group_ids", "security_groups", "security_group_names"):
                found = self.link(c, key, inputs.get(key), _SG, "security groups")
                out = out.merge(found)
            nics = blocks(inputs.get("network_interfaces"))
            if nics is UNKNOWN:
                out = out.merge(Found((), (), "network interfaces unknown until apply", True))
                continue
            for nic in nics:
                if is_map(nic):
                    found = self.link(c, "network_interfaces.security_groups",
                                      nic.get("security_groups"), _SG, "security groups")
                    out = out.merge(found)
        for eni in self.interfaces_of(change):
            out = out.merge(self.link(eni, "security_groups", eni.after.get("security_groups"),
                                      _SG, "security groups"))
        return out

    def _pointers(self, name: str, items: Iterable[ResourceChange],
                  paths: Iterable[tuple[str, frozenset[ResourceKind]]]) -> Pointers:
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
        pointers = self._pointers("eni", self.interfaces, (("attachment.instance", _INSTANCE),))
        return pointers.at(change)[0]

    @staticmethod
    def inline_ingress(sg: ResourceChange
                       ) -> Iterable[tuple[Mapping[str, Any], frozenset[str] | Maybe]] | Maybe:
        """A security group's inline ingress blocks and the CIDRs each admits."""
        items = blocks(sg.after.get("ingress"))
        if items is UNKNOWN:
            return UNKNOWN
        return [(item, ingress_cidrs(item)) for item in items if is_map(item)]

    def ingress_rules(self) -> Iterable[tuple[ResourceChange, frozenset[str] | Maybe]]:
        """Standalone ingress rules and the CIDRs they admit."""
        for rule in self.rules:
            inputs = rule.after
            kind = text(inputs.get("type"))
            if kind == "egress" or rule.type.endswith("EgressRule") or "egress" in rule.type:
                continue
            yield rule, ingress_cidrs(inputs)

    def open_rules(self, sg: ResourceChange
                   ) -> list[tuple[ResourceChange, frozenset[str] | Maybe]]:
        """Ingress rules proven to admit the world (or CIDRs unknown until apply) into ``sg``."""
        cidrs = self._open_cidrs()
        return [(r, cidrs[r.address]) for r in self._open_pointers().at(sg)[0]]

    def unresolved_open_rules(self, groups: Iterable[ResourceChange]
                              ) -> list[tuple[ResourceChange, frozenset[str] | Maybe]]:
        """Open ingress rules whose security group the plan cannot tell, and that may therefore
        be on one of ``groups``: reported once each, not once per group."""
        cidrs = self._open_cidrs()
        return [(r, cidrs[r.address]) for r in _unresolved(self._open_pointers(), groups)]

    def _open_pointers(self) -> Pointers:
        cidrs = self._open_cidrs()
        return self._pointers("open-rules", (r for r in self.rules if r.address in cidrs),
                              (("security_group_id", _SG),))

    def _open_cidrs(self) -> dict[str, frozenset[str] | Maybe]:
        if self._open is None:
            self._open = {rule.address: cidrs for rule, cidrs in self.ingress_rules()
                          if cidrs is UNKNOWN or (cidrs & WORLD)}  # type: ignore[operator]
        return self._open

    # -- load balancers and public addresses

    def behind_load_balancer(self, change: ResourceChange) -> tuple[list[str], list[str]]:
        """(what attaches a load balancer to the launcher, why that cannot be told)."""
        found: list[str] = []
        unknown: list[str] = []
        if change.kind is ResourceKind.AUTOSCALING_GROUP:
            for key in ("target_group_arns", "load_balancers", "traffic_source"):
                value = change.after.get(key)
                items = blocks(value)
                if items is UNKNOWN:
                    unknown.append(f"{key} unknown until apply")
                elif items:
                    found.append(f"its {key} ({_shown(items)})")
        found += [f"{att.name} ({att.type})" for att in self._lb_pointers().at(change)[0]]
        return found, unknown

    def unresolved_attachments(self, launchers: Iterable[ResourceChange]
                               ) -> list[ResourceChange]:
        """Load balancer attachments whose target the plan cannot tell, of a kind that may be
        one of ``launchers``: reported once each, not once per launcher."""
        launchers = list(launchers)
        kinds = {c.kind for c in launchers}
        return [att for att in _unresolved(self._lb_pointers(), launchers)
                if (ResourceKind.AUTOSCALING_GROUP in kinds
                    and _attachment_target(att) in _TARGETS[_ASG])
                or (ResourceKind.INSTANCE in kinds
                    and _attachment_target(att) in _TARGETS[_INSTANCE])]

    def _lb_pointers(self) -> Pointers:
        return self._pointers("lb", self.attachments, (
            ("autoscaling_group_name", _ASG), ("target_id", _INSTANCE), ("instance", _INSTANCE)))

    def public_addresses(self, change: ResourceChange) -> list[str]:
        """Elastic IPs associated with an instance (directly or through its interfaces)."""
        if change.kind is not ResourceKind.INSTANCE:
            return []
        out: list[str] = []
        direct = self._pointers("eip", self.addresses, (("instance", _INSTANCE),
                                                         ("instance_id", _INSTANCE)))
        out += [f"elastic IP {eip.name}" for eip in direct.at(change)[0]]
        on_eni = self._pointers("eip-eni", self.addresses, (("network_interface", _ENI),
                                                             ("network_interface_id", _ENI)))
        for eni in self.interfaces_of(change):
            out += [f"elastic IP {eip.name} on interface {eni.name}"
                    for eip in on_eni.at(eni)[0]]
        return list(dict.fromkeys(out))

    def network_kind(self, change: ResourceChange) -> tuple[NetworkKind, str | None]:
        """EFA when an interface is EFA, ENA Express when it is on, else TCP (and why unknown)."""
        kind = NetworkKind.TCP
        unknown: str | None = None
        for t in self.template_of(change).targets:
            nics = blocks(t.after.get("network_interfaces"))
            if nics is UNKNOWN:
                unknown = "network interfaces unknown until apply"
                continue
            for nic in nics:
                if not is_map(nic):
                    continue
                if nic.get("interface_type") == "efa":
                    return NetworkKind.EFA, None
                srd = block(nic.get("ena_srd_specification"))
                if is_map(srd) and flag(srd.get("ena_srd_enabled")) is True:
                    kind = NetworkKind.ENA_EXPRESS
        return kind, unknown


_TARGETS: Final = {_ASG: ("autoscaling_group_name",), _INSTANCE: ("target_id", "instance")}


def _unresolved(pointers: Pointers, targets: Iterable[ResourceChange]) -> list[ResourceChange]:
    """Items whose target is unknown, and those naming something outside the plan when one of
    ``targets`` has no known id of its own (it could be that something)."""
    out = list(pointers.unknown)
    if any(not any(isinstance(t.after.get(k), str) for k in ("id", "name", "arn"))
           for t in targets):
        out += pointers.outside
    return list({c.address: c for c in out}.values())


def _attachment_target(att: ResourceChange) -> str | None:
    """Which input of an attachment names what sits behind the load balancer."""
    inputs = att.after
    for key in ("autoscaling_group_name", "target_id", "instance"):
        if key in inputs or any(_key_matches(k, key) for k in att.references):
            return key
    return None


_CIDR_KEYS: Final = ("cidr_blocks", "ipv6_cidr_blocks", "cidr_ipv4", "cidr_ipv6")


def ingress_cidrs(item: Mapping[str, Any]) -> frozenset[str] | Maybe:
    """The CIDRs an ingress rule (inline block or rule resource) admits; UNKNOWN if any is."""
    out: set[str] = set()
    for key in _CIDR_KEYS:
        value = item.get(key)
        if value is UNKNOWN:
            return UNKNOWN
        values = [value] if isinstance(value, str) else blocks(value)
        if values is UNKNOWN:
            return UNKNOWN
        for v in values:
            if v is UNKNOWN:
                return UNKNOWN
            if isinstance(v, str) and v:
                out.add(v.strip())
    return frozenset(out)


def port_range(item: Mapping[str, Any]) -> str:
    """``tcp 18515``, ``tcp 0-65535``, ``-1`` (all traffic)."""
    proto = text(item.get("protocol")) or text(item.get("ip_protocol")) or "all"
    low, high = (_port(item.get(k)) for k in ("from_port", "to_port"))
    if low is None and high is None:
        return str(proto)
    return f"{proto} {low}" if low == high else f"{proto} {low}-{high}"


def _port(value: Any) -> str | None:
    """A port as written, whether the source kept it an int or the wire made it a float."""
    found = number(value)
    if isinstance(found, float):
        return f"{found:g}"
    return None if value is None else str(value)


def _shown(items: Sequence[Any]) -> str:
    shown = ", ".join(str(i.get("identifier", i)) if is_map(i) else str(i) for i in items[:2])
    return shown + (" …" if len(items) > 2 else "")
