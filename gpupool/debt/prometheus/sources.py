"""Which Prometheus to read, and what the stack config says about the pools in it.

Sources come from ``--prometheus [POOL=]URL`` (repeatable) and from the Kubernetes pools of
``--stack`` (each pool's ``monitoring.prometheusAddress``; ``--prometheus POOL=URL`` overrides
it, e.g. with an address reachable from where the report runs). One URL is read once, whatever
the number of pools behind it. A GPU node belongs to the pool its ``gpupool.io/pool`` label
names (the kit labels its Karpenter nodes so), else to its source's pool: the one configured
pool that uses the URL, the ``POOL=`` given, or the URL's host.

A configured pool brings what Prometheus cannot know: its owner team and cost centre (the
stack's), ``gpuHourlyCost`` for on-premises nodes, ``timeSlicingReplicas``, the GPU model and
how many GPUs it has, and its teams' namespaces (a fallback when the namespaces carry no team
label in ``kube_namespace_labels``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from gpupool.debt.prometheus.client import check_url
from gpupool.errors import InputError

POOL_LABEL = "gpupool_io_pool"  # kube-state-metrics' name for the gpupool.io/pool label


@dataclass(frozen=True)
class PoolHints:
    """What the stack config says about one Kubernetes pool (all optional)."""

    name: str
    team: str | None = None
    cost_center: str | None = None
    gpu_hourly_cost: float | None = None
    time_slicing_replicas: int | None = None
    gpu: str | None = None
    gpus: int | None = None
    eks: bool = False
    namespaces: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # ns → team, cc


@dataclass
class Source:
    url: str
    pool: str  # the pool of nodes without a gpupool.io/pool label
    hints: dict[str, PoolHints] = field(default_factory=dict)  # configured pools by name

    def hint(self, pool: str) -> PoolHints:
        return self.hints.get(pool) or PoolHints(pool)


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def hints_from_stack(config: Any) -> list[tuple[PoolHints, str]]:
    """(hints, prometheus address) for each Kubernetes pool of a validated StackConfig."""
    out = []
    for k in config.kubernetes:
        namespaces = {t.namespace_name: (t.name, t.cost_center or config.cost_center)
                      for t in k.teams}
        out.append((PoolHints(
            name=k.name, team=config.team, cost_center=config.cost_center,
            gpu_hourly_cost=k.gpu_hourly_cost, time_slicing_replicas=k.time_slicing_replicas,
            gpu=k.gpu, gpus=k.gpus, eks=k.cluster.distribution == "eks",
            namespaces=namespaces), k.monitoring.prometheus_address))
    return out


def parse_flag(text: str) -> tuple[str | None, str]:
    """``URL`` or ``POOL=URL``."""
    name, sep, url = text.partition("=")
    if sep and "://" not in name:
        if not name:
            raise InputError(f"--prometheus {text}: expected URL or POOL=URL")
        return name, check_url(url)
    return None, check_url(text)


def make_sources(flags: Sequence[str], stack_pools: Sequence[tuple[PoolHints, str]] = ()
                 ) -> list[Source]:
    """The sources to read, one per URL (see the module docstring)."""
    given = [parse_flag(f) for f in flags]
    overrides = {name: url for name, url in given if name is not None}
    configured = {h.name for h, _ in stack_pools}
    unknown = sorted(set(overrides) - configured) if stack_pools else []
    if unknown:
        raise InputError(f"--prometheus {unknown[0]}=…: expected one of the stack's Kubernetes "
                         f"pools ({', '.join(sorted(configured))}), or a URL without a name")
    by_url: dict[str, Source] = {}
    for hints, address in stack_pools:
        url = overrides.get(hints.name) or check_url(address, f"{hints.name}: "
                                                     "monitoring.prometheusAddress")
        source = by_url.setdefault(url, Source(url, hints.name))
        source.hints[hints.name] = hints
        if len(source.hints) > 1:  # several pools behind one URL: unlabelled nodes are the URL's
            source.pool = _host(url)
    for name, url in given:
        if name is not None and name in configured:
            continue
        source = by_url.setdefault(url, Source(url, name or _host(url)))
        if name is not None:
            source.pool = name
    return list(by_url.values())
