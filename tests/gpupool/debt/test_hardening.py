# ruff: noqa: RUF003  (× as users read it)
"""Issue 16 items 10 and 11: what a hostile or broken endpoint, a hostile name and a narrow
terminal did to ``gpupool debt``. Each test failed on the main of its day."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import synthetic as syn
from botocore.stub import Stubber
from debt_fleet import PoolSpec, build_fleet
from moto_proxy import FaultProxy, Reply, serving

from gpupool.cli import main
from gpupool.debt.aws import ApiCalls, Clients, aws_errors
from gpupool.debt.metrics import plan_queries, query, read_series
from gpupool.debt.render import render_csv, render_text
from gpupool.debt.report import LOW_UTILISATION
from gpupool.debt.snapshot import parse_snapshot
from gpupool.debt.window import Window, iso, resolve_window
from gpupool.errors import InputError

# --------------------------------------------------------------------------- impossible readings


def test_impossible_readings_are_findings_never_clamped() -> None:
    """150 % utilisation and -1 instances in service are left out, not clamped to 100 % and 0:
    the bucket with 150 % is unmeasured, the one with -1 has no allocation figure."""
    r = syn.report([(syn.pool("broken"), [2, 2, -1, 2], [150, 10, 10, 10])], syn.window(4))
    (row,) = r.to_dict()["pools"]
    assert (row["allocated_gpu_hours"], row["used_gpu_hours"], row["debt_gpu_hours"],
            row["unmeasured_gpu_hours"], row["utilisation"]) == (6.0, 0.4, 3.6, 2.0, 0.1)
    assert (row["status"], row["impossible_readings"]) == ("partial", 2)
    (finding,) = [f for f in r.findings if f["finding"] == "impossible-reading"]
    assert "2 impossible reading(s) left out, never clamped" in finding["message"]
    assert "first: GroupInServiceInstances -1 at 2026-11-23 02:00 UTC" in finding["message"]
    # the guardrail reads the count back and will not vouch for the pool
    assert parse_snapshot(r.to_dict(), "s.json").pools[0].impossible_readings == 2


# --------------------------------------------------------------------------- not the document

class _Answer(FaultProxy):
    """Answers 200 with ``body`` to what ``intercept`` matches, forwards the rest to moto."""

    body = b""
    intercept = "\x00"  # nothing, until a test says what

    def answer(self, data: bytes) -> Reply | None:
        target = self.headers.get("x-amz-target") or ""  # JSON protocol: Service.Operation
        if self.intercept in target or self.intercept.encode() in data:
            return 200, {"content-type": "text/html"}, self.body
        return None


@pytest.fixture
def answering(moto: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Answer]]:
    with serving(_Answer, moto, monkeypatch) as served:
        yield served


BODIES = {"html": b"<html><body><h1>Sign in to the proxy</h1></body></html>", "empty": b"",
          "truncated": b'<DescribeAutoScalingGroupsResponse xmlns="http://autoscaling.amazonaws'
                       b'.com/doc/2011-01-01/"><DescribeAutoScalingGroupsResult><AutoScaling'}


@pytest.mark.parametrize("kind", sorted(BODIES))
@pytest.mark.parametrize("operation", ["DescribeAutoScalingGroups", "GetMetricData"])
def test_a_200_that_is_not_the_document_is_a_read_failure(
        answering: type[_Answer], kind: str, operation: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An HTML login page, an empty or a cut-off body with status 200: exit 2 naming the call,
    never a report of "no group metrics" (GetMetricData's CBOR reader makes {} of them)."""
    window = resolve_window(since="2h", start=None, end=None, period=3600)
    build_fleet(boto3.session.Session(), [PoolSpec("p", in_service=[1, 1],
                                                   utilisation=[50, 50])], window)
    answering.body, answering.intercept = BODIES[kind], operation
    code = main(["debt", "--start", iso(window.start), "--end", iso(window.end)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("gpupool debt: http://127.0.0.1:") and operation in line
    assert "nothing was read" in line


def _cloudwatch() -> Any:
    return boto3.session.Session().client("cloudwatch", region_name="us-east-1",
                                          aws_access_key_id="x", aws_secret_access_key="y")


def test_a_repeated_next_token_stops_with_an_error() -> None:
    cw = _cloudwatch()
    window = syn.window(2)
    pools = [syn.pool("a")]
    queries = [query(q, p, s, 3600) for q, p, s in plan_queries(pools, window)]
    common = {"MetricDataQueries": queries, "StartTime": window.start, "EndTime": window.end,
              "ScanBy": "TimestampAscending", "MaxDatapoints": 100800}
    clients = Clients(autoscaling=None, ec2=None, cloudwatch=cw, compute_optimizer=None,
                      calls=ApiCalls(), region="us-east-1")
    with Stubber(cw) as stub:
        stub.add_response("get_metric_data", {"MetricDataResults": [], "NextToken": "t1"},
                          common)
        stub.add_response("get_metric_data", {"MetricDataResults": [], "NextToken": "t1"},
                          {**common, "NextToken": "t1"})
        with pytest.raises(InputError) as e, aws_errors("GetMetricData", "https://cw"):
            read_series(clients, pools, window)
        stub.assert_no_pending_responses()
    assert "the same NextToken came back twice after 2 pages" in str(e.value)


# --------------------------------------------------------------------------- names as text

def test_names_are_text_never_markup_or_escapes() -> None:
    r = syn.report([(syn.pool("gpu[/]pool", team="[bold]research\x1b[31m"), [1] * 4,
                     [10] * 4)], syn.window(4))
    text = render_text(r, width=200)
    assert "gpu[/]pool" in text and "[bold]research\\x1b[31m" in text
    assert "\x1b" not in text


def test_csv_cells_that_would_be_formulas_are_escaped() -> None:
    r = syn.report([(syn.pool("=HYPERLINK(\"http://x\")", team="+1"), [1] * 4, [10] * 4),
                    (syn.pool("@SUM(A1)", team="-2"), [1] * 4, [10] * 4)], syn.window(4))
    rows = list(csv.DictReader(io.StringIO(render_csv(r))))
    assert {(row["pool"], row["team"]) for row in rows} == {
        ("'=HYPERLINK(\"http://x\")", "'+1"), ("'@SUM(A1)", "'-2")}
    assert {row["allocated_gpu_hours"] for row in rows} == {"4.0"}  # numbers stay numbers
    teams = list(csv.DictReader(io.StringIO(render_csv(r, "team"))))
    assert {t["team"] for t in teams} == {"'+1", "'-2"}


# --------------------------------------------------------------------------- chart, deadline

@pytest.fixture
def fleet(moto: str) -> Window:
    window = resolve_window(since="3h", start=None, end=None, period=3600)
    build_fleet(boto3.session.Session(), [PoolSpec("idle", in_service=[2] * 3,
                                                   utilisation=[5] * 3)], window)
    return window


def _debt(window: Window, *args: str) -> list[str]:
    return ["debt", "--start", iso(window.start), "--end", iso(window.end), *args]


def test_a_failed_chart_does_not_lose_the_report(fleet: Window, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "debt.svg"
    taken.mkdir()  # a directory where the chart should go: savefig fails after drawing
    code = main(_debt(fleet, "--format", "json", "--chart", str(taken)))
    out, err = capsys.readouterr()
    assert code == 2
    doc = "".join(line for line in out.splitlines() if not line.startswith("Unable to find"))
    assert json.loads(doc)["pools"][0]["pool"] == "idle"  # the report was written first
    (line,) = err.splitlines()
    assert line.startswith(f"gpupool debt: --chart {taken}: cannot write there")
    assert line.endswith("the report itself was written")
    # a chart into a directory that does not exist is refused before any API call
    code = main(_debt(fleet, "--chart", str(tmp_path / "no" / "debt.png")))
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and "expected an existing directory" in err


def test_an_overall_deadline_ends_the_read(fleet: Window, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The clock advances 100 s each time it is read: created at 0, the first two calls are
    sent at 100 and 200, the third (GetMetricData) would be at 300 > 250. No waiting."""
    from gpupool.debt import deadline as deadline_module

    ticks = iter(range(0, 10_000, 100))
    monkeypatch.setattr(deadline_module, "clock", lambda: float(next(ticks)))
    code = main(_debt(fleet, "--deadline", "250"))
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "gpupool debt: --deadline 250: the reads did not finish in time (AWS GetMetricData not "
        "sent); nothing is reported: give more time with --deadline, or a shorter window"]
    assert main(_debt(fleet, "--deadline", "0")) == 2
    assert "--deadline 0: expected seconds above 0" in capsys.readouterr().err


# --------------------------------------------------------------------------- readable output

def _wide_report() -> Any:
    return syn.report([
        (syn.pool("prod-inference-asg-3c9f0e1-with-a-long-name", "g4dn.12xlarge",
                  team="ml-platform-inference"), [60] * 24, [7] * 24),
        (syn.pool("b", team="research"), [1] * 24, [80] * 24),
    ], syn.window(24))


@pytest.mark.parametrize("width", [100, 80, 64])
def test_the_table_fits_without_cutting_figures(width: int) -> None:
    text = render_text(_wide_report(), width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    # 60 × 4 T4 × 24 h = 5,760 allocated, 93 % of it debt: every figure whole
    assert "5,760.0" in text and "5,356.8" in text and "7.0%" in text
    d = _wide_report().to_dict()
    debt_usd = next(p["debt_usd"] for p in d["pools"] if p["pool"].startswith("prod"))
    assert f"${debt_usd:,.2f}" in text
    if width == 64:
        assert ("left out to fit 64 columns; --format csv or json has every column"
                in " ".join(text.split()))
    assert _wide_report().threshold == LOW_UTILISATION


def test_columns_is_honoured_when_piped(fleet: Window, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "72")
    assert main(_debt(fleet)) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if not line.startswith("Unable to find")]
    assert max(len(line) for line in lines) <= 72 and "…" not in out
    monkeypatch.delenv("COLUMNS")
    assert main(_debt(fleet)) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()
               if not line.startswith("Unable to find")) <= 100
