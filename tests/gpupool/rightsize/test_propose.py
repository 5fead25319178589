"""Proposals from synthetic figures: the floor, what is left alone and why, the dollars."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import synthetic as syn

from gpupool.config.loader import load_stack
from gpupool.rightsize.propose import Outcome, StackEntry, propose, unmatched

ROOT = Path(__file__).resolve().parents[3]
T4 = 0.526
KIT = {"environment": "prod", "managed-by": "gpupool"}


@pytest.fixture(scope="module")
def prod() -> StackEntry:
    s = load_stack(str(ROOT / "stacks" / "Pulumi.prod.yaml"))
    return StackEntry(s.name, "stacks/Pulumi.prod.yaml", s.config)


def inference(**kw: object) -> object:
    p = syn.pool("prod-inference", min_size=3, max_size=24, team="ml-platform")
    return dataclasses.replace(p, tags={**KIT, "gpupool:pool": "inference"}, **kw)


def run(prod: StackEntry, ins: list[float | None], util: list[float | None], *,
        pct: float = 95, headroom: float = 0.2, span: float = 24, pool: object = None
        ) -> Outcome:
    r = syn.report([(pool or inference(), ins, util)])
    return propose(r.pools, r.window, [prod], pct=pct, headroom=headroom, min_span_hours=span)


def changes(o: Outcome) -> dict[str, tuple[float, float]]:
    (p,) = o.proposals
    return {c.key: (c.old, c.new) for c in p.changes}


def test_an_idle_pool_goes_down_to_its_need_plus_headroom(prod: StackEntry) -> None:
    o = run(prod, [3] * 24, [5] * 24)
    assert changes(o) == {"minSize": (3, 1), "desiredCapacity": (4, 1), "maxSize": (24, 4)}
    (p,) = o.proposals
    # 2 of 3 T4 not run, 24 h a day, a 24 h window → a month of them
    assert p.gpu_hours_per_month == pytest.approx(2 * 730)
    assert p.usd_per_month == pytest.approx(2 * 730 * T4)


def test_never_below_the_percentile_need_plus_headroom(prod: StackEntry) -> None:
    """The p95 need is what the busiest hours needed: 22 idle hours do not outvote two busy.

    5 % of 3 T4 needs 0.21 instances at 70 %; 90 % needs 3.86. The 95th percentile of 24
    samples is the 23rd (a busy hour): the floor is 4, so the minimum of 3 stays, and only the
    maximum comes down (to the floor, above 1.25 x the peak of 3). At the 90th percentile (the
    22nd sample, an idle hour) the floor is 1.
    """
    util = [5.0] * 22 + [90.0] * 2
    o = run(prod, [3] * 24, util, pct=95, headroom=0)
    assert changes(o) == {"maxSize": (24, 4)}
    assert o.proposals[0].evidence.floor == 4
    assert o.proposals[0].usd_per_month == 0  # a lower max saves nothing now
    assert changes(run(prod, [3] * 24, util, pct=90, headroom=0)) == {
        "minSize": (3, 1), "desiredCapacity": (4, 1), "maxSize": (24, 4)}
    # headroom 200 %: 0.21 x 3 = 0.64 → 1; at 30 % busy: 1.29 x 1.2 = 1.54 → 2
    assert changes(run(prod, [3] * 24, [5.0] * 24, headroom=2))["minSize"] == (3, 1)
    assert changes(run(prod, [3] * 24, [30.0] * 24, headroom=0.2))["minSize"] == (3, 2)


def test_partial_unmeasured_short_and_cross_team_pools_are_left_alone(
        prod: StackEntry) -> None:
    why = dict(run(prod, [3] * 24, [5] * 23 + [None]).skipped)
    assert why["prod-inference"].startswith("partial")
    why = dict(run(prod, [3] * 24, [None] * 24).skipped)
    assert why["prod-inference"].startswith("not measured")
    why = dict(run(prod, [3] * 24, [5] * 24, span=48).skipped)
    assert "less than the minimum span (48 h)" in why["prod-inference"]
    why = dict(run(prod, [3] * 24, [5] * 24, pool=inference(team="research")).skipped)
    assert "never changed across teams" in why["prod-inference"]
    other = dataclasses.replace(inference(), tags={**KIT, "environment": "dev",
                                                   "gpupool:pool": "inference"})
    why = dict(run(prod, [3] * 24, [5] * 24, pool=other).skipped)
    assert why["prod-inference"] == "no stack of environment 'dev' has a pool or tier 'inference'"


def test_a_busy_pool_is_already_sized(prod: StackEntry) -> None:
    o = run(prod, [13] * 24, [80] * 24)  # 14.9 instances needed, peak 13 of 24
    assert not o.proposals
    assert "already sized" in dict(o.skipped)["prod-inference"]


def test_the_stack_entries_no_group_was_matched_to_are_named(prod: StackEntry) -> None:
    """What rightsize says "left alone" for: a pool or tier of the stack with no group read."""
    o = run(prod, [3] * 24, [5] * 24)
    assert o.matched == {("stacks/Pulumi.prod.yaml", "gpupool:pools", 0)}
    assert [(s.stack, section, item.name) for s, section, item in unmatched([prod], o.matched)
            ] == [("prod", "gpupool:pools", "training"), ("prod", "gpupool:pools", "l4-inference"),
                  ("prod", "gpupool:remoteGpu", "llm-decode")]
    # a group left alone (here: across teams) was still matched: its own line says why
    o = run(prod, [3] * 24, [5] * 24, pool=inference(team="research"))
    assert ("stacks/Pulumi.prod.yaml", "gpupool:pools", 0) in o.matched
