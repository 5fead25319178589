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
    code, r = as_json(capsys, BERT, "--bandwidth-gbps", "400", "--max-overhead", "0.1")
    # 1.2e10 bit / 400 Gbit/s = 30 ms of the 200 ms budget; 170 ms / 12,000 calls
    assert r["rtt_max_us"] == pytest.approx(0.17 / 12000 * 1e6)
    assert "predicted_overhead" not in r and "bandwidth_min_gbps" not in r
    assert r["feasible"] is True and code == 0


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
    assert r["network"]["bandwidth_gbps"] == baseline
    assert r["network"]["bandwidth_source"] == "g4dn.xlarge baseline"
    assert r["instance_type"]["network_baseline_gbps"] == baseline
    assert r["predicted_overhead"] == pytest.approx(
        (12000 * 10e-6 + 1.2e10 / (baseline * 1e9)) / 2.0)


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
    for text in ("bert-inference: remoting budget (first-order model)",
                 "12,000 synchronous", "budget: at most 5 % slower", "predicted overhead",
                 "12 %", "over 5 %", "tier: g5.xlarge (A10G)", "verdict: FAIL",
                 "above g5.xlarge's baseline", "advice:"):
        assert text in out, text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([BERT], "expected --rtt-us, --bandwidth-gbps or --instance-type"),
        ([BERT, "--instance-type", "g4dn.xlarg"], "(did you mean g4dn.xlarge?)"),
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
    assert err.strip().endswith("line 2: gap_us: expected a finite number of at least 0, got '-2'")
