"""Where a proxy's clients run, as far as one flow's cap is concerned: in the proxies' cluster
placement group (TCP: 10 Gbps per flow) or not (5 Gbps).

The proxy says so with ``gpupool:remoting-clients`` (``in-group`` | ``outside``; gpupool's tiers
write it). The claim ``in-group`` is checked against what the plan holds: the proxy must be in a
cluster placement group, and no client of its tier (``gpupool:role = gpu-client``, matched by
``gpupool:tier`` where both carry it) may launch into another placement group or none. A proxy
without the tag, with another value, or whose claim the plan contradicts, is judged as having
its clients outside: the smaller cap, never the larger one on a guess.
"""

from __future__ import annotations

from gpupool.record import Frozen
from gpupool.tags import CLIENTS_IN_GROUP, CLIENTS_OUTSIDE, CLIENTS_TAG, TIER_TAG
from policies.facts.network.links import LAUNCHERS
from policies.facts.network.placement import PlacementFacts
from policies.facts.network.roles import RoleFacts
from policies.facts.values import text
from policies.model import UNKNOWN, ResourceChange


class ClientsWhere(Frozen):
    """Where a proxy's clients are taken to be, and why (for the rule's message)."""

    __slots__ = ("in_group", "why", "malformed", "claimed")

    in_group: bool
    why: str
    malformed: str | None  # a tag value that is neither in-group nor outside
    claimed: bool  # the tag says in-group (whether or not the plan bears it out)

    def __init__(
        self,
        in_group: bool,
        why: str,
        malformed: str | None = None,
        claimed: bool = False,
    ) -> None:
        object.__setattr__(self, "in_group", in_group)
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "malformed", malformed)
        object.__setattr__(self, "claimed", claimed)


class ClientFacts(RoleFacts, PlacementFacts):
    """Where each proxy's clients run (:func:`clients_where`)."""

    def clients_where(self, proxy: ResourceChange) -> ClientsWhere:
        value, _ = self.tag(proxy, CLIENTS_TAG)
        if value is UNKNOWN:
            return ClientsWhere(False, f"{CLIENTS_TAG} is unknown until apply, so the clients "
                                       "are taken to be outside the placement group")
        if value is None:
            return ClientsWhere(False, f"{CLIENTS_TAG} is not set, so the clients are taken "
                                       "to be outside the placement group")
        shown = value.strip() if isinstance(value, str) else value
        if shown == CLIENTS_OUTSIDE:
            return ClientsWhere(False, f"{CLIENTS_TAG} = {CLIENTS_OUTSIDE}")
        if shown != CLIENTS_IN_GROUP:
            return ClientsWhere(False, f"{CLIENTS_TAG} = {value!r} is neither "
                                       f"{CLIENTS_IN_GROUP} nor {CLIENTS_OUTSIDE}, so the "
                                       "clients are taken to be outside the placement group",
                                malformed=str(value))
        return self._in_group_claim(proxy)

    def _in_group_claim(self, proxy: ResourceChange) -> ClientsWhere:
        claim = f"{CLIENTS_TAG} = {CLIENTS_IN_GROUP}, but "
        found = self.placement_group(proxy)
        if not found.targets or any(text(pg.after.get("strategy")) != "cluster"
                                    for pg in found.targets):
            what = ("its placement group is not in the plan" if found.outside else
                    "the proxy is in no cluster placement group the plan shows")
            return ClientsWhere(False, claim + what, claimed=True)
        groups = {pg.address for pg in found.targets}
        tier = self.tag(proxy, TIER_TAG)[0]
        for client in self.clients():
            theirs = self.tag(client, TIER_TAG)[0]
            if isinstance(tier, str) and isinstance(theirs, str) and theirs != tier:
                continue  # another tier's client
            placed = self.placement_group(client)
            if placed.targets and not any(t.address in groups for t in placed.targets):
                names = ", ".join(t.name for t in placed.targets)
                return ClientsWhere(False, claim + f"client {client.address} launches into "
                                                   f"placement group {names}, not the proxies'",
                                    claimed=True)
            if not placed.declared and client.kind in LAUNCHERS:
                return ClientsWhere(False, claim + f"client {client.address} is in no "
                                                   "placement group", claimed=True)
        return ClientsWhere(True, f"{CLIENTS_TAG} = {CLIENTS_IN_GROUP}", claimed=True)
