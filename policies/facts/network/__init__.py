"""Network facts of GPU proxy tiers, one subject a module: ``links`` (following a resource to
another by reference, id or name), ``roles`` (roles and budgets from tags), ``placement``
(placement groups, zones, subnets, network kinds), ``clients`` (whether a proxy's clients are
in its placement group), ``ingress`` (security groups and what they
admit) and ``exposure`` (load balancers, public addresses). :class:`NetworkIndex` is all of
them over one plan, built on first use (``PlanIndex.network``).

Terraform writes nested blocks as lists where Pulumi writes objects; the ``values`` helpers
absorb that, so each fact here is written once for every source.
"""

from __future__ import annotations

from gpupool.tags import MAX_RTT_TAG, MIN_GBPS_TAG, ROLE_TAG
from policies.facts.network.clients import ClientFacts, ClientsWhere
from policies.facts.network.exposure import ExposureFacts
from policies.facts.network.ingress import WORLD, IngressFacts, ingress_cidrs, port_range
from policies.facts.network.links import LAUNCHERS, Found, Link, LinkIndex, PlanLinks, Pointers
from policies.facts.network.roles import CLIENT, PROXY, Budget, budget_number, own_tag


class NetworkIndex(ClientFacts, IngressFacts, ExposureFacts):
    """Roles, budgets, placement, where clients are, ingress and exposure of one plan's
    resources."""

    def __init__(self, plan: PlanLinks) -> None:
        super().__init__(plan)


__all__ = [
    "CLIENT",
    "LAUNCHERS",
    "MAX_RTT_TAG",
    "MIN_GBPS_TAG",
    "PROXY",
    "ROLE_TAG",
    "WORLD",
    "Budget",
    "ClientsWhere",
    "Found",
    "Link",
    "LinkIndex",
    "NetworkIndex",
    "PlanLinks",
    "Pointers",
    "budget_number",
    "ingress_cidrs",
    "own_tag",
    "port_range",
]
