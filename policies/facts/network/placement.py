"""Where a proxy tier's instances run: the placement group, the zones and subnets, and the
network kind (TCP, ENA Express, EFA) their interfaces give them."""

from __future__ import annotations

from gpupool.catalog.network import NetworkKind
from policies.facts.network.links import Found, LinkIndex
from policies.facts.values import block, blocks, flag, is_map, text
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

_PG: Final = frozenset({ResourceKind.PLACEMENT_GROUP})
_SUBNET: Final = frozenset({ResourceKind.SUBNET})


class PlacementFacts(LinkIndex):
    """Placement groups, zones, subnets and network kinds of launchers and templates."""

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
