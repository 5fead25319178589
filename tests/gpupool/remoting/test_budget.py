"""The first-order budget, checked by hand and by properties a user relies on."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.remoting import Profile, bandwidth_min_gbps, predicted_overhead, rtt_max_us

# The example: 12,000 sync calls, 1.5 GB moved, 2 s on a local GPU.
BERT = Profile(name="bert-inference", local_time_s=2.0, sync_calls=12000, async_calls=80000,
               local_calls=5000, bytes_to_gpu=1.2e9, bytes_from_gpu=3.0e8)


def test_overhead_by_hand() -> None:
    # 12,000 x 10 µs = 0.12 s waiting; 8 x 1.5e9 bit / 100e9 bit/s = 0.12 s moving; / 2 s
    assert predicted_overhead(BERT, 10, 100) == pytest.approx(0.12)
    # 12,000 x 5 µs = 0.06 s; 1.2e10 bit / 200e9 = 0.06 s; 0.12 s / 2 s
    assert predicted_overhead(BERT, 5, 200) == pytest.approx(0.06)


def test_rtt_max_by_hand() -> None:
    # at 200 Gbps the bytes take 0.06 s of the 0.1 s budget (5 % of 2 s): 0.04 s / 12,000 calls
    assert rtt_max_us(BERT, 200, 0.05) == pytest.approx(3.3333333, rel=1e-6)
    # at 100 Gbps the bytes alone take 0.12 s > 0.1 s: infeasible, never a negative RTT
    assert rtt_max_us(BERT, 100, 0.05) is None
    # exactly filled by the bytes (120 Gbps → 0.1 s) leaves no RTT for the sync calls
    assert rtt_max_us(BERT, 120, 0.05) is None


def test_bandwidth_min_by_hand() -> None:
    # at 2 µs the round trips take 0.024 s; 1.2e10 bit in the remaining 0.076 s
    assert bandwidth_min_gbps(BERT, 2, 0.05) == pytest.approx(1.2e10 / 0.076 / 1e9)
    # at 10 µs the round trips alone take 0.12 s > 0.1 s
    assert bandwidth_min_gbps(BERT, 10, 0.05) is None


def test_edges_without_sync_calls_or_bytes() -> None:
    no_sync = BERT.model_copy(update={"sync_calls": 0})
    assert rtt_max_us(no_sync, 200, 0.05) == math.inf  # any RTT will do
    no_bytes = BERT.model_copy(update={"bytes_to_gpu": 0.0, "bytes_from_gpu": 0.0})
    assert bandwidth_min_gbps(no_bytes, 5, 0.05) == 0.0
    assert rtt_max_us(no_bytes, 1, 0.05) == pytest.approx(0.1 / 12000 / 1e-6)


def test_the_solutions_sit_on_the_budget() -> None:
    r = rtt_max_us(BERT, 400, 0.05)
    assert r is not None and predicted_overhead(BERT, r, 400) == pytest.approx(0.05)
    b = bandwidth_min_gbps(BERT, 3, 0.05)
    assert b is not None and predicted_overhead(BERT, 3, b) == pytest.approx(0.05)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_bad_network_figures_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="bandwidth_gbps"):
        predicted_overhead(BERT, 5, bad)
    with pytest.raises(ValueError, match="max_overhead"):
        rtt_max_us(BERT, 100, bad)


profiles = st.builds(
    Profile,
    name=st.just("p"),
    local_time_s=st.floats(1e-3, 1e4),
    sync_calls=st.integers(0, 10**8),
    async_calls=st.integers(0, 10**8),
    local_calls=st.integers(0, 10**8),
    bytes_to_gpu=st.floats(0, 1e13),
    bytes_from_gpu=st.floats(0, 1e13),
)
rtts = st.floats(0, 1e5)
bws = st.floats(1e-2, 1e4)


@given(profiles, rtts, rtts, bws, bws)
def test_overhead_never_falls_with_more_rtt_or_less_bandwidth(
    p: Profile, r1: float, r2: float, b1: float, b2: float
) -> None:
    lo_r, hi_r = sorted((r1, r2))
    lo_b, hi_b = sorted((b1, b2))
    assert predicted_overhead(p, lo_r, hi_b) <= predicted_overhead(p, hi_r, hi_b)
    assert predicted_overhead(p, hi_r, hi_b) <= predicted_overhead(p, hi_r, lo_b)


@given(profiles, bws, bws, st.floats(1e-4, 1.0))
def test_rtt_max_grows_with_bandwidth_and_respects_the_budget(
    p: Profile, b1: float, b2: float, eps: float
) -> None:
    lo, hi = sorted((b1, b2))
    r_lo, r_hi = rtt_max_us(p, lo, eps), rtt_max_us(p, hi, eps)
    if r_lo is not None:
        assert r_lo >= 0
        assert r_hi is not None and r_hi >= r_lo  # more bandwidth never shrinks the RTT budget
        if math.isfinite(r_lo):
            assert predicted_overhead(p, r_lo, lo) <= eps * (1 + 1e-9)


@given(profiles, rtts, rtts, st.floats(1e-4, 1.0))
def test_bandwidth_min_grows_with_rtt(p: Profile, r1: float, r2: float, eps: float) -> None:
    lo, hi = sorted((r1, r2))
    b_lo, b_hi = bandwidth_min_gbps(p, lo, eps), bandwidth_min_gbps(p, hi, eps)
    if b_hi is not None:
        assert b_lo is not None and 0 <= b_lo <= b_hi


@given(profiles, st.integers(0, 10**8), rtts, bws)
def test_making_sync_calls_async_or_local_never_costs_more(
    p: Profile, moved: int, rtt: float, bw: float
) -> None:
    k = min(moved, p.sync_calls)
    as_async = p.model_copy(update={"sync_calls": p.sync_calls - k,
                                    "async_calls": p.async_calls + k})
    shadowed = p.model_copy(update={"sync_calls": p.sync_calls - k,
                                    "local_calls": p.local_calls + k})
    base = predicted_overhead(p, rtt, bw)
    assert predicted_overhead(as_async, rtt, bw) <= base
    assert predicted_overhead(shadowed, rtt, bw) <= base


# ------------------------------------------------ two directions measured apart (netcheck)


def test_each_direction_carries_its_own_bytes_by_hand() -> None:
    from gpupool.remoting.budget import direction_min_gbps, transfer_seconds

    # 9.6e9 bit out at 100 Gbps = 0.096 s, 2.4e9 bit back at 20 Gbps = 0.12 s
    assert transfer_seconds(BERT, 100, 20) == pytest.approx(0.216)
    # + 12,000 x 2 µs = 0.024 s; / 2 s
    assert predicted_overhead(BERT, 2, 100, 20) == pytest.approx(0.24 / 2)
    # a symmetric path is the one-bandwidth budget
    assert predicted_overhead(BERT, 2, 50, 50) == predicted_overhead(BERT, 2, 50)
    # at 1 µs (0.012 s) and 0.1 s of budget (5 % of 2 s), 0.3 GB back at 240 Gbps (0.01 s)
    # leave 0.078 s for 9.6e9 bit out
    assert direction_min_gbps(BERT, 1, 0.05, "to_gpu", 240) == pytest.approx(9.6e9 / 0.078 / 1e9)
    # 1.2 GB out at 192 Gbps (0.05 s) leave 0.038 s for 2.4e9 bit back
    assert direction_min_gbps(BERT, 1, 0.05, "from_gpu", 192) == pytest.approx(
        2.4e9 / 0.038 / 1e9)
    # the way out at 96 Gbps (0.1 s) uses the whole budget with the round trips: nothing left
    assert direction_min_gbps(BERT, 1, 0.05, "from_gpu", 96) is None
    # the largest RTT at 240 Gbps out (0.04 s) and 48 Gbps back (0.05 s): 0.01 s / 12,000
    assert rtt_max_us(BERT, 240, 0.05, 48) == pytest.approx(0.01 / 12000 * 1e6)
    with pytest.raises(ValueError, match="direction"):
        direction_min_gbps(BERT, 1, 0.05, "sideways", 10)


@given(st.floats(0, 20), st.floats(1, 500), st.floats(1, 500), st.floats(0.01, 0.5))
def test_budget_met_exactly_when_each_direction_reaches_its_least(
    rtt: float, up: float, down: float, eps: float
) -> None:
    from gpupool.remoting.budget import direction_min_gbps

    within = predicted_overhead(BERT, rtt, up, down) <= eps
    for direction, mine, other in (("to_gpu", up, down), ("from_gpu", down, up)):
        need = direction_min_gbps(BERT, rtt, eps, direction, other)
        meets = need is not None and mine >= need
        if abs(predicted_overhead(BERT, rtt, up, down) - eps) > 1e-9:  # off the edge
            assert meets == within
        if need is not None:
            at = (need, other) if direction == "to_gpu" else (other, need)
            assert predicted_overhead(BERT, rtt, *at) == pytest.approx(eps)
