"""The tags the kit writes and its policies and reports read (DESIGN.md, fixed interfaces).

One place for their spelling: the proxy tier writes them (gpupool.config.remote_gpu), the
network rules read them (policies.facts.network) and ``gpupool debt`` counts proxies by them
(gpupool.debt.discover). No imports, so any of those may use it without start-up cost.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

ROLE_TAG: Final = "gpupool:role"
PROXY_ROLE: Final = "gpu-proxy"
CLIENT_ROLE: Final = "gpu-client"
MIN_GBPS_TAG: Final = "gpupool:remoting-min-gbps"
MAX_RTT_TAG: Final = "gpupool:remoting-max-rtt-us"
TIER_TAG: Final = "gpupool:tier"
# Where a tier's clients run, as its per-flow cap depends on it (EC2: 10 Gbps per flow inside a
# cluster placement group, 5 outside): CLIENTS_IN_GROUP when they launch into the proxies'
# placement group, CLIENTS_OUTSIDE otherwise. A proxy without the tag is judged as outside.
CLIENTS_TAG: Final = "gpupool:remoting-clients"
CLIENTS_IN_GROUP: Final = "in-group"
CLIENTS_OUTSIDE: Final = "outside"
