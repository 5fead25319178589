# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read)
"""Reserved capacity nobody uses (issue 17 section 4).

moto does not implement ``DescribeCapacityReservations`` (it answers NotImplementedError), so
that one call is answered by botocore's ``Stubber`` on the report's own EC2 client, which
checks the request and the answer against the EC2 service model; the pools, their groups and
their metrics come from the moto server over HTTP as everywhere else. The pools use launch
configurations, so discovery sends nothing to EC2 and the stub answers only the reservations.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from debt_fleet import PoolSpec, build_fleet

from gpupool.catalog import load_catalog
from gpupool.cli import main
from gpupool.debt import aws
from gpupool.debt.render import render_csv, render_text
from gpupool.debt.report import Report, build_report
from gpupool.debt.window import Window, iso

A10G = 1.006  # g5.xlarge, us-east-1 on-demand (catalog), one GPU
H100X8 = 55.04  # p5.48xlarge, eight GPUs


def reservations(window: Window) -> list[dict[str, Any]]:
    before = window.start - timedelta(days=3)
    return [
        # 3 of 4 g5.xlarge free all six hours, open, in the zone of the vision pool: 18 GPU-h
        {"CapacityReservationId": "cr-0a10g", "InstanceType": "g5.xlarge",
         "AvailabilityZone": "us-east-1a", "TotalInstanceCount": 4, "AvailableInstanceCount": 3,
         "State": "active", "StartDate": before, "EndDateType": "unlimited",
         "InstanceMatchCriteria": "open", "ReservationType": "default", "OwnerId": "123456789012",
         "InstancePlatform": "Linux/UNIX", "Tenancy": "default",
         "Tags": [{"Key": "Team", "Value": "vision"}]},
        # a Capacity Block for ML of one p5.48xlarge that began 2 h before the window's end,
        # unused, no pool of its type: 1 × 8 GPUs × 2 h = 16 GPU-h
        {"CapacityReservationId": "cr-0block", "InstanceType": "p5.48xlarge",
         "AvailabilityZone": "us-east-1b", "TotalInstanceCount": 1, "AvailableInstanceCount": 1,
         "State": "active", "StartDate": window.end - timedelta(hours=2),
         "EndDate": window.end + timedelta(days=1), "EndDateType": "limited",
         "InstanceMatchCriteria": "targeted", "ReservationType": "capacity-block",
         "Tags": [{"Key": "team", "Value": "research"}]},
        # targeted, fully used
        {"CapacityReservationId": "cr-0full", "InstanceType": "g4dn.xlarge",
         "AvailabilityZone": "us-east-1a", "TotalInstanceCount": 2, "AvailableInstanceCount": 0,
         "State": "active", "StartDate": before, "InstanceMatchCriteria": "targeted",
         "Tags": [{"Key": "team", "Value": "vision"}]},
        # expired three hours into the window: billed for 3 h, its use then unknown
        {"CapacityReservationId": "cr-0gone", "InstanceType": "g4dn.xlarge",
         "AvailabilityZone": "us-east-1a", "TotalInstanceCount": 2, "AvailableInstanceCount": 0,
         "State": "expired", "StartDate": before, "EndDate": window.start + timedelta(hours=3),
         "InstanceMatchCriteria": "open"},
        # not a GPU type: not this report's business
        {"CapacityReservationId": "cr-0cpu", "InstanceType": "m5.large",
         "AvailabilityZone": "us-east-1a", "TotalInstanceCount": 10,
         "AvailableInstanceCount": 10, "State": "active", "StartDate": before},
    ]


def report_with(window: Window, answers: list[dict[str, Any]]) -> Report:
    session = boto3.session.Session()
    build_fleet(session, [
        PoolSpec("vision", "g5.xlarge", "vision", in_service=[1] * 6, utilisation=[60] * 6,
                 via="configuration"),
        PoolSpec("t4", "g4dn.xlarge", "vision", in_service=[2] * 6, utilisation=[60] * 6,
                 via="configuration"),
    ], window)
    clients = aws.make_clients("us-east-1", session)
    with Stubber(clients.ec2) as stub:  # validates against the EC2 service model
        stub.add_response("describe_capacity_reservations", {"CapacityReservations": answers},
                          {"MaxResults": 1000})
        report = build_report(clients, window, load_catalog(region="us-east-1"),
                              compute_optimizer=False, reservations=True)
        stub.assert_no_pending_responses()
    return report


def test_reserved_and_unused_per_reservation_and_team(moto: str, window: Window) -> None:
    report = report_with(window, reservations(window))
    d = report.to_dict()
    rows = {r["reservation"]: r for r in d["reservations"]}
    assert set(rows) == {"cr-0a10g", "cr-0block", "cr-0full", "cr-0gone"}  # no cr-0cpu
    a = rows["cr-0a10g"]
    assert (a["hours_in_window"], a["reserved_gpu_hours"], a["unused_gpu_hours"],
            a["unused_usd"]) == (6.0, 24.0, 18.0, round(18 * A10G, 2))
    assert (a["team"], a["kind"], a["zone"]) == ("vision", "default", "us-east-1a")
    assert a["pools_that_could_use_it"] == ["vision"]
    assert "vision can use it as they scale out (open" in a["advice"]
    b = rows["cr-0block"]
    assert (b["hours_in_window"], b["reserved_gpu_hours"], b["unused_gpu_hours"],
            b["unused_usd"]) == (2.0, 16.0, 16.0, round(2 * H100X8, 2))
    assert b["kind"] == "capacity-block" and "upfront fee" in b["price_basis"]
    assert b["pools_that_could_use_it"] == [] and "no GPU pool of that type" in b["advice"]
    assert (rows["cr-0full"]["unused_gpu_hours"], rows["cr-0full"]["advice"]) == (0.0,
                                                                                  "fully used")
    assert rows["cr-0full"]["pools_that_could_use_it"] == ["t4"]
    gone = rows["cr-0gone"]
    assert (gone["hours_in_window"], gone["reserved_gpu_hours"], gone["unused_gpu_hours"]) == (
        3.0, 6.0, None)
    teams = {t["team"]: t for t in d["reservation_teams"]}
    assert teams["vision"]["unused_gpu_hours"] == 18.0
    assert teams["research"]["unused_usd"] == round(2 * H100X8, 2)
    assert teams["(untagged)"]["not_known"] == 1
    assert d["reservation_totals"] == {"reservations": 4, "reserved_gpu_hours": 58.0,
                                       "unused_gpu_hours": 34.0,
                                       "unused_usd": round(18 * A10G, 2) + round(2 * H100X8, 2),
                                       "not_known": 1}
    # the pools' own figures are unchanged by it
    assert {p["pool"]: p["debt_gpu_hours"] for p in d["pools"]} == {"vision": 2.4, "t4": 4.8}


def test_reservations_in_text_and_csv(moto: str, window: Window) -> None:
    report = report_with(window, reservations(window))
    text = render_text(report, width=220)
    assert "Reserved capacity nobody uses: 4 GPU reservation(s) in force" in text
    assert "cr-0block (capacity-block, active, targeted) us-east-1b 1×p5.48xlarge, research: " \
           "16.0 GPU-h unused" in text
    assert "team vision: 18.0 GPU-h reserved and unused" in text
    rows = list(csv.DictReader(io.StringIO(render_csv(report, "reservation"))))
    assert [r["reservation"] for r in rows] == ["cr-0a10g", "cr-0block", "cr-0full", "cr-0gone"]
    assert rows[0]["unused_gpu_hours"] == "18.0" and rows[3]["unused_gpu_hours"] == ""


def test_without_the_flag_nothing_is_read_or_written(moto: str, window: Window) -> None:
    """DescribeCapacityReservations is not called unless asked; the JSON is as before."""
    session = boto3.session.Session()
    build_fleet(session, [PoolSpec("vision", "g5.xlarge", in_service=[1] * 6,
                                   utilisation=[60] * 6, via="configuration")], window)
    report = build_report(aws.make_clients("us-east-1", session), window, load_catalog(),
                          compute_optimizer=False)
    d = report.to_dict()
    assert "reservations" not in d and "reservation_teams" not in d
    assert "DescribeCapacityReservations" not in d["api_calls_detail"]["by_operation"]


def test_refused_read_is_one_line(moto: str, window: Window, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Against moto (which lacks the call) the command fails in one line naming it."""
    code = main(["debt", "--start", iso(window.start), "--end", iso(window.end), "--period",
                 "3600", "--reservations", "--format", "json", "--output",
                 str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and "DescribeCapacityReservations" in err and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_by_reservation_needs_the_flag(moto: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["debt", "--since", "2h", "--by", "reservation"]) == 2
    assert "--by reservation: expected --reservations" in capsys.readouterr().err


def test_the_json_document_is_still_a_snapshot(moto: str, window: Window) -> None:
    from gpupool.debt.snapshot import parse_snapshot

    d = json.loads(json.dumps(report_with(window, reservations(window)).to_dict(),
                              default=str))
    assert {p.pool for p in parse_snapshot(d, "s.json").pools} == {"vision", "t4"}
