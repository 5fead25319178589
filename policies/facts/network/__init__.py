"""Network facts of GPU proxy tiers, one subject a module: ``links`` (following a resource to
another by reference, id or name), ``roles`` (roles and budgets from tags), ``placement``
(placement groups, zones, subnets, network kinds), ``clients`` (whether a proxy's clients are
in its placement group), ``ingress`` (security groups and what they
admit) and ``exposure`` (load balancers, public addresses). :class:`NetworkIndex` (``tier``) is
all of them over one plan, built on first use (``PlanIndex.network``). The names below are
imported from their modules on first use, so a check of a plan without a proxy tier never loads
the facts only the proxy-tier rules read.

Terraform writes nested blocks as lists where Pulumi writes objects; the ``values`` helpers
absorb that, so each fact here is written once for every source.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

    from gpupool.tags import MAX_RTT_TAG, MIN_GBPS_TAG, ROLE_TAG
    from policies.facts.network.clients import ClientsWhere
    from policies.facts.network.ingress import WORLD, ingress_cidrs, port_range
    from policies.facts.network.links import (
        LAUNCHERS,
        Found,
        Link,
        LinkIndex,
        PlanLinks,
        Pointers,
    )
    from policies.facts.network.roles import CLIENT, PROXY, Budget, budget_number, own_tag
    from policies.facts.network.tier import NetworkIndex

# Each name's module, imported on first use: a check reads links and roles (launch templates,
# the role tags), and only the proxy-tier rules the rest (placement, ingress, exposure).
_HOME: Final = {
    "MAX_RTT_TAG": "gpupool.tags", "MIN_GBPS_TAG": "gpupool.tags", "ROLE_TAG": "gpupool.tags",
    "ClientsWhere": "policies.facts.network.clients",
    "WORLD": "policies.facts.network.ingress",
    "ingress_cidrs": "policies.facts.network.ingress",
    "port_range": "policies.facts.network.ingress",
    "LAUNCHERS": "policies.facts.network.links", "Found": "policies.facts.network.links",
    "Link": "policies.facts.network.links", "LinkIndex": "policies.facts.network.links",
    "PlanLinks": "policies.facts.network.links", "Pointers": "policies.facts.network.links",
    "CLIENT": "policies.facts.network.roles", "PROXY": "policies.facts.network.roles",
    "Budget": "policies.facts.network.roles",
    "budget_number": "policies.facts.network.roles", "own_tag": "policies.facts.network.roles",
    "NetworkIndex": "policies.facts.network.tier",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:  # (a submodule not imported yet: the import system imports it then)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


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
