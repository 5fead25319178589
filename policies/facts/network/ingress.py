"""What may reach a proxy: the security groups its instances get (own, launch template,
attached interfaces) and the ingress that admits the world into them, inline or as rules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from policies.facts.network.links import Found, LinkIndex, PlanLinks, unresolved
from policies.facts.values import Maybe, blocks, is_map, number, text
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

WORLD: Final = frozenset({"0.0.0.0/0", "::/0"})
_SG: Final = frozenset({ResourceKind.SECURITY_GROUP})
_CIDR_KEYS: Final = ("cidr_blocks", "ipv6_cidr_blocks", "cidr_ipv4", "cidr_ipv6")


class IngressFacts(LinkIndex):
    """Security groups of launchers and the rules that open them to the world."""

    def __init__(self, plan: PlanLinks) -> None:
        super().__init__(plan)
        self._open: dict[str, frozenset[str] | Maybe] | None = None

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
        return [(r, cidrs[r.address]) for r in unresolved(self._open_pointers(), groups)]

    def _open_pointers(self) -> Any:
        cidrs = self._open_cidrs()
        return self.pointers("open-rules", (r for r in self.rules if r.address in cidrs),
                             (("security_group_id", _SG),))

    def _open_cidrs(self) -> dict[str, frozenset[str] | Maybe]:
        if self._open is None:
            self._open = {rule.address: cidrs for rule, cidrs in self.ingress_rules()
                          if cidrs is UNKNOWN or (cidrs & WORLD)}  # type: ignore[operator]
        return self._open


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
