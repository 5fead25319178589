"""``gpupool new-stack TEAM ENV --template NAME [--max-gpus N] [--gpu MODEL] [sizing flags]``.

Writes ``stacks/Pulumi.<team>-<env>.yaml``: the template's pool on the cheapest GPU the team may
use that holds the model on one GPU (sized by the estimator), validated like any stack, within
the team's GPU quota for the environment and its monthly budget (``stacks/teams.yaml``),
counting the team's pools in every other stack file. Anything over quota or budget, a GPU the
team may not use, or a model no allowed GPU holds is refused: exit 2, one line, nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gpupool import __version__
from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.config import LoadedStack, StackConfig, parse_flat_config
from gpupool.config.gpus import resolve_gpu
from gpupool.config.loader import resolve_tiers
from gpupool.config.remote_gpu import ResolvedTier
from gpupool.config.stackfile import display_path, find_project, stack_config_dir
from gpupool.errors import InputError
from gpupool.record import replace
from gpupool.teams import Team, load_teams
from gpupool.teams.render import Choice, read_back, render_config, stack_yaml
from gpupool.teams.template import Template, load_template
from gpupool.teams.usage import PoolUse, TeamUse, pool_uses, team_usage

_SIZING_DEFAULTS = {"dtype": "fp16", "mode": "inference", "batch": 1, "seq_len": None,
                    "optimizer": "adamw", "headroom": 0.10, "overhead_gib": 0.5,
                    "arch": "x86_64"}


def run(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    project_dir, stack_dir = _project_dirs(cwd)
    teams_path = Path(args.teams) if args.teams else stack_dir / "teams.yaml"
    if not args.teams and not teams_path.is_file():
        raise InputError(f"{display_path(teams_path)}: no teams file; create it (owners, "
                         "costCenter, allowedGpus, gpuQuota, monthlyBudgetUsd per team: see "
                         "docs/self-service.md) or give --teams FILE")
    teams = load_teams(teams_path, display_path(teams_path))
    team = teams.require(args.team)
    template_name, template = load_template(args.template)
    budget = _budget(args, template, template_name, project_dir)
    stack_name = f"{args.team}-{args.env}"
    to_stdout = args.output == "-"
    output = stack_dir / f"Pulumi.{stack_name}.yaml" if not args.output or to_stdout else (
        Path(args.output))
    shown = display_path(output)
    if not to_stdout and output.is_file() and not args.force:  # devices and FIFOs: written to
        raise InputError(f"{shown}: already exists; give --force to replace it (its pools are "
                         "then left out of the team's usage)")

    catalog = load_catalog()
    others = team_usage(args.team, stack_dir, exclude=[output])
    if args.max_gpus is None:  # the template's size, capped by what the quota leaves
        left = int(team.quota(args.env) - others.gpus(args.env))
        args.max_gpus = max(1, min(template.max_gpus, left))
    choice, sizing = choose(args, teams.path, team, template, catalog)
    flat = render_config(args.team, team, args.env, args.region, template_name, template,
                         choice, budget)
    config, resolved = parse_flat_config(flat, shown, catalog, base_dir=project_dir)
    tiers = resolve_tiers(config, catalog, base_dir=project_dir)
    new = pool_uses(LoadedStack(stack_name, output, config, resolved, flat, tiers))
    if tiers:  # the proxies' size follows the budget: what the stack really runs on
        choice = replace(choice, instance_type=next(iter(tiers.values())).proxy)
    check_quota(teams.path, args.team, team, args.env, new, others)

    header = _header(args, stack_name, template_name, template, sizing, choice, new, team,
                     teams.path, list(tiers.values()))
    text = stack_yaml(flat, header)
    read_back(text, flat, shown)  # the bytes written are the config validated, nothing else
    from gpupool.output import write_output

    if write_output("-" if to_stdout else output, text):
        return 0  # the stack went to standard output: no status line mixed into it
    total = _month(others, new)
    ref = stack_name if output == stack_dir / f"Pulumi.{stack_name}.yaml" else shown
    sys.stdout.write(
        f"wrote {shown}: {_what(config)}, up to {_gpus(new)} on "
        f"{choice.instance_type.instance_type}, {_usd(_sum_month(new))}/month at max; "
        f"{args.team} in {args.env}: {others.gpus(args.env) + sum(p.gpus_max for p in new):g} "
        f"of {team.quota(args.env)} GPUs, {_usd(total)} of "
        f"{_usd(team.monthly_budget_usd)}/month\n"
        f"next: gpupool validate {ref} && gpupool check --stack {ref} --teams "
        f"{teams.path}, then open a pull request (docs/self-service.md)\n")
    return 0


def _project_dirs(cwd: Path) -> tuple[Path, Path]:
    """The project's folder (where stack files' relative paths start) and its stacks folder."""
    project = find_project(cwd)
    if project is None:
        raise InputError(f"{cwd}: expected a Pulumi project (Pulumi.yaml here or above) whose "
                         "stack files new-stack writes")
    return project.parent, project.parent / stack_config_dir(project)


def _what(config: StackConfig) -> str:
    if config.remote_gpu:
        return f"remote-GPU tier {config.remote_gpu[0].name!r}"
    return f"pool {config.pools[0].name!r}"


def _budget(args: argparse.Namespace, template: Template, name: str,
            project_dir: Path) -> dict[str, Any] | None:
    """A remote-GPU tier's network budget: the application's profile (``--profile``, written
    relative to the project as stack files name it), else the template's own."""
    profile = getattr(args, "profile", None)
    overhead = getattr(args, "max_overhead", None)
    if template.remote_gpu is None:
        if profile or overhead is not None:
            flag = "--profile" if profile else "--max-overhead"
            raise InputError(f"{flag}: only for a template with a remote-GPU tier "
                             f"(remote-gpu-client); template {name} has none")
        return None
    if not profile:
        if template.remote_gpu.budget is not None and overhead is None:
            return None  # the template's own budget
        raise InputError(f"template {name}: give --profile FILE, the application's remoting "
                         "profile (the format `gpupool remoting` reads, docs/remoting.md), so "
                         "the proxies are sized for the network it tolerates")
    path = Path(profile)
    if not path.is_file():
        raise InputError(f"--profile {profile}: expected a remoting profile file "
                         "(docs/remoting.md), but there is no such file")
    full = path.resolve()
    try:
        shown = str(full.relative_to(project_dir.resolve()))
    except ValueError:
        shown = str(full)  # outside the project: the stack names it in full
    out: dict[str, Any] = {"profile": shown}
    if overhead is not None:
        out["maxOverhead"] = overhead
    return out


