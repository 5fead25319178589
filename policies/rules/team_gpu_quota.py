# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""team-gpu-quota: a team's GPUs at max size stay within its quota, and its cost within budget."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gpupool.catalog.model import HOURS_PER_MONTH
from gpupool.errors import InputError
from gpupool.record import Record
from policies.facts import Capacity, gpu_capacity, tag_value
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, count, prop, usd
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    lazy_examples,
)
from policies.rules.params import param

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # the teams models import the stack config's; read only when teams are given
    from typing import Any

    from gpupool.teams import Team, Teams

KINDS = frozenset({ResourceKind.INSTANCE, ResourceKind.AUTOSCALING_GROUP,
                   ResourceKind.EKS_NODE_GROUP})
INLINE = "policy config"


class Params(RuleParams):
    teams_file: str | None = param(
        default=None,
        description=(
            "Path of the teams file (stacks/teams.yaml: owners, costCenter, allowedGpus, "
            "gpuQuota per environment, monthlyBudgetUsd). Relative to the working directory "
            "for gpupool check (which also takes --teams FILE), to the policy pack's directory "
            "for the CrossGuard pack; ~ and $VARS are expanded. Without teamsFile or teams the "
            "policy judges nothing."),
    )
    teams: dict[str, Any] | None = param(
        default=None,
        description="The teams inline, in the shape of the teams file's `teams` mapping.",
    )
    team_tag: str = param(default="team", min_length=1,
                          description="Tag whose value names the team (teams file key).")
    environment_tag: str = param(default="environment", min_length=1,
                                 description="Tag whose value names the environment.")

    def __post_init__(self) -> None:
        if self.teams_file and self.teams is not None:
            raise ValueError("expected teamsFile or teams, not both")
        try:
            load(self)
        except InputError as e:
            raise ValueError("; ".join(e.problems)) from None


def load(params: Params) -> Teams | None:
    """The teams the params name (a file, cached by modification time, or inline).

    :mod:`gpupool.teams` is imported here, not at module level: it brings in the stack
    config's pydantic models (a sixth of a check's start-up), which a plan without teams
    never needs.
    """
    if params.teams_file:
        from gpupool.teams import load_teams
        from gpupool.teams.loader import env_path

        path = env_path(params.teams_file)
        assert path is not None
        return load_teams(path, params.teams_file)
    if params.teams is not None:
        from gpupool.teams import parse_teams

        return parse_teams({"teams": params.teams}, INLINE)
    return None


class _Share(Record):
    """What one team holds (in one environment, or in all for the budget)."""

    __slots__ = ("held", "unknown")

    held: list[tuple[ResourceChange, Capacity]]
    unknown: list[str]

    def __init__(
        self,
        held: list[tuple[ResourceChange, Capacity]] | None = None,
        unknown: list[str] | None = None,
    ) -> None:
        self.held = [] if held is None else held
        self.unknown = [] if unknown is None else unknown

    @property
    def gpus(self) -> float:
        return sum(c.gpus for _, c in self.held)

    def per_month(self) -> tuple[float, list[str]]:
        total, unpriced = 0.0, []
        for change, cap in self.held:
            if cap.per_hour is None:
                t = cap.instance_type
                unpriced.append(f"{change.name} (no recorded price for "
                                f"{t.instance_type if t else 'its type'})")
            else:
                total += cap.per_hour * HOURS_PER_MONTH
        return total, unpriced


