# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read)
"""``gpupool debt --accounts --regions`` against a moto server over HTTP: an AWS Organization
with member accounts reached through sts AssumeRole (moto keeps each account's state apart,
keyed by the assumed role's access key: tests/gpupool/debt/debt_org.py), and a fault-injecting
proxy in front of it for the accounts and regions that cannot be read.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from debt_fleet import PoolSpec
from debt_org import build_org, create_accounts
from moto_proxy import FaultProxy, Reply, serving

from gpupool.catalog import load_catalog
from gpupool.cli import main
from gpupool.debt import aws
from gpupool.debt.fleet import Fleet, build_fleet_report
from gpupool.debt.metrics import MAX_QUERIES
from gpupool.debt.render import render_csv, render_text
from gpupool.debt.window import Window, iso

MANAGEMENT = "123456789012"  # moto's default account: the caller, the organization's manager
REGIONS = ["eu-west-1", "us-east-1"]
T4_PER_GPU = 0.526  # g4dn.xlarge, us-east-1 on-demand (catalog)
MANY = 130  # pools in one scope: 520 series, two GetMetricData calls


def specs_for(ids: dict[str, str]) -> Any:
    def specs(account: str, region: str) -> list[PoolSpec]:
        if account == ids["research"]:  # the same pool name in both regions, different use
            util = 10 if region == "us-east-1" else 50
            return [PoolSpec("inference", "g4dn.xlarge", "research", min_size=2, desired=2,
                             in_service=[2] * 6, utilisation=[util] * 6)]
        if account == ids["ml"] and region == "us-east-1":
            # one datapoint a series: the budget counts series, and moto's state stays small
            return [PoolSpec(f"train-{i:03d}", "g4dn.xlarge", "ml", template="shared",
                             in_service=[1], utilisation=[40], max_series=[4], target=None)
                    for i in range(MANY)]
        return []
    return specs


@pytest.fixture
def org(moto: str, window: Window) -> dict[str, str]:
    """The management account (one pool of its own in us-east-1) and two member accounts."""
    session = boto3.session.Session()
    research, ml = create_accounts(session, ["research", "ml"])
    ids = {"research": research, "ml": ml, "management": MANAGEMENT}
    build_org(session, [research, ml], REGIONS, window, specs_for(ids))
    from debt_fleet import build_fleet
    build_fleet(session, [PoolSpec("platform-ci", "g4dn.xlarge", "platform", in_service=[1] * 6,
                                   utilisation=[90] * 6)], window)
    return ids


def rows(report: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["account"], r["region"], r["pool"]): r for r in report.to_dict()["pools"]}


def test_every_account_and_region(org: dict[str, str], window: Window) -> None:
    report = build_fleet_report(Fleet(concurrency=4), window, load_catalog(), None, REGIONS)
    d = report.to_dict()
    assert d["accounts"] == sorted(org.values()) and d["regions"] == REGIONS
    assert [(s["account"], s["region"], s["status"]) for s in d["scopes"]] == [
        (a, r, "read") for a in sorted(org.values()) for r in REGIONS]
    pools = rows(report)
    assert len(pools) == 1 + 2 + MANY
    # the same name in two regions of one account: two pools, each with its own figures
    east = pools[(org["research"], "us-east-1", "inference")]
    west = pools[(org["research"], "eu-west-1", "inference")]
    assert (east["allocated_gpu_hours"], east["used_gpu_hours"], east["debt_gpu_hours"]) == (
        12.0, 1.2, 10.8)
    assert (west["allocated_gpu_hours"], west["used_gpu_hours"], west["debt_gpu_hours"]) == (
        12.0, 6.0, 6.0)
    assert east["debt_usd"] == round(10.8 * T4_PER_GPU, 2)
    assert west["price_per_gpu_hour"] != east["price_per_gpu_hour"]  # priced in its region
    assert pools[(MANAGEMENT, "us-east-1", "platform-ci")]["team"] == "platform"
    assert sum(k[0] == org["ml"] for k in pools) == MANY
    # the call budget holds per account-region: ⌈series / 500⌉ GetMetricData calls
    for s in d["scopes"]:
        assert s["get_metric_data"] == s["expected_get_metric_data"] == math.ceil(
            s["series"] / MAX_QUERIES)
    ml_east = next(s for s in d["scopes"] if (s["account"], s["region"]) == (org["ml"],
                                                                              "us-east-1"))
    assert (ml_east["series"], ml_east["get_metric_data"]) == (4 * MANY, 2)
    ops = d["api_calls_detail"]["by_operation"]
    assert (ops["ListAccounts"], ops["AssumeRole"], ops["GetCallerIdentity"]) == (1, 2, 1)
    assert ops["GetMetricData"] == d["api_calls_detail"]["get_metric_data"] == 1 + 1 + 1 + 2
    assert ops["DescribeAutoScalingGroups"] == 6 + 1  # a page of 100 more in ml/us-east-1
    # a team adds its pools across accounts and regions
    teams = {t["team"]: t for t in d["teams"]}
    assert teams["research"]["pools"] == 2 and teams["research"]["debt_gpu_hours"] == 16.8
    # advice never merges pools of different accounts or regions
    for a in d["recommendations"]:
        assert a["account"] and a["region"]


def test_the_same_report_one_scope_at_a_time(org: dict[str, str], window: Window) -> None:
    """--concurrency 1 reads the same figures with the same calls as --concurrency 8."""
    one = build_fleet_report(Fleet(concurrency=1), window, load_catalog(), None, REGIONS)
    eight = build_fleet_report(Fleet(concurrency=8), window, load_catalog(), None, REGIONS)
    a, b = one.to_dict(), eight.to_dict()
    for key in ("pools", "teams", "totals", "scopes", "api_calls_detail"):
        assert a[key] == b[key], key


def test_listed_accounts_and_every_enabled_region(org: dict[str, str], window: Window) -> None:
    """--accounts LIST reads those (no ListAccounts); --regions all reads the regions the
    account's DescribeRegions lists, each of them."""
    report = build_fleet_report(Fleet(), window, load_catalog(), [org["research"]], None)
    d = report.to_dict()
    enabled = boto3.client("ec2", region_name="us-east-1").describe_regions()["Regions"]
    assert len(d["scopes"]) == len(enabled) > 2
    assert {s["status"] for s in d["scopes"]} == {"read"}
    assert set(rows(report)) == {(org["research"], r, "inference") for r in REGIONS}
    ops = d["api_calls_detail"]["by_operation"]
    assert "ListAccounts" not in ops and ops["DescribeRegions"] == 1