# --------------------------------------------------------------------------- sizing


def sizing_args(args: argparse.Namespace, template: Template) -> argparse.Namespace:
    """The sizing flags: the command line, then the template's sizing, then the defaults."""
    merged = dict(vars(args))
    tsizing = template.sizing
    from_template = {"dtype": tsizing.dtype, "mode": tsizing.mode, "batch": tsizing.batch,
                     "seq_len": tsizing.seq_len, "optimizer": tsizing.optimizer}
    for key, default in _SIZING_DEFAULTS.items():
        if merged.get(key) is None:
            merged[key] = from_template.get(key, default)
            if merged[key] is None:
                merged[key] = default
    if not merged.get("gradient_checkpointing"):
        merged["gradient_checkpointing"] = tsizing.gradient_checkpointing
    return argparse.Namespace(**merged)


def choose(args: argparse.Namespace, teams_path: str, team: Team, template: Template,
           catalog: Catalog) -> tuple[Choice, list[str]]:
    """The instance type (smallest size of the chosen GPU) and the sizing lines for the header."""
    sized = sizing_args(args, template)
    arch = sized.arch
    max_gpus = args.max_gpus if args.max_gpus is not None else template.max_gpus
    if max_gpus < 1 or max_gpus > 100_000:
        raise InputError(f"--max-gpus: expected 1 to 100000, got {max_gpus}")
    where = f"{teams_path}: teams.{args.team}.allowedGpus"
    if args.gpu and not team.allows(args.gpu):
        raise InputError(f"--gpu {args.gpu}: {args.team} may not use it ({where}: "
                         f"{', '.join(team.allowed_gpus)}); its owners can allow it there")
    if not (sized.model_config or sized.params):
        # a template with a default GPU (a notebook) needs no model; the others are sized
        gpu = args.gpu or (_cheapest_allowed(team, template, arch, catalog) if template.gpu
                           else None)
        if gpu is None:
            raise InputError("give the model (--model-config FILE or --params N) so the stack "
                             f"can be sized, or --gpu MODEL (one of {where}: "
                             f"{', '.join(team.allowed_gpus)})")
        chosen = _resolve(gpu, arch, catalog)
        return Choice(chosen, max_gpus), [f"Sizing: no model given: {chosen.gpu_model} "
                                          f"({chosen.instance_type}), "
                                          + ("as asked (--gpu)" if args.gpu else
                                             f"the cheapest GPU {args.team} may use")]
    from gpupool.commands.estimate import sizing_inputs
    from gpupool.sizing import estimate, recommend

    shape, workload = sizing_inputs(sized)
    est = estimate(shape, workload)
    allowed = [args.gpu] if args.gpu else team.allowed_gpus
    rec = recommend(est, catalog, arch=arch, allowed=allowed, single_gpu=True)
    need = f"{est.total_gib:.2f} GiB"
    what = f"{shape.name} ({workload.mode}, {workload.dtype}, batch {workload.batch}, " \
           f"sequence {workload.seq_len})"
    if rec.best is None:
        raise InputError(_no_fit(args, est, catalog, arch, what, need, where, team))
    t = rec.best.instance_type
    lines = [
        f"Sizing: {what}: {need} per GPU "
        f"(weights {est.breakdown_gib['weights']:.2f} GiB; see gpupool estimate)",
        f"  -> {t.gpu_model} on {t.instance_type} ({t.gpu_memory_gib:.2f} GiB), the cheapest "
        + ("GPU asked for (--gpu)" if args.gpu else f"GPU {args.team} may use that holds it"),
    ]
    return Choice(t, max_gpus), lines


