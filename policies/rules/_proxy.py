"""The one exception ideas 1 and 2 share: a GPU proxy sized for bandwidth, not GPU.

Scaling proxies out does not raise the bandwidth of one client's flow, so a proxy tagged
``gpupool:role = gpu-proxy`` whose budget (``gpupool:remoting-min-gbps``) exceeds the smallest
size's baseline may run the cheapest size of the same GPU whose baseline meets it, and nothing
beyond. ``gpu-smallest-instance`` and ``gpu-no-vertical-upsize`` read the tags on the resource
itself (they judge one resource at a time, in the CrossGuard pack too).
"""

from __future__ import annotations

from gpupool.catalog import Catalog
from gpupool.record import Frozen
from gpupool.tags import MIN_GBPS_TAG, ROLE_TAG
from policies.facts.network.roles import PROXY, budget_number, own_tag
from policies.facts.values import Side
from policies.model import ResourceChange


class BandwidthSizing(Frozen):
    """How a proxy's budget judges one instance type above the smallest size."""

    __slots__ = ("allowed", "reason")

    allowed: bool
    reason: str  # the "why" a report prints

    def __init__(self, allowed: bool, reason: str) -> None:
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "reason", reason)


def proxy_min_gbps(change: ResourceChange, side: Side = "new") -> float | None:
    """The budget's bandwidth of a resource tagged as a GPU proxy, else None."""
    if own_tag(change, ROLE_TAG, side) != PROXY:
        return None
    value = budget_number(own_tag(change, MIN_GBPS_TAG, side))
    return value if isinstance(value, float) else None


def bandwidth_sizing(catalog: Catalog, instance_type: str, min_gbps: float
                     ) -> BandwidthSizing | None:
    """None when the type is the smallest size anyway; else whether the budget justifies it."""
    row, smallest = catalog.get(instance_type), catalog.smallest_like(instance_type)
    if row is None or smallest is None or row is smallest:
        return None
    # (only a proxy with a budget asks: the network catalog is imported then)
    from gpupool.catalog.network import justified_by_bandwidth

    ok, needed = justified_by_bandwidth(catalog, instance_type, min_gbps)
    base = f"{smallest.instance_type}'s baseline is {smallest.network_baseline_gbps:g} Gbps"
    if ok:
        return BandwidthSizing(True, (
            f"{instance_type} is above the smallest size for {row.gpu_model} "
            f"({smallest.instance_type}) for bandwidth, not GPU: this proxy's budget needs "
            f"{min_gbps:g} Gbps per flow ({MIN_GBPS_TAG}), {base}, and {instance_type} "
            f"({row.network_baseline_gbps:g} Gbps) is the smallest size that meets it"))
    if needed is None:
        return BandwidthSizing(False, (
            f"no {row.gpu_model} size has a {min_gbps:g} Gbps baseline, so the proxy's budget "
            "justifies no bigger size"))
    if needed is smallest:
        return BandwidthSizing(False, (
            f"the proxy's budget ({min_gbps:g} Gbps) fits {base}, so it justifies no bigger "
            "size"))
    return BandwidthSizing(False, (
        f"the proxy's budget ({min_gbps:g} Gbps) justifies {needed.instance_type} "
        f"({needed.network_baseline_gbps:g} Gbps baseline) at most, never beyond"))