class TeamGpuQuota(Rule):
    meta = RuleMeta(
        id="team-gpu-quota",
        title="A team's GPUs at max size stay within its quota and budget",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Self-service GPU stacks are approved by their teams; the platform team approves "
            "capacity. The teams file (owned by the platform team) gives each team a quota of "
            "GPUs at max size per environment and a monthly budget; a plan that lets a team's "
            "GPU instances, groups or node groups (found by their chargeback tags) grow past "
            "either is denied with the figures, so raising capacity is a reviewed change to the "
            "teams file, not a side effect of a stack edit; a GPU model outside the team's "
            "allowedGpus is denied too. GPUs and cost are counted at max "
            "size over every resource of one plan (one stack with --stack; the gpupool action "
            "also joins every stack's plan, since a quota spans stacks), on-demand at the "
            "catalog's prices; a team the file does not know has no quota."
        ),
        scope="stack",
        kinds=KINDS,
        params=Params,
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Pool within its team's quota and budget",
            allowed=True,
            params={"teams": {"research": {
                "owners": ["@acme/research"], "costCenter": "cc-1", "allowedGpus": ["T4"],
                "gpuQuota": {"prod": 8}, "monthlyBudgetUsd": 5000}}},
            resources=[{"type": "aws:autoscaling/group:Group", "name": "inference",
                        "new": {"maxSize": 8, "mixedInstancesPolicy": {"launchTemplate": {
                            "overrides": [{"instanceType": "g4dn.xlarge"}]}},
                            "tags": [{"key": "team", "value": "research",
                                      "propagateAtLaunch": True},
                                     {"key": "environment", "value": "prod",
                                      "propagateAtLaunch": True}]}}],
        ),
        Example(
            title="Two pools that together exceed the team's GPU quota",
            allowed=False,
            params={"teams": {"research": {
                "owners": ["@acme/research"], "costCenter": "cc-1",
                "allowedGpus": ["T4", "A10G"], "gpuQuota": {"prod": 16},
                "monthlyBudgetUsd": 50000}}},
            resources=[
                {"type": "aws:autoscaling/group:Group", "name": "training",
                 "new": {"maxSize": 16, "mixedInstancesPolicy": {"launchTemplate": {
                     "overrides": [{"instanceType": "g5.xlarge"}]}},
                     "tags": [{"key": "team", "value": "research", "propagateAtLaunch": True},
                              {"key": "environment", "value": "prod",
                               "propagateAtLaunch": True}]}},
                {"type": "aws:ec2/instance:Instance", "name": "notebook",
                 "new": {"instanceType": "g4dn.xlarge",
                         "tags": {"team": "research", "environment": "prod"}}},
            ],
            message_contains=["team research in prod: 17 GPUs at max exceeds its quota of 16",
                              "training 16 × A10G (maxSize 16)", "notebook 1 × T4"],
        ),
        Example(
            title="Terraform group over the team's monthly budget",
            allowed=False,
            params={"teams": {"vision": {
                "owners": ["@acme/vision"], "costCenter": "cc-2", "allowedGpus": ["L4"],
                "gpuQuota": {"dev": 10}, "monthlyBudgetUsd": 1000}}},
            resources=[{"type": "aws_autoscaling_group", "name": "gpu",
                        "address": "aws_autoscaling_group.gpu",
                        "new": {"max_size": 4, "mixed_instances_policy": [{"launch_template": [{
                            "override": [{"instance_type": "g6.xlarge"}]}]}],
                            "tag": [{"key": "team", "value": "vision",
                                     "propagate_at_launch": True},
                                    {"key": "environment", "value": "dev",
                                     "propagate_at_launch": True}]}}],
            message_contains=["team vision: $2,350.02/month at max exceeds its monthly budget "
                              "of $1,000.00", "gpu 4 × L4 (max_size 4)"],
        ),
        Example(
            title="A GPU model the team may not use",
            allowed=False,
            params={"teams": {"research": {
                "owners": ["@acme/research"], "costCenter": "cc-1", "allowedGpus": ["T4"],
                "gpuQuota": {"dev": 4}, "monthlyBudgetUsd": 5000}}},
            resources=[{"type": "aws:ec2/instance:Instance", "name": "box",
                        "new": {"instanceType": "p5.4xlarge",
                                "tags": {"team": "research", "environment": "dev"}}}],
            message_contains=["team research may not use H100",
                              "teams.research.allowedGpus: T4"],
        ),
        Example(
            title="A team the teams file does not know",
            allowed=False,
            params={"teams": {"research": {
                "owners": ["@acme/research"], "costCenter": "cc-1", "allowedGpus": ["T4"],
                "gpuQuota": {"dev": 4}, "monthlyBudgetUsd": 5000}}},
            resources=[{"type": "aws:ec2/instance:Instance", "name": "box",
                        "new": {"instanceType": "g4dn.xlarge",
                                "tags": {"team": "growth", "environment": "dev"}}}],
            message_contains=["team growth is not in the teams file", "it has no GPU quota"],
        ),
        Example(
            title="Max size unknown until apply",
            allowed=False,
            unknown=True,
            params={"teams": {"research": {
                "owners": ["@acme/research"], "costCenter": "cc-1", "allowedGpus": ["T4"],
                "gpuQuota": {"dev": 4}, "monthlyBudgetUsd": 5000}}},
            resources=[{"type": "aws:autoscaling/group:Group", "name": "pool",
                        "new": {"maxSize": "(known after apply)",
                                "mixedInstancesPolicy": {"launchTemplate": {
                                    "overrides": [{"instanceType": "g4dn.xlarge"}]}},
                                "tags": [{"key": "team", "value": "research",
                                          "propagateAtLaunch": True},
                                         {"key": "environment", "value": "dev",
                                          "propagateAtLaunch": True}]}}],
            message_contains=["cannot verify", "team research in dev", "pool: max size "
                              "unknown until apply"],
        ),
        Example(
            title="Without a teams file the policy judges nothing",
            allowed=True,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "box",
                        "new": {"instanceType": "p5.48xlarge",
                                "tags": {"team": "anyone", "environment": "prod"}}}],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # a stack-scope rule: quotas are sums over the plan

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        teams = load(ctx.params)
        if teams is None:
            return
        by_env: dict[tuple[str, str], _Share] = {}
        by_team: dict[str, _Share] = {}
        strangers: dict[str, list[ResourceChange]] = {}
        for change in changes:
            if change.kind not in KINDS or change.change in (ChangeKind.DELETE, ChangeKind.READ):
                continue
            cap = gpu_capacity(change, ctx.plan, ctx.catalog)
            if cap.instance_type is None and cap.unknown is None:
                continue  # not a GPU resource
            team = tag_value(change, ctx.params.team_tag, ctx.plan)
            if team is None:
                continue  # untagged: gpu-chargeback-tags says so
            if team is UNKNOWN:
                yield Finding(change.address, cannot_verify(
                    f"the {ctx.params.team_tag} tag is unknown until apply, so the team whose "
                    "GPU quota this resource counts against cannot be told"), unknown=True)
                continue
            assert isinstance(team, str)
            if teams.get(team) is None:
                strangers.setdefault(team, []).append(change)
                continue
            model = cap.instance_type.gpu_model if cap.instance_type is not None else None
            member = teams.require(team)
            if model is not None and not member.allows(model):
                yield Finding(change.address, (
                    f"team {team} may not use {model} ({teams.path}: teams.{team}.allowedGpus: "
                    f"{', '.join(member.allowed_gpus)}): {change.name} runs "
                    f"{cap.instance_type.instance_type if cap.instance_type else model}; use an "
                    f"allowed GPU or ask the team's owners ({', '.join(member.owners)}) to "
                    "allow it"), detail={"team": team, "gpu_model": model})
            env = tag_value(change, ctx.params.environment_tag, ctx.plan)
            budget = by_team.setdefault(team, _Share())
            if not isinstance(env, str):
                why = "unknown until apply" if env is UNKNOWN else "not set"
                yield Finding(change.address, cannot_verify(
                    f"its {ctx.params.environment_tag} tag is {why}, so team {team}'s GPU "
                    "quota per environment cannot be applied"), unknown=True)
            share = by_env.setdefault((team, env), _Share()) if isinstance(env, str) else None
            if cap.unknown is not None:
                why = f"{change.name}: {cap.unknown}"
                for s in filter(None, (share, budget)):
                    s.unknown.append(why)
                continue
            for s in filter(None, (share, budget)):
                s.held.append((change, cap))
        for name, found in strangers.items():
            yield Finding(found[0].address, (
                f"team {name} is not in the teams file ({teams.path}): it has no GPU quota, so "
                f"{_list(found, ctx)} may not run; add the team there (a change its owners "
                f"review) or fix the {ctx.params.team_tag} tag"),
                detail={"team": name, "resources": [c.address for c in found]})
        for (name, env), share in by_env.items():
            yield from self._quota(teams, name, teams.require(name), env, share)
        for name, share in by_team.items():
            yield from self._budget(teams, name, teams.require(name), share)

    def _quota(self, teams: Teams, name: str, team: Team, env: str,
               share: _Share) -> Iterable[Finding]:
        quota = team.quota(env)
        gpus = share.gpus
        where = f"team {name} in {env}"
        key = f"{teams.path}: teams.{name}.gpuQuota.{env}"
        if gpus > quota:
            yield Finding(_largest(share), (
                f"{where}: {count(gpus)} GPUs at max exceeds its quota of {quota} ({key}): "
                f"{_holdings(share)}; lower the max size or ask the team's owners "
                f"({', '.join(team.owners)}) to raise the quota"),
                detail={"team": name, "environment": env, "gpus": gpus, "quota": quota})
        elif share.unknown:
            yield Finding(_first(share), cannot_verify(
                f"{where}: at least {count(gpus)} of its {quota} GPUs at max; "
                f"{'; '.join(share.unknown)}"), unknown=True)

    def _budget(self, teams: Teams, name: str, team: Team, share: _Share) -> Iterable[Finding]:
        total, unpriced = share.per_month()
        budget = team.monthly_budget_usd
        key = f"{teams.path}: teams.{name}.monthlyBudgetUsd"
        if total > budget:
            yield Finding(_largest(share), (
                f"team {name}: {_money(total)}/month at max exceeds its monthly budget of "
                f"{_money(budget)} ({key}; on-demand): {_holdings(share, cost=True)}; lower "
                f"the max size or ask the team's owners ({', '.join(team.owners)}) to raise "
                "the budget"),
                detail={"team": name, "per_month": round(total, 2), "budget": budget})
        elif unpriced or share.unknown:
            yield Finding(_first(share), cannot_verify(
                f"team {name}: at least {_money(total)} of its {_money(budget)} a month at "
                f"max; {'; '.join([*unpriced, *share.unknown])}"), unknown=True)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _holding(change: ResourceChange, cap: Capacity, cost: bool) -> str:
    t = cap.instance_type
    assert t is not None
    size = ("" if change.kind is ResourceKind.INSTANCE
            else f" ({prop(change.type, 'max_size')} {cap.instances})")
    price = ""
    if cost and cap.per_hour is not None:
        price = f" {_money(cap.per_hour * HOURS_PER_MONTH)}/month at {usd(t.price_per_hour or 0)}/h"
    return f"{change.name} {count(cap.gpus)} × {t.gpu_model}{size}{price}"


def _holdings(share: _Share, cost: bool = False) -> str:
    ordered = sorted(share.held, key=lambda h: -h[1].gpus)
    return "; ".join(_holding(c, cap, cost) for c, cap in ordered)


def _largest(share: _Share) -> str:
    return max(share.held, key=lambda h: h[1].gpus)[0].address


def _first(share: _Share) -> str:
    return share.held[0][0].address if share.held else "(plan)"


def _list(changes: list[ResourceChange], ctx: RuleContext) -> str:
    del ctx
    return ", ".join(c.name for c in changes)


def params_with_file(raw: Mapping[str, Any], path: str) -> dict[str, Any]:
    """``raw`` params with the teams file set (``gpupool check --teams``)."""
    out = {k: v for k, v in raw.items() if k not in ("teams", "teamsFile", "teams_file")}
    return {**out, "teamsFile": path}


RULE = TeamGpuQuota()
