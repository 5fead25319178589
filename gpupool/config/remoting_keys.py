"""Stack keys every remote-GPU proxy shares, wherever it runs: the AWS tier
(``gpupool:remoteGpu``) and a Kubernetes pool's proxy (``gpupool:kubernetes[].remoteGpu``).

One model, one spelling, one meaning: ``port`` is the remoting server's TCP port; ``budget`` is
the network the application tolerates, from a ``profile`` (and ``maxOverhead``) or as explicit
``minGbps`` / ``maxRttUs`` (DESIGN.md, idea 2). Its own module, built on
:mod:`gpupool.config.base` only, so both capability modules import it without a cycle.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

from pydantic import Field, model_validator

from gpupool.config.base import ConfigModel
from gpupool.errors import InputError

if TYPE_CHECKING:
    from gpupool.remoting import Profile

DEFAULT_MAX_OVERHEAD: Final = 0.05  # `gpupool remoting`'s default ε
# The largest round trip a budget names (1 s): what ``budget.maxRttUs`` accepts, and what the
# max-RTT tag carries when a profile bounds no round trip (no synchronous call), so that every
# budget figure the kit writes is a finite number a person could have written by hand.
RTT_CEILING_US: Final = 1_000_000

# The remoting server's TCP port: above the well-known ports, so that it needs no privilege.
RemotingPort = Annotated[int, Field(ge=1024, le=65535,
                                    description="the remoting server's TCP port")]


class BudgetConfig(ConfigModel):
    """The network a proxy's application tolerates: derived from a profile, or explicit figures.

    ``profile`` (a path relative to the project, the folder of Pulumi.yaml) and ``maxOverhead``
    (ε, the slowdown the application accepts, 0.05 = 5 %): the kit derives the figures with the
    remoting model. Or ``minGbps``, the least bandwidth of one client↔proxy flow, and
    ``maxRttUs``, the largest round trip, as ``gpupool remoting PROFILE`` prints them
    (``bandwidth_min_gbps``, ``rtt_max_us``).
    """

    profile: Annotated[str | None, Field(min_length=1, max_length=1024)] = None
    max_overhead: Annotated[float | None, Field(gt=0, le=1, allow_inf_nan=False)] = None
    min_gbps: Annotated[float | None, Field(ge=0, le=10000, allow_inf_nan=False)] = None
    max_rtt_us: Annotated[float | None, Field(gt=0, le=RTT_CEILING_US,
                                              allow_inf_nan=False)] = None

    @model_validator(mode="after")
    def _one_way(self) -> BudgetConfig:
        figures = [k for k, v in (("minGbps", self.min_gbps), ("maxRttUs", self.max_rtt_us))
                   if v is not None]
        if self.profile is not None and figures:
            raise ValueError(f"expected a profile or explicit figures, not both (drop "
                             f"{' and '.join(figures)}, which the profile derives)")
        if self.profile is None and len(figures) < 2:
            raise ValueError("expected profile (with maxOverhead), or both minGbps and maxRttUs")
        if self.profile is None and self.max_overhead is not None:
            raise ValueError("expected maxOverhead only with a profile")
        return self

    @property
    def epsilon(self) -> float:
        return DEFAULT_MAX_OVERHEAD if self.max_overhead is None else self.max_overhead


class ProfileProblem(ValueError):
    """A budget's profile that cannot be read: ``expected`` is the one line to print."""


def load_budget_profile(budget: BudgetConfig, base_dir: Path | None) -> Profile:
    """The budget's application profile; relative paths start at ``base_dir`` (the project
    folder; the working directory when not given, which is where ``pulumi up`` runs)."""
    from gpupool.remoting import load_profile

    assert budget.profile is not None
    path = Path(budget.profile)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    try:
        return load_profile(path)
    except InputError as e:
        raise ProfileProblem("expected a valid application profile ("
                             + "; ".join(e.problems) + ")") from None


def tag_number(value: float) -> str:
    """A budget figure as a tag or annotation value: at most 3 decimals, no float noise, no
    exponent.

    Only finite, non-negative figures are written: "inf" or "nan" would read as a number to
    some tools and as text to others (an unbounded round trip is written as RTT_CEILING_US).
    """
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"a budget tag must be a finite figure >= 0, got {value!r}")
    return f"{round(value, 3):.3f}".rstrip("0").rstrip(".")
