"""What would put a proxy in front of anyone but its clients: load balancers attached to it and
public addresses on it (elastic IPs on the instance or its interfaces)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policies.facts.network.links import (
    ASG,
    ENI,
    INSTANCE,
    LinkIndex,
    Pointers,
    attachment_key,
    unresolved,
)
from policies.facts.values import blocks, is_map
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

_TARGETS: Final = {ASG: ("autoscaling_group_name",), INSTANCE: ("target_id", "instance")}
_TARGET_KEYS: Final = ("autoscaling_group_name", "target_id", "instance")
_BALANCERS: Final = frozenset({ResourceKind.TARGET_GROUP, ResourceKind.LOAD_BALANCER})


class ExposureFacts(LinkIndex):
    """Load balancers in front of launchers and public addresses on instances."""

    def behind_load_balancer(self, change: ResourceChange) -> tuple[list[str], list[str]]:
        """(what attaches a load balancer to the launcher, why that cannot be told)."""
        found: list[str] = []
        unknown: list[str] = []
        if change.kind is ResourceKind.AUTOSCALING_GROUP:
            for key in ("target_group_arns", "load_balancers", "traffic_source"):
                value = change.after.get(key)
                items = blocks(value)
                if items is UNKNOWN:
                    # Unknown until apply, but declared from the plan's own target group or
                    # load balancer (`[aws_lb_target_group.x.arn]`): attached all the same.
                    linked = self.refs(change, key, _BALANCERS)
                    if linked:
                        found.append(f"its {key} ({', '.join(t.name for t in linked)})")
                    else:
                        unknown.append(_unknown_why(change, key))
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
        return [att for att in unresolved(self._lb_pointers(), launchers)
                if (ResourceKind.AUTOSCALING_GROUP in kinds
                    and attachment_key(att, _TARGET_KEYS) in _TARGETS[ASG])
                or (ResourceKind.INSTANCE in kinds
                    and attachment_key(att, _TARGET_KEYS) in _TARGETS[INSTANCE])]

    def _lb_pointers(self) -> Pointers:
        return self.pointers("lb", self.attachments, (
            ("autoscaling_group_name", ASG), ("target_id", INSTANCE), ("instance", INSTANCE)))

    def public_addresses(self, change: ResourceChange) -> list[str]:
        """Elastic IPs associated with an instance (directly or through its interfaces)."""
        if change.kind is not ResourceKind.INSTANCE:
            return []
        out: list[str] = []
        direct = self.pointers("eip", self.addresses, (("instance", INSTANCE),
                                                        ("instance_id", INSTANCE)))
        out += [f"elastic IP {eip.name}" for eip in direct.at(change)[0]]
        on_eni = self.pointers("eip-eni", self.addresses, (("network_interface", ENI),
                                                            ("network_interface_id", ENI)))
        for eni in self.interfaces_of(change):
            out += [f"elastic IP {eip.name} on interface {eni.name}"
                    for eip in on_eni.at(eni)[0]]
        return list(dict.fromkeys(out))


def _unknown_why(change: ResourceChange, key: str) -> str:
    if key == "traffic_source" and ":" not in change.type:  # a Terraform type, not a token
        # Wholly unknown although not a static block of the configuration: none, or a
        # `dynamic "traffic_source"` block over values unknown until apply, which Terraform's
        # JSON configuration leaves out (policies.sources.terraform_declared).
        return ("traffic_source unknown until apply: the configuration writes no static "
                "traffic_source block, so there is none or a dynamic one over values unknown "
                "until apply (Terraform's JSON leaves dynamic blocks out; the group's .tf "
                "source, beside the plan or under --tf-root, tells which)")
    return f"{key} unknown until apply"


def _shown(items: Sequence[Any]) -> str:
    shown = ", ".join(str(i.get("identifier", i)) if is_map(i) else str(i) for i in items[:2])
    return shown + (" …" if len(items) > 2 else "")
