"""The GPU capacity and cost envelope of a stack: what it can grow to and what that costs.

Pure arithmetic over the validated config and the catalog (no Pulumi imports), so the plan, the
stack outputs and the policy reports all quote the same figures. Prices are the on-demand prices
of the stack's own region (``data/prices.json``): when a pool uses spot, the figures are an upper
bound. A price the catalog does not know (a type not sold or not priced in the region) stays
``None``, and any total that would include it is ``None`` too: an unknown is never a zero.

The envelope prices GPU instances only, and says so: what it leaves out (EBS root volumes, VPC
interface endpoints, data transfer, CloudWatch) is listed with the quantities a reader needs to
price it (``excluded``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.config.kubernetes import KubernetesPoolConfig
from gpupool.config.models import GpuPoolConfig, StackConfig
from gpupool.config.remote_gpu import ResolvedTier
from gpupool.record import replace


@dataclass(frozen=True, slots=True)
class PoolEnvelope:
    """One pool's capacity range and its on-demand cost at each end."""

    pool: str
    instance_type: str
    gpu_model: str
    arch: str
    gpus_per_instance: float
    instances_min: int
    instances_max: int
    gpus_min: float
    gpus_max: float
    spot_share: float
    price_per_hour: float | None  # one instance, on-demand
    price_per_gpu_hour: float | None
    per_hour_min: float | None
    per_hour_max: float | None
    per_month_min: float | None
    per_month_max: float | None
    platform: str = "aws"  # aws (autoscaling group) | kubernetes (on a cluster's GPUs)
    price_basis: str = "on-demand"  # on-demand (catalog) | configured (gpuHourlyCost)
    role: str = "pool"  # pool | gpu-proxy (a remote-GPU tier's proxies)

    @property
    def upper_bound(self) -> bool:
        """Spot capacity is billed below on-demand, so on-demand figures only bound it."""
        return self.spot_share > 0


@dataclass(frozen=True, slots=True)
class Excluded:
    """A cost the envelope does not price, and how much of it the stack uses."""

    item: str
    quantity: str

    def to_dict(self) -> dict[str, str]:
        return {"item": self.item, "quantity": self.quantity}


