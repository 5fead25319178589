"""The tags the kit writes and its policies and reports read (DESIGN.md, fixed interfaces).

One place for their spelling: the proxy tier writes them (gpupool.config.remote_gpu), the
network rules read them (policies.facts.network) and ``gpupool debt`` counts proxies by them
(gpupool.debt.discover). No imports, so any of those may use it without start-up cost.
"""

from __future__ import annotations

from typing import Final

ROLE_TAG: Final = "gpupool:role"
PROXY_ROLE: Final = "gpu-proxy"
CLIENT_ROLE: Final = "gpu-client"
MIN_GBPS_TAG: Final = "gpupool:remoting-min-gbps"
MAX_RTT_TAG: Final = "gpupool:remoting-max-rtt-us"
TIER_TAG: Final = "gpupool:tier"
