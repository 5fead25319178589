# ruff: noqa: RUF003  (× is the multiplication sign users read)
"""Recommendations: which knob, to what, and the GPU-hours and dollars a month it saves."""

from __future__ import annotations

import pytest
import synthetic as syn

T4 = 0.526
MONTH = 730 / 24  # the synthetic window is one day


def advice(report):  # type: ignore[no-untyped-def]
    return {(a["pool"], a["action"]): a for a in report.to_dict()["recommendations"]}


def test_a_pool_held_up_by_its_minimum_gets_a_lower_minimum() -> None:
    r = syn.report([(syn.pool("floor", min_size=4, max_size=8), [4] * 24, [10] * 24)])
    a = advice(r)[("floor", "lower-min")]
    # 10 % of 4 T4 = 0.4 GPUs used; at 70 % one instance carries it: min 4 → 1
    assert a["change"] == "minSize 4 → 1"
    assert a["gpus"] == 3
    assert a["gpu_hours_per_month"] == pytest.approx(3 * 24 * MONTH, abs=0.1)
    assert a["usd_per_month"] == pytest.approx(3 * 24 * MONTH * T4, abs=0.01)


def test_a_low_target_above_the_minimum_gets_a_higher_target() -> None:
    r = syn.report([(syn.pool("lazy", min_size=1, max_size=8, target=50), [4] * 24,
                     [20] * 24)])
    got = advice(r)
    assert ("lazy", "lower-min") not in got  # it never sat at its minimum
    a = got[("lazy", "raise-target")]
    # 0.8 GPUs used; at 70 % two instances carry it: 2 fewer of 4, every hour
    assert a["change"] == "targetGpuUtilisation 50 → 70"
    assert a["gpu_hours_per_month"] == pytest.approx(2 * 24 * MONTH, abs=0.1)
    assert a["gpus"] == 2


def test_unused_headroom_gets_a_lower_max_that_saves_no_dollars_now() -> None:
    r = syn.report([(syn.pool("roomy", min_size=0, max_size=10), [2] * 24, [20] * 24)])
    a = advice(r)[("roomy", "lower-max")]
    assert a["change"] == "maxSize 10 → 3"  # peak 2 × 1.25, rounded up
    assert a["gpus"] == 7 and a["usd_per_month"] == 0
    assert f"by ${7 * T4 * 730:,.0f}/month" in a["message"]


def test_two_idle_pools_of_the_same_gpu_get_consolidated() -> None:
    r = syn.report([
        (syn.pool("east", min_size=2, max_size=4), [2] * 24, [10] * 24),
        (syn.pool("west", min_size=2, max_size=4), [2] * 24, [10] * 24),
        (syn.pool("a10g", "g5.xlarge", min_size=2, max_size=4), [2] * 24, [10] * 24),
    ])
    got = advice(r)
    (key,) = [k for k in got if k[1] == "consolidate"]  # only the two T4 pools
    a = got[key]
    assert a["change"] in ("merge west into east", "merge east into west")
    # together: 0.4 GPUs used, a floor of 2 → 2 of 4 instances, 24 h a day
    assert a["gpu_hours_per_month"] == pytest.approx(2 * 24 * MONTH, abs=0.1)


def test_busy_and_unmeasured_pools() -> None:
    r = syn.report([
        (syn.pool("busy", min_size=4), [4] * 24, [85] * 24),
        (syn.pool("dark", "g6.xlarge"), [1] * 24, [None] * 24),
    ])
    got = advice(r)
    assert not [k for k in got if k[0] == "busy"]
    assert got[("dark", "install-agent")]["usd_per_month"] is None


def test_a_minimum_is_never_lowered_below_the_instances_it_says_were_needed() -> None:
    """The old contradiction: ``minSize 2 → 1 … needed 3 instance(s) at the 90th percentile``.

    Half the day two T4 ran 90 % busy (1.8 GPUs: three instances at 70 %), half 5 %: the pool
    is idle on average but its 90th-percentile need (3) is above its minimum, so no lower-min.
    """
    busy = [90.0] * 12 + [5.0] * 12
    r = syn.report([(syn.pool("spiky", min_size=2, max_size=8), [2] * 24, busy)])
    got = advice(r)
    assert ("spiky", "lower-min") not in got
    # and where the need is below the minimum, the new minimum is exactly that need
    r = syn.report([(syn.pool("floor", min_size=6, max_size=8), [6] * 24,
                     [30.0] * 22 + [5.0] * 2)])
    a = advice(r)[("floor", "lower-min")]
    # 30 % of 6 T4 = 1.8 GPUs: three instances at 70 %, the 90th-percentile need
    assert a["change"] == "minSize 6 → 3"
    assert "needed 3 instance(s) at the 90th percentile" in a["message"]