def _no_fit(args: argparse.Namespace, est: object, catalog: Catalog, arch: str, what: str,
            need: str, where: str, team: Team) -> str:
    from gpupool.sizing import recommend

    anywhere = recommend(est, catalog, arch=arch, single_gpu=True).best  # type: ignore[arg-type]
    if args.gpu:
        return f"--gpu {args.gpu}: one GPU does not hold {what}, which needs {need}"
    if anywhere is not None:
        t = anywhere.instance_type
        return (f"{where}: {', '.join(team.allowed_gpus)}; none holds {what} on one GPU "
                f"({need}); the cheapest that does is {t.gpu_model} ({t.instance_type}): its "
                "owners can allow it there, or use a smaller --dtype, --batch or --seq-len")
    sharded = recommend(est, catalog, arch=arch).best  # type: ignore[arg-type]
    hint = (f" (it takes {sharded.gpus} x {sharded.instance_type.gpu_model} sharded: "
            f"{sharded.instance_type.instance_type})") if sharded else ""
    return (f"{what} needs {need}, more than any one-GPU instance holds{hint}; pools run one "
            "GPU per instance: use a smaller --dtype or --batch, --gradient-checkpointing, or "
            "ask the platform team for a multi-GPU design")


def _cheapest_allowed(team: Team, template: Template, arch: str,
                      catalog: Catalog) -> str | None:
    preferred = [template.gpu] if template.gpu and team.allows(template.gpu) else []
    for gpu in preferred:  # the template's choice, when the team may use it on this arch
        try:
            _resolve(gpu, arch, catalog)
            return gpu
        except InputError:
            pass
    options = []
    for gpu in team.allowed_gpus:
        try:
            t = _resolve(gpu, arch, catalog)
        except InputError:
            continue
        if t.price_per_hour is not None:
            options.append((t.price_per_hour, t.instance_type, gpu))
    return min(options)[2] if options else None


