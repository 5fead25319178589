# ruff: noqa: RUF003  (× is the multiplication sign users read)
"""``gpupool debt`` end to end against a moto server: formats, chart, output, and bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import boto3
import pytest
from debt_fleet import PoolSpec, build_fleet

from gpupool.cli import main
from gpupool.debt.window import Window, iso, resolve_window

DESIGN_POOL_KEYS = {"pool", "team", "instance_type", "gpus_per_instance", "capacity_gpu_hours",
                    "allocated_gpu_hours", "used_gpu_hours", "debt_gpu_hours",
                    "idle_gpu_hours", "utilisation", "debt_usd"}


@pytest.fixture
def fleet(moto: str) -> Window:
    """Two pools over the last six whole hours (hourly buckets). Tests ask for this exact
    window with --start/--end: a `--since 6h` resolved again at run time would move to the next
    hour when the run crosses one, and miss the fleet's first bucket."""
    window = resolve_window(since="6h", start=None, end=None, period=3600)
    build_fleet(boto3.session.Session(), [
        PoolSpec("idle-pool", "g4dn.xlarge", "research", max_size=8, in_service=[4] * 6,
                 utilisation=[5] * 6),
        PoolSpec("dark-pool", "g6.xlarge", "vision", max_size=2, in_service=[1] * 6),
    ], window)
    return window


MOTO_NOISE = "Unable to find appropriate backend"  # moto's server thread prints this line


def run(capsys: pytest.CaptureFixture[str], fleet: Window, *args: str) -> tuple[int, str, str]:
    code = main(["debt", "--start", iso(fleet.start), "--end", iso(fleet.end),
                 "--period", "3600", *args])
    out, err = capsys.readouterr()
    out = "".join(line for line in out.splitlines(keepends=True)
                  if not line.startswith(MOTO_NOISE))
    return code, out, err


def test_json_has_the_design_keys(fleet: Window, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, fleet, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert {"window", "pools", "teams", "totals", "api_calls"} <= doc.keys()
    assert {"start", "end", "period_s"} <= doc["window"].keys()
    assert doc["window"]["period_s"] == 3600
    for row in doc["pools"]:
        assert row.keys() >= DESIGN_POOL_KEYS
    pools = {r["pool"]: r for r in doc["pools"]}
    assert pools["idle-pool"]["debt_gpu_hours"] == 22.8  # 4 T4 × 6 h × 95 % idle
    assert pools["dark-pool"]["status"] == "not measured"
    assert pools["dark-pool"]["used_gpu_hours"] is None
    # groups with instance overrides need no launch template read: four calls in all
    assert doc["api_calls_detail"]["by_operation"] == {
        "DescribeAutoScalingGroups": 1, "DescribePolicies": 1, "GetMetricData": 1,
        "GetAutoScalingGroupRecommendations": 1}
    assert doc["api_calls"] == 4


def test_csv_has_the_json_pool_columns(fleet: Window, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    code, out, _ = run(capsys, fleet, "--format", "json")
    pools = json.loads(out)["pools"]
    code, out, _ = run(capsys, fleet, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0].keys()) == list(pools[0].keys())
    dark = next(r for r in rows if r["pool"] == "dark-pool")
    assert dark["used_gpu_hours"] == "" and dark["debt_gpu_hours"] == ""  # missing, not 0
    code, out, _ = run(capsys, fleet, "--format", "csv", "--by", "team")
    teams = list(csv.DictReader(io.StringIO(out)))
    assert {t["team"] for t in teams} == {"research", "vision"}


def test_text_names_offenders_and_unmeasured_pools(fleet: Window,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, fleet)
    assert code == 0
    assert "idle-pool" in out and "not measured" in out
    assert "Top offenders: idle-pool (research): 5.0%" in out
    assert "the CloudWatch agent is not publishing GPU metrics" in out
    assert "AWS Compute Optimizer: off" in out


def test_chart_and_output_files(fleet: Window, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    chart, report = tmp_path / "debt.svg", tmp_path / "debt.json"
    code, out, err = run(capsys, fleet, "--by", "team", "--chart", str(chart), "--format", "json",
                         "--output", str(report))
    assert code == 0 and out == ""
    assert f"chart written to {chart}" in err and f"json report written to {report}" in err
    assert json.loads(report.read_text())["totals"]["allocated_gpu_hours"] == 30.0
    svg = chart.read_text()
    assert svg.startswith("<?xml") and "all GPU pools" in svg and "research" in svg


@pytest.mark.parametrize(("args", "expected"), [
    (["--region", "mars-east-1"], "gpupool debt: --region mars-east-1: expected an AWS region"),
    (["--chart", "debt.gif"], "gpupool debt: --chart debt.gif: expected a file name ending in "
                              ".png or .svg"),
    (["--since", "7d", "--start", "2026-01-01"], "gpupool debt: --since cannot be combined"),
])
def test_bad_input_is_one_line_and_exit_2(moto: str, capsys: pytest.CaptureFixture[str],
                                          args: list[str], expected: str) -> None:
    code = main(["debt", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(expected)


def test_no_credentials_is_one_line_and_exit_2(moto: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    code = main(["debt", "--since", "6h"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "gpupool debt: AWS credentials: expected credentials to read autoscaling groups and "
        "CloudWatch metrics (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO, or an "
        "instance role)"]


def test_help_stays_fast_no_boto3_or_matplotlib_at_import() -> None:
    import subprocess
    import sys

    code = ("import sys, gpupool.cli; gpupool.cli.build_parser(); "
            "print(sorted(m for m in ('boto3', 'matplotlib', 'gpupool.debt.report') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"



def test_progress_bar_on_a_terminal_only(fleet: Window, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The series being read are counted on stderr when it is a terminal; stdout stays the
    report (a pipe or a file gets no bar at all)."""
    code, out, err = run(capsys, fleet, "--format", "json")
    assert code == 0 and "reading metrics" not in err
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich: treat stderr as a terminal
    code, out, err = run(capsys, fleet, "--format", "json")
    assert code == 0 and json.loads(out)["pools"]
    assert "reading metrics" in err and "8/8" in err  # two pools × four series


def test_html_page_to_a_file(fleet: Window, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "debt.html"
    code, out, err = run(capsys, fleet, "--format", "html", "--output", str(page))
    assert code == 0 and out == "" and f"html report written to {page}" in err
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in html
    assert 'id="chart-pool"' in html and 'id="chart-team"' in html and "idle-pool" in html
    assert "dark-pool: not measured" in html


def test_forecast_beside_capacity(fleet: Window, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, fleet, "--forecast", "30d", "--format", "json")
    assert code == 0
    fc = json.loads(out)["forecast"]
    pools = {r["pool"]: r for r in fc["pools"]}
    assert fc["horizon_days"] == 30 and pools["idle-pool"]["capacity_gpus"] == 8
    assert pools["idle-pool"]["need_gpus"] == 4  # four in service all along, flat (one day)
    assert pools["idle-pool"]["trend_gpus_per_day"] is None


def test_bad_forecast_is_one_line_and_exit_2(moto: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["debt", "--forecast", "3 months"]) == 2
    err = capsys.readouterr().err
    assert err == ("gpupool debt: --forecast 3 months: expected a horizon in whole days or "
                   "weeks such as 30d, 90d or 12w, at most 730d\n")
