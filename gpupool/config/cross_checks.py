"""Checks between keys, on whatever values are valid on their own.

pydantic runs a model's cross-key validators only once every field of it is valid; a user fixing
a stack should see ``minSize > maxSize`` together with a typo elsewhere in the pool, so these
checks re-validate each field alone (:func:`valid_fields`) and run regardless.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from gpupool.config.base import duplicate_names
from gpupool.config.models import (
    GpuPoolConfig,
    NetworkConfig,
    StackConfig,
    network_problems,
    size_problems,
)
from gpupool.config.remote_gpu import RemoteGpuTierConfig, client_placement_problem


def gpu_and_arch(pool: Any, i: int, config: StackConfig | None) -> tuple[str | None, str | None]:
    """The pool's GPU and arch when both are valid, so a bad size never hides a bad GPU."""
    if config is not None:
        return config.pools[i].gpu, config.pools[i].arch
    if not isinstance(pool, dict):
        return None, None
    valid = valid_fields(GpuPoolConfig, pool)
    return valid.get("gpu"), valid.get("arch")


def cross_checks(data: dict[str, Any], bad: set[tuple[Any, ...]]) -> list[tuple[tuple, str]]:
    """Checks between keys, run on whatever values are individually valid.

    pydantic runs a model's own cross-key validators only when all of its fields are valid; these
    run regardless, so that min > max shows up together with a typo elsewhere in the pool.
    """
    out: list[tuple[tuple, str]] = []
    network = data.get("network")
    if isinstance(network, dict):
        v = valid_fields(NetworkConfig, network, bad, ("network",))
        if {"create_vpc", "vpc_id", "subnet_ids"} <= v.keys():
            for key, expected in network_problems(v["create_vpc"], v["vpc_id"], v["subnet_ids"]):
                out.append((("network", key), expected))
    pools = data.get("pools", None if ("pools",) in bad else [])  # Kubernetes-only: none
    if not isinstance(pools, list):
        return out
    if "network" not in data and (pools or data.get("remoteGpu")):
        out.append((("network",), "expected a network (createVpc, or vpcId and subnetIds) for "
                                  "the stack's AWS pools and tiers"))
    if not pools and not data.get("remoteGpu") and not data.get("kubernetes"):
        out.append((("pools",), "expected at least one pool (or a remoteGpu tier or kubernetes "
                                "pool), got none"))
    for i, pool in enumerate(pools):
        if not isinstance(pool, dict):
            continue
        v = valid_fields(GpuPoolConfig, pool, bad, ("pools", i))
        if {"min_size", "max_size", "desired_capacity", "on_demand_base"} <= v.keys():
            problems = size_problems(
                v["min_size"], v["max_size"], v["desired_capacity"], v["on_demand_base"]
            )
            out.extend((("pools", i, key), expected) for key, expected in problems)
    raw_names = [p.get("name") if isinstance(p, dict) else None for p in pools]
    # unnamed pools get a placeholder that can never collide with a real name
    names = [n.strip() if isinstance(n, str) else f"\0{i}" for i, n in enumerate(raw_names)]
    for i, name in duplicate_names(names):
        out.append((("pools", i, "name"), f"expected a unique name, {name!r} is used twice"))
    out.extend(_tier_cross_checks(data.get("remoteGpu"), names, bad, data.get("network")))
    return out


def _tier_cross_checks(
    tiers: Any, pool_names: list[str], bad: set[tuple[Any, ...]], network: Any
) -> list[tuple[tuple, str]]:
    """Sizes and names of remote-GPU tiers (the checks pools get, across pools and tiers), and
    a tier's subnet: one of the stack's own subnets, and only with an existing VPC."""
    out: list[tuple[tuple, str]] = []
    if not isinstance(tiers, list):
        return out
    net = valid_fields(NetworkConfig, network) if isinstance(network, dict) else {}
    for i, tier in enumerate(tiers):
        if not isinstance(tier, dict):
            continue
        v = valid_fields(RemoteGpuTierConfig, tier, bad, ("remoteGpu", i))
        subnet = v.get("subnet_id")
        if subnet is not None and net.get("create_vpc"):
            out.append((("remoteGpu", i, "subnetId"), "expected no subnetId when the stack "
                        "creates its VPC (the tier takes the first zone's subnet)"))
        elif subnet is not None and "subnet_ids" in net and subnet not in net["subnet_ids"]:
            out.append((("remoteGpu", i, "subnetId"), f"expected one of network.subnetIds "
                        f"({', '.join(net['subnet_ids'])}), got {subnet!r}"))
        if {"min_size", "max_size", "desired_capacity", "on_demand_base"} <= v.keys():
            problems = size_problems(
                v["min_size"], v["max_size"], v["desired_capacity"], v["on_demand_base"]
            )
            out.extend((("remoteGpu", i, key), expected) for key, expected in problems)
        if "clients_in_placement_group" in v:
            problem = client_placement_problem(tier.get("clients") is not None,
                                               v["clients_in_placement_group"])
            if problem:
                out.append((("remoteGpu", i, "clientsInPlacementGroup"), problem))
    raw = [t.get("name") if isinstance(t, dict) else None for t in tiers]
    names = [n.strip() if isinstance(n, str) else f"\1{i}" for i, n in enumerate(raw)]
    for i, name in duplicate_names(pool_names + names):
        if i >= len(pool_names):
            out.append((("remoteGpu", i - len(pool_names), "name"),
                        f"expected a name no pool or tier uses, {name!r} is"))
    return out


@cache
def _adapter(model: type[BaseModel], field: str) -> TypeAdapter[Any]:
    info = model.model_fields[field]
    if not info.metadata:
        return TypeAdapter(info.annotation)
    return TypeAdapter(Annotated[info.annotation, *info.metadata])


def valid_fields(
    model: type[BaseModel],
    raw: dict[str, Any],
    bad: set[tuple[Any, ...]] | None = None,
    prefix: tuple[Any, ...] = (),
) -> dict[str, Any]:
    """Field name → validated value for each field of ``raw`` that is valid on its own.

    Absent fields take their defaults; fields named in ``bad`` (error locations) are left out.
    """
    out: dict[str, Any] = {}
    bad_keys = {
        loc[len(prefix)]
        for loc in (bad or set())
        if loc[: len(prefix)] == prefix and len(loc) > len(prefix)
    }
    for name, info in model.model_fields.items():
        alias = info.alias or name
        if alias in bad_keys:
            continue
        if alias not in raw and name not in raw:
            if not info.is_required():
                out[name] = info.get_default(call_default_factory=True)
            continue
        value = raw[alias] if alias in raw else raw[name]
        if isinstance(value, str):
            value = value.strip()
        try:
            out[name] = _adapter(model, name).validate_python(value)
        except ValidationError:
            continue
    return out