@dataclass(frozen=True, slots=True)
class StackEnvelope:
    """Every pool of a stack plus the totals; totals are ``None`` when any pool is unpriced."""

    pools: tuple[PoolEnvelope, ...]
    price_region: str
    region: str
    hours_per_month: float
    tiers: tuple[ResolvedTier, ...] = ()  # remote-GPU tiers: their size and network budget
    price_source: str = ""  # where the region's prices come from (source, commit, date)
    excluded: tuple[Excluded, ...] = ()  # costs the envelope leaves out, with their quantities

    @property
    def gpus_min(self) -> float:
        return sum(p.gpus_min for p in self.pools)

    @property
    def gpus_max(self) -> float:
        return sum(p.gpus_max for p in self.pools)

    @property
    def per_hour_min(self) -> float | None:
        return _total(p.per_hour_min for p in self.pools)

    @property
    def per_hour_max(self) -> float | None:
        return _total(p.per_hour_max for p in self.pools)

    @property
    def per_month_min(self) -> float | None:
        return _total(p.per_month_min for p in self.pools)

    @property
    def per_month_max(self) -> float | None:
        return _total(p.per_month_max for p in self.pools)

    @property
    def upper_bound(self) -> bool:
        return any(p.upper_bound for p in self.pools)

    @property
    def unpriced_pools(self) -> list[str]:
        return [p.pool for p in self.pools if p.price_per_hour is None]

    @property
    def configured_prices(self) -> list[PoolEnvelope]:
        """Pools priced by configuration (on-premises GPUs), not by the catalog."""
        return [p for p in self.pools if p.price_basis == "configured"]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape used by ``gpupool plan --format json`` and the policy reports."""
        return {
            "currency": "USD",
            "priceBasis": "on-demand",
            "priceRegion": self.price_region,
            "priceSource": self.price_source,
            "region": self.region,
            "hoursPerMonth": self.hours_per_month,
            "upperBound": self.upper_bound,
            "pools": [_pool_dict(p) for p in self.pools],
            "total": {
                "gpusMin": _num(self.gpus_min),
                "gpusMax": _num(self.gpus_max),
                "perHourMin": _money(self.per_hour_min),
                "perHourMax": _money(self.per_hour_max),
                "perMonthMin": _money(self.per_month_min),
                "perMonthMax": _money(self.per_month_max),
                "unpricedPools": self.unpriced_pools,
            },
            "remoteGpu": [_tier_dict(t) for t in self.tiers],
            "includes": "GPU instances at on-demand prices",
            "excludes": [e.to_dict() for e in self.excluded],
        }


def pool_envelope(
    pool: GpuPoolConfig, itype: InstanceType, *, priced: bool = True
) -> PoolEnvelope:
    """Capacity and cost of one pool; ``priced=False`` when catalog prices do not apply."""
    price = itype.price_per_hour if priced else None
    per_gpu = itype.price_per_gpu_hour if priced else None
    lo, hi = pool.min_size, pool.max_size
    return PoolEnvelope(
        pool=pool.name,
        instance_type=itype.instance_type,
        gpu_model=itype.gpu_model,
        arch=itype.arch,
        gpus_per_instance=itype.gpu_count,
        instances_min=lo,
        instances_max=hi,
        gpus_min=itype.gpu_count * lo,
        gpus_max=itype.gpu_count * hi,
        spot_share=pool.spot_share,
        price_per_hour=price,
        price_per_gpu_hour=per_gpu,
        per_hour_min=_times(price, lo),
        per_hour_max=_times(price, hi),
        per_month_min=_times(price, lo * HOURS_PER_MONTH),
        per_month_max=_times(price, hi * HOURS_PER_MONTH),
    )


def stack_envelope(
    config: StackConfig,
    instance_types: Mapping[str, InstanceType],
    *,
    price_region: str | None = None,
    tiers: Mapping[str, ResolvedTier] | None = None,
) -> StackEnvelope:
    """The envelope of every pool, at the on-demand prices of the stack's region (or of
    ``price_region``). A type given without a price stays unpriced.

    Remote-GPU tiers (``tiers``: the loader's sizing of ``config.remote_gpu``) count with their
    proxies: a proxy's GPU is allocated whether clients use it or not.
    """
    price_region = price_region or config.region
    catalog = load_catalog(region=price_region)
    tiers = tiers or {}
    proxies = tuple(
        replace(pool_envelope(t, regional(tiers[t.name].proxy, catalog)), role="gpu-proxy")
        for t in config.remote_gpu if t.name in tiers
    )
    pools = tuple(
        pool_envelope(p, regional(instance_types[p.name], catalog)) for p in config.pools
    ) + tuple(kubernetes_envelope(p, catalog=catalog) for p in config.kubernetes) + proxies
    return StackEnvelope(
        pools=pools,
        price_region=price_region,
        region=config.region,
        hours_per_month=HOURS_PER_MONTH,
        tiers=tuple(tiers[t.name] for t in config.remote_gpu if t.name in tiers),
        price_source=str(catalog.meta.get("price_source", "")),
        excluded=excluded_costs(config),
    )


def regional(itype: InstanceType, catalog: Catalog) -> InstanceType:
    """``itype`` at ``catalog``'s price (None where that region records none, or where the
    caller gave none: an unknown is never made known)."""
    row = catalog.get(itype.instance_type)
    price = None if row is None or itype.price_per_hour is None else row.price_per_hour
    return replace(itype, price_per_hour=price)


# Interface endpoints a created VPC gets (infra/aws/network.py INTERFACE_SERVICES).
INTERFACE_ENDPOINTS = 6


def excluded_costs(config: StackConfig) -> tuple[Excluded, ...]:
    """What the envelope does not price, with the quantities the stack implies."""
    groups = [*config.pools, *(t for t in config.remote_gpu if hasattr(t, "root_volume_gib"))]
    lo = sum(p.min_size * p.root_volume_gib for p in groups)
    hi = sum(p.max_size * p.root_volume_gib for p in groups)
    out = []
    if config.pools:
        out.append(Excluded("EBS gp3 root volumes (per GiB-month)",
                            f"{lo:,}-{hi:,} GiB at minimum-maximum size"))
    if config.pools and config.network is not None and config.network.create_vpc:
        zones = config.network.az_count
        # + Cloud Map for remote-GPU tiers, + Auto Scaling for pools that release protection
        count = (INTERFACE_ENDPOINTS + (1 if config.remote_gpu else 0)
                 + (1 if any(p.scale_in_protection for p in config.pools) else 0))
        out.append(Excluded(
            "VPC interface endpoints (per endpoint-zone hour and per GB processed)",
            f"{count} endpoints x {zones} zones = {count * zones} endpoint-zones"))
    out.append(Excluded("data transfer (inter-zone, internet, S3 gateway is free)",
                        "depends on the workload"))
    if config.pools:  # a Kubernetes-only stack publishes none to CloudWatch
        out.append(Excluded("CloudWatch custom metrics and logs (GPU metrics per group)",
                            f"{len(config.pools)} group(s) x 6 GPU measurements"))
    watch = config.monitoring  # gpupool:monitoring: a low-utilisation alarm per GPU group
    alarms = (len(config.pools) + len(config.remote_gpu)
              if watch.low_utilisation_alarm.enabled else 0)
    boards = 1 if watch.dashboard and (config.pools or config.remote_gpu) else 0
    if alarms or boards:
        out.append(Excluded("CloudWatch alarms and dashboard (per alarm-month, per dashboard-"
                            "month; gpupool:monitoring)",
                            f"{alarms} alarm(s), {boards} dashboard(s)"))
    return tuple(out)


ON_PREMISES = "on-premises"


def kubernetes_envelope(pool: KubernetesPoolConfig, *, priced: bool = True,
                        catalog: Catalog | None = None) -> PoolEnvelope:
    """A Kubernetes pool's GPUs: at least what its workloads keep running (minimum replicas,
    one GPU each), at most what its teams' quotas allow (capped by the pool's GPUs when set).

    On-premises GPUs cost the configured ``gpuHourlyCost`` (default 0: owned hardware has no
    marginal hourly price) whatever the region; Karpenter nodes cost their catalog price.
    """
    lo = sum(w.min_replicas for w in pool.workloads if w.type == "inference")
    if pool.remote_gpu is not None:
        lo += pool.remote_gpu.min_replicas
    hi = sum(t.gpu_quota for t in pool.teams)
    if pool.karpenter is not None:
        from gpupool.config.gpus import resolve_gpu

        itype = resolve_gpu(pool.gpu, pool.arch, load_catalog())
        if catalog is not None:
            itype = regional(itype, catalog)
        per_node = itype.gpu_count
        hi = min(hi, pool.karpenter.max_gpus)
        nodes_lo, nodes_hi = math.ceil(lo / per_node), math.ceil(hi / per_node)
        price = itype.price_per_hour if priced else None
        spot = 1.0 if "spot" in pool.karpenter.capacity_types else 0.0
        return PoolEnvelope(
            pool=pool.name, instance_type=itype.instance_type, gpu_model=itype.gpu_model,
            arch=itype.arch, gpus_per_instance=per_node, instances_min=nodes_lo,
            instances_max=nodes_hi, gpus_min=per_node * nodes_lo, gpus_max=per_node * nodes_hi,
            spot_share=spot, price_per_hour=price,
            price_per_gpu_hour=itype.price_per_gpu_hour if priced else None,
            per_hour_min=_times(price, nodes_lo), per_hour_max=_times(price, nodes_hi),
            per_month_min=_times(price, nodes_lo * HOURS_PER_MONTH),
            per_month_max=_times(price, nodes_hi * HOURS_PER_MONTH),
            platform="kubernetes",
        )
    if pool.gpus is not None:
        hi = min(hi, pool.gpus)
    lo = min(lo, hi)
    cost = pool.gpu_hourly_cost
    return PoolEnvelope(
        pool=pool.name, instance_type=ON_PREMISES, gpu_model=pool.gpu, arch=pool.arch,
        gpus_per_instance=1, instances_min=lo, instances_max=hi, gpus_min=lo, gpus_max=hi,
        spot_share=0.0, price_per_hour=cost, price_per_gpu_hour=cost,
        per_hour_min=cost * lo, per_hour_max=cost * hi,
        per_month_min=cost * lo * HOURS_PER_MONTH, per_month_max=cost * hi * HOURS_PER_MONTH,
        platform="kubernetes", price_basis="configured",
    )


def _times(price: float | None, factor: float) -> float | None:
    return None if price is None else price * factor


def _total(values: Any) -> float | None:
    out = 0.0
    for v in values:
        if v is None:
            return None
        out += v
    return out


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else v


def _money(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _pool_dict(p: PoolEnvelope) -> dict[str, Any]:
    return {
        "pool": p.pool,
        "instanceType": p.instance_type,
        "gpuModel": p.gpu_model,
        "arch": p.arch,
        "gpusPerInstance": _num(p.gpus_per_instance),
        "instancesMin": p.instances_min,
        "instancesMax": p.instances_max,
        "gpusMin": _num(p.gpus_min),
        "gpusMax": _num(p.gpus_max),
        "spotShare": p.spot_share,
        "upperBound": p.upper_bound,
        "pricePerHour": _money(p.price_per_hour),
        "pricePerGpuHour": _money(p.price_per_gpu_hour),
        "perHourMin": _money(p.per_hour_min),
        "perHourMax": _money(p.per_hour_max),
        "perMonthMin": _money(p.per_month_min),
        "perMonthMax": _money(p.per_month_max),
        "platform": p.platform,
        "priceBasis": p.price_basis,
        "role": p.role,
    }


def _tier_dict(t: ResolvedTier) -> dict[str, Any]:
    """A tier's size and budget, as ``gpupool plan`` shows them."""
    return {
        "tier": t.name,
        "instanceType": t.proxy.instance_type,
        "smallest": t.smallest.instance_type,
        "why": t.why,
        "network": str(t.kind),
        "baselineGbps": t.proxy.network_baseline_gbps,
        "flowGbps": t.flow_gbps,
        "rttFloorUs": t.rtt_floor_us,
        "minGbps": t.min_gbps,
        "maxRttUs": t.max_rtt_us,  # what the tag carries: finite, RTT_CEILING_US if unbounded
        "rttUnbounded": t.rtt_unbounded,
        "budgetSource": t.budget_source,
        "predictedOverhead": (None if t.predicted_overhead is None
                              else round(t.predicted_overhead, 6)),
        "enaExpress": t.ena_express,
        "clientType": t.client_type,
        "clientsInPlacementGroup": t.clients_in_group,
    }
