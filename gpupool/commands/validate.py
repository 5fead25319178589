"""``gpupool validate STACK``: check a stack's configuration before any plan or deployment.

Prints what each pool resolves to (the smallest instance type for its GPU), because that choice
is the kit's, not the user's, and a reviewer should see it.
"""

from __future__ import annotations

import argparse
import sys

from gpupool.catalog import load_catalog
from gpupool.config import LoadedStack, load_stack
from gpupool.config.gpus import offerings_note
from gpupool.config.kubernetes import KubernetesPoolConfig, RemoteGpuConfig


def run(args: argparse.Namespace) -> int:
    loaded = load_stack(args.stack)
    pools = loaded.config.pools
    out = sys.stdout
    out.write(f"{loaded.shown_path}: valid: {what_it_holds(loaded)}\n")
    region = loaded.config.region
    regional = load_catalog(region=region)
    for p in pools:
        t = loaded.instance_types[p.name]
        row = regional.get(t.instance_type)
        price = (f"no recorded {region} price" if row is None or row.price_per_hour is None
                 else f"${row.price_per_hour:.3f}/h in {region}")
        out.write(
            f"  {p.name}: {p.gpu} on {p.arch} -> {t.instance_type} "
            f"({t.gpu_count:g} x {t.gpu_model}, {price}), {p.min_size}..{p.max_size} instances\n"
        )
    for k in loaded.config.kubernetes:
        where = f"context {k.cluster.context}" if k.cluster.context else "kubeconfig"
        capacity = "Karpenter" if k.karpenter else f"{k.gpu_hourly_cost:g} $/GPU-h"
        out.write(
            f"  {k.name}: Kubernetes ({where}, {k.cluster.version}), {k.gpu}, "
            f"{_count(len(k.teams), 'team')}, {_count(len(k.workloads), 'workload')}, "
            f"{capacity}\n"
        )
        out.write(f"  {k.name}: GPU pods select {_selector(k)}\n")
        if k.remote_gpu is not None:
            proxy, team = k.remote_gpu, k.team(k.remote_gpu.team)
            out.write(
                f"  {k.name}: remote GPU proxy gpu-proxy.{team.namespace_name}:{proxy.port}, "
                f"{proxy.min_replicas}..{proxy.max_replicas} replicas; {_k8s_budget(proxy)}\n")
    for name, t in loaded.tiers.items():
        tier = next(x for x in loaded.config.remote_gpu if x.name == name)
        out.write(
            f"  {name}: remote GPU tier, {tier.gpu} -> {t.proxy.instance_type} ({t.why}), "
            f"{tier.min_size}..{tier.max_size} proxies, {t.kind} {t.flow_gbps:g} Gbps per flow "
            f"({t.clients_text}); "
            f"budget {t.min_gbps:g} Gbps, {t.max_rtt_text} ({t.budget_source})\n"
        )
    if pools:
        out.write(f"  offerings: {offerings_note(loaded.config, regional)}\n")
        for arch in sorted({loaded.instance_types[p.name].arch for p in pools}):
            pin = loaded.config.images.for_arch(arch)
            out.write(f"  image {arch}: " + (
                f"pinned to {pin} (gpupool:images.{arch})\n" if pin else
                "the Deep Learning Base OSS NVIDIA Driver AMI current at first deployment, kept "
                f"after (pin gpupool:images.{arch} to move it)\n"))
    return 0


def _selector(k: KubernetesPoolConfig) -> str:
    """Which node labels the pool's GPU pods select, and who puts them on the nodes."""
    shown = ", ".join(f"{key}={v}" for key, v in sorted(k.gpu_node_selector.items()))
    if not shown:
        return "no node label (nodeSelector: {}), only the GPU resource and the taint"
    if k.karpenter is not None:
        return f"{shown} (set by the pool's Karpenter NodePool)"
    if k.node_label_prerequisite is None:
        return f"{shown} (set by the GPU Operator)"
    return f"{shown}, which the cluster's GPU nodes must carry (docs/kubernetes.md, prerequisites)"


def what_it_holds(loaded: LoadedStack) -> str:
    """The headline's count of exactly what the lines below list, one kind at a time."""
    config = loaded.config
    proxies = sum(1 for k in config.kubernetes if k.remote_gpu is not None)
    parts = [_count(len(config.pools), "pool"),
             _count(len(config.kubernetes), "Kubernetes pool"),
             _count(proxies, "Kubernetes remote-GPU proxy", "Kubernetes remote-GPU proxies"),
             _count(len(loaded.tiers), "remote-GPU tier")]
    return ", ".join(p for p in parts if not p.startswith("0 ")) or "nothing to run"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _k8s_budget(proxy: RemoteGpuConfig) -> str:
    b = proxy.budget
    if b is None:
        return "no budget (gpupool netcheck probe --profile measures one against the network)"
    if b.profile is not None:
        return (f"budget from profile {b.profile}, max overhead {b.epsilon:g} (carried, not "
                "sized: measure with gpupool netcheck probe --profile)")
    return f"budget {b.min_gbps:g} Gbps, {b.max_rtt_us:g} us (carried, not sized)"
