"""The stack's resources, declared once for both ``pulumi up`` and the offline plan.

``define_stack`` takes configuration that is already validated (``gpupool.config``), so by the
time any resource is declared every pool has its resolved smallest instance type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws

from gpupool.catalog import InstanceType
from gpupool.config.loader import resolve_tiers
from gpupool.config.models import StackConfig
from gpupool.config.remote_gpu import ResolvedTier
from gpupool.envelope import StackEnvelope, stack_envelope
from infra.aws.gpu_pool import GpuPool, GpuPoolArgs
from infra.aws.monitoring import GpuMonitoring, GpuMonitoringArgs, PoolWatch
from infra.aws.network import PROTECTION_SERVICES, GpuNetwork, GpuNetworkArgs
from infra.aws.remote_gpu import DISCOVERY_SERVICES, RemoteGpuTier, RemoteGpuTierArgs
from infra.k8s.stack import define_kubernetes


def stack_tags(config: StackConfig) -> dict[str, str]:
    """Tags for shared resources (the network): the chargeback tags without a pool."""
    return {
        **config.tags,
        "team": config.team,
        "cost-center": config.cost_center,
        "environment": config.environment,
        "managed-by": "gpupool",
    }


def define_stack(
    config: StackConfig,
    instance_types: Mapping[str, InstanceType],
    tiers: Mapping[str, ResolvedTier] | None = None,
) -> dict[str, Any]:
    """Declare the network, every pool and every remote-GPU tier; return the stack outputs.

    ``tiers``: the loader's sizing of ``config.remote_gpu`` (resolved here, relative to the
    working directory as under ``pulumi up``, when not given).
    """
    stack = pulumi.get_stack()
    tiers = resolve_tiers(config) if tiers is None else tiers
    group_names: dict[str, pulumi.Output[str]] = {}
    remote: dict[str, RemoteGpuTier] = {}
    if config.pools or config.remote_gpu:  # a Kubernetes-only stack declares nothing on AWS
        group_names, remote = define_aws(stack, config, instance_types, tiers)
    define_kubernetes(config)  # the hybrid half: GPU pools on Kubernetes clusters
    outputs = stack_outputs(group_names, stack_envelope(config, instance_types, tiers=tiers))
    if remote:
        outputs["remoteGpu"] = {
            name: {"endpoint": t.endpoint, "port": t.port, "groupName": t.group_name,
                   "clientSecurityGroupId": t.client_security_group_id,
                   "instanceType": t.instance_type, **tiers[name].budget_tags()}
            for name, t in remote.items()
        }
    return outputs


def define_aws(
    stack: str,
    config: StackConfig,
    instance_types: Mapping[str, InstanceType],
    tiers: Mapping[str, ResolvedTier],
) -> tuple[dict[str, pulumi.Output[str]], dict[str, RemoteGpuTier]]:
    """The network, the GPU pools, the remote-GPU tiers and their monitoring; returns the
    pools' group names and the tiers."""
    partition = aws.get_partition()
    assert config.network is not None  # validated: AWS pools and tiers have a network
    network = GpuNetwork(
        f"{stack}-network",
        GpuNetworkArgs.from_config(
            config.network,
            region=config.region,
            instance_types=[t.instance_type for t in instance_types.values()]
            + [t.proxy.instance_type for t in tiers.values()],
            tags=stack_tags(config),
            service_prefix=partition.reverse_dns_prefix,
            extra_services=(*(DISCOVERY_SERVICES if tiers else ()),
                            *(PROTECTION_SERVICES if any(
                                p.scale_in_protection
                                for p in (*config.pools, *config.remote_gpu)) else ())),
        ),
    )
    attachment = network.attachment()
    pools = {
        pool.name: GpuPool(
            f"{stack}-{pool.name}",
            GpuPoolArgs(
                pool=pool,
                instance_type=instance_types[pool.name],
                network=attachment,
                region=config.region,
                tags=config.chargeback(pool),
                partition=partition.partition,
                image=config.images.for_arch(instance_types[pool.name].arch),
            ),
        )
        for pool in config.pools
    }
    group_names = {name: p.group_name for name, p in pools.items()}
    remote = {  # GPU API remoting: proxies for CPU-only clients
        tier.name: RemoteGpuTier(f"{stack}-{tier.name}", RemoteGpuTierArgs(
            tier=tier, resolved=tiers[tier.name], network=attachment, region=config.region,
            stack=stack, tags=config.chargeback(tier), partition=partition.partition,
            image=config.images.for_arch(tiers[tier.name].proxy.arch)))
        for tier in config.remote_gpu
    }
    GpuMonitoring(f"{stack}-monitoring", GpuMonitoringArgs(  # compute debt, live
        stack=stack, region=config.region, config=config.monitoring, tags=stack_tags(config),
        pools=[*(PoolWatch(pool.name, pools[pool.name].group_name,
                           instance_types[pool.name].gpu_count,
                           instance_types[pool.name].instance_type,
                           instance_types[pool.name].gpu_model, config.chargeback(pool))
                 for pool in config.pools),
               *(PoolWatch(tier.name, remote[tier.name].group_name,  # proxies own GPUs too
                           tiers[tier.name].proxy.gpu_count, tiers[tier.name].proxy.instance_type,
                           tiers[tier.name].proxy.gpu_model, config.chargeback(tier),
                           role="remote-GPU proxies")
                 for tier in config.remote_gpu)]))
    return group_names, remote


def stack_outputs(
    group_names: Mapping[str, pulumi.Output[str]], envelope: StackEnvelope
) -> dict[str, Any]:
    """Group names, GPU min/max and on-demand price per hour at min and max (None if unknown)."""
    doc = envelope.to_dict()
    total = doc["total"]
    return {
        "groupNames": dict(group_names),
        "gpuMin": total["gpusMin"],
        "gpuMax": total["gpusMax"],
        "pricePerHourMin": total["perHourMin"],
        "pricePerHourMax": total["perHourMax"],
        "pricePerMonthMin": total["perMonthMin"],
        "pricePerMonthMax": total["perMonthMax"],
        "priceIsUpperBound": doc["upperBound"],
        "priceRegion": doc["priceRegion"],  # on-demand prices of the stack's own region
        "priceExcludes": [e["item"] for e in doc["excludes"]],
        "pools": {
            p["pool"]: {
                "instanceType": p["instanceType"],
                "gpuMin": p["gpusMin"],
                "gpuMax": p["gpusMax"],
                "pricePerHourMin": p["perHourMin"],
                "pricePerHourMax": p["perHourMax"],
            }
            for p in doc["pools"]
        },
    }