# --------------------------------------------------------------------------- what cannot be read

def _error(code: str, message: str) -> bytes:
    return (f'<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}'
            f'</Message></Error><RequestId>r-1</RequestId></ErrorResponse>').encode()


class _Faults(FaultProxy):
    """Refuses AssumeRole into one account, answers InvalidClientTokenId in a region the
    accounts have not enabled and Throttling, always, in another; forwards the rest to moto."""

    denied_account = "\x00"
    seen: list[str]

    def answer(self, data: bytes) -> Reply | None:
        scope = self.headers.get("authorization") or ""
        xml = {"content-type": "text/xml"}
        if b"Action=AssumeRole" in data and self.denied_account.encode() in data:
            return 403, xml, _error("AccessDenied", "User is not authorized to perform: "
                                    "sts:AssumeRole")
        if "/ap-east-1/" in scope:
            return 403, xml, _error("InvalidClientTokenId",
                                    "The security token included in the request is invalid.")
        if "/ap-southeast-2/" in scope:
            self.seen.append(scope)
            return 400, xml, _error("Throttling", "Rate exceeded")
        return None


@pytest.fixture
def faults(org: dict[str, str], moto: str, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[type[_Faults]]:
    handler = type("Faults", (_Faults,), {"denied_account": org["ml"], "seen": []})
    # three attempts, no backoff: the throttled region gives up at once, every attempt counted
    monkeypatch.setattr(aws, "MAX_ATTEMPTS", 3)
    monkeypatch.setattr("botocore.retries.standard.ExponentialBackoff.delay_amount",
                        lambda self, context: 0)
    with serving(handler, moto, monkeypatch) as served:
        yield served


FAULTY = "us-east-1,ap-east-1,ap-southeast-2"


def test_an_account_or_region_that_fails_is_a_finding(
        faults: type[_Faults], org: dict[str, str], window: Window, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "debt.json"
    code = main(["debt", "--start", iso(window.start), "--end", iso(window.end), "--period",
                 "3600", "--accounts", "all", "--regions", FAULTY, "--format", "json",
                 "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert "5 of 7 account-regions not read (the report's findings say which and why)" in err
    d = json.loads(out.read_text())
    unread = {(f["account"], f["region"]): f["message"] for f in d["findings"]
              if f["finding"] == "scope-unread"}
    ml = unread[(org["ml"], FAULTY)]
    assert "sts AssumeRole arn:aws:iam::" + org["ml"] + ":role/OrganizationAccountAccessRole" \
        in ml and "AccessDenied" in ml and "does the role exist" in ml
    for account in (MANAGEMENT, org["research"]):
        assert "InvalidClientTokenId" in unread[(account, "ap-east-1")]
        assert "is the region enabled" in unread[(account, "ap-east-1")]
        assert "Throttling: Rate exceeded" in unread[(account, "ap-southeast-2")]
    assert len(unread) == 5
    # every attempt was sent and counted: 3 per throttled scope
    assert len(faults.seen) == 2 * 3
    scopes = {(s["account"], s["region"]): s for s in d["scopes"]}
    assert scopes[(org["research"], "us-east-1")]["status"] == "read"
    assert scopes[(org["research"], "ap-southeast-2")]["api_calls"] == 1
    # what could be read is reported, to the GPU-hour
    got = {(p["account"], p["region"], p["pool"]): p for p in d["pools"]}
    assert set(got) == {(MANAGEMENT, "us-east-1", "platform-ci"),
                        (org["research"], "us-east-1", "inference")}
    assert got[(org["research"], "us-east-1", "inference")]["debt_gpu_hours"] == 10.8


def test_account_and_region_in_every_format(org: dict[str, str], window: Window) -> None:
    report = build_fleet_report(Fleet(), window, load_catalog(), [org["research"]], REGIONS)
    table = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert {(r["account"], r["region"], r["pool"]) for r in table} == {
        (org["research"], r, "inference") for r in REGIONS}
    text = render_text(report, width=200)
    assert "in 1 account(s) × 2 region(s) (2 account-regions)" in text
    assert f"{org['research']}/eu-west-1" in text and f"{org['research']}/us-east-1" in text
    assert f"inference ({org['research']}/us-east-1)" in text  # offenders and advice
    from gpupool.debt.html import render_html

    page = render_html(report)
    for r in REGIONS:
        assert f"<td>{org['research']}</td><td>{r}</td>" in page
    snap = report.to_dict()
    from gpupool.debt.snapshot import parse_snapshot

    pools = parse_snapshot(snap, "s.json").pools
    assert {(p.account, p.region) for p in pools} == {(org["research"], r) for r in REGIONS}


@pytest.mark.parametrize(("args", "message"), [
    (["--accounts", "12345"], "--accounts 12345: expected all or 12-digit account ids"),
    (["--regions", "us-east-1,mars-1"], "'mars-1' is not one botocore knows"),
    (["--regions", "us-east-1", "--region", "eu-west-1"], "expected either --region or "
     "--regions"),
    (["--regions", "all", "--concurrency", "0"], "--concurrency 0: expected a whole number"),
    (["--accounts", "all", "--role-name", "bad role"], "--role-name bad role: expected an IAM "
     "role name"),
])
def test_bad_fleet_arguments(moto: str, args: list[str], message: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["debt", "--since", "2h", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_closed_account_is_a_finding(org: dict[str, str], window: Window) -> None:
    """An account Organizations lists as SUSPENDED is named, not read, and not a gap."""
    boto3.client("organizations", region_name="us-east-1").close_account(AccountId=org["ml"])
    report = build_fleet_report(Fleet(), window, load_catalog(), None, ["us-east-1"])
    d = report.to_dict()
    (skipped,) = [f for f in d["findings"] if f["finding"] == "account-skipped"]
    assert skipped["account"] == org["ml"] and "SUSPENDED" in skipped["message"]
    assert org["ml"] not in {s["account"] for s in d["scopes"]}
    assert d["api_calls_detail"]["by_operation"]["AssumeRole"] == 1