def _resolve(gpu: str, arch: str, catalog: Catalog) -> InstanceType:
    arches = ("x86_64", "arm64") if arch == "any" else (arch,)
    error = ""
    for a in arches:
        try:
            return resolve_gpu(gpu, a, catalog)
        except ValueError as e:
            error = str(e)
    raise InputError(f"--gpu {gpu}: {error}")


# --------------------------------------------------------------------------- quota


def check_quota(teams_path: str, name: str, team: Team, environment: str,
                new: list[PoolUse], others: TeamUse) -> None:
    """Refuse (InputError, one line) a stack that takes the team over quota or budget."""
    key = f"{teams_path}: teams.{name}"
    quota = team.quota(environment)
    asked = sum(p.gpus_max for p in new)
    held = others.gpus(environment)
    if held + asked > quota:
        holders = ", ".join(p.label() for p in others.in_env(environment)) or "none"
        raise InputError(
            f"{key}.gpuQuota.{environment}: {name} may hold {quota} GPUs in {environment}; "
            f"this stack asks for {asked:g} at max and its other stacks hold {held:g} "
            f"({holders}): refused; lower --max-gpus or ask the team's owners "
            f"({', '.join(team.owners)}) to raise the quota")
    total = _month(others, new)
    if total is None:
        unpriced = [p.label() for p in [*others.pools, *new] if p.per_month_max is None]
        raise InputError(
            f"{key}.monthlyBudgetUsd: cannot verify the budget: no on-demand price for "
            f"{', '.join(unpriced)} (region not in the catalog's price list): refused")
    if total > team.monthly_budget_usd:
        raise InputError(
            f"{key}.monthlyBudgetUsd: {name} may spend {_usd(team.monthly_budget_usd)}/month; "
            f"its stacks at max would cost {_usd(total)}/month on-demand (this one "
            f"{_usd(_sum_month(new))}): refused; lower --max-gpus or ask the team's owners "
            f"({', '.join(team.owners)}) to raise the budget")


def _sum_month(pools: list[PoolUse]) -> float | None:
    return TeamUse(list(pools)).per_month()


def _month(others: TeamUse, new: list[PoolUse]) -> float | None:
    return replace(others, pools=[*others.pools, *new]).per_month()


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def _gpus(pools: list[PoolUse]) -> str:
    return ", ".join(f"{p.gpus_max:g} x {p.gpu_model}" for p in pools)


def _header(args: argparse.Namespace, stack_name: str, template_name: str, template: Template,
            sizing: list[str], choice: Choice, new: list[PoolUse], team: Team,
            teams_path: str, tiers: list[ResolvedTier]) -> list[str]:
    t = choice.instance_type
    month = _sum_month(new)
    per_hour = None if month is None else month / 730
    proxies = [
        f"Proxies: {r.proxy.instance_type}"
        + (" (the smallest size)" if r.proxy.instance_type == r.smallest.instance_type else
           f" (not {r.smallest.instance_type}: one flow needs {r.min_gbps:g} Gbps)")
        + f"; budget {r.min_gbps:g} Gbps, {r.max_rtt_us:g} us round trip, from {r.budget_source}."
        for r in tiers]
    return [
        f"Stack {stack_name}: written by `gpupool new-stack {args.team} {args.env} "
        f"--template {template_name}` (gpupool {__version__}).",
        f"Template {template_name}: {template.description}.",
        *sizing,
        *proxies,
        f"Capacity: up to {_gpus(new)} ({choice.max_instances} x {t.instance_type}), "
        f"{_usd(per_hour)}/h, {_usd(month)}/month on-demand at max.",
        f"Team {args.team} ({teams_path}): quota {team.quota(args.env)} GPUs in {args.env}, "
        f"budget {_usd(team.monthly_budget_usd)}/month over all its stacks; "
        f"owners {', '.join(team.owners)}.",
        "Edit pool keys by hand if you must: gpupool check holds the stack to the same quota.",
    ]
