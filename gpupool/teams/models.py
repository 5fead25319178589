"""``stacks/teams.yaml``: who may ask for GPU stacks, which GPUs, and how many.

The platform team owns this file (CODEOWNERS): a team's quota is raised by a reviewed change
here, never by the team's own stack file. ``gpupool new-stack`` refuses what exceeds it, and the
``team-gpu-quota`` policy denies plans that exceed it, both from the same validated model::

    teams:
      research:
        owners: ["@acme/research-leads"]       # GitHub users/teams or e-mail addresses
        costCenter: cc-research-2001            # written into the team's stacks
        allowedGpus: [T4, A10G, L4]             # GPU models the team may run
        gpuQuota: {dev: 4, staging: 4, prod: 16}   # GPUs at max size, per environment
        monthlyBudgetUsd: 15000                 # on-demand cost at max size, all environments

An environment missing from ``gpuQuota`` has a quota of 0.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from gpupool.config.models import _NAME, _TAG_VALUE, Environment

_OWNER = re.compile(r"^(@[A-Za-z0-9][A-Za-z0-9-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?"
                    r"|[^@\s]+@[^@\s]+\.[^@\s]+)$")
MAX_QUOTA = 100_000
MAX_BUDGET = 1e9

PATTERN_HINTS = {
    _NAME.pattern: "a lowercase team name of 2-32 characters (a-z, 0-9, '-'), such as research",
    _OWNER.pattern: "a GitHub user or team (@user, @org/team) or an e-mail address",
    _TAG_VALUE.pattern: "a tag value of letters, digits, spaces and _ . : / = + - @",
}


def _whole(v: object) -> object:
    """A whole number of GPUs: 8, or 8.0 as JSON policy config delivers it, never 2.5 or true."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"expected a whole number of GPUs, got {v!r}")
    if isinstance(v, float) and not v.is_integer():
        raise ValueError(f"expected a whole number of GPUs, got {v!r}")
    return int(v)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel,
                              populate_by_name=True, str_strip_whitespace=True,
                              allow_inf_nan=False)


class Team(_Model):
    owners: Annotated[list[Annotated[str, Field(pattern=_OWNER.pattern)]],
                      Field(min_length=1, max_length=50)]
    cost_center: Annotated[str, Field(min_length=1, max_length=64, pattern=_TAG_VALUE.pattern)]
    allowed_gpus: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]],
                            Field(min_length=1, max_length=50)]
    gpu_quota: dict[Environment, Annotated[int, BeforeValidator(_whole),
                                           Field(ge=0, le=MAX_QUOTA)]] = {}
    monthly_budget_usd: Annotated[float, Field(gt=0, le=MAX_BUDGET)]

    @field_validator("monthly_budget_usd", mode="before")
    @classmethod
    def _number(cls, v: object) -> object:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError("expected a number of US dollars, such as 15000")
        return v

    def quota(self, environment: str) -> int:
        return self.gpu_quota.get(environment, 0)  # type: ignore[call-overload]

    def allows(self, gpu_model: str) -> bool:
        return gpu_model.casefold() in {g.casefold() for g in self.allowed_gpus}


class TeamsFile(_Model):
    teams: Annotated[dict[Annotated[str, Field(pattern=_NAME.pattern)], Team],
                     Field(min_length=1, max_length=1000)]
