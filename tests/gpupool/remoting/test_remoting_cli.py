"""``gpupool remoting PROFILE``: the figures, the JSON keys, the text view and the exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpupool.cli import main

ROOT = Path(__file__).resolve().parents[3]
BERT = str(ROOT / "examples" / "profiles" / "bert-inference.yaml")
RESNET = str(ROOT / "examples" / "profiles" / "resnet50-inference.yaml")
DESIGN_KEYS = {"profile", "max_overhead", "feasible"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["remoting", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code, out, _ = run(capsys, *argv, "--format", "json")
    return code, json.loads(out)


def test_rtt_and_bandwidth_give_the_overhead(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = as_json(capsys, BERT, "--rtt-us", "5", "--bandwidth-gbps", "200")
    # 12,000 x 5 µs = 60 ms; 1.2e10 bit / 200 Gbit/s = 60 ms; 120 ms of 2 s
    assert r["predicted_overhead"] == pytest.approx(0.06)
    assert r["max_overhead"] == 0.05 and r["feasible"] is False and code == 1
    assert r["rtt_max_us"] == pytest.approx(0.04 / 12000 * 1e6)  # 0.1 s - 0.06 s left
    assert r["bandwidth_min_gbps"] == pytest.approx(1.2e10 / 0.04 / 1e9)
    assert r["profile"]["name"] == "bert-inference" and r["model"] == "first-order"
    assert r.keys() >= DESIGN_KEYS


def test_bandwidth_only_gives_the_largest_rtt(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = as_json(capsys, BERT, "--bandwidth-gbps", "400", "--max-overhead", "0.2")
    # 1.2e10 bit / 400 Gbit/s = 30 ms of the 400 ms budget; 370 ms / 12,000 calls = 30.8 µs
    assert r["rtt_max_us"] == pytest.approx(0.37 / 12000 * 1e6)
    assert "predicted_overhead" not in r and "bandwidth_min_gbps" not in r
    assert r["feasible"] is True and code == 0
    assert r["lowest_rtt_floor"] == {"kind": "efa", "rtt_floor_us": 15.0, "below": False}


def test_an_rtt_below_every_kinds_floor_is_infeasible(
        capsys: pytest.CaptureFixture[str]) -> None:
    # 170 ms / 12,000 calls = 14.2 µs: under EFA's ~15 µs, the least floor of any network kind
    # (TCP and ENA Express ~30 µs). It used to PASS: some RTT above 0 does meet it.
    code, r = as_json(capsys, BERT, "--bandwidth-gbps", "400", "--max-overhead", "0.1")
    assert r["rtt_max_us"] == pytest.approx(0.17 / 12000 * 1e6)
    assert r["lowest_rtt_floor"]["below"] is True
    assert r["feasible"] is False and code == 1
    assert any("infeasible on any network kind" in a for a in r["advice"])
    code, out, _ = run(capsys, BERT, "--bandwidth-gbps", "400", "--max-overhead", "0.1")
    assert code == 1
    assert ("verdict: FAIL — the RTT must stay under 14.2 µs at 400 Gbps, below every network "
            "kind's floor (the least, efa, ~15 µs): infeasible on any network kind"
            ) in " ".join(out.split())


def test_infeasible_is_null_never_negative(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = as_json(capsys, BERT, "--bandwidth-gbps", "25")
    assert r["rtt_max_us"] is None and r["feasible"] is False and code == 1
    assert any("even a zero RTT needs at least 120 Gbps" in a for a in r["advice"])
    code, r = as_json(capsys, BERT, "--rtt-us", "30")
    assert r["bandwidth_min_gbps"] is None and r["feasible"] is False and code == 1


def test_instance_type_budgets_against_the_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    from gpupool.catalog import load_catalog

    baseline = load_catalog().get("g4dn.xlarge").network_baseline_gbps  # 5, not "up to 25"
    _, r = as_json(capsys, BERT, "--instance-type", "g4dn.xlarge", "--rtt-us", "10")
    assert r["network"]["bandwidth_gbps"] == baseline  # under the 10 Gbps flow cap
    assert r["network"]["bandwidth_source"] == (
        "g4dn.xlarge: one flow of TCP over ENA in a cluster placement group (5 Gbps baseline)")
    assert r["instance_type"]["network_baseline_gbps"] == baseline
    assert r["predicted_overhead"] == pytest.approx(
        (12000 * 10e-6 + 1.2e10 / (baseline * 1e9)) / 2.0)


def test_instance_type_budgets_against_one_flow(capsys: pytest.CaptureFixture[str]) -> None:
    # g4dn.16xlarge has a 50 Gbps baseline, but one TCP flow in a cluster placement group is
    # capped at 10 Gbps: the remoting client's one connection never sees the 50
    _, r = as_json(capsys, BERT, "--instance-type", "g4dn.16xlarge", "--rtt-us", "10")
    assert r["instance_type"]["network_baseline_gbps"] == 50
    assert r["network"]["bandwidth_gbps"] == 10
    assert r["network"]["kind"] == "tcp" and r["network"]["flow_cap_gbps"] == 10
    assert r["network"]["rtt_floor_us"] == 30
    assert "capped at 10 Gbps per flow" in r["network"]["bandwidth_source"]
    assert r["predicted_overhead"] == pytest.approx((12000 * 10e-6 + 1.2e10 / 10e9) / 2.0)
    assert r["bandwidth_min_gbps"] is None  # 12,000 x 10 µs = 120 ms, over the 100 ms budget
    # EFA has no documented per-flow cap: the baseline is what one flow can count on
    _, r = as_json(capsys, BERT, "--instance-type", "g4dn.16xlarge", "--network", "efa",
                   "--rtt-us", "10")
    assert r["network"]["bandwidth_gbps"] == 50 and r["network"]["flow_cap_gbps"] is None
    assert r["predicted_overhead"] == pytest.approx((12000 * 10e-6 + 1.2e10 / 50e9) / 2.0)
    # a bandwidth given on the command line wins, and the advice says it is above one flow
    _, r = as_json(capsys, BERT, "--instance-type", "g4dn.16xlarge", "--bandwidth-gbps", "40",
                   "--rtt-us", "10")
    assert r["network"]["bandwidth_gbps"] == 40
    assert any("more than one flow of TCP over ENA" in a and "(10 Gbps)" in a
               for a in r["advice"])


def _by_kind(r: dict) -> dict[str, dict]:
    return {k["kind"]: k for k in r["network_kinds"]}


def test_every_network_kind_of_the_type(capsys: pytest.CaptureFixture[str]) -> None:
    _, r = as_json(capsys, BERT, "--instance-type", "p5.4xlarge", "--max-overhead", "0.5",
                   "--latency", "pipelined")
    kinds = _by_kind(r)
    assert list(kinds) == ["tcp", "ena-express", "efa"]
    assert all(k["supported"] for k in kinds.values())  # DescribeInstanceTypes: SRD and EFA
    assert [kinds[k]["flow_cap_gbps"] for k in kinds] == [10, 25, None]
    assert [kinds[k]["flow_gbps"] for k in kinds] == [10, 25, 100]
    assert [kinds[k]["rtt_floor_us"] for k in kinds] == [30, 30, 15]
    for k in kinds.values():  # first order at (floor, per-flow bandwidth), by hand
        by_hand = (12000 * k["rtt_floor_us"] * 1e-6 + 1.2e10 / (k["flow_gbps"] * 1e9)) / 2.0
        assert k["predicted_overhead"] == pytest.approx(by_hand)
        assert k["feasible"] is k["meets_budget"] is (by_hand <= 0.5)
    # 10 Gbps: 1.2 s of bytes, over the 1 s budget whatever the RTT; 25 Gbps: 0.48 s, 0.52 s
    # left for 12,000 round trips; 100 Gbps: 0.12 s, 0.88 s left
    assert kinds["tcp"]["rtt_max_us"] is None and kinds["tcp"]["feasible"] is False
    assert kinds["ena-express"]["rtt_max_us"] == pytest.approx(0.52 / 12000 * 1e6)
    assert kinds["efa"]["rtt_max_us"] == pytest.approx(0.88 / 12000 * 1e6)
    assert kinds["efa"]["bandwidth_min_gbps"] == pytest.approx(1.2e10 / (1.0 - 0.18) / 1e9)
    # the fixed keys budget the default kind (tcp): infeasible, and the advice names the others
    assert r["rtt_max_us"] is None and r["feasible"] is False
    assert any("ENA Express on p5.4xlarge meets the budget" in a and "--network ena-express" in a
               for a in r["advice"])


def test_kinds_the_type_lacks_never_pass(capsys: pytest.CaptureFixture[str]) -> None:
    _, r = as_json(capsys, BERT, "--instance-type", "g5.xlarge", "--bandwidth-gbps", "400",
                   "--rtt-us", "1")
    kinds = _by_kind(r)
    assert kinds["tcp"]["supported"] is True
    assert kinds["ena-express"]["supported"] is False and kinds["efa"]["supported"] is False
    assert "EnaSrdSupported is false" in kinds["ena-express"]["support"]
    assert all(k["flow_gbps"] == 2.5 for k in kinds.values())  # baseline under every cap
    assert not any(k["feasible"] for k in kinds.values())


def test_without_an_rtt_the_kind_floor_decides(capsys: pytest.CaptureFixture[str]) -> None:
    # budget 0.72 x 2 s = 1.44 s; at 10 Gbps the bytes take 1.2 s: 0.24 s / 12,000 = 20 µs
    # largest RTT, under TCP's ~30 µs floor: a network of that kind cannot get there
    code, r = as_json(capsys, BERT, "--instance-type", "g4dn.16xlarge", "--max-overhead", "0.72")
    assert r["rtt_max_us"] == pytest.approx(20.0)
    assert r["feasible"] is False and code == 1
    assert _by_kind(r)["tcp"]["feasible"] is False
    assert any("EFA on g4dn.16xlarge meets the budget" in a for a in r["advice"])
    # over EFA (50 Gbps per flow, ~15 µs floor), pipelined: 1.2 s / 12,000 = 100 µs
    code, r = as_json(capsys, BERT, "--instance-type", "g4dn.16xlarge", "--max-overhead", "0.72",
                      "--network", "efa", "--latency", "pipelined")
    assert r["rtt_max_us"] == pytest.approx(100.0) and r["feasible"] is True and code == 0
    # serialised, the link also carries the 80,000 asynchronous calls' RTT/2 one after another:
    # 12,000 x RTT + 80,000 x RTT/2 + 0.24 s of bytes within (1 + 0.72) x 2 s = 3.44 s gives
    # RTT ≤ 3.2 s / 52,000 = 61.5 µs, the tighter of the two limits; still reachable
    code, r = as_json(capsys, BERT, "--instance-type", "g4dn.16xlarge", "--max-overhead", "0.72",
                      "--network", "efa")
    assert r["latency"] == "serialised" and r["other_latency"]["rtt_max_us"] == pytest.approx(100)
    assert r["rtt_max_us"] == pytest.approx(3.2 / 52000 * 1e6) and r["feasible"] is True
    # a bare bandwidth: 20 µs is above the least floor of any kind (EFA's ~15 µs)
    code, r = as_json(capsys, BERT, "--bandwidth-gbps", "10", "--max-overhead", "0.72")
    assert r["rtt_max_us"] == pytest.approx(20.0) and r["feasible"] is True and code == 0
    assert "network_kinds" not in r


def test_trace_kinds_are_replayed(capsys: pytest.CaptureFixture[str]) -> None:
    _, r = as_json(capsys, RESNET, "--instance-type", "p5.4xlarge", "--network", "efa")
    efa = _by_kind(r)["efa"]
    _, at = as_json(capsys, RESNET, "--rtt-us", "15", "--bandwidth-gbps", "100")
    assert efa["predicted_overhead"] == pytest.approx(at["predicted_overhead"], rel=1e-12)
    assert efa["bandwidth_min_gbps"] == pytest.approx(at["bandwidth_min_gbps"], rel=1e-9)
    assert efa["predicted_overhead"] != pytest.approx(at["first_order"]["predicted_overhead"])
    assert efa["rtt_max_us"] is not None and efa["feasible"] is True
    assert r["rtt_max_us"] == pytest.approx(efa["rtt_max_us"], rel=1e-12)
    assert r["feasible"] is True


def test_trace_profile_replays_and_offers_what_ifs(capsys: pytest.CaptureFixture[str]) -> None:
    code, r = as_json(capsys, RESNET, "--rtt-us", "10", "--bandwidth-gbps", "200")
    assert r["model"] == "trace-replay" and code == 0
    assert r["trace"]["calls"] == 5520
    assert r["trace"]["sync_calls"] == r["profile"]["sync_calls"] == 140
    assert r["predicted_overhead"] < r["max_overhead"]
    assert r["first_order"]["predicted_overhead"] > 0
    rows = r["what_if"]["rows"]
    assert rows and rows[0]["calls"] == "cudaGetLastError" and rows[0]["count"] == 120
    assert all(row["as_async"] <= r["what_if"]["overhead"] + 1e-12 for row in rows)


def test_text_view_for_a_reviewer(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, BERT, "--rtt-us", "10", "--bandwidth-gbps", "100",
                       "--instance-type", "g5.xlarge")
    assert code == 1
    for text in ("bert-inference: remoting budget (first-order model, serialised latency)",
                 "12,000 synchronous", "budget: at most 5 % slower", "predicted overhead",
                 "12 %", "over 5 %", "tier: g5.xlarge (A10G)", "verdict: FAIL",
                 "above g5.xlarge's baseline", "advice:"):
        assert text in out, text


def test_text_view_lists_the_network_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, BERT, "--instance-type", "p5.4xlarge", "--max-overhead", "0.5",
                       "--network", "ena-express")
    assert code == 0
    assert "Network kinds of p5.4xlarge" in out
    assert "(p5.4xlarge: one flow of ENA Express (100 Gbps baseline, capped at 25 Gbps per " \
           "flow))" in " ".join(out.split())
    rows = {line.split()[0]: line for line in out.splitlines()
            if line.split() and line.split()[0] in ("tcp", "ena-express", "efa")}
    assert "10 Gbps (cap)" in rows["tcp"] and "FAIL" in rows["tcp"]
    assert "25 Gbps (cap)" in rows["ena-express"] and "PASS" in rows["ena-express"]
    assert "100 Gbps" in rows["efa"] and "15 µs" in rows["efa"] and "PASS" in rows["efa"]
    assert "ena-express floor ~30 µs: reachable" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([BERT], "expected --rtt-us, --bandwidth-gbps or --instance-type"),
        ([BERT, "--instance-type", "g4dn.xlarg"], "(did you mean g4dn.xlarge?)"),
        ([BERT, "--rtt-us", "5", "--network", "efa"], "--network: expected --instance-type too"),
        ([BERT, "--instance-type", "g4dn.xlarge", "--network", "efa"],
         "--network: expected a network kind g4dn.xlarge supports, got efa (EfaSupported is "
         "false"),
        (["nope.yaml", "--rtt-us", "1"], "nope.yaml: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err


@pytest.mark.parametrize("argv", [["--rtt-us", "-1"], ["--bandwidth-gbps", "0"],
                                  ["--max-overhead", "nan"], ["--bandwidth-gbps", "fast"]])
def test_bad_figures_are_usage_errors(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "gpupool", "remoting", BERT, *argv],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "expected" in proc.stderr


def test_a_bad_trace_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.csv").write_text(
        "name,kind,blocking,bytes_to_gpu,bytes_from_gpu,serialise_us,deserialise_us,"
        "process_us,gap_us,block_us\ncudaMalloc,SYNC,GPUBlocking,16,12,0.4,0.4,3.1,-2,0\n")
    (tmp_path / "p.yaml").write_text(Path(BERT).read_text() + "trace: t.csv\n")
    code, _, err = run(capsys, str(tmp_path / "p.yaml"), "--rtt-us", "5")
    assert code == 2
    assert err.strip().endswith(
        "line 2: gap_us: expected a finite number from 0 to 1e+10, got '-2'")
