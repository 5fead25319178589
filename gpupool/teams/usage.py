"""What a team's stacks can grow to: GPUs at max per environment and on-demand cost at max.

Counted from the stack files themselves (validated, every pool resolved to its instance type
and priced by the envelope), so ``new-stack`` sees the team's pools in shared stacks too (a
pool with ``team: research`` in ``Pulumi.prod.yaml`` counts against research's prod quota).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.config import LoadedStack, load_stack
from gpupool.envelope import stack_envelope


@dataclass(frozen=True, slots=True)
class PoolUse:
    stack: str
    pool: str
    team: str
    environment: str
    gpu_model: str
    gpus_max: float
    per_month_max: float | None  # None: no price in the stack's region

    def label(self) -> str:
        return f"{self.stack}/{self.pool} {self.gpus_max:g} x {self.gpu_model}"


@dataclass
class TeamUse:
    """A team's pools; sums are ``None`` when any pool's price is unknown."""

    pools: list[PoolUse] = field(default_factory=list)

    def gpus(self, environment: str) -> float:
        return sum(p.gpus_max for p in self.pools if p.environment == environment)

    def per_month(self) -> float | None:
        total = 0.0
        for p in self.pools:
            if p.per_month_max is None:
                return None
            total += p.per_month_max
        return total

    def in_env(self, environment: str) -> list[PoolUse]:
        return [p for p in self.pools if p.environment == environment]


def pool_uses(loaded: LoadedStack) -> list[PoolUse]:
    """Every pool's GPUs and cost at max, per team: an AWS pool (and a remote-GPU tier's
    proxies) belongs to its team; a Kubernetes pool's GPUs are split by its teams' namespace
    quotas (what each may hold)."""
    env = stack_envelope(loaded.config, loaded.instance_types,
                         tiers=getattr(loaded, "tiers", None) or None)
    by_name = {p.name: p for p in loaded.config.pools}
    by_name.update({t.name: t for t in getattr(loaded.config, "remote_gpu", ())})
    clusters = {p.name: p for p in getattr(loaded.config, "kubernetes", ())}
    out = []
    for e in env.pools:
        if getattr(e, "platform", "aws") == "kubernetes":
            for t in clusters[e.pool].teams:
                per_gpu = e.price_per_gpu_hour
                out.append(PoolUse(
                    stack=loaded.name, pool=f"{e.pool}/{t.namespace}", team=t.name,
                    environment=loaded.config.environment, gpu_model=e.gpu_model,
                    gpus_max=t.gpu_quota,
                    per_month_max=None if per_gpu is None
                    else per_gpu * t.gpu_quota * HOURS_PER_MONTH))
            continue
        pool = by_name[e.pool]
        out.append(PoolUse(
            stack=loaded.name, pool=e.pool, team=pool.team or loaded.config.team,
            environment=loaded.config.environment, gpu_model=e.gpu_model,
            gpus_max=e.gpus_max,
            per_month_max=None if e.price_per_hour is None
            else e.price_per_hour * e.instances_max * HOURS_PER_MONTH,
        ))
    return out


def stack_files(stack_dir: Path, exclude: Iterable[Path] = ()) -> list[Path]:
    skip = {p.resolve() for p in exclude}
    return sorted(p for p in stack_dir.glob("Pulumi.*.yaml") if p.resolve() not in skip)


def team_usage(team: str, stack_dir: Path, exclude: Iterable[Path] = ()) -> TeamUse:
    """The team's pools in every stack file of ``stack_dir`` (a broken file is an InputError:
    usage that cannot be counted is never taken as zero)."""
    use = TeamUse()
    for path in stack_files(stack_dir, exclude):
        use.pools.extend(p for p in pool_uses(load_stack(str(path))) if p.team == team)
    return use
