"""Issue 16 item 27, through ``gpupool remoting``: both latency models in the budget and the
JSON, the launch-bound example, the network-time share, and the cheapest proxy and kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpupool.cli import main

ROOT = Path(__file__).resolve().parents[3]
BERT = str(ROOT / "examples" / "profiles" / "bert-inference.yaml")
DECODE = str(ROOT / "examples" / "profiles" / "decode-launch-bound.yaml")


def as_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["remoting", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("rtt", ["20", "30", "40"])
def test_a_launch_bound_trace_by_both_latency_models(
        capsys: pytest.CaptureFixture[str], rtt: str) -> None:
    """The case the issue measured: launches faster than RTT/2 apart. Pipelined, they overlap
    on the wire and only the per-token synchronise pays a round trip; serialised (rperf's and
    the emulator's model), every launch's RTT/2 waits for the previous arrival."""
    net = ("--rtt-us", rtt, "--bandwidth-gbps", "100", "--max-overhead", "0.3")
    code, s = as_json(capsys, DECODE, *net)
    _, p = as_json(capsys, DECODE, *net, "--latency", "pipelined")
    assert s["model"] == "trace-replay" and s["latency"] == "serialised"  # the default
    assert p["latency"] == "pipelined"
    assert p["predicted_overhead"] < 0.25 < 0.8 < s["predicted_overhead"]
    assert s["feasible"] is False and code == 1 and p["feasible"] is True
    # each run carries the other model's figures, the same as asking for it
    assert s["other_latency"]["latency"] == "pipelined"
    assert s["other_latency"]["predicted_overhead"] == pytest.approx(p["predicted_overhead"])
    assert p["other_latency"]["predicted_overhead"] == pytest.approx(s["predicted_overhead"])
    assert any("only if the remoting layer keeps many requests in flight" in a
               for a in s["advice"])


def test_the_budget_solves_under_each_model(capsys: pytest.CaptureFixture[str]) -> None:
    _, s = as_json(capsys, DECODE, "--bandwidth-gbps", "100", "--max-overhead", "0.3")
    _, p = as_json(capsys, DECODE, "--bandwidth-gbps", "100", "--max-overhead", "0.3",
                   "--latency", "pipelined")
    assert s["rtt_max_us"] < 15 < p["rtt_max_us"]  # under every network kind's floor
    assert s["feasible"] is False and p["feasible"] is True
    _, at_edge = as_json(capsys, DECODE, "--bandwidth-gbps", "100", "--max-overhead", "0.3",
                         "--rtt-us", str(s["rtt_max_us"]))
    assert at_edge["predicted_overhead"] == pytest.approx(0.3, abs=1e-6)


def test_the_share_named_is_the_share_given(capsys: pytest.CaptureFixture[str]) -> None:
    # 12,000 x 5 µs = 60 ms of round trips; 1.5e9 B at 100 Gbps = 120 ms of bytes: bytes are
    # two thirds of the network time (the old line called the round trips' third "bytes")
    _, r = as_json(capsys, BERT, "--rtt-us", "5", "--bandwidth-gbps", "100",
                   "--max-overhead", "0.5")
    assert r["first_order"]["latency_s"] == pytest.approx(0.06)
    assert r["first_order"]["transfer_s"] == pytest.approx(0.12)
    assert "67 % of the network time is bytes moved (first order): that is the lever to pull " \
           "first." in r["advice"]
    _, r = as_json(capsys, BERT, "--rtt-us", "20", "--bandwidth-gbps", "100",
                   "--max-overhead", "0.5")  # 240 ms of round trips against 120 ms of bytes
    assert any(a.startswith("67 % of the network time is waiting on round trips")
               for a in r["advice"])


def test_the_cheapest_proxy_of_the_gpu_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    # T4 sizes with one GPU: g4dn.xlarge (5 Gbps), 2xlarge (10), 4xlarge (20), 8xlarge and
    # 16xlarge (50, EFA). TCP flows are capped at 10 Gbps: 12,000 x 30 µs + 1.2 s of bytes =
    # 1.56 s, 78 % of 2 s, over 50 %. EFA on g4dn.8xlarge: 12,000 x 15 µs + 0.24 s = 0.42 s,
    # 21 % (80,000 x 7.5 µs on the serialised link fits in the run): the cheapest that meets.
    _, r = as_json(capsys, BERT, "--instance-type", "g4dn.xlarge", "--max-overhead", "0.5")
    cheap = r["cheapest_proxy"]
    assert cheap["scope"].startswith("sizes of T4") and cheap["candidates"] == 7
    found = cheap["found"]
    assert (found["instance_type"], found["kind"]) == ("g4dn.8xlarge", "efa")
    assert found["predicted_overhead"] == pytest.approx(0.21)
    assert found["price_per_hour"] == 2.176 and cheap["price_region"] == "us-east-1"
    assert r["feasible"] is False  # g4dn.xlarge itself does not
    assert any("Cheapest proxy that meets the budget" in a and "g4dn.8xlarge (T4) over EFA" in a
               and "$2.176/h" in a for a in r["advice"])


def test_the_cheapest_proxy_of_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    from gpupool.catalog import load_catalog
    from gpupool.remoting.budget import predicted_overhead
    from gpupool.remoting.kinds import kind_options
    from gpupool.remoting.latency import Latency
    from gpupool.remoting.profile import load_profile

    _, r = as_json(capsys, BERT, "--rtt-us", "5", "--bandwidth-gbps", "100",
                   "--max-overhead", "0.5")
    found = r["cheapest_proxy"]["found"]
    profile = load_profile(BERT)
    catalog = load_catalog()
    meeting = sorted(
        (t.price_per_hour, t.instance_type, str(o.kind)) for t in catalog
        if t.gpu_maker == "NVIDIA" and t.gpu_count == 1 and t.price_per_hour is not None
        for o in kind_options(t) if o.supported
        and predicted_overhead(profile, o.rtt_floor_us, o.flow_gbps,
                               latency=Latency.SERIALISED) <= 0.5)
    assert (found["price_per_hour"], found["instance_type"], found["kind"]) == meeting[0]


def test_no_proxy_meets_it_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    _, r = as_json(capsys, BERT, "--instance-type", "g4dn.xlarge", "--max-overhead", "0.01")
    assert r["cheapest_proxy"]["found"] is None
    assert any(a.startswith("No proxy meets the budget") for a in r["advice"])


def test_text_view_names_the_model_and_the_other(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["remoting", DECODE, "--rtt-us", "30", "--bandwidth-gbps", "100"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1
    assert "decode-launch-bound: remoting budget (per-call replay of the trace, serialised " \
           "latency)" in out
    assert "with pipelined latency (requests in flight overlap their RTT/2): overhead" in out
    assert "verdict: FAIL" in out
    # serialised, this trace needs an RTT under 10.6 µs: no network kind's floor is that low
    assert "No proxy meets the budget at its network kinds' RTT floors" in out
    assert "the link carries the 5,200 asynchronous calls' one-way trips (30 µs / 2 each)" in out
    assert "The 200 synchronous calls alone wait 6 ms at 30 µs" in out
