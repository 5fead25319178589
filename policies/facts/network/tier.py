"""All the network facts of one plan's proxy tiers in one object (``PlanIndex.network``).

Its own module, so that importing :mod:`policies.facts.network` (or its ``links`` and ``roles``,
which every check reads) does not load the placement, client, ingress and exposure facts that
only the proxy-tier rules ask for.
"""

from __future__ import annotations

from policies.facts.network.clients import ClientFacts
from policies.facts.network.exposure import ExposureFacts
from policies.facts.network.ingress import IngressFacts

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from policies.facts.network.links import PlanLinks


class NetworkIndex(ClientFacts, IngressFacts, ExposureFacts):
    """Roles, budgets, placement, where clients are, ingress and exposure of one plan's
    resources."""

    __module__ = "policies.facts.network"  # where it has always been imported from

    def __init__(self, plan: PlanLinks) -> None:
        super().__init__(plan)
