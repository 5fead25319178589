"""The per-call replay: hand-computed timelines, the plain loop, and the budget's properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from remoting_support import random_trace

from gpupool.remoting.replay import (
    CHUNK,
    Network,
    Replayer,
    local_time_us,
    overhead,
    replay_reference,
    run_time_us,
)
from gpupool.remoting.solve import bandwidth_min_gbps, direction_min_gbps, rtt_max_us
from gpupool.remoting.trace import ASYNC, LOCAL, SYNC, make_trace
from gpupool.remoting.whatif import what_if

ONE_SYNC = make_trace([dict(name="cudaMalloc", kind="SYNC", blocking="NonBlocking",
                            bytes_to_gpu=1000, bytes_from_gpu=500, serialise_us=1,
                            deserialise_us=2, process_us=3, gap_us=10)])

LAUNCHES = make_trace([
    dict(name="cudaLaunchKernel", kind="ASYNC", blocking="GPUBlocking", bytes_to_gpu=200,
         serialise_us=1, deserialise_us=1, process_us=2, gap_us=5, block_us=100),
    dict(name="cudaLaunchKernel", kind="ASYNC", blocking="GPUBlocking", bytes_to_gpu=200,
         serialise_us=1, deserialise_us=1, process_us=2, gap_us=5, block_us=100),
    dict(name="cudaStreamSynchronize", kind="SYNC", blocking="CPUBlocking", bytes_to_gpu=8,
         bytes_from_gpu=4, serialise_us=1, deserialise_us=1, process_us=1, gap_us=1),
])


def test_one_sync_call_by_hand() -> None:
    # RTT 10 µs, 8 Gbit/s = 8000 bit/µs: 1000 B out take 1 µs, 500 B back 0.5 µs.
    # issue 10; arrives max(0, 10 + 1 + 5) + 1 = 17; served 17 + 2 + 3 = 22;
    # returns 22 + 5 + 0.5 = 27.5. Locally: issue 10, served 10 + 3 = 13.
    assert run_time_us(ONE_SYNC, Network(10, 8)) == pytest.approx(27.5)
    assert local_time_us(ONE_SYNC) == pytest.approx(13)
    assert overhead(ONE_SYNC, Network(10, 8)) == pytest.approx(27.5 / 13 - 1)


def test_launches_overlap_the_network_by_hand() -> None:
    # RTT 10 µs, 1.6 Gbit/s = 1600 bit/µs: 200 B take 1 µs, 8 B 0.04 µs, 4 B 0.02 µs.
    # launch 1: issue 5, arrives max(0, 5+1+5)+1 = 12, served 15, GPU busy until 115, back at 6
    # launch 2: issue 11, arrives max(12, 11+1+5)+1 = 18, served 21, GPU until max(21,115)+100
    #           = 215, back at 12
    # sync:     issue 13, arrives max(18, 13+1+5)+0.04 = 19.04, served 21.04, waits for the
    #           GPU (215), returns 215 + 5 + 0.02 = 220.02
    assert run_time_us(LAUNCHES, Network(10, 1.6)) == pytest.approx(220.02)
    # locally: 5 -> served 7, GPU until 107; 12 -> 14, GPU until 207; 15 -> waits until 207
    assert local_time_us(LAUNCHES) == pytest.approx(207)


def test_a_shadowed_call_costs_the_client_nothing() -> None:
    trace = make_trace([
        dict(name="cudaGetDevice", kind="LOCAL", blocking="NonBlocking", gap_us=3,
             process_us=4, serialise_us=1),
        dict(name="cudaMalloc", kind="SYNC", blocking="NonBlocking", gap_us=2, process_us=1),
    ])
    # LOCAL: returns at its issue (3); the malloc issues at 5, arrives 5 + 10, returns 26
    assert run_time_us(trace, Network(20, 100)) == pytest.approx(26)
    # locally both calls run their process time: 3 + 4 = 7, then 7 + 2 + 1 = 10
    assert local_time_us(trace) == pytest.approx(10)


def test_a_trace_that_ends_while_the_gpu_works_ends_when_the_queue_drains() -> None:
    trace = make_trace([dict(name="k", kind="ASYNC", blocking="GPUBlocking", gap_us=1,
                             block_us=50)])
    assert run_time_us(trace, Network(10, 100)) == pytest.approx(1 + 5 + 50)


def test_only_sync_calls_without_local_work_is_the_first_order_model() -> None:
    rows = [dict(name="q", kind="SYNC", blocking="NonBlocking", bytes_to_gpu=100 * i,
                 bytes_from_gpu=7 * i) for i in range(1, 40)]
    trace = make_trace(rows)
    bits = 8 * sum(107 * i for i in range(1, 40))
    assert run_time_us(trace, Network(12, 3)) == pytest.approx(39 * 12 + bits / 3000)


networks = st.builds(Network, st.floats(0, 100), st.floats(0.1, 400))
# a measured path: each direction its own bandwidth, or one for both
asymmetric = st.builds(Network, st.floats(0, 100), st.floats(0.1, 400),
                       st.one_of(st.none(), st.floats(0.1, 400)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3 * CHUNK + 7), asymmetric)
def test_the_vectorised_replay_is_the_plain_loop(seed: int, n: int, net: Network) -> None:
    trace = random_trace(seed, n)
    assert run_time_us(trace, net) == pytest.approx(replay_reference(trace, net), rel=1e-9)
    assert local_time_us(trace) == pytest.approx(replay_reference(trace, None), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 600), networks, networks)
def test_more_rtt_or_less_bandwidth_never_runs_faster(
    seed: int, n: int, a: Network, b: Network
) -> None:
    trace = random_trace(seed, n)
    replayer = Replayer(trace)
    lo_r, hi_r = sorted((a.rtt_us, b.rtt_us))
    lo_b, hi_b = sorted((a.bandwidth_gbps, b.bandwidth_gbps))
    fast = replayer.run_time_us(Network(lo_r, hi_b))
    assert fast <= replayer.run_time_us(Network(hi_r, hi_b)) * (1 + 1e-12)
    assert fast <= replayer.run_time_us(Network(lo_r, lo_b)) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 600), networks, st.floats(0, 1))
def test_async_or_shadowed_calls_never_cost_more(
    seed: int, n: int, net: Network, share: float
) -> None:
    trace = random_trace(seed, n)
    rng = np.random.default_rng(seed + 1)
    calls = (trace.kind == SYNC) & (trace.blocking != 2) & (rng.random(n) < share)
    replayer = Replayer(trace)
    now = replayer.run_time_us(net)
    as_async = replayer.with_kind(calls, ASYNC)
    assert as_async.run_time_us(net) <= now * (1 + 1e-12)
    assert replayer.with_kind(calls, LOCAL).run_time_us(net) <= now * (1 + 1e-12)
    # a what-if replayer is the replayer of the changed trace
    assert as_async.run_time_us(net) == pytest.approx(
        run_time_us(trace.with_kind(calls, ASYNC), net), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.floats(0.3, 400),
       st.floats(0.005, 0.5))
def test_rtt_max_sits_on_the_budget(seed: int, n: int, bw: float, eps: float) -> None:
    trace = random_trace(seed, n)
    local = local_time_us(trace)
    assume(local > 0)
    r = rtt_max_us(trace, bw, eps, local)
    if r is None:  # infeasible: even a zero RTT exceeds the budget
        assert overhead(trace, Network(0, bw), local) > eps
    elif math.isinf(r):
        assert overhead(trace, Network(1e7, bw), local) <= eps + 1e-9
    else:
        assert overhead(trace, Network(r, bw), local) == pytest.approx(eps, abs=1e-7)
        assert overhead(trace, Network(r * 1.01 + 1e-3, bw), local) > eps


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.floats(0, 50), st.floats(0.005, 0.5))
def test_bandwidth_min_sits_on_the_budget(seed: int, n: int, rtt: float, eps: float) -> None:
    trace = random_trace(seed, n)
    local = local_time_us(trace)
    assume(local > 0)
    b = bandwidth_min_gbps(trace, rtt, eps, local)
    if b is None:
        assert overhead(trace, Network(rtt, 1e9), local) > eps - 1e-9
    elif b == 0:
        assert overhead(trace, Network(rtt, 1e-6), local) <= eps + 1e-9
    else:
        assert overhead(trace, Network(rtt, b), local) == pytest.approx(eps, abs=1e-7)
        assert overhead(trace, Network(rtt, b * 0.99), local) > eps


def test_what_if_ranks_by_cost_and_never_offers_a_synchronise() -> None:
    rows = []
    for _ in range(50):
        rows += [
            dict(name="cudaMalloc", kind="SYNC", blocking="GPUBlocking", gap_us=2, process_us=1),
            dict(name="cudaGetLastError", kind="SYNC", blocking="NonBlocking", gap_us=1),
            dict(name="cudaGetLastError", kind="SYNC", blocking="NonBlocking", gap_us=1),
            dict(name="cudaLaunchKernel", kind="ASYNC", blocking="GPUBlocking", gap_us=3,
                 process_us=2, block_us=20),
            dict(name="cudaStreamSynchronize", kind="SYNC", blocking="CPUBlocking", gap_us=1),
        ]
    trace = make_trace(rows)
    net = Network(20, 10)
    rows_out = what_if(trace, net, top=3)
    assert [r.calls for r in rows_out] == ["cudaGetLastError", "cudaMalloc", "top 2 together"]
    assert [r.count for r in rows_out] == [100, 50, 150]
    now = overhead(trace, net)
    for r in rows_out:
        assert r.as_async < now
        if r.as_local is not None:
            assert r.as_local <= r.as_async + 1e-12
    # cudaMalloc queues no GPU work here (block 0), so it may be shadowed
    assert rows_out[1].as_local is not None


def test_each_direction_at_its_own_bandwidth_by_hand() -> None:
    # as test_one_sync_call_by_hand, but 500 B come back at 4 Gbit/s (1 µs, not 0.5 µs)
    assert run_time_us(ONE_SYNC, Network(10, 8, 4)) == pytest.approx(28.0)
    # 1000 B out at 16 Gbit/s (0.5 µs), 500 B back at 8: arrives 16.5, served 21.5, returns 27
    assert run_time_us(ONE_SYNC, Network(10, 16, 8)) == pytest.approx(27.0)
    assert Network(10, 8).back_bits_per_us == Network(10, 8, 8).back_bits_per_us == 8000


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.floats(0, 50), st.floats(0.3, 400),
       st.booleans(), st.floats(0.005, 0.5))
def test_a_direction_min_sits_on_the_budget(seed: int, n: int, rtt: float, other: float,
                                            to_gpu: bool, eps: float) -> None:
    trace = random_trace(seed, n)
    local = local_time_us(trace)
    assume(local > 0)

    def net(mine: float) -> Network:
        return Network(rtt, mine, other) if to_gpu else Network(rtt, other, mine)

    b = direction_min_gbps(trace, rtt, eps, to_gpu, other, local)
    if b is None:
        assert overhead(trace, net(1e9), local) > eps - 1e-9
    elif b == 0:
        assert overhead(trace, net(1e-6), local) <= eps + 1e-9
    else:
        assert overhead(trace, net(b), local) == pytest.approx(eps, abs=1e-7)
        assert overhead(trace, net(b * 0.99), local) > eps
