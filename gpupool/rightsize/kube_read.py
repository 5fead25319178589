"""Read the stacks' Kubernetes pools from their Prometheus, as ``gpupool debt --stack`` does.

Each stack's pools are read from their own sources (``monitoring.prometheusAddress``, or a
``--prometheus POOL=URL`` naming one of them), one stack at a time, so that two stacks may each
have a pool of the same name (a dev and a prod cluster); which stack a pool is then changed in
is decided by the labels the kit puts on its namespaces (:mod:`gpupool.rightsize.kubernetes`).
A stack whose Prometheus cannot be read leaves its pools alone, each saying why; the other
stacks' pools and the AWS pools are still proposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpupool.debt.model import PoolFigures
from gpupool.debt.window import Window
from gpupool.errors import InputError


@dataclass
class KubeRead:
    figures: list[PoolFigures] = field(default_factory=list)
    queries: int = 0
    findings: list[dict[str, str]] = field(default_factory=list)
    unread: list[tuple[str, str]] = field(default_factory=list)  # (pool, why): left alone


def read_kubernetes(flags: Sequence[str], configs: Sequence[Any], window: Window,
                    catalog: Any, auth: Any, deadline: Any, resolution: int) -> KubeRead:
    """Every stack's Kubernetes pools; ``flags`` are ``--prometheus POOL=URL`` overrides."""
    from gpupool.debt.prometheus.read import check_resolution, read_sources
    from gpupool.debt.prometheus.sources import hints_from_stack, make_sources, parse_flag

    check_resolution(resolution, window)
    named: list[tuple[str, str]] = []
    for text in flags:
        name, _url = parse_flag(text)
        if name is None:
            raise InputError(f"--prometheus {text}: expected POOL=URL naming one of the "
                             "stacks' Kubernetes pools (rightsize changes only those)")
        named.append((name, text))
    pools = {k.name for c in configs for k in c.kubernetes}
    unknown = sorted({n for n, _ in named} - pools)
    if unknown:
        raise InputError(f"--prometheus {unknown[0]}=…: expected one of the stacks' Kubernetes "
                         f"pools ({', '.join(sorted(pools)) or 'none'})")
    out = KubeRead()
    for config in configs:
        hints = hints_from_stack(config)
        if not hints:
            continue
        mine = {h.name for h, _ in hints}
        sources = make_sources([t for n, t in named if n in mine], hints)
        try:
            reading = read_sources(sources, window, catalog, auth, deadline, resolution)
        except InputError as e:  # unreachable, refused, not Prometheus: nothing is changed
            out.unread += [(name, f"not read: {e}") for name in sorted(mine)]
            continue
        out.figures.extend(reading.pools)
        out.queries += sum(int(s.get("queries", 0)) for s in reading.sources)
        out.findings.extend(reading.findings)
    return out
