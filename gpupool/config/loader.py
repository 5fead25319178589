"""Validate a stack's configuration into a :class:`StackConfig`, every problem at once.

The same flat ``namespace:key`` mapping arrives from a stack file (values already parsed) and
from the Pulumi engine at ``pulumi up`` (object values as JSON strings), so both go through
:func:`parse_flat_config`. Every problem is reported at once, one line each, as
``file: key: expected …``: a user fixing a stack should not have to run the tool once per typo.

Finding and reading the file is :mod:`~gpupool.config.stackfile`; the wording of each problem
:mod:`~gpupool.config.messages`; checks between keys :mod:`~gpupool.config.cross_checks`; which
instance type a GPU resolves to :mod:`~gpupool.config.gpus`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpupool import jsonio
from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.config.cross_checks import cross_checks, gpu_and_arch, valid_fields
from gpupool.config.gpus import offering_problems, offerings_note, resolve_gpu, resolve_pool
from gpupool.config.messages import NAMESPACE, REGION_KEY, error_line, located, sort_key
from gpupool.config.models import StackConfig
from gpupool.config.remote_gpu import (
    RemoteGpuTierConfig,
    ResolvedTier,
    TierProblem,
    resolve_tier,
)
from gpupool.config.remoting_keys import ProfileProblem, load_budget_profile
from gpupool.config.stackfile import display_path, find_project, read_stack_file, stack_path
from gpupool.errors import InputError

__all__ = [  # the stack-loading API; resolve_gpu and friends live in gpupool.config.gpus
    "LoadedStack",
    "display_path",
    "load_stack",
    "offerings_note",
    "parse_flat_config",
    "resolve_gpu",
    "resolve_pool",
    "resolve_tiers",
    "stack_path",
]


@dataclass(frozen=True)
class LoadedStack:
    name: str
    path: Path
    config: StackConfig
    instance_types: dict[str, InstanceType]  # pool name → resolved smallest instance type
    flat: dict[str, Any]  # the namespaced config as Pulumi would pass it
    tiers: dict[str, ResolvedTier] = field(default_factory=dict)  # remoteGpu by name

    @property
    def shown_path(self) -> str:
        """The path as a user would type it: relative to the cwd when the file lies under it."""
        return display_path(self.path)



def parse_flat_config(
    flat: Mapping[str, Any], source: str, catalog: Catalog | None = None,
    base_dir: Path | None = None,
    *, check_offerings: bool = False,
) -> tuple[StackConfig, dict[str, InstanceType]]:
    """Validate namespaced config; raise :class:`InputError` listing every problem.

    ``base_dir``: where files the config names (remote-GPU budget profiles) are looked for,
    the project folder; the working directory when not given, as under ``pulumi up``.

    ``check_offerings`` also holds each pool's instance type against the region's recorded
    offerings (``gpupool validate``, ``plan``, ``check``). The Pulumi program leaves it off: at
    ``pulumi up`` EC2 itself is asked which zones offer the types, and a recorded list must
    never refuse what AWS has since started offering.
    """
    catalog = catalog or load_catalog()
    data: dict[str, Any] = {}
    names: dict[str, str] = {}  # model key → the config key the user wrote
    problems: list[tuple[tuple[int, int], str]] = []
    order: dict[str, int] = {}
    broken: set[str] = set()  # keys already reported (bad JSON): no "missing" line for them
    for pos, (key, value) in enumerate(flat.items()):
        key = str(key)
        ns, sep, name = key.partition(":")
        if not sep:  # Pulumi puts unqualified keys in the project's namespace
            ns, name = NAMESPACE, key
        if key == REGION_KEY:
            name = "region"
        elif ns != NAMESPACE or not name:
            close = difflib.get_close_matches(ns, [NAMESPACE], n=1, cutoff=0.7)
            if close and name:
                problems.append(
                    (
                        (pos, -1),
                        f"{source}: {key}: expected the {NAMESPACE} namespace "
                        f"(did you mean {NAMESPACE}:{name}?); other namespaces are ignored",
                    )
                )
            continue
        if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
            try:  # the Pulumi engine hands structured values over as JSON text
                value = jsonio.loads(value)
            except json.JSONDecodeError as e:
                problems.append(
                    (
                        (pos, -1),
                        f"{source}: {key}: expected valid JSON for a structured value "
                        f"(line {e.lineno} column {e.colno}: {e.msg})",
                    )
                )
                broken.add(name)
                continue
            except jsonio.JsonProblem as e:  # NaN, a duplicate key, a 5,000-digit number, …
                problems.append(((pos, -1), f"{source}: {key}: {e}"))
                broken.add(name)
                continue
        data[name] = value
        names[name] = key
        order[name] = pos
    try:
        config: StackConfig | None = StackConfig.model_validate(data)
    except ValidationError as e:
        config = None
        for err in e.errors():
            loc = tuple(err["loc"])
            if err["type"] == "cross_field" or (loc and loc[0] in broken):
                continue  # cross-key checks are recomputed below for every pool
            problems.append((sort_key(loc, order), error_line(source, loc, names, err)))
        bad = {tuple(err["loc"]) for err in e.errors() if err["type"] != "cross_field"}
        bad |= {(name,) for name in broken}  # given, but not readable: not "missing"
        for loc, expected in cross_checks(data, bad):
            problems.append(located(source, loc, names, order, expected))
    pools = data.get("pools")
    resolved: dict[str, InstanceType] = {}
    for i, pool in enumerate(pools if isinstance(pools, list) else []):
        gpu, arch = gpu_and_arch(pool, i, config)
        if gpu is None or arch is None:
            continue
        try:
            chosen = resolve_gpu(gpu, arch, catalog)
        except ValueError as e:
            loc = ("pools", i, "gpu")
            problems.append(located(source, loc, names, order, e))
            continue
        if isinstance(pool, dict) and isinstance(pool.get("name"), str):
            resolved[pool["name"].strip()] = chosen
    if config is not None:
        problems += _kubernetes_gpus(config, catalog, source, names, order)
        problems += _kubernetes_profiles(config, base_dir, source, names, order)
    for loc, expected in _tier_problems(data.get("remoteGpu"), config, catalog, base_dir):
        problems.append(located(source, loc, names, order, expected))
    if config is not None and check_offerings and not problems:
        for i, line in offering_problems(config, resolved, catalog):
            loc = ("pools", i, "gpu")
            problems.append(located(source, loc, names, order, line))
    if problems or config is None:
        problems.sort(key=lambda p: p[0])
        raise InputError([line for _, line in problems])
    return config, {p.name: resolved[p.name] for p in config.pools}


def _kubernetes_gpus(
    config: StackConfig, catalog: Catalog, source: str, names: Mapping[str, str],
    order: Mapping[str, int],
) -> list[tuple[tuple[int, int], str]]:
    """Karpenter pools launch EC2 instances: their GPU must resolve to a catalog type.

    On-premises pools name whatever GPU their nodes carry; it is shown, not looked up.
    """
    out = []
    for i, pool in enumerate(config.kubernetes):
        if pool.karpenter is None:
            continue
        try:
            resolve_gpu(pool.gpu, pool.arch, catalog)
        except ValueError as e:
            loc = ("kubernetes", i, "gpu")
            out.append(located(source, loc, names, order, e))
    return out


def _kubernetes_profiles(
    config: StackConfig, base_dir: Path | None, source: str, names: Mapping[str, str],
    order: Mapping[str, int],
) -> list[tuple[tuple[int, int], str]]:
    """A Kubernetes proxy's budget profile must be readable, as an AWS tier's must: the same
    file, the same one-line problem (the kit sizes nothing from it there, but a budget that
    names a broken profile is no budget)."""
    out = []
    for i, pool in enumerate(config.kubernetes):
        budget = pool.remote_gpu.budget if pool.remote_gpu is not None else None
        if budget is None or budget.profile is None:
            continue
        try:
            load_budget_profile(budget, base_dir)
        except ProfileProblem as e:
            loc = ("kubernetes", i, "remoteGpu", "budget", "profile")
            out.append(located(source, loc, names, order, e))
    return out


def resolve_tiers(
    config: StackConfig, catalog: Catalog | None = None, base_dir: Path | None = None
) -> dict[str, ResolvedTier]:
    """Every remote-GPU tier of a valid stack, sized (see :mod:`gpupool.config.remote_gpu`);
    relative profile paths start at ``base_dir`` (the project folder; default: the cwd)."""
    catalog = catalog or load_catalog()
    return {
        t.name: resolve_tier(t, resolve_gpu(t.gpu, t.arch, catalog), catalog,
                                        base_dir=base_dir)
        for t in config.remote_gpu
    }


def _tier_problems(
    raw: Any, config: StackConfig | None, catalog: Catalog, base_dir: Path | None
) -> list[tuple[tuple[Any, ...], str]]:
    """(location, expectation) for tiers whose GPU or budget cannot be met, checked on whatever
    is valid so that they show up together with every other error."""
    out: list[tuple[tuple[Any, ...], str]] = []
    for i, tier in enumerate(raw if isinstance(raw, list) else []):
        model: RemoteGpuTierConfig | None = None
        if config is not None:
            model = config.remote_gpu[i]
        elif isinstance(tier, dict):
            try:  # a tier valid on its own is sized even when another key is wrong
                model = RemoteGpuTierConfig.model_validate(tier)
            except ValidationError:
                model = None
        valid = valid_fields(RemoteGpuTierConfig, tier) if (
            model is None and isinstance(tier, dict)) else {}
        gpu = model.gpu if model is not None else valid.get("gpu")
        arch = model.arch if model is not None else valid.get("arch")
        if gpu is None or arch is None:
            continue
        try:
            smallest = resolve_gpu(gpu, arch, catalog)
        except ValueError as e:
            out.append((("remoteGpu", i, "gpu"), str(e)))
            continue
        if model is None:
            continue  # the budget is judged once the tier's own keys are valid
        try:
            resolve_tier(model, smallest, catalog, base_dir=base_dir)
        except TierProblem as e:
            out.append((("remoteGpu", i, *e.key.split(".")), e.expected))
    return out



def load_stack(stack: str, cwd: Path | None = None) -> LoadedStack:
    """Find, read and validate a stack (a name or a file), resolving each pool's instance type
    and checking that the region offers it."""
    path = stack_path(stack, cwd)
    flat = read_stack_file(path)
    project = find_project(path.resolve().parent)
    base_dir = project.parent if project is not None else path.parent
    config, resolved = parse_flat_config(flat, display_path(path, cwd), base_dir=base_dir,
                                         check_offerings=True)
    name = path.name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")
    return LoadedStack(name=name, path=path, config=config, instance_types=resolved, flat=flat,
                       tiers=resolve_tiers(config, base_dir=base_dir))
