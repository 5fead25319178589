"""Pipelined and serialised latency: by hand, against the plain loop, and in the budget."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from remoting_support import random_trace

from gpupool.remoting import budget
from gpupool.remoting.latency import DEFAULT, Latency
from gpupool.remoting.profile import Profile
from gpupool.remoting.replay import (
    CHUNK,
    Network,
    Replayer,
    local_time_us,
    overhead,
    replay_reference,
    run_time_us,
)
from gpupool.remoting.solve import bandwidth_min_gbps, rtt_max_us
from gpupool.remoting.trace import make_trace

ROOT = Path(__file__).resolve().parents[3]
P, S = Latency.PIPELINED, Latency.SERIALISED

# three launches 2 µs apart, then a synchronise: a burst of outstanding requests
BURST = make_trace([
    *[dict(name="cudaLaunchKernel", kind="ASYNC", blocking="GPUBlocking", serialise_us=1,
           gap_us=1, block_us=1) for _ in range(3)],
    dict(name="cudaStreamSynchronize", kind="SYNC", blocking="CPUBlocking"),
])


def test_a_burst_by_hand() -> None:
    # RTT 20 µs (10 each way), no bytes. Launches issue at 1, 3, 5 (gap 1 after the client's
    # 1 µs of serialising each); the synchronise at 6.
    # pipelined: arrivals max(prev, issue + 1 + 10) = 12, 14, 16; the synchronise arrives at
    #   max(16, 6 + 10) = 16, the GPU is done at 17 (three 1 µs kernels from 12), reply at 27
    # serialised: arrivals max(prev, issue + 1) + 10 = 12, 22, 32; the synchronise at 42,
    #   the GPU done at 33, so it returns at 42 + 10 = 52
    assert run_time_us(BURST, Network(20, 100), P) == pytest.approx(27)
    assert run_time_us(BURST, Network(20, 100), S) == pytest.approx(52)
    assert replay_reference(BURST, Network(20, 100), S) == pytest.approx(52)
    assert local_time_us(BURST) == pytest.approx(4)  # 1, 2, 3 issue; GPU done at 4


def test_an_isolated_call_pays_the_same_in_both() -> None:
    one = make_trace([dict(name="cudaMalloc", kind="SYNC", blocking="NonBlocking",
                           bytes_to_gpu=1000, bytes_from_gpu=500, serialise_us=1,
                           deserialise_us=2, process_us=3, gap_us=10)])
    assert run_time_us(one, Network(10, 8), S) == pytest.approx(27.5)  # as pipelined
    assert run_time_us(one, Network(10, 8), P) == pytest.approx(27.5)


def test_a_shadowed_call_sends_nothing_in_either() -> None:
    trace = make_trace([dict(name="cudaGetDevice", kind="LOCAL", blocking="NonBlocking",
                             gap_us=3)] * 4 + [dict(name="q", kind="SYNC",
                                                    blocking="NonBlocking", gap_us=2)])
    # 4 x 3 µs on the client, then one round trip; no RTT/2 for the shadows
    assert run_time_us(trace, Network(20, 100), S) == pytest.approx(12 + 2 + 20)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 2 * CHUNK + 9), st.floats(0, 100),
       st.floats(0.1, 400), st.one_of(st.none(), st.floats(0.1, 400)))
def test_serialised_is_the_plain_loop_and_never_faster(seed: int, n: int, rtt: float,
                                                       bw: float, back: float | None) -> None:
    trace = random_trace(seed, n)
    net = Network(rtt, bw, back)
    rp = Replayer(trace, latency=S)
    slow = rp.run_time_us(net)
    assert slow == pytest.approx(replay_reference(trace, net, S), rel=1e-9)
    assert slow >= rp.with_latency(P).run_time_us(net) * (1 - 1e-12)
    # a what-if replayer keeps the latency model
    calls = np.zeros(n, dtype=bool)
    calls[::3] = True
    assert rp.with_kind(calls, 1).latency is S


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.floats(0.3, 400),
       st.floats(0.005, 0.5))
def test_serialised_rtt_max_sits_on_the_budget(seed: int, n: int, bw: float, eps: float) -> None:
    rp = Replayer(random_trace(seed, n), latency=S)
    local = local_time_us(rp.trace)
    assume(local > 0)
    r = rtt_max_us(rp, bw, eps, local)
    if r is None:
        assert overhead(rp, Network(0, bw), local) > eps
    elif math.isinf(r):
        assert overhead(rp, Network(1e7, bw), local) <= eps + 1e-9
    else:
        assert overhead(rp, Network(r, bw), local) == pytest.approx(eps, abs=1e-7)
        assert overhead(rp, Network(r * 1.01 + 1e-3, bw), local) > eps
        # the least bandwidth at that RTT is the one given (the run time can be nearly flat in
        # 1/BW there: a budget met to 1e-9 pins the bandwidth far more loosely)
        b = bandwidth_min_gbps(rp, r, eps, local)
        assert b is not None and b <= bw * (1 + 1e-3)


# --------------------------------------------------------------------------- first order

LAUNCH_BOUND = Profile(name="p", local_time_s=1.0, sync_calls=1000, async_calls=100_000,
                       bytes_to_gpu=1e9, bytes_from_gpu=0)


def test_first_order_serialised_by_hand() -> None:
    # 30 µs: 100,000 x 15 µs = 1.5 s on the link, 0.5 s past the 1 s local run; round trips
    # 1,000 x 30 µs = 30 ms; 8e9 bit at 100 Gbps = 80 ms
    assert budget.predicted_overhead(LAUNCH_BOUND, 30, 100, latency=P) == pytest.approx(0.11)
    assert budget.predicted_overhead(LAUNCH_BOUND, 30, 100, latency=S) == pytest.approx(0.61)
    # 10 µs: the link's 0.5 s fits in the run, nothing added
    assert budget.predicted_overhead(LAUNCH_BOUND, 10, 100, latency=S) == pytest.approx(0.09)
    # ε = 0.2 at 100 Gbps: round trips get 0.12 s (120 µs), the chain 1.12 s / 51,000 hops
    assert budget.rtt_max_us(LAUNCH_BOUND, 100, 0.2, latency=P) == pytest.approx(120)
    assert budget.rtt_max_us(LAUNCH_BOUND, 100, 0.2, latency=S) == pytest.approx(1.12 / 0.051)
    # at 20 µs: round trips leave 0.18 s, the chain 1.2 - 51,000 x 20 µs = 0.18 s as well
    assert budget.bandwidth_min_gbps(LAUNCH_BOUND, 20, 0.2, S) == pytest.approx(8 / 0.18)
    assert budget.bandwidth_min_gbps(LAUNCH_BOUND, 21, 0.2, S) == pytest.approx(
        8 / (1.2 - 51_000 * 21e-6))  # the chain is the tighter: 0.129 s against 0.179 s
    assert budget.bandwidth_min_gbps(LAUNCH_BOUND, 25, 0.2, S) is None  # 1.275 s > 1.2 s


@settings(deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**7), st.floats(0, 1e10), st.floats(0.1, 400),
       st.floats(0.01, 1))
def test_first_order_serialised_solutions_sit_on_the_budget(
        syncs: int, asyncs: int, moved: float, bw: float, eps: float) -> None:
    prof = Profile(name="p", local_time_s=2.0, sync_calls=syncs, async_calls=asyncs,
                   bytes_to_gpu=moved, bytes_from_gpu=moved / 3)
    r = budget.rtt_max_us(prof, bw, eps, latency=S)
    if r is None:
        assert budget.predicted_overhead(prof, 0, bw, latency=S) >= eps * (1 - 1e-9)
    elif math.isinf(r):
        assert budget.predicted_overhead(prof, 1e9, bw, latency=S) <= eps * (1 + 1e-9)
    else:
        assert budget.predicted_overhead(prof, r, bw, latency=S) == pytest.approx(eps, rel=1e-6)
        assert r <= budget.rtt_max_us(prof, bw, eps, latency=P) * (1 + 1e-12)
        if moved > 1e3:
            b = budget.bandwidth_min_gbps(prof, r, eps, S)
            assert b is not None and b <= bw * (1 + 1e-6)


def test_the_cli_default_is_the_library_constant() -> None:
    from gpupool.cli import build_parser

    base = ["remoting", "x.yaml", "--rtt-us", "1"]
    assert build_parser().parse_args(base).latency == DEFAULT == S
    for v in Latency:
        assert Latency(build_parser().parse_args([*base, "--latency", str(v)]).latency) is v


def test_the_launch_bound_example_is_generated_and_says_so(tmp_path: Path) -> None:
    example = ROOT / "examples" / "profiles" / "decode-launch-bound"
    assert "SYNTHETIC" in example.with_suffix(".yaml").read_text()
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_trace.py"), "--workload",
                    "decode", "--iterations", "200", "--out", str(tmp_path / "d")],
                   check=True, capture_output=True, timeout=120)
    assert (tmp_path / "d.csv").read_bytes() == example.with_suffix(".csv").read_bytes()
